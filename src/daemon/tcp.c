/* SPDX-License-Identifier: MIT */
/* ecoschedd's optional loopback TCP listener (config key tcp_listen) and its bearer token
 * (tcp_token_file): the socket is bound to a loopback address only, and the token file must
 * be readable by its owner alone, whose identity TCP clients then act with
 * (docs/daemon/README.md, "Loopback TCP"). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tcp.h"

/* Shortest token accepted: 16 characters of a random hex or base64 string are 64+ bits. */
#define MIN_TOKEN 16

static int read_token(const char *path, struct ecod_tcp_auth *a, struct eco_error *err)
{
    struct stat st;
    /* the token, a line end ("\r\n") and one byte more to tell a longer token apart */
    char buf[ECOD_TCP_TOKEN_MAX + 3];
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, before the
     * regular-file check below, and hang the start-up (signals are not acted on until the
     * main loop runs) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        return eco_errorf(err, -errno, "tcp_token_file %s: %s", path, strerror(errno));
    }
    int rc = 0;
    if (fstat(fd, &st) < 0) {
        rc = eco_errorf(err, -errno, "tcp_token_file %s: %s", path, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = eco_errorf(err, -EINVAL,
                        "tcp_token_file %s: not a regular file (%s); the token must be "
                        "in a plain file",
                        path,
                        S_ISFIFO(st.st_mode)   ? "a FIFO"
                        : S_ISDIR(st.st_mode)  ? "a directory"
                        : S_ISSOCK(st.st_mode) ? "a socket"
                                               : "a device");
        goto out;
    }
    if (st.st_mode & 077) {
        rc = eco_errorf(err, -EPERM,
                        "tcp_token_file %s: mode %03o lets others read the token; "
                        "chmod 600 it",
                        path, (unsigned)(st.st_mode & 0777));
        goto out;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
        rc = eco_errorf(err, -errno, "tcp_token_file %s: %s", path, strerror(errno));
        goto out;
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    if (n > ECOD_TCP_TOKEN_MAX) {
        rc = eco_errorf(err, -EINVAL,
                        "tcp_token_file %s: token longer than %d characters (%lld bytes in "
                        "the file)",
                        path, ECOD_TCP_TOKEN_MAX, (long long)st.st_size);
        goto out;
    }
    memcpy(a->token, buf, (size_t)n);
    a->token[n] = '\0';
    a->token_len = (size_t)n;
    for (ssize_t i = 0; i < n; i++)
        if (a->token[i] <= 0x20 || a->token[i] >= 0x7f) {
            rc = eco_errorf(err, -EINVAL,
                            "tcp_token_file %s: the token must be one line of printable "
                            "characters without spaces",
                            path);
            goto out;
        }
    if (n < MIN_TOKEN) {
        rc = eco_errorf(err, -EINVAL,
                        "tcp_token_file %s: token of %zd characters, at least %d needed "
                        "(e.g. head -c 24 /dev/urandom | base64 > FILE)",
                        path, n, MIN_TOKEN);
        goto out;
    }
    a->uid = st.st_uid;
    a->gid = st.st_gid;
out:
    close(fd);
    return rc;
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        static const struct in6_addr lo = IN6ADDR_LOOPBACK_INIT;
        return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &lo, sizeof lo);
    }
    return false;
}

int ecod__tcp_bind(const char *key, const char *hostport, bool loopback_only, struct eco_error *err)
{
    char host[300];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | (loopback_only ? 0 : AI_PASSIVE)},
                    *res = NULL;
    int fd = -1, rc;
    if (!colon || (size_t)(colon - hostport) >= sizeof host)
        return eco_errorf(err, -EINVAL, "%s %s: must be HOST:PORT", key, hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    if (host[0] == '[') { /* [::1] */
        memmove(host, host + 1, strlen(host));
        host[strcspn(host, "]")] = '\0';
    }
    if ((rc = getaddrinfo(host, colon + 1, &hints, &res)) != 0)
        return eco_errorf(err, -EINVAL, "%s %s: %s", key, hostport, gai_strerror(rc));
    rc = eco_errorf(err, -EADDRNOTAVAIL, "%s %s: no %saddress", key, hostport,
                    loopback_only ? "loopback " : "");
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (loopback_only && !is_loopback(ai->ai_addr))
            continue;
        int one = 1;
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
            bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0) {
            rc = fd;
            break;
        }
        rc = eco_errorf(err, -errno, "%s %s: cannot listen: %s", key, hostport, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return rc;
}

int ecod__tcp_listen(const char *hostport, const char *token_file, struct ecod_tcp_auth *auth,
                     struct eco_error *err)
{
    int rc;
    if (!token_file || !*token_file)
        return eco_errorf(err, -EINVAL, "tcp_listen %s: needs tcp_token_file", hostport);
    if ((rc = read_token(token_file, auth, err)) < 0)
        return rc;
    return ecod__tcp_bind("tcp_listen", hostport, true, err);
}

bool ecod__tcp_token_ok(const struct ecod_tcp_auth *a, const char *header)
{
    static const char scheme[] = "Bearer ";
    if (!header || strncasecmp(header, scheme, sizeof scheme - 1))
        return false;
    const char *t = header + sizeof scheme - 1;
    size_t n = strlen(t);
    /* compare in time independent of where the first difference is */
    unsigned char diff = n != a->token_len;
    for (size_t i = 0; i < a->token_len; i++)
        diff |= (unsigned char)(a->token[i] ^ (i < n ? t[i] : 0));
    return diff == 0;
}
