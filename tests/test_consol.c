/* SPDX-License-Identifier: MIT */
/* Container consolidation: thresholds, overload and underload detection, source selection and
 * destinations on hand-built hosts, CloudSim's detectors against hand-computed values, the
 * threshold invariant of DGDDEP on random hosts, the workload builder, and a hand-computed
 * simulation with a migration (energy, pause, co-location). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/coloc.h"
#include "ecosched/consol.h"
#include "sim/consol_sim.h"
#include "ecosched/power.h"
#include "ecosched/rng.h"
#include "sim/trace.h"
#include "test_util.h"

/* ---- thresholds --------------------------------------------------------------------------- */

static void test_thresholds(void **state)
{
    (void)state;
    struct eco_consol_thresholds t;
    struct eco_error err = {{0}};
    eco_consol_thresholds_default(&t);
    assert_int_equal(eco_consol_thresholds_parse("0.2,0.9,0.1,0.7", &t, &err), 0);
    assert_near(t.lo_util, 0.2, 0);
    assert_near(t.hi_util, 0.9, 0);
    assert_near(t.lo_mem, 0.1, 0);
    assert_near(t.hi_mem, 0.7, 0);
    static const struct {
        const char *s, *needle;
    } bad[] = {
        {"0.2,1.5,0.1,0.7", "HI_UTIL = 1.5 is outside 0-1"},
        {"-0.1,0.8,0.1,0.7", "LO_UTIL = -0.1 is outside 0-1"},
        {"0.9,0.8,0.1,0.7", "LO_UTIL 0.9 must be below HI_UTIL 0.8"},
        {"0.3,0.8,0.7,0.7", "LO_MEM 0.7 must be below HI_MEM 0.7"},
        {"0.3,0.8,0.3", "HI_MEM is missing"},
        {"0.3,0.8,abc,0.8", "LO_MEM is not a number"},
        {"0.3,0.8,0.3,0.8,0.9", "unexpected text after HI_MEM"},
        {"", "LO_UTIL is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct eco_consol_thresholds keep = t;
        assert_int_equal(eco_consol_thresholds_parse(bad[i].s, &t, &err), -EINVAL);
        if (!strstr(err.msg, bad[i].needle))
            print_error("'%s': got '%s', want '%s'\n", bad[i].s, err.msg, bad[i].needle);
        assert_non_null(strstr(err.msg, bad[i].needle));
        assert_memory_equal(&keep, &t, sizeof t); /* unchanged on error */
    }
    /* Policies refuse bad thresholds at creation. */
    struct eco_consol_thresholds inv = {
        .lo_util = 0.9, .hi_util = 0.8, .lo_mem = 0.1, .hi_mem = 0.5};
    for (const struct eco_consol_ops *const *p = eco_consol_all(); *p; p++)
        assert_null((*p)->create(&inv, &err));
}

/* ---- CloudSim detectors --------------------------------------------------------------------- */

static void test_detectors(void **state)
{
    (void)state;
    double h[30];
    for (int i = 0; i < 12; i++)
        h[i] = i % 2 ? 0.6 : 0.4;
    /* median 0.5, every deviation 0.1: MAD 0.1, threshold 1 - 2.5 x 0.1 */
    assert_near(eco_consol_mad_threshold(h, 12, 2.5), 0.75, 1e-12);
    /* six 0.4 and six 0.6: Q1 at rank 2.75 is 0.4, Q3 at rank 8.25 is 0.6; 1 - 1.5 x 0.2 */
    assert_near(eco_consol_iqr_threshold(h, 12, 1.5), 0.7, 1e-12);
    assert_true(eco_consol_mad_threshold(h, 11, 2.5) < 0); /* too short: fallback */
    assert_true(eco_consol_iqr_threshold(h, 11, 1.5) < 0);
    for (int i = 0; i < 12; i++)
        h[i] = 0.05 * (i + 1);
    /* A straight line is fitted exactly whatever the weights: the last 10 samples are
     * 0.15..0.6 at x = 1..10, so y = 0.1 + 0.05 x; 2 periods ahead x = 12: 0.7. */
    assert_near(eco_consol_lr_predict(h, 12, 2), 0.7, 1e-9);
    assert_true(eco_consol_lr_predict(h, 9, 0) < 0);
}

/* ---- hand-built hosts ----------------------------------------------------------------------- */

#define MEM8 (8 * 32 * 1024.0) /* 8 V100 of 32 GiB */

static struct eco_consol_host host8(int on)
{
    return (struct eco_consol_host){.gpus = 8,
                                    .on = (uint8_t)on,
                                    .mem_cap_mb = MEM8,
                                    .base_w = 941,
                                    .gpu_idle_w = 23,
                                    .gpu_busy_w = 200,
                                    .off_w = 15,
                                    .boot_s = 300};
}

static struct eco_consol_ctr ctr(uint32_t host, double util, double mem, double mig)
{
    return (struct eco_consol_ctr){
        .host = host, .gpus = 1, .util_gpus = util, .mem_mb = mem, .mig_s = mig};
}

static void run_policy(const char *name, const struct eco_consol_host *h, uint32_t nh,
                       const struct eco_consol_ctr *c, uint32_t nc, struct eco_consol_decisions *d)
{
    const struct eco_consol_ops *ops = eco_consol_find(name);
    assert_non_null(ops);
    struct eco_consol *p = ops->create(NULL, NULL);
    assert_non_null(p);
    struct eco_consol_view v = {
        .period_s = 300, .hosts = h, .n_hosts = nh, .ctrs = c, .n_ctrs = nc};
    assert_int_equal(ops->decide(p, &v, d), 0);
    ops->destroy(p);
}

static int moved_to(const struct eco_consol_decisions *d, uint32_t c)
{
    for (size_t i = 0; i < d->n_moves; i++)
        if (d->moves[i].ctr == c)
            return (int)d->moves[i].to;
    return -1;
}

static void run_policy_t(const char *name, const struct eco_consol_thresholds *t,
                         const struct eco_consol_host *h, uint32_t nh,
                         const struct eco_consol_ctr *c, uint32_t nc,
                         struct eco_consol_decisions *d)
{
    const struct eco_consol_ops *ops = eco_consol_find(name);
    assert_non_null(ops);
    struct eco_consol *p = ops->create(t, NULL);
    assert_non_null(p);
    struct eco_consol_view v = {
        .period_s = 300, .hosts = h, .n_hosts = nh, .ctrs = c, .n_ctrs = nc};
    assert_int_equal(ops->decide(p, &v, d), 0);
    ops->destroy(p);
}

/* Every policy's knob from the thresholds struct: THR's threshold moves the overload point;
 * bad knobs are refused with the knob named. */
static void test_knobs(void **state)
{
    (void)state;
    struct eco_consol_thresholds t;
    struct eco_error err = {{0}};
    eco_consol_thresholds_default(&t);
    /* host 0 at 6/8 = 0.75: not over THR 0.8, over THR 0.7 (the 1.0 one, quickest, leaves) */
    struct eco_consol_host h[2] = {host8(1), host8(1)};
    struct eco_consol_ctr c[3] = {ctr(0, 5.0, 10000, 9), ctr(0, 1.0, 2000, 2),
                                  ctr(1, 2.0, 1000, 9)};
    struct eco_consol_decisions d = {0};
    t.underload_horizon_s = -1;
    run_policy_t("thr-mmt", &t, h, 2, c, 3, &d);
    assert_int_equal(moved_to(&d, 1), -1);
    t.thr_upper = 0.7;
    run_policy_t("thr-mmt", &t, h, 2, c, 3, &d);
    assert_int_equal(moved_to(&d, 1), 1);
    eco_consol_decisions_fini(&d);
    /* parse keeps the knobs */
    assert_int_equal(eco_consol_thresholds_parse("0.2,0.9,0.1,0.7", &t, &err), 0);
    assert_near(t.thr_upper, 0.7, 0);
    static const struct {
        size_t off;
        double v;
        const char *needle;
    } bad[] = {
        {offsetof(struct eco_consol_thresholds, thr_upper), 1.5, "thr = 1.5 is outside 0-1"},
        {offsetof(struct eco_consol_thresholds, mad_safety), -1, "mad-safety = -1 is outside"},
        {offsetof(struct eco_consol_thresholds, iqr_safety), 11, "iqr-safety = 11 is outside"},
        {offsetof(struct eco_consol_thresholds, lr_safety), NAN, "lr-safety = nan is outside"},
        {offsetof(struct eco_consol_thresholds, underload_horizon_s), 1e9,
         "underload-horizon = 1e+09 s is above a year"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct eco_consol_thresholds b;
        eco_consol_thresholds_default(&b);
        *(double *)((char *)&b + bad[i].off) = bad[i].v;
        assert_int_equal(eco_consol_thresholds_check(&b, &err), -EINVAL);
        if (!strstr(err.msg, bad[i].needle))
            print_error("got '%s', want '%s'\n", err.msg, bad[i].needle);
        assert_non_null(strstr(err.msg, bad[i].needle));
        assert_null(eco_consol_find("mad-mmt")->create(&b, NULL));
    }
}

/* DGDDEP's underload energy rule on a hand-built pair: host 0 (0.5/8) is under the lower
 * thresholds; emptying it into host 1 (5.5/8 -> 6/8) gains its idle power above off over the
 * horizon less one boot, G = (P0 - off) H - P0 boot; it costs the migration, M. With G = 1.15 M
 * it moves while host 1's history is flat (no risk); with host 1's history swinging by 4 GPUs
 * a period, the chance of overflowing 8 GPUs from 6 is 0.5 erfc(2 / (4 sqrt 2)) = 0.31, the
 * risk 0.31 M (and 14 kJ of overflow), and G < M + 0.31 M: it stays. */
static void test_underload_rule(void **state)
{
    (void)state;
    struct eco_consol_host h[2] = {host8(1), host8(1)};
    double flat[12], swing[12], small[12];
    for (int i = 0; i < 12; i++) {
        flat[i] = 5.5;
        swing[i] = i % 2 ? 7.5 : 3.5;
        small[i] = 0.5;
    }
    struct eco_consol_ctr c[2] = {ctr(0, 0.5, 1000, 0), ctr(1, 5.5, 1000, 0)};
    c[0].hist = small;
    c[0].n_hist = 12;
    c[1].hist = flat;
    c[1].n_hist = 12;
    const double M = 1e6, P0 = 941 + 8 * 23;
    c[0].mig_j = M;
    struct eco_consol_thresholds t;
    eco_consol_thresholds_default(&t);
    t.underload_horizon_s = (1.15 * M + P0 * 300) / (P0 - 15);
    struct eco_consol_decisions d = {0};
    run_policy_t("dgddep", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), 1);
    assert_int_equal(d.n_off, 1);
    c[1].hist = swing; /* the summed history swings 4 <-> 8 */
    double risk = 0.5 * erfc((8 - 6.0) / (4 * sqrt(2.0)));
    assert_true(1.15 < 1 + risk); /* the case is the one described */
    run_policy_t("dgddep", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), -1);
    assert_int_equal(d.n_off, 0);
    /* No migration cost at all: the overflow it adds to the swinging host 1 alone, expected
     * excess E[(X - 8)+] at a mean of 6 less at 5.5 (spread 4), for a period at a full host's
     * 2541 W / 8 per GPU, outweighs a gain of 10 kJ; beside a flat history it moves. */
    c[0].mig_j = 0;
    double ex6 =
        4 * exp(-0.5 * 0.25) / sqrt(2 * 3.14159265358979323846) - 2 * 0.5 * erfc(0.5 / sqrt(2.0));
    double ex55 = 4 * exp(-0.5 * 0.625 * 0.625) / sqrt(2 * 3.14159265358979323846) -
                  2.5 * 0.5 * erfc(0.625 / sqrt(2.0));
    double over_j = (ex6 - ex55) * 300 * (941 + 8 * 200) / 8.0;
    assert_true(over_j > 13e3 && over_j < 14.5e3);
    t.underload_horizon_s = (10e3 + P0 * 300) / (P0 - 15);
    run_policy_t("dgddep", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), -1);
    c[1].hist = flat;
    run_policy_t("dgddep", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), 1);
    c[0].mig_j = M;
    /* A gain below the migration's cost alone: it stays even without risk. */
    t.underload_horizon_s = (0.9 * M + P0 * 300) / (P0 - 15);
    run_policy_t("dgddep", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), -1);
    /* The rule off (negative horizon): the fixed thresholds alone, it moves. */
    t.underload_horizon_s = -1;
    run_policy_t("dgddep", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), 1);
    /* CloudSim's policies keep their own rule unless a horizon is given. */
    t.underload_horizon_s = 0;
    run_policy_t("dual-pabfd", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), 1);
    t.underload_horizon_s = (0.9 * M + P0 * 300) / (P0 - 15);
    run_policy_t("dual-pabfd", &t, h, 2, c, 2, &d);
    assert_int_equal(moved_to(&d, 0), -1);
    eco_consol_decisions_fini(&d);
}

