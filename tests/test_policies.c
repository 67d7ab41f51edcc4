/* SPDX-License-Identifier: MIT */
/* Queue policies on hand-computed small traces: the expected start and end of every job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "sim/sim.h"
#include "test_util.h"

struct expect {
    double start_s, end_s;
    uint32_t preemptions;
};

static void run_case(const char *cluster, const char *policy, const char *params,
                     const char *placement, const struct eco_test_jspec *js,
                     const struct expect *ex, size_t n)
{
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec(cluster, &c, &err), 0);
    struct eco_jobset *set = eco_test_make_jobs(js, n);
    struct eco_sim_config cfg = {
        .policy = eco_policy_find(policy),
        .policy_params = params,
        .placement = eco_placement_find(placement),
        .seed = 1,
    };
    assert_non_null(cfg.policy);
    assert_non_null(cfg.placement);
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    for (size_t i = 0; i < n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->start_s != ex[i].start_s || j->end_s != ex[i].end_s ||
            j->preemptions != ex[i].preemptions)
            print_error("%s/%s job %zu: got start %g end %g preemptions %u, want %g %g %u\n",
                        policy, placement, i, j->start_s, j->end_s, j->preemptions, ex[i].start_s,
                        ex[i].end_s, ex[i].preemptions);
        assert_true(j->start_s == ex[i].start_s);
        assert_true(j->end_s == ex[i].end_s);
        assert_int_equal(j->preemptions, ex[i].preemptions);
    }
    assert_int_equal(res.summary.completed, n);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

/* One node of 4 GPUs. j0 holds 2 GPUs until 10; j1 wants all 4; j2 is long, j3 short. */
static const struct eco_test_jspec mix[] = {
    {0, 10, 2},
    {1, 5, 4},
    {2, 20, 1},
    {3, 4, 1},
};

static void test_fifo(void **state)
{
    (void)state;
    /* Head-of-line: j1 blocks j2 and j3 until j0 ends at 10. */
    static const struct expect ex[] = {{0, 10, 0}, {10, 15, 0}, {15, 35, 0}, {15, 19, 0}};
    run_case("1x4", "fifo", NULL, "pool", mix, ex, 4);
    run_case("1x4", "fifo", NULL, "pack", mix, ex, 4);
}

static void test_greedy(void **state)
{
    (void)state;
    /* j2 and j3 start as soon as they fit and delay j1 until j2 ends at 22. */
    static const struct expect ex[] = {{0, 10, 0}, {22, 27, 0}, {2, 22, 0}, {3, 7, 0}};
    run_case("1x4", "greedy", NULL, "pool", mix, ex, 4);
}

static void test_edf(void **state)
{
    (void)state;
    /* One node of 2 GPUs held by j0 until 10. Deadlines: j1 100, j2 20, j3 none. At 10 edf
     * starts j2 (earliest deadline; 10-15), then j1 (15-20), then j3 (20-25); fifo would run
     * j1 first. */
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x2", &c, &err), 0);
    static const struct eco_test_jspec js[] = {{0, 10, 2}, {1, 5, 2}, {2, 5, 2}, {3, 5, 1}};
    static const double deadline[] = {ECO_NO_DEADLINE, 100, 20, ECO_NO_DEADLINE};
    static const double start[] = {0, 15, 10, 20};
    struct eco_jobset *set = eco_test_make_jobs(js, 4);
    for (size_t i = 0; i < 4; i++)
        set->jobs[i].deadline_s = deadline[i];
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("edf"), .placement = eco_placement_find("pool"), .seed = 1};
    assert_non_null(cfg.policy);
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    for (size_t i = 0; i < 4; i++) {
        assert_near(set->jobs[i].start_s, start[i], 0);
        assert_near(set->jobs[i].end_s, start[i] + js[i].duration_s, 0);
    }
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_lsf(void **state)
{
    (void)state;
    /* One node of 2 GPUs held by j0 until 10. j1: deadline 40, 5 s (latest start 35); j2:
     * deadline 45, 20 s (latest start 25); j3 none. At 10 lsf starts j2 (least slack; 10-30),
     * then j1 (30-35, in time), then j3; edf would start j1 first and j2 would end at 35. */
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x2", &c, &err), 0);
    static const struct eco_test_jspec js[] = {{0, 10, 2}, {1, 5, 2}, {2, 20, 2}, {3, 5, 1}};
    static const double deadline[] = {ECO_NO_DEADLINE, 40, 45, ECO_NO_DEADLINE};
    static const double start[] = {0, 30, 10, 35};
    struct eco_jobset *set = eco_test_make_jobs(js, 4);
    for (size_t i = 0; i < 4; i++)
        set->jobs[i].deadline_s = deadline[i];
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("lsf"), .placement = eco_placement_find("pool"), .seed = 1};
    assert_non_null(cfg.policy);
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    for (size_t i = 0; i < 4; i++)
        assert_near(set->jobs[i].start_s, start[i], 0);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_easy(void **state)
{
    (void)state;
    /* j1 reserves t=10 with no spare GPU; j2 (ends 22) may not pass it, j3 (ends 7) may. */
    static const struct expect ex[] = {{0, 10, 0}, {10, 15, 0}, {15, 35, 0}, {3, 7, 0}};
    run_case("1x4", "easy", NULL, "pool", mix, ex, 4);
}

