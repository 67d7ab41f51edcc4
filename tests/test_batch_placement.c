/* SPDX-License-Identifier: MIT */
/* Batch placements of the simulator (pso, pso-basic, ilp): the queue of a pass placed as a
 * whole, against the one-job rules, on a case worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "ecosched/freemap.h"
#include "place/place_io.h"
#include "ecosched/policy.h"
#include "sim/sim.h"
#include "test_jobs.h"

/* Two idle 3-GPU nodes and the queue 1, 1, 2, 2 GPUs. One job at a time, first fit and best
 * fit both put the two 1-GPU jobs on node 0 (3 -> 2 -> 1 free), the first 2-GPU job on node 1
 * (1 free) and cannot place the last: 1 + 1 GPUs are free, on two nodes. Placed as a batch all
 * four fit, and only one way up to swapping nodes: each node takes one 1-GPU and one 2-GPU
 * job (3 GPUs each). */
static const uint32_t case_gpus[4] = {1, 1, 2, 2};

static const struct eco_placement_ops *find(const char *name)
{
    const struct eco_placement_ops *p = eco_placement_find_any(name);
    assert_non_null(p);
    return p;
}

static void make_jobs(struct eco_job *jobs)
{
    memset(jobs, 0, 4 * sizeof *jobs);
    for (int i = 0; i < 4; i++) {
        jobs[i].gpus = case_gpus[i];
        jobs[i].gpu_milli = 1000;
        jobs[i].gpu_type = -1;
        jobs[i].state = ECO_JOB_QUEUED;
    }
}

/* Starts the four jobs in queue order with `name`; fills node[] (-1: did not fit) and returns
 * how many started. */
static int start_all(const char *name, int32_t *node)
{
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x3", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    assert_non_null(fm);
    struct eco_job jobs[4];
    make_jobs(jobs);
    const uint32_t queue[4] = {0, 1, 2, 3};
    const struct eco_placement_ops *pl = find(name);
    struct eco_decisions d;
    assert_int_equal(eco_decisions_init(&d, fm, pl), 0);
    eco_decisions_reset(&d, jobs, NULL);
    if (pl->plan)
        assert_int_equal(pl->plan(&d.plan_state, fm, jobs, queue, 4, 1), 0);
    int started = 0;
    for (uint32_t j = 0; j < 4; j++) {
        size_t before = d.n_start_allocs;
        int rc = eco_decisions_start(&d, j);
        assert_true(rc == 0 || rc == -EAGAIN);
        node[j] = -1;
        if (rc == 0) {
            assert_int_equal(d.n_start_allocs, before + 1); /* one node each */
            assert_int_equal(d.start_allocs[before].gpus, case_gpus[j]);
            node[j] = (int32_t)d.start_allocs[before].node;
            started++;
        }
    }
    eco_decisions_fini(&d);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
    return started;
}

static void test_batch_beats_one_at_a_time(void **st)
{
    (void)st;
    int32_t node[4];
    static const char *const one[] = {"first-fit", "pack", "ffd", "bfd"};
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(start_all(one[k], node), 3);
        assert_int_equal(node[0], 0);
        assert_int_equal(node[1], 0);
        assert_int_equal(node[2], 1);
        assert_int_equal(node[3], -1);
    }
    static const char *const batch[] = {"pso", "pso-basic", "ilp"};
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(start_all(batch[k], node), 4);
        assert_true(node[0] != node[1]);
        assert_true(node[2] != node[3]);
        uint32_t used[2] = {0, 0};
        for (int j = 0; j < 4; j++) {
            assert_true(node[j] == 0 || node[j] == 1);
            used[node[j]] += case_gpus[j];
        }
        assert_int_equal(used[0], 3);
        assert_int_equal(used[1], 3);
    }
}

