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

/* A base URL or "http://localhost" and a request path: paths are short ("/v1/jobs/ID/logs
 * ?stream=..."), node endpoints a host and port. */
#define URL_MAX 1024

/* Sets easy handle c up for r, its answer into bd; *hdr (the caller's to free) the headers. */
static void setup(CURL *c, const struct eco_http_req *r, struct body *bd, char *url,
                  struct curl_slist **hdr)
{
    if (r->endpoint[0] == '/') {
        snprintf(url, URL_MAX, "http://localhost%s", r->path);
        curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, r->endpoint);
    } else {
        snprintf(url, URL_MAX, "%s%s", r->endpoint, r->path);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    /* no proxy from the environment: "" disables the one http_proxy etc. would set, "*"
     * exempts every host, so that neither a user's nor a service manager's proxy variables
     * send a request for a daemon of ours (or its body, or its token) elsewhere */
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
    if (r->auth)
        *hdr = curl_slist_append(*hdr, r->auth);
    if (r->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, r->ca_file);
    if (r->method)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    if (r->body) {
        *hdr = curl_slist_append(*hdr, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
    } else if (r->method && !strcmp(r->method, "POST")) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    }
    if (*hdr)
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, bd);
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
}

int eco_http_request(const struct eco_http_req *r, struct eco_http_resp *out, struct eco_error *err)
{
    struct curl_slist *hdr = NULL;
    char url[URL_MAX];
    int rc = 0;
    *out = (struct eco_http_resp){0};
    struct body bd = {.resp = out, .max = r->max_body};
    CURL *c = curl_easy_init();
    if (!c) {
        rc = eco_errorf(err, -ENOMEM, "cannot initialise libcurl");
        goto out;
    }
    setup(c, r, &bd, url, &hdr);
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

/* The JSON of answer a to a request that returned rc (why its reason), as eco_http_json. */
static json_t *answer_json(const char *endpoint, const char *path, int rc,
                           const struct eco_error *why, const struct eco_http_resp *a, long *status,
                           struct eco_error *err)
{
    json_t *out = NULL;
    *status = 0;
    if (rc < 0) {
        if (rc == -EIO)
            eco_errorf(err, rc, "%s: %s", endpoint, why->msg);
        else
            eco_errorf(err, rc, "%s", why->msg);
        return NULL;
    }
    *status = a->status;
    if (!(out = a->body ? json_loads(a->body, 0, NULL) : NULL))
        eco_errorf(err, -EPROTO, "%s%s: HTTP %ld without a JSON answer", endpoint, path, *status);
    return out;
}

json_t *eco_http_json(const char *endpoint, const char *path, const char *body, long timeout_ms,
                      long *status, struct eco_error *err)
{
    struct eco_http_req r = {
        .endpoint = endpoint, .path = path, .body = body, .timeout_ms = timeout_ms};
    struct eco_http_resp a;
    struct eco_error why = {{0}};
    int rc = eco_http_request(&r, &a, &why);
    json_t *out = answer_json(endpoint, path, rc, &why, &a, status, err);
    eco_http_resp_fini(&a);
    return out;
}

/* One transfer of eco_http_json_all under way. */
struct slot {
    CURL *c;
    size_t call; /* index in the batch */
    struct eco_http_req req;
    struct eco_http_resp resp;
    struct body bd;
    struct curl_slist *hdr;
    char url[URL_MAX];
};

static void slot_done(struct slot *s, struct eco_http_call *k, CURLcode cc)
{
    struct eco_error why = {{0}};
    int rc = 0;
    if (cc != CURLE_OK)
        rc = eco_errorf(&why, -EIO, "%s", curl_easy_strerror(cc));
    else
        curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &s->resp.status);
    k->answer = answer_json(k->endpoint, k->path, rc, &why, &s->resp, &k->status, &k->err);
    eco_http_resp_fini(&s->resp);
    curl_slist_free_all(s->hdr);
    s->hdr = NULL;
    curl_easy_cleanup(s->c);
    s->c = NULL;
}

int eco_http_json_all(struct eco_http_call *calls, size_t n, size_t max_parallel, long timeout_ms)
{
    size_t width = max_parallel ? max_parallel : ECO_HTTP_PARALLEL, next = 0, active = 0;
    for (size_t i = 0; i < n; i++) {
        calls[i].answer = NULL;
        calls[i].status = 0;
        calls[i].err = (struct eco_error){{0}};
    }
    if (!n)
        return 0;
    if (width > n)
        width = n;
    CURLM *m = curl_multi_init();
    struct slot *slots = calloc(width, sizeof *slots);
    int rc = 0;
    if (!m || !slots) {
        for (size_t i = 0; i < n; i++)
            eco_errorf(&calls[i].err, -ENOMEM, "cannot initialise libcurl");
        rc = -ENOMEM;
        goto out;
    }
    while (next < n || active) {
        /* fill the free slots: each request's timeout runs from here, not from the batch's
         * start, so that the queue behind silent endpoints keeps its own time */
        for (size_t k = 0; k < width && next < n; k++) {
            struct slot *s = &slots[k];
            if (s->c)
                continue;
            struct eco_http_call *call = &calls[next];
            *s = (struct slot){.call = next++};
            s->req = (struct eco_http_req){.endpoint = call->endpoint,
                                           .path = call->path,
                                           .body = call->body,
                                           .auth = call->auth,
                                           .ca_file = call->ca_file,
                                           .timeout_ms = timeout_ms};
            s->bd = (struct body){.resp = &s->resp};
            if (!(s->c = curl_easy_init())) {
                eco_errorf(&call->err, -ENOMEM, "cannot initialise libcurl");
                continue;
            }
            setup(s->c, &s->req, &s->bd, s->url, &s->hdr);
            curl_easy_setopt(s->c, CURLOPT_PRIVATE, (void *)s);
            if (curl_multi_add_handle(m, s->c) != CURLM_OK) {
                slot_done(s, call, CURLE_FAILED_INIT);
                continue;
            }
            active++;
        }
        int running = 0, left;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct slot *s = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(m, s->c);
            slot_done(s, &calls[s->call], cc);
            active--;
        }
        if (running)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
out:
    free(slots);
    if (m)
        curl_multi_cleanup(m);
    return rc;
}
