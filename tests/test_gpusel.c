/* SPDX-License-Identifier: MIT */
/* GPU choice by live status (src/core/policy/gpusel.c): the utilisation window, hysteresis
 * both ways, claims of just-started jobs, sharing, the exclusive, memory-threshold and
 * share-fit baselines and bad requests, as tables of samples and expected choices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "ecosched/coloc.h"
#include "ecosched/gpusel.h"

#define GIB(x) ((uint64_t)((x)*1073741824.0))
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define END UINT32_MAX /* terminates expected GPU lists */

/* One sample of a GPU with a 32 GiB card unless total_gib is set. */
struct feed {
    uint32_t gpu;
    double t_s, util, used_gib, total_gib;
};

static void sample(struct eco_gpusel *s, const struct feed *f)
{
    struct eco_gpu_sample x = {
        .t_s = f->t_s,
        .util = f->util,
        .mem_used_b = GIB(f->used_gib),
        .mem_total_b = GIB(f->total_gib > 0 ? f->total_gib : 32.0),
    };
    assert_int_equal(eco_gpusel_sample(s, f->gpu, &x), 0);
}

static void feed_all(struct eco_gpusel *s, const struct feed *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sample(s, &f[i]);
}

static struct eco_gpusel *make(uint32_t n, const char *strategy, const struct eco_gpusel_params *p)
{
    const struct eco_gpusel_ops *ops = eco_gpusel_find(strategy);
    assert_non_null(ops);
    struct eco_gpusel *s = eco_gpusel_create(n, ops, p);
    assert_non_null(s);
    return s;
}

static struct eco_gpu_request req(uint64_t id, uint32_t n, double mem_gib, int share)
{
    return (struct eco_gpu_request){
        .job_id = id, .n_gpus = n, .mem_b = GIB(mem_gib), .share = share};
}

/* Chooses and compares with rc and, on success, the expected list ended by END. */
static void expect(const struct eco_gpusel *s, double now, const struct eco_gpu_request *r, int rc,
                   const uint32_t *gpus)
{
    uint32_t out[ECO_GPUSEL_MAX_GPUS];
    memset(out, 0xff, sizeof out);
    assert_int_equal(eco_gpusel_choose(s, now, r, out), rc);
    if (rc)
        return;
    uint32_t k = 0;
    for (; gpus[k] != END; k++)
        assert_int_equal(out[k], gpus[k]);
    assert_int_equal(k, r->n_gpus);
}

static void choose_reserve(struct eco_gpusel *s, double now, const struct eco_gpu_request *r,
                           const uint32_t *gpus)
{
    expect(s, now, r, 0, gpus);
    assert_int_equal(eco_gpusel_reserve(s, now, gpus, r->n_gpus, r), 0);
}

static struct eco_gpusel_gpu status(const struct eco_gpusel *s, uint32_t gpu, double now)
{
    struct eco_gpusel_gpu st;
    assert_int_equal(eco_gpusel_gpu_status(s, gpu, now, &st), 0);
    return st;
}

/* ---- parameters and registry -------------------------------------------------------------- */

static void test_params(void **state)
{
    (void)state;
    struct eco_gpusel_params d;
    eco_gpusel_params_default(&d);
    assert_int_equal(eco_gpusel_params_check(&d, NULL), 0);
    assert_true(d.window_s == 10.0 && d.util_hi == 0.5 && d.util_lo == 0.2 && d.grace_s == 30.0);
    assert_true(d.mem_lo == 0.1 && d.memthr_free == 0.9 && d.hold_exclusive);

    static const struct {
        const char *field;
        double window_s, util_hi, util_lo, mem_hi, mem_lo, share, grace_s, memthr;
    } bad[] = {
        {"window_s", -1, .5, .2, .2, .1, .7, 30, .9},
        {"window_s", NAN, .5, .2, .2, .1, .7, 30, .9},
        {"util_lo", 10, .2, .5, .2, .1, .7, 30, .9}, /* lo > hi */
        {"util_lo", 10, 1.5, .2, .2, .1, .7, 30, .9},
        {"mem_lo", 10, .5, .2, .1, .2, .7, 30, .9}, /* lo > hi */
        {"share_util_max", 10, .5, .2, .2, .1, -.1, 30, .9},
        {"grace_s", 10, .5, .2, .2, .1, .7, INFINITY, .9},
        {"memthr_free", 10, .5, .2, .2, .1, .7, 30, 1.1},
    };
    assert_true(d.memthr_wait_s == 30.0 && d.share_min_gain == 1.1);
    for (int f = 0; f < 2; f++) {
        struct eco_gpusel_params p = d;
        struct eco_error err = {{0}};
        *(f ? &p.share_min_gain : &p.memthr_wait_s) = f ? NAN : -1;
        assert_int_equal(eco_gpusel_params_check(&p, &err), -EINVAL);
        assert_non_null(strstr(err.msg, f ? "share_min_gain" : "memthr_wait_s"));
    }
    assert_true(d.share_max_jobs == 0 && d.share_settle_s == 0); /* no cap, no settling */
    for (int f = 0; f < 3; f++) {
        struct eco_gpusel_params p = d;
        struct eco_error err = {{0}};
        if (f == 0)
            p.share_max_jobs = ECO_GPUSEL_MAX_JOBS + 1;
        else
            p.share_settle_s = f == 1 ? -1 : NAN;
        assert_int_equal(eco_gpusel_params_check(&p, &err), -EINVAL);
        assert_non_null(strstr(err.msg, f ? "share_settle_s" : "share_max_jobs"));
    }
    for (size_t i = 0; i < NELEM(bad); i++) {
        struct eco_gpusel_params p = d;
        struct eco_error err = {{0}};
        p.window_s = bad[i].window_s;
        p.util_hi = bad[i].util_hi;
        p.util_lo = bad[i].util_lo;
        p.mem_hi = bad[i].mem_hi;
        p.mem_lo = bad[i].mem_lo;
        p.share_util_max = bad[i].share;
        p.grace_s = bad[i].grace_s;
        p.memthr_free = bad[i].memthr;
        assert_int_equal(eco_gpusel_params_check(&p, &err), -EINVAL);
        assert_non_null(strstr(err.msg, bad[i].field));
        errno = 0;
        assert_null(eco_gpusel_create(2, NULL, &p));
        assert_int_equal(errno, EINVAL);
    }
    assert_null(eco_gpusel_create(0, NULL, NULL));
    assert_null(eco_gpusel_create(ECO_GPUSEL_MAX_GPUS + 1, NULL, NULL));
    struct eco_gpusel *s = eco_gpusel_create(ECO_GPUSEL_MAX_GPUS, NULL, NULL);
    assert_non_null(s);
    assert_string_equal(eco_gpusel_strategy(s)->name, "live"); /* NULL ops: live */
    assert_int_equal(eco_gpusel_n_gpus(s), ECO_GPUSEL_MAX_GPUS);
    assert_true(eco_gpusel_params(s)->util_hi == 0.5);
    eco_gpusel_destroy(s);
    eco_gpusel_destroy(NULL);
}

