/* SPDX-License-Identifier: MIT */
/* Carbon policies and forecasts on small hand-computed tables (ecosched/carbon.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ecosched/carbon.h"
#include "test_util.h"

#define H 3600.0
/* 2022-01-01T00:00:00Z */
#define T0 1640995200.0

/* An hourly carbon signal of n values from T0. */
static void hourly(struct eco_signal *s, const double *v, size_t n)
{
    double t[64];
    for (size_t i = 0; i <= n; i++)
        t[i] = T0 + (double)i * H;
    assert_int_equal(eco_signal_build(s, ECO_SIGNAL_CARBON, t, v, n, NULL), 0);
}

/* Intensity by hour: 300 for hours 0-2, 100 for 3-4, 200 for 5-7, 50 for 8. */
static const double day[] = {300, 300, 300, 100, 100, 200, 200, 200, 50, 300, 300, 300};

static void test_forecasts(void **state)
{
    (void)state;
    struct eco_signal s;
    struct eco_forecast f;
    hourly(&s, day, 12);
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_ORACLE, 0, &s, 1, NULL), 0);
    assert_near(eco_forecast_mean(&f, T0, T0 + 2 * H, T0 + 4 * H), 200, 1e-9);
    eco_forecast_fini(&f);
    /* noisy with no error is the truth; with error, the past is still measured exactly */
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_NOISY, 0, &s, 1, NULL), 0);
    assert_near(eco_forecast_mean(&f, T0, T0 + 3 * H, T0 + 5 * H), 100, 1e-9);
    eco_forecast_fini(&f);
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_NOISY, 0.05, &s, 7, NULL), 0);
    double v = eco_forecast_value(&f, T0, T0 + 3 * H);
    assert_true(v != 100 && fabs(v - 100) < 30);
    assert_near(eco_forecast_mean(&f, T0 + 6 * H, T0 + 3 * H, T0 + 5 * H), 100, 1e-9);
    eco_forecast_fini(&f);
    eco_signal_free(&s);

    /* persist: made at hour 24 + 1.5, the next hours repeat the same hours of yesterday */
    double two[48];
    for (int i = 0; i < 48; i++)
        two[i] = i < 24 ? 10 * i : 999;
    double t[49];
    for (int i = 0; i <= 48; i++)
        t[i] = T0 + i * H;
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_CARBON, t, two, 48, NULL), 0);
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_PERSIST, 0, &s, 1, NULL), 0);
    double now = T0 + 25.5 * H; /* profile: hours 1..24 (24 is measured: 999) */
    assert_near(eco_forecast_value(&f, now, T0 + 26 * H), 20, 1e-9);  /* yesterday's hour 2 */
    assert_near(eco_forecast_value(&f, now, T0 + 48 * H), 999, 1e-9); /* hour 24: measured */
    assert_near(eco_forecast_value(&f, now, T0 + 49 * H), 10, 1e-9);  /* hour 1 again */
    /* mean over [26 h, 28 h): hours 2 and 3 of yesterday, 20 and 30 */
    assert_near(eco_forecast_mean(&f, now, T0 + 26 * H, T0 + 28 * H), 25, 1e-9);
    /* the past half-hour is measured (999 at hour 25), the future half forecast (10) */
    assert_near(eco_forecast_mean(&f, now, T0 + 25 * H, T0 + 26 * H), (999 + 10) / 2.0, 1e-9);
    eco_forecast_fini(&f);
    eco_signal_free(&s);

    enum eco_forecast_kind k;
    double sigma;
    struct eco_error err;
    assert_int_equal(eco_forecast_parse("noisy:0.1", &k, &sigma, &err), 0);
    assert_int_equal(k, ECO_FORECAST_NOISY);
    assert_near(sigma, 0.1, 0);
    assert_int_equal(eco_forecast_parse("noisy:2", &k, &sigma, &err), -EINVAL);
    assert_int_equal(eco_forecast_parse("psychic", &k, &sigma, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "known: noisy[:SIGMA], persist, oracle"));
}

/* A view at simulated now (simulated 0 = T0) with the oracle forecast of s. */
static struct eco_carbon_view view_at(struct eco_forecast *f, double now, uint64_t gpus)
{
    return (struct eco_carbon_view){
        .now_s = now, .epoch0_s = T0, .forecast = f, .step_s = H, .cluster_gpus = gpus};
}

