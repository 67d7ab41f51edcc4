/* SPDX-License-Identifier: MIT */
/* Many simulated node daemons in one child process (tests/test_powerd_nodes.c,
 * bench/bench_powerd_nodes.c): unix sockets DIR/nI.sock, each answering what powerd asks of an
 * ecoschedd, GET /v1/node (GPUS GPUs, each at limit 300 W, default 300 W, held by Slurm job
 * 100 + I), POST /v1/node/limits, POST /v1/gpus/G/limit and POST /v1/node/budget (200). Every
 * POST is appended to DIR/limits as "I POST PATH", then each limit it sets as
 * "I G {"power_limit_w":W}" and its lease as "I lease {"fallback_w":W,"lease_s":S}". A silent
 * node accepts connections and never answers; a legacy one (an ecoschedd older than POST
 * /v1/node/limits) answers 404 to that route. One epoll(7) loop, so that 1,000 nodes cost one
 * process. */
#ifndef ECO_TEST_FAKE_NODES_H
#define ECO_TEST_FAKE_NODES_H

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAKE_NODES_MAX 2048
#define FAKE_CONN_MAX 4096

struct fake_conn {
    int fd, node;
    size_t len;
    char buf[2048];
};

static int fake_listen(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -1;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* A POST /v1/node/limits body's limits and lease into log, as the per-GPU and lease routes'. */
static int fake_limits(int node, const char *body, FILE *log)
{
    json_t *j = json_loads(body, 0, NULL), *v;
    json_t *lim = json_object_get(j, "limits_w"), *f = json_object_get(j, "fallback_w");
    const char *k;
    if (!json_is_object(lim)) {
        json_decref(j);
        return 400;
    }
    json_object_foreach(lim, k, v)
        fprintf(log, "%d %s {\"power_limit_w\":%.0f}\n", node, k, json_number_value(v));
    if (f)
        fprintf(log, "%d lease {\"fallback_w\":%.1f,\"lease_s\":%g}\n", node, json_number_value(f),
                json_number_value(json_object_get(j, "lease_s")));
    json_decref(j);
    return 200;
}

/* The answer to the request in c (complete), written to its socket. */
static void fake_answer(struct fake_conn *c, unsigned gpus, bool legacy, FILE *log)
{
    char body[8192], path[64] = "";
    size_t n = 0;
    unsigned g;
    int st = 200;
    const char *b = strstr(c->buf, "\r\n\r\n");
    b = b ? b + 4 : "";
    if (!strncmp(c->buf, "POST ", 5)) {
        sscanf(c->buf + 5, "%63s", path);
        fprintf(log, "%d POST %s\n", c->node, path);
    }
    if (!strncmp(c->buf, "GET /v1/node ", 13)) {
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "{\"power_w\":%u,\"max_power_w\":%u,\"gpus\":[", 200 * gpus,
                              300 * gpus);
        for (g = 0; g < gpus; g++)
            n += (size_t)snprintf(body + n, sizeof body - n,
                                  "%s{\"index\":%u,\"power_w\":200,\"power_limit_w\":300,"
                                  "\"power_min_w\":100,\"power_max_w\":300,"
                                  "\"power_default_w\":300,\"job_cap_w\":0,\"util\":0.9,"
                                  "\"sm_clock_mhz\":1400,\"slurm_job\":%d}",
                                  g ? "," : "", g, 100 + c->node);
        n += (size_t)snprintf(body + n, sizeof body - n, "],\"slurm_jobs\":[]}");
    } else if (!strncmp(c->buf, "POST /v1/gpus/", 14)) {
        fprintf(log, "%d %u %s\n", c->node, (unsigned)strtoul(c->buf + 14, NULL, 10), b);
        n = (size_t)snprintf(body, sizeof body, "{\"ok\":true}");
    } else if (!strncmp(c->buf, "POST /v1/node/budget ", 21)) {
        fprintf(log, "%d lease %s\n", c->node, b);
        n = (size_t)snprintf(body, sizeof body, "{\"ok\":true}");
    } else if (!strncmp(c->buf, "POST /v1/node/limits ", 21) && !legacy) {
        st = fake_limits(c->node, b, log);
        n = (size_t)snprintf(body, sizeof body,
                             st == 200 ? "{\"ok\":true}" : "{\"error\":\"bad body\"}");
    } else {
        st = 404;
        n = (size_t)snprintf(body, sizeof body, "{\"error\":\"no such path\"}");
    }
    fflush(log);
    char head[256];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: "
                     "%zu\r\nConnection: close\r\n\r\n",
                     st,
                     st == 200   ? "OK"
                     : st == 404 ? "Not Found"
                                 : "Bad Request",
                     n);
    /* small answers on a local socket: one write each, the socket made blocking for it */
    fcntl(c->fd, F_SETFL, 0);
    if (write(c->fd, head, (size_t)h) < 0 || write(c->fd, body, n) < 0)
        (void)0;
}

