/* SPDX-License-Identifier: MIT */
/* ecoschedd's in-memory queue (src/daemon/queue.c) alone, on a two-GPU server made of a GPU
 * selector with hand-fed samples: the order each queue policy starts jobs in, head-of-line
 * blocking (fifo) against filling (greedy), earliest deadline first (edf), jobs that can never
 * fit this server, and removal. No platform, store or process is involved. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/ecod.h"
#include "daemon/queue.h"

#define GB (1ull << 30)

struct fixture {
    struct ecod d;
};

/* Two idle 16 GB GPUs sampled at t = 0 and t = 1, strategy exclusive (one job a GPU). */
static struct fixture *make(const char *policy)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct eco_gpusel_params p;
    struct eco_error err = {{0}};
    assert_non_null(f);
    eco_gpusel_params_default(&p);
    f->d.n_gpus = 2;
    f->d.sel = eco_gpusel_create(2, eco_gpusel_find("exclusive"), &p);
    assert_non_null(f->d.sel);
    for (uint32_t g = 0; g < 2; g++)
        for (int t = 0; t < 2; t++) {
            struct eco_gpu_sample s = {
                .t_s = t, .util = 0, .mem_used_b = 0, .mem_total_b = 16 * GB};
            assert_int_equal(eco_gpusel_sample(f->d.sel, g, &s), 0);
        }
    if (ecod__queue_create(&f->d, policy, &err) < 0)
        fail_msg("queue %s: %s", policy, err.msg);
    return f;
}

static void destroy(struct fixture *f)
{
    ecod__queue_destroy(&f->d);
    eco_gpusel_destroy(f->d.sel);
    free(f);
}

static void add(struct fixture *f, int64_t id, unsigned gpus, double deadline_s)
{
    struct eco_store_job j = {
        .id = id, .gpus = gpus, .deadline_s = deadline_s, .submit_s = (double)id};
    assert_int_equal(ecod__queue_add(&f->d, &j), 0);
}

/* Runs one pass at t = 2 s; the ids it starts (never: refused) go to ids[], their count back. */
static size_t pass(struct fixture *f, int64_t *ids, bool *never, size_t cap)
{
    struct ecod_start *st = NULL;
    size_t n = 0;
    struct eco_error err = {{0}};
    if (ecod__queue_pass(&f->d, 1000.0, 2.0, &st, &n, &err) < 0)
        fail_msg("pass: %s", err.msg);
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) {
        ids[i] = st[i].id;
        never[i] = st[i].never;
    }
    free(st);
    return n;
}

/* One GPU taken by job 99 outside the queue: a 2-GPU job at the head does not fit. */
static void take_one_gpu(struct fixture *f)
{
    uint32_t g = 0;
    struct eco_gpu_request r = {.job_id = 99, .n_gpus = 1};
    assert_int_equal(eco_gpusel_reserve(f->d.sel, 2.0, &g, 1, &r), 0);
}

static void test_fifo_head_of_line(void **state)
{
    (void)state;
    struct fixture *f = make("fifo");
    int64_t ids[4];
    bool never[4];
    take_one_gpu(f);
    add(f, 1, 2, 0);
    add(f, 2, 1, 0);
    assert_int_equal(ecod__queue_len(&f->d), 2);
    assert_int_equal(pass(f, ids, never, 4), 0); /* job 1 waits, and job 2 behind it */
    assert_int_equal(ecod__queue_len(&f->d), 2);
    assert_string_equal(ecod__queue_policy_name(&f->d), "fifo");
    destroy(f);
}

static void test_greedy_fills(void **state)
{
    (void)state;
    struct fixture *f = make("greedy");
    int64_t ids[4];
    bool never[4];
    take_one_gpu(f);
    add(f, 1, 2, 0);
    add(f, 2, 1, 0);
    assert_int_equal(pass(f, ids, never, 4), 1);
    assert_int_equal(ids[0], 2);
    assert_false(never[0]);
    assert_int_equal(ecod__queue_len(&f->d), 1); /* job 1 still queued */
    destroy(f);
}

