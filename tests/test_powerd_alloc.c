/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s allocation step (src/slurm/powerd_alloc.c) alone, on hand-made readings:
 * which jobs it decides (all their GPUs answered), what the budget leaves them (minus the
 * unmanaged GPUs' draw and the silent nodes' maximum), a job's --gpu-power-cap as its ceiling,
 * and the figures it reports; with the uniform capper, whose split is known exactly. Then the
 * nodes' fallback shares (eco_powerd__shares): proportional to the allocation, at most a
 * node's maximum, the silent nodes' held shares (or their maximum) set aside first, the sum
 * never above the budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "slurm/powerd.h"

#define EPS 1e-6
/* The even split without the family's feedback and dithering, so that every limit is known. */
#define CAPPER "uniform:gain=0,dither=0"

struct fixture {
    struct powerd pd;
    struct pnode nodes[3]; /* the third only where a test counts it (n_nodes 3) */
    struct pjob jobs[2];
};

/* Two nodes of two 100..250 W GPUs, both answering, each GPU at 250 W drawing 200 W except
 * node 1's GPU 1 (idle, 50 W). Job 0 holds both GPUs of node 0, job 1 GPU 0 of node 1. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct eco_error err = {{0}};
    if (!f)
        return -1;
    for (unsigned n = 0; n < 2; n++) {
        struct pnode *nd = &f->nodes[n];
        nd->up = nd->seen = true;
        nd->n_gpus = 2;
        nd->max_power_w = 500;
        for (unsigned g = 0; g < 2; g++)
            nd->gpu[g] = (struct pgpu){.power_w = 200,
                                       .limit_w = 250,
                                       .min_w = 100,
                                       .max_w = 250,
                                       .default_w = 250,
                                       .util = NAN,
                                       .sm_mhz = NAN};
    }
    f->nodes[1].gpu[1].power_w = 50;
    f->nodes[0].power_w = 400;
    f->nodes[1].power_w = 250;
    f->jobs[0] = (struct pjob){.id = 10,
                               .running = true,
                               .n = 2,
                               .node = {0, 0},
                               .gpu = {0, 1},
                               .remaining_s = 3600,
                               .deadline_s = -1};
    f->jobs[1] = (struct pjob){.id = 11,
                               .running = true,
                               .n = 1,
                               .node = {1},
                               .gpu = {0},
                               .remaining_s = 3600,
                               .deadline_s = -1};
    f->pd.nodes = f->nodes;
    f->pd.n_nodes = 2;
    f->pd.jobs = f->jobs;
    f->pd.n_jobs = 2;
    f->pd.period_s = 1;
    f->pd.policy = CAPPER;
    eco_rng_init(&f->pd.rng, 1);
    if (!(f->pd.capper = eco_capper_create(CAPPER, &err))) {
        print_error("capper: %s\n", err.msg);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    eco_capper_destroy(f->pd.capper);
    free(f);
    return 0;
}

static double num(const json_t *st, const char *key)
{
    const json_t *v = json_object_get(st, key);
    if (!json_is_number(v))
        fail_msg("status has no number '%s'", key);
    return json_number_value(v);
}

/* Everyone answers: the jobs share the budget less the idle GPU's 50 W, evenly per GPU. */
static void test_all_answer(void **state)
{
    struct fixture *f = *state;
    json_t *st = json_object();
    assert_int_equal(eco_powerd__allocate(&f->pd, 650, 1e9, st), 0);
    assert_true(f->jobs[0].decided && f->jobs[1].decided);
    assert_true(f->jobs[0].managed && f->jobs[1].managed);
    assert_true(fabs(f->jobs[0].limit_w - 200) < EPS);
    assert_true(fabs(f->jobs[1].limit_w - 200) < EPS);
    assert_string_equal(json_string_value(json_object_get(st, "capper")), "uniform");
    assert_string_equal(json_string_value(json_object_get(st, "policy")), CAPPER);
    assert_true(fabs(num(st, "measured_w") - 650) < EPS);
    assert_true(fabs(num(st, "set_aside_w") - 0) < EPS);
    assert_true(fabs(num(st, "for_jobs_w") - 600) < EPS);
    /* nothing was sent: the readings are as they were */
    assert_true(f->nodes[0].gpu[0].limit_w == 250 && f->nodes[1].gpu[0].limit_w == 250);
    json_decref(st);
}

/* A node that did not answer: its job is not decided (its limits stay as they are) and the
 * node's maximum draw is set aside from the budget. */
static void test_silent_node(void **state)
{
    struct fixture *f = *state;
    json_t *st = json_object();
    assert_int_equal(eco_powerd__allocate(&f->pd, 650, 1e9, st), 0);
    assert_true(f->jobs[1].decided);
    json_decref(st);
    f->nodes[1].up = false;
    st = json_object();
    assert_int_equal(eco_powerd__allocate(&f->pd, 900, 1e9, st), 0);
    assert_true(f->jobs[0].decided);
    assert_false(f->jobs[1].decided); /* decided last period, not this one */
    assert_false(f->jobs[1].managed);
    assert_true(fabs(num(st, "set_aside_w") - 500) < EPS);
    assert_true(fabs(num(st, "measured_w") - 400) < EPS);
    assert_true(fabs(num(st, "for_jobs_w") - 400) < EPS);
    assert_true(fabs(f->jobs[0].limit_w - 200) < EPS);
    json_decref(st);
}

/* A job's --gpu-power-cap on one of its GPUs is the ceiling of its limit however large the
 * budget; a cap below the GPU's minimum leaves the minimum. */
