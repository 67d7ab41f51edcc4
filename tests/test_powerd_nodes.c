/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s requests to its node daemons (src/slurm/powerd_nodes.c) against 20
 * simulated ones (tests/fake_nodes.h), 5 of them silent: a period's reading and capping take
 * about one node timeout, not one per silent node; the answering nodes get their limits, in one
 * request each (POST /v1/node/limits); a silent node is down for the period and logged once,
 * not every period (issue 31). Node daemons older than that route (404) get their lease, then
 * each limit, one request each, remembered per node. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fake_nodes.h"
#include "slurm/powerd.h"
#include "util/clock.h"

#define N 20
#define GPUS 2
/* the node timeout of the test: short, so that one per silent node (5 x 0.3 s) is far
 * beyond the bound below */
#define TIMEOUT_S 0.3
/* what a period may take beyond one timeout: process start-up, 20 local requests; generous
 * for a loaded machine, below the 1.5 s that waiting on the 5 silent nodes in turn costs */
#define MARGIN_S 0.6

static bool is_silent(size_t i)
{
    return i % 4 == 3;
} /* 3, 7, 11, 15, 19 */

/* Lines of file path holding needle (at their start: '^' first). */
static int count_lines(const char *path, const char *needle)
{
    bool start = needle[0] == '^';
    needle += start;
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += start ? !strncmp(line, needle, strlen(needle)) : strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* What the test started, for the teardown (also after a failed check). */
static char dir[32];
static pid_t pid = -1;
static bool made;

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/eco-pnodes.XXXXXX");
    pid = -1;
    made = false;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[64];
    fake_nodes_stop(pid);
    pid = -1;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return made ? system(cmd) : 0;
}

static void test_parallel_period(void **state)
{
    (void)state;
    char path[300], logp[300];
    assert_non_null(mkdtemp(dir));
    made = true;
    bool silent[N];
    for (size_t i = 0; i < N; i++)
        silent[i] = is_silent(i);
    pid = fake_nodes_start(dir, N, silent, GPUS);
    assert_true(pid > 0);

    struct powerd pd = {.node_timeout_s = TIMEOUT_S, .period_s = 5};
    pd.nodes = calloc(MAX_NODES, sizeof *pd.nodes);
    pd.jobs = calloc(MAX_JOBS, sizeof *pd.jobs);
    assert_non_null(pd.nodes);
    assert_non_null(pd.jobs);
    pd.n_nodes = N;
    for (size_t i = 0; i < N; i++) {
        snprintf(pd.nodes[i].name, sizeof pd.nodes[i].name, "n%zu", i);
        snprintf(pd.nodes[i].endpoint, sizeof pd.nodes[i].endpoint, "%s/n%zu.sock", dir, i);
    }
    /* the log of two periods into a file: each silent node named once */
    snprintf(logp, sizeof logp, "%s/log", dir);
    fflush(stderr);
    int saved = dup(2), lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && lfd >= 0);
    dup2(lfd, 2);
    double t0 = eco_mono_s();
    eco_powerd__read_node_power(&pd);
    double read_s = eco_mono_s() - t0;
    eco_powerd__read_node_power(&pd);
    double read2_s = eco_mono_s() - t0 - read_s;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(lfd);
    printf("read: %.3f s, then %.3f s (timeout %.1f s)\n", read_s, read2_s, TIMEOUT_S);
    assert_true(read_s < TIMEOUT_S + MARGIN_S);
    assert_true(read2_s < TIMEOUT_S + MARGIN_S);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(pd.nodes[i].up, !silent[i]);
        if (!silent[i]) {
            assert_int_equal(pd.nodes[i].n_gpus, GPUS);
            assert_true(pd.nodes[i].gpu[1].limit_w == 300);
        }
        char needle[64];
        snprintf(needle, sizeof needle, "node n%zu: no answer ", i);
        assert_int_equal(count_lines(logp, needle), silent[i] ? 1 : 0);
    }

    /* one job per node on both GPUs at 250 W; as the allocator does, only the jobs whose GPUs
     * all answered are decided */
    pd.n_jobs = N;
    for (size_t i = 0; i < N; i++) {
        struct pjob *j = &pd.jobs[i];
        j->id = 100 + (int64_t)i;
        j->running = true;
        j->decided = !silent[i];
        j->limit_w = 250;
        j->n = GPUS;
        for (unsigned g = 0; g < GPUS; g++)
            j->node[g] = (uint32_t)i, j->gpu[g] = g;
    }
    t0 = eco_mono_s();
    eco_powerd__send_nodes(&pd);
    double send_s = eco_mono_s() - t0;
    printf("limits: %.3f s\n", send_s);
    assert_true(send_s < TIMEOUT_S + MARGIN_S);
    snprintf(path, sizeof path, "%s/limits", dir);
    assert_int_equal(count_lines(path, "{\"power_limit_w\":250}"), (N - 5) * GPUS);
    for (size_t i = 0; i < N; i++)
        for (unsigned g = 0; g < GPUS; g++) {
            char needle[64];
            snprintf(needle, sizeof needle, "^%zu %u {\"power_limit_w\":250}", i, g);
            assert_int_equal(count_lines(path, needle), silent[i] ? 0 : 1);
        }
    /* one request per answering node, none per GPU */
    for (size_t i = 0; i < N; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "^%zu POST /v1/node/limits", i);
        assert_int_equal(count_lines(path, needle), silent[i] ? 0 : 1);
    }
    assert_int_equal(count_lines(path, "POST /v1/gpus/"), 0);

    free(pd.nodes);
    free(pd.jobs);
}