/* Host 0 at 6.5/8 = 0.8125 GPU utilisation is over 0.8. Removing the 3.0 (mig 10 s), the 2.0
 * (mig 5 s) or the 1.5 (mig 20 s) container each brings it under: dual selection takes the
 * quickest of those, the 2.0 one, to host 1 (5/8; host 2 costs the same power, host 1 comes
 * first). Host 2 (0.5/8, memory 1%) is under both lower thresholds: it is evacuated into host
 * 1 (5.5/8) and powers down. */
static void test_dual_selection(void **state)
{
    (void)state;
    struct eco_consol_host h[3] = {host8(1), host8(1), host8(1)};
    struct eco_consol_ctr c[5] = {
        ctr(0, 3.0, 20000, 10), ctr(0, 2.0, 10000, 5),  ctr(0, 1.5, 40000, 20),
        ctr(2, 0.5, 2000, 2),   ctr(1, 3.0, 20000, 10),
    };
    struct eco_consol_decisions d = {0};
    for (int pol = 0; pol < 2; pol++) {
        run_policy(pol ? "dual-pabfd" : "dgddep", h, 3, c, 5, &d);
        assert_int_equal(moved_to(&d, 0), -1);
        assert_int_equal(moved_to(&d, 2), -1);
        assert_int_equal(moved_to(&d, 4), -1);
        assert_int_equal(moved_to(&d, 1), 1);
        assert_int_equal(moved_to(&d, 3), 1); /* not to host 0, which was overloaded */
        assert_int_equal(d.n_moves, 2);
        assert_int_equal(d.n_off, 1);
        assert_int_equal(d.off[0], 2);
        assert_int_equal(d.n_wake, 0);
    }
    /* Memory alone overloads too: host 0 at 220,000 MiB of 262,144 (0.84) with 1 GPU used. */
    struct eco_consol_ctr m[3] = {ctr(0, 0.5, 150000, 30), ctr(0, 0.5, 70000, 12),
                                  ctr(1, 4.0, 100000, 20)};
    run_policy("dgddep", h, 2, m, 3, &d);
    assert_int_equal(moved_to(&d, 1), 1); /* 150,000 left = 0.57: the 70,000 one suffices */
    /* GPU-utilisation-only THR does not see memory. */
    run_policy("thr-mmt", h, 2, m, 3, &d);
    assert_int_equal(moved_to(&d, 1), -1);
    eco_consol_decisions_fini(&d);
}

