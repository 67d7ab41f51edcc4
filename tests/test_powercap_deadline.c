/* SPDX-License-Identifier: MIT */
/* Deadline-aware allocation (docs/policies/powercap.md): the per-miss cost choosing the split
 * that meets both deadlines, a lost cause releasing its power, the decomposed solver against
 * the central one, the receding-horizon forecast, and deadline-aware admission. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "test_util.h"

/* A hand-computable job: power = limit, speed = limit / 300 on [100, 300] W. */
static void linear_predict(const void *ctx, double limit_w, double *power_w, double *speed)
{
    (void)ctx;
    if (power_w)
        *power_w = limit_w;
    if (speed)
        *speed = limit_w / 300.0;
}

static struct eco_cap_job lin_job(double remaining_s, double slack_s)
{
    return (struct eco_cap_job){.gpus = 1,
                                .min_limit_w = 100,
                                .max_limit_w = 300,
                                .remaining_s = remaining_s,
                                .weight = 1,
                                .slack_s = slack_s,
                                .predict = linear_predict};
}

/* grid 3: limits 100, 200, 300 W, speeds 1/3, 2/3, 1 */
static struct eco_cap_params deadline_params(void)
{
    struct eco_cap_params p;
    eco_cap_params_default(&p);
    p.grid = 3;
    p.horizon = 0;
    p.miss_cost = 10;
    /* 1 %: a finish 6 % before the deadline (D at 200 W: 150 s of 160) has a miss probability
     * of 1e-11, so the costs below are the step's two sides by hand (the default 5 % gives it
     * 9 %) */
    p.miss_sigma = 0.01;
    p.lost_release = 1;
    return p;
}

/* A: 200 s of work, deadline in 250 s: only 300 W (T 200) meets it (200 W: T 300).
 * B: 300 s of work, deadline in 460 s: 200 W (T 450) meets it.
 * Budget 500 W: (A 300, B 200) meets both. Completion time alone prefers (A 200, B 300):
 * 300 + 300 = 600 s against 200 + 450 = 650 s, missing A's deadline. */
static void test_right_split(void **state)
{
    (void)state;
    struct eco_cap_job jobs[2] = {lin_job(200, 250), lin_job(300, 460)};
    struct eco_cap_params p = deadline_params();
    double lim[2];
    assert_true(eco_cap_allocate(jobs, 2, 500.001, &p, lim, NULL) >= 0);
    assert_near(lim[0], 300, 1e-9);
    assert_near(lim[1], 200, 1e-9);
    /* the same jobs without deadlines: the completion-time optimum is the other split */
    jobs[0].slack_s = jobs[1].slack_s = -1;
    assert_true(eco_cap_allocate(jobs, 2, 500.001, &p, lim, NULL) >= 0);
    assert_near(lim[0], 200, 1e-9);
    assert_near(lim[1], 300, 1e-9);
}

/* C: 400 s of work, deadline in 100 s: lost even at 300 W. D: 100 s of work, deadline in
 * 160 s: needs 200 W (T 150). Budget 400 W. The linear lateness cost keeps C at 300 W (its
 * 100 W are worth 2,200 against D's 1,550) and D misses; the per-miss cost with lost causes
 * released gives D its 200 W. */
static void test_lost_cause(void **state)
{
    (void)state;
    struct eco_cap_job jobs[2] = {lin_job(400, 100), lin_job(100, 160)};
    struct eco_cap_params lin;
    eco_cap_params_default(&lin);
    lin.grid = 3;
    lin.horizon = 0;
    double lim[2];
    assert_true(eco_cap_allocate(jobs, 2, 400.001, &lin, lim, NULL) >= 0);
    assert_near(lim[0], 300, 1e-9);
    assert_near(lim[1], 100, 1e-9);
    struct eco_cap_params p = deadline_params();
    assert_true(eco_cap_allocate(jobs, 2, 400.001, &p, lim, NULL) >= 0);
    assert_near(lim[0], 200, 1e-9);
    assert_near(lim[1], 200, 1e-9);
    /* a lost cause is priced by its completion time alone */
    assert_near(eco_cap_job_cost(&jobs[0], &p, 200), 600, 1e-9);
    /* an on-time job at a limit that misses pays the (smoothed) miss penalty: 10 x 100 s */
    assert_true(eco_cap_job_cost(&jobs[1], &p, 100) > 300 + 0.99 * 1000);
    assert_true(eco_cap_job_cost(&jobs[1], &p, 200) < 150 + 1e-6 * 1000);
}

