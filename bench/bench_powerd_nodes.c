/* SPDX-License-Identifier: MIT */
/* powerd over 1,000 nodes (bench/README.md): one control period's node work, GET /v1/node of
 * every node daemon then a new limit for every GPU of the answering ones (the most a period
 * sends: every job's limit changed; then on a tenth of the nodes), in one POST /v1/node/limits
 * per node, against 1,000 simulated node daemons of 8 GPUs in one process (tests/fake_nodes.h),
 * none or 50 of them silent (they accept and never answer). Then the same with each node's
 * lease in it (as a real period) and, with $ECO_BENCH_MUNGE_SOCKET (a munged's socket,
 * bench/bench_powerd_nodes.sh starts a private one), a fresh MUNGE credential on every
 * request (--node-auth munge; the simulated nodes do not check them). Slurm's own calls
 * (sinfo, squeue) are not in it. Prints Markdown rows. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "../tests/fake_nodes.h"
#include "slurm/powerd.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/munge_auth.h"

#define NODES 1000
#define GPUS 8
#define PERIODS 10

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* change_every: one node in so many gets new limits each period (1: all), the others' limits
 * stay (the 300 W the simulated nodes report), so nothing is sent to them unless lease: each
 * answering node's lease renewed too (a 400 W share); munge: every request signed by it */
static int run(size_t silent_n, double timeout_s, size_t change_every, bool lease,
               struct eco_munge *const *munge)
{
    char dir[] = "/tmp/eco-bpn.XXXXXX", path[300];
    if (!mkdtemp(dir))
        return 1;
    static bool silent[NODES];
    for (size_t i = 0; i < NODES; i++) /* spread over the list: every 20th node */
        silent[i] = silent_n && i % (NODES / silent_n) == NODES / silent_n - 1;
    pid_t pid = fake_nodes_start(dir, NODES, silent, GPUS);
    if (pid < 0) {
        fprintf(stderr, "bench_powerd_nodes: cannot start the simulated nodes in %s\n", dir);
        return 1;
    }
    struct powerd pd = {.node_timeout_s = timeout_s, .period_s = 5, .node_lease_s = 15};
    for (size_t k = 0; munge && k < POWERD_MUNGE_CTX; k++)
        pd.munge[k] = munge[k];
    pd.nodes = calloc(MAX_NODES, sizeof *pd.nodes);
    pd.jobs = calloc(MAX_JOBS, sizeof *pd.jobs);
    if (!pd.nodes || !pd.jobs)
        return 1;
    pd.n_nodes = NODES;
    for (size_t i = 0; i < NODES; i++) {
        snprintf(pd.nodes[i].name, sizeof pd.nodes[i].name, "gpu%04zu", i);
        snprintf(pd.nodes[i].endpoint, sizeof pd.nodes[i].endpoint, "%s/n%zu.sock", dir, i);
    }
    double t[PERIODS], tr[PERIODS], reqs = 0;
    size_t up = 0;
    for (int p = 0; p < PERIODS; p++) {
        double t0 = eco_mono_s();
        eco_powerd__read_node_power(&pd);
        tr[p] = eco_mono_s() - t0;
        /* one job per answering node on its 8 GPUs, decided each period below their 300 W */
        pd.n_jobs = 0;
        up = 0;
        for (size_t i = 0; i < NODES; i++) {
            if (!pd.nodes[i].up)
                continue;
            up++;
            struct pjob *j = &pd.jobs[pd.n_jobs++];
            *j = (struct pjob){.id = 100 + (int64_t)i, .running = true, .decided = true};
            j->limit_w = i % change_every ? 300 : 250 - (p % 2) * 10;
            j->n = GPUS;
            for (unsigned g = 0; g < GPUS; g++)
                j->node[g] = (uint32_t)i, j->gpu[g] = g;
            pd.nodes[i].share_w = lease ? 400 : 0;
        }
        eco_powerd__send_nodes(&pd);
        t[p] = eco_mono_s() - t0;
        /* the reads, then one request per node with new limits or a lease */
        reqs = (double)NODES + (double)(lease ? up : (up + change_every - 1) / change_every);
    }
    qsort(t, PERIODS, sizeof t[0], cmp);
    qsort(tr, PERIODS, sizeof tr[0], cmp);
    printf(
        "| %d | %zu | %d | %s | %s | %.1f s | %.0f | %.3f | %.3f | %.3f | %.3f | at most 1 s |\n",
        NODES, silent_n, GPUS, change_every == 1 ? "all" : "a tenth",
        munge   ? "lease, MUNGE"
        : lease ? "lease"
                : "none",
        timeout_s, reqs, (tr[PERIODS / 2 - 1] + tr[PERIODS / 2]) / 2, tr[PERIODS - 1],
        (t[PERIODS / 2 - 1] + t[PERIODS / 2]) / 2, t[PERIODS - 1]);
    fflush(stdout);
    eco_powerd__nodes_fini(&pd);
    fake_nodes_stop(pid);
    for (size_t i = 0; i < NODES; i++) {
        snprintf(path, sizeof path, "%s/n%zu.sock", dir, i);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/limits", dir);
    unlink(path);
    rmdir(dir);
    free(pd.nodes);
    free(pd.jobs);
    return up == NODES - silent_n ? 0 : 1;
}

int main(void)
{
    /* 1,000 listening sockets and their connections in the simulated nodes' process */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
        rl.rlim_cur = 4096;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    eco_log_level = ECO_LOG_ERR; /* the silent nodes' warnings are not the figure */
    printf("| nodes | silent | GPUs per node | limits changed | also | node timeout | requests per "
           "period | reading "
           "median s | reading max s | period median s | period max s | target |\n");
    printf("|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|\n");
    int rc = run(0, NODE_TIMEOUT_S, 1, false, NULL);
    rc |= run(50, NODE_TIMEOUT_S, 1, false, NULL);
    rc |= run(50, NODE_TIMEOUT_S, 10, false, NULL);
    rc |= run(50, NODE_TIMEOUT_S, 1, true, NULL);
    const char *sock = getenv("ECO_BENCH_MUNGE_SOCKET");
    if (sock && *sock) {
        struct eco_error err = {{0}};
        struct eco_munge *m[POWERD_MUNGE_CTX] = {NULL};
        for (size_t k = 0; k < POWERD_MUNGE_CTX; k++)
            if (!(m[k] = eco_munge_create(sock, &err))) {
                fprintf(stderr, "bench_powerd_nodes: munged at %s: %s\n", sock, err.msg);
                return 1;
            }
        rc |= run(50, NODE_TIMEOUT_S, 1, true, m);
        rc |= run(50, NODE_TIMEOUT_S, 10, true, m);
        for (size_t k = 0; k < POWERD_MUNGE_CTX; k++)
            eco_munge_destroy(m[k]);
    }
    return rc;
}
