/* SPDX-License-Identifier: MIT */
/* The capper family (src/core/powercap/capper*.c): table-driven checks over the registry
 * (limits in range, a budget that fits the minimums met, all-max when it does not bind),
 * hand-computed splits of uniform, proportional and threshold, the feedback integral, early
 * dithering, admission (min and deadline), start settings and parameter errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ecosched/powercap.h"
#include "ecosched/rng.h"

/* Test model: power per GPU equals the limit, speed is limit / MAX_W (linear). */
#define MIN_W 100.0
#define MAX_W 300.0

static void lin(const void *ctx, double limit_w, double *power_w, double *speed)
{
    (void)ctx;
    *power_w = limit_w;
    *speed = limit_w / MAX_W;
}

static struct eco_capper_job job(uint32_t gpus, double min_w, double max_w, double limit_w)
{
    return (struct eco_capper_job){
        .cap = {.gpus = gpus,
                .min_limit_w = min_w,
                .max_limit_w = max_w,
                .remaining_s = 1000,
                .weight = 1,
                .slack_s = -1,
                .predict = lin},
        .limit_w = limit_w,
        .measured_w = NAN,
        .measured_speed = NAN,
        .deadline_s = -1,
        .samples = 100, /* past the early dithering */
        .truth = lin,
    };
}

static struct eco_capper *make(const char *spec)
{
    struct eco_error err = {{0}};
    struct eco_capper *c = eco_capper_create(spec, &err);
    if (!c)
        fail_msg("%s: %s", spec, err.msg);
    return c;
}

static double gpu_total(const struct eco_capper_job *j, size_t n, const double *lim)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += j[i].cap.gpus * lim[i];
    return s;
}

/* Closed loop over `periods` of 30 s with exact measurements: fixed + sum gpus x limit. */
static void loop(struct eco_capper *c, struct eco_capper_job *jobs, size_t n, double budget_w,
                 double fixed_w, int periods, double *lim)
{
    struct eco_rng rng;
    eco_rng_init(&rng, 7);
    for (int p = 0; p < periods; p++) {
        struct eco_capper_view v = {.now_s = 30.0 * p,
                                    .period_s = 30,
                                    .budget_w = budget_w,
                                    .fixed_w = fixed_w,
                                    .measured_w = fixed_w + gpu_total(jobs, n, lim),
                                    .jobs = jobs,
                                    .n = n};
        assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
        for (size_t i = 0; i < n; i++) {
            assert_true(lim[i] >= jobs[i].cap.min_limit_w && lim[i] <= jobs[i].cap.max_limit_w);
            jobs[i].limit_w = lim[i];
            jobs[i].measured_w = lim[i];
        }
    }
}

static void test_registry_table(void **state)
{
    (void)state;
    const struct eco_capper_ops *const *all = eco_capper_all();
    size_t count = 0;
    for (; all[count]; count++) {
        const struct eco_capper_ops *ops = all[count];
        assert_non_null(ops->summary);
        assert_non_null(ops->params_help);
        assert_ptr_equal(eco_capper_find(ops->name), ops);
        struct {
            double budget_w;
            int binds;
        } cases[] = {
            {50 + 1400.0, 1}, /* GPU minimums 900 W, maximums 1900 W, 50 W fixed */
            {50 + 960.0, 1},  /* just above the minimums */
            {1e6, 0},         /* does not bind */
        };
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            struct eco_capper *c = make(ops->name);
            assert_ptr_equal(eco_capper_ops_of(c), ops);
            struct eco_capper_job jobs[3] = {job(1, MIN_W, MAX_W, MIN_W),
                                             job(2, MIN_W, MAX_W, MIN_W), job(4, 150, 250, 150)};
            double lim[3];
            for (size_t i = 0; i < 3; i++)
                lim[i] =
                    eco_capper_start_setting(c, jobs[i].cap.min_limit_w, jobs[i].cap.max_limit_w);
            loop(c, jobs, 3, cases[k].budget_w, 50, 200, lim);
            double total = 50 + gpu_total(jobs, 3, lim);
            if (cases[k].binds) {
                if (total > cases[k].budget_w * 1.001)
                    fail_msg("%s: %g W over a %g W budget", ops->name, total, cases[k].budget_w);
                assert_true(total >= cases[k].budget_w * 0.85); /* uses the budget */
            } else {
                for (size_t i = 0; i < 3; i++)
                    assert_true(lim[i] == jobs[i].cap.max_limit_w);
            }
            eco_capper_destroy(c);
        }
    }
    assert_int_equal(count, 5);
    assert_ptr_equal(eco_capper_find("MPC"), eco_capper_find("mpc"));
    assert_null(eco_capper_find("nosuch"));
}