static void test_registry(void **state)
{
    (void)state;
    static const char *const names[] = {"exclusive", "memory-threshold", "live", "share-fit"};
    const struct eco_gpusel_ops *const *all = eco_gpusel_all();
    size_t n = 0;
    for (; all[n]; n++) {
        assert_string_equal(all[n]->name, names[n]);
        assert_non_null(all[n]->summary);
        assert_non_null(all[n]->choose);
        assert_ptr_equal(eco_gpusel_find(names[n]), all[n]);
    }
    assert_int_equal(n, NELEM(names));
    assert_ptr_equal(eco_gpusel_find("LIVE"), eco_gpusel_find("live"));
    assert_null(eco_gpusel_find("static"));
    assert_null(eco_gpusel_find(NULL));
}

/* ---- averaging window --------------------------------------------------------------------- */

static void test_window(void **state)
{
    (void)state;
    static const struct {
        double window_s;
        size_t n;
        double t[8], u[8];
        double avg;
    } cases[] = {
        /* (t_last - 10, t_last]: the sample at exactly t_last - window has left */
        {10, 3, {0, 5, 10}, {1, 0, 0}, 0.0},
        {10, 3, {1, 5, 10}, {1, 0, 0.5}, 0.5},
        {10, 4, {0, 1, 2, 3}, {0.2, 0.4, 0.6, 0.8}, 0.5},
        {10, 1, {7}, {0.3}, 0.3},
        {0, 3, {0, 1, 2}, {1, 1, 0.25}, 0.25}, /* window 0: the last sample only */
        {2.5, 4, {0, 1, 2, 3}, {0.9, 0.1, 0.2, 0.3}, 0.2},
        {10, 3, {4, 4, 4}, {0, 0, 0.9}, 0.3}, /* equal times all count */
    };
    for (size_t c = 0; c < NELEM(cases); c++) {
        struct eco_gpusel_params p;
        eco_gpusel_params_default(&p);
        p.window_s = cases[c].window_s;
        struct eco_gpusel *s = make(1, "live", &p);
        for (size_t i = 0; i < cases[c].n; i++)
            sample(s, &(struct feed){0, cases[c].t[i], cases[c].u[i], 0, 0});
        assert_float_equal(status(s, 0, 0).util_avg, cases[c].avg, 1e-12);
        eco_gpusel_destroy(s);
    }

    /* More samples in the window than the ring holds: the newest ECO_GPUSEL_RING count. */
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.window_s = 1000;
    struct eco_gpusel *s = make(1, "live", &p);
    for (int i = 0; i < 100; i++)
        sample(s, &(struct feed){0, i * 0.1, i < 100 - ECO_GPUSEL_RING ? 1.0 : 0.0, 0, 0});
    assert_float_equal(status(s, 0, 0).util_avg, 0.0, 1e-12);
    eco_gpusel_destroy(s);
}

/* ---- hysteresis --------------------------------------------------------------------------- */

/* One GPU, window 0 so each step's utilisation is the averaged one; memory as a fraction. */
static void test_hysteresis(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        size_t n;
        double util[10], mem[10];
        int busy[10];
    } cases[] = {
        {"util rises: busy only above hi, stays busy down to lo, free below lo",
         9,
         {0.0, 0.4, 0.5, 0.55, 0.3, 0.45, 0.2, 0.19, 0.45},
         {0},
         {0, 0, 0, 1, 1, 1, 1, 0, 0}},
        {"memory: busy above mem_hi (free < 80%), free again at free >= 90%",
         6,
         {0, 0, 0, 0, 0, 0},
         {0.05, 0.15, 0.2, 0.21, 0.15, 0.1},
         {0, 0, 0, 1, 1, 0}},
        {"both must be low to become free",
         4,
         {0.9, 0.1, 0.1, 0.1},
         {0.0, 0.5, 0.12, 0.08},
         {1, 1, 1, 0}},
        {"first sample between the thresholds: busy (the safe side)",
         3,
         {0.3, 0.25, 0.1},
         {0, 0, 0},
         {1, 1, 0}},
        {"first sample with memory between the thresholds: busy",
         2,
         {0.0, 0.0},
         {0.15, 0.1},
         {1, 0}},
        {"oscillation across hi and lo alternately flips each time",
         5,
         {0.6, 0.1, 0.6, 0.1, 0.6},
         {0},
         {1, 0, 1, 0, 1}},
    };
    for (size_t c = 0; c < NELEM(cases); c++) {
        struct eco_gpusel_params p;
        eco_gpusel_params_default(&p);
        p.window_s = 0;
        struct eco_gpusel *s = make(1, "live", &p);
        for (size_t i = 0; i < cases[c].n; i++) {
            sample(s, &(struct feed){0, (double)i, cases[c].util[i], cases[c].mem[i] * 32, 32});
            if (status(s, 0, i).busy != cases[c].busy[i])
                fail_msg("%s: step %zu: busy %d, expected %d", cases[c].what, i, !cases[c].busy[i],
                         cases[c].busy[i]);
        }
        eco_gpusel_destroy(s);
    }
}

