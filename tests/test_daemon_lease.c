/* SPDX-License-Identifier: MIT */
/* ecoschedd's fallback lease from powerd (src/daemon/lease.c) alone, time injected: which
 * leases are refused (naming the field), when one expires, a renewal ending the fallback, the
 * lease across a restart (wall time converted back), and its file read back or refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include "daemon/lease.h"
#define TEST_TMPDIR_NAME "eco_test_lease"
#include "test_tmpdir.h"

static void test_check(void **state)
{
    (void)state;
    static const struct {
        double w, s;
        const char *field; /* NULL: accepted */
    } rows[] = {
        {500, 15, NULL},
        {0, 0, NULL}, /* the release */
        {0, 5, "fallback_w"},
        {1, 1, NULL},
        {100000, 86400, NULL},
        {0, 15, "fallback_w"},
        {-1, 15, "fallback_w"},
        {NAN, 15, "fallback_w"},
        {100001, 15, "fallback_w"},
        {500, 0.5, "lease_s"},
        {500, NAN, "lease_s"},
        {500, 86401, "lease_s"},
        {INFINITY, 15, "fallback_w"},
        {500, INFINITY, "lease_s"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct eco_error err = {{0}};
        int rc = ecod_lease_check(rows[i].w, rows[i].s, &err);
        if (!rows[i].field) {
            assert_int_equal(rc, 0);
            continue;
        }
        assert_int_equal(rc, -EINVAL);
        assert_non_null(strstr(err.msg, rows[i].field));
    }
}

/* Renewed at mono 100 for 15 s: valid until 115, due from then, once; a renewal ends it. */
static void test_expiry(void **state)
{
    (void)state;
    struct ecod_lease l = {0};
    assert_true(isinf(ecod_lease_left_s(&l, 1e6))); /* never given: never due */
    assert_false(ecod_lease_due(&l, 1e6));
    assert_false(ecod_lease_renew(&l, 500, 15, 1e9, 100));
    static const struct {
        double mono, left;
        bool due;
    } rows[] = {{100, 15, false}, {114.9, 0.1, false}, {115, 0, true}, {200, -85, true}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_float_equal(ecod_lease_left_s(&l, rows[i].mono), rows[i].left, 1e-9);
        assert_int_equal(ecod_lease_due(&l, rows[i].mono), rows[i].due);
    }
    l.active = true; /* the daemon took the fallback: not due again */
    assert_false(ecod_lease_due(&l, 200));
    assert_true(ecod_lease_renew(&l, 400, 10, 1e9 + 100, 200)); /* ends the fallback */
    assert_false(l.active);
    assert_float_equal(l.fallback_w, 400, 0);
    assert_false(ecod_lease_due(&l, 209.9));
    assert_true(ecod_lease_due(&l, 210));
}

/* A restart: the renewal's wall time gives its place on the new monotonic clock. */
static void test_resume(void **state)
{
    (void)state;
    static const struct {
        double heard_wall, wall, left;
    } rows[] = {
        {1000, 1005, 10}, /* 5 s of a 15 s lease gone: 10 left */
        {1000, 1020, -5}, /* expired while the daemon was away */
        {1000, 900, 15},  /* wall clock set back: heard now, the whole lease */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct ecod_lease l = {.fallback_w = 500, .lease_s = 15, .active = true};
        l.heard_wall = rows[i].heard_wall;
        ecod_lease_resume(&l, rows[i].wall, 50);
        assert_false(l.active); /* the first tick takes it again when due */
        assert_float_equal(ecod_lease_left_s(&l, 50), rows[i].left, 1e-9);
    }
}

static void test_file(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/lease.json", tmpdir);
    struct ecod_lease l = {.fallback_w = 480.5,
                           .lease_s = 15,
                           .heard_wall = 1.7e9,
                           .active = true,
                           .saved_budget_w = 0,
                           .limit_w = {240, 0, 150.5}};
    struct ecod_lease r;
    struct eco_error err = {{0}};
    assert_int_equal(ecod_lease_load(path, &r, &err), -ENOENT);
    assert_int_equal(ecod_lease_save(path, &l, &err), 0);
    assert_int_equal(ecod_lease_load(path, &r, &err), 0);
    assert_float_equal(r.fallback_w, 480.5, 0);
    assert_float_equal(r.lease_s, 15, 0);
    assert_float_equal(r.heard_wall, 1.7e9, 0);
    assert_true(r.active);
    assert_float_equal(r.limit_w[0], 240, 0);
    assert_float_equal(r.limit_w[1], 0, 0);
    assert_float_equal(r.limit_w[2], 150.5, 0);
    assert_float_equal(r.limit_w[3], 0, 0);
}

static void test_bad_file(void **state)
{
    (void)state;
    static const struct {
        const char *text, *field;
    } rows[] = {
        {"not json", "lease.json:1"},
        {"{\"version\":2,\"fallback_w\":1,\"lease_s\":1,\"heard_wall_s\":1,\"saved_budget_w\":0,"
         "\"limits_w\":[]}",
         "version"},
        {"{\"version\":1,\"fallback_w\":-1,\"lease_s\":1,\"heard_wall_s\":1,\"saved_budget_w\":0,"
         "\"limits_w\":[]}",
         "fallback_w"},
        {"{\"version\":1,\"fallback_w\":1,\"heard_wall_s\":1,\"saved_budget_w\":0,"
         "\"limits_w\":[]}",
         "lease_s"},
        {"{\"version\":1,\"fallback_w\":1,\"lease_s\":1,\"heard_wall_s\":1,\"saved_budget_w\":0,"
         "\"limits_w\":[1,\"x\"]}",
         "limits_w"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct ecod_lease r = {.fallback_w = 9};
        struct eco_error err = {{0}};
        const char *path = write_text("lease.json", rows[i].text);
        assert_int_equal(ecod_lease_load(path, &r, &err), -EBADMSG);
        assert_non_null(strstr(err.msg, rows[i].field));
        assert_float_equal(r.fallback_w, 0, 0); /* no lease rather than half of one */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),    cmocka_unit_test(test_expiry),
        cmocka_unit_test(test_resume),   cmocka_unit_test(test_file),
        cmocka_unit_test(test_bad_file),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