static void decide1(struct eco_capper *c, struct eco_capper_job *jobs, size_t n, double budget_w,
                    double measured_w, double now_s, double *lim)
{
    struct eco_rng rng;
    eco_rng_init(&rng, 1);
    struct eco_capper_view v = {.now_s = now_s,
                                .period_s = 1,
                                .budget_w = budget_w,
                                .measured_w = measured_w,
                                .jobs = jobs,
                                .n = n};
    assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
}

static void test_hand_splits(void **state)
{
    (void)state;
    struct {
        const char *spec;
        double budget_w;
        double lo2, hi2;       /* job B's range (job A: [100, 300]) */
        double meas_a, meas_b; /* measured draw per GPU at 200 W, NaN none */
        double want_a, want_b;
    } rows[] = {
        /* 400 W over two GPUs: 200 each */
        {"uniform:gain=0,dither=0", 400, 100, 300, NAN, NAN, 200, 200},
        /* B is held at its 150 W maximum: A gets the rest, 250 */
        {"uniform:gain=0,dither=0,slew=0", 400, 100, 150, NAN, NAN, 250, 150},
        /* demands 100 x 300/200 = 150 and 200 x 300/200 = 300: alpha = 300 / 450 */
        {"proportional:gain=0,dither=0", 300, 100, 300, 100, 200, 100, 200},
        /* no measurement: both demand 300 (the model at the maximum), an even split */
        {"proportional:gain=0,dither=0,slew=0", 500, 100, 300, NAN, NAN, 250, 250},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        struct eco_capper *c = make(rows[r].spec);
        struct eco_capper_job jobs[2] = {
            job(1, MIN_W, MAX_W, 200),
            job(1, rows[r].lo2, rows[r].hi2, rows[r].hi2 < 200 ? rows[r].hi2 : 200)};
        jobs[0].measured_w = rows[r].meas_a;
        jobs[1].measured_w = rows[r].meas_b;
        double lim[2];
        decide1(c, jobs, 2, rows[r].budget_w, NAN, 0, lim);
        assert_float_equal(lim[0], rows[r].want_a, 1e-3);
        assert_float_equal(lim[1], rows[r].want_b, 1e-3);
        eco_capper_destroy(c);
    }
    /* threshold: 300 W measured over a 250 W budget (above 95%): one step of 5% of the
     * 200 W range down, then nothing until 30 s have passed */
    struct eco_capper *c = make("threshold");
    struct eco_capper_job j[1] = {job(1, MIN_W, MAX_W, 300)};
    double lim[1];
    decide1(c, j, 1, 250, 300, 0, lim);
    assert_float_equal(lim[0], 290, 1e-9);
    j[0].limit_w = lim[0];
    decide1(c, j, 1, 250, 290, 10, lim);
    assert_float_equal(lim[0], 290, 1e-9);
    decide1(c, j, 1, 250, 290, 30, lim);
    assert_float_equal(lim[0], 280, 1e-9);
    /* 200 W measured: below 90% of 250, one step up */
    j[0].limit_w = 200;
    decide1(c, j, 1, 250, 200, 60, lim);
    assert_float_equal(lim[0], 210, 1e-9);
    assert_float_equal(eco_capper_start_setting(c, 100, 300), 300, 0);
    eco_capper_destroy(c);
}

/* The grid floor: one GPU of the linear model, 1000 s of work at full speed, so its cost is
 * T = 300000 / L s. At 300 per MWh (8.33e-8 per J) and value 4e-5 per hour, a watt over the
 * 1 s period costs 8.33e-8 x 1 x 3600 / 4e-5 = 7.5 s of completion time: the job buys power
 * up to L with 300000 / L^2 = 7.5, L = 200 W (on the 10 W grid), far under the 10 kW budget.
 * A carbon price of 1000 per t at 300 g/kWh is the same 8.33e-8 per J; no signal: 300 W. */
