/* SPDX-License-Identifier: MIT */
/* tcp.c: ecoschedd's loopback TCP listener and its bearer token. */
#ifndef ECOD_TCP_H
#define ECOD_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "ecosched/error.h"

/* The loopback TCP listener's bearer token and the identity its clients act with: the token
 * file's owner (tcp.c). */
/* Longest token accepted: 255 characters (docs/daemon/README.md, tcp_token_file), room enough
 * for any base64 or hex secret and within the CLI's header buffer (cmd_client.c). */
#define ECOD_TCP_TOKEN_MAX 255
struct ecod_tcp_auth {
    char token[ECOD_TCP_TOKEN_MAX + 1];
    size_t token_len;
    uid_t uid;
    gid_t gid;
};
/* Binds and listens on tcp_listen (a loopback HOST:PORT) after reading the token file (it
 * must be a regular file readable by its owner only; a FIFO or device is refused without
 * blocking). The fd, or < 0 and err. */
int ecod__tcp_listen(const char *hostport, const char *token_file, struct ecod_tcp_auth *auth,
                     struct eco_error *err);
/* Binds and listens on HOST:PORT ([::1]:PORT for IPv6), the first of its addresses that
 * binds, a loopback one when loopback_only; messages start with key ("tcp_listen"). The fd,
 * or < 0 and err. */
int ecod__tcp_bind(const char *key, const char *hostport, bool loopback_only,
                   struct eco_error *err);
/* Whether an Authorization header value is "Bearer TOKEN" with the right token. */
bool ecod__tcp_token_ok(const struct ecod_tcp_auth *a, const char *header);

#endif
