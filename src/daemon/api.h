/* SPDX-License-Identifier: MIT */
/* api.c and api_node.c: ecoschedd's HTTP/JSON API (docs/http-api.md). */
#ifndef ECOD_API_H
#define ECOD_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"
#include "daemon/store.h"
#include "ecod.h"
#include "lister.h"
#include "tcp.h"

/* Largest request body accepted (HTTP 413 beyond): a submit with a big environment is a few
 * KiB; 64 KiB leaves room for long command lines while bounding what one client can pin. */
#define ECOD_MAX_BODY (64u * 1024u)

/* One HTTP listener: the unix socket (tcp NULL: callers known by peer credentials) or the
 * loopback TCP socket (callers known by the bearer token). */
struct ecod_listener {
    struct ecod *d;
    const struct ecod_tcp_auth *tcp;
};

/* api.c: starts the HTTP server on the listening socket `fd` (taken over). `l` must outlive
 * the server. */
struct MHD_Daemon;
struct MHD_Daemon *ecod__api_start(struct ecod_listener *l, int fd, struct eco_error *err);

/* api.c: builds the answer of listing r from store s (any thread; reads only s, logs_dir
 * and r). */
void ecod__api_jobs_page(struct eco_store *s, const char *logs_dir, struct ecod_list_req *r);

/* api_node.c: the routes /v1/node, /v1/gpus/N/limit and /v1/slurm/... (docs/http-api.md,
 * "Slurm and the cluster power controller"). Returns true when it queued a response. */
struct MHD_Connection;
bool ecod__api_node_route(struct ecod *d, struct MHD_Connection *c, const char *url,
                          const char *method, const char *body, size_t len, uid_t peer_uid,
                          int *mhd_ret);

#endif