/* The default 10 s window keeps a GPU from flapping on single readings. */
static void test_window_smooths_spikes(void **state)
{
    (void)state;
    struct eco_gpusel *s = make(2, "live", NULL);
    for (int t = 0; t < 10; t++) {
        /* GPU 0 idle with one 100% reading; GPU 1 a training job with one input stall */
        sample(s, &(struct feed){0, t, t == 5 ? 1.0 : 0.0, 0, 0});
        sample(s, &(struct feed){1, t, t < 2 ? 0.0 : (t == 6 ? 0.0 : 0.95), 8, 0});
    }
    struct eco_gpusel_gpu g0 = status(s, 0, 9), g1 = status(s, 1, 9);
    assert_false(g0.busy);
    assert_float_equal(g0.util_avg, 0.1, 1e-12);
    assert_true(g1.busy);
    assert_float_equal(g1.util_avg, 0.95 * 7 / 10, 1e-12);
    expect(s, 9, &(struct eco_gpu_request){.job_id = 1, .n_gpus = 1}, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s);
}

/* ---- live choice -------------------------------------------------------------------------- */

static void test_live_choice(void **state)
{
    (void)state;
    /* 4 GPUs, window 0: GPU 0 busy, 1..3 free with utilisation 0.05, 0.0, 0.1. */
    static const struct feed gpus[] = {
        {0, 0, 0.9, 20, 0},
        {1, 0, 0.05, 1, 0},
        {2, 0, 0.0, 1, 0},
        {3, 0, 0.1, 1, 0},
    };
    static const struct {
        uint32_t n;
        double mem_gib;
        int rc;
        uint32_t gpus[5];
    } cases[] = {
        {1, 0, 0, {2, END}},                                /* lowest averaged utilisation */
        {2, 0, 0, {1, 2, END}},                             /* returned in index order */
        {3, 0, 0, {1, 2, 3, END}},  {4, 0, -EAGAIN, {END}}, /* GPU 0 is busy */
        {1, 31, 0, {2, END}},                               /* 31 GiB free on each free GPU */
        {1, 31.5, -EAGAIN, {END}},                          /* fits in 32 GiB but not now */
        {1, 33, -EOVERFLOW, {END}},                         /* never */
    };
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.window_s = 0;
    struct eco_gpusel *s = make(4, "live", &p);
    feed_all(s, gpus, NELEM(gpus));
    for (size_t c = 0; c < NELEM(cases); c++) {
        struct eco_gpu_request r = req(c + 1, cases[c].n, cases[c].mem_gib, 0);
        expect(s, 1, &r, cases[c].rc, cases[c].gpus);
    }
    eco_gpusel_destroy(s);

    /* Ties: lowest index. An unsampled GPU is never offered. */
    s = make(3, "live", NULL);
    sample(s, &(struct feed){1, 0, 0, 0, 0});
    sample(s, &(struct feed){2, 0, 0, 0, 0});
    expect(s, 0, &(struct eco_gpu_request){.job_id = 1, .n_gpus = 1}, 0, (uint32_t[]){1, END});
    expect(s, 0, &(struct eco_gpu_request){.job_id = 1, .n_gpus = 3}, -EAGAIN, NULL);
    eco_gpusel_destroy(s);
}

/* ---- reservations ------------------------------------------------------------------------- */

static void test_reservation_prevents_double_start(void **state)
{
    (void)state;
    static const struct feed idle[] = {{0, 0, 0, 0.3, 0}, {1, 0, 0, 0.3, 0}};
    struct eco_gpusel *s = make(2, "live", NULL);
    feed_all(s, idle, NELEM(idle));

    struct eco_gpu_request a = req(1, 1, 4, 0), b = req(2, 1, 4, 0), c = req(3, 1, 4, 0);
    choose_reserve(s, 1, &a, (uint32_t[]){0, END});
    /* Samples taken since still show GPU 0 idle: the claim keeps it from job b. */
    sample(s, &(struct feed){0, 2, 0, 0.3, 0});
    sample(s, &(struct feed){1, 2, 0, 0.3, 0});
    choose_reserve(s, 2, &b, (uint32_t[]){1, END});
    expect(s, 3, &c, -EAGAIN, NULL);
    struct eco_gpusel_gpu g0 = status(s, 0, 3);
    assert_int_equal(g0.n_claims, 1);
    assert_true(g0.whole_claimed && g0.exclusive_held);
    assert_int_equal(g0.reserved_b, GIB(4));
    /* The claim expires after the grace period, but the job still holds its GPU. */
    g0 = status(s, 0, 31);
    assert_int_equal(g0.n_claims, 0);
    assert_int_equal(g0.reserved_b, 0);
    expect(s, 31, &c, -EAGAIN, NULL);
    assert_int_equal(eco_gpusel_release(s, 1), 0);
    expect(s, 31, &c, 0, (uint32_t[]){0, END});
    assert_int_equal(eco_gpusel_release(s, 1), -ENOENT);
    eco_gpusel_destroy(s);
}

/* hold_exclusive = 0: the claim alone protects a job, and it ends when its load shows or when
 * the grace period passes. */