static void test_grid_floor(void **state)
{
    (void)state;
    const char *spec = "mpc:gain=0,dither=0,grid=21,horizon=0,weight=one,grid_floor=1,value=4e-5";
    struct {
        const char *spec;
        double price, carbon, want;
    } rows[] = {
        {spec, 300, 0, 200},
        {"mpc:gain=0,dither=0,grid=21,horizon=0,weight=one,grid_floor=1,value=4e-5,"
         "carbon_price=1000",
         0, 300, 200},
        {spec, 0, 300, 300},                                               /* no carbon price */
        {spec, 0, 0, 300},                                                 /* no signal */
        {"mpc:gain=0,dither=0,grid=21,horizon=0,weight=one", 300, 0, 300}, /* no floor */
        {"oracle:gain=0,dither=0,grid=21,horizon=0,weight=one,grid_floor=1,value=4e-5", 300, 0,
         200},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        struct eco_capper *c = make(rows[r].spec);
        struct eco_capper_job jobs[1] = {job(1, MIN_W, MAX_W, 300)};
        struct eco_rng rng;
        eco_rng_init(&rng, 1);
        double lim[1];
        struct eco_capper_view v = {.period_s = 1,
                                    .budget_w = 10000,
                                    .measured_w = NAN,
                                    .jobs = jobs,
                                    .n = 1,
                                    .grid_price_per_mwh = rows[r].price,
                                    .grid_carbon_g_per_kwh = rows[r].carbon};
        assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
        if (fabs(lim[0] - rows[r].want) > 1e-6)
            fail_msg("row %zu (%s): %g W, want %g", r, rows[r].spec, lim[0], rows[r].want);
        eco_capper_destroy(c);
    }
    struct eco_error err = {{0}};
    assert_null(eco_capper_create("mpc:grid_floor=1", &err));
    assert_non_null(strstr(err.msg, "grid_floor=1 needs value=V > 0"));
}

/* Speed that gains nothing above 240 W: the job's own choice is 240 W (ties to less power). */
static void sat(const void *ctx, double limit_w, double *power_w, double *speed)
{
    (void)ctx;
    *power_w = limit_w;
    *speed = fmin(limit_w, 240.0) / MAX_W;
}

/* eco_capper_slack_choice: for mpc and the oracle the limit a decide gives the job under a
 * budget that does not bind (its own choice: on its model for mpc, its truth for the oracle);
 * refused (0) where the split couples the jobs or moves with time. */
static void test_slack_choice(void **state)
{
    (void)state;
    struct {
        const char *spec;
        int ok;
        double want;
    } rows[] = {
        {"mpc:gain=0,dither=0,grid=21", 1, 300},
        {"mpc:gain=0,dither=0,grid=21,weight=size", 1, 300},
        {"oracle:gain=0,dither=0,grid=21", 1, 240},
        {"mpc:gain=0,dither=0,grid=21,plan=1", 0, 0},
        {"mpc:gain=0,dither=0,grid=21,grid_floor=1,value=4e-5", 0, 0},
        {"uniform:gain=0,dither=0", 0, 0},
        {"proportional:gain=0,dither=0", 0, 0},
        {"threshold:gain=0,dither=0", 0, 0},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        struct eco_capper *c = make(rows[r].spec);
        struct eco_capper_job jobs[2] = {job(2, MIN_W, MAX_W, MIN_W), job(1, MIN_W, MAX_W, MIN_W)};
        jobs[0].truth = sat;
        jobs[0].samples = 0;
        struct eco_capper_view v = {
            .period_s = 1, .budget_w = 1e6, .measured_w = NAN, .jobs = jobs, .n = 2};
        double got = -1;
        int ok = eco_capper_slack_choice(c, &v, &jobs[0], &got);
        if (ok != rows[r].ok)
            fail_msg("row %zu (%s): %d, want %d", r, rows[r].spec, ok, rows[r].ok);
        if (ok) {
            /* the decide's split under an ample budget gives the job the same limit */
            struct eco_rng rng;
            eco_rng_init(&rng, 1);
            double lim[2];
            assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
            if (fabs(got - rows[r].want) > 1e-9 || fabs(lim[0] - got) > 1e-9)
                fail_msg("row %zu (%s): choice %g W, decide %g W, want %g", r, rows[r].spec, got,
                         lim[0], rows[r].want);
        }
        eco_capper_destroy(c);
    }
    assert_int_equal(eco_capper_slack_choice(NULL, NULL, NULL, NULL), 0);
}