/* Where the planned node no longer holds the job, best fit decides; without a plan too. */
static void test_fallback(void **st)
{
    (void)st;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x3", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    struct eco_job jobs[4];
    make_jobs(jobs);
    const uint32_t queue[4] = {0, 1, 2, 3};
    const struct eco_placement_ops *pl = find("pso");
    void *state = NULL;
    assert_int_equal(pl->plan(&state, fm, jobs, queue, 4, 1), 0);
    struct eco_alloc a[4];
    assert_int_equal(pl->place_planned(state, fm, jobs, 2, a, 4), 1);
    uint32_t planned = a[0].node, other = 1 - planned;
    /* 2 GPUs taken on the planned node (1 left), 1 on the other (2 left): best fit -> other. */
    eco_freemap_take(fm, planned, 2);
    eco_freemap_take(fm, other, 1);
    assert_int_equal(pl->place_planned(state, fm, jobs, 2, a, 4), 1);
    assert_int_equal(a[0].node, other);
    assert_int_equal(a[0].gpus, 2);
    /* Without the plan (place, the one-job rule) a 1-GPU job goes by best fit: the node with
     * 1 free. */
    assert_int_equal(pl->place(NULL, fm, &jobs[0], a, 4), 1);
    assert_int_equal(a[0].node, planned);
    struct eco_plan_stats ps;
    eco_placement_batch_stats(state, &ps);
    assert_int_equal(ps.passes, 1);
    assert_int_equal(ps.planned, 4);
    pl->plan_free(state);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

/* The same case through the engine (fifo, all submitted at 0 for 100 s): with a batch
 * placement every job starts at 0; with first fit the last waits for the first to end. */
static void run_engine(const char *name, double *start)
{
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x3", &c, &err), 0);
    struct eco_jobset *set = eco_jobset_create();
    for (int i = 0; i < 4; i++)
        assert_non_null(eco_test_add_job(set, 0, 100, case_gpus[i]));
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"), .placement = find(name), .seed = 1};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    assert_int_equal(res.summary.completed, 4);
    for (int i = 0; i < 4; i++)
        start[i] = set->jobs[i].start_s;
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_engine(void **st)
{
    (void)st;
    double s[4];
    run_engine("first-fit", s);
    assert_true(s[0] == 0 && s[1] == 0 && s[2] == 0);
    assert_true(s[3] > 0);
    static const char *const batch[] = {"pso", "pso-basic", "ilp"};
    for (size_t k = 0; k < 3; k++) {
        run_engine(batch[k], s);
        for (int i = 0; i < 4; i++)
            assert_true(s[i] == 0);
    }
}

/* Seeded: two runs of a busier random workload give the same schedule, job by job. */
static void run_random(const char *name, uint64_t seed, double *start, double *node0)
{
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("6x8", &c, &err), 0);
    struct eco_jobset *set = eco_jobset_create();
    uint64_t x = 12345;
    for (int i = 0; i < 200; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        static const uint32_t g[] = {1, 1, 1, 2, 2, 4, 8, 3};
        assert_non_null(eco_test_add_job(set, (double)(i / 4) * 30, 60 + (double)((x >> 33) % 900),
                                         g[(x >> 50) % 8]));
    }
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("easy"), .placement = find(name), .seed = seed};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    assert_int_equal(res.summary.completed, 200);
    for (int i = 0; i < 200; i++) {
        start[i] = set->jobs[i].start_s;
        node0[i] = res.alloc_pool[set->jobs[i].alloc_off].node;
    }
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_deterministic(void **st)
{
    (void)st;
    static double a[200], b[200], na[200], nb[200];
    static const char *const batch[] = {"pso", "pso-basic"};
    for (size_t k = 0; k < 2; k++) {
        run_random(batch[k], 7, a, na);
        run_random(batch[k], 7, b, nb);
        assert_memory_equal(a, b, sizeof a);
        assert_memory_equal(na, nb, sizeof na);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_beats_one_at_a_time),
        cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_engine),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