static void test_claim_expiry_and_settling(void **state)
{
    (void)state;
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.hold_exclusive = 0;
    p.window_s = 0;
    static const struct {
        const char *what;
        double t_s, util, used_gib; /* GPU 0 sample after the start at t = 0 (none if t < 0) */
        double now;
        int claims, chosen; /* claims in force at now; is GPU 0 offered at now */
    } cases[] = {
        {"within grace, no load shown", 5, 0.0, 0.3, 10, 1, 0},
        {"just before grace ends", 29, 0.0, 0.3, 29.9, 1, 0},
        {"grace over, GPU still idle: free again", 29, 0.0, 0.3, 30, 0, 1},
        {"load shown: settled, and busy keeps it", 3, 0.9, 4.3, 5, 0, 0},
        {"memory shown but utilisation still low: claim kept", 3, 0.1, 4.3, 5, 1, 0},
        {"utilisation shown but memory not yet: claim kept", 3, 0.9, 1.0, 5, 1, 0},
        {"a sample at the start time is not evidence", 0, 0.9, 4.3, 5, 1, 0},
    };
    for (size_t c = 0; c < NELEM(cases); c++) {
        struct eco_gpusel *s = make(1, "live", &p);
        sample(s, &(struct feed){0, 0, 0, 0.3, 0});
        struct eco_gpu_request a = req(1, 1, 4, 0), b = req(2, 1, 0, 0);
        choose_reserve(s, 0, &a, (uint32_t[]){0, END});
        sample(s, &(struct feed){0, cases[c].t_s, cases[c].util, cases[c].used_gib, 0});
        if ((int)status(s, 0, cases[c].now).n_claims != cases[c].claims)
            fail_msg("%s: claims", cases[c].what);
        expect(s, cases[c].now, &b, cases[c].chosen ? 0 : -EAGAIN, (uint32_t[]){0, END});
        eco_gpusel_destroy(s);
    }
}

/* memory-threshold has no claims: task-spooler's double start once its gpu_wait is 0. */
static void test_memthr_double_start(void **state)
{
    (void)state;
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.memthr_wait_s = 0;
    struct eco_gpusel *s = make(2, "memory-threshold", &p);
    sample(s, &(struct feed){0, 0, 0, 0.3, 0});
    sample(s, &(struct feed){1, 0, 0.99, 20, 0});
    struct eco_gpu_request a = req(1, 1, 4, 0), b = req(2, 1, 4, 0);
    choose_reserve(s, 0, &a, (uint32_t[]){0, END});
    expect(s, 1, &b, 0, (uint32_t[]){0, END}); /* the same GPU again */
    eco_gpusel_destroy(s);
}

/* memory-threshold with task-spooler's default gpu_wait (30 s): no start within 30 s of the
 * last one; then the memory rule alone, which still stacks a job under 10% of the memory. */
static void test_memthr_wait(void **state)
{
    (void)state;
    struct eco_gpusel *s = make(2, "memory-threshold", NULL);
    sample(s, &(struct feed){0, 0, 0, 0, 0});
    sample(s, &(struct feed){1, 0, 0, 0, 0});
    struct eco_gpu_request a = req(1, 1, 3, 0), b = req(2, 1, 3, 0);
    choose_reserve(s, 0, &a, (uint32_t[]){0, END});
    expect(s, 29.9, &b, -EAGAIN, NULL);
    sample(s, &(struct feed){0, 20, 0.9, 3, 0}); /* a shows 3 GiB of 32: still >= 90% free */
    expect(s, 30, &b, 0, (uint32_t[]){0, END});
    sample(s, &(struct feed){0, 21, 0.9, 3.3, 0}); /* 3.3 GiB: under 90% free */
    expect(s, 31, &b, 0, (uint32_t[]){1, END});
    eco_gpusel_release(s, 1);
    expect(s, 31, &b, 0, (uint32_t[]){1, END}); /* no record younger than 30 s: no wait */
    eco_gpusel_destroy(s);
}

/* live with known workloads: a GPU holding jobs is offered to a sharing job only when the
 * summed speed factors rise by more than share_min_gain - 1 (a pair: its two factors add up to
 * more than share_min_gain), whatever the utilisation; unknown workloads keep the utilisation
 * rule. */
