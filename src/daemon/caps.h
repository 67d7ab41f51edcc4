/* SPDX-License-Identifier: MIT */
/* caps.c: the power caps ecoschedd's watched runs ask of a GPU. */
#ifndef ECOD_CAPS_H
#define ECOD_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecod.h"

/* Whether run r's cap acts on the SM clock (the daemon's jobs with power_knob = clock) rather
 * than on the power limit (Slurm jobs, whose limit the SPANK plugin sets, and the others). */
bool ecod_caps_clock(const struct ecod *d, const struct ecod_run *r);
/* The lowest cap (W) of the runs on GPU g other than run index `skip` (SIZE_MAX: none) whose
 * caps act on the clock knob (clock) or the power limit (!clock), 0 when none is capped; *by
 * (may be NULL) gets that run's job id, 0 when none. */
double ecod_caps_lowest(const struct ecod *d, uint32_t g, size_t skip, bool clock, int64_t *by);
/* The lowest power cap (W) of the watched jobs on GPU g whose caps are power limits (Slurm
 * jobs; the daemon's jobs unless power_knob = clock), 0 when none of them is capped: the limit
 * GPU g must have, "the default" for 0. */
double ecod_caps_gpu(const struct ecod *d, uint32_t g);

#endif