/* MMT under THR 0.8: host 0 at 7/8 = 0.875; the quickest container (1.0 GPU, 2 s) leaves
 * first: 6/8 = 0.75 is no longer over. */
static void test_mmt(void **state)
{
    (void)state;
    struct eco_consol_host h[2] = {host8(1), host8(1)};
    struct eco_consol_ctr c[4] = {ctr(0, 4.0, 10000, 9), ctr(0, 2.0, 8000, 7), ctr(0, 1.0, 2000, 2),
                                  ctr(1, 4.0, 10000, 9)};
    struct eco_consol_decisions d = {0};
    run_policy("thr-mmt", h, 2, c, 4, &d);
    assert_int_equal(moved_to(&d, 2), 1);
    assert_int_equal(moved_to(&d, 0), -1);
    assert_int_equal(moved_to(&d, 1), -1);
    /* Host 0 was overloaded and host 1 received a container: neither is a candidate for
     * evacuation in the same pass; nothing more moves. */
    eco_consol_decisions_fini(&d);
}

/* DGDDEP wakes an off host only when no host that is on can take the container. */
static void test_wake(void **state)
{
    (void)state;
    struct eco_consol_host h[3] = {host8(1), host8(1), host8(0)};
    struct eco_consol_ctr c[4] = {ctr(0, 3.5, 1000, 1), ctr(0, 3.5, 1000, 1), ctr(1, 6.0, 1000, 1),
                                  ctr(0, 0.4, 500, 1)};
    struct eco_consol_decisions d = {0};
    /* host 0 at 7.4/8 is over; the 0.4 one alone does not bring it under 0.8 (7/8); a 3.5 one
     * does (3.9/8), and fits nowhere that is on (host 1: 9.5/8), so host 2 wakes. */
    run_policy("dgddep", h, 3, c, 4, &d);
    assert_int_equal(moved_to(&d, 0), 2);
    assert_int_equal(d.n_wake, 1);
    assert_int_equal(d.wake[0], 2);
    /* With room on host 1 (2.0 GPUs used), nothing wakes. */
    c[2].util_gpus = 2.0;
    run_policy("dgddep", h, 3, c, 4, &d);
    assert_int_equal(moved_to(&d, 0), 1);
    assert_int_equal(d.n_wake, 0);
    eco_consol_decisions_fini(&d);
}

/* On random hosts and containers DGDDEP and dual-pabfd never leave a destination over either
 * upper threshold. */
static void test_never_over_threshold(void **state)
{
    (void)state;
    struct eco_rng r;
    eco_rng_init(&r, 7);
    enum { NH = 12, NC = 80 };
    struct eco_consol_host h[NH];
    struct eco_consol_ctr c[NC];
    struct eco_consol_decisions d = {0};
    size_t total_moves = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < NH; i++)
            h[i] = host8(eco_rng_uniform(&r) < 0.8);
        h[0].on = 1;
        for (int i = 0; i < NC; i++) {
            uint32_t host;
            do
                host = (uint32_t)(eco_rng_uniform(&r) * NH);
            while (!h[host].on);
            c[i] = ctr(host, eco_rng_uniform(&r) * 1.2, eco_rng_uniform(&r) * 30000,
                       1 + eco_rng_uniform(&r) * 30);
        }
        for (int pol = 0; pol < 2; pol++) {
            run_policy(pol ? "dual-pabfd" : "dgddep", h, NH, c, NC, &d);
            double u[NH] = {0}, m[NH] = {0};
            uint32_t where[NC];
            int dest[NH] = {0};
            for (int i = 0; i < NC; i++)
                where[i] = c[i].host;
            for (size_t k = 0; k < d.n_moves; k++) {
                where[d.moves[k].ctr] = d.moves[k].to;
                dest[d.moves[k].to] = 1;
            }
            for (int i = 0; i < NC; i++) {
                u[where[i]] += c[i].util_gpus;
                m[where[i]] += c[i].mem_mb;
            }
            for (int k = 0; k < NH; k++)
                if (dest[k]) {
                    assert_true(u[k] / 8 <= ECO_CONSOL_HI_UTIL + 1e-9);
                    assert_true(m[k] / MEM8 <= ECO_CONSOL_HI_MEM + 1e-9);
                }
            for (size_t k = 0; k < d.n_off; k++) /* hosts powered down hold nothing */
                for (int i = 0; i < NC; i++)
                    assert_true(where[i] != d.off[k]);
            total_moves += d.n_moves;
        }
    }
    assert_true(total_moves > 100); /* the property was exercised */
    eco_consol_decisions_fini(&d);
}

