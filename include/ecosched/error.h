/* SPDX-License-Identifier: MIT */
/* Error reports for loaders and parsers: one message that names file, line and field. */
#ifndef ECOSCHED_ERROR_H
#define ECOSCHED_ERROR_H

#include <stddef.h>

#define ECO_ERROR_MSG_MAX 512

struct eco_error {
    char msg[ECO_ERROR_MSG_MAX];
};

/* Formats a message into err (no-op when err is NULL). Always returns -EINVAL so callers
 * can write `return eco_error_set(err, ...)`. */
int eco_error_set(struct eco_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
