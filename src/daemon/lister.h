/* SPDX-License-Identifier: MIT */
/* lister.c: GET /v1/jobs pages built off ecoschedd's event loop. */
#ifndef ECOD_LISTER_H
#define ECOD_LISTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"

/* lister.c: GET /v1/jobs pages built by a worker thread (nice +10, its own read-only store
 * connection) while the event loop serves everything else. A listing's connection is
 * suspended while the worker has it (libmicrohttpd suspend/resume). */
struct MHD_Connection;
struct ecod_list_req {
    struct MHD_Connection *conn; /* suspended while queued and built */
    int state;                   /* ECO_STORE_ANY or an eco_store_state */
    int64_t after;               /* the page's cursor */
    size_t limit;                /* jobs in the page, 1..1000 */
    /* the answer, set by ecod__api_jobs_page: HTTP status and JSON body (malloc'd, len bytes,
     * NULL when out of memory); the connection's to free */
    unsigned status;
    char *body;
    size_t len;
};
/* Most listings waiting for the worker; beyond, GET /v1/jobs answers 503 with Retry-After.
 * Eight clients listing back to back (bench/bench_daemon_list.sh) keep 8 waiting; 64 leaves
 * room for several users' `ls --all` at once while bounding what waiting listings pin: a
 * suspended connection and its request each, and one page (at most 1,000 jobs, ~0.45 MB)
 * at a time being built. */
#define ECOD_LIST_QUEUE 64
struct ecod_lister;
struct eco_store;
/* Builds the answer of listing r from store s on the worker (any thread; reads only s,
 * logs_dir and r): the API's ecod__api_jobs_page, passed in so that the worker knows nothing
 * of the API. */
typedef void (*ecod_list_build_fn)(struct eco_store *s, const char *logs_dir,
                                   struct ecod_list_req *r);
/* Opens a read-only store connection to db_path (the writer's open must come first) and
 * starts the worker with a queue of queue_cap pending listings, answered by build. *out is
 * the caller's, freed with ecod__lister_destroy. 0, or < 0 and err. */
int ecod__lister_create(const char *db_path, const char *logs_dir, size_t queue_cap,
                        ecod_list_build_fn build, struct ecod_lister **out, struct eco_error *err);
/* A descriptor the event loop polls for reading: readable when the worker has resumed a
 * connection, so the loop runs libmicrohttpd to send the answer; ecod__lister_woken clears
 * it. -1 for NULL. */
int ecod__lister_fd(const struct ecod_lister *l);
void ecod__lister_woken(struct ecod_lister *l);
/* From the event loop: suspends r->conn and queues r (borrowed until the worker resumes the
 * connection, by which time r holds the answer). -EAGAIN when queue_cap listings are pending
 * (nothing suspended then). */
int ecod__lister_submit(struct ecod_lister *l, struct ecod_list_req *r);
/* Answers every pending listing, stops and joins the worker, closes its store. Call it
 * before stopping the HTTP servers (then run them once so the answers go out). Accepts NULL. */
void ecod__lister_destroy(struct ecod_lister *l);

#endif
