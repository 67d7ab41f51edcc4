/* SPDX-License-Identifier: MIT */
/* Submission-rate benchmark client of ecoschedd (bench/bench_daemon.sh): N POST /v1/jobs over
 * one kept-alive HTTP/1.1 connection on the daemon's unix socket, one request at a time (each
 * waits for its answer, as a CLI would), raw HTTP, no library. Prints "N SECONDS RATE" and
 * exits non-zero when any answer is not 201. With LISTERS > 0, that many child processes each
 * GET /v1/jobs (the default page) in a loop on their own kept-alive connection while the
 * submissions run (each stops after LIST_MAX_S or LIST_MAX requests at the latest), and
 * "N SECONDS RATE LISTINGS" is printed, LISTINGS the listings answered meanwhile.
 * Usage: eco_bench_submit SOCKET N GPUS CWD [LISTERS] */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, usleep */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "util/clock.h"

static int connect_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || strlen(path) >= sizeof a.sun_path)
        return -1;
    memcpy(a.sun_path, path, strlen(path) + 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads one response (headers + Content-Length body); returns the HTTP status, -1 on error. */
static int read_response(int fd, char *buf, size_t cap)
{
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have + 1 >= cap)
            return -1;
        ssize_t r = read(fd, buf + have, cap - 1 - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        have += (size_t)r;
        buf[have] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    int status = -1;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    size_t len = 0;
    for (const char *l = strstr(buf, "\r\n"); l && l < end; l = strstr(l + 2, "\r\n"))
        if (!strncasecmp(l + 2, "Content-Length:", 15))
            len = strtoul(l + 17, NULL, 10);
    size_t got = have - (size_t)(end + 4 - buf);
    while (got < len) { /* bodies here are tiny: read and drop */
        char tmp[512];
        size_t want = len - got < sizeof tmp ? len - got : sizeof tmp;
        ssize_t r = read(fd, tmp, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return status;
}

/* Bounds of one lister: far beyond a submission run (5,000 at >= 5,000/s is 1 s), so they only
 * stop a lister whose parent died. */
#define LIST_MAX_S 60
#define LIST_MAX 1000000L
#define MAX_LISTERS 64

/* One lister: GET /v1/jobs until stopped (SIGKILL) or its bounds; counts answers in *done. */
static void lister(const char *sock, volatile long *done)
{
    static const char req[] = "GET /v1/jobs HTTP/1.1\r\nHost: localhost\r\n\r\n";
    char resp[8192];
    int fd = connect_unix(sock);
    double t0 = eco_mono_s();
    if (fd < 0)
        _exit(1);
    for (long i = 0; i < LIST_MAX && eco_mono_s() - t0 < LIST_MAX_S; i++) {
        if (write_all(fd, req, sizeof req - 1) < 0 || read_response(fd, resp, sizeof resp) != 200)
            _exit(1);
        ++*done;
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s SOCKET N GPUS CWD [LISTERS]\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    long listers = argc == 6 ? strtol(argv[5], NULL, 10) : 0;
    pid_t pids[MAX_LISTERS];
    volatile long *counts = NULL;
    if (listers < 0 || listers > MAX_LISTERS) {
        fprintf(stderr, "LISTERS must be 0..%d\n", MAX_LISTERS);
        return 2;
    }
    if (listers > 0) {
        void *m = mmap(NULL, MAX_LISTERS * sizeof(long), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        counts = m;
        for (long k = 0; k < listers; k++)
            if ((pids[k] = fork()) == 0)
                lister(argv[1], &counts[k]);
        usleep(200000); /* the listers are connected and busy before the clock starts */
    }
    int fd = connect_unix(argv[1]);
    if (fd < 0) {
        perror("connect");
        return 1;
    }
    char body[1024], req[2048], resp[8192];
    int blen = snprintf(body, sizeof body,
                        "{\"argv\":[\"true\"],\"cwd\":\"%s\",\"gpus\":%s,\"name\":\"bench\"}",
                        argv[4], argv[3]);
    int rlen = snprintf(req, sizeof req,
                        "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                        "application/json\r\nContent-Length: %d\r\n\r\n%s",
                        blen, body);
    double t0 = eco_mono_s();
    for (long i = 0; i < n; i++) {
        int st;
        if (write_all(fd, req, (size_t)rlen) < 0 ||
            (st = read_response(fd, resp, sizeof resp)) < 0) {
            fprintf(stderr, "request %ld: connection failed\n", i);
            return 1;
        }
        if (st != 201) {
            fprintf(stderr, "request %ld: HTTP %d: %s\n", i, st, resp);
            return 1;
        }
    }
    double s = eco_mono_s() - t0;
    if (listers > 0) {
        long lists = 0;
        for (long k = 0; k < listers; k++)
            lists += counts[k];
        for (long k = 0; k < listers; k++) {
            kill(pids[k], SIGKILL);
            waitpid(pids[k], NULL, 0);
        }
        printf("%ld %.3f %.0f %ld\n", n, s, (double)n / s, lists);
    } else {
        printf("%ld %.3f %.0f\n", n, s, (double)n / s);
    }
    close(fd);
    return 0;
}
