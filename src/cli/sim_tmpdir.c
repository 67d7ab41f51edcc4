/* SPDX-License-Identifier: MIT */
/* The temporary --out of `sim --report`: a thread of its own waits for SIGINT, SIGTERM and
 * SIGHUP (blocked in every other thread), removes the directory in an ordinary context (no
 * work in a signal handler, and the simulation's loop needs no checks), then lets the signal
 * end the process as it would have. */
#define _XOPEN_SOURCE 700 /* nftw (XSI) */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "sim_tmpdir.h"

/* The one guarded directory: the signals are the process's, so is their watcher. */
static struct {
    pthread_mutex_t mu; /* the removal, by the run's end or the watcher, whichever is first */
    char dir[4096];
    int removed;
    sigset_t set;
} guard = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Under guard.mu. The directory is first renamed aside, so that a file the run opens by its
 * path meanwhile (the watcher removes it while the run goes on) fails instead of landing in a
 * directory being removed; where the rename fails it is removed in place. */
static int remove_locked(void)
{
    char aside[sizeof guard.dir + 8];
    int rc = 0;
    if (guard.removed || !guard.dir[0])
        return 0;
    snprintf(aside, sizeof aside, "%s.rm", guard.dir);
    const char *d = rename(guard.dir, aside) == 0 ? aside : guard.dir;
    rc = nftw(d, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 ? -errno : 0;
    guard.removed = 1;
    return rc;
}

static void *watch(void *arg)
{
    int sig;
    (void)arg;
    if (sigwait(&guard.set, &sig) != 0)
        return NULL;
    pthread_mutex_lock(&guard.mu); /* kept: the process ends below */
    remove_locked();
    /* the end the signal would have had: its default action, on this thread, unblocked */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigset_t one;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the three end a process by default */
}

int eco_cli__tmpdir_make(char *out, size_t cap, int *watch_err)
{
    const char *tmp = getenv("TMPDIR");
    pthread_t t;
    int rc;
    snprintf(out, cap, "%s/ecosched-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    sigemptyset(&guard.set);
    sigaddset(&guard.set, SIGINT);
    sigaddset(&guard.set, SIGTERM);
    sigaddset(&guard.set, SIGHUP);
    /* blocked before the directory exists, so that no signal falls between the two; the
     * threads the run may start later inherit the mask */
    *watch_err = pthread_sigmask(SIG_BLOCK, &guard.set, NULL);
    if (!mkdtemp(out)) {
        rc = -errno;
        pthread_sigmask(SIG_UNBLOCK, &guard.set, NULL);
        return rc;
    }
    snprintf(guard.dir, sizeof guard.dir, "%s", out);
    if (!*watch_err && !(*watch_err = pthread_create(&t, NULL, watch, NULL)))
        pthread_detach(t);
    else
        pthread_sigmask(SIG_UNBLOCK, &guard.set, NULL);
    return 0;
}

void eco_cli__tmpdir_remove(int quiet)
{
    pthread_mutex_lock(&guard.mu);
    int rc = remove_locked();
    pthread_mutex_unlock(&guard.mu);
    if (rc && !quiet)
        eco_cli__err("warning: cannot remove the temporary directory %s: %s", guard.dir,
                     strerror(-rc));
}
