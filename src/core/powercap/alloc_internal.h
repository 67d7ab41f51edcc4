/* SPDX-License-Identifier: MIT */
/* Helpers alloc.c shares with the decomposed solver and the receding-horizon planner (dual.c);
 * not part of the public interface. */
#ifndef ECO_POWERCAP_ALLOC_INTERNAL_H
#define ECO_POWERCAP_ALLOC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "ecosched/powercap.h"

/* 1 / (horizon x period_s), or 0 without a horizon. */
double eco_cap__horizon_inv(const struct eco_cap_params *p);
/* Grid point k of g of job j (on a level when it has levels). */
double eco_cap__grid_at(const struct eco_cap_job *j, uint32_t g, uint32_t k);
/* The nearest of j's levels to x inside [min, max] (ties to the lower; levels ascending), x
 * itself for a continuous knob or when no level is inside. */
double eco_cap__snap_level(const struct eco_cap_job *j, double x);
/* eco_cap_allocate over a part of a larger set of jobs (the steady split's): without the branch
 * and bound and the exchange pass it gives a small instance on its own. */
double eco_cap__allocate_part(const struct eco_cap_job *jobs, size_t n, double budget_w,
                              const struct eco_cap_params *p, double *limits_w, double *scratch);
/* For a job whose memo holds the last allocation's answer as a vertex of its hull under a cost
 * proportional to its remaining work: the prices [*lo, *hi) for which the price solution
 * keeps that answer now (the interval scaled by the remaining work since), 1; else 0 (no
 * memo, another point, a deadline, a plan, a horizon it now finishes within). */
int eco_cap__steady_interval(const struct eco_cap_job *j, const struct eco_cap_params *p,
                             double *lo, double *hi);
/* Prior curves (per-GPU power and speed on the grid) of learned models that are not ready
 * yet, shared by the jobs of one allocation whose models have the same range and prior: a
 * held limit never widens a model's sampled span, so most of a binding period's jobs use the
 * prior, and its cube roots were a third of the allocation's time. Values are the ones
 * eco_job_model_predict_grid returns, bit for bit. */
#define ECO_CAP_PRIOR_SLOTS 4
struct eco_cap_prior_cache {
    uint32_t used;
    struct {
        double min_w, max_w, scale_w, prior_static;
        double pw[ECO_CAP_GRID_MAX], sp[ECO_CAP_GRID_MAX];
    } slot[ECO_CAP_PRIOR_SLOTS];
};
/* The job's power (all GPUs) and cost at each of its p->grid points, into pw[] and c[];
 * cache (NULL: none, zeroed before first use) holds prior curves for one grid size. */
void eco_cap__eval_grid(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                        struct eco_cap_prior_cache *cache, double *pw, double *c);
/* The highest grid index at or below the job's trust region (upper_w), g - 1 without one. */
uint32_t eco_cap__upper_index(const struct eco_cap_job *j, uint32_t g);
/* 0, or -EINVAL when a job has no predict, gpus 0 or a bad range. */
int eco_cap__check_jobs(const struct eco_cap_job *jobs, size_t n);

#endif