/* The per-miss cost leaves out deadline terms under half an ulp of the completion-time term
 * and takes the probability as exactly 1 far past the deadline (cost_row); the cost must be
 * the full formula's, bit for bit, wherever the finish falls against the deadline: here z
 * runs from -1000 to +40 over a single-point row and a 26-point row. */
static void test_miss_cost_exact(void **state)
{
    (void)state;
    struct eco_cap_params p = deadline_params();
    p.lost_release = 0;
    const double sigs[] = {0.01, 0.05, 0.3};
    size_t checked = 0, far = 0;
    for (size_t q = 0; q < sizeof sigs / sizeof sigs[0]; q++) {
        p.miss_sigma = sigs[q];
        for (int a = 0; a <= 400; a++) {
            /* slack from 0.01 x to 40 x the finish time at full speed (200 s), geometric */
            double slack = 2.0 * pow(10.0, -2.0 + 3.6 * a / 400.0) * 200.0;
            struct eco_cap_job j = lin_job(200, slack);
            j.miss_ref_s = a % 3 ? 0 : 5000; /* the penalty from remaining_s, or 25x it */
            for (int k = 0; k <= 20; k++) {
                double L = 100 + 10 * k, s = L / 300.0, t = 200 / s;
                double pen = 10 * (j.miss_ref_s > 0 ? j.miss_ref_s : 200);
                double z = (t - slack) / (sigs[q] * t);
                double want = t + pen * (0.5 * erfc(-z * 0.70710678118654752440));
                double got = eco_cap_job_cost(&j, &p, L);
                if (got != want)
                    print_error("sigma %g slack %.17g limit %g: z %g cost %.17g, want %.17g\n",
                                sigs[q], slack, L, z, got, want);
                assert_true(got == want);
                checked++;
                far += z < -8.5 || z > 8.5;
            }
        }
    }
    assert_true(far > checked / 4); /* the skipped ranges were reached */
    /* the same costs from the allocator's grid rows: every point it picks is priced alike,
     * so a budget sweep gives the same limits as the exhaustive choice over 26 points */
    p.grid = 26;
    p.miss_sigma = 0.05;
    struct eco_cap_job jobs[3] = {lin_job(200, 210), lin_job(300, 2000), lin_job(100, 120)};
    for (int b = 0; b <= 10; b++) {
        double budget = 300 + 60 * b + 0.5, lim[3], best = INFINITY, bl[3] = {0};
        assert_true(eco_cap_allocate(jobs, 3, budget, &p, lim, NULL) >= 0);
        for (int x = 0; x < 26; x++)
            for (int y = 0; y < 26; y++)
                for (int w = 0; w < 26; w++) {
                    double l[3] = {eco_cap_grid_limit(100, 300, 26, (uint32_t)x),
                                   eco_cap_grid_limit(100, 300, 26, (uint32_t)y),
                                   eco_cap_grid_limit(100, 300, 26, (uint32_t)w)};
                    if (l[0] + l[1] + l[2] > budget)
                        continue;
                    double c = 0;
                    for (int i = 0; i < 3; i++)
                        c += eco_cap_job_cost(&jobs[i], &p, l[i]);
                    if (c < best)
                        best = c, bl[0] = l[0], bl[1] = l[1], bl[2] = l[2];
                }
        double c = 0;
        for (int i = 0; i < 3; i++)
            c += eco_cap_job_cost(&jobs[i], &p, lim[i]);
        assert_near(c, best, 1e-9 * best);
        (void)bl;
    }
}

