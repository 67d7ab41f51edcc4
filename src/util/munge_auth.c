/* SPDX-License-Identifier: MIT */
/* MUNGE-authenticated requests: the versioned payload binding a credential to one request
 * (method, path, SHA-256 of the body; GnuTLS's digest), and libmunge's encode and decode
 * around it. Built without libmunge, the munge calls say so (ECO_HAVE_MUNGE unset). */
#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "munge_auth.h"
#ifdef ECO_HAVE_MUNGE
#include <munge.h>
#endif

#define DIGEST_HEX 64

/* Lower-case hex SHA-256 of body[0..len) into hex (DIGEST_HEX + 1 bytes). 0 or -ENOMEM. */
static int digest_hex(const void *body, size_t len, char *hex)
{
    unsigned char md[32];
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, len ? body : "", len, md) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < sizeof md; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* A field of the payload must be one line of 1..max bytes. NULL when fine, else why. */
static const char *bad_field(const char *s, size_t max)
{
    if (!s || !*s)
        return "is empty";
    if (strlen(s) > max)
        return "is too long";
    return strpbrk(s, "\r\n") ? "holds a line break" : NULL;
}

int eco_munge_auth_payload(char *buf, size_t size, const char *method, const char *path,
                           const void *body, size_t len, struct eco_error *err)
{
    char hex[DIGEST_HEX + 1];
    const char *why;
    if ((why = bad_field(method, 15)))
        return eco_errorf(err, -EINVAL, "request method %s", why);
    size_t plen = path ? strcspn(path, "?") : 0;
    if (plen == 0 || path[0] != '/')
        return eco_errorf(err, -EINVAL, "request path must start with '/'");
    if (plen > ECO_MUNGE_AUTH_PATH_MAX || memchr(path, '\n', plen) || memchr(path, '\r', plen))
        return eco_errorf(err, -EINVAL, "request path is over %d bytes or holds a line break",
                          ECO_MUNGE_AUTH_PATH_MAX);
    if (digest_hex(body, len, hex) < 0)
        return eco_errorf(err, -ENOMEM, "SHA-256 of the body: out of memory");
    int n = snprintf(buf, size, "%s\n%s\n%.*s\n%s", ECO_MUNGE_AUTH_VERSION, method, (int)plen, path,
                     hex);
    if (n < 0 || (size_t)n >= size)
        return eco_errorf(err, -ENOSPC, "payload longer than %zu bytes", size);
    return n;
}

/* Line i (0-based) of p[0..n) into *s, *len; false when there are fewer lines. */
static bool line_at(const char *p, size_t n, unsigned i, const char **s, size_t *len)
{
    const char *end = p + n;
    for (; i > 0; i--) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *s = p;
    *len = (size_t)((nl ? nl : end) - p);
    return true;
}

static bool line_is(const char *s, size_t n, const char *want)
{
    return strlen(want) == n && !memcmp(s, want, n);
}

int eco_munge_auth_check(const void *payload, size_t plen, const char *method, const char *path,
                         const void *body, size_t len, struct eco_error *err)
{
    const char *p = payload, *f[4];
    size_t fl[4];
    char hex[DIGEST_HEX + 1];
    for (unsigned i = 0; i < 4; i++)
        if (!p || !line_at(p, plen, i, &f[i], &fl[i]))
            return eco_errorf(err, -EPROTO,
                              "the credential's payload is not an ecosched request "
                              "(expected " ECO_MUNGE_AUTH_VERSION "\\nMETHOD\\nPATH\\nSHA256)");
    if (!line_is(f[0], fl[0], ECO_MUNGE_AUTH_VERSION))
        return eco_errorf(
            err, -EPROTO,
            "the credential's payload is of version '%.*s', not " ECO_MUNGE_AUTH_VERSION,
            (int)(fl[0] < 32 ? fl[0] : 32), f[0]);
    if (f[3] + fl[3] != p + plen)
        return eco_errorf(err, -EPROTO, "the credential's payload has more than 4 lines");
    if (!line_is(f[1], fl[1], method))
        return eco_errorf(err, -EACCES, "credential made for method %.*s, not %s",
                          (int)(fl[1] < 16 ? fl[1] : 16), f[1], method);
    if (!line_is(f[2], fl[2], path))
        return eco_errorf(err, -EACCES, "credential made for path %.*s, not %.200s",
                          (int)(fl[2] < 200 ? fl[2] : 200), f[2], path);
    if (digest_hex(body, len, hex) < 0)
        return eco_errorf(err, -ENOMEM, "SHA-256 of the body: out of memory");
    if (!line_is(f[3], fl[3], hex))
        return eco_errorf(err, -EACCES,
                          "credential made for another body (its SHA-256 differs from this "
                          "request's %zu bytes)",
                          len);
    return 0;
}

const char *eco_munge_auth_cred(const char *header)
{
    size_t sl = sizeof ECO_MUNGE_AUTH_SCHEME - 1;
    if (!header || strncasecmp(header, ECO_MUNGE_AUTH_SCHEME, sl) || header[sl] != ' ')
        return NULL;
    const char *c = header + sl;
    while (*c == ' ')
        c++;
    size_t n = strlen(c);
    if (n == 0 || n > ECO_MUNGE_AUTH_CRED_MAX)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)c[i] <= 0x20 || (unsigned char)c[i] >= 0x7f)
            return NULL;
    return c;
}

#ifdef ECO_HAVE_MUNGE

struct eco_munge {
    munge_ctx_t ctx;
    char socket[256]; /* "" : munge's default, for messages */
};

