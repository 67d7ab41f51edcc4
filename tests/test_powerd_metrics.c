/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s /metrics (src/slurm/powerd_metrics.c) on its two listeners
 * (src/slurm/powerd_api.c): the API socket's per-job series carry the job's user; the
 * --metrics-listen TCP address serves the same series without it, and nothing but GET /metrics
 * (issue 31). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "slurm/powerd.h"
#include "util/http_client.h"

/* powerd_api.c's error printer (the CLI's, src/cli/main.c) */
void eco_cli__err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static char *get(const char *endpoint, const char *path, const char *method, long *status)
{
    struct eco_http_req r = {
        .endpoint = endpoint, .path = path, .method = method, .timeout_ms = 5000};
    struct eco_http_resp a;
    struct eco_error err = {{0}};
    if (eco_http_request(&r, &a, &err) < 0)
        fail_msg("%s%s: %s", endpoint, path, err.msg);
    *status = a.status;
    char *body = a.body ? strdup(a.body) : strdup("");
    eco_http_resp_fini(&a);
    return body;
}

static void metrics_without_users(void **state)
{
    (void)state;
    char dir[] = "/tmp/eco-pmet.XXXXXX", sock[300], url[64];
    assert_non_null(mkdtemp(dir));
    snprintf(sock, sizeof sock, "%s/p.sock", dir);
    struct powerd pd = {.socket = sock, .socket_gid = (gid_t)-1, .budget_w = 900};
    pthread_mutex_init(&pd.lock, NULL);
    pd.status = json_pack("{s:[{s:I,s:s,s:f,s:f}],s:[]}", "jobs", "job_id", (json_int_t)42, "user",
                          "alice", "power_w", 100.0, "energy_j", 5000.0, "nodes");
    struct MHD_Daemon *api = eco_powerd__api_start(&pd), *tcp = NULL;
    assert_non_null(api);
    bool bad = false;
    int port = 0;
    for (int p = 31000 + getpid() % 2000, k = 0; !tcp && k < 20; k++, p++) {
        snprintf(url, sizeof url, "127.0.0.1:%d", p);
        if ((tcp = eco_powerd__metrics_start(&pd, url, &bad)))
            port = p;
        assert_false(bad);
    }
    assert_non_null(tcp);
    long st;
    char *u = get(sock, "/metrics", NULL, &st);
    assert_int_equal(st, 200);
    assert_non_null(strstr(u, "ecosched_powerd_job_power_watts{job_id=\"42\",user=\"alice\","));
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    char *m = get(url, "/metrics", NULL, &st);
    assert_int_equal(st, 200);
    assert_null(strstr(m, "alice"));
    assert_non_null(
        strstr(m, "ecosched_powerd_job_power_watts{job_id=\"42\",slurm_job_id=\"42\"}"));
    assert_non_null(strstr(m, "ecosched_powerd_budget_watts 900"));
    free(get(url, "/v1/status", NULL, &st));
    assert_int_equal(st, 404);
    free(get(url, "/metrics", "POST", &st));
    assert_int_equal(st, 405);
    /* not an address: refused as such */
    assert_null(eco_powerd__metrics_start(&pd, "127.0.0.1", &bad));
    assert_true(bad);
    free(u);
    free(m);
    MHD_stop_daemon(tcp);
    MHD_stop_daemon(api);
    unlink(sock);
    rmdir(dir);
    json_decref(pd.status);
    pthread_mutex_destroy(&pd.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metrics_without_users),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
