/* SPDX-License-Identifier: MIT */
/* Per-job energy on a shared GPU (docs/models/energy.md, "Per-job energy on a shared GPU"):
 * each GPU's energy-counter increase is split among the jobs on it by their processes'
 * measured SM utilisation, else the GPU memory they use, else equally; the parts add up to the
 * increase. */
#ifndef ECOD_ATTRIB_H
#define ECOD_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>

struct ecod;

/* What a job's part of a GPU's energy was split by. A job is marked with the basis that split
 * most of its energy (in joules, over its GPUs and its life), so that a moment of another
 * basis (two jobs starting before either has a process on the GPU: equal) does not hide it. */
enum ecod_basis {
    ECOD_BASIS_NONE,      /* not split yet (the job has had no accounting) */
    ECOD_BASIS_EXCLUSIVE, /* alone on its GPUs: the whole increase, nothing to split */
    ECOD_BASIS_UTIL,      /* by its processes' per-process SM utilisation samples */
    ECOD_BASIS_MEMORY,    /* by the GPU memory its processes use */
    ECOD_BASIS_EQUAL,     /* an equal part */
};

/* "exclusive", "utilization", "memory", "equal"; NULL for ECOD_BASIS_NONE. Static storage. */
const char *ecod_basis_name(enum ecod_basis b);
/* The basis of that name; ECOD_BASIS_NONE for any other text (the empty string included). */
enum ecod_basis ecod_basis_parse(const char *name);

/* What was measured of one job on one GPU, or of its stray processes (those of no job on it). */
struct ecod_attrib_job {
    double util;  /* sum of its processes' SM utilisation samples (0..1 each) */
    double mem_b; /* GPU memory its processes use, bytes */
    bool known;   /* a job: its processes can be told, it has a process of its own on this
                   * server (false for a Slurm job registered by the SPANK plugin); the strays:
                   * there are some */
};

/* Splits delta_j among the n jobs of `jobs` into part_j[0..n): one job takes it all
 * (exclusive); otherwise by util when every job is known and the utilisations add up to more
 * than 0 (a known job with no process on the GPU weighs 0), else by memory under the same
 * conditions, else equally. The parts add up to
 * delta_j: the job with the largest weight takes delta_j minus the others' parts. Returns the
 * basis used (ECOD_BASIS_NONE for n == 0). No I/O. */
enum ecod_basis ecod__attrib_split(double delta_j, const struct ecod_attrib_job *jobs, size_t n,
                                   double *part_j);
/* The same with the GPU's stray processes (stray: NULL or not known when there are none) as
 * one more party, whose part goes to *stray_j (charged to no job; optional): by their
 * utilisation or memory like a job's, or an equal part. They take none beside a job that is
 * not known (its processes cannot be told from strays), and a job beside them is no longer
 * exclusive; with no job (n == 0) they take delta_j. *stray_j + the parts == delta_j. */
enum ecod_basis ecod__attrib_split_stray(double delta_j, const struct ecod_attrib_job *jobs,
                                         size_t n, const struct ecod_attrib_job *stray,
                                         double *part_j, double *stray_j);

/* Splits GPU g's increase delta_j among d's runs on it and its stray processes: reads the
 * GPU's processes and their utilisation samples since the last split (unless a Slurm job,
 * whose processes cannot be told, is on it), maps each process to its job (jobcg.c's cgroup,
 * else the job's process tree, session or process group), and adds each run's part to its
 * acc_j and to its basis_j of the basis used, and the strays' to d->stray[g] (logged once per
 * process); sets the runs' frac (their part of the GPU) and basis_now. Called by
 * ecod__sched_account for every GPU, with or without jobs. */
void ecod__attrib_gpu(struct ecod *d, unsigned g, double delta_j);

#endif
