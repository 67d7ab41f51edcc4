/* SPDX-License-Identifier: MIT */
/* The lock the SPANK plugin's epilogs take around one job's AdminComment read-merge-write
 * (plugstack.conf's lock_dir, docs/slurm/accounting.md): a directory only its owner (root)
 * may write, a bounded wait, and the lock file removed by the holder that is done with it.
 * POSIX only, no Slurm: tests/test_acct_lock.c drives it. */
#ifndef ECOSCHED_ACCT_LOCK_INTERNAL_H
#define ECOSCHED_ACCT_LOCK_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"

/* Opens the lock directory `dir`, creating it mode 0700 when it is missing. Refused (-EPERM,
 * or -ELOOP/-ENOTDIR) when it is a symbolic link or not a directory, belongs to another user
 * than `owner`, or has a group or other write bit (a user who could write there could hold
 * every job's lock or plant the lock files). 0 and *dir_fd (the caller closes it), or a
 * negative errno with err naming the directory and the reason. */
int eco_slurm__lock_dir_open(const char *dir, uid_t owner, int *dir_fd, struct eco_error *err);

/* Takes job's lock, the file "ecosched-acct.JOB.lock" in dir_fd (created 0600, never through
 * a symbolic link), waiting at most about wait_ms for its holder. A holder removes the file
 * when done (eco_slurm__lock_release); a waiter that then gets the removed file's lock sees
 * the name gone or another file under it, and takes the new one. 0 and *fd (held), -ETIMEDOUT
 * or another negative errno, with err. */
int eco_slurm__lock_take(int dir_fd, uint32_t job, long wait_ms, int *fd, struct eco_error *err);

/* Removes job's lock file while still holding fd's lock, then closes fd (which releases it);
 * nothing for fd < 0. */
void eco_slurm__lock_release(int dir_fd, uint32_t job, int fd);

#endif
