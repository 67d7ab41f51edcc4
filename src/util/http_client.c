/* SPDX-License-Identifier: MIT */
/* The edges' one HTTP client: libcurl easy requests to a unix socket or a URL. */
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "http_client.h"

/* The answer being read, and its bound. */
struct body {
    struct eco_http_resp *resp;
    size_t max; /* 0: none */
    bool over;  /* the answer went past max: the transfer was stopped */
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    struct body *bd = ud;
    struct eco_http_resp *b = bd->resp;
    size_t add = size * n;
    if (bd->max && add > bd->max - b->len) {
        bd->over = true;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    if (b->len + add + 1 > b->cap) {
        /* doubling: libcurl hands 16 KiB at a time, and growing by that much would copy a
         * large answer over and over */
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + add + 1)
            cap *= 2;
        char *d = realloc(b->body, cap);
        if (!d)
            return 0;
        b->body = d;
        b->cap = cap;
    }
    char *d = b->body;
    memcpy(d + b->len, p, add);
    b->len += add;
    d[b->len] = '\0';
    return add;
}

/* CURLOPT_XFERINFOFUNCTION: nonzero aborts the transfer. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const struct eco_http_req *r = ud;
    return r->cancel(r->cancel_ud);
}

int eco_http_request(const struct eco_http_req *r, struct eco_http_resp *out, struct eco_error *err)
{
    struct curl_slist *hdr = NULL;
    /* A base URL or "http://localhost" and a request path: paths are short ("/v1/jobs/ID/logs
     * ?stream=..."), node endpoints a host and port. */
    char url[1024];
    int rc = 0;
    *out = (struct eco_http_resp){0};
    struct body bd = {.resp = out, .max = r->max_body};
    CURL *c = curl_easy_init();
    if (!c) {
        rc = eco_errorf(err, -ENOMEM, "cannot initialise libcurl");
        goto out;
    }
    if (r->endpoint[0] == '/') {
        snprintf(url, sizeof url, "http://localhost%s", r->path);
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, r->endpoint);
    } else {
        snprintf(url, sizeof url, "%s%s", r->endpoint, r->path);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    /* no proxy from the environment: "" disables the one http_proxy etc. would set, "*"
     * exempts every host, so that neither a user's nor a service manager's proxy variables
     * send a request for a daemon of ours (or its body, or its token) elsewhere */
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (r->auth)
        hdr = curl_slist_append(hdr, r->auth);
    if (r->method)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    if (r->body) {
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
    } else if (r->method && !strcmp(r->method, "POST")) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    }
    if (hdr)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &bd);
    if (r->on_header) {
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, r->on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, r->header_ud);
    }
    if (r->timeout_ms > 0)
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, r->timeout_ms);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (r->cancel) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)r);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    CURLcode cc = curl_easy_perform(c);
    if (bd.over) {
        rc = eco_errorf(err, -EFBIG, "answer longer than %zu bytes (the limit for this request)",
                        r->max_body);
        goto out;
    }
    if (cc == CURLE_ABORTED_BY_CALLBACK) {
        rc = eco_errorf(err, -ECANCELED, "request cancelled");
        goto out;
    }
    if (cc != CURLE_OK) {
        rc = eco_errorf(err, -EIO, "%s", curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
out:
    curl_slist_free_all(hdr);
    curl_easy_cleanup(c);
    return rc;
}

void eco_http_resp_fini(struct eco_http_resp *out)
{
    free(out->body);
    *out = (struct eco_http_resp){0};
}

json_t *eco_http_json(const char *endpoint, const char *path, const char *body, long timeout_ms,
                      long *status, struct eco_error *err)
{
    struct eco_http_req r = {
        .endpoint = endpoint, .path = path, .body = body, .timeout_ms = timeout_ms};
    struct eco_http_resp a;
    json_t *out = NULL;
    struct eco_error why = {{0}};
    *status = 0;
    int rc = eco_http_request(&r, &a, &why);
    if (rc < 0) {
        if (rc == -EIO)
            eco_errorf(err, rc, "%s: %s", endpoint, why.msg);
        else
            eco_errorf(err, rc, "%s", why.msg);
        goto out;
    }
    *status = a.status;
    if (!(out = a.body ? json_loads(a.body, 0, NULL) : NULL))
        eco_errorf(err, -EPROTO, "%s%s: HTTP %ld without a JSON answer", endpoint, path, *status);
out:
    eco_http_resp_fini(&a);
    return out;
}
