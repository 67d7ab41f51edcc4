/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s deferrable Slurm jobs (src/slurm/powerd_grid.c) on hand-made squeue
 * entries, with a stand-in for scontrol: the comment's bounds (31 days, as ecoschedd), and that
 * powerd releases only the holds it owns, never an administrator's (issue 28, findings 1-2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "slurm/powerd.h"
#include "util/grid_signal.h"

#define H 3600.0
/* 2026-12-01T00:00:00Z, the hour the hand-made signal is high in */
#define T0 1796083200.0

/* The scontrol calls made, "VERB ID;" each. */
static char calls[4096];

static int fake_scontrol(const char *verb, int64_t id)
{
    size_t n = strlen(calls);
    snprintf(calls + n, sizeof calls - n, "%s %" PRId64 ";", verb, id);
    return 0;
}

static void test_parse_bounds(void **state)
{
    (void)state;
    double d = -1;
    struct eco_error err = {{0}};
    assert_int_equal(eco_powerd__defer_parse("ecosched:max-delay=6h", &d, &err), 0);
    assert_true(d == 6 * H);
    assert_int_equal(eco_powerd__defer_parse("ecosched:max-delay=31d", &d, &err), 0);
    assert_true(d == ECO_MAX_DELAY_S);
    assert_int_equal(eco_powerd__defer_parse("ecosched:max-delay=2678400", &d, &err), 0);
    assert_int_equal(eco_powerd__defer_parse("ecosched:max-delay=0s", &d, &err), 0);
    assert_true(d == 0);
    /* out of range or not a duration: refused, naming the field */
    static const char *const bad[] = {"2678401", "32d",  "30000000d", "1e300d", "1e308",
                                      "inf",     "nan",  "-1s",       "6x",     "",
                                      " 6h",     "6h,x", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char c[64];
        snprintf(c, sizeof c, "ecosched:max-delay=%s", bad[i]);
        err.msg[0] = '\0';
        assert_int_equal(eco_powerd__defer_parse(c, &d, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "field max-delay"));
    }
    assert_int_equal(eco_powerd__defer_parse("ecosched:not-before=2026-12-01T22:00Z", &d, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "field 'not-before'"));
    /* the shared bound itself (ecoschedd's max_delay uses it too) */
    assert_int_equal(eco_check_max_delay("max_delay", ECO_MAX_DELAY_S, &err), 0);
    assert_int_equal(eco_check_max_delay("max_delay", NAN, &err), -EINVAL);
    assert_int_equal(eco_check_max_delay("max_delay", INFINITY, &err), -EINVAL);
    assert_int_equal(eco_check_max_delay("max_delay", -1, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "max_delay must be seconds 0..2678400 (31 days)"));
}

struct fixture {
    struct powerd pd;
    char dir[64];
};

/* A powerd with the lwa policy on an hourly carbon signal from T0 - 24 h to T0 + 24 h, 500
 * g/kWh but 50 in hour T0 + 3 h (the operator's forecast): a job submitted at T0 with 6 h of
 * slack is released at T0 + 3 h. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/test_powerd_defer.XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    char path[128];
    snprintf(path, sizeof path, "%s/carbon.csv", f->dir);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fprintf(fp, "time_utc,carbon_gco2eq_per_kwh\n");
    for (int h = -24; h <= 24; h++) {
        char t[32];
        eco_format_utc(T0 + h * H, t, sizeof t);
        fprintf(fp, "%s,%d\n", t, h == 3 ? 50 : 500);
    }
    fclose(fp);
    struct eco_error err = {{0}};
    if (ecod__grid_setup(&f->pd.grid, path, NULL, NULL, NULL, "lwa", 3600, 300, f->dir, 0, &err) <
        0) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    f->pd.defer = calloc(MAX_JOBS, sizeof *f->pd.defer);
    f->pd.scontrol = fake_scontrol;
    calls[0] = '\0';
    *state = f;
    return f->pd.defer ? 0 : -1;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/carbon.csv", f->dir);
    unlink(path);
    rmdir(f->dir);
    ecod__grid_fini(&f->pd.grid);
    free(f->pd.defer);
    free(f);
    return 0;
}

/* One squeue entry. */
struct sq {
    int64_t id;
    const char *state, *reason, *comment;
};

/* One period at now: squeue lists jobs[0..n), each seen by powerd, then the sweep. */
static void period(struct powerd *pd, double now, const struct sq *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:I}", "job_id", (json_int_t)jobs[i].id,
                              "job_state", jobs[i].state, "state_reason", jobs[i].reason, "comment",
                              jobs[i].comment, "submit_time", (json_int_t)T0);
        assert_non_null(o);
        eco_powerd__defer_job(pd, o, now);
        json_decref(o);
    }
    eco_powerd__defer_sweep(pd, now);
}

