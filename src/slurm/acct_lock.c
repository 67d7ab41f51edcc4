/* SPDX-License-Identifier: MIT */
/* The lock of one job's AdminComment read-merge-write under the SPANK plugin's lock_dir: a
 * root-only directory, a bounded wait, lock files removed by their holder. */
#define _DEFAULT_SOURCE /* flock (not in POSIX) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "acct_lock_internal.h"

/* Between two tries of a held lock, in ms: a holder keeps it for one sacct and one sacctmgr
 * call (tens of ms against a local slurmdbd), so a waiter sees it free within a poll or two. */
#define POLL_MS 20

static void lock_name(char *buf, size_t cap, uint32_t job)
{
    snprintf(buf, cap, "ecosched-acct.%u.lock", job);
}

int eco_slurm__lock_dir_open(const char *dir, uid_t owner, int *dir_fd, struct eco_error *err)
{
    struct stat st;
    int fd;
    *dir_fd = -1;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return eco_errorf(err, -errno, "lock_dir %s: cannot create it: %s", dir, strerror(errno));
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        int rc = -errno;
        return eco_errorf(err, rc, "lock_dir %s: %s%s", dir, strerror(-rc),
                          rc == -ELOOP || rc == -ENOTDIR ? " (a symbolic link or not a directory)"
                                                         : "");
    }
    if (fstat(fd, &st) < 0 || st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        int rc =
            eco_errorf(err, -EPERM,
                       "lock_dir %s: owner uid %u, mode %04o: want owner uid %u and no "
                       "write for group or others (mode 0700)",
                       dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)owner);
        close(fd);
        return rc;
    }
    *dir_fd = fd;
    return 0;
}

/* Whether fd is still the file named `name` in dir_fd (not removed or replaced by a holder
 * that was done with it while this one waited). */
static int still_named(int dir_fd, const char *name, int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstatat(dir_fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int eco_slurm__lock_take(int dir_fd, uint32_t job, long wait_ms, int *out, struct eco_error *err)
{
    const struct timespec poll = {0, POLL_MS * 1000000L};
    char name[48];
    int fd = -1, rc;
    struct stat st;
    lock_name(name, sizeof name, job);
    *out = -1;
    /* tries, not a clock: the wait is bounded even if a sleep is cut short or runs long */
    for (long t = 0; t <= (wait_ms > 0 ? wait_ms / POLL_MS : 0); t++) {
        if (fd < 0) {
            fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
            if (fd < 0)
                return eco_errorf(err, -errno, "lock %s: %s", name, strerror(errno));
            if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return eco_errorf(err, -EINVAL, "lock %s: not a regular file", name);
            }
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (still_named(dir_fd, name, fd)) {
                *out = fd;
                return 0;
            }
            close(fd); /* its holder removed it: the next try opens the file now named */
            fd = -1;
            continue;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            rc = eco_errorf(err, -errno, "lock %s: %s", name, strerror(errno));
            close(fd);
            return rc;
        }
        nanosleep(&poll, NULL);
    }
    if (fd >= 0)
        close(fd);
    return eco_errorf(err, -ETIMEDOUT, "lock %s: still held after %ld ms", name, wait_ms);
}

void eco_slurm__lock_release(int dir_fd, uint32_t job, int fd)
{
    char name[48];
    if (fd < 0)
        return;
    lock_name(name, sizeof name, job);
    /* removed while held: a waiter that gets this file's lock after the close finds the name
     * gone (or another file under it) and starts again on the new one */
    if (still_named(dir_fd, name, fd))
        unlinkat(dir_fd, name, 0);
    close(fd);
}
