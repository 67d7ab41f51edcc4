/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s requests to its node daemons (src/slurm/powerd_nodes.c) against 20
 * simulated ones (tests/fake_nodes.h), 5 of them silent: a period's reading and capping take
 * about one node timeout, not one per silent node; the answering nodes get their limits; a
 * silent node is down for the period and logged once, not every period (issue 31). */
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
static char dir[] = "/tmp/eco-pnodes.XXXXXX";
static pid_t pid = -1;
static bool made;

static int teardown(void **state)
{
    (void)state;
    char cmd[64];
    fake_nodes_stop(pid);
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
    eco_powerd__send_limits(&pd);
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

    free(pd.nodes);
    free(pd.jobs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_parallel_period, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
