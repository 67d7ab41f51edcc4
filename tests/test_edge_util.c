/* SPDX-License-Identifier: MIT */
/* The edges' one copy of each utility (src/util): mkdir -p, the level-checked log, the HTTP
 * request body, the HTTP client's failure paths (no server needed) and, against a one-answer
 * loopback server of the test's own, that it ignores proxy variables and bounds an answer's
 * body; the CSV reader's refusal of a FIFO and its bound on decompressed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "util/clock.h"
#include "util/csv.h"
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

/* A loopback server for one request: it keeps the request line and answers 200 with a body
 * of `body_len` bytes of 'x'. */
struct one_server {
    int fd;
    unsigned short port;
    size_t body_len;
    char request[256];
    pthread_t thread;
};

static void *serve_one(void *arg)
{
    struct one_server *sv = arg;
    int c = accept(sv->fd, NULL, NULL);
    if (c < 0)
        return NULL;
    char buf[4096];
    size_t got = 0;
    ssize_t k;
    while (got < sizeof buf - 1 && (k = recv(c, buf + got, sizeof buf - 1 - got, 0)) > 0) {
        got += (size_t)k;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    buf[got] = '\0';
    snprintf(sv->request, sizeof sv->request, "%.*s", (int)strcspn(buf, "\r\n"), buf);
    char head[128];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     sv->body_len);
    static char xs[65536];
    memset(xs, 'x', sizeof xs);
    if (send(c, head, (size_t)n, MSG_NOSIGNAL) == n)
        for (size_t left = sv->body_len; left > 0;) {
            size_t w = left < sizeof xs ? left : sizeof xs;
            if ((k = send(c, xs, w, MSG_NOSIGNAL)) <= 0)
                break; /* the client stopped reading */
            left -= (size_t)k;
        }
    close(c);
    return NULL;
}

static void one_server_start(struct one_server *sv, size_t body_len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    memset(sv, 0, sizeof *sv);
    sv->body_len = body_len;
    sv->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(sv->fd >= 0);
    assert_int_equal(bind(sv->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(sv->fd, 4), 0);
    assert_int_equal(getsockname(sv->fd, (struct sockaddr *)&a, &len), 0);
    sv->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&sv->thread, NULL, serve_one, sv), 0);
}

static void one_server_stop(struct one_server *sv)
{
    pthread_join(sv->thread, NULL);
    close(sv->fd);
}

/* With every proxy variable pointing at a port nobody listens on (9), the request still goes
 * straight to the server, as a plain "GET /path" (a proxy would get the absolute URL). */
static void test_http_no_proxy(void **state)
{
    (void)state;
    static const char *const vars[] = {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        setenv(vars[i], "http://127.0.0.1:9", 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    struct one_server sv;
    one_server_start(&sv, 5);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u", sv.port);
    struct eco_http_req r = {.endpoint = base, .path = "/carbon.csv", .timeout_ms = 10000};
    struct eco_http_resp a;
    struct eco_error e = {{0}};
    int rc = eco_http_request(&r, &a, &e);
    if (rc != 0) {
        /* the request went to the proxy: the server still waits for one; let it go */
        int c = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in to = {.sin_family = AF_INET,
                                 .sin_port = htons(sv.port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (c >= 0 && connect(c, (struct sockaddr *)&to, sizeof to) == 0)
            close(c);
    }
    one_server_stop(&sv);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    if (rc != 0)
        fail_msg("request through the proxy variables: rc %d: %s", rc, e.msg);
    assert_int_equal(a.status, 200);
    assert_int_equal(a.len, 5);
    assert_string_equal(sv.request, "GET /carbon.csv HTTP/1.1");
    eco_http_resp_fini(&a);
}

/* A body longer than max_body: -EFBIG saying so, nothing kept; one as long as it is read. */
static void test_http_max_body(void **state)
{
    (void)state;
    static const struct {
        size_t len, max;
        int rc;
    } rows[] = {{1 << 20, 1000, -EFBIG}, {1000, 1000, 0}, {1 << 20, 0, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct one_server sv;
        one_server_start(&sv, rows[i].len);
        char base[64];
        snprintf(base, sizeof base, "http://127.0.0.1:%u", sv.port);
        struct eco_http_req r = {
            .endpoint = base, .path = "/x", .timeout_ms = 10000, .max_body = rows[i].max};
        struct eco_http_resp a;
        struct eco_error e = {{0}};
        int rc = eco_http_request(&r, &a, &e);
        one_server_stop(&sv);
        if (rc != rows[i].rc)
            fail_msg("%zu bytes, max %zu: rc %d (%s)", rows[i].len, rows[i].max, rc, e.msg);
        if (rc == 0)
            assert_int_equal(a.len, rows[i].len);
        else
            assert_non_null(strstr(e.msg, "answer longer than 1000 bytes"));
        eco_http_resp_fini(&a);
    }
}

/* The CSV reader: a FIFO refused at once (the open does not wait for a writer), and the
 * decompressed text bounded by eco_csv_set_max_bytes, naming file, line and the limit. */
static void test_csv_limits(void **state)
{
    (void)state;
    char dir[] = "/tmp/ecosched-util-XXXXXX", path[128];
    struct eco_csv_file *f = NULL;
    struct eco_error e = {{0}};
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(eco_csv_open(path, 1024, &f, &e), -EIO);
    assert_null(f);
    assert_non_null(strstr(e.msg, "a FIFO, not a regular file"));
    assert_non_null(strstr(e.msg, path));
    unlink(path);
    assert_int_equal(eco_csv_open("/dev/null", 1024, &f, &e), -EIO); /* a device */
    assert_non_null(strstr(e.msg, "not a regular file"));
    /* 3 KiB of lines in a gzip file, read with a 2 KiB limit: refused in the line that passes
     * it; with a 4 KiB limit, read whole */
    snprintf(path, sizeof path, "%s/t.csv.gz", dir);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    for (int i = 0; i < 3 * 1024 / 8; i++)
        assert_int_equal(gzputs(gz, "abcdefg\n"), 8);
    assert_int_equal(gzclose(gz), Z_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(eco_csv_open(path, 1024, &f, &e), 0);
        eco_csv_set_max_bytes(f, k ? 4096 : 2048, "a test file");
        char *line;
        size_t len;
        int rc;
        unsigned long lines = 0;
        while ((rc = eco_csv_next(f, &line, &len, &e)) == 1)
            lines++;
        if (k) {
            assert_int_equal(rc, 0);
            assert_int_equal(lines, 3 * 1024 / 8);
        } else {
            assert_int_equal(rc, -EFBIG);
            char want[256];
            snprintf(want, sizeof want,
                     "%s:%lu: more than 2 KiB of text (after "
                     "decompression): the limit for a test file",
                     path, lines + 1);
            if (!strstr(e.msg, want))
                fail_msg("'%s' lacks '%s'", e.msg, want);
        }
        eco_csv_close(f);
    }
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mkdir_p),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_http_body),
        cmocka_unit_test(test_http_unreachable),
        cmocka_unit_test(test_http_no_proxy),
        cmocka_unit_test(test_http_max_body),
        cmocka_unit_test(test_csv_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
