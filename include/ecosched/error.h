/* SPDX-License-Identifier: MIT */
/* Error reports for loaders and parsers: one message that names file, line and field, and the
 * negative errno that goes with it, set in one call. */
#ifndef ECOSCHED_ERROR_H
#define ECOSCHED_ERROR_H

#include <stddef.h>

#define ECO_ERROR_MSG_MAX 512

struct eco_error {
    char msg[ECO_ERROR_MSG_MAX];
};

/* Formats a message into err (no-op when err is NULL; truncated to ECO_ERROR_MSG_MAX - 1
 * bytes) and returns code, a negative errno (-EINVAL: bad input, -ENOENT: a missing file,
 * -ENOMEM, -EIO, ...), so that callers write `return eco_errorf(err, -EINVAL, "%s:%zu: ...",
 * ...)` or `rc = eco_errorf(err, -ENOMEM, ...)`: message and code in one call. */
int eco_errorf(struct eco_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
