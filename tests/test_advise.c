/* SPDX-License-Identifier: MIT */
/* Tests for `ecosched advise`'s pure parts (src/sim/advise.c): the selection rule on made-up
 * summaries (the largest saving within the limits; none that pays; the limit a rejected setting
 * breaks; carbon or cost as the goal with a signal), and the held-out split (by submit time,
 * the trace's order and strings kept, too short a trace refused). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "sim/advise.h"
#include "test_util.h"

static const struct eco_advise_limits LIM = {2, 5, 1};

/* A summary of energy (MWh), avg JCT and p95 wait (h), carbon (kg). */
static struct eco_sim_summary sum(double mwh, double jct_h, double p95_h, double carbon_kg)
{
    struct eco_sim_summary s = {0};
    s.energy_j.total = mwh * 3.6e9;
    s.avg_jct_s = jct_h * 3600;
    s.p95_wait_s = p95_h * 3600;
    s.carbon_kg = carbon_kg;
    return s;
}

static void test_pick_largest_within(void **state)
{
    (void)state;
    struct eco_sim_summary base = sum(100, 10, 4, 0);
    struct eco_sim_summary runs[] = {
        sum(95, 10.1, 4.1, 0),   /* saves 5, within */
        sum(90, 10.19, 4.19, 0), /* saves 10, within (+1.9 %, +4.75 %) */
        sum(80, 10.3, 4.0, 0),   /* saves 20, avg JCT +3 %: out */
        sum(70, 10.0, 4.3, 0),   /* saves 30, p95 wait +7.5 %: out */
    };
    char why[256] = "x";
    assert_int_equal(
        eco_advise_pick(&base, runs, NULL, 4, &LIM, ECO_ADVISE_ENERGY, why, sizeof why), 1);
    assert_string_equal(why, "");
    /* tighter limits: only the first */
    struct eco_advise_limits tight = {1, 3, 1};
    assert_int_equal(
        eco_advise_pick(&base, runs, NULL, 4, &tight, ECO_ADVISE_ENERGY, why, sizeof why), 0);
}

static void test_pick_none_pays(void **state)
{
    (void)state;
    struct eco_sim_summary base = sum(100, 10, 4, 0);
    struct eco_sim_summary more[] = {sum(100, 10, 4, 0), sum(101, 9, 3, 0)};
    char why[256];
    const char *names[] = {"a", "b"};
    assert_int_equal(
        eco_advise_pick(&base, more, names, 2, &LIM, ECO_ADVISE_ENERGY, why, sizeof why), -1);
    assert_string_equal(why, "no setting saves energy");
    /* savings that break a limit: the largest one is named with the limit */
    struct eco_sim_summary slow[] = {sum(90, 11, 4, 0), sum(80, 10, 6, 0)};
    assert_int_equal(
        eco_advise_pick(&base, slow, names, 2, &LIM, ECO_ADVISE_ENERGY, why, sizeof why), -1);
    assert_non_null(strstr(why, "b: p95 wait +50.00 % (limit +5 %)"));
    /* no candidate at all */
    assert_int_equal(
        eco_advise_pick(&base, slow, names, 0, &LIM, ECO_ADVISE_ENERGY, why, sizeof why), -1);
}

static void test_pick_goal_carbon(void **state)
{
    (void)state;
    struct eco_sim_summary base = sum(100, 10, 4, 50);
    /* the first saves more energy, the second more carbon (a shift into greener hours) */
    struct eco_sim_summary runs[] = {sum(90, 10, 4, 48), sum(100.5, 10.1, 4, 40)};
    char why[256];
    assert_int_equal(eco_advise_goal_of(1, 1), ECO_ADVISE_CARBON);
    assert_int_equal(eco_advise_goal_of(0, 1), ECO_ADVISE_COST);
    assert_int_equal(eco_advise_goal_of(0, 0), ECO_ADVISE_ENERGY);
    assert_int_equal(
        eco_advise_pick(&base, runs, NULL, 2, &LIM, ECO_ADVISE_CARBON, why, sizeof why), 1);
    assert_int_equal(
        eco_advise_pick(&base, runs, NULL, 2, &LIM, ECO_ADVISE_ENERGY, why, sizeof why), 0);
}

