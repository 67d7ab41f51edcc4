/* SPDX-License-Identifier: MIT */
/* sched.c: ecoschedd's scheduling pass (sample the GPUs, account energy, reap ended jobs, start
 * queued ones), the store's opening and recovery at start, and the Slurm jobs' runs. */
#ifndef ECOD_SCHED_H
#define ECOD_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"
#include "ecosched/gpusel.h"
#include "ecod.h"

void ecod__sched_fini(struct ecod *d);
/* Accounts each GPU's energy since the last accounting to the runs on it, at monotonic time
 * mono (startup.c after adopting jobs; the pass after sampling). */
void ecod__sched_account(struct ecod *d, double mono);
/* Fills the in-memory queue from the store's queued jobs (once, at start). */
int ecod__sched_load_queue(struct ecod *d, struct eco_error *err);
/* Deferral (defer.c): the release time (wall s) of queued job j seen at now: its not_before,
 * and with slack (max_delay_s, up to its deadline) the carbon policy's choice; a job whose
 * release is later is held out of the queue (ecod__defer_enqueue; -ENOMEM), and queued when
 * it comes (ecod__defer_release_due, from the pass). ecod__defer_held_until: the release of
 * a held job, 0 when not held. */
double ecod__defer_release(struct ecod *d, const struct eco_store_job *j, double now);
int ecod__defer_enqueue(struct ecod *d, const struct eco_store_job *j, double now);
void ecod__defer_release_due(struct ecod *d, double now);
double ecod__defer_held_until(const struct ecod *d, int64_t id);
/* Whether a pass about to run at monotonic time mono needs a fresh sample first: never
 * sampled, or 0.2 s since the last (every tick's pass, and at most 5 of the passes a second
 * that submissions, cancels and job ends ask for). */
bool ecod__sched_sample_due(const struct ecod *d, double mono);
/* The sampling tick at wall time now and monotonic time mono (s, the caller's clocks): samples
 * every GPU into the selector, reaps ended jobs, accounts the jobs' energy (stored when it
 * moved) and runs the node power budget's controller. The loop calls it just before a pass when
 * due; its own duration goes to d->sample. */
void ecod__sched_sample(struct ecod *d, double now, double mono);
/* One pass at wall time now and monotonic time mono (s; the caller's clocks, read once: the
 * pass reads none but its own duration's): reap ended jobs, start queued ones on the GPUs
 * the latest sample shows (its age goes to d->pass.last_sample_age_s). It makes no platform
 * call unless a job starts or ends (energy read, power limit set at that instant). The other
 * entry points below take the clocks the same way; each stores them in d->now_s and d->mono_s
 * for the functions it calls. */
void ecod__sched_pass(struct ecod *d, double now, double mono);
/* A cancelled running job: signal its process group (SIGTERM, SIGKILL 10 s later). */
void ecod__sched_cancelled(struct ecod *d, int64_t id, double now, double mono);
/* The watched run of job id, NULL when none. Borrowed until the next pass. */
const struct ecod_run *ecod__sched_find(const struct ecod *d, int64_t id);
/* Paths of a job's output files (buf of at least 4096 bytes): in d's logs directory, or in
 * logs_dir (the listing worker's copy of it). */
void ecod__log_path(const struct ecod *d, int64_t id, const char *ext, char *buf, size_t cap);
void ecod__log_path_in(const char *logs_dir, int64_t id, const char *ext, char *buf, size_t cap);

/* sched.c, for Slurm jobs (api_node.c, docs/slurm.md): the SPANK plugin registers a Slurm job's
 * GPUs so that the daemon measures their energy, and ends it from the epilog. The job has a
 * store row (name "slurm-JOBID", no process) and a watched run; its GPUs are reserved in the
 * selector. add: 0 or -ENOMEM. end: accounts, records done with the energy, sets each of its
 * GPUs' power limit to the lowest cap of the jobs still on it (the default when none), releases
 * the GPUs; -ENOENT when no run has that store id. */
int ecod__sched_add_slurm(struct ecod *d, int64_t id, int64_t slurm_job, const uint32_t *gpus,
                          uint32_t n, double cap_w, double now, double mono);
int ecod__sched_end_slurm(struct ecod *d, int64_t id, double now, double mono, double *energy_j);
/* The limit power_cap "auto" chooses on GPU g (see auto_cap in sched.c). 0, or < 0 and err
 * (may be NULL) saying why none was chosen. */
int ecod__sched_auto_cap(struct ecod *d, uint32_t g, double *cap_w, struct eco_error *err);

#endif
