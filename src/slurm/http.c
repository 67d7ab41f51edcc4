/* SPDX-License-Identifier: MIT */
/* JSON over HTTP with libcurl, to a unix socket (node daemons, powerd) or a URL, and Slurm
 * hostlist expansion: the small client pieces of the Slurm integration. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slurm_int.h"

struct buf {
    char *data;
    size_t len;
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    struct buf *b = ud;
    char *d = realloc(b->data, b->len + size * n + 1);
    if (!d)
        return 0;
    memcpy(d + b->len, p, size * n);
    b->data = d;
    b->len += size * n;
    d[b->len] = '\0';
    return size * n;
}

json_t *eco_http_json(const char *endpoint, const char *path, const char *body, long timeout_ms,
                      long *status, char *msg, size_t cap)
{
    struct buf b = {0};
    struct curl_slist *hdr = NULL;
    json_t *out = NULL;
    char url[1024];
    CURL *h = curl_easy_init();
    *status = 0;
    if (!h) {
        snprintf(msg, cap, "cannot initialise libcurl");
        goto done;
    }
    if (endpoint[0] == '/') {
        snprintf(url, sizeof url, "http://localhost%s", path);
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, endpoint);
    } else {
        snprintf(url, sizeof url, "%s%s", endpoint, path);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (body) {
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
        snprintf(msg, cap, "%s: %s", endpoint, curl_easy_strerror(rc));
        goto done;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (!(out = b.data ? json_loads(b.data, 0, NULL) : NULL))
        snprintf(msg, cap, "%s%s: HTTP %ld without a JSON answer", endpoint, path, *status);
done:
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    free(b.data);
    return out;
}

#define HOSTLIST_MAX 100000

static int push(char ***v, size_t *n, size_t *capv, const char *s, size_t len)
{
    if (*n >= HOSTLIST_MAX)
        return -EINVAL;
    if (*n == *capv) {
        size_t c = *capv ? 2 * *capv : 16;
        char **nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        *v = nv;
        *capv = c;
    }
    if (!((*v)[*n] = strndup(s, len)))
        return -ENOMEM;
    (*n)++;
    return 0;
}

/* One item: PREFIX or PREFIX[RANGES]SUFFIX (one bracket group). */
static int expand_item(const char *s, size_t len, char ***v, size_t *n, size_t *capv)
{
    const char *lb = memchr(s, '[', len);
    if (!lb)
        return len ? push(v, n, capv, s, len) : -EINVAL;
    const char *rb = memchr(lb, ']', len - (size_t)(lb - s));
    if (!rb || rb == lb + 1)
        return -EINVAL;
    char prefix[256], suffix[256], out[600];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(lb - s), s);
    snprintf(suffix, sizeof suffix, "%.*s", (int)(len - (size_t)(rb + 1 - s)), rb + 1);
    if (memchr(suffix, '[', strlen(suffix)))
        return -EINVAL;
    const char *p = lb + 1;
    while (p < rb) {
        const char *q = p;
        while (q < rb && *q >= '0' && *q <= '9')
            q++;
        if (q == p)
            return -EINVAL;
        int width = (int)(q - p);
        long a = strtol(p, NULL, 10), b = a;
        if (*q == '-') {
            const char *r = ++q;
            while (q < rb && *q >= '0' && *q <= '9')
                q++;
            if (q == r)
                return -EINVAL;
            b = strtol(r, NULL, 10);
        }
        if (b < a || b - a >= HOSTLIST_MAX || (q < rb && *q != ','))
            return -EINVAL;
        for (long k = a; k <= b; k++) {
            int rc, m = snprintf(out, sizeof out, "%s%0*ld%s", prefix, width, k, suffix);
            if ((rc = push(v, n, capv, out, (size_t)m)) < 0)
                return rc;
        }
        p = q < rb ? q + 1 : q;
    }
    return 0;
}

int eco_hostlist_expand(const char *list, char ***names, size_t *n)
{
    size_t capv = 0;
    int rc = 0;
    *names = NULL;
    *n = 0;
    const char *s = list;
    while (s && *s) {
        /* an item ends at a comma outside brackets */
        const char *e = s;
        int depth = 0;
        while (*e && (depth || *e != ',')) {
            depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
            e++;
        }
        if ((rc = expand_item(s, (size_t)(e - s), names, n, &capv)) < 0)
            break;
        s = *e ? e + 1 : e;
    }
    if (rc == 0 && *n == 0)
        rc = -EINVAL;
    if (rc < 0) {
        eco_hostlist_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return rc;
}

void eco_hostlist_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}