static void test_candidates(void **state)
{
    (void)state;
    struct eco_carbon_view v = view_at(NULL, 0.5 * H, 8);
    struct eco_carbon_job j = {.submit_s = 0.5 * H, .run_s = H, .latest_start_s = 3.25 * H};
    double c[16];
    size_t n = eco_carbon_candidates(&v, &j, c, 16);
    assert_int_equal(n, 5); /* now, 1 h, 2 h, 3 h, the latest start */
    assert_near(c[0], 0.5 * H, 0);
    assert_near(c[1], 1 * H, 0);
    assert_near(c[3], 3 * H, 0);
    assert_near(c[4], 3.25 * H, 0);
    j.latest_start_s = j.submit_s;
    assert_int_equal(eco_carbon_candidates(&v, &j, c, 16), 1);
}

static struct eco_carbon *make(const char *spec)
{
    const char *params;
    const struct eco_carbon_ops *ops = eco_carbon_find(spec, &params);
    assert_non_null(ops);
    struct eco_carbon *p = ops->create(NULL, params, NULL);
    assert_non_null(p);
    return p;
}

static void test_policies(void **state)
{
    (void)state;
    struct eco_signal s;
    struct eco_forecast f;
    hourly(&s, day, 12);
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_ORACLE, 0, &s, 1, NULL), 0);
    const char *params;
    struct eco_carbon_view v = view_at(&f, 0, 8);

    /* lwa: a 2-hour job with 8 h of slack: its run [3 h, 5 h) at 100 is the cleanest (the
     * hour at 50 is alone: [8 h, 10 h) averages 175). */
    const struct eco_carbon_ops *lwa = eco_carbon_find("lwa", &params);
    struct eco_carbon *p = make("lwa");
    struct eco_carbon_job j = {.submit_s = 0, .run_s = 2 * H, .latest_start_s = 8 * H, .gpus = 8};
    assert_near(lwa->release(p, &v, &j), 3 * H, 0);
    /* a 1-hour job: the hour at 50 */
    j.run_s = H;
    assert_near(lwa->release(p, &v, &j), 8 * H, 0);
    /* a 4-hour flexibility window: the hour at 50 (8 h) is out of it; 3 h at 100 is in */
    struct eco_carbon *p4 = make("lwa:4");
    assert_near(lwa->release(p4, &v, &j), 3 * H, 0);
    lwa->destroy(p4);
    /* no slack: now */
    j.latest_start_s = 0;
    assert_near(lwa->release(p, &v, &j), 0, 0);
    lwa->destroy(p);

    /* threshold:0 over the window [0, 9 h) of a 1-hour job with 8 h slack: the minimum, 50,
     * first reached at 8 h; threshold:50: the median of the 9 hours (200) first at 3 h. */
    const struct eco_carbon_ops *thr = eco_carbon_find("threshold", &params);
    p = make("threshold:0");
    j = (struct eco_carbon_job){.submit_s = 0, .run_s = H, .latest_start_s = 8 * H, .gpus = 1};
    assert_near(thr->release(p, &v, &j), 8 * H, 0);
    thr->destroy(p);
    p = make("threshold:50");
    assert_near(thr->release(p, &v, &j), 3 * H, 0);
    thr->destroy(p);

    /* shift with no price on delay and booking up to all 8 GPUs (lambda=0,util=1), three
     * 2-hour 8-GPU jobs with 8 h of slack. The first takes [3 h, 5 h)
     * at 100. The second may not overlap it: of the starts left, [7 h, 9 h) averages
     * (200 + 50) / 2 = 125, the cleanest. The third may overlap neither: 0 h, 1 h (300) and
     * 5 h (200) are left, so 5 h. */
    const struct eco_carbon_ops *shift = eco_carbon_find("shift", &params);
    p = make("shift:lambda=0,util=1");
    j = (struct eco_carbon_job){.submit_s = 0, .run_s = 2 * H, .latest_start_s = 8 * H, .gpus = 8};
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    assert_near(shift->release(p, &v, &j), 7 * H, 0);
    assert_near(shift->release(p, &v, &j), 5 * H, 0);
    /* capacity-blind lwa would put all three at 3 h */
    shift->destroy(p);

    /* The price on delay: a 1-hour 8-GPU job is 2.4 kWh at 0.3 kW per GPU, so its carbon plus
     * lambda x hours waited is, now (300): 0.72 kg; at 3 h (100): 0.24 + 3 lambda; at 8 h (50):
     * 0.12 + 8 lambda. lambda 0.1: 0.72, 0.54, 0.92: 3 h. lambda 0.2: 0.72, 0.84, 1.72: now.
     * lambda 0: 8 h, lwa's choice. */
    j = (struct eco_carbon_job){.submit_s = 0, .run_s = H, .latest_start_s = 8 * H, .gpus = 8};
    p = make("shift:lambda=0.1");
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    shift->destroy(p);
    p = make("shift:lambda=0.2");
    assert_near(shift->release(p, &v, &j), 0, 0);
    shift->destroy(p);
    p = make("shift:lambda=0");
    assert_near(shift->release(p, &v, &j), 8 * H, 0); /* lwa's choice */
    shift->destroy(p);

    /* The relative price (rel=R): an hour of delay costs R x the job's own carbon now, 0.72 kg
     * for the 8-GPU job: rel 0.1 gives 0.72, 0.24 + 0.216 = 0.456 and 0.12 + 0.576 = 0.696: 3 h;
     * rel 0.25: 0.72, 0.78, 1.56: now; rel 0.02: 0.72, 0.283, 0.178: 8 h. The same job on 1 GPU
     * (0.09 kg now) makes the same choices (the price scales with the job), where the absolute
     * lambda 0.1 keeps it from waiting at all (0.09 < 0.03 + 0.3). */
    const double rels[] = {0.1, 0.25, 0.02}, starts[] = {3 * H, 0, 8 * H};
    for (uint32_t g = 1; g <= 8; g += 7)
        for (size_t k = 0; k < 3; k++) {
            char spec[64];
            snprintf(spec, sizeof spec, "shift:own=%g", rels[k]);
            p = make(spec);
            j.gpus = g;
            assert_near(shift->release(p, &v, &j), starts[k], 0);
            shift->destroy(p);
        }
    j.gpus = 1;
    p = make("shift:lambda=0.1");
    assert_near(shift->release(p, &v, &j), 0, 0);
    shift->destroy(p);
    j.gpus = 8;

    /* rel=R (the default's kind): R x the mean of the jobs' carbon so far. rel 0.1 and the 8-GPU
     * job first: the mean is its own 0.72 kg, so 3 h as above. Then the 1-GPU job (0.09 kg):
     * the mean is 0.405 kg, the price 0.0405 kg/h: now 0.09, 3 h 0.03 + 0.1215, 8 h 0.015 +
     * 0.324: now (own=0.1 would wait 3 h). Then the 8-GPU job again: mean 0.51, price 0.051:
     * 0.72, 0.24 + 0.153, 0.12 + 0.408: 3 h. A fresh instance and the 1-GPU job alone: 3 h. */
    p = make("shift:rel=0.1");
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    j.gpus = 1;
    assert_near(shift->release(p, &v, &j), 0, 0);
    j.gpus = 8;
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    shift->destroy(p);
    p = make("shift:rel=0.1");
    j.gpus = 1;
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    shift->destroy(p);
    j.gpus = 8;
    /* rate=R (the default's kind): R x the mean carbon per hour of run; for these 1-hour jobs
     * the same as rel=R, so the same choices. */
    p = make("shift:rate=0.1");
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    j.gpus = 1;
    assert_near(shift->release(p, &v, &j), 0, 0);
    j.gpus = 8;
    assert_near(shift->release(p, &v, &j), 3 * H, 0);
    shift->destroy(p);

    struct eco_error err;
    assert_null(eco_carbon_find("lwa", &params)->create(NULL, "-3", &err));
    assert_non_null(strstr(err.msg, "lwa:HOURS"));
    assert_null(thr->create(NULL, "120", &err));
    assert_non_null(strstr(err.msg, "not a percentile"));
    assert_null(shift->create(NULL, "0", &err));
    assert_non_null(strstr(err.msg, "not KEY=VALUE"));
    assert_null(shift->create(NULL, "lambda=-1", &err));
    assert_null(shift->create(NULL, "own=-0.1", &err));
    assert_non_null(strstr(err.msg, "own: -0.1 is not a share"));
    assert_null(shift->create(NULL, "rel=0.1,own=0.1", &err));
    assert_non_null(strstr(err.msg, "not two"));
    assert_null(shift->create(NULL, "rate=0.1,lambda=1", &err));
    assert_non_null(strstr(err.msg, "not both"));
    assert_null(shift->create(NULL, "rel=0.1,lambda=1", &err));
    assert_non_null(strstr(err.msg, "not both"));
    assert_null(shift->create(NULL, "rel=x", &err));
    assert_non_null(strstr(err.msg, "not a number"));
    assert_null(shift->create(NULL, "util=2", &err));
    assert_null(shift->create(NULL, "speed=2", &err));
    assert_non_null(strstr(err.msg, "unknown key 'speed'"));
    assert_null(eco_carbon_find("psychic", &params));
    eco_forecast_fini(&f);
    eco_signal_free(&s);
}

