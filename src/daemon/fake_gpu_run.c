/* SPDX-License-Identifier: MIT */
/* ecosched-fake-gpu-run GPUS CMD [ARGS...]: runs CMD as a process "on" fake GPUs GPUS ("1",
 * "0,2") of the fake NVML library, with CUDA_VISIBLE_DEVICES=GPUS, and exits with its status. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "platform/nvml_api.h"

#define DEFAULT_PROC_MEM_MB 2048ULL /* a small training job's footprint, as the fake's default */

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static unsigned long long proc_mem_b(void)
{
    const char *s = getenv("ECOSCHED_FAKE_NVML_PROC_MEM_MB");
    unsigned long long mb = s && *s ? strtoull(s, NULL, 10) : DEFAULT_PROC_MEM_MB;
    return mb << 20;
}

/* ECOSCHED_FAKE_NVML_PROC_SM_PCT: the process's SM utilisation in percent (0..100); unset or
 * out of range: -1, the fake's equal part of a busy GPU. */
static int proc_sm_pct(void)
{
    const char *s = getenv("ECOSCHED_FAKE_NVML_PROC_SM_PCT");
    char *end = NULL;
    long v = s && *s ? strtol(s, &end, 10) : -1;
    return end && *end == '\0' && v >= 0 && v <= 100 ? (int)v : -1;
}

/* Child: waits until the parent has registered it, then becomes CMD. */
static void run_child(int go, const char *gpus, char **argv)
{
    char b;
    ssize_t r;
    while ((r = read(go, &b, 1)) < 0 && errno == EINTR)
        ;
    if (r != 1)
        _exit(125);
    close(go);
    if (setenv("CUDA_VISIBLE_DEVICES", gpus, 1) < 0)
        _exit(125);
    execvp(argv[0], argv);
    fprintf(stderr, "ecosched-fake-gpu-run: %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int main(int argc, char **argv)
{
    int go[2];
    if (argc < 3) {
        fprintf(stderr, "usage: ecosched-fake-gpu-run GPUS CMD [ARGS...]\n"
                        "  GPUS: comma-separated fake GPU indices, e.g. 1 or 0,2\n");
        return 2;
    }
    if (pipe(go) < 0) {
        perror("ecosched-fake-gpu-run: pipe");
        return 125;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("ecosched-fake-gpu-run: fork");
        return 125;
    }
    if (pid == 0) {
        close(go[1]);
        run_child(go[0], argv[1], argv + 2);
    }
    close(go[0]);
    child_pid = pid;
    struct sigaction sa = {.sa_handler = forward};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A child killed before it was released must not kill us through the pipe (set here,
     * after fork, so that CMD does not inherit an ignored SIGPIPE). */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, NULL);
    int r = ecosched_fake_nvml_register_util((int)pid, argv[1], proc_mem_b(), proc_sm_pct());
    if (r != NVML_SUCCESS) {
        fprintf(stderr, "ecosched-fake-gpu-run: cannot register on GPUs '%s': %s\n", argv[1],
                nvmlErrorString(r));
        close(go[1]); /* the child exits without running CMD */
        waitpid(pid, NULL, 0);
        return 125;
    }
    if (write(go[1], "g", 1) != 1)
        kill(pid, SIGKILL);
    close(go[1]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            perror("ecosched-fake-gpu-run: waitpid");
            status = 125 << 8;
            break;
        }
    ecosched_fake_nvml_unregister((int)pid);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