static void test_live_measured_pairs(void **state)
{
    (void)state;
    int dc = eco_coloc_find("DCGAN LSUN bs128", "unstated");
    int r18 = eco_coloc_find("ResNet18 CIFAR-10 bs32", "unstated");
    int mb3 = eco_coloc_find("MobileNetV3 ImageNet bs32", "unstated");
    assert_true(dc >= 0 && r18 >= 0 && mb3 >= 0);
    struct eco_coloc_pair pr;
    assert_int_equal(eco_coloc_pair((size_t)dc, (size_t)dc, &pr), 0);
    assert_true(pr.kind == ECO_COLOC_MEASURED && pr.speed_a + pr.speed_b < 1.1); /* 1.012 */
    assert_int_equal(eco_coloc_pair((size_t)mb3, (size_t)r18, &pr), 0);
    assert_true(pr.kind == ECO_COLOC_MEASURED && pr.speed_a + pr.speed_b > 1.1); /* 2.017 */

    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.window_s = 0;
    struct eco_gpusel *s = make(2, "live", &p);
    struct eco_gpu_request a = req(1, 1, 4, 1), b = req(2, 1, 4, 1);
    a.coloc_ref = (uint32_t)dc + 1;
    b.coloc_ref = (uint32_t)r18 + 1;
    sample(s, &(struct feed){0, 0, 0, 0, 0});
    sample(s, &(struct feed){1, 0, 0, 0, 0});
    choose_reserve(s, 0, &a, (uint32_t[]){0, END}); /* DCGAN bs128 on GPU 0 */
    choose_reserve(s, 0, &b, (uint32_t[]){1, END}); /* ResNet18 on GPU 1 */
    /* both GPUs at 99% utilisation and 6 GiB of 32 */
    sample(s, &(struct feed){0, 1, 0.99, 6, 0});
    sample(s, &(struct feed){1, 1, 0.99, 6, 0});

    /* MobileNetV3: 1.626 with the DCGAN on GPU 0, 2.017 with the ResNet18 on GPU 1 */
    struct eco_gpu_request c = req(3, 1, 4, 1);
    c.coloc_ref = (uint32_t)mb3 + 1;
    expect(s, 2, &c, 0, (uint32_t[]){1, END});
    /* another DCGAN bs128: 1.012 with the one on GPU 0 (not worth it), 1.319 on GPU 1 */
    struct eco_gpu_request d = req(4, 1, 4, 1);
    d.coloc_ref = (uint32_t)dc + 1;
    expect(s, 2, &d, 0, (uint32_t[]){1, END});
    /* once MobileNetV3 joins GPU 1, the DCGAN as a third job there would bring
     * 1 + (1.034 x 0.563 + 0.983 x 0.692 + 0.756 x 0.934) - (1.034 + 0.983) = 0.951 < 1.1,
     * and GPU 0 still does not pay */
    choose_reserve(s, 2, &c, (uint32_t[]){1, END});
    expect(s, 3, &d, -EAGAIN, NULL);
    /* a third ResNet18 next to two (self-pair 0.949, 0.972: 0.9605 each) brings
     * 1 + 3 x 0.9605^2 - 2 x 0.9605 = 1.847: it joins */
    struct eco_gpusel *s3 = make(1, "live", &p);
    sample(s3, &(struct feed){0, 0, 0, 0, 0});
    struct eco_gpu_request r1 = b, r2 = b, r3 = b;
    r1.job_id = 11, r2.job_id = 12, r3.job_id = 13;
    choose_reserve(s3, 0, &r1, (uint32_t[]){0, END});
    sample(s3, &(struct feed){0, 1, 0.6, 5, 0});
    choose_reserve(s3, 1, &r2, (uint32_t[]){0, END});
    sample(s3, &(struct feed){0, 2, 0.9, 10, 0});
    expect(s3, 2, &r3, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s3);
    /* the same DCGAN asked with a lower bar (1.0) shares GPU 0 */
    struct eco_gpusel_params lo = p;
    lo.share_min_gain = 1.0;
    struct eco_gpusel *s1 = make(1, "live", &lo);
    sample(s1, &(struct feed){0, 0, 0, 0, 0});
    choose_reserve(s1, 0, &a, (uint32_t[]){0, END});
    sample(s1, &(struct feed){0, 1, 0.99, 6, 0});
    expect(s1, 2, &d, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s1);
    /* a higher bar (2.5) refuses every pair; an unknown workload keeps the utilisation rule */
    struct eco_gpusel_params hi = p;
    hi.share_min_gain = 2.5;
    struct eco_gpusel *s2 = make(1, "live", &hi);
    sample(s2, &(struct feed){0, 0, 0, 0, 0});
    choose_reserve(s2, 0, &b, (uint32_t[]){0, END});
    sample(s2, &(struct feed){0, 1, 0.2, 6, 0});
    expect(s2, 2, &c, -EAGAIN, NULL);
    c.coloc_ref = 0; /* unknown: utilisation 0.2 < 0.7 and memory fit */
    expect(s2, 2, &c, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s2);
    eco_gpusel_destroy(s);
}

/* ---- sharing ------------------------------------------------------------------------------ */

static void test_share(void **state)
{
    (void)state;
    /* window 0; GPU 0 a light job (util 0.4, 8 GiB of 32), GPU 1 a heavy one (0.8, 8 GiB). */
    static const struct feed busy[] = {{0, 0, 0.4, 8, 0}, {1, 0, 0.8, 8, 0}};
    static const struct {
        double mem_gib;
        int share, rc;
        uint32_t gpus[2];
    } cases[] = {
        {16, 1, 0, {0, END}},      /* 24 GiB free >= 16 + 0.5 */
        {23.5, 1, 0, {0, END}},    /* exactly the margin left */
        {23.6, 1, -EAGAIN, {END}}, /* memory does not fit with the margin */
        {16, 0, -EAGAIN, {END}},   /* no --share: both GPUs busy */
        {0, 1, 0, {0, END}},       /* undeclared memory: the margin only */
        {40, 1, -EOVERFLOW, {END}},
    };
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.window_s = 0;
    struct eco_gpusel *s = make(2, "live", &p);
    feed_all(s, busy, NELEM(busy));
    assert_true(status(s, 0, 0).busy && status(s, 1, 0).busy);
    for (size_t c = 0; c < NELEM(cases); c++) {
        struct eco_gpu_request r = req(c + 1, 1, cases[c].mem_gib, cases[c].share);
        expect(s, 1, &r, cases[c].rc, cases[c].gpus);
    }

    /* A sharing job's claimed memory counts until its samples show it or grace passes. */
    struct eco_gpu_request a = req(10, 1, 16, 1), b = req(11, 1, 16, 1), c = req(12, 1, 7, 1);
    choose_reserve(s, 1, &a, (uint32_t[]){0, END});
    assert_int_equal(status(s, 0, 2).reserved_b, GIB(16));
    expect(s, 2, &b, -EAGAIN, NULL);             /* 24 - 16 = 8 GiB left */
    expect(s, 2, &c, 0, (uint32_t[]){0, END});   /* 7 + 0.5 fits in 8 */
    expect(s, 31, &b, 0, (uint32_t[]){0, END});  /* claim expired unseen */
    sample(s, &(struct feed){0, 3, 0.5, 24, 0}); /* job a's memory shows */
    assert_int_equal(status(s, 0, 3).n_claims, 0);
    expect(s, 4, &b, -EAGAIN, NULL); /* live memory now says 8 GiB */
    expect(s, 4, &c, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s);
}