static void test_host_power(void **state)
{
    (void)state;
    struct eco_consol_host h = host8(1);
    assert_near(eco_consol_host_power_w(&h, 0), 941 + 8 * 23, 1e-9);
    assert_near(eco_consol_host_power_w(&h, 2.5), 941 + 8 * 23 + 2.5 * 177, 1e-9);
    assert_near(eco_consol_host_power_w(&h, 12), 941 + 8 * 200, 1e-9); /* capped at 8 GPUs */
}

/* The policies' power estimate has the simulator's GPU power states: an idle GPU without a
 * context 23 W, with one 40 W, 60 W at ECO_LOW_UTIL (0.15), 200 W busy. */
static struct eco_consol_host host8_states(int on)
{
    struct eco_consol_host h = host8(on);
    h.gpu_ctx_w = 40;
    h.gpu_low_w = 60;
    return h;
}

/* One held GPU at utilisation u of host8_states, W. */
static double held8(double u)
{
    return u <= 0.15 ? 40 + 20 * u / 0.15 : 60 + 140 * (u - 0.15) / 0.85;
}

static void test_policy_power_states(void **state)
{
    (void)state;
    struct eco_consol_host h = host8_states(1);
    assert_near(eco_consol_host_power_held_w(&h, 0, 0), 941 + 8 * 23, 1e-9);
    /* 0.2 GPUs of load on one held GPU or spread over two: the second costs its context. */
    double one = eco_consol_host_power_held_w(&h, 0.2, 1);
    double two = eco_consol_host_power_held_w(&h, 0.2, 2);
    assert_near(one, 941 + 7 * 23 + held8(0.2), 1e-9);
    assert_near(two, 941 + 6 * 23 + 2 * held8(0.1), 1e-9);
    assert_true(two - one > 15 && two - one < 16);
    /* Load that needs both GPUs: holding one or two is the same; at full load packing saves
     * nothing. */
    assert_near(eco_consol_host_power_held_w(&h, 1.6, 1), eco_consol_host_power_held_w(&h, 1.6, 2),
                1e-9);
    assert_near(eco_consol_host_power_held_w(&h, 8, 8), 941 + 8 * 200, 1e-9);
    assert_near(eco_consol_host_power_held_w(&h, 12, 20), 941 + 8 * 200, 1e-9); /* capped */
    assert_near(eco_consol_host_power_w(&h, 0.2), one, 1e-9);

    /* Host 0 is over 0.8 of its GPUs (6.45 of 8); its one-GPU container 1 (0.1 GPUs, quick to
     * move) leaves. Host 1 runs a one-GPU container at 0.8, host 2 an eight-GPU one at 0.8
     * (0.1 on each GPU): on host 1 container 1 needs a GPU of its own (a new context, +28.8 W),
     * on host 2 it shares held GPUs at low load (+13.3 W). The linear model sees 0.1 x 177 W
     * on both and keeps the first. Both PABFD and DGDDEP take host 2. */
    struct eco_consol_host hs[3] = {host8_states(1), host8_states(1), host8_states(1)};
    struct eco_consol_ctr c[4] = {ctr(0, 6.35, 1000, 100), ctr(0, 0.1, 1000, 1),
                                  ctr(1, 0.8, 1000, 1), ctr(2, 0.8, 1000, 1)};
    c[0].gpus = 8;
    c[3].gpus = 8;
    double on1 = 941 + 6 * 23 + 2 * held8(0.45) - (941 + 7 * 23 + held8(0.8));
    double on2 = 8 * (held8(0.9 / 8) - held8(0.1));
    assert_near(on1, 28.76, 0.01);
    assert_near(on2, 13.33, 0.01);
    const char *pols[] = {"dgddep", "dual-pabfd"};
    for (size_t i = 0; i < 2; i++) {
        struct eco_consol_decisions d = {0};
        run_policy(pols[i], hs, 3, c, 4, &d);
        assert_int_equal(moved_to(&d, 1), 2);
        assert_int_equal(moved_to(&d, 0), -1);
        eco_consol_decisions_fini(&d);
    }
}

/* ---- workload builder ----------------------------------------------------------------------- */