/* Interrupting shifting: the lowest pieces that add up to the run, suspensions' cost
 * included, and shift's choice between them and one run. */
static void test_interrupt(void **state)
{
    (void)state;
    struct eco_signal s;
    struct eco_forecast f;
    hourly(&s, day, 12);
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_ORACLE, 0, &s, 1, NULL), 0);
    struct eco_carbon_view v = view_at(&f, 0, 8);
    struct eco_carbon_seg sg[ECO_CARBON_MAX_SEGS];
    /* A 3-hour job that may start by 6 h: window [0, 9 h). The cheapest hours are 8 (50), 3
     * and 4 (100): runs [3 h, 5 h) and [8 h, 9 h), 250 g/kWh x hour. */
    struct eco_carbon_job j = {.submit_s = 0, .run_s = 3 * H, .latest_start_s = 6 * H, .gpus = 8};
    double score;
    assert_int_equal(eco_carbon_lowest_runs(&v, &j, sg, ECO_CARBON_MAX_SEGS, &score), 2);
    assert_near(sg[0].start_s, 3 * H, 0);
    assert_near(sg[0].end_s, 5 * H, 0);
    assert_near(sg[1].start_s, 8 * H, 0);
    assert_near(sg[1].end_s, 9 * H, 0);
    assert_near(score, 250 * H, 1e-6);
    /* A suspension costing half an hour: half of hour 5 (200) is added, after hour 4. */
    j.suspend_s = 0.5 * H;
    assert_int_equal(eco_carbon_lowest_runs(&v, &j, sg, ECO_CARBON_MAX_SEGS, &score), 2);
    assert_near(sg[0].end_s, 5.5 * H, 0);
    assert_near(sg[1].start_s, 8 * H, 0);
    assert_near(score, 350 * H, 1e-6);
    /* Out of room: one run left, it goes on through. */
    assert_int_equal(eco_carbon_lowest_runs(&v, &j, sg, 1, NULL), 1);
    assert_near(sg[0].start_s, 3 * H, 0);
    assert_near(sg[0].end_s, 9 * H, 0);
    /* lwa-int follows it; release is its first run's start */
    const char *params;
    const struct eco_carbon_ops *li = eco_carbon_find("lwa-int", &params);
    assert_non_null(li);
    struct eco_carbon *p = make("lwa-int");
    j.suspend_s = 0;
    assert_int_equal(li->plan(p, &v, &j, sg, ECO_CARBON_MAX_SEGS), 2);
    assert_near(li->release(p, &v, &j), 3 * H, 0);
    li->destroy(p);
    /* shift:interrupt=1. lambda 0.1: the two runs, 0.6 kg (8 x 0.3 kW x 250 g/kWh x h) + 0.1 x
     * 6 h late = 1.2, beat one run at 3 h, 0.96 kg + 0.3 = 1.26. lambda 0.5: one run at 0
     * (2.16 kg) beats them (0.6 + 3). interrupt=0 never splits. */
    const struct eco_carbon_ops *sh = eco_carbon_find("shift", &params);
    p = make("shift:lambda=0.1,interrupt=1");
    assert_true(sh->interrupts(p));
    assert_int_equal(sh->plan(p, &v, &j, sg, ECO_CARBON_MAX_SEGS), 2);
    assert_near(sg[0].start_s, 3 * H, 0);
    sh->destroy(p);
    p = make("shift:lambda=0.5,interrupt=1");
    assert_int_equal(sh->plan(p, &v, &j, sg, ECO_CARBON_MAX_SEGS), 1);
    assert_near(sg[0].start_s, 0, 0);
    sh->destroy(p);
    p = make("shift:lambda=0");
    assert_false(sh->interrupts(p));
    assert_int_equal(sh->plan(p, &v, &j, sg, ECO_CARBON_MAX_SEGS), 1);
    assert_near(sg[0].start_s, 3 * H, 0);
    sh->destroy(p);
    struct eco_error err;
    assert_null(sh->create(NULL, "interrupt=2", &err));
    assert_non_null(strstr(err.msg, "interrupt: 2 is not 0 or 1"));
    eco_forecast_fini(&f);
    eco_signal_free(&s);
}

