/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s API on a unix socket: GET /v1/status (the last period), GET /metrics
 * (Prometheus, powerd_metrics.c), POST /v1/budget (root or powerd's own user; docs/slurm.md);
 * and GET /metrics alone on a TCP address (--metrics-listen). */
#define _GNU_SOURCE /* SO_PEERCRED */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "cli/cli.h"
#include "powerd.h"
#include "util/http_server.h"
#include "util/log.h"

/* A budget request is {"budget_w": W}: 4 KiB is far beyond it while bounding what a client
 * pins; a longer body is answered 400. */
#define POWERD_MAX_BODY 4095u

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    struct powerd *pd = cls;
    struct eco_http_body *rq = *con_cls;
    (void)version;
    if (!rq) {
        if (!(rq = calloc(1, sizeof *rq)))
            return MHD_NO;
        rq->max = POWERD_MAX_BODY;
        *con_cls = rq;
        return MHD_YES;
    }
    if (*size) {
        if (eco_http_body_add(rq, data, *size) < 0)
            return MHD_NO;
        *size = 0;
        return MHD_YES;
    }
    if (!strcmp(url, "/v1/status")) {
        if (strcmp(method, "GET"))
            return eco_http_fail(c, 405, NULL, "use GET on /v1/status");
        pthread_mutex_lock(&pd->lock);
        /* before the first period there is no status: an empty one (a copy of a fresh
         * object would leak the original) */
        json_t *o = pd->status ? json_deep_copy(pd->status) : json_object();
        json_object_set_new(o, "budget_w", json_real(pd->budget_w));
        json_object_set_new(o, "period_s", json_real(pd->period_s));
        pthread_mutex_unlock(&pd->lock);
        return eco_http_reply(c, 200, o);
    }
    if (!strcmp(url, "/metrics")) {
        if (strcmp(method, "GET"))
            return eco_http_fail(c, 405, NULL, "use GET on /metrics");
        return (enum MHD_Result)eco_powerd__metrics(pd, c, true);
    }
    if (!strcmp(url, "/v1/budget")) {
        if (strcmp(method, "POST"))
            return eco_http_fail(c, 405, NULL, "use POST on /v1/budget");
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct ucred cr;
        socklen_t cl = sizeof cr;
        if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
            (cr.uid != 0 && cr.uid != geteuid()))
            return eco_http_fail(c, 403, NULL, "only root may change the power budget");
        json_t *b = rq->too_big ? NULL : json_loadb(rq->data, rq->len, 0, NULL);
        json_t *w = json_object_get(b, "budget_w");
        double v = json_number_value(w);
        if (!json_is_number(w) || json_object_size(b) != 1 || !isfinite(v) || v <= 0 || v > 1e9) {
            json_decref(b);
            return eco_http_fail(c, 400, "budget_w",
                                 "the body must be {\"budget_w\": WATTS} with 0 < WATTS <= 1e9");
        }
        json_decref(b);
        pthread_mutex_lock(&pd->lock);
        double old = pd->budget_w;
        pd->budget_w = v;
        pthread_mutex_unlock(&pd->lock);
        ECO_LOG(ECO_LOG_INFO, NULL, "budget %.0f W -> %.0f W (uid %u)", old, v, (unsigned)cr.uid);
        return eco_http_reply(c, 200, json_pack("{s:f,s:f}", "budget_w", v, "previous_w", old));
    }
    return eco_http_fail(c, 404, NULL,
                         "no such path (GET /v1/status, GET /metrics, POST /v1/budget)");
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    if (*con_cls)
        eco_http_body_fini(*con_cls);
    free(*con_cls);
    *con_cls = NULL;
}

/* The API socket, mode 0660: powerd's user and the members of its group (--socket-group, else
 * powerd's own group) may read the status, which names every running job's user and energy;
 * POST /v1/budget checks the caller besides. Bound under umask 0117, so it is never wider. */
static int listen_unix(const char *path, gid_t gid)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        eco_cli__err("powerd: --socket %s: path too long", path);
        return -1;
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);
    mode_t old = umask(0117);
    int b = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (b < 0 || listen(fd, 64) < 0 || chmod(path, 0660) < 0) {
        eco_cli__err("powerd: --socket %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) {
        eco_cli__err("powerd: --socket %s: --socket-group: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

struct MHD_Daemon *eco_powerd__api_start(struct powerd *pd)
{
    int fd = listen_unix(pd->socket, pd->socket_gid);
    if (fd < 0)
        return NULL;
    struct MHD_Daemon *mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, pd, MHD_OPTION_LISTEN_SOCKET,
        (MHD_socket)fd, MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)30, MHD_OPTION_END);
    if (!mhd) {
        eco_cli__err("powerd: libmicrohttpd would not start on %s", pd->socket);
        close(fd);
    }
    return mhd;
}

/* The --metrics-listen address: read-only, GET /metrics without users, nothing else. */
static enum MHD_Result on_metrics(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    struct powerd *pd = cls;
    (void)version, (void)data;
    if (!*con_cls) { /* a body is never read here: its bytes are dropped */
        *con_cls = (void *)1;
        return MHD_YES;
    }
    if (*size) {
        *size = 0;
        return MHD_YES;
    }
    if (strcmp(url, "/metrics"))
        return eco_http_fail(c, 404, NULL, "only GET /metrics is served here");
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return eco_http_fail(c, 405, NULL, "use GET on /metrics");
    return (enum MHD_Result)eco_powerd__metrics(pd, c, false);
}

/* "HOST:PORT" or "[V6]:PORT" bound and listening; -1 (printed). */
static int listen_tcp(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':'), *port = colon ? colon + 1 : NULL;
    size_t hl = colon ? (size_t)(colon - hostport) : 0;
    if (hl >= 2 && hostport[0] == '[' && hostport[hl - 1] == ']')
        hostport++, hl -= 2;
    char *end;
    long pn = port ? strtol(port, &end, 10) : 0;
    if (!colon || !hl || hl >= sizeof host || !*port || *end || pn < 1 || pn > 65535) {
        eco_cli__err("powerd: --metrics-listen '%s' is not HOST:PORT (PORT 1..65535)", hostport);
        return -2;
    }
    snprintf(host, sizeof host, "%.*s", (int)hl, hostport);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai = NULL;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g) {
        eco_cli__err("powerd: --metrics-listen '%s': %s", hostport, gai_strerror(g));
        return -2;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
        eco_cli__err("powerd: --metrics-listen '%s': %s", hostport, strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

struct MHD_Daemon *eco_powerd__metrics_start(struct powerd *pd, const char *hostport, bool *bad_arg)
{
    int fd = listen_tcp(hostport);
    *bad_arg = fd == -2;
    if (fd < 0)
        return NULL;
    struct MHD_Daemon *mhd =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_metrics, pd,
                         MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_CONNECTION_TIMEOUT,
                         (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
    if (!mhd) {
        eco_cli__err("powerd: libmicrohttpd would not start on --metrics-listen %s", hostport);
        close(fd);
    }
    return mhd;
}