static void test_workload(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz",
             ECO_SOURCE_DIR);
    struct eco_jobset *pods = eco_jobset_create();
    struct eco_trace_opts o = {.format = ECO_TRACE_OPENB};
    struct eco_error err = {{0}};
    assert_int_equal(eco_trace_load(path, &o, pods, &err), 0);
    struct eco_consol_workload w, w2;
    assert_int_equal(eco_consol_workload_build(pods, 500, 3, 3600, &w, &err), 0);
    assert_int_equal(eco_consol_workload_build(pods, 500, 3, 3600, &w2, &err), 0);
    assert_memory_equal(w.c, w2.c, 500 * sizeof *w.c); /* same seed, same containers */
    size_t idle = 0, samples = 0;
    double rho = exp(-300.0 / 3600);
    for (size_t i = 0; i < w.n; i++) {
        const struct eco_consol_container *k = &w.c[i];
        assert_true(k->util_alone <= k->request / k->gpus + 0.1 + 1e-9 ||
                    k->util_alone < 0.06); /* fits its share, or the lowest workload */
        const struct eco_coloc_workload *cw = eco_coloc_workload(k->workload);
        assert_int_equal(cw->source, ECO_COLOC_LUCID);
        struct eco_consol_series s;
        eco_consol_series_init(&s, k);
        for (int t = 0; t < 100; t++) {
            double u, m;
            eco_consol_series_next(&s, k, rho, 32768, &u, &m);
            assert_true(u >= 0 && u <= k->gpus * k->util_alone * 1.1 + 1e-9);
            assert_true(m >= 0 && m <= k->gpus * 32768 + 1e-6);
            idle += u == 0;
            samples++;
        }
    }
    /* Acme's Seren GPUs are idle (0% utilisation) in 31.5% of samples. */
    double share = (double)idle / (double)samples;
    assert_true(share > 0.25 && share < 0.38);
    eco_consol_workload_fini(&w2);
    struct eco_jobset empty = {0};
    assert_int_equal(eco_consol_workload_build(&empty, 5, 1, 3600, &w2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no GPU pods"));
    eco_consol_workload_fini(&w);
    eco_jobset_destroy(pods);
}

/* ---- a hand-computed simulation -------------------------------------------------------------- */

/* Container 0: 1 GPU busy, 10 GiB; container 1: 2 GPUs busy, 20 GiB; both 8-GPU containers, so
 * first fit by request puts them on hosts 0 and 1. */
static void demand(void *ctx, uint32_t c, size_t step, double *u, double *m)
{
    (void)ctx;
    (void)step;
    *u = c == 0 ? 1.0 : 2.0;
    *m = c == 0 ? 10240 : 20480;
}

/* The simulator's GPU power states on a hand-computed host: 8 V100 slots (DGX-1 class host
 * (522 + 8 x 52.375) / 3 = 313.67 W), busy 200 W. Two containers of 5 % each on one GPU
 * (10 % on it) or on two GPUs (5 % each): both points lie on the first segment of the curve
 * (idle-with-context 26.78 W to 37 W at 15 %), so spreading costs exactly one more GPU's
 * context, idle_ctx_w - idle_w = 0.27 x (37 - 23) = 3.78 W. At 50 % each the convex upper
 * segment (37 W at 15 % to 200 W) makes packing cost more: packed 100 % = 200 W against 2 x
 * (37 + 163 x 0.35 / 0.85) = 208.24 W, less the one idle GPU's 23 W: packing +14.76 W. */
static void test_sim_gpu_power_states(void **state)
{
    (void)state;
    struct eco_node_group g;
    eco_node_group_defaults(&g, eco_catalog_find("V100"), 8);
    const double ctx = 23 + 0.27 * 14, base = (522 + 8 * 52.375) / 3;
    double one[64] = {0.10}, two[64] = {0.05, 0.05};
    double p1 = eco_consol_sim__host_power_w(&g, 200, 8, one, 0x1);
    double p2 = eco_consol_sim__host_power_w(&g, 200, 8, two, 0x3);
    assert_near(p1, base + ctx + (37 - ctx) * 0.10 / 0.15 + 7 * 23, 1e-9);
    assert_near(p2 - p1, ctx - 23, 1e-9);
    assert_near(p2 - p1, 3.78, 1e-9);
    double one_h[64] = {1.0}, two_h[64] = {0.5, 0.5};
    double q1 = eco_consol_sim__host_power_w(&g, 200, 8, one_h, 0x1);
    double q2 = eco_consol_sim__host_power_w(&g, 200, 8, two_h, 0x3);
    assert_near(q1 - q2, 200 + 23 - 2 * (37 + 163 * 0.35 / 0.85), 1e-9);
    /* No container anywhere: base and eight GPUs idle without a context. */
    double none[64] = {0};
    assert_near(eco_consol_sim__host_power_w(&g, 200, 8, none, 0), base + 8 * 23, 1e-9);
}

static void test_sim_migration(void **state)
{
    (void)state;
    struct eco_cluster *cl = NULL;
    struct eco_error err = {{0}};
    assert_int_equal(eco_cluster_parse_spec("2x8:V100", &cl, &err), 0);
    int w0 = eco_coloc_find("ResNet18 CIFAR-10 bs32", NULL);
    int w1 = eco_coloc_find("VGG CIFAR-10 bs64", NULL);
    assert_true(w0 >= 0 && w1 >= 0);
    struct eco_consol_container cs[2] = {
        {.gpus = 8,
         .request = 8,
         .workload = (uint32_t)w0,
         .util_alone = 0.5,
         .gmem_mb = 1,
         .host_mem_mb = 4096},
        {.gpus = 8, .request = 8, .workload = (uint32_t)w1, .util_alone = 0.5, .gmem_mb = 1},
    };
    struct eco_consol_workload w = {.c = cs, .n = 2, .corr_s = 3600};
    /* checkpoint 2 s + 10 GiB out over PCIe 1 s + 14 GiB over the network 14 s + 1 s back in +
     * restore 3 s: 21 s, both hosts drawing 60 W more meanwhile */
    const struct eco_consol_mig mig = {
        .bw_mibs = 1024, .pcie_mibs = 10240, .ckpt_fixed_s = 2, .restore_fixed_s = 3, .host_w = 60};
    assert_near(eco_consol_mig_time_s(&mig, 10240, 4096), 21, 1e-12);
    struct eco_consol_sim_config cfg = {.policy = eco_consol_find("dgddep"),
                                        .period_s = 300,
                                        .horizon_s = 900,
                                        .mig = &mig,
                                        .demand = demand};
    eco_consol_thresholds_default(&cfg.thresholds);
    struct eco_consol_summary s;
    assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s, &err), 0);
    /* At 300 s both hosts are under the lower thresholds; host 0 (1/8) is the less used: its
     * container moves to host 1 (3/8 <= 0.8) in 21 s and host 0 powers off (the energy rule:
     * an hour of host 0's idle power less a boot is far above the migration's cost). */
    assert_int_equal(s.migrations, 1);
    assert_int_equal(s.shutdowns, 1);
    assert_int_equal(s.boots, 0);
    const struct eco_node_group *g = &cl->groups[0];
    double busy;
    assert_int_equal(
        eco_power_eval(cl->nodes[0].type, ECO_WORKLOAD_GENERIC, g->limit_w, NULL, &busy), 0);
    struct eco_consol_host H = {
        .gpus = 8, .base_w = g->base_w, .gpu_idle_w = g->gpu_idle_w, .gpu_busy_w = busy};
    /* A host without containers: no GPU holds a context. */
    double P0 = eco_consol_host_power_w(&H, 0);
    /* Both containers span all 8 GPUs: each GPU holds a context and an eighth of the load. */
