/* SPDX-License-Identifier: MIT */
/* The MUNGE request payload (src/util/munge_auth.c) without munged: payloads built from
 * requests, payloads checked against requests (a table of good and bad cases), the
 * Authorization header's credential, and a munged that is not there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "util/munge_auth.h"

/* SHA-256 of no bytes and of "{\"power_limit_w\":200}" (sha256sum). */
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define BODY "{\"power_limit_w\":200}"

static void test_payload(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path, *body, *want; /* want NULL: refused */
        const char *msg;                         /* part of the refusal's message */
    } cases[] = {
        {"GET", "/v1/node", NULL, "ecosched-v1\nGET\n/v1/node\n" SHA_EMPTY, NULL},
        {"GET", "/v1/node?x=1", NULL, "ecosched-v1\nGET\n/v1/node\n" SHA_EMPTY, NULL},
        {"POST", "/v1/gpus/0/limit", "", "ecosched-v1\nPOST\n/v1/gpus/0/limit\n" SHA_EMPTY, NULL},
        {"", "/v1/node", NULL, NULL, "method is empty"},
        {NULL, "/v1/node", NULL, NULL, "method is empty"},
        {"GE\nT", "/v1/node", NULL, NULL, "line break"},
        {"AVERYLONGMETHODNAME", "/v1/node", NULL, NULL, "too long"},
        {"GET", "v1/node", NULL, NULL, "start with '/'"},
        {"GET", "", NULL, NULL, "start with '/'"},
        {"GET", "?x", NULL, NULL, "start with '/'"},
        {"GET", "/v1/\nnode", NULL, NULL, "line break"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[ECO_MUNGE_AUTH_PAYLOAD_MAX];
        struct eco_error err = {{0}};
        const char *b = cases[i].body;
        int n = eco_munge_auth_payload(buf, sizeof buf, cases[i].method, cases[i].path, b,
                                       b ? strlen(b) : 0, &err);
        if (cases[i].want) {
            assert_int_equal(n, (int)strlen(cases[i].want));
            assert_string_equal(buf, cases[i].want);
        } else {
            assert_int_equal(n, -EINVAL);
            if (!strstr(err.msg, cases[i].msg))
                fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].msg);
        }
    }
    char longp[ECO_MUNGE_AUTH_PATH_MAX + 2], buf[ECO_MUNGE_AUTH_PAYLOAD_MAX];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    assert_int_equal(eco_munge_auth_payload(buf, sizeof buf, "GET", longp, NULL, 0, NULL), -EINVAL);
    longp[ECO_MUNGE_AUTH_PATH_MAX] = '\0'; /* the longest path: it fits */
    assert_true(eco_munge_auth_payload(buf, sizeof buf, "GET", longp, NULL, 0, NULL) > 0);
    assert_int_equal(eco_munge_auth_payload(buf, 10, "GET", "/v1/node", NULL, 0, NULL), -ENOSPC);
}