static void test_within_wait_slack_and_deadlines(void **state)
{
    (void)state;
    char why[256];
    /* a baseline without waits allows a minute of p95 wait, not more */
    struct eco_sim_summary base = sum(100, 10, 0, 0);
    struct eco_sim_summary ok = sum(90, 10, 59.0 / 3600, 0), late = sum(90, 10, 61.0 / 3600, 0);
    assert_true(eco_advise_within(&base, &ok, &LIM, why, sizeof why));
    assert_false(eco_advise_within(&base, &late, &LIM, why, sizeof why));
    assert_non_null(strstr(why, "p95 wait"));
    /* deadline misses: +1 point allowed */
    struct eco_sim_summary miss = sum(90, 10, 0, 0);
    base.deadline_miss_ratio = 0.10;
    miss.deadline_miss_ratio = 0.105;
    assert_true(eco_advise_within(&base, &miss, &LIM, why, sizeof why));
    miss.deadline_miss_ratio = 0.12;
    assert_false(eco_advise_within(&base, &miss, &LIM, why, sizeof why));
    assert_non_null(strstr(why, "deadline misses +2.00 points"));
    /* a negative limit asks for an improvement */
    struct eco_advise_limits better = {-1, 5, 1};
    struct eco_sim_summary same = sum(90, 10, 0, 0);
    base.deadline_miss_ratio = 0;
    assert_false(eco_advise_within(&base, &same, &better, why, sizeof why));
    assert_non_null(strstr(why, "avg JCT +0.00 % (limit -1 %)"));
}

static void test_split(void **state)
{
    (void)state;
    /* 50 jobs, submits out of order: job i at (i * 37) % 50 hours */
    struct eco_jobset *all = eco_jobset_create();
    assert_non_null(all);
    for (size_t i = 0; i < 50; i++) {
        char id[16];
        snprintf(id, sizeof id, "job%zu", i);
        struct eco_job *j = eco_jobset_add(all);
        assert_non_null(j);
        j->submit_s = (double)((i * 37) % 50) * 3600;
        j->duration_s = 60;
        j->gpus = 1;
        all->jobs[i].id_off = eco_jobset_intern(all, id, strlen(id));
    }
    struct eco_jobset *tune, *held;
    struct eco_error err = {{0}};
    assert_int_equal(eco_advise_split(all, 0.4, 20, &tune, &held, &err), 0);
    assert_int_equal(tune->n, 20);
    assert_int_equal(held->n, 30);
    double last_tune = -1, prev = -1;
    for (size_t i = 0; i < tune->n; i++) {
        if (tune->jobs[i].submit_s > last_tune)
            last_tune = tune->jobs[i].submit_s;
        /* the trace's order: ids increase */
        int id = atoi(eco_jobset_str(tune, tune->jobs[i].id_off) + 3);
        assert_true(id > prev);
        prev = id;
    }
    assert_near(last_tune, 19 * 3600.0, 1e-9); /* the 20 earliest submits: 0..19 h */
    for (size_t i = 0; i < held->n; i++)
        assert_true(held->jobs[i].submit_s > last_tune);
    assert_string_equal(eco_jobset_str(held, held->jobs[0].id_off), "job1"); /* 37 h */
    eco_jobset_destroy(tune);
    eco_jobset_destroy(held);
    /* too short: either part under 20 jobs */
    assert_int_equal(eco_advise_split(all, 0.5, 26, &tune, &held, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "too short to split: 50 jobs give 25 to tune on and 25"));
    assert_null(tune);
    assert_null(held);
    assert_int_equal(eco_advise_split(all, 0.9, 20, &tune, &held, &err), -EINVAL);
    assert_int_equal(eco_advise_split(all, 1.0, 20, &tune, &held, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "between 0 and 1"));
    eco_jobset_destroy(all);
}

static void test_delayed_and_per_year(void **state)
{
    (void)state;
    struct eco_test_jspec js[] = {{0, 10, 1}, {0, 10, 1}, {0, 10, 1}};
    struct eco_jobset *set = eco_test_make_jobs(js, 3);
    double base[] = {0, 100, 200};
    set->jobs[0].start_s = 60;  /* 60 s later: not counted */
    set->jobs[1].start_s = 161; /* 61 s later */
    set->jobs[2].start_s = 100; /* earlier */
    assert_int_equal(eco_advise_delayed(set, base), 1);
    eco_jobset_destroy(set);
    assert_near(eco_advise_per_year(2, 73 * 86400.0), 10, 1e-12);
    assert_near(eco_advise_per_year(2, 0), 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_largest_within),
        cmocka_unit_test(test_pick_none_pays),
        cmocka_unit_test(test_pick_goal_carbon),
        cmocka_unit_test(test_within_wait_slack_and_deadlines),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_delayed_and_per_year),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
