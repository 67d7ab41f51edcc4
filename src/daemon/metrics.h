/* SPDX-License-Identifier: MIT */
/* metrics.c: ecoschedd's GET /metrics. */
#ifndef ECOD_METRICS_H
#define ECOD_METRICS_H

#include <stddef.h>
#include "ecosched/error.h"
#include "ecod.h"

/* metrics.c (added for GET /metrics): the Prometheus text (format 0.0.4) of the GPUs and
 * jobs. On success *text (*len bytes, NUL-terminated) is the caller's, freed with free();
 * on failure it is NULL and err says why. */
int ecod__metrics_render(struct ecod *d, char **text, size_t *len, struct eco_error *err);

#endif
