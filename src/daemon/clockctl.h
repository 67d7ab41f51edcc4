/* SPDX-License-Identifier: MIT */
/* clockctl.c: power caps as locked SM clocks. */
#ifndef ECOD_CLOCKCTL_H
#define ECOD_CLOCKCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecod.h"

/* clockctl.c: power caps as locked SM clocks (config power_knob = clock; 0: power limits).
 * ecod__clock_apply locks (cap_w > 0) or resets (0) the listed GPUs' clocks and says whether any
 * GPU took it; ecod__clock_reconcile locks GPU g for want[g] (> 0; adopted job by[g]) or resets
 * it. */
bool ecod__clock_apply(struct ecod *d, int64_t id, const uint32_t *gpus, uint32_t n, double cap_w);
void ecod__clock_reconcile(struct ecod *d, const double *want, const int64_t *by);

#endif