static void test_feedback(void **state)
{
    (void)state;
    struct eco_capper *c = make("uniform:gain=0.5,margin=0,dither=0,bound=0.2,slew=0,observer=0");
    struct eco_capper_job j[1] = {job(1, MIN_W, MAX_W, 200)};
    double lim[1];
    /* 100 W over the 250 W budget: the integral takes half of it off */
    decide1(c, j, 1, 250, 350, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -50, 1e-9);
    assert_float_equal(lim[0], 200, 1e-9);
    /* no measurement (a decide on a start): the integral stays */
    decide1(c, j, 1, 250, NAN, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -50, 1e-9);
    /* on target: it stays */
    decide1(c, j, 1, 250, 250, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -50, 1e-9);
    /* far above: bounded at 20% of the budget */
    decide1(c, j, 1, 250, 1000, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -50, 1e-9);
    /* below: it climbs */
    decide1(c, j, 1, 250, 200, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -25, 1e-9);
    assert_float_equal(lim[0], 225, 1e-9);
    /* the budget stops binding: anti-windup resets it */
    decide1(c, j, 1, 1e4, 250, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), 0, 0);
    assert_float_equal(lim[0], MAX_W, 0);
    /* a step down starts it a guard (3%) below the budget */
    struct eco_rng rng;
    eco_rng_init(&rng, 1);
    struct eco_capper_view v = {
        .budget_w = 250, .measured_w = NAN, .budget_step = -1, .jobs = j, .n = 1};
    assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
    assert_float_equal(eco_capper_feedback_w(c), -0.03 * 250, 1e-9);
    eco_capper_destroy(c);
    /* gain=0: no feedback at all */
    c = make("uniform:gain=0,dither=0,slew=0");
    decide1(c, j, 1, 250, 350, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), 0, 0);
    assert_float_equal(lim[0], 250, 1e-9);
    eco_capper_destroy(c);
}

/* The integral's anti-windup does not ring: uniform over 8 GPUs that draw 70 % of their
 * limits, under a budget whose even share (250 W) binds. The integral climbs until the share
 * reaches the maxima, and then it is held at that edge, so the limits stay at the top; a reset
 * to 0 when the split lets go (the rule before 2026-12-07) bound them again at the next period,
 * and they rang between 250 and 300 W for as long as the loop ran. */
static void test_feedback_no_ring(void **state)
{
    (void)state;
    struct eco_capper *c = make("uniform:gain=0.3,margin=0,dither=0,bound=0.5,slew=0,observer=0");
    struct eco_capper_job j[2] = {job(4, MIN_W, MAX_W, MIN_W), job(4, MIN_W, MAX_W, MIN_W)};
    double lim[2] = {MIN_W, MIN_W};
    struct eco_rng rng;
    eco_rng_init(&rng, 1);
    int below = 0;
    for (int p = 0; p < 200; p++) {
        struct eco_capper_view v = {.now_s = p,
                                    .period_s = 1,
                                    .budget_w = 2000,
                                    .measured_w = 0.7 * gpu_total(j, 2, lim),
                                    .jobs = j,
                                    .n = 2};
        assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
        for (size_t i = 0; i < 2; i++) {
            j[i].limit_w = lim[i];
            below += p >= 50 && lim[i] < MAX_W;
        }
    }
    assert_int_equal(below, 0);
    /* held at the edge: the share of 2000 W + the integral is the maxima's sum */
    assert_float_equal(eco_capper_feedback_w(c), 8 * MAX_W - 2000, 1e-6);
    assert_false(eco_capper_feedback_at_bound(c, 2000));
    eco_capper_destroy(c);
    /* with a bound below that edge the integral stops at its bound, which the simulator's
     * settling reads (nothing left to raise the draw) */
    c = make("uniform:gain=0.3,margin=0,dither=0,bound=0.1,slew=0,observer=0");
    for (int p = 0; p < 200; p++) {
        struct eco_capper_view v = {
            .budget_w = 2000, .measured_w = 0.7 * gpu_total(j, 2, lim), .jobs = j, .n = 2};
        assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
    }
    assert_true(eco_capper_feedback_at_bound(c, 2000));
    assert_true(lim[0] < MAX_W);
    eco_capper_destroy(c);
    /* the observer is never "at its bound" */
    c = make("mpc");
    assert_false(eco_capper_feedback_at_bound(c, 2000));
    eco_capper_destroy(c);
}

/* The disturbance observer (observer=1, mpc's and the oracle's default; uniform here, whose
 * split is exact for the test model where power equals the limit): the jobs get the budget less the
 * smoothed bias of measured over predicted; a job still in its early samples counts at its
 * measured draw, not its prior. */