static void test_share_rules(void **state)
{
    (void)state;
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.window_s = 0;
    struct eco_gpu_request x = req(1, 1, 4, 0), sh = req(2, 1, 4, 1), sh2 = req(3, 1, 4, 1);

    /* A job that does not share keeps its GPU from sharing jobs (hold_exclusive), ... */
    struct eco_gpusel *s = make(1, "live", &p);
    sample(s, &(struct feed){0, 0, 0, 0, 0});
    choose_reserve(s, 0, &x, (uint32_t[]){0, END});
    sample(s, &(struct feed){0, 5, 0.3, 4, 0}); /* its load shows; 0.3 < share_util_max */
    expect(s, 40, &sh, -EAGAIN, NULL);
    eco_gpusel_destroy(s);

    /* ... but with hold_exclusive = 0 only during its claim. */
    p.hold_exclusive = 0;
    s = make(1, "live", &p);
    sample(s, &(struct feed){0, 0, 0, 0, 0});
    choose_reserve(s, 0, &x, (uint32_t[]){0, END});
    expect(s, 1, &sh, -EAGAIN, NULL); /* whole GPU claimed */
    sample(s, &(struct feed){0, 5, 0.3, 4, 0});
    expect(s, 40, &sh, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s);

    /* Sharing jobs join each other; a GPU with claims in force ranks after one without, even
     * with lower utilisation. A sharing job with no declared memory is released by grace only. */
    p.hold_exclusive = 1;
    s = make(2, "live", &p);
    sample(s, &(struct feed){0, 0, 0.0, 0, 0});
    sample(s, &(struct feed){1, 0, 0.1, 0, 0});
    struct eco_gpu_request z = req(4, 1, 0, 1);
    choose_reserve(s, 0, &sh, (uint32_t[]){0, END});
    expect(s, 1, &sh2, 0, (uint32_t[]){1, END});
    expect(s, 1, &(struct eco_gpu_request){.job_id = 9, .n_gpus = 2, .mem_b = GIB(4), .share = 1},
           0, (uint32_t[]){0, 1, END});
    expect(s, 1, &x, 0, (uint32_t[]){1, END}); /* not sharing: GPU 0 has a claim */
    assert_int_equal(eco_gpusel_release(s, sh.job_id), 0);
    choose_reserve(s, 2, &z, (uint32_t[]){0, END});
    sample(s, &(struct feed){0, 3, 0.5, 30, 0});
    assert_int_equal(status(s, 0, 4).n_claims, 1);
    assert_int_equal(status(s, 0, 32).n_claims, 0);
    eco_gpusel_destroy(s);

    /* A sharing job never joins a GPU above share_util_max. */
    s = make(1, "live", &p);
    sample(s, &(struct feed){0, 0, 0.75, 4, 0});
    expect(s, 1, &sh, -EAGAIN, NULL);
    sample(s, &(struct feed){0, 1, 0.69, 4, 0});
    expect(s, 1, &sh, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s);
}

/* live's sharing gates: share_max_jobs (no job beside that many), share_min_queue (no job
 * beside others unless that many wait) and share_settle_s (no job by the utilisation rule
 * beside one started less than that long ago, whose load the readings may not show yet). Job 2
 * starts at t = 0, its 4 GiB and 30% show at t = 1; GPU 0 stays free by hysteresis (0.3 <
 * util_hi, 12.5% memory < mem_hi), so job 3 may join it; then job 4. */
static void test_share_gates(void **state)
{
    (void)state;
    struct eco_gpusel_params p;
    eco_gpusel_params_default(&p);
    p.window_s = 0;
    struct eco_gpu_request a = req(2, 1, 4, 1), b = req(3, 1, 4, 1), c = req(4, 1, 4, 1);
    for (uint32_t cap = 0; cap <= 3; cap++) {
        if (cap == 1)
            continue;
        p.share_max_jobs = cap;
        struct eco_gpusel *s = make(1, "live", &p);
        sample(s, &(struct feed){0, 0, 0, 0, 0});
        choose_reserve(s, 0, &a, (uint32_t[]){0, END});
        sample(s, &(struct feed){0, 1, 0.3, 4, 0});
        choose_reserve(s, 2, &b, (uint32_t[]){0, END});
        sample(s, &(struct feed){0, 3, 0.4, 8, 0});
        if (cap == 2)
            expect(s, 4, &c, -EAGAIN, NULL); /* two jobs on the GPU: the cap */
        else
            expect(s, 4, &c, 0, (uint32_t[]){0, END}); /* no cap (0), or 3 */
        assert_int_equal(eco_gpusel_release(s, b.job_id), 0);
        expect(s, 4, &c, 0, (uint32_t[]){0, END});
        eco_gpusel_destroy(s);
    }

    /* queue: with share_min_queue 2, job 3 joins only while another job waits too */
    p.share_max_jobs = 0;
    p.share_min_queue = 2;
    struct eco_gpusel *q = make(1, "live", &p);
    sample(q, &(struct feed){0, 0, 0, 0, 0});
    choose_reserve(q, 0, &a, (uint32_t[]){0, END}); /* an empty GPU: no gate */
    sample(q, &(struct feed){0, 1, 0.3, 4, 0});
    b.queued = 1;
    expect(q, 2, &b, -EAGAIN, NULL);
    b.queued = 2;
    expect(q, 2, &b, 0, (uint32_t[]){0, END});
    b.queued = 0;
    p.share_min_queue = 0;
    eco_gpusel_destroy(q);

    /* settling: 40 s after job 2's start, not before */
    p.share_settle_s = 40;
    struct eco_gpusel *s = make(2, "live", &p);
    sample(s, &(struct feed){0, 0, 0, 0, 0});
    sample(s, &(struct feed){1, 0, 0.9, 20, 0}); /* GPU 1 busy: only GPU 0 may take a job */
    choose_reserve(s, 0, &a, (uint32_t[]){0, END});
    sample(s, &(struct feed){0, 1, 0.3, 4, 0});
    expect(s, 2, &b, -EAGAIN, NULL);
    expect(s, 39.9, &b, -EAGAIN, NULL);
    expect(s, 40, &b, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s);

    /* known workloads: the measured pair decides, the settling time does not apply (two
     * ResNet18 bs32: 0.9605 each, 1.921 summed > 1.1) */
    int r18 = eco_coloc_find("ResNet18 CIFAR-10 bs32", NULL);
    assert_true(r18 >= 0);
    a.coloc_ref = b.coloc_ref = (uint32_t)r18 + 1;
    s = make(1, "live", &p);
    sample(s, &(struct feed){0, 0, 0, 0, 0});
    choose_reserve(s, 0, &a, (uint32_t[]){0, END});
    sample(s, &(struct feed){0, 1, 0.9, 4, 0});
    expect(s, 2, &b, 0, (uint32_t[]){0, END});
    eco_gpusel_destroy(s);
}

