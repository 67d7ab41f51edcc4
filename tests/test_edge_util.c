/* SPDX-License-Identifier: MIT */
/* The edges' one copy of each utility (src/util): mkdir -p, the level-checked log, the HTTP
 * request body and the HTTP client's failure paths (no server needed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/fs.h"
#include "util/http_client.h"
#include "util/http_server.h"
#include "util/log.h"

static void test_mkdir_p(void **state)
{
    (void)state;
    char top[] = "/tmp/ecosched-util-XXXXXX", path[256], cmd[300];
    struct stat st;
    assert_non_null(mkdtemp(top));
    snprintf(path, sizeof path, "%s/a/b/c", top);
    assert_int_equal(eco_mkdir_p(path, 0700), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(eco_mkdir_p(path, 0700), 0); /* existing: fine */
    snprintf(path, sizeof path, "%s/a/b/c/", top);
    assert_int_equal(eco_mkdir_p(path, 0700), 0); /* trailing slash */
    snprintf(path, sizeof path, "%s/file", top);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    snprintf(path, sizeof path, "%s/file/sub", top);
    assert_int_equal(eco_mkdir_p(path, 0700), -ENOTDIR);
    assert_int_equal(eco_mkdir_p("", 0700), -ENOENT);
    snprintf(path, sizeof path, "%s/one", top);
    assert_int_equal(eco_mkdir(path, 0700), 0);
    assert_int_equal(eco_mkdir(path, 0700), 0); /* EEXIST is not an error */
    snprintf(path, sizeof path, "%s/x/y", top);
    assert_int_equal(eco_mkdir(path, 0700), -ENOENT); /* no parents */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    assert_int_equal(system(cmd), 0);
}

/* The log's lines on stderr: "PROG: LEVEL: TAG: message", the tag left out when NULL, and
 * nothing above the level (its arguments not even evaluated). */
static int evaluated;
static int side_effect(void)
{
    return ++evaluated;
}

static void test_log(void **state)
{
    (void)state;
    char path[] = "/tmp/ecosched-log-XXXXXX", buf[512] = "";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    assert_true(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    eco_log_setup("ecoschedd", false);
    eco_log_level = ECO_LOG_INFO;
    ECO_LOG(ECO_LOG_WARN, "sched", "job %d: %s", 7, "late");
    ECO_LOG(ECO_LOG_DEBUG, "sched", "hidden %d", side_effect());
    eco_log_setup("powerd", false);
    ECO_LOG(ECO_LOG_ERR, NULL, "allocation failed: %s", "x");
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    assert_true(pread(fd, buf, sizeof buf - 1, 0) > 0);
    close(fd);
    unlink(path);
    assert_string_equal(buf, "ecoschedd: warning: sched: job 7: late\n"
                             "powerd: error: allocation failed: x\n");
    assert_int_equal(evaluated, 0);
    assert_int_equal(eco_log_level_parse("warning"), ECO_LOG_WARN);
    assert_int_equal(eco_log_level_parse("WARN"), ECO_LOG_WARN);
    assert_int_equal(eco_log_level_parse("err"), ECO_LOG_ERR);
    assert_int_equal(eco_log_level_parse("debug"), ECO_LOG_DEBUG);
    assert_int_equal(eco_log_level_parse("loud"), -EINVAL);
}

static void test_clock(void **state)
{
    (void)state;
    double m0 = eco_mono_s(), w = eco_wall_s(), m1 = eco_mono_s();
    assert_true(m1 >= m0);
    assert_true(w > 1.5e9); /* after 2017: a wall clock, not a monotonic one */
}

/* Body chunks up to max are kept; past it the body is dropped and too_big set, and the
 * chunks after that are read and dropped too. */
static void test_http_body(void **state)
{
    (void)state;
    struct eco_http_body b = {.max = 8};
    assert_int_equal(eco_http_body_add(&b, "abc", 3), 0);
    assert_int_equal(eco_http_body_add(&b, "defgh", 5), 0);
    assert_int_equal(b.len, 8);
    assert_memory_equal(b.data, "abcdefgh", 8);
    assert_false(b.too_big);
    assert_int_equal(eco_http_body_add(&b, "i", 1), 0);
    assert_true(b.too_big);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(eco_http_body_add(&b, "more", 4), 0);
    assert_true(b.too_big && b.len == 0);
    eco_http_body_fini(&b);
    struct eco_http_body e = {.max = 4};
    assert_int_equal(eco_http_body_add(&e, "", 0), 0);
    assert_null(e.data);
    eco_http_body_fini(&e);
}

/* A socket nobody listens on: -EIO and libcurl's reason; eco_http_json names the endpoint. */
static void test_http_unreachable(void **state)
{
    (void)state;
    struct eco_http_req r = {
        .endpoint = "/nonexistent/ecosched.sock", .path = "/v1/status", .timeout_ms = 1000};
    struct eco_http_resp a;
    struct eco_error e = {{0}};
    long st = -1;
    assert_int_equal(eco_http_request(&r, &a, &e), -EIO);
    assert_non_null(strstr(e.msg, "connect"));
    assert_null(a.body);
    eco_http_resp_fini(&a);
    assert_int_equal(eco_http_request(&r, &a, NULL), -EIO); /* err is optional */
    eco_http_resp_fini(&a);
    e.msg[0] = '\0';
    json_t *o = eco_http_json("/nonexistent/ecosched.sock", "/v1/node", NULL, 1000, &st, &e);
    assert_null(o);
    assert_int_equal(st, 0);
    assert_non_null(strstr(e.msg, "/nonexistent/ecosched.sock: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdir_p),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_http_body),
        cmocka_unit_test(test_http_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