static void test_observer(void **state)
{
    (void)state;
    struct eco_capper *c = make("uniform:gain=0.5,margin=0,dither=0,slew=0,bound=0.5,observer=1");
    struct eco_capper_job j[2] = {job(1, MIN_W, MAX_W, 200), job(1, MIN_W, MAX_W, 200)};
    double lim[2];
    /* 260 W measured where the model predicts 200: a 60 W bias (its first sample), so the
     * job gets 250 - 60 = 190 */
    decide1(c, j, 1, 250, 260, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -60, 1e-9);
    assert_float_equal(lim[0], 190, 1e-9);
    /* at 190 it measures 250: the bias is still 60, the estimate stays, nothing winds up */
    j[0].limit_w = 190;
    decide1(c, j, 1, 250, 250, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -60, 1e-9);
    assert_float_equal(lim[0], 190, 1e-9);
    /* a bias of 100: the estimate moves half way, 60 + 0.5 x 40 = 80 */
    decide1(c, j, 1, 250, 290, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -80, 1e-9);
    /* far above: bounded at 50% of the budget */
    decide1(c, j, 1, 250, 2000, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), -125, 1e-9);
    eco_capper_destroy(c);
    /* A new job (no samples) drawing 50 W at 200 where its prior says 200: counted at 50, the
     * bias is 250 - (200 + 50) = 0 and 300 W are split evenly; with its prior the bias would
     * be -150 and 225 W each would overshoot once its model learns. */
    c = make("uniform:gain=0.5,margin=0,dither=0,slew=0,observer=1");
    j[1].samples = 0;
    j[1].measured_w = 50;
    j[0].limit_w = 200;
    decide1(c, j, 2, 300, 250, 0, lim);
    assert_float_equal(eco_capper_feedback_w(c), 0, 1e-9);
    assert_float_equal(lim[0], 150, 1e-9);
    assert_float_equal(lim[1], 150, 1e-9);
    eco_capper_destroy(c);
}

/* The slew bound (slew=0.1, the default): a limit rises by at most 10% of its range per
 * period and falls freely; mpc's allocator gives the power a bounded job cannot take to the
 * others. Grid of 26 points over [100, 300]: 8 W steps. */
static void test_slew(void **state)
{
    (void)state;
    double lim[2];
    /* mpc, the budget does not bind: from 150 at most 170, the grid point 164 */
    struct eco_capper *c = make("mpc:gain=0,dither=0");
    struct eco_capper_job j[2] = {job(1, MIN_W, MAX_W, 150), job(1, MIN_W, MAX_W, 300)};
    decide1(c, j, 1, 1e4, NAN, 0, lim);
    assert_float_equal(lim[0], 164, 1e-9);
    /* two equal jobs under 500 W split 250 / 250 unbounded; with A bounded at 164 the other
     * keeps its 300 */
    decide1(c, j, 2, 500, NAN, 0, lim);
    assert_float_equal(lim[0], 164, 1e-9);
    assert_float_equal(lim[1], 300, 1e-9);
    /* lowering is not bounded: from 300 to the grid point under 150 at once */
    j[0].limit_w = 300;
    decide1(c, j, 1, 150, NAN, 0, lim);
    assert_float_equal(lim[0], 148, 1e-9);
    eco_capper_destroy(c);
    c = make("mpc:gain=0,dither=0,slew=0");
    j[0].limit_w = 150;
    decide1(c, j, 2, 500, NAN, 0, lim);
    assert_float_equal(lim[0], 252, 1e-9); /* the grid point nearest the even split */
    eco_capper_destroy(c);
    /* uniform, a split without the bound: its 300 is clamped to 150 + 20 */
    c = make("uniform:gain=0,dither=0");
    decide1(c, j, 1, 1e4, NAN, 0, lim);
    assert_float_equal(lim[0], 170, 1e-9);
    eco_capper_destroy(c);
}

static void test_dither(void **state)
{
    (void)state;
    const char *specs[] = {"mpc", "uniform", "proportional"};
    for (size_t s = 0; s < 3; s++) {
        struct eco_capper *c = make(specs[s]);
        char quiet[64];
        snprintf(quiet, sizeof quiet, "%s:dither=0", specs[s]);
        struct eco_capper *q = make(quiet);
        struct eco_capper_job j[4];
        for (size_t i = 0; i < 4; i++) {
            j[i] = job(1, MIN_W, MAX_W, 200);
            j[i].samples = i < 2 ? 0 : 100; /* two new jobs, two seasoned */
        }
        double a[4], b[4];
        decide1(c, j, 4, 700, NAN, 0, a);
        decide1(q, j, 4, 700, NAN, 0, b);
        int moved = 0;
        for (size_t i = 0; i < 4; i++) {
            assert_true(a[i] >= MIN_W && a[i] <= MAX_W);
            /* downward only, up to twice the dither's share of the range */
            assert_true(a[i] <= b[i] && b[i] - a[i] <= 0.30 * (MAX_W - MIN_W) + 1e-9);
            if (i >= 2)
                assert_float_equal(a[i], b[i], 0); /* seasoned: no dithering */
            else
                moved += a[i] != b[i];
        }
        assert_true(moved > 0);
        eco_capper_destroy(c);
        eco_capper_destroy(q);
    }
}

