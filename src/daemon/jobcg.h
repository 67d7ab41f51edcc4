/* SPDX-License-Identifier: MIT */
/* Per-job cgroups (cgroup v2): each job's processes in a cgroup of its own, so that a process
 * is mapped to its job by what it cannot leave (docs/daemon/README.md, "Energy"). */
#ifndef ECOD_JOBCG_H
#define ECOD_JOBCG_H

#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"

struct ecod;

/* Sets up the jobs' parent cgroup from the job_cgroup setting: "off" (none), "auto" (a
 * directory "ecosched.INODE" under the daemon's own cgroup, INODE the state directory's inode
 * number, so two daemons with their own state never share one; where it cannot be made: none,
 * logged) or the absolute path of a directory on the cgroup2 mount (created when missing; an
 * error when it cannot be used). The directory must be the daemon's own (its euid, not
 * writable by group or others). Fills d->cgroup_dir and d->cgroup_rel ("" when none) and logs
 * how jobs' processes are told apart. 0, or < 0 and err (an explicit path only). */
int ecod__jobcg_init(struct ecod *d, const char *setting, struct eco_error *err);
/* Creates job id's cgroup (kept when it exists) and moves process pid, the job's first, into
 * it. Nothing when there is no jobs' cgroup. 0, or < 0 and err. */
int ecod__jobcg_enter(struct ecod *d, int64_t id, pid_t pid, struct eco_error *err);
/* Removes job id's cgroup once the job ended; when it is still busy (the kernel releases an
 * exited process's place a moment after its reap, or processes the job left behind are there)
 * ecod__jobcg_sweep tries again. */
void ecod__jobcg_remove(struct ecod *d, int64_t id);
/* Removes the empty cgroups of jobs no longer watched (ended while no daemon watched them,
 * or busy at their removal); a cgroup that still holds processes is kept, logged once at
 * warning level. Does nothing unless a removal is pending (d->cgroup_sweep: set at start and
 * by a busy removal). Called at each sampling tick. */
void ecod__jobcg_sweep(struct ecod *d);
/* The job whose cgroup process pid is in (read from /proc/PID/cgroup), 0 for none or when
 * there is no jobs' cgroup. */
int64_t ecod__jobcg_job_of(const struct ecod *d, pid_t pid);
/* Removes the jobs' parent cgroup when it is empty (jobs left running keep it). */
void ecod__jobcg_fini(struct ecod *d);

#endif