/* ---- baselines ---------------------------------------------------------------------------- */

static void test_exclusive(void **state)
{
    (void)state;
    struct eco_gpusel *s = make(3, "exclusive", NULL);
    /* No samples needed; live status is ignored (GPU 0 at 100% is still "free"). */
    struct eco_gpu_request two = req(1, 2, 0, 0), one = req(2, 1, 0, 1), three = req(3, 1, 0, 0);
    expect(s, 0, &two, 0, (uint32_t[]){0, 1, END});
    sample(s, &(struct feed){0, 0, 1.0, 31, 0});
    choose_reserve(s, 0, &one, (uint32_t[]){0, END}); /* share ignored: one job per GPU */
    choose_reserve(s, 1, &two, (uint32_t[]){1, 2, END});
    expect(s, 100, &three, -EAGAIN, NULL); /* records last until release */
    assert_int_equal(eco_gpusel_release(s, two.job_id), 0);
    expect(s, 100, &two, 0, (uint32_t[]){1, 2, END});
    eco_gpusel_destroy(s);
}

static void test_memory_threshold(void **state)
{
    (void)state;
    /* 4 GPUs of 40 GiB; free means >= 90% free; utilisation is ignored. */
    static const struct feed f[] = {
        {0, 0, 1.0, 4.0, 40}, /* exactly 90% free: free */
        {1, 0, 0.0, 4.1, 40}, /* 89.75% free: not */
        {2, 0, 0.0, 0.0, 40},
        {3, 0, 0.0, 39, 40},
    };
    static const struct {
        uint32_t n;
        int rc;
        uint32_t gpus[3];
    } cases[] = {
        {1, 0, {0, END}},
        {2, 0, {0, 2, END}},
        {3, -EAGAIN, {END}},
    };
    struct eco_gpusel *s = make(4, "memory-threshold", NULL);
    feed_all(s, f, NELEM(f));
    for (size_t c = 0; c < NELEM(cases); c++) {
        struct eco_gpu_request r = req(c + 1, cases[c].n, 0, 0);
        expect(s, 1, &r, cases[c].rc, cases[c].gpus);
    }
    eco_gpusel_destroy(s);
}

/* share-fit, by hand: 3 GPUs of 32 GiB holding 20, 4 and 30 GiB at 90%, 95% and 10%
 * utilisation (live would refuse GPUs 0 and 1 as busy). Each job goes to the GPU with the
 * fewest recorded jobs among those whose free memory, less the claims in force, holds it;
 * ties to the lower index; utilisation plays no part. */
static void test_share_fit(void **state)
{
    (void)state;
    static const struct feed f[] = {{0, 0, 0.9, 20, 0}, {1, 0, 0.95, 4, 0}, {2, 0, 0.1, 30, 0}};
    struct eco_gpusel *s = make(3, "share-fit", NULL);
    feed_all(s, f, NELEM(f));
    /* free 12 / 28 / 2 GiB, no jobs: 8 GiB to GPU 0 (lowest index); left 4 / 28 / 2 */
    struct eco_gpu_request j1 = req(1, 1, 8, 1), j2 = req(2, 1, 8, 1), j3 = req(3, 1, 4, 1);
    choose_reserve(s, 1, &j1, (uint32_t[]){0, END});
    /* 8 GiB no longer fits GPU 0 (4 left): GPU 1; left 4 / 20 / 2 */
    choose_reserve(s, 1, &j2, (uint32_t[]){1, END});
    /* 4 GiB fits GPU 0 exactly and GPU 1, one job each: GPU 0; left 0 / 20 / 2 */
    choose_reserve(s, 1, &j3, (uint32_t[]){0, END});
    /* 2 GiB: GPU 1 (1 job) and GPU 2 (none, 2 GiB free exactly): the emptier GPU 2 */
    struct eco_gpu_request j4 = req(4, 1, 2, 1);
    choose_reserve(s, 1, &j4, (uint32_t[]){2, END});
    /* two GPUs of 10 GiB: only GPU 1 holds it; a job that does not share: no empty GPU */
    struct eco_gpu_request j5 = req(5, 2, 10, 1), j6 = req(6, 1, 1, 0);
    expect(s, 1, &j5, -EAGAIN, NULL);
    expect(s, 1, &j6, -EAGAIN, NULL);
    /* no slot cap, no wait: a third job joins GPU 1 in the same second */
    struct eco_gpu_request j7 = req(7, 1, 3, 1);
    choose_reserve(s, 1, &j7, (uint32_t[]){1, END});
    assert_int_equal(status(s, 1, 1).n_jobs, 2);
    /* jobs 1 and 3 end: GPU 0 is empty with 12 GiB free; 2 x 10 GiB: GPUs 0 and 1 (17 left) */
    assert_int_equal(eco_gpusel_release(s, 1), 0);
    assert_int_equal(eco_gpusel_release(s, 3), 0);
    expect(s, 1, &j5, 0, (uint32_t[]){0, 1, END});
    /* the job that does not share takes the empty GPU 0 and keeps it to itself */
    choose_reserve(s, 1, &j6, (uint32_t[]){0, END});
    /* 1 GiB: GPU 0 is held, GPU 2's 2 GiB are claimed by job 4: GPU 1; once job 4 ends, the
     * empty GPU 2 before GPU 1 (2 jobs) */
    struct eco_gpu_request j8 = req(8, 1, 1, 1);
    expect(s, 1, &j8, 0, (uint32_t[]){1, END});
    assert_int_equal(eco_gpusel_release(s, 4), 0);
    expect(s, 1, &j8, 0, (uint32_t[]){2, END});
    eco_gpusel_destroy(s);
}

/* ---- bad input ---------------------------------------------------------------------------- */