static void test_admission(void **state)
{
    (void)state;
    struct eco_capper *dl = make("mpc:admit=deadline,near=2");
    struct eco_capper *d0 = make("mpc:admit=deadline"); /* near=0: no urgent bypass */
    struct eco_capper *mn = make("mpc");
    /* Running: 1 GPU, 100 s of work, 120 s to its deadline: it needs speed 0.833, the grid
     * limit 252 W (grid of 26 over [100, 300]), 152 W above its minimum. */
    struct eco_capper_job run[1] = {job(1, MIN_W, MAX_W, 200)};
    run[0].cap.remaining_s = 100;
    run[0].cap.slack_s = 120;
    run[0].deadline_s = 120;
    struct eco_capper_view v = {.now_s = 0, .budget_w = 300, .jobs = run, .n = 1};
    struct eco_capper_candidate far = {
        .cap = {.gpus = 1,
                .min_limit_w = MIN_W,
                .max_limit_w = MAX_W,
                .remaining_s = 100,
                .weight = 1,
                .slack_s = -1,
                .predict = lin},
        .min_w = 100,
        .deadline_s = 1e6,
    };
    struct {
        struct eco_capper *c;
        double budget_w, committed_w, cand_deadline_s, run_slack_s;
        int want;
    } rows[] = {
        {mn, 300, 100, 1e6, 120, 1},   /* min: 100 + 100 fit in 300 */
        {mn, 150, 100, 1e6, 120, 0},   /* min: 200 do not fit in 150 */
        {NULL, 300, 100, 1e6, 120, 1}, /* no instance: min */
        {dl, 300, 100, 1e6, 120, 0},   /* the running job's 152 W would not fit next to it */
        {dl, 400, 100, 1e6, 120, 1},   /* they do */
        {dl, 300, 100, -1, 120, 0},    /* a candidate without deadline waits too */
        {dl, 300, 100, 150, 120, 1},   /* its own deadline is near (150 <= 2 x 100 s) */
        {dl, 150, 100, 150, 120, 0},   /* near, but its minimum does not fit */
        {d0, 300, 100, 150, 120, 0},   /* the default near=0: the near one waits too */
        {d0, 300, 100, 1e6, 50, 1},    /* and is admitted beside a lost cause */
        {dl, 300, 100, 1e6, 50, 1},    /* the running job is a lost cause: holds no extra */
        {dl, 300, 100, 1e6, -1, 1},    /* the running job has no deadline */
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        v.budget_w = rows[r].budget_w;
        run[0].cap.slack_s = rows[r].run_slack_s;
        far.deadline_s = rows[r].cand_deadline_s;
        int got = eco_capper_admit(rows[r].c, &v, rows[r].committed_w, &far);
        if (got != rows[r].want)
            fail_msg("row %zu: admit %d, want %d", r, got, rows[r].want);
    }
    /* The epoch: the running jobs' needs are summed once per epoch. With the running job a
     * lost cause at epoch 7 the candidate fits; the same epoch with the job able to make it
     * reuses that sum (the caller promised the same jobs); a new epoch sums again. */
    v.budget_w = 300;
    far.deadline_s = 1e6;
    run[0].cap.slack_s = 50;
    v.epoch = 7;
    assert_int_equal(eco_capper_admit(d0, &v, 100, &far), 1);
    assert_true(eco_capper_admit_cached(d0, 7));
    assert_false(eco_capper_admit_cached(d0, 8));
    assert_false(eco_capper_admit_cached(d0, 0));
    run[0].cap.slack_s = 120;
    assert_int_equal(eco_capper_admit(d0, &v, 100, &far), 1);
    v.epoch = 8;
    assert_int_equal(eco_capper_admit(d0, &v, 100, &far), 0);
    v.epoch = 0;
    assert_int_equal(eco_capper_admit(d0, &v, 100, &far), 0);
    assert_false(eco_capper_admit_cached(mn, 8)); /* min admission sums nothing */
    eco_capper_destroy(dl);
    eco_capper_destroy(d0);
    eco_capper_destroy(mn);
}

