/* SPDX-License-Identifier: MIT */
/* The daemon's job runner: starts a job's command as its user, in its working directory and
 * environment, with CUDA_VISIBLE_DEVICES set and stdout/stderr to files, in its own process
 * group; reaps it; finds again (adopts) jobs whose processes survived a daemon restart. */
#ifndef ECOSCHED_RUNNER_H
#define ECOSCHED_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"

struct eco_run_spec {
    const char *const *argv; /* NULL-terminated; argv[0] looked up in PATH of env */
    const char *const *env;  /* NULL-terminated "NAME=value" list (the job's environment) */
    const char *cwd;
    uid_t uid; /* run as this user (setgid/setuid when the daemon is root) */
    gid_t gid;
    const uint32_t *gpus; /* GPU indices for CUDA_VISIBLE_DEVICES */
    size_t n_gpus;
    const char *stdout_path; /* created (0600, owned by uid when root) and truncated */
    const char *stderr_path;
    /* Optional wrapper (NULL: none): the job runs as wrap_argv..., the command's resolved path,
     * argv[1]...; the program is wrap_fd, a descriptor the caller opened (O_PATH will do) and
     * keeps open during the call, executed with execveat(AT_EMPTY_PATH), so the job's user
     * need not reach its directory. It must be an ELF executable (a script's interpreter
     * would need the path). */
    const char *const *wrap_argv;
    int wrap_fd;
    /* Optional start gate (NULL: exec at once). The child does every step up to exec,
     * resolves the command as the job's user, then waits; the parent calls gate(gate_arg,
     * pid, err) and the child execs only when it returned 0. On any other return, or when
     * the parent dies meanwhile, the child exits 125 without running anything. */
    int (*gate)(void *gate_arg, pid_t pid, struct eco_error *err);
    void *gate_arg;
    /* Make the job's process a child subreaper (prctl PR_SET_CHILD_SUBREAPER, kept across
     * exec): a descendant whose parent exits (a double fork) is re-parented to it, not to
     * init, so the job's process tree holds all its processes while it runs. */
    bool subreaper;
};

/* Starts the job. *pid is the child, which leads its own process group (pgid == pid).
 * The job inherits no descriptor but 0..2. Failures before exec (bad cwd, unknown command,
 * permission) and of the exec itself (also after the gate) are reported: the function reaps
 * the child and returns -errno with err saying what failed (the child tells the parent
 * through a close-on-exec pipe); a gate's non-zero return is returned as is, with its err.
 * 0 once the command runs. */
int eco_run_start(const struct eco_run_spec *spec, pid_t *pid, struct eco_error *err);

/* Reaps a finished child without blocking: 1 and *status (a wait status) when it ended,
 * 0 when it still runs, -ECHILD when it is not our child (e.g. adopted after a restart). */
int eco_run_poll(pid_t pid, int *status);

/* For adopted jobs (not our children): 1 when process `pid` still exists and its start time
 * (from /proc/PID/stat, in clock ticks since boot) equals `start_ticks` (so a recycled PID is
 * not mistaken for the job), else 0. eco_run_start_ticks reads that start time (0 on error). */
int eco_run_alive(pid_t pid, uint64_t start_ticks);
uint64_t eco_run_start_ticks(pid_t pid);

/* Sends sig to the job's process group. 0 or -errno. */
int eco_run_signal(pid_t pgid, int sig);

#endif
