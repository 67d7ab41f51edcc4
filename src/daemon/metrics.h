/* SPDX-License-Identifier: MIT */
/* metrics.c: ecoschedd's GET /metrics. */
#ifndef ECOD_METRICS_H
#define ECOD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "ecosched/error.h"
#include "ecod.h"

/* metrics.c (added for GET /metrics): the Prometheus text (format 0.0.4) of the GPUs and
 * jobs. On success *text (*len bytes, NUL-terminated) is the caller's, freed with free();
 * on failure it is NULL and err says why. */
int ecod__metrics_render(struct ecod *d, char **text, size_t *len, struct eco_error *err);

/* The user name of uid (the server's passwd, getpwuid_r: safe off the event loop), else the
 * number (a uid without a passwd entry); true when it is a name. */
bool ecod__user_name(uid_t uid, char *buf, size_t cap);

#endif