static void test_bad_requests(void **state)
{
    (void)state;
    /* 4 GPUs: two of 16 GiB, two of 80 GiB, all idle. */
    static const struct feed f[] = {
        {0, 0, 0, 0, 16},
        {1, 0, 0, 0, 16},
        {2, 0, 0, 0, 80},
        {3, 0, 0, 0, 80},
    };
    static const struct {
        uint32_t n;
        double mem_gib;
        int rc;
    } cases[] = {
        {0, 0, -EINVAL},     /* no GPUs */
        {5, 0, -EINVAL},     /* more than the server has */
        {2, 20, 0},          /* the two 80 GiB GPUs */
        {3, 20, -EOVERFLOW}, /* only two GPUs ever hold 20 GiB */
        {1, 81, -EOVERFLOW}, {4, 16, 0},
    };
    static const char *const strategies[] = {"exclusive", "memory-threshold", "live", "share-fit"};
    for (size_t k = 0; k < NELEM(strategies); k++) {
        struct eco_gpusel *s = make(4, strategies[k], NULL);
        feed_all(s, f, NELEM(f));
        uint32_t out[4];
        for (size_t c = 0; c < NELEM(cases); c++) {
            struct eco_gpu_request r = req(1, cases[c].n, cases[c].mem_gib, 0);
            int rc = eco_gpusel_choose(s, 1, &r, out);
            if (rc != cases[c].rc)
                fail_msg("%s case %zu: rc %d, expected %d", strategies[k], c, rc, cases[c].rc);
        }
        struct eco_gpu_request r = req(1, 1, 0, 0);
        assert_int_equal(eco_gpusel_choose(s, 1, &r, NULL), -EINVAL);
        assert_int_equal(eco_gpusel_choose(s, 1, NULL, out), -EINVAL);
        assert_int_equal(eco_gpusel_choose(NULL, 1, &r, out), -EINVAL);
        eco_gpusel_destroy(s);
    }

    /* A GPU not yet sampled might hold the memory: not "never". */
    struct eco_gpusel *s = make(2, "live", NULL);
    sample(s, &(struct feed){0, 0, 0, 0, 16});
    struct eco_gpu_request big = req(1, 1, 20, 0);
    expect(s, 0, &big, -EAGAIN, NULL);
    eco_gpusel_destroy(s);
}

static void test_bad_samples_and_reservations(void **state)
{
    (void)state;
    struct eco_gpusel *s = make(2, "live", NULL);
    static const struct {
        uint32_t gpu;
        struct eco_gpu_sample x;
        int rc;
    } samples[] = {
        {2, {0, 0, 0, 1}, -ENODEV},
        {0, {NAN, 0, 0, 1}, -EINVAL},
        {0, {0, 1.5, 0, 1}, -EINVAL},
        {0, {0, -0.1, 0, 1}, -EINVAL},
        {0, {0, NAN, 0, 1}, -EINVAL},
        {0, {0, 0, 0, 0}, -EINVAL}, /* no memory */
        {0, {0, 0, 2, 1}, -EINVAL}, /* used > total */
        {0, {5, 0, 0, 1}, 0},
        {0, {4, 0, 0, 1}, -EINVAL}, /* earlier than the previous sample */
        {0, {5, 1, 1, 1}, 0},       /* same time is fine */
    };
    for (size_t i = 0; i < NELEM(samples); i++)
        assert_int_equal(eco_gpusel_sample(s, samples[i].gpu, &samples[i].x), samples[i].rc);
    assert_int_equal(eco_gpusel_sample(s, 0, NULL), -EINVAL);
    assert_int_equal(status(s, 0, 5).last.t_s, 5);

    struct eco_gpu_request one = req(1, 1, 0, 1), two = req(2, 2, 0, 1);
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){0}, 0, &one), -EINVAL);
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){0}, 1, &two), -EINVAL); /* n != req */
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){2}, 1, &one), -EINVAL);
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){1, 1}, 2, &two), -EINVAL);
    assert_int_equal(eco_gpusel_reserve(s, NAN, (uint32_t[]){0}, 1, &one), -EINVAL);
    assert_int_equal(eco_gpusel_reserve(s, 0, NULL, 1, &one), -EINVAL);
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){0}, 1, &one), 0);
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){1}, 1, &one), -EEXIST);
    /* A full GPU: nothing of a multi-GPU job is recorded. */
    for (uint64_t j = 2; j <= ECO_GPUSEL_MAX_JOBS; j++)
        assert_int_equal(eco_gpusel_reserve(
                             s, 0, (uint32_t[]){0}, 1,
                             &(struct eco_gpu_request){.job_id = 100 + j, .n_gpus = 1, .share = 1}),
                         0);
    struct eco_gpu_request last = req(99, 2, 0, 1);
    assert_int_equal(eco_gpusel_reserve(s, 0, (uint32_t[]){1, 0}, 2, &last), -ENOSPC);
    assert_int_equal(status(s, 1, 0).n_jobs, 0);
    assert_int_equal(status(s, 0, 0).n_jobs, ECO_GPUSEL_MAX_JOBS);
    assert_int_equal(eco_gpusel_release(s, 7), -ENOENT);
    assert_int_equal(eco_gpusel_release(NULL, 1), -ENOENT);
    struct eco_gpusel_gpu st;
    assert_int_equal(eco_gpusel_gpu_status(s, 2, 0, &st), -ENODEV);
    eco_gpusel_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_hysteresis),
        cmocka_unit_test(test_window_smooths_spikes),
        cmocka_unit_test(test_live_choice),
        cmocka_unit_test(test_reservation_prevents_double_start),
        cmocka_unit_test(test_claim_expiry_and_settling),
        cmocka_unit_test(test_memthr_double_start),
        cmocka_unit_test(test_memthr_wait),
        cmocka_unit_test(test_live_measured_pairs),
        cmocka_unit_test(test_share),
        cmocka_unit_test(test_share_rules),
        cmocka_unit_test(test_share_gates),
        cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_memory_threshold),
        cmocka_unit_test(test_share_fit),
        cmocka_unit_test(test_bad_requests),
        cmocka_unit_test(test_bad_samples_and_reservations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