static void test_easy_spare_gpus(void **state)
{
    (void)state;
    /* Two nodes of 4. j0 holds 6 GPUs until 100; j1 wants 4 -> reservation at 100 when 8 are
     * free, leaving 4 spare; j2 (2 GPUs, long) may use spare GPUs and starts at once; j3 (2
     * GPUs, long) finds the spare exhausted and waits for j0 ... then fits beside j1. */
    static const struct eco_test_jspec js[] = {{0, 100, 6}, {1, 10, 4}, {2, 500, 2}, {3, 500, 2}};
    /* t=2: free 2 -> j2 backfills on spare (extra 4 -> 2). t=3: free 0 -> j3 waits. t=100: j0
     * frees 6: j1 starts (4), j3 starts (2). */
    static const struct expect ex[] = {{0, 100, 0}, {100, 110, 0}, {2, 502, 0}, {100, 600, 0}};
    run_case("2x4", "easy", NULL, "pool", js, ex, 4);
}

/* easy:limits plans with the jobs' time limits (limit_s, sacct's Timelimit) and runs them for
 * their true durations. `mix` with limits: */
static void run_limits(const double *limit, const double *start)
{
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4", &c, &err), 0);
    struct eco_jobset *set = eco_test_make_jobs(mix, 4);
    for (size_t i = 0; i < 4; i++)
        set->jobs[i].limit_s = limit[i];
    struct eco_sim_config cfg = {.policy = eco_policy_find("easy"),
                                 .policy_params = "limits",
                                 .placement = eco_placement_find("pool"),
                                 .seed = 1};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    for (size_t i = 0; i < 4; i++) {
        if (set->jobs[i].start_s != start[i])
            print_error("easy:limits job %zu: start %g, want %g\n", i, set->jobs[i].start_s,
                        start[i]);
        assert_true(set->jobs[i].start_s == start[i]);
        assert_true(set->jobs[i].end_s == start[i] + mix[i].duration_s);
    }
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_easy_limits(void **state)
{
    (void)state;
    /* j0's limit is its run time (shadow 10); j3's limit 20 would end at 23: it no longer
     * backfills (easy starts it at 3) and waits for j1. */
    static const double tight[] = {10, 5, 40, 20}, tight_start[] = {0, 10, 15, 15};
    run_limits(tight, tight_start);
    /* j0's limit 100 puts the reservation at 100: j2 (limit 50) and j3 (limit 20) backfill,
     * and j2 then delays j1 to 22, past j0's true end at 10. */
    static const double loose[] = {100, 5, 50, 20}, loose_start[] = {0, 22, 2, 3};
    run_limits(loose, loose_start);
    /* no limits: as easy */
    static const double none[] = {0, 0, 0, 0}, none_start[] = {0, 10, 15, 3};
    run_limits(none, none_start);
    struct eco_error err;
    assert_null(eco_policy_find("easy")->create(NULL, "limit", &err));
    assert_non_null(strstr(err.msg, "unknown parameter 'limit' (known: limits)"));
}

static void test_sjf(void **state)
{
    (void)state;
    /* At t=3 the queue is j3 (4 s), j1 (5 s), j2 (20 s): j3 fits, j1 blocks. */
    static const struct expect ex[] = {{0, 10, 0}, {10, 15, 0}, {15, 35, 0}, {3, 7, 0}};
    run_case("1x4", "sjf", NULL, "pool", mix, ex, 4);
}

static void test_las(void **state)
{
    (void)state;
    /* One node of 2 GPUs, one threshold at 10 GPU-s. j0 reaches 10 GPU-s at t=5 when j1
     * arrives: j1 (level 0) preempts it. j1 reaches level 1 at t=10: both at level 1, j0
     * submitted first resumes (25 s left -> ends 35); j1 resumes at 35 with 5 s left. */
    static const struct eco_test_jspec js[] = {{0, 30, 2}, {5, 10, 2}};
    static const struct expect ex[] = {{0, 35, 1}, {5, 40, 1}};
    run_case("1x2", "las", "10", "pool", js, ex, 2);
}

static void test_las_default_no_preemption_when_idle(void **state)
{
    (void)state;
    /* Enough GPUs for everyone: LAS never preempts. */
    static const struct eco_test_jspec js[] = {{0, 30000, 1}, {5, 100, 1}};
    static const struct expect ex[] = {{0, 30000, 0}, {5, 105, 0}};
    run_case("1x2", "las", NULL, "pool", js, ex, 2);
}

static void test_completion_before_arrival(void **state)
{
    (void)state;
    /* j0 ends at 10 exactly when j1 arrives: completions go first, so j1 starts at 10.
     * j2 and j3 arrive together: trace order decides. */
    static const struct eco_test_jspec js[] = {{0, 10, 4}, {10, 5, 4}, {20, 5, 4}, {20, 1, 4}};
    static const struct expect ex[] = {{0, 10, 0}, {10, 15, 0}, {20, 25, 0}, {25, 26, 0}};
    run_case("1x4", "fifo", NULL, "pack", js, ex, 4);
    run_case("1x4", "sjf", NULL, "pack", js,
             (const struct expect[]){{0, 10, 0}, {10, 15, 0}, {21, 26, 0}, {20, 21, 0}}, 4);
}

static void test_pack_node_boundaries(void **state)
{
    (void)state;
    /* Two nodes of 4 GPUs. j0 takes 3 GPUs (node 0). j1 wants 2: no node has 2 free besides
     * node 1 -> starts at once on node 1. j2 wants 3: node 0 has 1 free, node 1 has 2: waits
     * although 3 GPUs are free in total (pool would start it). */
    static const struct eco_test_jspec js[] = {{0, 10, 3}, {0, 20, 2}, {1, 5, 3}};
    static const struct expect pack[] = {{0, 10, 0}, {0, 20, 0}, {10, 15, 0}};
    static const struct expect pool[] = {{0, 10, 0}, {0, 20, 0}, {1, 6, 0}};
    run_case("2x4", "fifo", NULL, "pack", js, pack, 3);
    run_case("2x4", "fifo", NULL, "pool", js, pool, 3);
}

static void test_reject_too_large(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x4", &c, &err), 0);
    static const struct eco_test_jspec js[] = {{0, 10, 9}, {1, 10, 8}};
    struct eco_jobset *set = eco_test_make_jobs(js, 2);
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"), .placement = eco_placement_find("pack"), .seed = 1};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    assert_int_equal(res.summary.rejected, 1);
    assert_int_equal(res.summary.completed, 1);
    assert_int_equal(set->jobs[0].state, ECO_JOB_REJECTED);
    /* The 8-GPU job takes both whole nodes. */
    assert_true(set->jobs[1].start_s == 1 && set->jobs[1].end_s == 11);
    assert_int_equal(set->jobs[1].alloc_n, 2);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_summary_metrics(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4", &c, &err), 0);
    struct eco_jobset *set = eco_test_make_jobs(mix, 4);
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"), .placement = eco_placement_find("pool"), .seed = 1};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    const struct eco_sim_summary *s = &res.summary;
    /* JCTs: 10, 14, 33, 16 -> sorted 10 14 16 33. */
    assert_near(s->avg_jct_s, (10 + 14 + 33 + 16) / 4.0, 1e-12);
    assert_near(s->p50_jct_s, 15.0, 1e-12);
    assert_near(s->p95_jct_s, 16 + (33 - 16) * 0.85, 1e-12);
    /* Waits: 0, 9, 13, 12. */
    assert_near(s->avg_wait_s, 34 / 4.0, 1e-12);
    assert_near(s->makespan_s, 35.0, 1e-12);
    /* Busy GPU-s: 2*10 + 4*5 + 1*20 + 1*4 = 64 over 4 GPUs x 35 s. */
    assert_near(s->gpu_util, 64.0 / 140.0, 1e-12);
    assert_int_equal(s->events, 8);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_bad_las_params(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4", &c, &err), 0);
    const char *bad[] = {"abc", "10,5", "-3", "10,", "0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        struct eco_policy *p = eco_policy_find("las")->create(c, bad[i], &err);
        assert_null(p);
        assert_non_null(strstr(err.msg, "las thresholds"));
    }
    eco_cluster_destroy(c);
}

/* --policy NAME[:PARAMS]: the name before the first ':' (any case), the rest as parameters. */
static void test_find_spec(void **state)
{
    (void)state;
    static const struct {
        const char *value, *name, *params; /* name NULL: unknown */
    } cases[] = {
        {"las", "las", NULL},   {"las:3600,36000", "las", "3600,36000"},
        {"LAS:1", "las", "1"},  {"fifo:", "fifo", ""},
        {"edf", "edf", NULL},   {"la", NULL, NULL},
        {"lass:1", NULL, NULL}, {"", NULL, NULL},
        {":1", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *params = "unset";
        const struct eco_policy_ops *p = eco_policy_find_spec(cases[i].value, &params);
        if (!cases[i].name) {
            assert_null(p);
            continue;
        }
        assert_non_null(p);
        assert_string_equal(p->name, cases[i].name);
        if (cases[i].params)
            assert_string_equal(params, cases[i].params);
        else
            assert_null(params);
    }
}

/* Capability flags: the registry's policies say what they need, and the daemon's set (neither
 * durations nor preemption) is fifo, greedy and edf; only a policy with params_help takes
 * parameters, and each has a summary. */
static void test_caps(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        unsigned caps;
    } want[] = {
        {"fifo", 0},
        {"greedy", 0},
        {"easy", ECO_POLICY_NEEDS_DURATION},
        {"sjf", ECO_POLICY_NEEDS_DURATION},
        {"las", ECO_POLICY_PREEMPTS},
        {"edf", ECO_POLICY_NEEDS_DEADLINE},
        {"lsf", ECO_POLICY_NEEDS_DURATION | ECO_POLICY_NEEDS_DEADLINE},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct eco_policy_ops *p = eco_policy_find(want[i].name);
        assert_non_null(p);
        if (p->caps != want[i].caps)
            fail_msg("%s: caps %#x, want %#x", p->name, p->caps, want[i].caps);
    }
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4", &c, &err), 0);
    size_t n = 0;
    for (const struct eco_policy_ops *const *p = eco_policy_all(); *p; p++, n++) {
        assert_non_null((*p)->summary);
        if (!(*p)->params_help) { /* refuses parameters */
            assert_null((*p)->create(c, "1", &err));
        }
    }
    assert_int_equal(n, sizeof want / sizeof want[0]);
    eco_cluster_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_greedy),
        cmocka_unit_test(test_edf),
        cmocka_unit_test(test_lsf),
        cmocka_unit_test(test_easy),
        cmocka_unit_test(test_easy_spare_gpus),
        cmocka_unit_test(test_easy_limits),
        cmocka_unit_test(test_sjf),
        cmocka_unit_test(test_las),
        cmocka_unit_test(test_las_default_no_preemption_when_idle),
        cmocka_unit_test(test_completion_before_arrival),
        cmocka_unit_test(test_pack_node_boundaries),
        cmocka_unit_test(test_reject_too_large),
        cmocka_unit_test(test_summary_metrics),
        cmocka_unit_test(test_bad_las_params),
        cmocka_unit_test(test_find_spec),
        cmocka_unit_test(test_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
