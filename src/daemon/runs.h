/* SPDX-License-Identifier: MIT */
/* runs.c: the runs ecoschedd watches, and the power caps they ask of a GPU. */
#ifndef ECOD_RUNS_H
#define ECOD_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/gpusel.h"
#include "daemon/store.h"
#include "ecod.h"

/* A new zeroed run at the end of d->runs (borrowed until the next add or removal); NULL when
 * out of memory. */
struct ecod_run *ecod__run_add(struct ecod *d);
/* Path of job id's run file ("PID START_TICKS", for adoption after a restart) in d->run_dir. */
void ecod__run_file(const struct ecod *d, int64_t id, char *buf, size_t cap);
/* Whether adopted run r's process is still the one started (same PID and start time). */
bool ecod__run_alive(const struct ecod_run *r);
/* The selector's request of stored job j. */
struct eco_gpu_request ecod__run_request(const struct eco_store_job *j);
/* "0,2" -> {0, 2}; -EINVAL on anything else or an index past the server's n_gpus GPUs. */
int ecod__run_parse_gpus(const char *s, unsigned n_gpus, uint32_t *out, uint32_t *n);

/* Whether run r's cap acts on the SM clock (the daemon's jobs with power_knob = clock) rather
 * than on the power limit (Slurm jobs, whose limit the SPANK plugin sets, and the others). */
bool ecod__caps_clock(const struct ecod *d, const struct ecod_run *r);
/* The lowest cap (W) of the runs on GPU g other than run index `skip` (SIZE_MAX: none) whose
 * caps act on the clock knob (clock) or the power limit (!clock), 0 when none is capped; *by
 * (may be NULL) gets that run's job id, 0 when none. */
double ecod__caps_lowest(const struct ecod *d, uint32_t g, size_t skip, bool clock, int64_t *by);
/* The lowest power cap (W) of the watched jobs on GPU g whose caps are power limits (Slurm
 * jobs; the daemon's jobs unless power_knob = clock), 0 when none of them is capped: the limit
 * GPU g must have, "the default" for 0. */
double ecod__caps_gpu(const struct ecod *d, uint32_t g);
/* Sets GPU g's power limit to *w W, or to its default when *w <= 0 (then *w is the default):
 * 0, or the platform's -errno with err saying why. */
int ecod__caps_set_limit(struct ecod *d, uint32_t g, double *w, struct eco_error *err);

#endif