bool eco_munge_available(void)
{
    return true;
}

struct eco_munge *eco_munge_create(const char *socket, struct eco_error *err)
{
    struct eco_munge *m = calloc(1, sizeof *m);
    if (!m || !(m->ctx = munge_ctx_create())) {
        free(m);
        eco_errorf(err, -ENOMEM, "munge: out of memory");
        return NULL;
    }
    if (socket && *socket) {
        snprintf(m->socket, sizeof m->socket, "%s", socket);
        if (munge_ctx_set(m->ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
            eco_errorf(err, -EINVAL, "munge socket %s: %s", socket, munge_ctx_strerror(m->ctx));
            eco_munge_destroy(m);
            return NULL;
        }
    }
    return m;
}

void eco_munge_destroy(struct eco_munge *m)
{
    if (!m)
        return;
    if (m->ctx)
        munge_ctx_destroy(m->ctx);
    free(m);
}

static const char *sock_name(const struct eco_munge *m)
{
    return m->socket[0] ? m->socket : "munge's default socket";
}

int eco_munge_header(struct eco_munge *m, const char *method, const char *path, const void *body,
                     size_t len, char *hdr, size_t cap, struct eco_error *err)
{
    char payload[ECO_MUNGE_AUTH_PAYLOAD_MAX];
    char *cred = NULL;
    int n = eco_munge_auth_payload(payload, sizeof payload, method, path, body, len, err);
    if (n < 0)
        return n;
    munge_err_t e = munge_encode(&cred, m->ctx, payload, n);
    if (e != EMUNGE_SUCCESS) {
        int rc =
            eco_errorf(err, e == EMUNGE_SOCKET ? -EHOSTUNREACH : -EIO,
                       "munged not reachable on %s: %s", sock_name(m), munge_ctx_strerror(m->ctx));
        free(cred);
        return rc;
    }
    int w = snprintf(hdr, cap, "Authorization: " ECO_MUNGE_AUTH_SCHEME " %s", cred);
    free(cred);
    if (w < 0 || (size_t)w >= cap)
        return eco_errorf(err, -ENOSPC, "MUNGE credential longer than %zu bytes", cap);
    return 0;
}

/* Why munged refused a credential (e), what to fix, into err; the return code. */
static int decode_error(struct eco_munge *m, munge_err_t e, struct eco_error *err)
{
    int ttl = 0;
    switch (e) {
    case EMUNGE_SOCKET:
        return eco_errorf(err, -EHOSTUNREACH, "munged not reachable on %s: %s", sock_name(m),
                          munge_ctx_strerror(m->ctx));
    case EMUNGE_NO_MEMORY:
        return eco_errorf(err, -ENOMEM, "munge: out of memory");
    case EMUNGE_CRED_REPLAYED:
        return eco_errorf(err, -EACCES, "credential replayed (each request needs a fresh one)");
    case EMUNGE_CRED_EXPIRED:
    case EMUNGE_CRED_REWOUND:
        munge_ctx_get(m->ctx, MUNGE_OPT_TTL, &ttl);
        return eco_errorf(err, -EACCES,
                          "credential expired or from the future: clocks of the two hosts "
                          "differ by more than munge's TTL (%d s); keep them in step (run NTP "
                          "or chrony on both)",
                          ttl);
    case EMUNGE_CRED_INVALID:
        return eco_errorf(err, -EACCES,
                          "credential invalid: made with another munge key (every host needs "
                          "the same /etc/munge/munge.key)");
    default:
        return eco_errorf(err, -EACCES, "not a valid MUNGE credential: %s",
                          munge_ctx_strerror(m->ctx));
    }
}

int eco_munge_verify(struct eco_munge *m, const char *cred, const char *method, const char *path,
                     const void *body, size_t len, uid_t *uid, gid_t *gid, struct eco_error *err)
{
    void *payload = NULL;
    int plen = 0, rc;
    /* for some errors (expired, rewound, replayed) the payload is allocated all the same */
    munge_err_t e = munge_decode(cred, m->ctx, &payload, &plen, uid, gid);
    if (e != EMUNGE_SUCCESS)
        rc = decode_error(m, e, err);
    else
        rc = eco_munge_auth_check(payload, (size_t)plen, method, path, body, len, err);
    free(payload);
    return rc;
}

#else /* without libmunge */

#define NO_MUNGE "ecosched was built without libmunge (install libmunge-dev and rebuild)"

bool eco_munge_available(void)
{
    return false;
}

struct eco_munge *eco_munge_create(const char *socket, struct eco_error *err)
{
    (void)socket;
    eco_errorf(err, -ENOTSUP, NO_MUNGE);
    return NULL;
}

void eco_munge_destroy(struct eco_munge *m)
{
    (void)m;
}

int eco_munge_header(struct eco_munge *m, const char *method, const char *path, const void *body,
                     size_t len, char *hdr, size_t cap, struct eco_error *err)
{
    (void)m, (void)method, (void)path, (void)body, (void)len, (void)hdr, (void)cap;
    return eco_errorf(err, -ENOTSUP, NO_MUNGE);
}

int eco_munge_verify(struct eco_munge *m, const char *cred, const char *method, const char *path,
                     const void *body, size_t len, uid_t *uid, gid_t *gid, struct eco_error *err)
{
    (void)m, (void)cred, (void)method, (void)path, (void)body, (void)len, (void)uid, (void)gid;
    return eco_errorf(err, -ENOTSUP, NO_MUNGE);
}

#endif
