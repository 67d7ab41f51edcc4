/* SPDX-License-Identifier: MIT */
/* Error reports for loaders and parsers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "ecosched/error.h"

int eco_error_set(struct eco_error *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}