/* Jobs on the measured curves (V100 / A40, several workloads), with and without deadlines. */
static void truth_jobs(struct eco_cap_job *jobs, struct eco_cap_truth *tr, size_t n,
                       struct eco_rng *r)
{
    int v100 = eco_catalog_find("V100"), a40 = eco_catalog_find("A40");
    assert_true(v100 >= 0 && a40 >= 0);
    size_t nw = eco_workload_count();
    for (size_t i = 0; i < n; i++) {
        tr[i].type = i % 2 ? a40 : v100;
        tr[i].workload = (size_t)(eco_rng_next(r) % nw);
        const struct eco_gpu_type *t = eco_catalog_get((size_t)tr[i].type);
        double rem = 100 + 900 * eco_rng_uniform(r);
        jobs[i] = (struct eco_cap_job){
            .gpus = 1 + (uint32_t)(eco_rng_next(r) % 8),
            .min_limit_w = t->min_limit_w,
            .max_limit_w = t->max_limit_w,
            .remaining_s = rem,
            .weight = 1,
            .slack_s = i % 3 ? rem * (0.9 + eco_rng_uniform(r)) : -1,
            .miss_ref_s = rem,
            .predict = eco_cap_predict_truth,
            .ctx = &tr[i],
        };
    }
}

static double total_cost(const struct eco_cap_job *jobs, size_t n, const struct eco_cap_params *p,
                         const double *lim, double *power)
{
    double c = 0.0;
    *power = 0.0;
    for (size_t i = 0; i < n; i++) {
        double pw = 0.0, sp = 0.0;
        jobs[i].predict(jobs[i].ctx, lim[i], &pw, &sp);
        *power += pw * jobs[i].gpus;
        c += eco_cap_job_cost(&jobs[i], p, lim[i]);
    }
    return c;
}

/* The decomposed form (local choices + price bisection) fits the budget, agrees with the
 * central solver within 2 % of total cost (the central one is never worse: it also spends the
 * leftover), and each job's local choice at the central price is what the central hull step
 * gives before its greedy fill (so at most a few jobs differ). */
static void test_dual_agrees(void **state)
{
    (void)state;
    enum { N = 40 };
    struct eco_cap_job jobs[N];
    struct eco_cap_truth tr[N];
    struct eco_rng r;
    struct eco_cap_params p = deadline_params();
    p.grid = 26;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        eco_rng_init(&r, seed);
        truth_jobs(jobs, tr, N, &r);
        double lo = 0, hi = 0;
        for (size_t i = 0; i < N; i++) {
            double pw = 0, sp = 0;
            jobs[i].predict(jobs[i].ctx, jobs[i].min_limit_w, &pw, &sp);
            lo += pw * jobs[i].gpus;
            jobs[i].predict(jobs[i].ctx, jobs[i].max_limit_w, &pw, &sp);
            hi += pw * jobs[i].gpus;
        }
        double budget = lo + 0.5 * (hi - lo);
        double lc[N], ld[N], pc_w, pd_w;
        uint32_t rounds = 0;
        double price_c = eco_cap_allocate(jobs, N, budget, &p, lc, NULL);
        double price_d = eco_cap_allocate_dual(jobs, N, budget, &p, 0, 0, ld, &rounds);
        assert_true(price_c > 0 && isfinite(price_c));
        assert_true(price_d > 0 && isfinite(price_d));
        assert_true(rounds > 2 && rounds <= 200);
        double cc = total_cost(jobs, N, &p, lc, &pc_w), cd = total_cost(jobs, N, &p, ld, &pd_w);
        assert_true(pd_w <= budget);
        assert_true(pc_w <= budget);
        assert_true(cc <= cd * (1 + 1e-9));
        assert_true(cd <= cc * 1.02);
        assert_true(fabs(price_d - price_c) <= 0.05 * price_c);
    }
    /* bad input */
    double l;
    struct eco_cap_job bad = lin_job(1, 1);
    bad.predict = NULL;
    assert_true(isnan(eco_cap_local_choice(&bad, NULL, 1.0, &l, NULL)));
    assert_true(eco_cap_allocate_dual(&bad, 1, 100, NULL, 0, 0, &l, NULL) < 0);
}

/* Local choice by hand: job D of test_lost_cause (costs 300 + 1000, 150, 100 at 100, 200,
 * 300 W): at price 1 the choices cost 1400, 350, 400, so 200 W; at price 0.01 300 W. */
