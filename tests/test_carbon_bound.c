/* SPDX-License-Identifier: MIT */
/* The bound on the jobs' own carbon within their windows and the cluster's GPUs
 * (eco_carbon_lp_bound, sim --carbon-bound): hand cases where the window, a job's speed, the
 * capacity or an overloaded window decides; the bound at or below every carbon policy's jobs'
 * carbon on a small trace; and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/carbon.h"
#include "ecosched/policy.h"
#include "sim/sim.h"
#include "test_jobs.h"

#define H 3600.0

/* A signal of hourly values from calendar 0. */
static void hourly(struct eco_signal *s, const double *v, size_t n)
{
    double t[64];
    for (size_t i = 0; i <= n; i++)
        t[i] = (double)i * H;
    struct eco_error err;
    assert_int_equal(eco_signal_build(s, ECO_SIGNAL_CARBON, t, v, n, &err), 0);
}

static double bound(const struct eco_carbon_bound_job *j, size_t n, double gpus,
                    const struct eco_signal *s, double *late)
{
    struct eco_carbon_bound out;
    struct eco_error err;
    int rc = eco_carbon_lp_bound(j, n, gpus, s, H, &out, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    if (late)
        *late = out.late;
    return out.kg;
}

static void test_hand_cases(void **state)
{
    (void)state;
    struct eco_signal s;
    const double v[] = {300, 100, 200, 400, 50, 50};
    hourly(&s, v, 6);
    /* 1 kWh: one 1-hour job with 2 h of slack takes hour 1 (100 g): 0.1 kg. */
    struct eco_carbon_bound_job a = {
        .submit_s = 0, .end_s = 3 * H, .run_s = H, .energy_kwh = 1, .gpus = 1};
    double late;
    assert_true(fabs(bound(&a, 1, 1, &s, &late) - 0.1) < 1e-6);
    assert_true(late < 1e-6);
    /* a 2-hour job in the same window: at most half its work in an hour, so hours 1 and 2 (the
     * split the relaxation allows): 2 kWh x (100 + 200) / 2 = 0.3 kg */
    struct eco_carbon_bound_job b = {
        .submit_s = 0, .end_s = 3 * H, .run_s = 2 * H, .energy_kwh = 2, .gpus = 1};
    assert_true(fabs(bound(&b, 1, 1, &s, NULL) - 0.3) < 1e-6);
    /* two 1-hour 1-GPU jobs on 1 GPU: one in hour 1, the other in hour 2: 0.1 + 0.2; on 2 GPUs
     * both in hour 1: 0.2 */
    struct eco_carbon_bound_job two[2] = {a, a};
    assert_true(fabs(bound(two, 2, 1, &s, NULL) - 0.3) < 1e-6);
    assert_true(fabs(bound(two, 2, 2, &s, NULL) - 0.2) < 1e-6);
    /* a window that starts within an hour: [1.5 h, 3.5 h) holds half of hour 1, hour 2 and half
     * of hour 3: half the job at 100 and half at 200, 0.15 kg */
    struct eco_carbon_bound_job c = {
        .submit_s = 1.5 * H, .end_s = 3.5 * H, .run_s = H, .energy_kwh = 1, .gpus = 1};
    assert_true(fabs(bound(&c, 1, 1, &s, NULL) - 0.15) < 1e-6);
    /* an overloaded window: two 1-hour jobs without slack in hour 0 on 1 GPU: one job's work
     * cannot fit; it is counted at the cleanest hour of its window (300): 0.6 kg, 1 job late */
    struct eco_carbon_bound_job d = {
        .submit_s = 0, .end_s = H, .run_s = H, .energy_kwh = 1, .gpus = 1};
    struct eco_carbon_bound_job dd[2] = {d, d};
    assert_true(fabs(bound(dd, 2, 1, &s, &late) - 0.6) < 1e-6);
    assert_true(fabs(late - 1) < 1e-6);
    /* the overflow is the least the capacity allows: a third job with slack to hour 5 does not
     * push more work out (it takes hour 4 at 50): 0.6 + 0.05 */
    struct eco_carbon_bound_job e3[3] = {
        d, d, {.submit_s = 0, .end_s = 5 * H, .run_s = H, .energy_kwh = 1, .gpus = 1}};
    assert_true(fabs(bound(e3, 3, 1, &s, &late) - 0.65) < 1e-6);
    assert_true(fabs(late - 1) < 1e-6);
    eco_signal_free(&s);
}

/* 40 jobs over 6 hours on 2x8 GPUs, a day of a duck-curve-like signal: the jobs' carbon under
 * every carbon policy, with 8 h of slack, is at or above the bound, and the bound is below the
 * carbon-agnostic jobs' carbon. */
static void test_below_policies(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("2x8:V100", &c, &err), 0);
    struct eco_jobset *set = eco_jobset_create();
    uint64_t x = 7;
    static const uint32_t sizes[] = {1, 2, 4, 8};
    for (int i = 0; i < 40; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double submit = (double)(x >> 40) / (double)(1ULL << 24) * 6 * H;
        double dur = 900 + (double)((x >> 20) & 0xfff) / 4096.0 * 3 * H;
        assert_non_null(eco_test_add_job(set, submit, dur, sizes[(x >> 8) & 3]));
    }
    double v[48];
    for (int h = 0; h < 48; h++)
        v[h] = 250 + 120 * cos(2 * 3.14159265358979 * (h - 20) / 24.0) + 10 * (h % 3);
    struct eco_signal s;
    hourly(&s, v, 48);
    static const char *pols[] = {
        "none",   "lwa", "lwa:2", "threshold:30", "shift", "shift:rel=0", "shift:lambda=0.1",
        "lwa-int"};
    double bound_kg = NAN, agnostic = NAN;
    for (size_t p = 0; p < sizeof pols / sizeof pols[0]; p++) {
        const char *params = NULL;
        struct eco_sim_config cfg = {
            .policy = eco_policy_find("easy"),
            .placement = eco_placement_find("pack"),
            .seed = 3,
            .carbon = &s,
            .epoch0_s = 0,
            .max_delay_s = 8 * H,
            .forecast = ECO_FORECAST_ORACLE,
            .carbon_bound_slot_s = H,
        };
        if (strcmp(pols[p], "none"))
            cfg.carbon_policy = eco_carbon_find(pols[p], &params);
        cfg.carbon_params = params;
        struct eco_sim_result res;
        int rc = eco_sim_run(c, set, &cfg, &res, &err);
        if (rc)
            print_error("%s: %s\n", pols[p], err.msg);
        assert_int_equal(rc, 0);
        assert_true(res.summary.have_carbon_bound);
        double kg = res.summary.carbon_bound.kg;
        if (p == 0) {
            bound_kg = kg;
            agnostic = res.summary.jobs_carbon_kg;
        }
        /* the bound does not depend on the policy run */
        assert_true(fabs(kg - bound_kg) <= 1e-6 * bound_kg);
        if (res.summary.jobs_carbon_kg < kg * (1 - 1e-9))
            fail_msg("%s: jobs' carbon %.6f kg below the bound %.6f kg", pols[p],
                     res.summary.jobs_carbon_kg, kg);
        eco_sim_result_fini(&res);
    }
    assert_true(bound_kg < 0.95 * agnostic);
    eco_signal_free(&s);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_errors(void **state)
{
    (void)state;
    struct eco_signal s;
    const double v[] = {300, 100};
    hourly(&s, v, 2);
    struct eco_carbon_bound out;
    struct eco_error err;
    struct eco_carbon_bound_job a = {
        .submit_s = 0, .end_s = 0.5 * H, .run_s = H, .energy_kwh = 1, .gpus = 1};
    assert_int_equal(eco_carbon_lp_bound(&a, 1, 8, &s, H, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "job 0"));
    a.end_s = 2 * H;
    assert_int_equal(eco_carbon_lp_bound(&a, 1, 8, &s, 0.5, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "at least 1 s"));
    assert_int_equal(eco_carbon_lp_bound(&a, 1, 8, NULL, H, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "carbon signal"));
    s.kind = ECO_SIGNAL_PRICE;
    assert_int_equal(eco_carbon_lp_bound(&a, 1, 8, &s, H, &out, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "carbon signal"));
    s.kind = ECO_SIGNAL_CARBON;
    eco_signal_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_below_policies),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