#define ON_W(u) (g->base_w + 8 * eco_node_group_gpu_power_w(g, busy, (u) / 8.0))
    double e0 = (ON_W(1) + ON_W(2)) * 300;
    /* period 2: host 0 stays on for the 21 s migration, then off; host 1 runs container 1
     * and container 0 for the 279 s after its restore */
    double e1 = P0 * 21 + g->off_w * 279 + ON_W(2 + 279.0 / 300) * 300;
    double e2 = g->off_w * 300 + ON_W(3) * 300;
#undef ON_W
    double emig = 21 * 2 * 60.0;
    assert_near(s.energy_migration_j, emig, 1e-6);
    assert_near(s.energy_j, e0 + e1 + e2 + emig, 1e-6);
    assert_near(s.energy_j, s.energy_on_j + s.energy_off_j + s.energy_boot_j + s.energy_migration_j,
                1e-6);
    /* Lost work over 1800 active container-seconds: 21 s paused; on host 1 the two share all
     * eight GPUs for 290 s (container 0) and 600 s (container 1), at their measured pair
     * speeds. */
    struct eco_coloc_pair pr;
    assert_int_equal(eco_coloc_pair((size_t)w0, (size_t)w1, &pr), 0);
    assert_near(s.lost_migration, 21.0 / 1800, 1e-12);
    /* A measured speed above 1 (noise: 1.027 here) counts as 1: sharing never speeds a job. */
    double lc = (279 + 300) * (1 - fmin(1, pr.speed_a)) + 600 * (1 - fmin(1, pr.speed_b));
    assert_near(s.lost_coloc, lc / 1800, 1e-12);
    assert_near(s.lost_contention, 0, 1e-12);
    assert_near(s.avg_hosts_on, (2 + 1 + 1) / 3.0, 1e-12);
    assert_near(s.sla_violation, 0, 0);
    /* Work in GPU-seconds: 1 GPU x 900 s and 2 GPUs x 900 s demanded; lost: container 0's 21 s
     * pause and its co-location loss, container 1's. */
    double lost_w = 1.0 * 21 + 1.0 * (279 + 300) * (1 - fmin(1, pr.speed_a)) +
                    2.0 * 600 * (1 - fmin(1, pr.speed_b));
    assert_near(s.work_demanded_gpu_s, 2700, 1e-9);
    assert_near(s.work_useful_gpu_s, 2700 - lost_w, 1e-9);
    assert_near(s.energy_charged_j, s.energy_j * 2700 / (2700 - lost_w), 1e-6);
    /* The default pairs (Lucid's) as judge and decider are today's simulation, byte for byte;
     * judged with Gavel's pairs the co-location loss is that of the two containers' Gavel
     * counterparts on V100, and the decisions (no interference on this pair) are the same. */
    char *js = eco_consol_summary_json(&s);
    cfg.judge = ECO_CONSOL_PAIRS_LUCID;
    cfg.decide = ECO_CONSOL_PAIRS_GAVEL;
    struct eco_consol_summary s2;
    assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s2, &err), 0);
    assert_near(s2.lost_coloc, s.lost_coloc, 0);
    cfg.judge = ECO_CONSOL_PAIRS_GAVEL;
    cfg.decide = ECO_CONSOL_PAIRS_LUCID;
    assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s2, &err), 0);
    int g0 = eco_coloc_gavel_match((size_t)w0, "V100"),
        g1 = eco_coloc_gavel_match((size_t)w1, "V100");
    assert_true(g0 >= 0 && g1 >= 0);
    struct eco_coloc_pair pg;
    double sa = ECO_COLOC_TIMESLICE, sb = ECO_COLOC_TIMESLICE;
    if (!eco_coloc_pair((size_t)g0, (size_t)g1, &pg) && pg.feasible)
        sa = pg.speed_a;
    if (!eco_coloc_pair((size_t)g1, (size_t)g0, &pg) && pg.feasible)
        sb = pg.speed_a;
    double lg = (279 + 300) * (1 - fmin(1, sa)) + 600 * (1 - fmin(1, sb));
    assert_near(s2.lost_coloc, lg / 1800, 1e-12);
    assert_true(fabs(lg - lc) > 1); /* the judges differ on this pair */
    assert_int_equal(s2.migrations, s.migrations);
    cfg.judge = 2;
    assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "must be lucid or gavel"));
    free(js);
    eco_cluster_destroy(cl);
}

/* The migration model's defaults (docs/models/energy.md, "Migration"): a 10 GiB GPU container
 * with 4 GiB of host memory pauses 2 + 2 x 10240 / 11444 + 14336 / 596 + 3 = 30.84 s, and the
 * two hosts' copy power costs 2 x 60 W over it. */
static void test_mig_model(void **state)
{
    (void)state;
    struct eco_consol_mig m;
    eco_consol_mig_default(&m, 0);
    assert_near(m.bw_mibs, 596.046, 1e-3);    /* half of 10 Gb/s */
    assert_near(m.pcie_mibs, 11444.09, 1e-2); /* 12 GB/s, PCIe 3.0 x16 in practice */
    assert_near(m.ckpt_fixed_s, 2, 0);
    assert_near(m.restore_fixed_s, 3, 0);
    assert_near(m.host_w, 60, 0);
    double t = eco_consol_mig_time_s(&m, 10240, 4096);
    assert_near(t, 2 + 2 * 10240 / 11444.0918 + 14336 / 596.0464 + 3, 1e-3);
    assert_near(t, 30.84, 0.01);
    assert_near(eco_consol_mig_energy_j(&m, t), 120 * t, 1e-9);
    /* host memory counts: 4 GiB more is 6.9 s more */
    assert_near(eco_consol_mig_time_s(&m, 10240, 8192) - t, 4096 / 596.0464, 1e-6);
    eco_consol_mig_default(&m, 1024);
    assert_near(m.bw_mibs, 1024, 0);
    /* The workload builder gives each container 4 GiB of host memory per GPU requested. */
    assert_near(ECO_CONSOL_HOST_MEM_MIB_PER_GPU, 4096, 0);
}

/* Lost work charged: two 1-GPU containers (0.8 GPU busy each, on different GPUs: no
 * co-tenant) on one 8-GPU V100 host whose memory they overcommit 1.25 x: both run at 1 / 1.25
 * of their speed, so 20% of the work is lost. The host's energy E = P(1.6) x 3600 s buys 80%
 * of the work: the charged energy is E / 0.8 = 1.25 E, 25% above what overcommit reports. */
static void demand_overcommit(void *ctx, uint32_t c, size_t step, double *u, double *m)
{
    (void)c;
    (void)step;
    *u = 0.8;
    *m = *(const double *)ctx;
}