static void test_local_choice(void **state)
{
    (void)state;
    struct eco_cap_job d = lin_job(100, 160);
    struct eco_cap_params p = deadline_params();
    double lim = 0, pw = 0;
    eco_cap_local_choice(&d, &p, 1.0, &lim, &pw);
    assert_near(lim, 200, 1e-9);
    assert_near(pw, 200, 1e-9);
    eco_cap_local_choice(&d, &p, 0.01, &lim, &pw);
    assert_near(lim, 300, 1e-9);
    eco_cap_local_choice(&d, &p, INFINITY, &lim, &pw);
    assert_near(lim, 100, 1e-9);
}

/* Horizon forecast: A has 2.5 s of work, B 100 s, budget 400 W, no deadlines, horizon 6 of
 * 1 s. Completion time favours the short job: A runs at 300 W (speed 1) for two periods
 * (2.5, 1.5, 0.5 left), then needs only 200 W (0.5 s of work at 2/3) and is done in period 2;
 * B holds the rest: 100 W (speed 1/3) twice, 200 W, then all 300 W once A has finished and
 * freed its power. */
static void test_horizon_forecast(void **state)
{
    (void)state;
    struct eco_cap_job jobs[2] = {lin_job(2.5, -1), lin_job(100, -1)};
    struct eco_cap_params p = deadline_params();
    p.horizon = 6;
    p.period_s = 1;
    double rem[12], pw[12], lim[12], first[2];
    struct eco_cap_forecast fc = {.remaining_s = rem, .power_w = pw, .limit_w = lim};
    assert_true(eco_cap_plan(jobs, 2, 400.001, &p, 0, first, &fc) >= 0);
    static const double want_rem[6][2] = {{2.5, 100},           {1.5, 100 - 1 / 3.0},
                                          {0.5, 100 - 2 / 3.0}, {0, 100 - 4 / 3.0},
                                          {0, 100 - 7 / 3.0},   {0, 100 - 10 / 3.0}};
    static const double want_lim[6][2] = {{300, 100}, {300, 100}, {200, 200},
                                          {100, 300}, {100, 300}, {100, 300}};
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 2; i++) {
            assert_near(rem[k * 2 + i], want_rem[k][i], 1e-9);
            assert_near(lim[k * 2 + i], want_lim[k][i], 1e-9);
            /* a finished job draws nothing: its power went to the other */
            assert_near(pw[k * 2 + i], want_rem[k][i] > 0 ? want_lim[k][i] : 0, 1e-9);
        }
    /* the limits applied are period 0's */
    assert_near(first[0], 300, 1e-9);
    assert_near(first[1], 100, 1e-9);
}

/* Admission (the family's admit=deadline, with near=1.5): a running job needs 240 W (the
 * first of 26 grid limits over 100..300 with 200 / (L / 300) <= 250) to meet its deadline; 300 W
 * are left for GPUs. A non-urgent candidate with a 100 W minimum would push it below (100 + 240 >
 * 300): not now. An urgent one (deadline within 1.5 x its time at full speed) fits at its
 * minimum: yes. Without the running job's deadline the minimum draws fit: yes. */
static void test_admit_deadline(void **state)
{
    (void)state;
    struct eco_error err = {0};
    struct eco_capper *c = eco_capper_create("mpc:admit=deadline,near=1.5", &err);
    assert_non_null(c);
    struct eco_capper_job run = {.cap = lin_job(200, 250)};
    struct eco_capper_view v = {.budget_w = 400, .fixed_w = 100, .jobs = &run, .n = 1};
    struct eco_capper_candidate calm = {
        .cap = lin_job(100, 1000), .min_w = 100, .deadline_s = 1000};
    struct eco_capper_candidate urgent = {
        .cap = lin_job(100, 120), .min_w = 100, .deadline_s = 120};
    assert_int_equal(eco_capper_admit(c, &v, 100, &calm), 0);
    assert_int_equal(eco_capper_admit(c, &v, 100, &urgent), 1);
    run.cap.slack_s = -1;
    assert_int_equal(eco_capper_admit(c, &v, 100, &calm), 1);
    /* never over the minimum draws */
    assert_int_equal(eco_capper_admit(c, &v, 260, &urgent), 0);
    eco_capper_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_right_split),      cmocka_unit_test(test_lost_cause),
        cmocka_unit_test(test_dual_agrees),      cmocka_unit_test(test_local_choice),
        cmocka_unit_test(test_horizon_forecast), cmocka_unit_test(test_admit_deadline),
        cmocka_unit_test(test_miss_cost_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