static void test_params(void **state)
{
    (void)state;
    struct {
        const char *spec;
        const char *names; /* in the error, NULL: valid */
    } rows[] = {
        {"mpc", NULL},
        {"mpc:", NULL},
        {"mpc:gain=0.5,dither=0,grid=40,penalty=3,horizon=0,admit=deadline,near=1", NULL},
        {"threshold:rebalance=10,high=0.97,low=0.9,step=0.1", NULL},
        {"proportional:admit=min", NULL},
        {"nosuch", "nosuch"},
        {"mpc:bogus=1", "bogus"},
        {"uniform:grid=10", "grid"},       /* grid is the allocator's, not uniform's */
        {"mpc:rebalance=10", "rebalance"}, /* the threshold's */
        {"mpc:gain=abc", "gain"},
        {"mpc:gain=3", "gain"}, /* out of [0, 2] */
        {"mpc:grid=1", "grid"},
        {"mpc:grid=2.5", "grid"},
        {"mpc:admit=maybe", "admit"},
        {"mpc:gain", "gain"},           /* not key=value */
        {"mpc:gain=0.1,", "gain=0.1,"}, /* trailing comma */
        {"threshold:low=0.99,high=0.9", "low"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        struct eco_error err = {{0}};
        struct eco_capper *c = eco_capper_create(rows[r].spec, &err);
        if (!rows[r].names) {
            if (!c)
                fail_msg("%s: %s", rows[r].spec, err.msg);
            eco_capper_destroy(c);
            continue;
        }
        if (c)
            fail_msg("%s: accepted", rows[r].spec);
        if (!strstr(err.msg, rows[r].names))
            fail_msg("%s: error '%s' does not name '%s'", rows[r].spec, err.msg, rows[r].names);
    }
    eco_capper_destroy(NULL);
}

/* Clock levels: every setting lands on one of the job's levels. */
/* Power per GPU equals the limit, speed (limit / MAX_W)^e with the exponent e at ctx. */
static void concave(const void *ctx, double limit_w, double *power_w, double *speed)
{
    *power_w = limit_w;
    *speed = pow(limit_w / MAX_W, *(const double *)ctx);
}

/* Sum of remaining / speed over the jobs at limits lim (the cost mpc minimises, weight 1). */
static double job_cost(const struct eco_capper_job *j, size_t n, const double *lim)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double p, sp;
        j[i].cap.predict(j[i].cap.ctx, lim[i], &p, &sp);
        s += j[i].cap.remaining_s / sp;
    }
    return s;
}

static void decide_view(struct eco_capper *c, struct eco_capper_job *jobs, size_t n,
                        double budget_w, double *lim)
{
    struct eco_rng rng;
    eco_rng_init(&rng, 1);
    struct eco_capper_view v = {
        .now_s = 0, .period_s = 1, .budget_w = budget_w, .measured_w = NAN, .jobs = jobs, .n = n};
    assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
}

/* Steady jobs (docs/policies/powercap.md, "Steady jobs"): once the limits have settled under
 * full decides, the curves of one capped job in ten move a little and the others are marked
 * steady: most keep their settings while the changed ones (and the kept ones the price left)
 * are split over what they leave, at a cost within 0.5 % of the full split's and within the
 * budget; when a quarter of the jobs end, the freed power moves the price out of the kept
 * jobs' intervals and the answer is the full split's, bit for bit; steady=0 never keeps a
 * job. */
