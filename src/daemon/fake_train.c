/* SPDX-License-Identifier: MIT */
/* ecosched-fake-train WORKLOAD WORK_S [STARTUP_S]: a stand-in training job for tests and the
 * GPU-server results. It waits STARTUP_S, then "trains" for WORK_S seconds of work at a speed
 * that drops, as the co-location model says (docs/models/colocation.md), while other fake-train
 * jobs compute on one of its GPUs (CUDA_VISIBLE_DEVICES). The jobs find each other through
 * small files in $ECOSCHED_FAKE_TRAIN_DIR (one per process: GPUs, workload, phase). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ecosched/coloc.h"
#include "util/csv.h"
#include "util/clock.h"

#define MAX_GPUS 64
#define STEP_S 0.05 /* progress update period: 1% of a 5 s job */

static char self_path[4096];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* "0,2" -> mask; 0 when empty or malformed. */
static unsigned long long gpu_mask(const char *s)
{
    unsigned long long m = 0;
    while (s && *s) {
        char *end;
        long g = strtol(s, &end, 10);
        if (end == s || g < 0 || g >= MAX_GPUS)
            return 0;
        m |= 1ull << g;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return m;
}

/* Publishes this process: "MASK WORKLOAD PHASE" written atomically (tmp + rename). */
static int publish(const char *dir, unsigned long long mask, int wl, int phase)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/.%ld.tmp", dir, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    fprintf(f, "%llu %d %d\n", mask, wl, phase);
    if (fclose(f) || rename(tmp, self_path))
        return -errno;
    return 0;
}

/* Speed factor now: for each of our GPUs, the product of our pair factors with every other
 * computing job there (a self-pair at the mean of its two figures); the slowest GPU counts. */
static double speed(const char *dir, unsigned long long mask, int wl)
{
    double f[MAX_GPUS];
    for (int g = 0; g < MAX_GPUS; g++)
        f[g] = 1.0;
    DIR *d = opendir(dir);
    if (!d)
        return 1.0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end || pid == (long)getpid() || kill((pid_t)pid, 0) < 0)
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(path, "r");
        unsigned long long m = 0;
        int owl = -1, phase = 0;
        if (!fp)
            continue;
        int nread = fscanf(fp, "%llu %d %d", &m, &owl, &phase);
        fclose(fp);
        if (nread != 3 || phase != 1 || !(m & mask) || owl < 0)
            continue;
        struct eco_coloc_pair pr;
        double x = ECO_COLOC_TIMESLICE;
        if (eco_coloc_pair((size_t)wl, (size_t)owl, &pr) == 0 && pr.feasible)
            x = wl == owl ? 0.5 * (pr.speed_a + pr.speed_b) : pr.speed_a;
        for (int g = 0; g < MAX_GPUS; g++)
            if (m & mask & (1ull << g))
                f[g] *= x;
    }
    closedir(d);
    double s = 1.0;
    for (int g = 0; g < MAX_GPUS; g++)
        if ((mask & (1ull << g)) && f[g] < s)
            s = f[g];
    return s;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop)
        ;
}

int main(int argc, char **argv)
{
    double work = 0, startup = 0;
    const char *dir = getenv("ECOSCHED_FAKE_TRAIN_DIR");
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: ecosched-fake-train WORKLOAD WORK_S [STARTUP_S]\n"
                        "  WORKLOAD: a name of docs/models/colocation.md, e.g. "
                        "'ResNet18 CIFAR-10 bs32'\n"
                        "  needs ECOSCHED_FAKE_TRAIN_DIR (a directory shared by the jobs) and "
                        "CUDA_VISIBLE_DEVICES\n");
        return 2;
    }
    int wl = eco_coloc_find(argv[1], NULL);
    if (wl < 0) {
        fprintf(stderr, "ecosched-fake-train: unknown workload '%s'\n", argv[1]);
        return 2;
    }
    if (eco_parse_double(argv[2], &work) || !(work > 0) ||
        (argc == 4 && (eco_parse_double(argv[3], &startup) || !(startup >= 0)))) {
        fprintf(stderr, "ecosched-fake-train: WORK_S must be > 0 and STARTUP_S >= 0\n");
        return 2;
    }
    unsigned long long mask = gpu_mask(getenv("CUDA_VISIBLE_DEVICES"));
    if (!dir || !*dir || !mask) {
        fprintf(stderr, "ecosched-fake-train: needs ECOSCHED_FAKE_TRAIN_DIR and "
                        "CUDA_VISIBLE_DEVICES\n");
        return 2;
    }
    snprintf(self_path, sizeof self_path, "%s/%ld", dir, (long)getpid());
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    double t0 = eco_mono_s(), progress = 0, shared = 0;
    int rc = publish(dir, mask, wl, 0);
    if (rc < 0) {
        fprintf(stderr, "ecosched-fake-train: %s: %s\n", dir, strerror(-rc));
        return 1;
    }
    nap(startup);
    publish(dir, mask, wl, 1);
    double last = eco_mono_s();
    while (!stop && progress < work) {
        nap(STEP_S);
        double now = eco_mono_s(), f = speed(dir, mask, wl);
        progress += (now - last) * f;
        shared += f < 1.0 ? now - last : 0.0;
        last = now;
    }
    unlink(self_path);
    if (stop)
        return 143;
    printf("fake-train %s: %.2f s of work in %.2f s (%.2f s slowed by neighbours)\n", argv[1], work,
           eco_mono_s() - t0, shared);
    return 0;
}
