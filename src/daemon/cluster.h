/* SPDX-License-Identifier: MIT */
/* cluster.c: ecoschedd's cluster listener (cluster_listen): MUNGE credentials decoded off the
 * event loop, who may read and who may change, optional TLS. */
#ifndef ECOD_CLUSTER_H
#define ECOD_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "ecosched/error.h"
#include "util/munge_auth.h"

struct ecod_config;

/* Who may use the cluster listener, from cluster_admin_user and cluster_read_users: root and
 * the admin may do anything (POST: change caps); readers, root and the admin may GET. */
/* 64 readers: the accounts of a site's monitoring tools, a handful; "*" for every user. */
#define ECOD_CLUSTER_READERS 64
struct ecod_cluster_policy {
    bool has_admin, all_read;
    uid_t admin;
    size_t n_read;
    uid_t read[ECOD_CLUSTER_READERS];
};
/* Fills p from the keys' values (admin "" : none; readers "" : none, "*" : all). 0, or
 * -EINVAL with err naming the key and the user. */
int ecod__cluster_policy_init(struct ecod_cluster_policy *p, const char *admin, const char *readers,
                              struct eco_error *err);
/* Whether uid may use method: 0, or -EPERM with err naming the uid and what it may not do.
 * *admin: uid may change the node (root or the admin). */
int ecod__cluster_policy_check(const struct ecod_cluster_policy *p, uid_t uid, const char *method,
                               bool *admin, struct eco_error *err);

/* One request's credential being decoded: filled by the event loop, answered by the worker.
 * The loop does not touch it while the connection is suspended. */
struct MHD_Connection;
struct ecod_cluster_req {
    struct MHD_Connection *conn; /* suspended while the worker has it */
    char method[16];
    char path[ECO_MUNGE_AUTH_PATH_MAX + 1];
    char *cred;       /* malloc'd copy of the credential; freed by ecod__cluster_req_fini */
    const char *body; /* the request's body, borrowed (unchanged while suspended) */
    size_t len;
    /* the answer: 0 with uid, gid; -EACCES or -EPROTO (401), -EHOSTUNREACH (503), -ENOMEM */
    int rc;
    uid_t uid;
    gid_t gid;
    char msg[ECO_ERROR_MSG_MAX];
};
void ecod__cluster_req_fini(struct ecod_cluster_req *r);

/* The listener's state: the policy, the TLS certificate and key (PEM text, NULL: http), and the
 * decoding worker. */
struct ecod_cluster;
/* Checks munged answers on c->munge_socket, reads the TLS files, resolves the users and starts
 * the worker. The caller's, freed with ecod__cluster_destroy. 0, or < 0 and err (built without
 * libmunge; munged not reachable; a TLS file unreadable or TLS not in libmicrohttpd). */
int ecod__cluster_create(const struct ecod_config *c, struct ecod_cluster **out,
                         struct eco_error *err);
/* The policy and the PEM texts (NULL: no TLS), valid as long as cl. */
const struct ecod_cluster_policy *ecod__cluster_policy(const struct ecod_cluster *cl);
const char *ecod__cluster_tls_cert(const struct ecod_cluster *cl);
const char *ecod__cluster_tls_key(const struct ecod_cluster *cl);
/* A descriptor the event loop polls: readable when the worker has resumed a connection;
 * ecod__cluster_woken clears it. -1 for NULL. */
int ecod__cluster_fd(const struct ecod_cluster *cl);
void ecod__cluster_woken(struct ecod_cluster *cl);
/* From the event loop: suspends r->conn and queues r for decoding (borrowed until the worker
 * resumes the connection, r's answer then filled). -EAGAIN when ECOD_CLUSTER_QUEUE wait. */
/* 64 waiting: a powerd sends one request per node at a time; a decode is a munged round trip
 * of ~0.1 ms, so 64 waiting is a burst far beyond one powerd's. */
#define ECOD_CLUSTER_QUEUE 64
int ecod__cluster_submit(struct ecod_cluster *cl, struct ecod_cluster_req *r);
/* Answers what is pending, joins the worker, frees cl. Before the HTTP servers stop (then run
 * them once). Accepts NULL. */
void ecod__cluster_destroy(struct ecod_cluster *cl);

#endif