/* The peak resident memory (bytes) a forked child adds when it decides one 8-GPU job of
 * shift:lambda=0,util=1 with latest start `latest` (simulated s), the child's release in
 * *out (through a pipe); aborts the test when the child fails (a sanitizer report). */
static long child_growth(struct eco_carbon_view *v, double latest, double *out)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct eco_carbon *p = make("shift:lambda=0,util=1");
        struct eco_carbon_job j = {.run_s = 2 * H, .latest_start_s = latest, .gpus = 8};
        double r = eco_carbon_find("shift", &(const char *){0})->release(p, v, &j);
        eco_carbon_find("shift", &(const char *){0})->destroy(p);
        _exit(write(fd[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(read(fd[0], out, sizeof *out), (ssize_t)sizeof *out);
    close(fd[0]);
    struct rusage ch;
    getrusage(RUSAGE_CHILDREN, &ch);
    return (ch.ru_maxrss - self.ru_maxrss) * 1024L; /* ru_maxrss is in KiB on Linux */
}

/* A slack far beyond any the edges accept (finding 1 of issue 28: powerd took 5.6 GB for a
 * job with 30000000 days of slack, and UBSan reported inf converted to size_t at 1e300 days):
 * shift's booking covers a bounded horizon ahead of now, so such a job costs the same memory
 * as a short one, and its release stays within [now, latest start]. */
static void test_shift_huge_slack(void **state)
{
    (void)state;
    struct eco_signal s;
    struct eco_forecast f;
    hourly(&s, day, 12);
    assert_int_equal(eco_forecast_init(&f, ECO_FORECAST_ORACLE, 0, &s, 1, NULL), 0);
    struct eco_carbon_view v = view_at(&f, 0, 8);
    static const double slack[] = {1e11, 1e300 * 1e300 /* inf */};
    for (size_t i = 0; i < sizeof slack / sizeof slack[0]; i++) {
        double r = -1;
        long grew = child_growth(&v, slack[i], &r);
        /* 64 MiB: a hundred times the bounded booking, far below the 0.2 GB that 1e11 s of
         * hours took before (1e300 days: undefined behaviour) */
        assert_true(grew < 64L << 20);
        assert_true(r >= 0 && r <= slack[i]);
    }
    /* the booking still works next to it: a job with a huge slack books its start, and a
     * second one with the same window does not overlap it (as in test_policies) */
    const char *params;
    const struct eco_carbon_ops *shift = eco_carbon_find("shift", &params);
    struct eco_carbon *p = make("shift:lambda=0,util=1");
    struct eco_carbon_job j = {.run_s = 2 * H, .latest_start_s = 1e300 * 1e300, .gpus = 8};
    double a = shift->release(p, &v, &j);
    j.latest_start_s = 8 * H;
    double b = shift->release(p, &v, &j);
    assert_true(a >= 0 && b >= 0 && (b >= a + 2 * H || a >= b + 2 * H));
    shift->destroy(p);
    eco_forecast_fini(&f);
    eco_signal_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forecasts),        cmocka_unit_test(test_candidates),
        cmocka_unit_test(test_policies),         cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_shift_huge_slack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