static void test_job_cap(void **state)
{
    struct fixture *f = *state;
    json_t *st = json_object();
    f->nodes[0].gpu[1].job_cap_w = 150;
    f->nodes[1].gpu[0].job_cap_w = 60;
    assert_int_equal(eco_powerd__allocate(&f->pd, 5000, 1e9, st), 0);
    assert_true(fabs(f->jobs[0].limit_w - 150) < EPS);
    assert_true(fabs(f->jobs[1].limit_w - 100) < EPS);
    json_decref(st);
}

/* A budget below the jobs' minima: every job at its minimum (nothing lower is settable). */
static void test_tight_budget(void **state)
{
    struct fixture *f = *state;
    json_t *st = json_object();
    assert_int_equal(eco_powerd__allocate(&f->pd, 100, 1e9, st), 0);
    assert_true(fabs(f->jobs[0].limit_w - 100) < EPS);
    assert_true(fabs(f->jobs[1].limit_w - 100) < EPS);
    json_decref(st);
}

/* No jobs, or a job whose GPU index the node does not have: nothing decided, no failure. */
static void test_nothing_to_decide(void **state)
{
    struct fixture *f = *state;
    json_t *st = json_object();
    f->jobs[1].gpu[0] = 7;
    f->pd.n_jobs = 2;
    assert_int_equal(eco_powerd__allocate(&f->pd, 650, 1e9, st), 0);
    assert_false(f->jobs[1].decided);
    assert_true(f->jobs[0].decided);
    json_decref(st);
    st = json_object();
    f->pd.n_jobs = 0;
    assert_int_equal(eco_powerd__allocate(&f->pd, 650, 1e9, st), 0);
    assert_string_equal(json_string_value(json_object_get(st, "capper")), "uniform");
    json_decref(st);
}

/* The answering nodes' shares and the silent nodes' held ones (or their reserve) summed. */
static double shares_sum(const struct powerd *pd)
{
    double s = 0;
    for (size_t i = 0; i < pd->n_nodes; i++) {
        const struct pnode *nd = &pd->nodes[i];
        s += nd->up ? nd->share_w : nd->held_w > 0 ? nd->held_w : eco_powerd__reserve_w(pd, nd);
    }
    return s;
}

static void allocate_and_share(struct fixture *f, double budget)
{
    json_t *st = json_object();
    assert_int_equal(eco_powerd__allocate(&f->pd, budget, 1e9, st), 0);
    eco_powerd__shares(&f->pd, budget);
    json_decref(st);
}

/* Everyone answers: a binding budget is split as allocated (node 0: two GPUs at 200 W, node
 * 1: one at 200 W and the idle one's 50 W); a loose one is scaled up, each share at most the
 * node's 500 W maximum; the sum is never above the budget. */
static void test_shares_all_answer(void **state)
{
    struct fixture *f = *state;
    allocate_and_share(f, 650);
    assert_true(fabs(f->nodes[0].share_w - 400) < EPS);
    assert_true(fabs(f->nodes[1].share_w - 250) < EPS);
    static const double budgets[] = {100, 650, 700, 900, 1300, 5000};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        allocate_and_share(f, budgets[i]);
        assert_true(shares_sum(&f->pd) <= budgets[i] + EPS);
        for (unsigned n = 0; n < 2; n++)
            assert_true(f->nodes[n].share_w > 0 && f->nodes[n].share_w <= 500 + EPS);
    }
    allocate_and_share(f, 5000); /* more than both can draw: each its maximum */
    assert_true(fabs(f->nodes[0].share_w - 500) < EPS && fabs(f->nodes[1].share_w - 500) < EPS);
}

/* A silent node keeps the share it holds (its lease's fallback, whatever powerd sends the
 * others): that share is set aside first; not known, its maximum draw. */
static void test_shares_silent(void **state)
{
    struct fixture *f = *state;
    f->nodes[1].up = false;
    f->nodes[1].held_w = 300;
    allocate_and_share(f, 650);
    assert_true(fabs(f->nodes[0].share_w - 350) < EPS);
    assert_true(fabs(f->nodes[1].share_w - 0) < EPS); /* nothing sent to it */
    f->nodes[1].held_w = 0;
    allocate_and_share(f, 650);
    assert_true(fabs(f->nodes[0].share_w - 150) < EPS);
    assert_true(shares_sum(&f->pd) <= 650 + EPS);
    /* the silent node's held share alone above the budget: 1 W, the least that is a lease */
    f->nodes[1].held_w = 700;
    allocate_and_share(f, 650);
    assert_true(fabs(f->nodes[0].share_w - 1) < EPS);
}

/* A node silent since powerd started (a restart of powerd): its Slurm GPUs at the largest GPU
 * maximum heard are set aside, in the allocation and in the shares, not 0. */
static void test_never_heard(void **state)
{
    struct fixture *f = *state;
    f->nodes[2] = (struct pnode){.gres_gpus = 2};
    f->pd.n_nodes = 3;
    assert_true(fabs(eco_powerd__reserve_w(&f->pd, &f->nodes[2]) - 500) < EPS);
    json_t *st = json_object();
    assert_int_equal(eco_powerd__allocate(&f->pd, 1150, 1e9, st), 0);
    assert_true(fabs(num(st, "set_aside_w") - 500) < EPS);
    assert_true(fabs(f->jobs[0].limit_w - 200) < EPS); /* as with 650 W and two nodes */
    json_decref(st);
    eco_powerd__shares(&f->pd, 1150);
    assert_true(shares_sum(&f->pd) <= 1150 + EPS);
    assert_true(fabs(f->nodes[0].share_w + f->nodes[1].share_w - 650) < EPS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_all_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tight_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_to_decide, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shares_all_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shares_silent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_never_heard, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