static void test_lost_work_charged(void **state)
{
    (void)state;
    struct eco_cluster *cl = NULL;
    struct eco_error err = {{0}};
    assert_int_equal(eco_cluster_parse_spec("1x8:V100", &cl, &err), 0);
    const struct eco_gpu_type *gt = eco_catalog_get(cl->nodes[0].type);
    double cap = 8 * gt->mem_gb * 1024.0, each = 0.625 * cap;
    int w0 = eco_coloc_find("ResNet18 CIFAR-10 bs32", NULL);
    struct eco_consol_container cs[2] = {
        {.gpus = 1, .request = 1, .workload = (uint32_t)w0, .util_alone = 0.8, .gmem_mb = 1},
        {.gpus = 1, .request = 1, .workload = (uint32_t)w0, .util_alone = 0.8, .gmem_mb = 1},
    };
    struct eco_consol_workload w = {.c = cs, .n = 2, .corr_s = 3600};
    struct eco_consol_sim_config cfg = {.policy = eco_consol_find("none"),
                                        .period_s = 300,
                                        .horizon_s = 3600,
                                        .demand = demand_overcommit,
                                        .demand_ctx = &each};
    eco_consol_thresholds_default(&cfg.thresholds);
    struct eco_consol_summary s;
    assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s, &err), 0);
    const struct eco_node_group *g = &cl->groups[0];
    double busy;
    assert_int_equal(
        eco_power_eval(cl->nodes[0].type, ECO_WORKLOAD_GENERIC, g->limit_w, NULL, &busy), 0);
    /* the two containers on GPUs 0 and 1, each at 0.8 and holding a context */
    double load[8] = {0.8, 0.8};
    double E = eco_consol_sim__host_power_w(g, busy, 8, load, 0x3) * 3600;
    assert_near(s.energy_j, E, 1e-6);
    assert_near(s.lost_contention, 0.2, 1e-12);
    assert_near(s.work_demanded_gpu_s, 1.6 * 3600, 1e-9);
    assert_near(s.work_useful_gpu_s, 0.8 * 1.6 * 3600, 1e-9);
    assert_near(s.energy_charged_j, 1.25 * E, 1e-6);
    assert_near(s.energy_per_work_j, E / (0.8 * 1.6 * 3600), 1e-9);
    char *js = eco_consol_summary_json(&s);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"lost_work_share\": 0.2"));
    free(js);
    /* Within the memory, nothing is lost and nothing charged. */
    each = 0.5 * cap;
    assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s, &err), 0);
    assert_near(s.energy_charged_j, s.energy_j, 1e-9);
    eco_cluster_destroy(cl);
}

/* DGDDEP's re-allocation cost charges a container its share of the host's idle power: from an
 * overloaded host (7 of 8 GPUs busy) its quickest container (1 GPU busy) goes to the fuller of
 * two hosts that are on (4 GPUs busy, not 1), where the power rise alone is the same on both
 * (one more GPU busy) and PABFD takes the first of them. */
static void test_dgddep_idle_share(void **state)
{
    (void)state;
    struct eco_consol_host h[3] = {host8_states(1), host8_states(1), host8_states(1)};
    struct eco_consol_ctr c[12];
    for (int i = 0; i < 12; i++)
        c[i] = ctr(i < 7 ? 0 : i < 8 ? 1 : 2, 1.0, 1000, i == 6 ? 5 : 20);
    struct eco_consol_thresholds t;
    eco_consol_thresholds_default(&t);
    t.underload_horizon_s = -1;
    struct eco_consol_decisions d = {0};
    run_policy_t("dgddep", &t, h, 3, c, 12, &d);
    assert_int_equal(moved_to(&d, 6), 2);
    run_policy_t("dual-pabfd", &t, h, 3, c, 12, &d);
    assert_int_equal(moved_to(&d, 6), 1);
    eco_consol_decisions_fini(&d);
}

/* ---- the co-location gate ------------------------------------------------------------------ */

static double gate_fake(void *ctx, uint32_t c, uint32_t h, const uint32_t *on_host, size_t n)
{
    (void)c;
    (void)on_host;
    (void)n;
    (*(int *)ctx)++;
    return h == 1 ? 0.7 : 1.0; /* joining host 1 would slow someone to 70 % */
}

/* Host 0 is over its upper threshold; its quickest container (3 GPUs busy) leaves. First fit
 * (dual-ff) and PABFD (thr-mmt) would put it on host 1; the gate refuses host 1 when the
 * predicted slowdown (30 %) is above the knob, not when it is within. */
static void test_coloc_gate(void **state)
{
    (void)state;
    struct eco_consol_host h[3] = {host8(1), host8(1), host8(1)};
    struct eco_consol_ctr c[4] = {ctr(0, 4.0, 1000, 20), ctr(0, 3.0, 1000, 10),
                                  ctr(1, 1.5, 1000, 5), ctr(2, 1.0, 1000, 5)};
    const char *pols[] = {"dual-ff", "thr-mmt", "dgddep"};
    for (size_t k = 0; k < sizeof pols / sizeof pols[0]; k++) {
        const struct eco_consol_ops *ops = eco_consol_find(pols[k]);
        assert_non_null(ops);
        const double gates[] = {0, 0.4, 0.1};
        const int want[] = {1, 1, 2};
        for (int g = 0; g < 3; g++) {
            struct eco_consol_thresholds t;
            eco_consol_thresholds_default(&t);
            t.underload_horizon_s = -1;
            t.coloc_gate = gates[g];
            int calls = 0;
            struct eco_consol *p = ops->create(&t, NULL);
            assert_non_null(p);
            struct eco_consol_view v = {.period_s = 300,
                                        .hosts = h,
                                        .n_hosts = 3,
                                        .ctrs = c,
                                        .n_ctrs = 4,
                                        .interference_ctx = &calls,
                                        .coloc_worst = gate_fake};
            struct eco_consol_decisions d = {0};
            assert_int_equal(ops->decide(p, &v, &d), 0);
            int to = moved_to(&d, 1);
            if (to < 0)
                to = moved_to(&d, 0); /* thr-mmt's MMT may pick the other one */
            assert_int_equal(to, want[g]);
            if (gates[g] == 0)
                assert_int_equal(calls, 0); /* no gate: the model is not asked */
            eco_consol_decisions_fini(&d);
            ops->destroy(p);
        }
    }
    struct eco_consol_thresholds t;
    struct eco_error err = {{0}};
    eco_consol_thresholds_default(&t);
    t.coloc_gate = 1;
    assert_int_equal(eco_consol_thresholds_check(&t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "coloc-gate"));
}