/* The GPUs a start got are chosen by the selector and differ between two starts of a pass. */
static void test_fifo_starts_in_order(void **state)
{
    (void)state;
    struct fixture *f = make("fifo");
    struct ecod_start *st = NULL;
    size_t n = 0;
    struct eco_error err = {{0}};
    add(f, 3, 1, 0);
    add(f, 1, 1, 0);
    add(f, 2, 1, 0);
    assert_int_equal(ecod__queue_pass(&f->d, 1000.0, 2.0, &st, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(st[0].id, 1); /* submission order (the ids), not the order added */
    assert_int_equal(st[1].id, 2);
    assert_int_equal(st[0].n_gpus, 1);
    assert_int_equal(st[1].n_gpus, 1);
    assert_true(st[0].gpus[0] != st[1].gpus[0]);
    free(st);
    assert_int_equal(ecod__queue_len(&f->d), 1);
    destroy(f);
}

static void test_edf_order(void **state)
{
    (void)state;
    struct fixture *f = make("edf");
    int64_t ids[4];
    bool never[4];
    add(f, 1, 1, 3000);
    add(f, 2, 1, 0); /* no deadline: after every job with one */
    add(f, 3, 1, 1100);
    add(f, 4, 1, 2000);
    assert_int_equal(pass(f, ids, never, 4), 2);
    assert_int_equal(ids[0], 3);
    assert_int_equal(ids[1], 4);
    destroy(f);
}

/* A job asking more GPUs than the server has is refused (never) and leaves the queue; under
 * fifo it held the head in that pass, so the job behind it starts at the next pass. */
static void test_never_fits(void **state)
{
    (void)state;
    struct fixture *f = make("fifo");
    int64_t ids[4];
    bool never[4];
    add(f, 1, 3, 0);
    add(f, 2, 1, 0);
    assert_int_equal(pass(f, ids, never, 4), 1);
    assert_int_equal(ids[0], 1);
    assert_true(never[0]);
    assert_int_equal(ecod__queue_len(&f->d), 1);
    assert_int_equal(pass(f, ids, never, 4), 1);
    assert_int_equal(ids[0], 2);
    assert_false(never[0]);
    assert_int_equal(ecod__queue_len(&f->d), 0);
    destroy(f);
}

static void test_remove_and_policies(void **state)
{
    (void)state;
    struct fixture *f = make("greedy");
    struct eco_error err = {{0}};
    int64_t ids[4];
    bool never[4];
    add(f, 1, 1, 0);
    add(f, 2, 1, 0);
    ecod__queue_remove(&f->d, 1);
    ecod__queue_remove(&f->d, 42); /* not queued: nothing happens */
    assert_int_equal(ecod__queue_len(&f->d), 1);
    assert_int_equal(pass(f, ids, never, 4), 1);
    assert_int_equal(ids[0], 2);
    destroy(f);
    assert_non_null(ecod__queue_policy_find("FIFO"));
    assert_null(ecod__queue_policy_find("sjf")); /* needs durations the daemon does not know */
    struct ecod d = {0};
    assert_true(ecod__queue_create(&d, "sjf", &err) < 0);
    assert_non_null(strstr(err.msg, "sjf"));
    assert_null(d.queue);
}

/* The daemon's policy names come from the registry's capability flags: every registry policy
 * that needs neither durations nor preemption is named, in registry order, and none other; the
 * text of today's set is the one the messages always had. The queue sorts by qsort_r with its
 * own context (no static), so two queues of different policies sort independently. */
static void test_policy_names(void **state)
{
    (void)state;
    char names[ECOD_NAMES_MAX], tiny[8];
    assert_string_equal(ecod__queue_policy_names(names, sizeof names), "fifo, greedy or edf");
    for (const struct eco_policy_ops *const *p = eco_policy_all(); *p; p++) {
        bool named = strstr(names, (*p)->name) != NULL;
        bool runs = ecod__queue_policy_find((*p)->name) != NULL;
        assert_true(runs == !((*p)->caps & (ECO_POLICY_NEEDS_DURATION | ECO_POLICY_PREEMPTS)));
        if (runs != named)
            fail_msg("%s: runs %d, named %d", (*p)->name, runs, named);
    }
    assert_string_equal(ecod__queue_policy_names(tiny, sizeof tiny), "fifo, g"); /* cut short */
    struct ecod d = {0};
    struct eco_error err = {{0}};
    assert_int_equal(ecod__queue_create(&d, "las", &err), -EINVAL);
    assert_string_equal(err.msg, "queue policy 'las': the daemon runs fifo, greedy or edf");
    /* two queues, opposite orders: edf by deadline, fifo by submission */
    struct fixture *fe = make("edf"), *ff = make("fifo");
    int64_t ids[2];
    bool never[2];
    add(fe, 1, 1, 500), add(fe, 2, 1, 100);
    add(ff, 1, 1, 500), add(ff, 2, 1, 100);
    assert_int_equal(pass(fe, ids, never, 2), 2);
    assert_int_equal(ids[0], 2);
    assert_int_equal(pass(ff, ids, never, 2), 2);
    assert_int_equal(ids[0], 1);
    destroy(fe);
    destroy(ff);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_head_of_line),    cmocka_unit_test(test_greedy_fills),
        cmocka_unit_test(test_fifo_starts_in_order), cmocka_unit_test(test_edf_order),
        cmocka_unit_test(test_never_fits),           cmocka_unit_test(test_remove_and_policies),
        cmocka_unit_test(test_policy_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