static void test_steady(void **state)
{
    (void)state;
    enum { N = 200 };
    static struct eco_capper_job jobs[N];
    static double expo[N];
    for (size_t i = 0; i < N; i++) {
        expo[i] = 0.2 + 0.6 * (double)((i * 17) % N) / N; /* curves from flat to steep */
        jobs[i] = job(1, MIN_W, MAX_W, MIN_W);
        jobs[i].id = (uint32_t)i;
        jobs[i].cap.remaining_s = 3600;
        jobs[i].cap.predict = jobs[i].truth = concave;
        jobs[i].cap.ctx = jobs[i].truth_ctx = &expo[i];
    }
    struct eco_capper *c1 = make("mpc"), *c0 = make("mpc:steady=0");
    double budget = 200.0 * N;
    static double a[N], b[N], prev[N];
    int same = 0;
    for (int r = 0; r < 40 && !same; r++) { /* full decides (nothing steady) until settled */
        decide_view(c1, jobs, N, budget, a);
        decide_view(c0, jobs, N, budget, b);
        assert_memory_equal(a, b, sizeof a); /* no job steady: both split every job */
        same = 1;
        for (size_t i = 0; i < N; i++) {
            same &= a[i] == jobs[i].limit_w;
            jobs[i].limit_w = a[i];
            jobs[i].cap.remaining_s -= 1;
        }
    }
    assert_true(same);
    int below = 0, changed = 0;
    for (size_t i = 0; i < N; i++) {
        below += a[i] < MAX_W;
        prev[i] = a[i];
        /* the changed jobs: one capped job in ten, its curve steeper (a model that moved) */
        jobs[i].steady = !(i % 10 == 0 && a[i] < MAX_W && a[i] > MIN_W);
        if (!jobs[i].steady) {
            expo[i] *= 1.02;
            changed++;
        }
    }
    assert_true(below > N / 2 && changed >= 10); /* the budget binds */
    decide_view(c1, jobs, N, budget, a);
    decide_view(c0, jobs, N, budget, b);
    size_t kept = 0;
    for (size_t i = 0; i < N; i++)
        kept += jobs[i].steady && a[i] == prev[i];
    /* the kept jobs whose price interval the changed ones' split left hold their settings
     * (those it did not joined the split) */
    assert_true(kept >= N / 2);
    assert_int_equal(eco_capper_steady_decides(c1), 1); /* the steady split stood */
    assert_int_equal(eco_capper_steady_decides(c0), 0);
    assert_true(gpu_total(jobs, N, a) <= budget * (1 + 1e-9));
    double ca = job_cost(jobs, N, a), cb = job_cost(jobs, N, b);
    assert_true(fabs(ca - cb) <= 0.005 * cb);
    /* a quarter of the jobs end: the same budget over the others, nine in ten of them steady;
     * the power the ended jobs leave lowers the price out of every kept job's interval */
    for (size_t i = 0; i < N; i++) {
        jobs[i].limit_w = a[i];
        jobs[i].steady = i % 10 != 5;
    }
    struct eco_capper *c2 = make("mpc");
    static double a2[N], b2[N];
    decide_view(c1, jobs + N / 4, N - N / 4, budget, a2);
    decide_view(c2, jobs + N / 4, N - N / 4, budget, b2); /* no memo: a full split */
    assert_memory_equal(a2, b2, (N - N / 4) * sizeof *a2);
    assert_int_equal(eco_capper_steady_decides(c1), 1); /* it did not stand */
    eco_capper_destroy(c0);
    eco_capper_destroy(c1);
    eco_capper_destroy(c2);
}

static void test_levels(void **state)
{
    (void)state;
    static const double levels[] = {100, 130, 160, 190, 220, 250, 280, 300};
    const struct eco_capper_ops *const *all = eco_capper_all();
    for (size_t k = 0; all[k]; k++) {
        struct eco_capper *c = make(all[k]->name);
        struct eco_capper_job j[2] = {job(1, MIN_W, MAX_W, 160), job(2, MIN_W, MAX_W, 190)};
        for (size_t i = 0; i < 2; i++) {
            j[i].cap.levels = levels;
            j[i].cap.n_levels = 8;
            j[i].samples = 0; /* dithered too */
        }
        struct eco_rng rng;
        eco_rng_init(&rng, 3);
        struct eco_capper_view v = {
            .budget_w = 600, .measured_w = 650, .clock = 1, .jobs = j, .n = 2};
        double lim[2];
        assert_int_equal(eco_capper_decide(c, &v, &rng, lim), 0);
        for (size_t i = 0; i < 2; i++) {
            int on = 0;
            for (size_t l = 0; l < 8; l++)
                on |= lim[i] == levels[l];
            if (!on)
                fail_msg("%s: %g is not a level", all[k]->name, lim[i]);
        }
        eco_capper_destroy(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_table), cmocka_unit_test(test_hand_splits),
        cmocka_unit_test(test_grid_floor),     cmocka_unit_test(test_slack_choice),
        cmocka_unit_test(test_feedback),       cmocka_unit_test(test_feedback_no_ring),
        cmocka_unit_test(test_observer),       cmocka_unit_test(test_slew),
        cmocka_unit_test(test_dither),         cmocka_unit_test(test_admission),
        cmocka_unit_test(test_params),         cmocka_unit_test(test_levels),
        cmocka_unit_test(test_steady),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