/* ---- the co-location bound ------------------------------------------------------------------ */

static void demand_heavy(void *ctx, uint32_t c, size_t step, double *u, double *m)
{
    (void)ctx;
    (void)c;
    (void)step;
    *u = 0.6;
    *m = 1024;
}

/* Two hosts of 2 V100s, three 1-GPU containers each 60 % busy: 1.8 GPUs of utilisation fit one
 * host, but three heavy containers (>= 0.55 of a GPU) on two GPUs means two share one, which
 * the judge's pairs slow. With no lost work allowed the bound needs 1.5 hosts on (the LP
 * relaxation of the second); with all of it allowed one host carries the load, as the
 * capacity alone says. */
static void test_bound_hand(void **state)
{
    (void)state;
    struct eco_cluster *cl = NULL;
    struct eco_error err = {{0}};
    assert_int_equal(eco_cluster_parse_spec("2x2:V100", &cl, &err), 0);
    int w0 = eco_coloc_find("ResNet18 CIFAR-10 bs32", NULL);
    assert_true(w0 >= 0);
    struct eco_consol_container cs[3];
    for (int i = 0; i < 3; i++)
        cs[i] = (struct eco_consol_container){.gpus = 1,
                                              .request = 0.5,
                                              .workload = (uint32_t)w0,
                                              .util_alone = 0.6,
                                              .gmem_mb = 1024};
    struct eco_consol_workload w = {.c = cs, .n = 3, .corr_s = 3600};
    struct eco_consol_sim_config cfg = {.period_s = 300, .horizon_s = 3600, .demand = demand_heavy};
    struct eco_consol_bound b0, b1;
    assert_int_equal(eco_consol_bound(cl, &w, &cfg, 0, &b0, &err), 0);
    assert_int_equal(eco_consol_bound(cl, &w, &cfg, 1, &b1, &err), 0);
    const struct eco_node_group *g = &cl->groups[0];
    double busy;
    assert_int_equal(
        eco_power_eval(cl->nodes[0].type, ECO_WORKLOAD_GENERIC, g->limit_w, NULL, &busy), 0);
    double idle = g->gpu_idle_w, host = g->base_w + 2 * idle;
    /* one host: both GPUs at 0.9; two hosts: the load spread over the GPU count drawing least */
    double f1 = host + 2 * (eco_node_group_gpu_power_w(g, busy, 0.9) - idle) + g->off_w;
    double best = INFINITY;
    for (int k = 2; k <= 4; k++)
        best = fmin(best, k * (eco_node_group_gpu_power_w(g, busy, 1.8 / k) - idle));
    double f2 = 2 * host + best;
    assert_near(b1.kwh, f1 * 3600 / 3.6e6, 1e-9);
    assert_near(b1.hosts_only_kwh, b1.kwh, 1e-9);
    assert_near(b0.kwh, (f1 + 0.5 * (f2 - f1)) * 3600 / 3.6e6, 1e-9);
    assert_true(b0.theta > 0.5);
    assert_near(b0.demanded_gpu_h, 1.8, 1e-9);
    assert_int_equal(eco_consol_bound(cl, &w, &cfg, 1.5, &b0, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "level"));
    eco_cluster_destroy(cl);
}

/* On a small run every policy, with and without the gate, uses at least the bound at its own
 * lost work where it keeps within the service level's SLATAH. */
static void test_bound_below_policies(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz",
             ECO_SOURCE_DIR);
    struct eco_jobset *pods = eco_jobset_create();
    struct eco_trace_opts o = {.format = ECO_TRACE_OPENB};
    struct eco_error err = {{0}};
    assert_int_equal(eco_trace_load(path, &o, pods, &err), 0);
    struct eco_consol_workload w;
    assert_int_equal(eco_consol_workload_build(pods, 120, 5, 3600, &w, &err), 0);
    struct eco_cluster *cl = NULL;
    assert_int_equal(eco_cluster_parse_spec("20x8:V100", &cl, &err), 0);
    int checked = 0;
    for (const struct eco_consol_ops *const *p = eco_consol_all(); *p; p++) {
        for (int g = 0; g < 2; g++) {
            struct eco_consol_sim_config cfg = {
                .policy = *p, .period_s = 300, .horizon_s = 6 * 3600, .judge = 1};
            eco_consol_thresholds_default(&cfg.thresholds);
            cfg.thresholds.coloc_gate = g ? 0.05 : 0;
            struct eco_consol_summary s;
            assert_int_equal(eco_consol_sim_run(cl, &w, &cfg, &s, &err), 0);
            double lost = 1 - s.work_useful_gpu_s / s.work_demanded_gpu_s;
            struct eco_consol_bound b;
            assert_int_equal(eco_consol_bound(cl, &w, &cfg, lost, &b, &err), 0);
            assert_near(b.demanded_gpu_h, s.work_demanded_gpu_s / 3600, 1e-6);
            assert_true(b.kwh > 0);
            /* The bound is for placements within the hosts' capacity: a run that overcommits
             * hosts beyond the service level's SLATAH (dual-ff without the gate here, 11 %)
             * may go below it. */
            if (s.sla_violation <= 0.02) {
                assert_true(s.energy_j / 3.6e6 >= b.kwh);
                checked++;
            }
        }
    }
    assert_true(checked >= 8); /* 9 of the 16 runs here */
    eco_cluster_destroy(cl);
    eco_consol_workload_fini(&w);
    eco_jobset_destroy(pods);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_detectors),
        cmocka_unit_test(test_dual_selection),
        cmocka_unit_test(test_mmt),
        cmocka_unit_test(test_wake),
        cmocka_unit_test(test_never_over_threshold),
        cmocka_unit_test(test_host_power),
        cmocka_unit_test(test_policy_power_states),
        cmocka_unit_test(test_workload),
        cmocka_unit_test(test_sim_gpu_power_states),
        cmocka_unit_test(test_sim_migration),
        cmocka_unit_test(test_knobs),
        cmocka_unit_test(test_underload_rule),
        cmocka_unit_test(test_mig_model),
        cmocka_unit_test(test_lost_work_charged),
        cmocka_unit_test(test_coloc_gate),
        cmocka_unit_test(test_dgddep_idle_share),
        cmocka_unit_test(test_bound_hand),
        cmocka_unit_test(test_bound_below_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
