/* SPDX-License-Identifier: MIT */
/* The clairvoyant bound on deadline misses (eco_sim_miss_bound): hand cases where the budget's
 * energy or the cluster's GPU time decides, the bound below what the cappers achieve on a small
 * trace, and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "sim/sim.h"
#include "test_jobs.h"

/* n jobs of `gpus` GPUs, 3600 reference seconds of resnet50, submitted at 0, deadline 7200 s. */
static struct eco_jobset *jobs_of(size_t n, uint32_t gpus)
{
    struct eco_jobset *set = eco_jobset_create();
    for (size_t i = 0; i < n; i++) {
        struct eco_job *j = eco_test_add_job(set, 0, 3600, gpus);
        assert_non_null(j);
        j->workload_off = eco_jobset_intern(set, "resnet50", 8);
        j->deadline_s = 7200;
    }
    return set;
}

/* The least energy (J) a one-GPU resnet50 job of 3600 reference seconds needs on a V100 above
 * the GPU's idle draw, over the 26 points of the limit range the bound looks at. */
static double least_energy(const struct eco_node_group *g)
{
    const struct eco_gpu_type *t = eco_catalog_get(g->type);
    int w = eco_workload_find("resnet50");
    double best = INFINITY;
    for (int k = 0; k < 26; k++) {
        double x = t->min_limit_w + (t->max_limit_w - t->min_limit_w) * k / 25, s, p;
        assert_int_equal(eco_power_eval(g->type, (size_t)w, x, &s, &p), 0);
        best = fmin(best, (p - g->gpu_idle_w) / s * 3600);
    }
    return best;
}

static size_t bound_of(const struct eco_cluster *c, size_t jobs, uint32_t gpus, double budget_w)
{
    struct eco_jobset *set = jobs_of(jobs, gpus);
    struct eco_budget_step b = {0, budget_w};
    struct eco_sim_config cfg = {.seed = 1, .budget = &b, .n_budget = 1};
    struct eco_miss_bound out;
    struct eco_error err;
    int rc = eco_sim_miss_bound(c, set, &cfg, 600, &out, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(out.deadline_jobs, jobs);
    assert_true(out.columns > 0);
    eco_jobset_destroy(set);
    return out.misses;
}

/* The budget's energy over the window decides how many of 16 one-GPU jobs can be met; on one
 * node with ample power the GPU time decides how many 8-GPU jobs. */
static void test_hand_cases(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x8:V100", &c, &err), 0);
    const struct eco_node_group *g = &c->groups[0];
    double fixed = 2 * (g->base_w + 8 * g->gpu_idle_w), e = least_energy(g);
    /* energy for 10.5 of the 16 jobs over the 7200 s window: at least 5.5, so 6, missed */
    assert_int_equal(bound_of(c, 16, 1, fixed + 10.5 * e / 7200), 6);
    assert_int_equal(bound_of(c, 16, 1, fixed + 12.2 * e / 7200), 4);
    assert_int_equal(bound_of(c, 16, 1, fixed + 16.1 * e / 7200), 0);
    eco_cluster_destroy(c);
    c = NULL;
    assert_int_equal(eco_cluster_parse_spec("1x8:V100", &c, &err), 0);
    g = &c->groups[0];
    double ample = g->base_w + 8 * 400.0;
    /* two 8-GPU jobs fill the node's 7200 s at full speed; a third does not fit */
    assert_int_equal(bound_of(c, 2, 8, ample), 0);
    assert_int_equal(bound_of(c, 3, 8, ample), 1);
    eco_cluster_destroy(c);
}

/* 60 jobs over 4 h on 2 V100 and 2 A40 nodes: at every budget the bound is at most the misses
 * of each capper (judged with the true curves), never rises with the budget, and is above zero
 * at the tightest one. */
static void test_below_cappers(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x8:V100,2x8:A40", &c, &err), 0);
    struct eco_jobset *set = eco_jobset_create();
    uint64_t x = 12345;
    static const uint32_t sizes[] = {1, 2, 4, 8};
    for (int i = 0; i < 60; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double submit = (double)(x >> 40) / (double)(1ULL << 24) * 14400;
        double dur = 900 + (double)((x >> 20) & 0xfff) / 4096.0 * 6300;
        assert_non_null(eco_test_add_job(set, submit, dur, sizes[(x >> 8) & 3]));
    }
    struct eco_sim_config base = {
        .policy = eco_policy_find("lsf"),
        .placement = eco_placement_find("pack"),
        .seed = 3,
        .workload_mix = "default",
        .deadline_lo = 1.5,
        .deadline_hi = 3,
    };
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &base, &res, &err), 0);
    double peak = res.summary.peak_power_w;
    eco_sim_result_fini(&res);
    static const char *pols[] = {"oracle", "mpc", "uniform"};
    size_t last = SIZE_MAX;
    for (int k = 0; k < 4; k++) {
        struct eco_budget_step b = {0, (0.45 + 0.1 * k) * peak};
        struct eco_sim_config cfg = base;
        cfg.budget = &b;
        cfg.n_budget = 1;
        struct eco_miss_bound out;
        assert_int_equal(eco_sim_miss_bound(c, set, &cfg, 900, &out, &err), 0);
        if (k == 0)
            assert_true(out.misses > 0);
        assert_true(out.misses <= last);
        last = out.misses;
        for (size_t p = 0; p < 3; p++) {
            cfg.power_policy = pols[p];
            assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
            assert_int_equal(res.summary.deadline_jobs, out.deadline_jobs);
            double misses = round(res.summary.deadline_miss_ratio * res.summary.deadline_jobs);
            if ((double)out.misses > misses)
                fail_msg("budget %.0f W, %s: bound %zu above %.0f misses", b.watts, pols[p],
                         out.misses, misses);
            eco_sim_result_fini(&res);
        }
    }
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_errors(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x8:V100", &c, &err), 0);
    struct eco_jobset *set = jobs_of(1, 8);
    struct eco_sim_config cfg = {.seed = 1};
    struct eco_miss_bound out;
    assert_int_equal(eco_sim_miss_bound(c, set, &cfg, 600, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "power budget"));
    struct eco_budget_step b = {0, 5000};
    cfg.budget = &b;
    cfg.n_budget = 1;
    assert_int_equal(eco_sim_miss_bound(c, set, &cfg, 0.5, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "at least 1 s"));
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_below_cappers),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
