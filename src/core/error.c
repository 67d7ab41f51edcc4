/* SPDX-License-Identifier: MIT */
/* Error reports for loaders and parsers: message and code in one call. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "ecosched/error.h"

static void set_msg(struct eco_error *err, const char *fmt, va_list ap)
{
    if (err)
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

int eco_errorf(struct eco_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_msg(err, fmt, ap);
    va_end(ap);
    return code;
}
