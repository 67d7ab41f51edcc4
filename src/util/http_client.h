/* SPDX-License-Identifier: MIT */
/* The edges' one HTTP client (libcurl): requests to a daemon's unix socket or to an http://
 * URL, used by the CLI's job commands (src/cli/cmd_client.c), `ecosched power` and powerd
 * (node daemons) and the SPANK plugin. */
#ifndef ECO_UTIL_HTTP_CLIENT_H
#define ECO_UTIL_HTTP_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include "ecosched/error.h"

struct eco_http_req {
    const char *endpoint; /* a unix socket path (starting with '/') or an http:// URL base */
    const char *path;     /* the request path, "/v1/..." */
    const char *method;   /* NULL: GET, or POST when body is set */
    const char *body;     /* JSON text (sent as application/json), or NULL */
    const char *auth;     /* a whole header line ("Authorization: Bearer ..."), or NULL */
    const char *ca_file;  /* https:// endpoints: PEM CA certificates to verify with, or NULL
                           * (the system's) */
    long timeout_ms;      /* 0: none */
    size_t max_body;      /* the longest answer body accepted, bytes; 0: no limit */
    /* Optional: polled while the request runs (about once a second, and as data come);
     * nonzero stops it (-ECANCELED). */
    int (*cancel)(void *ud);
    void *cancel_ud;
    /* Optional: called with each header line of the answer (libcurl's header callback,
     * which must return size * n). */
    size_t (*on_header)(char *line, size_t size, size_t n, void *ud);
    void *header_ud;
};

/* An answer: HTTP status and body (malloc'd, NUL-terminated, len bytes; NULL when empty). */
struct eco_http_resp {
    long status;
    char *body;
    size_t len;
    size_t cap; /* bytes allocated for body */
};

/* Sends r and fills *out (eco_http_resp_fini frees it, also on failure). Every request goes
 * straight to the endpoint: proxies are never used, whatever http_proxy, HTTPS_PROXY or
 * ALL_PROXY say (every endpoint is one of ecosched's own daemons or an operator's local source,
 * never a site a proxy should see). 0; -EIO when the server was not reached, err then
 * libcurl's reason ("Couldn't connect to server"); -ECANCELED when r->cancel stopped it;
 * -EFBIG when the body is longer than r->max_body (err: "answer longer than N bytes ...");
 * -ENOMEM when libcurl cannot start (err says so). err may be NULL. */
int eco_http_request(const struct eco_http_req *r, struct eco_http_resp *out,
                     struct eco_error *err);
void eco_http_resp_fini(struct eco_http_resp *out);

/* One JSON request to `endpoint`: body NULL: GET, else POST with that JSON text. Returns the
 * parsed JSON answer (caller's, json_decref) with *status the HTTP status, or NULL with
 * *status 0 (not reached, "ENDPOINT: reason" in err) or the status of an answer that was not
 * JSON (err says so). err may be NULL. */
json_t *eco_http_json(const char *endpoint, const char *path, const char *body, long timeout_ms,
                      long *status, struct eco_error *err);

/* One request of a batch (eco_http_json_all): endpoint, path and body as eco_http_json's; the
 * answer, status and err filled as eco_http_json fills its return value, *status and err. */
struct eco_http_call {
    const char *endpoint, *path, *body;
    const char *auth;     /* a whole header line, or NULL (eco_http_req's) */
    const char *ca_file;  /* as eco_http_req's, or NULL */
    json_t *answer;       /* out: the parsed JSON answer (caller's, json_decref), or NULL */
    long status;          /* out: HTTP status, 0 when not reached */
    struct eco_error err; /* out: why answer is NULL */
};

/* Sends the n calls at the same time, at most max_parallel at once (0: ECO_HTTP_PARALLEL), each
 * with timeout_ms from the moment it starts, so that a batch takes about the slowest request
 * rather than the sum of them (powerd's requests to its node daemons). Every call is filled,
 * answered or not. 0, or -ENOMEM when libcurl cannot start (every call then says so). */
/* 256 at once: a period over 1,000 nodes in four rounds of its slowest answer at worst, and
 * room left under the usual limit of 1,024 open files. */
#define ECO_HTTP_PARALLEL 256
int eco_http_json_all(struct eco_http_call *calls, size_t n, size_t max_parallel, long timeout_ms);

#endif
