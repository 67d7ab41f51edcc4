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
/* The job's power (all GPUs) and cost at each of its p->grid points, into pw[] and c[]. */
void eco_cap__eval_grid(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                        double *pw, double *c);
/* 0, or -EINVAL when a job has no predict, gpus 0 or a bad range. */
int eco_cap__check_jobs(const struct eco_cap_job *jobs, size_t n);

#endif
