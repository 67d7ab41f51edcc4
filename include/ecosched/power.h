/* SPDX-License-Identifier: MIT */
/* GPU power and speed models: per (GPU type, workload), average GPU power and training speed
 * as functions of the power limit, from measured curves (docs/models/energy.md). */
#ifndef ECOSCHED_POWER_H
#define ECOSCHED_POWER_H

#include <stddef.h>
#include "ecosched/error.h"

/* The workload used for jobs that name none and get no draw from a mix: the mean of the
 * measured workloads' normalised curves. */
#define ECO_WORKLOAD_GENERIC 0

/* Number of workloads (index 0 is the generic one), and their names ("generic",
 * "resnet50", ...). */
size_t eco_workload_count(void);
const char *eco_workload_name(size_t w);
/* Index of the workload named `name` (case-insensitive), or -1. */
int eco_workload_find(const char *name);

/* GPU power and speed of workload `w` on catalog GPU type `type` at power limit `limit_w`
 * (clamped to the type's range). *speed is relative to the reference GPU (V100 at its
 * maximum limit) running the same workload: a job of duration_s reference seconds runs
 * duration_s / *speed seconds. *power_w is the GPU's average draw. 0 or -EINVAL (nothing
 * written) for an unknown type or workload index or a limit that is not finite; speed and
 * power_w may be NULL. */
int eco_power_eval(int type, size_t w, double limit_w, double *speed, double *power_w);

/* power_cap "auto": the step between the limits tried, in W. 5 W is below what a job's speed
 * notices (the measured curves move ~1% per 5 W at their steep end) and keeps the search to
 * ~40 evaluations on the widest range (100..300 W). */
#define ECO_POWER_AUTO_CAP_STEP_W 5.0

/* The power limit "auto" chooses for an unknown job on catalog type `type`, a GPU accepting
 * min_w..max_w: over the type's limits within that range, in ECO_POWER_AUTO_CAP_STEP_W steps
 * from the lowest, the one with the least energy per unit of work (power / speed of the generic
 * workload) among those whose time is at most (1 + max_slowdown) times the time at the
 * highest; on a tie the higher limit. 0 with *cap_w set; -EINVAL for an unknown type, -ERANGE
 * when the type's range and the GPU's do not meet (*cap_w untouched). Pure. */
int eco_power_auto_cap(int type, double min_w, double max_w, double max_slowdown, double *cap_w);

/* A workload mix: weights over workloads 1..count-1, parsed from "default" or
 * "NAME:WEIGHT[,NAME:WEIGHT...]". */
struct eco_workload_mix {
    double cum[32]; /* cumulative normalised weights, by workload index */
    size_t n;       /* workloads covered (== eco_workload_count()) */
};
/* 0 or -EINVAL with err naming the bad part; *mix is left unchanged on error. "default" is
 * equal weights over the measured workloads; "generic" may not appear in a mix. */
int eco_workload_mix_parse(const char *spec, struct eco_workload_mix *mix, struct eco_error *err);
/* Workload for a uniform draw u in [0, 1): the first whose cumulative weight exceeds u (u < 0
 * gives the first workload with a weight, u >= 1 or NaN the last; a NULL mix gives generic). */
size_t eco_workload_mix_pick(const struct eco_workload_mix *mix, double u);

#endif