/* Whether c holds a whole request (headers and Content-Length bytes of body). */
static bool fake_complete(struct fake_conn *c)
{
    c->buf[c->len] = '\0';
    const char *e = strstr(c->buf, "\r\n\r\n");
    if (!e)
        return c->len + 1 >= sizeof c->buf;
    const char *cl = strcasestr(c->buf, "Content-Length:");
    size_t want = cl && cl < e ? strtoul(cl + 15, NULL, 10) : 0;
    return (size_t)(c->buf + c->len - (e + 4)) >= want;
}

/* epoll(7), so that each event costs the same with 1,000 sockets as with 20. */
static void fake_serve(int *lfd, size_t n, const bool *silent, const bool *legacy, unsigned gpus,
                       FILE *log)
{
    static struct fake_conn conn[FAKE_CONN_MAX];
    static int free_list[FAKE_CONN_MAX];
    size_t n_free = 0;
    for (int k = FAKE_CONN_MAX - 1; k >= 0; k--)
        free_list[n_free++] = k;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        /* listening sockets: data n + index, above every connection slot */
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = FAKE_CONN_MAX + i};
        epoll_ctl(ep, EPOLL_CTL_ADD, lfd[i], &ev);
    }
    struct epoll_event evs[256];
    for (;;) {
        int m = epoll_wait(ep, evs, 256, 1000);
        if (m < 0 && errno != EINTR)
            return;
        for (int e = 0; e < m; e++) {
            uint64_t d = evs[e].data.u64;
            if (d >= FAKE_CONN_MAX) {
                size_t i = (size_t)(d - FAKE_CONN_MAX);
                int fd;
                while (n_free && (fd = accept4(lfd[i], NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    int k = free_list[--n_free];
                    conn[k] = (struct fake_conn){.fd = fd, .node = (int)i};
                    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)k};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            struct fake_conn *c = &conn[d];
            ssize_t r = read(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len);
            bool done = r <= 0;
            if (r > 0) {
                c->len += (size_t)r;
                if (fake_complete(c)) {
                    if (!silent[c->node])
                        fake_answer(c, gpus, legacy && legacy[c->node], log);
                    done = !silent[c->node];
                }
            }
            if (done) {
                close(c->fd); /* leaves the epoll set with it */
                free_list[n_free++] = (int)d;
            }
        }
    }
}

/* Starts n nodes (n <= FAKE_NODES_MAX; silent[i]: node i never answers; legacy[i], legacy
 * NULL for none: it answers 404 to POST /v1/node/limits) in a child process; its pid once
 * every socket is bound, or -1. Stop it with fake_nodes_stop. */
static pid_t fake_nodes_start2(const char *dir, size_t n, const bool *silent, const bool *legacy,
                               unsigned gpus)
{
    int lfd[FAKE_NODES_MAX];
    char path[256];
    if (n > FAKE_NODES_MAX)
        return -1;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/n%zu.sock", dir, i);
        if ((lfd[i] = fake_listen(path)) < 0) {
            while (i-- > 0)
                close(lfd[i]);
            return -1;
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlives a test that failed */
        if (getppid() == 1)
            _exit(1);
        snprintf(path, sizeof path, "%s/limits", dir);
        FILE *log = fopen(path, "a");
        if (log)
            fake_serve(lfd, n, silent, legacy, gpus, log);
        _exit(1);
    }
    for (size_t i = 0; i < n; i++)
        close(lfd[i]);
    return pid;
}

static pid_t fake_nodes_start(const char *dir, size_t n, const bool *silent, unsigned gpus)
{
    return fake_nodes_start2(dir, n, silent, NULL, gpus);
}

static void fake_nodes_stop(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
}

#endif
