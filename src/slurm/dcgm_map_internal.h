/* SPDX-License-Identifier: MIT */
/* dcgm-exporter's job mapping (its --hpc-job-mapping-dir DIR): one file per GPU, named by the
 * GPU's index, holding the ids of the Slurm jobs on it, one a line; the SPANK plugin adds a
 * job's id in its prolog and takes it out in its epilog (plugstack.conf dcgm_job_map=DIR,
 * docs/slurm/accounting.md), so that dcgm-exporter labels its metrics with hpc_job. */
#ifndef ECOSCHED_DCGM_MAP_INTERNAL_H
#define ECOSCHED_DCGM_MAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "ecosched/error.h"

/* Adds job (add) to, or removes it from, DIR/GPU for each of the n GPUs. Each file is
 * rewritten whole through a temporary file and rename(2), under an flock(2) on DIR/.lock (two
 * jobs sharing a GPU start and end at once): a reader sees the old list or the new one, and
 * the other jobs' lines stay as they were. Adding an id already there, or removing one that
 * is not, changes nothing (a retried prolog or epilog). 0, or a negative errno with err
 * naming the file. */
int eco_slurm__dcgm_map_update(const char *dir, const unsigned *gpus, unsigned n, uint32_t job,
                               bool add, struct eco_error *err);

#endif
