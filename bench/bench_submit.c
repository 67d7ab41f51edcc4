/* SPDX-License-Identifier: MIT */
/* Submission-rate benchmark client of ecoschedd (bench/bench_daemon.sh): N POST /v1/jobs over
 * one kept-alive HTTP/1.1 connection on the daemon's unix socket, one request at a time (each
 * waits for its answer, as a CLI would), raw HTTP, no library. Prints "N SECONDS RATE" and
 * exits non-zero when any answer is not 201.
 * Usage: eco_bench_submit SOCKET N GPUS CWD */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s SOCKET N GPUS CWD\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    int fd = connect_unix(argv[1]);
    if (fd < 0) {
        perror("connect");
        return 1;
    }
    char body[1024], req[2048], resp[8192];
    int blen = snprintf(body, sizeof body,
                        "{\"argv\":[\"true\"],\"cwd\":\"%s\",\"gpus\":%s,\"name\":\"bench\"}", argv[4],
                        argv[3]);
    int rlen = snprintf(req, sizeof req,
                        "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                        "application/json\r\nContent-Length: %d\r\n\r\n%s",
                        blen, body);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        int st;
        if (write_all(fd, req, (size_t)rlen) < 0 || (st = read_response(fd, resp, sizeof resp)) < 0) {
            fprintf(stderr, "request %ld: connection failed\n", i);
            return 1;
        }
        if (st != 201) {
            fprintf(stderr, "request %ld: HTTP %d: %s\n", i, st, resp);
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%ld %.3f %.0f\n", n, s, (double)n / s);
    close(fd);
    return 0;
}
