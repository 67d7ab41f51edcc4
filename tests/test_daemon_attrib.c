/* SPDX-License-Identifier: MIT */
/* Per-job energy on a shared GPU (src/daemon/attrib.c, docs/models/energy.md): the split rule
 * on hand-computed cases, and ecoschedd's accounting on a scripted platform whose energy
 * counter, processes, memory and per-process utilisation the test sets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "daemon/attrib.h"
#include "daemon/ecod.h"
#include "daemon/jobcg.h"
#include "daemon/runs.h"
#include "daemon/sched.h"
#include "platform/platform.h"

/* The parts must add up to the increase to the last bits of a double: 1e-12 relative. */
#define EXACT 1e-12

static double sum(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Hand-computed cases: the basis chosen and each job's fraction of the increase. */
static void test_split_table(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        size_t n;
        struct ecod_attrib_job jobs[3];
        enum ecod_basis basis;
        double frac[3];
    } cases[] = {
        {"70 % / 30 % SM", 2, {{0.7, 4e9, true}, {0.3, 4e9, true}}, ECOD_BASIS_UTIL, {0.7, 0.3}},
        {"three samples each, 2.1 / 0.9",
         2,
         {{2.1, 1, true}, {0.9, 1, true}},
         ECOD_BASIS_UTIL,
         {0.7, 0.3}},
        {"one idle job gets nothing",
         2,
         {{0.0, 1, true}, {0.5, 1, true}},
         ECOD_BASIS_UTIL,
         {0.0, 1.0}},
        {"no utilisation: memory 6 / 2 GB",
         2,
         {{0, 6e9, true}, {0, 2e9, true}},
         ECOD_BASIS_MEMORY,
         {0.75, 0.25}},
        {"no utilisation, no memory: equal",
         3,
         {{0, 0, true}, {0, 0, true}, {0, 0, true}},
         ECOD_BASIS_EQUAL,
         {1.0 / 3, 1.0 / 3, 1.0 / 3}},
        {"a job with no process on the GPU yet gets nothing",
         2,
         {{0.9, 8e9, true}, {0, 0, true}},
         ECOD_BASIS_UTIL,
         {1.0, 0.0}},
        {"a job whose processes cannot be told (Slurm): equal",
         2,
         {{0.9, 8e9, true}, {0, 0, false}},
         ECOD_BASIS_EQUAL,
         {0.5, 0.5}},
        {"negative readings weigh nothing",
         2,
         {{-1, 3e9, true}, {0, 1e9, true}},
         ECOD_BASIS_MEMORY,
         {0.75, 0.25}},
        {"alone: exclusive", 1, {{0, 0, false}}, ECOD_BASIS_EXCLUSIVE, {1.0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double part[3] = {0};
        const double delta = 1234.5678;
        enum ecod_basis b = ecod__attrib_split(delta, cases[c].jobs, cases[c].n, part);
        print_message("%s: %s %.6f %.6f %.6f\n", cases[c].what, ecod_basis_name(b), part[0],
                      part[1], part[2]);
        assert_int_equal(b, cases[c].basis);
        for (size_t i = 0; i < cases[c].n; i++)
            assert_true(fabs(part[i] - delta * cases[c].frac[i]) < 1e-9 * delta);
        assert_true(fabs(sum(part, cases[c].n) - delta) <= EXACT * delta);
    }
    assert_int_equal(ecod__attrib_split(1.0, NULL, 0, NULL), ECOD_BASIS_NONE);
    assert_null(ecod_basis_name(ECOD_BASIS_NONE));
    assert_string_equal(ecod_basis_name(ECOD_BASIS_UTIL), "utilization");
}

/* Awkward weights and increases: the parts always add up to the increase, none negative. */
static void test_split_adds_up(void **state)
{
    (void)state;
    unsigned seed = 21;
    for (int t = 0; t < 10000; t++) {
        struct ecod_attrib_job jobs[7];
        double part[7];
        size_t n = 2 + (size_t)(rand_r(&seed) % 6);
        double delta = (rand_r(&seed) % 1000000) / 7.0 + 1e-3;
        for (size_t i = 0; i < n; i++)
            jobs[i] = (struct ecod_attrib_job){
                .util = (rand_r(&seed) % 101) / 100.0 / 3.0, .mem_b = 1, .known = true};
        ecod__attrib_split(delta, jobs, n, part);
        assert_true(fabs(sum(part, n) - delta) <= EXACT * delta);
        for (size_t i = 0; i < n; i++)
            assert_true(part[i] >= 0);
    }
}

/* ---- the daemon's accounting on a scripted platform ------------------------------------- */

/* One GPU: its counter, its processes with their memory and SM utilisation (one sample each
 * per reading, stamped `now_us`), or no per-process utilisation at all (no_util). */
struct script {
    double energy_j;
    size_t n;
    pid_t pid[4];
    uint64_t mem_b[4];
    double sm[4];
    uint64_t now_us;
    bool no_util;
    unsigned util_calls;
};

static unsigned s_count(const void *state)
{
    (void)state;
    return 1;
}

static int s_energy(void *state, unsigned gpu, double *energy_j, struct eco_error *err)
{
    (void)gpu;
    (void)err;
    *energy_j = ((struct script *)state)->energy_j;
    return 0;
}

static int s_procs(void *state, unsigned gpu, pid_t *pids, uint64_t *mem_b, size_t cap, size_t *n,
                   struct eco_error *err)
{
    const struct script *s = state;
    (void)gpu;
    (void)err;
    *n = s->n;
    for (size_t i = 0; i < s->n && i < cap; i++) {
        pids[i] = s->pid[i];
        if (mem_b)
            mem_b[i] = s->mem_b[i];
    }
    return s->n > cap ? -ENOSPC : 0;
}

static int s_util(void *state, unsigned gpu, uint64_t since_us, struct eco_proc_util *out,
                  size_t cap, size_t *n, struct eco_error *err)
{
    struct script *s = state;
    (void)gpu;
    s->util_calls++;
    *n = 0;
    if (s->no_util)
        return eco_errorf(err, -ENOTSUP, "script: no per-process utilisation");
    if (s->now_us <= since_us)
        return 0;
    for (size_t i = 0; i < s->n && i < cap; i++)
        out[(*n)++] = (struct eco_proc_util){.pid = s->pid[i], .t_us = s->now_us, .sm = s->sm[i]};
    return 0;
}

static const struct eco_platform_ops script_ops = {
    .name = "script",
    .gpu_count = s_count,
    .energy = s_energy,
    .gpu_procs = s_procs,
    .proc_util = s_util,
};

struct afix {
    struct ecod d;
    struct eco_platform p;
    struct script s;
    pid_t child; /* a process of job A's, one level below it */
};

static int setup(void **state)
{
    struct afix *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->p = (struct eco_platform){.ops = &script_ops, .state = &f->s};
    f->d.platform = &f->p;
    f->d.n_gpus = 1;
    f->child = fork();
    if (f->child == 0) {
        pause();
        _exit(0);
    }
    /* job A is this test process (its GPU process the child), job B the test's parent */
    struct ecod_run *a = ecod__run_add(&f->d), *b = ecod__run_add(&f->d);
    if (f->child < 0 || !a || !b)
        return -1;
    a = &f->d.runs[0];
    b = &f->d.runs[1];
    *a = (struct ecod_run){.id = 1, .pid = getpid(), .n_gpus = 1, .gpus = {0}};
    *b = (struct ecod_run){.id = 2, .pid = getppid(), .n_gpus = 1, .gpus = {0}};
    f->s = (struct script){
        .n = 2, .pid = {f->child, getppid()}, .mem_b = {6ULL << 30, 2ULL << 30}, .sm = {0.7, 0.3}};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct afix *f = *state;
    if (f->child > 0) {
        kill(f->child, SIGKILL);
        waitpid(f->child, NULL, 0);
    }
    free(f->d.runs);
    free(f);
    return 0;
}

/* Accounts at time t with the counter at energy_j; samples stamped t too. */
static void account(struct afix *f, double t, double energy_j)
{
    f->s.energy_j = energy_j;
    f->s.now_us = (uint64_t)(t * 1e6);
    ecod__sched_account(&f->d, t);
}

/* Two jobs at 70 % / 30 % SM utilisation get 70 % / 30 % of each increase, the parts adding up
 * to the counter's increase; job A's process is its child (found through /proc). */
static void test_account_by_util(void **state)
{
    struct afix *f = *state;
    account(f, 1, 5000); /* the first reading: no increase yet */
    account(f, 2, 5000 + 600);
    account(f, 3, 5000 + 600 + 400);
    const struct ecod_run *a = &f->d.runs[0], *b = &f->d.runs[1];
    print_message("A %.6f J, B %.6f J, basis %s\n", a->energy_j, b->energy_j,
                  ecod_basis_name(a->basis));
    assert_true(fabs(a->energy_j - 700) < 1e-9 && fabs(b->energy_j - 300) < 1e-9);
    assert_true(fabs(a->energy_j + b->energy_j - 1000) <= EXACT * 1000);
    assert_int_equal(a->basis, ECOD_BASIS_UTIL);
    assert_int_equal(b->basis, ECOD_BASIS_UTIL);
    assert_true(fabs(a->frac[0] - 0.7) < 1e-12 && fabs(b->frac[0] - 0.3) < 1e-12);
}

/* The samples of a process that exited since it was last seen still count for its job. */
static void test_exited_process_counts(void **state)
{
    struct afix *f = *state;
    account(f, 1, 0);
    account(f, 2, 100); /* A's child seen and remembered */
    kill(f->child, SIGKILL);
    waitpid(f->child, NULL, 0);
    f->s.n = 2; /* the driver still has a sample of it */
    account(f, 3, 200);
    assert_true(fabs(f->d.runs[0].energy_j - 140) < 1e-9);
    assert_int_equal(f->d.runs[0].basis, ECOD_BASIS_UTIL);
    f->child = 0;
}

/* A GPU without per-process utilisation: by memory (6 / 2 GiB); without memory either: equal. */
static void test_account_fallbacks(void **state)
{
    struct afix *f = *state;
    f->s.no_util = true;
    account(f, 1, 0);
    account(f, 2, 800);
    assert_true(fabs(f->d.runs[0].energy_j - 600) < 1e-9);
    assert_true(fabs(f->d.runs[1].energy_j - 200) < 1e-9);
    assert_int_equal(f->d.runs[0].basis, ECOD_BASIS_MEMORY);
    f->s.mem_b[0] = f->s.mem_b[1] = 0;
    account(f, 3, 1000); /* the memory at the interval's start still counts: 150 / 50 J */
    assert_true(fabs(f->d.runs[0].energy_j - 750) < 1e-9);
    account(f, 4, 1400); /* no memory at either end: equal, 200 J each */
    assert_true(fabs(f->d.runs[0].energy_j - 950) < 1e-9);
    assert_true(fabs(f->d.runs[1].energy_j - 450) < 1e-9);
    /* B: 250 J by memory, 200 J equally: marked memory, the basis of most of its energy */
    assert_int_equal(f->d.runs[1].basis, ECOD_BASIS_MEMORY);
    account(f, 5, 1800);
    assert_true(fabs(f->d.runs[1].energy_j - 650) < 1e-9);
    assert_int_equal(f->d.runs[1].basis, ECOD_BASIS_EQUAL);  /* now 400 J equally */
    assert_int_equal(f->d.runs[0].basis, ECOD_BASIS_MEMORY); /* 750 J by memory, 400 J equally */
}

/* Memory is read at the end of each interval: a job whose process has just exited (reaped at
 * once, accounted just before) keeps its memory's weight for that interval, not after. */
static void test_memory_of_exited_process(void **state)
{
    struct afix *f = *state;
    f->s.no_util = true;
    account(f, 1, 0);
    account(f, 2, 800); /* 6 / 2 GiB: 600 / 200 J */
    f->s.mem_b[0] = 0;  /* A's process gone at the end of the next interval */
    account(f, 3, 1600);
    assert_true(fabs(f->d.runs[0].energy_j - 1200) < 1e-9);
    account(f, 4, 2400); /* gone for a whole interval: B takes it */
    assert_true(fabs(f->d.runs[0].energy_j - 1200) < 1e-9);
    assert_true(fabs(f->d.runs[1].energy_j - 1200) < 1e-9);
}

/* A job alone on its GPU with only its own processes takes the whole increase. */
static void test_alone_exclusive(void **state)
{
    struct afix *f = *state;
    f->d.runs[1].n_gpus = 0; /* B released its GPU, and its process left it */
    f->s.n = 1;
    account(f, 1, 0);
    account(f, 2, 250);
    assert_true(fabs(f->d.runs[0].energy_j - 250) < 1e-12);
    assert_int_equal(f->d.runs[0].basis, ECOD_BASIS_EXCLUSIVE);
    assert_int_equal(f->d.stray[0].n, 0);
}

/* The split with a stray party (processes of no job): its part is its weight's, the parts and
 * its part add up to the increase, and beside a job whose processes cannot be told it takes
 * none. */
static void test_split_stray_table(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        size_t n;
        struct ecod_attrib_job jobs[2], stray;
        enum ecod_basis basis;
        double frac[2], stray_frac;
    } cases[] = {
        {"30 / 30 % SM beside a 40 % stray",
         2,
         {{0.3, 1, true}, {0.3, 1, true}},
         {0.4, 1, true},
         ECOD_BASIS_UTIL,
         {0.3, 0.3},
         0.4},
        {"alone beside a stray: no longer exclusive",
         1,
         {{0.5, 1, true}},
         {0.5, 1, true},
         ECOD_BASIS_UTIL,
         {0.5},
         0.5},
        {"no job: the stray takes it all",
         0,
         {{0, 0, false}},
         {0.2, 0, true},
         ECOD_BASIS_UTIL,
         {0},
         1.0},
        {"no stray: as before",
         2,
         {{0.7, 1, true}, {0.3, 1, true}},
         {0, 0, false},
         ECOD_BASIS_UTIL,
         {0.7, 0.3},
         0},
        {"by memory 3 / 1 GB and a 4 GB stray",
         2,
         {{0, 3e9, true}, {0, 1e9, true}},
         {0, 4e9, true},
         ECOD_BASIS_MEMORY,
         {0.375, 0.125},
         0.5},
        {"no readings: the stray is one equal party",
         2,
         {{0, 0, true}, {0, 0, true}},
         {0, 0, true},
         ECOD_BASIS_EQUAL,
         {1.0 / 3, 1.0 / 3},
         1.0 / 3},
        {"beside a Slurm job the stray cannot be told: equal between the jobs",
         2,
         {{0.5, 1, true}, {0, 0, false}},
         {0.5, 1, true},
         ECOD_BASIS_EQUAL,
         {0.5, 0.5},
         0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double part[2] = {0}, stray_j = -1;
        const double delta = 987.654321;
        enum ecod_basis b = ecod__attrib_split_stray(delta, cases[c].jobs, cases[c].n,
                                                     &cases[c].stray, part, &stray_j);
        print_message("%s: %s %.6f %.6f stray %.6f\n", cases[c].what, ecod_basis_name(b), part[0],
                      part[1], stray_j);
        assert_int_equal(b, cases[c].basis);
        for (size_t i = 0; i < cases[c].n; i++)
            assert_true(fabs(part[i] - delta * cases[c].frac[i]) < 1e-9 * delta);
        assert_true(fabs(stray_j - delta * cases[c].stray_frac) < 1e-9 * delta);
        assert_true(fabs(sum(part, cases[c].n) + stray_j - delta) <= EXACT * delta);
    }
    assert_int_equal(ecod__attrib_split_stray(1.0, NULL, 0, NULL, NULL, NULL), ECOD_BASIS_NONE);
}

/* A process of no job (this test's parent, alive, no job's descendant) beside the two jobs:
 * its share is charged to no job but to the GPU's unattributed energy, and it is listed. */
static void test_account_stray(void **state)
{
    struct afix *f = *state;
    f->d.runs[1].pid = getpid() + 1000000; /* B: a leader no process descends from */
    f->s.sm[0] = 0.6;                      /* A's child */
    f->s.sm[1] = 0.4;                      /* the parent: a stray */
    account(f, 1, 0);
    account(f, 2, 1000);
    const struct ecod_stray *st = &f->d.stray[0];
    print_message("A %.3f J, B %.3f J, unattributed %.3f J, %u stray, share %.3f\n",
                  f->d.runs[0].energy_j, f->d.runs[1].energy_j, st->energy_j, st->n, st->share);
    assert_true(fabs(f->d.runs[0].energy_j - 600) < 1e-9);
    assert_true(fabs(f->d.runs[1].energy_j) < 1e-9);
    assert_true(fabs(st->energy_j - 400) < 1e-9);
    assert_int_equal(st->n, 1);
    assert_int_equal(st->pids[0], getppid());
    assert_true(fabs(st->share - 0.4) < 1e-12);
    /* B's job alone gone: A alone beside the stray is no longer exclusive */
    f->d.runs[1].n_gpus = 0;
    account(f, 3, 2000);
    assert_true(fabs(f->d.runs[0].energy_j - 1200) < 1e-9);
    assert_true(fabs(st->energy_j - 800) < 1e-9);
    assert_int_equal(f->d.runs[0].basis, ECOD_BASIS_UTIL);
    /* no job at all: the stray's energy is still counted, charged to nobody */
    f->d.runs[0].n_gpus = 0;
    account(f, 4, 2500);
    assert_true(fabs(f->d.runs[0].energy_j - 1200) < 1e-9);
    assert_true(fabs(st->energy_j - 1300) < 1e-9);
}

/* A descendant that left its job's session and process group (setsid) and whose parent exited
 * is re-parented to the nearest subreaper: with the job's leader one (this test process), it
 * is still the job's. */
static void test_account_escaped_child(void **state)
{
    struct afix *f = *state;
    int fds[2];
    pid_t grandchild = 0;
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L), 0);
    assert_int_equal(pipe(fds), 0);
    pid_t mid = fork();
    if (mid == 0) {
        pid_t g = fork();
        if (g == 0) {
            setsid();
            pause();
            _exit(0);
        }
        ssize_t w = write(fds[1], &g, sizeof g);
        _exit(w == (ssize_t)sizeof g ? 0 : 1);
    }
    assert_int_equal(read(fds[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    waitpid(mid, NULL, 0); /* the middle exited: the grandchild is re-parented to us */
    close(fds[0]);
    close(fds[1]);
    f->d.runs[1].pid = getpid() + 1000000; /* B: a leader nothing descends from */
    f->s.n = 2;
    f->s.pid[0] = f->child;   /* A's ordinary child, 20 % */
    f->s.pid[1] = grandchild; /* A's escaped grandchild, 30 % */
    f->s.sm[0] = 0.2;
    f->s.sm[1] = 0.3;
    account(f, 1, 0);
    account(f, 2, 1000);
    kill(grandchild, SIGKILL);
    waitpid(grandchild, NULL, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 0L, 0L, 0L, 0L);
    print_message("A %.3f J, unattributed %.3f J\n", f->d.runs[0].energy_j, f->d.stray[0].energy_j);
    assert_true(fabs(f->d.runs[0].energy_j - 1000) < 1e-9);
    assert_true(fabs(f->d.stray[0].energy_j) < 1e-9);
}

/* The jobs' cgroups (jobcg.c) where this machine lets the test make one (root, a writable
 * cgroup2): a job's child in job-7 is job 7's whatever its parent chain (it escaped as far
 * as it can: re-parented to init); a process outside, none; the cgroup goes at the job's end. */
static void test_cgroup_job_of(void **state)
{
    (void)state;
    struct ecod *d = calloc(1, sizeof *d);
    char mnt[4096] = "", dir[4200], line[4500];
    struct eco_error err = {{0}};
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
            break;
    if (f)
        fclose(f);
    snprintf(dir, sizeof dir, "%s/ecosched-unit.%d", mnt, (int)getpid());
    assert_non_null(d);
    if (!mnt[0] || geteuid() != 0 || ecod__jobcg_init(d, dir, &err) < 0) {
        print_message("skipped: no writable cgroup2 here (%s)\n",
                      err.msg[0] ? err.msg : "not root");
        free(d);
        return;
    }
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t kid = fork();
    if (kid == 0) {
        char go;
        close(fds[1]);
        ssize_t r = read(fds[0], &go, 1); /* moved by then */
        setsid();
        pause();
        _exit(r == 1 ? 0 : 1);
    }
    close(fds[0]);
    assert_int_equal(ecod__jobcg_enter(d, 7, kid, &err), 0);
    assert_int_equal(write(fds[1], "g", 1), 1);
    close(fds[1]);
    assert_int_equal(ecod__jobcg_job_of(d, kid), 7);
    assert_int_equal(ecod__jobcg_job_of(d, getpid()), 0);
    assert_int_equal(ecod__jobcg_job_of(d, 0), 0);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    ecod__jobcg_remove(d, 7);
    ecod__jobcg_fini(d);
    for (int i = 0; i < 100 && access(dir, F_OK) == 0; i++) { /* released a moment after */
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
        d->cgroup_sweep = true;
        ecod__jobcg_fini(d);
    }
    assert_int_not_equal(access(dir, F_OK), 0);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_table),
        cmocka_unit_test(test_split_adds_up),
        cmocka_unit_test_setup_teardown(test_account_by_util, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exited_process_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_account_fallbacks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_of_exited_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alone_exclusive, setup, teardown),
        cmocka_unit_test(test_split_stray_table),
        cmocka_unit_test_setup_teardown(test_account_stray, setup, teardown),
        cmocka_unit_test_setup_teardown(test_account_escaped_child, setup, teardown),
        cmocka_unit_test(test_cgroup_job_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