/* Lines of file path that start with "I POST " + route, for node i. */
static int posts(const char *path, size_t i, const char *route)
{
    char needle[64];
    snprintf(needle, sizeof needle, "^%zu POST %s", i, route);
    return count_lines(path, needle);
}

/* Line number (from 1) of the first line of path starting with needle, 0: none. */
static int first_line(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0, at = 0;
    while (!at && f && fgets(line, sizeof line, f))
        if (n++, !strncmp(line, needle, strlen(needle)))
            at = n;
    if (f)
        fclose(f);
    return at;
}

/* A rolling upgrade: nodes 1 and 4 of 6 run an ecoschedd without POST /v1/node/limits (404).
 * Two periods, each with a lease and a new limit on both GPUs of every node: the new nodes get
 * one request each period; the older ones, after the 404 of the first period, their lease
 * (POST /v1/node/budget) then each limit (POST /v1/gpus/N/limit), and the new route is not
 * asked again in the second period. Each old node is logged once. */
static void test_older_nodes(void **state)
{
    (void)state;
    enum { M = 6 };
    char path[300], logp[300];
    assert_non_null(mkdtemp(dir));
    made = true;
    bool silent[M] = {0}, legacy[M] = {0};
    legacy[1] = legacy[4] = true;
    pid = fake_nodes_start2(dir, M, silent, legacy, GPUS);
    assert_true(pid > 0);
    struct powerd pd = {.node_timeout_s = TIMEOUT_S, .period_s = 5, .node_lease_s = 15};
    pd.nodes = calloc(MAX_NODES, sizeof *pd.nodes);
    pd.jobs = calloc(MAX_JOBS, sizeof *pd.jobs);
    assert_non_null(pd.nodes);
    assert_non_null(pd.jobs);
    pd.n_nodes = M;
    for (size_t i = 0; i < M; i++) {
        snprintf(pd.nodes[i].name, sizeof pd.nodes[i].name, "n%zu", i);
        snprintf(pd.nodes[i].endpoint, sizeof pd.nodes[i].endpoint, "%s/n%zu.sock", dir, i);
    }
    snprintf(logp, sizeof logp, "%s/log", dir);
    snprintf(path, sizeof path, "%s/limits", dir);
    fflush(stderr);
    int saved = dup(2), lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && lfd >= 0);
    dup2(lfd, 2);
    for (int period = 0; period < 2; period++) {
        eco_powerd__read_node_power(&pd);
        pd.n_jobs = M;
        for (size_t i = 0; i < M; i++) {
            struct pjob *j = &pd.jobs[i];
            *j = (struct pjob){.id = 100 + (int64_t)i, .running = true, .decided = true};
            j->limit_w = 250 - 10 * period;
            j->n = GPUS;
            for (unsigned g = 0; g < GPUS; g++)
                j->node[g] = (uint32_t)i, j->gpu[g] = g;
            pd.nodes[i].share_w = 400 + (double)i;
        }
        eco_powerd__send_nodes(&pd);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(lfd);
    for (size_t i = 0; i < M; i++) {
        char needle[80];
        assert_int_equal(posts(path, i, "/v1/node/limits"), legacy[i] ? 1 : 2);
        assert_int_equal(posts(path, i, "/v1/node/budget"), legacy[i] ? 2 : 0);
        assert_int_equal(posts(path, i, "/v1/gpus/"), legacy[i] ? 2 * GPUS : 0);
        for (unsigned g = 0; g < GPUS; g++) {
            snprintf(needle, sizeof needle, "^%zu %u {\"power_limit_w\":240}", i, g);
            assert_int_equal(count_lines(path, needle), 1);
        }
        snprintf(needle, sizeof needle, "^%zu lease {\"fallback_w\":%zu.0,\"lease_s\":15}", i,
                 400 + i);
        assert_int_equal(count_lines(path, needle), 2);
        assert_true(pd.nodes[i].held_w == 400 + (double)i);
        assert_false(pd.nodes[i].limit_failing);
        assert_false(pd.nodes[i].lease_failing);
        if (legacy[i]) { /* the lease before the limits */
            snprintf(needle, sizeof needle, "%zu lease ", i);
            int at_lease = first_line(path, needle);
            snprintf(needle, sizeof needle, "%zu POST /v1/gpus/", i);
            assert_true(at_lease > 0 && at_lease < first_line(path, needle));
        }
        snprintf(needle, sizeof needle, "node n%zu: its ecoschedd has no POST /v1/node/limits", i);
        assert_int_equal(count_lines(logp, needle), legacy[i] ? 1 : 0);
    }
    assert_int_equal(count_lines(logp, "not set"), 0);
    assert_int_equal(count_lines(logp, "not renewed"), 0);
    free(pd.nodes);
    free(pd.jobs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parallel_period, setup, teardown),
        cmocka_unit_test_setup_teardown(test_older_nodes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
