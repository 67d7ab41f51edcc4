/* SPDX-License-Identifier: MIT */
/* api.c and api_node.c: ecoschedd's HTTP/JSON API (docs/http-api.md). */
#ifndef ECOD_API_H
#define ECOD_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "ecosched/error.h"
#include "daemon/store.h"
#include "ecod.h"
#include "cluster.h"
#include "lister.h"
#include "tcp.h"

/* Largest request body accepted (HTTP 413 beyond): a submit with a big environment is a few
 * KiB; 64 KiB leaves room for long command lines while bounding what one client can pin. */
#define ECOD_MAX_BODY (64u * 1024u)

/* One HTTP listener: the unix socket (tcp and cluster NULL: callers known by peer
 * credentials), the loopback TCP socket (callers known by the bearer token) or the cluster
 * listener (callers known by their MUNGE credential; https when it has a certificate). */
struct ecod_cluster;
struct ecod_listener {
    struct ecod *d;
    const struct ecod_tcp_auth *tcp;
    struct ecod_cluster *cluster;
};

/* A submit (POST /v1/jobs) checked: job's strings point into obj (the parsed body) and into
 * argv_json and env_json (compact JSON texts); all of it is freed by ecod__api_submit_fini. */
struct ecod_submit {
    struct eco_store_job job;
    json_t *obj;
    char *argv_json;
    char *env_json;
};

/* api.c: parses body[0..len) as the submit of uid/gid to d and checks every field (d's GPUs,
 * the cwd looked up as uid); no store or clock is touched (job.submit_s stays 0). Returns NULL
 * with *s filled, or the field at fault ("body": not a JSON object; "": out of memory, an
 * HTTP 500) with err saying why. *s is filled either way: free it with ecod__api_submit_fini. */
const char *ecod__api_submit_parse(struct ecod *d, const char *body, size_t len, uid_t uid,
                                   gid_t gid, struct ecod_submit *s, struct eco_error *err);
void ecod__api_submit_fini(struct ecod_submit *s);

/* api.c: starts the HTTP server on the listening socket `fd` (taken over). `l` must outlive
 * the server. */
struct MHD_Daemon;
struct MHD_Daemon *ecod__api_start(struct ecod_listener *l, int fd, struct eco_error *err);

/* api.c: builds the answer of listing r from store s (any thread; reads only s, logs_dir
 * and r). */
void ecod__api_jobs_page(struct eco_store *s, const char *logs_dir, struct ecod_list_req *r);

/* api_node.c: the routes /v1/node, /v1/gpus/N/limit and /v1/slurm/... (docs/http-api.md,
 * "Slurm and the cluster power controller"). Its POST routes need `admin` (a root caller, or
 * the cluster listener's cluster_admin_user); peer_uid names the caller in a refusal. Returns
 * true when it queued a response. */
struct MHD_Connection;
bool ecod__api_node_route(struct ecod *d, struct MHD_Connection *c, const char *url,
                          const char *method, const char *body, size_t len, uid_t peer_uid,
                          bool admin, int *mhd_ret);

/* api_node.c: the parts of its POST routes that read the body, apart so that the fuzz target
 * (fuzz/fuzz_daemon_body.c) runs the same checks. ecod__api_node_body: body[0..len) as a
 * JSON object (empty: {}), the caller's to json_decref; NULL with err saying why. The checks
 * return NULL, or the field at fault with err saying why; they read b only while they run. */
json_t *ecod__api_node_body(const char *body, size_t len, struct eco_error *err);
/* POST /v1/node/budget, {"budget_w": W, "policy": "FAMILY[:PARAMS]"}: checked and applied
 * (ecod__nodecap_set; d->nodecap must be set up). */
const char *ecod__api_node_budget(struct ecod *d, const json_t *b, struct eco_error *err);
/* POST /v1/gpus/N/limit, {"power_limit_w": W|"default"}: *w within pr (the GPU's range). */
struct eco_power_range;
const char *ecod__api_node_check_limit(const json_t *body, const struct eco_power_range *pr,
                                       double *w, struct eco_error *err);
/* POST /v1/node/limits, {"limits_w": {"G": W|"default", ...}, "fallback_w", "lease_s"}: the
 * whole body checked, nothing applied. 0 with w[g] (room for d->n_gpus) each GPU's new limit,
 * NaN for a GPU not in limits_w; -EINVAL with field[0..cap) the field at fault ("limits_w.3",
 * "lease_s") and err why; another < 0 when the platform cannot give a GPU's range (err). */
int ecod__api_node_check_limits(struct ecod *d, const json_t *b, double *w, char *field, size_t cap,
                                struct eco_error *err);
/* POST /v1/slurm/jobs, {"job_id", "uid", "gid", "gpus", "power_cap"}: gpus[] (room for
 * ECO_GPUSEL_MAX_GPUS) and *n the GPUs, *cap the power_cap value (borrowed from b). */
const char *ecod__api_node_check_register(struct ecod *d, const json_t *b, json_int_t *job,
                                          uid_t *uid, gid_t *gid, uint32_t *gpus, uint32_t *n,
                                          const json_t **cap, struct eco_error *err);

#endif
