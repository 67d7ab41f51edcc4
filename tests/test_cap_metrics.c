/* SPDX-License-Identifier: MIT */
/* Capping metrics (src/core/powercap/metrics.c): hand-computed period sequences for the MAE over
 * binding and over all periods, the settled and raw overshoot, time, energy and share above the
 * budget, and the refusal of bad periods (docs/policies/powercap.md, "Metrics"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "ecosched/powercap.h"

/* Tolerance of the comparisons: the sums are of a handful of exact-ish doubles. */
#define EPS 1e-9

struct period {
    double dt_s, power_w, budget_w, demand_w;
    int settling;
};

static void run(const struct period *p, size_t n, struct eco_cap_metrics_report *r)
{
    struct eco_cap_metrics m;
    eco_cap_metrics_init(&m);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(eco_cap_metrics_add(&m, p[i].dt_s, p[i].power_w, p[i].budget_w,
                                             p[i].demand_w, p[i].settling),
                         0);
    eco_cap_metrics_report(&m, r);
}

/* Budget 1000 W, 1 s periods. Period 1 does not bind (demand 800 W) and sits 10% below; periods
 * 2-4 bind. Binding MAE = (1 + 1 + 0.5) / 3 %; all-period MAE = (10 + 1 + 1 + 0.5) / 4 % =
 * 3.125%: the idle-ish period counts only in the second. Period 2 is the first after an admission
 * (1% over): the raw overshoot is 1%, the settled one period 4's 0.5%. Above: periods 2 and 4,
 * 2 s, 10 + 5 = 15 J, share 2 / 4. */
static void test_binding_and_all(void **state)
{
    (void)state;
    static const struct period seq[] = {
        {1, 900, 1000, 800, 0},
        {1, 1010, 1000, 1200, 1},
        {1, 990, 1000, 1200, 0},
        {1, 1005, 1000, 1200, 0},
    };
    struct eco_cap_metrics_report r;
    run(seq, 4, &r);
    assert_int_equal(r.periods, 4);
    assert_int_equal(r.binding_periods, 3);
    assert_int_equal(r.settling_periods, 1);
    assert_int_equal(r.above_periods, 2);
    assert_float_equal(r.mae_binding_pct, 2.5 / 3, EPS);
    assert_float_equal(r.mae_all_pct, 3.125, EPS);
    assert_float_equal(r.overshoot_raw_pct, 1.0, EPS);
    assert_float_equal(r.overshoot_pct, 0.5, EPS);
    assert_float_equal(r.above_s, 2, EPS);
    assert_float_equal(r.above_kwh, 15 / 3.6e6, 1e-15);
    assert_float_equal(r.above_share, 0.5, EPS);
}

/* Settling: a budget step down from 1000 W to 800 W; the first period under the new budget is
 * 20% over (flagged), the next ones settle below it. Settled overshoot 0, raw 20%; above 1 s,
 * 160 J. */
static void test_settling(void **state)
{
    (void)state;
    static const struct period seq[] = {
        {1, 995, 1000, 1500, 0},
        {1, 960, 800, 1500, 1},
        {1, 796, 800, 1500, 0},
        {1, 800, 800, 1500, 0},
    };
    struct eco_cap_metrics_report r;
    run(seq, 4, &r);
    assert_float_equal(r.overshoot_pct, 0, EPS);
    assert_float_equal(r.overshoot_raw_pct, 20, EPS);
    assert_int_equal(r.above_periods, 1);
    assert_float_equal(r.above_s, 1, EPS);
    assert_float_equal(r.above_kwh, 160 / 3.6e6, 1e-15);
    /* all bind: (0.5 + 20 + 0.5 + 0) / 4 % */
    assert_float_equal(r.mae_binding_pct, 21.0 / 4, EPS);
    assert_float_equal(r.mae_all_pct, 21.0 / 4, EPS);
    /* The same excess not flagged counts after settling. */
    static const struct period unflagged[] = {{1, 960, 800, 1500, 0}};
    run(unflagged, 1, &r);
    assert_float_equal(r.overshoot_pct, 20, EPS);
}

/* Periods of different lengths are weighted by their length: 2 s at 10% over and 1 s on the
 * budget give an MAE of 20 / 3 %, 2 s and 200 J above, and a share of 1 / 2 by count. */
static void test_weighted(void **state)
{
    (void)state;
    static const struct period seq[] = {
        {2, 1100, 1000, 2000, 0},
        {1, 1000, 1000, 2000, 0},
    };
    struct eco_cap_metrics_report r;
    run(seq, 2, &r);
    assert_float_equal(r.mae_binding_pct, 20.0 / 3, EPS);
    assert_float_equal(r.mae_all_pct, 20.0 / 3, EPS);
    assert_float_equal(r.above_s, 2, EPS);
    assert_float_equal(r.above_kwh, 200 / 3.6e6, 1e-15);
    assert_float_equal(r.above_share, 0.5, EPS);
    assert_float_equal(r.overshoot_pct, 10, EPS);
}

/* No period, or none binding: every figure is 0, not NaN. */
static void test_empty(void **state)
{
    (void)state;
    struct eco_cap_metrics_report r;
    run(NULL, 0, &r);
    assert_int_equal(r.periods, 0);
    assert_float_equal(r.mae_binding_pct, 0, 0);
    assert_float_equal(r.mae_all_pct, 0, 0);
    assert_float_equal(r.above_share, 0, 0);
    static const struct period slack[] = {{1, 500, 1000, 900, 0}};
    run(slack, 1, &r);
    assert_int_equal(r.binding_periods, 0);
    assert_float_equal(r.mae_binding_pct, 0, 0);
    assert_float_equal(r.mae_all_pct, 50, EPS);
    assert_float_equal(r.overshoot_pct, 0, 0);
}

/* Bad periods are refused and leave the sums untouched. */
static void test_bad_input(void **state)
{
    (void)state;
    static const struct period bad[] = {
        {0, 1000, 1000, 1000, 0},        {-1, 1000, 1000, 1000, 0}, {NAN, 1000, 1000, 1000, 0},
        {INFINITY, 1000, 1000, 1000, 0}, {1, 1000, 0, 1000, 0},     {1, 1000, -5, 1000, 0},
        {1, 1000, INFINITY, 1000, 0},    {1, NAN, 1000, 1000, 0},   {1, 1000, 1000, INFINITY, 0},
        {1, 1000, 1000, NAN, 0},
    };
    struct eco_cap_metrics m, before;
    eco_cap_metrics_init(&m);
    assert_int_equal(eco_cap_metrics_add(&m, 1, 1100, 1000, 2000, 0), 0);
    before = m;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(eco_cap_metrics_add(&m, bad[i].dt_s, bad[i].power_w, bad[i].budget_w,
                                             bad[i].demand_w, bad[i].settling),
                         -EINVAL);
        assert_memory_equal(&m, &before, sizeof m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binding_and_all), cmocka_unit_test(test_settling),
        cmocka_unit_test(test_weighted),        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
