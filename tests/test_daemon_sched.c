/* SPDX-License-Identifier: MIT */
/* ecoschedd's scheduling pass (src/daemon/sched.c) driven directly with injected clocks: a
 * server without GPUs (platform "none"), a store in a temporary state directory and real
 * child processes. The times the store records are the clocks the caller passed in (the pass
 * reads none itself), a job's exit status reaches the store, and a cancel's SIGKILL deadline
 * counts from the monotonic time given to it. On a counting platform of two GPUs: the GPUs are
 * read by the sampling tick only, and the pass decides from the latest sample. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "daemon/ecod.h"
#include "daemon/queue.h"
#include "daemon/sched.h"
#include "daemon/startup.h"
#include "platform/platform.h"

struct fixture {
    struct ecod d;
    char dir[64];
};

/* A daemon in a fresh state directory on `platform` (NULL: the "none" platform), fifo, live
 * GPU selection (window_s < 0: its default window); 0 or -1 with the reason printed. */
static int start_fixture(struct fixture *f, struct eco_platform *platform, double window_s)
{
    struct eco_error err = {{0}};
    struct eco_gpusel_params p;
    snprintf(f->dir, sizeof f->dir, "/tmp/ecosched-sched-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    f->d.platform = platform;
    f->d.state_dir = f->dir;
    f->d.fake_run_fd = -1;
    f->d.gpu_strategy = "live";
    f->d.tick_s = 1;
    snprintf(f->d.db_path, sizeof f->d.db_path, "%s/jobs.db", f->dir);
    eco_gpusel_params_default(&p);
    if (window_s >= 0)
        p.window_s = window_s;
    if ((!platform && eco_platform_open("none", NULL, &f->d.platform, &err) < 0) ||
        ecod__startup_open_store(&f->d, &err) < 0 || ecod__startup_init(&f->d, &p, &err) < 0 ||
        ecod__queue_create(&f->d, "fifo", &err) < 0) {
        print_error("setup: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f || start_fixture(f, NULL, -1) < 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char cmd[128];
    ecod__queue_destroy(&f->d);
    ecod__sched_fini(&f->d);
    eco_store_close(f->d.store);
    eco_platform_close(f->d.platform);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        print_error("could not remove %s\n", f->dir);
    free(f);
    return 0;
}

/* Queues `argv_json` (no GPUs) as the caller; its id. */
static int64_t submit(struct fixture *f, const char *argv_json, double now)
{
    struct eco_error err = {{0}};
    int64_t id = 0;
    struct eco_store_job j = {.uid = getuid(),
                              .gid = getgid(),
                              .cwd = "/",
                              .argv_json = argv_json,
                              .power_cap_w = ECO_STORE_CAP_NONE,
                              .submit_s = now};
    if (eco_store_insert(f->d.store, &j, &id, &err) < 0)
        fail_msg("insert: %s", err.msg);
    j.id = id;
    assert_int_equal(ecod__queue_add(&f->d, &j), 0);
    return id;
}

static struct eco_store_job get(struct fixture *f, int64_t id)
{
    struct eco_store_job j = {0};
    struct eco_error err = {{0}};
    if (eco_store_get(f->d.store, id, &j, &err) < 0)
        fail_msg("get %lld: %s", (long long)id, err.msg);
    return j;
}

static void nap(void)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* Passes at wall 2000 + k, monotonic 10 + k until job id has left state `while_in` (at most
 * 10 s of real time); the k of the pass that saw it leave. */
static int pass_until(struct fixture *f, int64_t id, enum eco_store_state while_in)
{
    for (int k = 0; k < 500; k++) {
        ecod__sched_pass(&f->d, 2000.0 + k, 10.0 + k);
        struct eco_store_job j = get(f, id);
        enum eco_store_state s = j.state;
        eco_store_job_fini(&j);
        if (s != while_in)
            return k;
        nap();
    }
    fail_msg("job %lld still in state %d", (long long)id, (int)while_in);
    return -1;
}

static void test_times_are_the_callers(void **state)
{
    struct fixture *f = *state;
    int64_t id = submit(f, "[\"/bin/sh\",\"-c\",\"exit 3\"]", 900.0);
    ecod__sched_pass(&f->d, 1000.0, 5.0);
    assert_int_equal(ecod__queue_len(&f->d), 0);
    struct eco_store_job j = get(f, id);
    assert_true(j.state == ECO_STORE_RUNNING || j.state == ECO_STORE_FAILED);
    assert_true(j.start_s == 1000.0); /* the pass's wall clock, not the machine's */
    eco_store_job_fini(&j);
    assert_true(f->d.last_tick_mono == 5.0);
    int k = pass_until(f, id, ECO_STORE_RUNNING);
    j = get(f, id);
    assert_int_equal(j.state, ECO_STORE_FAILED);
    assert_int_equal(j.exit_status, 3);
    assert_true(j.end_s == 2000.0 + k); /* the reaping pass's wall clock */
    eco_store_job_fini(&j);
    assert_null(ecod__sched_find(&f->d, id));
    assert_true(f->d.pass.passes >= 2);
}

static void test_cancel_reaped(void **state)
{
    struct fixture *f = *state;
    struct eco_error err = {{0}};
    int64_t id = submit(f, "[\"/bin/sleep\",\"30\"]", 900.0);
    ecod__sched_pass(&f->d, 1000.0, 5.0);
    assert_int_equal(eco_store_cancel(f->d.store, id, 1001.0, "test", NULL, &err), 0);
    ecod__sched_cancelled(&f->d, id, 1001.0, 7.0);
    const struct ecod_run *r = ecod__sched_find(&f->d, id);
    assert_non_null(r);
    assert_true(r->pid > 0);
    assert_true(r->kill_at == 7.0 + 10.0); /* SIGKILL 10 s after the given monotonic time */
    for (int k = 0; k < 500 && ecod__sched_find(&f->d, id); k++) {
        ecod__sched_pass(&f->d, 2000.0 + k, 8.0 + k * 0.01);
        nap();
    }
    assert_null(ecod__sched_find(&f->d, id)); /* SIGTERM ended it before any SIGKILL */
    struct eco_store_job j = get(f, id);
    assert_int_equal(j.state, ECO_STORE_CANCELLED);
    assert_true(j.end_s == 1001.0);
    eco_store_job_fini(&j);
}

/* A platform of two GPUs that counts its calls: every reading succeeds with the values below
 * (energy grows by 1 J a call), every setting succeeds. */
struct counting {
    unsigned calls; /* every call but gpu_count */
    unsigned reads; /* memory and util: what a sample reads */
    unsigned energy_reads;
    double util;
    uint64_t used_b;
    double energy_j;
};

#define COUNTING_TOTAL_B (80ull << 30) /* an 80 GB GPU: any size works */

static int c_create(const char *lib, void **state, struct eco_error *err)
{
    (void)lib;
    (void)state;
    (void)err;
    return 0;
}
static void c_destroy(void *state)
{
    (void)state;
}
static unsigned c_count(const void *state)
{
    (void)state;
    return 2;
}
static int c_str(void *state, unsigned gpu, char *buf, size_t cap, struct eco_error *err)
{
    (void)gpu;
    (void)err;
    ((struct counting *)state)->calls++;
    snprintf(buf, cap, "counting");
    return 0;
}
static int c_memory(void *state, unsigned gpu, uint64_t *total_b, uint64_t *used_b,
                    struct eco_error *err)
{
    struct counting *c = state;
    (void)gpu;
    (void)err;
    c->calls++;
    c->reads++;
    *total_b = COUNTING_TOTAL_B;
    *used_b = c->used_b;
    return 0;
}
static int c_util(void *state, unsigned gpu, double *util, struct eco_error *err)
{
    struct counting *c = state;
    (void)gpu;
    (void)err;
    c->calls++;
    c->reads++;
    *util = c->util;
    return 0;
}
static int c_watts(void *state, unsigned gpu, double *w, struct eco_error *err)
{
    (void)gpu;
    (void)err;
    ((struct counting *)state)->calls++;
    *w = 300;
    return 0;
}
static int c_range(void *state, unsigned gpu, struct eco_power_range *out, struct eco_error *err)
{
    (void)gpu;
    (void)err;
    ((struct counting *)state)->calls++;
    *out = (struct eco_power_range){.min_w = 100, .max_w = 400, .default_w = 400};
    return 0;
}
static int c_energy(void *state, unsigned gpu, double *j, struct eco_error *err)
{
    struct counting *c = state;
    (void)gpu;
    (void)err;
    c->calls++;
    c->energy_reads++;
    *j = c->energy_j += 1;
    return 0;
}
static int c_set(void *state, unsigned gpu, double w, struct eco_error *err)
{
    (void)gpu;
    (void)w;
    (void)err;
    ((struct counting *)state)->calls++;
    return 0;
}
static int c_pids(void *state, unsigned gpu, pid_t *pids, size_t cap, size_t *n,
                  struct eco_error *err)
{
    (void)gpu;
    (void)pids;
    (void)cap;
    (void)err;
    ((struct counting *)state)->calls++;
    *n = 0;
    return 0;
}

static const struct eco_platform_ops counting_ops = {
    .name = "counting",
    .summary = "test: counts its calls",
    .create = c_create,
    .destroy = c_destroy,
    .gpu_count = c_count,
    .gpu_name = c_str,
    .gpu_uuid = c_str,
    .memory = c_memory,
    .util = c_util,
    .power = c_watts,
    .power_limit = c_watts,
    .power_range = c_range,
    .energy = c_energy,
    .set_power_limit = c_set,
    .gpu_pids = c_pids,
};

struct counting_fixture {
    struct fixture f; /* first: teardown frees it as a struct fixture */
    struct counting c;
    struct eco_platform p;
};

static int setup_counting(void **state)
{
    struct counting_fixture *cf = calloc(1, sizeof *cf);
    if (!cf)
        return -1;
    cf->p = (struct eco_platform){.ops = &counting_ops, .state = &cf->c};
    /* window 0: the last sample alone decides busy or free */
    if (start_fixture(&cf->f, &cf->p, 0) < 0)
        return -1;
    *state = &cf->f;
    return 0;
}

static int teardown_counting(void **state)
{
    struct fixture *f = *state;
    f->d.platform = NULL; /* the fixture's own, not eco_platform_open's */
    return teardown(state);
}

/* The pass makes no platform call and decides from the latest sample, whatever the GPUs show
 * meanwhile; the sampling tick reads every GPU and stamps the sample with its time. */
static void test_pass_uses_the_sample(void **state)
{
    struct fixture *f = *state;
    struct counting *c = &((struct counting_fixture *)f)->c;
    struct eco_gpusel_gpu st;
    struct eco_error err = {{0}};
    int64_t id = 0;
    /* a job asking for one GPU */
    struct eco_store_job j = {.uid = getuid(),
                              .gid = getgid(),
                              .cwd = "/",
                              .argv_json = "[\"/bin/sh\",\"-c\",\"exit 0\"]",
                              .gpus = 1,
                              .power_cap_w = ECO_STORE_CAP_NONE,
                              .submit_s = 900.0};
    if (eco_store_insert(f->d.store, &j, &id, &err) < 0)
        fail_msg("insert: %s", err.msg);
    j.id = id;
    assert_int_equal(ecod__queue_add(&f->d, &j), 0);

    /* never sampled: the pass offers no GPU and reads none */
    assert_true(ecod__sched_sample_due(&f->d, 5.0));
    ecod__sched_pass(&f->d, 1000.0, 5.0);
    assert_int_equal(c->calls, 0);
    assert_int_equal(ecod__queue_len(&f->d), 1);
    assert_true(f->d.pass.last_sample_age_s < 0);

    /* the sampling tick: both GPUs busy (util 0.9, memory full) */
    c->util = 0.9;
    c->used_b = COUNTING_TOTAL_B;
    ecod__sched_sample(&f->d, 1001.0, 6.0);
    assert_int_equal(c->reads, 4); /* memory and util of 2 GPUs */
    assert_int_equal(eco_gpusel_gpu_status(f->d.sel, 1, 6.0, &st), 0);
    assert_true(st.has_sample && st.busy && st.last.t_s == 6.0);
    assert_int_equal(f->d.sample.samples, 1);
    assert_false(ecod__sched_sample_due(&f->d, 6.1)); /* 0.2 s apart at the most often */
    assert_true(ecod__sched_sample_due(&f->d, 6.2));

    /* the GPUs go idle, but the pass sees the sample (busy), not the GPUs */
    c->util = 0;
    c->used_b = 0;
    c->calls = c->reads = 0;
    ecod__sched_pass(&f->d, 1001.5, 6.5);
    assert_int_equal(c->calls, 0);
    assert_int_equal(ecod__queue_len(&f->d), 1);
    assert_true(f->d.pass.last_sample_age_s == 0.5);

    /* the next sample shows them idle: the pass starts the job on one of them, reading no
     * GPU state (the energy counters alone, read at the start) */
    ecod__sched_sample(&f->d, 1002.0, 7.0);
    assert_int_equal(c->reads, 4);
    c->calls = c->reads = c->energy_reads = 0;
    ecod__sched_pass(&f->d, 1002.25, 7.25);
    assert_int_equal(c->reads, 0);
    assert_int_equal(c->calls, c->energy_reads);
    assert_int_equal(ecod__queue_len(&f->d), 0);
    assert_true(f->d.pass.last_sample_age_s == 0.25);
    pass_until(f, id, ECO_STORE_RUNNING);
    struct eco_store_job done = get(f, id);
    assert_int_equal(done.state, ECO_STORE_DONE);
    assert_non_null(done.assigned_gpus);
    eco_store_job_fini(&done);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_times_are_the_callers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_reaped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pass_uses_the_sample, setup_counting,
                                        teardown_counting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
