/* SPDX-License-Identifier: MIT */
/* MUNGE-authenticated requests between ecosched's daemons (ecoschedd's cluster listener,
 * powerd's node requests): the payload that binds a credential to one request, and the
 * credential made and checked through munged (docs/http-api.md, "MUNGE authentication"). */
#ifndef ECO_UTIL_MUNGE_AUTH_H
#define ECO_UTIL_MUNGE_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "ecosched/error.h"

/* The payload's first line: its version. A later format gets another name, and a daemon
 * refuses a payload of a version it does not know (naming it). */
#define ECO_MUNGE_AUTH_VERSION "ecosched-v1"
/* Longest request path bound (bytes): the client's URL_MAX (http_client.c) and far above any
 * route's ("/v1/slurm/jobs/123/end"). */
#define ECO_MUNGE_AUTH_PATH_MAX 1024
/* Room for a payload: version, method (at most 15 bytes), path, digest, three newlines. */
#define ECO_MUNGE_AUTH_PAYLOAD_MAX                                                                 \
    (sizeof ECO_MUNGE_AUTH_VERSION + 16 + ECO_MUNGE_AUTH_PATH_MAX + 66)
/* Longest credential accepted in a header: munge's base64 of this payload is under 1 KiB;
 * 4 KiB refuses garbage early while leaving room for munge's larger ciphers. */
#define ECO_MUNGE_AUTH_CRED_MAX 4096
/* The header's scheme: "Authorization: MUNGE <credential>". */
#define ECO_MUNGE_AUTH_SCHEME "MUNGE"

/* The payload of a request: "ecosched-v1\nMETHOD\nPATH\nSHA256HEX", PATH without its query
 * string, SHA256HEX the lower-case SHA-256 of the body (of no bytes for none). Written into
 * buf (size bytes, ECO_MUNGE_AUTH_PAYLOAD_MAX is enough); its length, or -EINVAL when method
 * or path is empty, too long or holds a newline (err says which), -ENOMEM. */
int eco_munge_auth_payload(char *buf, size_t size, const char *method, const char *path,
                           const void *body, size_t len, struct eco_error *err);

/* Whether payload[0..plen) is the payload of this request (method, path as the server saw it,
 * body). 0, or -EACCES with err naming what differs ("made for path /v1/node, not
 * /v1/gpus/0/limit"), -EPROTO for a payload that is not one of ours or of another version. */
int eco_munge_auth_check(const void *payload, size_t plen, const char *method, const char *path,
                         const void *body, size_t len, struct eco_error *err);

/* The credential of an Authorization header's value "MUNGE CRED" (scheme in any case): CRED
 * (pointing into header, valid as long as it), or NULL when the header is missing, of another
 * scheme, empty, longer than ECO_MUNGE_AUTH_CRED_MAX or not one token of printable bytes. */
const char *eco_munge_auth_cred(const char *header);

/* Whether this build has libmunge (else every eco_munge_* call below says so). */
bool eco_munge_available(void);

/* A connection to munged on `socket` (NULL or "": munge's default): a libmunge context. The
 * caller's, freed with eco_munge_destroy (accepts NULL); use one from one thread at a time.
 * NULL with err when built without libmunge or out of memory. */
struct eco_munge;
struct eco_munge *eco_munge_create(const char *socket, struct eco_error *err);
void eco_munge_destroy(struct eco_munge *m);

/* A fresh credential for this request as a whole header line "Authorization: MUNGE CRED" in
 * hdr (cap bytes). 0; -EHOSTUNREACH when munged cannot be reached (err names the socket),
 * -EINVAL (a bad method or path), -ENOSPC (hdr too small), -ENOTSUP without libmunge. */
int eco_munge_header(struct eco_munge *m, const char *method, const char *path, const void *body,
                     size_t len, char *hdr, size_t cap, struct eco_error *err);

/* Decodes credential cred through munged and checks it binds this request. 0 with the
 * credential's *uid and *gid; -EACCES (replayed, expired or from the future, made with another
 * key, not a credential, or for another request: err says which and what to fix), -EPROTO (a
 * payload not ours), -EHOSTUNREACH (munged not reachable), -ENOMEM, -ENOTSUP without
 * libmunge. */
int eco_munge_verify(struct eco_munge *m, const char *cred, const char *method, const char *path,
                     const void *body, size_t len, uid_t *uid, gid_t *gid, struct eco_error *err);

#endif