static void test_check(void **state)
{
    (void)state;
    char good[ECO_MUNGE_AUTH_PAYLOAD_MAX];
    int gn = eco_munge_auth_payload(good, sizeof good, "POST", "/v1/gpus/0/limit", BODY,
                                    strlen(BODY), NULL);
    assert_true(gn > 0);
    static const struct {
        const char *payload; /* NULL: the good one */
        const char *method, *path, *body;
        int rc;
        const char *msg;
    } cases[] = {
        {NULL, "POST", "/v1/gpus/0/limit", BODY, 0, ""},
        {NULL, "GET", "/v1/gpus/0/limit", BODY, -EACCES, "made for method POST, not GET"},
        {NULL, "POST", "/v1/gpus/1/limit", BODY, -EACCES, "made for path /v1/gpus/0/limit"},
        {NULL, "POST", "/v1/gpus/0/limit", "{\"power_limit_w\":300}", -EACCES, "another body"},
        {NULL, "POST", "/v1/gpus/0/limit", "", -EACCES, "another body"},
        {"", "GET", "/v1/node", "", -EPROTO, "not an ecosched request"},
        {"hello", "GET", "/v1/node", "", -EPROTO, "not an ecosched request"},
        {"ecosched-v2\nGET\n/v1/node\n" SHA_EMPTY, "GET", "/v1/node", "", -EPROTO,
         "version 'ecosched-v2'"},
        {"ecosched-v1\nGET\n/v1/node", "GET", "/v1/node", "", -EPROTO, "not an ecosched request"},
        {"ecosched-v1\nGET\n/v1/node\n" SHA_EMPTY "\n", "GET", "/v1/node", "", -EPROTO,
         "more than 4 lines"},
        {"ecosched-v1\nGET\n/v1/node\n" SHA_EMPTY, "GET", "/v1/node", "", 0, ""},
        {"ecosched-v1\nGET\n/v1/node/\n" SHA_EMPTY, "GET", "/v1/node", "", -EACCES, "for path"},
        {"ecosched-v1\nGETX\n/v1/node\n" SHA_EMPTY, "GET", "/v1/node", "", -EACCES, "method"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct eco_error err = {{0}};
        const char *p = cases[i].payload ? cases[i].payload : good;
        size_t pl = cases[i].payload ? strlen(p) : (size_t)gn;
        int rc = eco_munge_auth_check(p, pl, cases[i].method, cases[i].path, cases[i].body,
                                      strlen(cases[i].body), &err);
        if (rc != cases[i].rc || !strstr(err.msg, cases[i].msg))
            fail_msg("case %zu: rc %d (want %d), '%s' lacks '%s'", i, rc, cases[i].rc, err.msg,
                     cases[i].msg);
    }
    assert_int_equal(eco_munge_auth_check(NULL, 0, "GET", "/v1/node", NULL, 0, NULL), -EPROTO);
}

static void test_header(void **state)
{
    (void)state;
    static const struct {
        const char *header, *cred; /* cred NULL: refused */
    } cases[] = {
        {"MUNGE MUNGE:AwQFAAB:", "MUNGE:AwQFAAB:"},
        {"munge MUNGE:abc=:", "MUNGE:abc=:"},
        {"MUNGE   x", "x"},
        {NULL, NULL},
        {"", NULL},
        {"MUNGE", NULL},
        {"MUNGE ", NULL},
        {"MUNGEx", NULL},
        {"Bearer abc", NULL},
        {"MUNGE a b", NULL},
        {"MUNGE a\tb", NULL},
        {"MUNGE a\x7f", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *c = eco_munge_auth_cred(cases[i].header);
        if (cases[i].cred ? !c || strcmp(c, cases[i].cred) : c != NULL)
            fail_msg("case %zu: '%s' gave '%s'", i, cases[i].header ? cases[i].header : "(null)",
                     c ? c : "(null)");
    }
    static char big[ECO_MUNGE_AUTH_CRED_MAX + 8];
    memcpy(big, "MUNGE ", 6);
    memset(big + 6, 'x', ECO_MUNGE_AUTH_CRED_MAX + 1);
    assert_null(eco_munge_auth_cred(big));
    big[6 + ECO_MUNGE_AUTH_CRED_MAX] = '\0';
    assert_non_null(eco_munge_auth_cred(big));
}

/* No munged on the socket: the header cannot be made, and says where it looked. */
static void test_no_munged(void **state)
{
    (void)state;
    struct eco_error err = {{0}};
    char hdr[256];
    struct eco_munge *m = eco_munge_create("/nonexistent/munge.socket.2", &err);
    if (!eco_munge_available()) {
        assert_null(m);
        assert_non_null(strstr(err.msg, "built without libmunge"));
        assert_int_equal(eco_munge_header(NULL, "GET", "/v1/node", NULL, 0, hdr, sizeof hdr, &err),
                         -ENOTSUP);
        return;
    }
    assert_non_null(m);
    int rc = eco_munge_header(m, "GET", "/v1/node", NULL, 0, hdr, sizeof hdr, &err);
    assert_int_equal(rc, -EHOSTUNREACH);
    assert_non_null(strstr(err.msg, "/nonexistent/munge.socket.2"));
    assert_int_equal(eco_munge_header(m, "", "/v1/node", NULL, 0, hdr, sizeof hdr, &err), -EINVAL);
    uid_t uid;
    gid_t gid;
    rc = eco_munge_verify(m, "MUNGE:xx:", "GET", "/v1/node", NULL, 0, &uid, &gid, &err);
    assert_true(rc == -EHOSTUNREACH || rc == -EACCES);
    eco_munge_destroy(m);
    eco_munge_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_payload),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_no_munged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
