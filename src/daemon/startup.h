/* SPDX-License-Identifier: MIT */
/* startup.c: ecoschedd's start (state directory, store, recovery, limits). */
#ifndef ECOD_STARTUP_H
#define ECOD_STARTUP_H

#include "ecosched/error.h"
#include "ecosched/gpusel.h"
#include "ecod.h"

/* Opens d->db_path into d->store after checking the state directory: a missing or empty
 * jobs.db while logs/ or run/ hold files of past jobs is refused (-EBADMSG; the message says
 * how to fix it), and ids up to the highest such file's are never given again. A store that
 * lost acknowledged jobs (store.h) is refused unless d->accept_lost_jobs; accepted, the loss is
 * logged. */
int ecod__startup_open_store(struct ecod *d, struct eco_error *err);
/* Makes the state directory's logs/ and run/ (0700) and the GPU selector for the platform's
 * GPUs (d->gpu_strategy, params). 0, or < 0 and err. */
int ecod__startup_init(struct ecod *d, struct eco_gpusel_params *params, struct eco_error *err);
/* Adopts or marks lost the jobs the store says are running (once, at start). */
void ecod__startup_recover(struct ecod *d, double now, double mono);
/* Sets each GPU's limit (or locked clock, power_knob = clock) to the lowest cap of the adopted
 * jobs on it, the default when none (after ecod__startup_recover), except the GPUs whose limit
 * powerd's lease keeps (ecod__lease_init, called before). */
void ecod__startup_reconcile_limits(struct ecod *d);

#endif