/* Issue 28's scenario: an administrator holds job 1, its user then sets
 * comment=ecosched:max-delay=0s; powerd must never release it (before: released within a
 * period, and again after every new hold). The same with a slack, and for a job whose
 * administrator's hold came after powerd placed its own. */
static void test_admin_hold_never_released(void **state)
{
    struct fixture *f = *state;
    struct sq j1 = {1, "PENDING", "JobHeldAdmin", "ecosched:max-delay=0s"};
    struct sq j2 = {2, "PENDING", "JobHeldAdmin", "ecosched:max-delay=6h"};
    for (int k = 0; k < 5; k++) {
        struct sq both[] = {j1, j2};
        period(&f->pd, T0 + k * H, both, 2);
    }
    assert_string_equal(calls, "");
    /* job 3: pending, not held; powerd holds it (a user hold), then an administrator holds it
     * too; at its release time powerd leaves the administrator's hold alone */
    struct sq j3 = {3, "PENDING", "Priority", "ecosched:max-delay=6h"};
    period(&f->pd, T0, &j3, 1);
    assert_string_equal(calls, "uhold 3;");
    j3.reason = "JobHeldUser";
    period(&f->pd, T0 + 60, &j3, 1);
    j3.reason = "JobHeldAdmin";
    period(&f->pd, T0 + 2 * H, &j3, 1);
    period(&f->pd, T0 + 3 * H, &j3, 1);
    period(&f->pd, T0 + 7 * H, &j3, 1);
    assert_string_equal(calls, "uhold 3;");
}

/* sbatch --hold with the comment: the user's hold is powerd's to release at the policy's time
 * (T0 + 3 h), once; held again by its user afterwards, even after a period squeue did not list
 * it, it stays held. */
static void test_owned_hold_released_once(void **state)
{
    struct fixture *f = *state;
    struct sq j = {7, "PENDING", "JobHeldUser", "ecosched:max-delay=6h"};
    period(&f->pd, T0, &j, 1);
    period(&f->pd, T0 + H, &j, 1);
    assert_string_equal(calls, "");
    assert_int_equal(f->pd.n_defer, 1);
    assert_true(f->pd.defer[0].owned && fabs(f->pd.defer[0].release_s - (T0 + 3 * H)) < 1);
    period(&f->pd, T0 + 3 * H, &j, 1);
    assert_string_equal(calls, "release 7;");
    j.reason = "Priority";
    period(&f->pd, T0 + 3 * H + 60, &j, 1);
    period(&f->pd, T0 + 3 * H + 120, NULL, 0); /* squeue did not list it once */
    j.reason = "JobHeldUser";                  /* its user holds it again */
    period(&f->pd, T0 + 4 * H, &j, 1);
    period(&f->pd, T0 + 8 * H, &j, 1);
    assert_string_equal(calls, "release 7;");
    /* forgotten a day after squeue stopped listing it */
    period(&f->pd, T0 + 8 * H + DEFER_FORGET_S + 1, NULL, 0);
    assert_int_equal(f->pd.n_defer, 0);
}

/* A hold powerd placed but the job's user released early: no longer deferred (powerd does not
 * hold it again, nor release the user's own later hold). A comment out of bounds: refused,
 * the user's hold left to the user. */
static void test_released_early_and_refused(void **state)
{
    struct fixture *f = *state;
    struct sq j = {8, "PENDING", "None", "ecosched:max-delay=6h"};
    period(&f->pd, T0, &j, 1);
    assert_string_equal(calls, "uhold 8;");
    j.reason = "Priority"; /* scontrol release by its user */
    period(&f->pd, T0 + 60, &j, 1);
    j.reason = "JobHeldUser";
    period(&f->pd, T0 + 120, &j, 1);
    period(&f->pd, T0 + 4 * H, &j, 1);
    assert_string_equal(calls, "uhold 8;");
    calls[0] = '\0';
    struct sq big[] = {{9, "PENDING", "JobHeldUser", "ecosched:max-delay=30000000d"},
                       {10, "PENDING", "JobHeldUser", "ecosched:max-delay=1e300d"},
                       {11, "PENDING", "None", "ecosched:max-delay=32d"},
                       {12, "PENDING", "JobHeldUser", "ecosched:not-before=2026-12-01T22:00Z"}};
    for (int k = 0; k < 3; k++)
        period(&f->pd, T0 + k * H, big, 4);
    assert_string_equal(calls, "");
    for (size_t i = 0; i < f->pd.n_defer; i++)
        if (f->pd.defer[i].id >= 9)
            assert_true(f->pd.defer[i].done && !f->pd.defer[i].owned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bounds),
        cmocka_unit_test_setup_teardown(test_admin_hold_never_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owned_hold_released_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_released_early_and_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
