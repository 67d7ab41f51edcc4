/* SPDX-License-Identifier: MIT */
/* ecoschedd's grid signals (grid.h; docs/daemon/README.md, "Grid signals"): sources, the reader
 * thread that refreshes them off the loop, per-job carbon and cost, and deferral through the
 * core carbon policies. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "grid.h"
#include "util/clock.h"
#include "util/csv.h"
#include "util/grid_signal.h"
#include "util/http_client.h"
#include "util/log.h"

/* A loopback source answers in milliseconds; 5 s bounds how long one slow answer keeps the
 * reader thread from the other source (the loop never waits for it). */
#define FETCH_TIMEOUT_MS 5000
/* How often the reader stats a signal file: a quarter of a second sees an operator's `mv`
 * before the next sampling tick (1 s by default) for the cost of four stat calls a second. */
#define FILE_POLL_S 0.25

/* What the reader read for one source, waiting for the loop. */
struct pending {
    bool ready;
    int rc; /* 0: s holds the new series; < 0: msg says why it was not read */
    struct eco_signal s;
    char msg[ECO_ERROR_MSG_MAX];
};

struct ecod_grid_reader {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* on CLOCK_MONOTONIC: the reader's poll, and its stop */
    pthread_t thread;
    bool started, stopping;
    int wake_fd;                  /* eventfd: a pending result for the loop */
    struct ecod_grid_src *src[2]; /* carbon and price (their set-up fields only, and the
                                   * reader's own: mtime, size, next_fetch_mono) */
    double fetch_s;
    struct pending res[2];
};

const char *ecod__grid_check_url(const char *url)
{
    static const char *const hosts[] = {"localhost", "[::1]"};
    if (strncmp(url, "http://", 7) != 0)
        return "must start with http:// (a local source; https and other schemes are refused)";
    const char *h = url + 7;
    size_t n = strcspn(h, "/");
    if (h[n] != '/')
        return "must have a path after the host (http://127.0.0.1:PORT/PATH)";
    char host[64];
    if (n == 0 || n >= sizeof host)
        return "has no host";
    memcpy(host, h, n);
    host[n] = '\0';
    char *colon = host[0] == '[' ? strchr(host, ']') : host;
    colon = colon ? strchr(colon, ':') : NULL;
    if (colon) {
        char *end = NULL;
        long port = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || port < 1 || port > 65535)
            return "has a bad port (1..65535)";
        *colon = '\0';
    }
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
        if (strcasecmp(host, hosts[i]) == 0)
            return NULL;
    unsigned a, b, c, d;
    char extra;
    if (sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &d, &extra) == 4 && a == 127 && b < 256 &&
        c < 256 && d < 256)
        return NULL;
    return "is not a loopback host (127.0.0.0/8, localhost or [::1]): the daemon never fetches "
           "from the network";
}

/* The reader is asked to stop: its fetch gives up (http_client's cancel). */
static int stopping(void *ud)
{
    struct ecod_grid_reader *r = ud;
    pthread_mutex_lock(&r->mu);
    int stop = r->stopping;
    pthread_mutex_unlock(&r->mu);
    return stop;
}

/* Fetches src->url into src->cache (r, when given, cancels it on stop). 0 or -EIO / -EFBIG with
 * err naming the URL. */
static int fetch(const struct ecod_grid_src *src, struct ecod_grid_reader *r, struct eco_error *err)
{
    struct eco_http_resp resp = {0};
    FILE *f = NULL;
    char tmp[4200];
    int ret = 0;
    const char *slash = strchr(src->url + 7, '/');
    char base[512];
    snprintf(base, sizeof base, "%.*s", (int)(slash - src->url), src->url);
    struct eco_http_req req = {.endpoint = base,
                               .path = slash,
                               .timeout_ms = FETCH_TIMEOUT_MS,
                               .max_body = ECOD_GRID_MAX_BODY,
                               .cancel = r ? stopping : NULL,
                               .cancel_ud = r};
    struct eco_error why = {{0}};
    ret = eco_http_request(&req, &resp, &why);
    if (ret == -EFBIG) {
        char lim[32];
        eco_csv_format_bytes(ECOD_GRID_MAX_BODY, lim, sizeof lim);
        ret = eco_errorf(err, -EFBIG, "%s: the answer is longer than %s, the limit for a signal",
                         src->url, lim);
        goto out;
    }
    if (ret < 0) {
        ret = eco_errorf(err, ret == -ECANCELED ? ret : -EIO, "%s: %s", src->url,
                         why.msg[0] ? why.msg : "not reached");
        goto out;
    }
    if (resp.status != 200) {
        ret = eco_errorf(err, -EIO, "%s: HTTP status %ld", src->url, resp.status);
        goto out;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", src->cache);
    f = fopen(tmp, "wb");
    if (!f || (resp.len && fwrite(resp.body, 1, resp.len, f) != resp.len) || fclose(f) != 0) {
        f = NULL;
        ret = eco_errorf(err, -EIO, "%s: cannot write %s: %s", src->url, tmp, strerror(errno));
        goto out;
    }
    f = NULL;
    if (rename(tmp, src->cache) != 0)
        ret = eco_errorf(err, -EIO, "%s: cannot rename %s: %s", src->url, tmp, strerror(errno));
out:
    if (f)
        fclose(f);
    eco_http_resp_fini(&resp);
    return ret;
}

/* Reads the source's file (or fetches the URL and reads its cached answer) into *s (the
 * caller's, eco_signal_free). 0, or < 0 with err naming the file and line or the URL. */
static int read_src(const struct ecod_grid_src *src, struct ecod_grid_reader *r,
                    struct eco_signal *s, struct eco_error *err)
{
    const char *path = src->url[0] ? src->cache : src->path;
    int ret = src->url[0] ? fetch(src, r, err) : 0;
    if (ret == 0)
        ret = eco_grid_signal_read(path, src->kind, NULL, s, err);
    return ret;
}

/* Puts a new series in place of the loop's (the old one freed). */
static void take(struct ecod_grid_src *src, struct eco_signal *s)
{
    if (src->loaded)
        eco_signal_free(&src->s);
    src->s = *s;
    src->loaded = true;
    memset(s, 0, sizeof *s);
}

static int setup_src(struct ecod_grid_src *src, enum eco_signal_kind kind, const char *path,
                     const char *url, const char *state_dir, struct eco_error *err)
{
    src->kind = kind;
    snprintf(src->path, sizeof src->path, "%s", path ? path : "");
    snprintf(src->url, sizeof src->url, "%s", url ? url : "");
    if (src->path[0] && src->url[0])
        return eco_errorf(err, -EINVAL, "%s and %s_url are both set: choose one",
                          kind == ECO_SIGNAL_CARBON ? "carbon" : "price",
                          kind == ECO_SIGNAL_CARBON ? "carbon" : "price");
    if (src->url[0]) {
        const char *why = ecod__grid_check_url(src->url);
        if (why)
            return eco_errorf(err, -EINVAL, "%s_url '%s' %s",
                              kind == ECO_SIGNAL_CARBON ? "carbon" : "price", src->url, why);
        snprintf(src->cache, sizeof src->cache, "%s/%s-signal.csv", state_dir,
                 kind == ECO_SIGNAL_CARBON ? "carbon" : "price");
    }
    if (!src->path[0] && !src->url[0])
        return 0;
    struct stat st;
    if (src->path[0] && stat(src->path, &st) == 0) {
        src->mtime = st.st_mtim;
        src->size = st.st_size;
    }
    struct eco_signal s = {0};
    int ret = read_src(src, NULL, &s, err);
    if (ret == 0)
        take(src, &s);
    return ret;
}

/* ---- the reader thread ------------------------------------------------------------------- */

/* Whether src is due to be read again: a file whose mtime or size changed (a missing one, being
 * replaced, is not: the old series stays until it is back), or a URL whose fetch time came. */
static bool due(struct ecod_grid_src *src, double mono, double fetch_s)
{
    if (src->url[0]) {
        if (mono < src->next_fetch_mono)
            return false;
        src->next_fetch_mono = mono + fetch_s;
        return true;
    }
    struct stat st;
    if (!src->path[0] || stat(src->path, &st) != 0)
        return false;
    if (st.st_mtim.tv_sec == src->mtime.tv_sec && st.st_mtim.tv_nsec == src->mtime.tv_nsec &&
        st.st_size == src->size)
        return false;
    src->mtime = st.st_mtim; /* tried once per change: a bad file is logged once */
    src->size = st.st_size;
    return true;
}

/* Reads source i when due and leaves the result for the loop (replacing one it did not take
 * yet), then wakes the loop. */
static void poll_src(struct ecod_grid_reader *r, int i)
{
    struct ecod_grid_src *src = r->src[i];
    if ((!src->path[0] && !src->url[0]) || !due(src, eco_mono_s(), r->fetch_s))
        return;
    struct pending p = {.ready = true};
    struct eco_error err = {{0}};
    p.rc = read_src(src, r, &p.s, &err);
    if (p.rc == -ECANCELED)
        return; /* stopping */
    memcpy(p.msg, err.msg, sizeof p.msg);
    pthread_mutex_lock(&r->mu);
    if (r->res[i].ready && r->res[i].rc == 0)
        eco_signal_free(&r->res[i].s);
    r->res[i] = p;
    pthread_mutex_unlock(&r->mu);
    uint64_t one = 1;
    if (write(r->wake_fd, &one, sizeof one) < 0) /* only EAGAIN: a wake-up is pending */
        (void)0;
}

static void *reader_main(void *arg)
{
    struct ecod_grid_reader *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stopping) {
        pthread_mutex_unlock(&r->mu);
        poll_src(r, 0);
        poll_src(r, 1);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)(FILE_POLL_S * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&r->mu);
        while (!r->stopping && pthread_cond_timedwait(&r->cv, &r->mu, &until) == 0)
            ; /* woken without a stop: wait out the poll */
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void reader_destroy(struct ecod_grid_reader *r)
{
    if (!r)
        return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stopping = true;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
    }
    for (int i = 0; i < 2; i++)
        if (r->res[i].ready && r->res[i].rc == 0)
            eco_signal_free(&r->res[i].s);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    if (r->wake_fd >= 0)
        close(r->wake_fd);
    free(r);
}

/* Starts the reader of g's sources. 0, or -errno with err saying why. */
static int reader_start(struct ecod_grid *g, struct eco_error *err)
{
    struct ecod_grid_reader *r = calloc(1, sizeof *r);
    pthread_condattr_t ca;
    sigset_t all, old;
    int ret;
    if (!r)
        return eco_errorf(err, -ENOMEM, "grid signal reader: out of memory");
    r->src[0] = &g->carbon;
    r->src[1] = &g->price;
    r->fetch_s = g->fetch_s;
    pthread_mutex_init(&r->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->cv, &ca);
    pthread_condattr_destroy(&ca);
    if ((r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        ret = eco_errorf(err, -errno, "grid signal reader: eventfd: %s", strerror(errno));
        goto fail;
    }
    /* signals stay with the event loop (its handlers and wake pipe): the reader blocks all */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ret = -pthread_create(&r->thread, NULL, reader_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ret < 0) {
        eco_errorf(err, ret, "grid signal reader: cannot start a thread: %s", strerror(-ret));
        goto fail;
    }
    r->started = true;
    g->reader = r;
    return 0;
fail:
    reader_destroy(r);
    return ret;
}

int ecod__grid_setup(struct ecod_grid *g, const char *carbon, const char *carbon_url,
                     const char *price, const char *price_url, const char *policy, double run_s,
                     double fetch_s, const char *state_dir, double mono, struct eco_error *err)
{
    memset(g, 0, sizeof *g);
    g->fetch_s = fetch_s;
    g->run_s = run_s;
    int ret = setup_src(&g->carbon, ECO_SIGNAL_CARBON, carbon, carbon_url, state_dir, err);
    if (ret == 0)
        ret = setup_src(&g->price, ECO_SIGNAL_PRICE, price, price_url, state_dir, err);
    if (ret < 0)
        return ret;
    g->carbon.next_fetch_mono = g->price.next_fetch_mono = mono + fetch_s;
    if ((g->carbon.path[0] || g->carbon.url[0] || g->price.path[0] || g->price.url[0]) &&
        (ret = reader_start(g, err)) < 0)
        return ret;
    if (policy && *policy && strcmp(policy, "none") != 0) {
        const char *params = NULL;
        g->policy = eco_carbon_find(policy, &params);
        if (!g->policy)
            return eco_errorf(err, -EINVAL,
                              "carbon_policy '%s': unknown (none, shift, lwa or "
                              "threshold)",
                              policy);
        struct eco_error why = {{0}};
        g->pol = g->policy->create(NULL, params, &why);
        if (!g->pol)
            return eco_errorf(err, -EINVAL, "carbon_policy '%s': %s", policy, why.msg);
    }
    return 0;
}

void ecod__grid_fini(struct ecod_grid *g)
{
    reader_destroy(g->reader); /* first: it reads the sources' set-up fields */
    if (g->carbon.loaded)
        eco_signal_free(&g->carbon.s);
    if (g->price.loaded)
        eco_signal_free(&g->price.s);
    if (g->policy && g->pol)
        g->policy->destroy(g->pol);
    memset(g, 0, sizeof *g);
}

/* Takes what the reader left for source i: true when a new series came in. */
static bool take_pending(struct ecod_grid *g, int i)
{
    struct ecod_grid_src *src = i ? &g->price : &g->carbon;
    struct pending p;
    pthread_mutex_lock(&g->reader->mu);
    p = g->reader->res[i];
    g->reader->res[i] = (struct pending){0};
    pthread_mutex_unlock(&g->reader->mu);
    if (!p.ready)
        return false;
    const char *kind = src->kind == ECO_SIGNAL_CARBON ? "carbon" : "price";
    if (p.rc < 0) {
        ECO_LOG(ECO_LOG_ERR, "grid", "%s signal not refreshed, the previous one is kept: %s", kind,
                p.msg);
        return false;
    }
    take(src, &p.s);
    ECO_LOG(ECO_LOG_INFO, "grid", "%s signal read from %s: %zu pieces", kind,
            src->url[0] ? src->url : src->path, src->s.n);
    return true;
}

void ecod__grid_refresh(struct ecod_grid *g, double mono)
{
    (void)mono;
    if (!g->reader)
        return;
    uint64_t n;
    if (read(g->reader->wake_fd, &n, sizeof n) < 0) /* EAGAIN: nothing was pending */
        (void)0;
    if (take_pending(g, 0))
        g->generation++;
    if (take_pending(g, 1))
        g->generation++;
}

int ecod__grid_fd(const struct ecod_grid *g)
{
    return g->reader ? g->reader->wake_fd : -1;
}

/* The covered part of [a, b] under s: 0 when none; *partial set when some is not covered. */
static double covered(const struct eco_signal *s, double a, double b, double *ca, double *cb,
                      bool *partial)
{
    *ca = fmax(a, eco_signal_start(s));
    *cb = fmin(b, eco_signal_end(s));
    if (*ca > a || *cb < b)
        *partial = true;
    return *cb > *ca ? *cb - *ca : 0;
}

void ecod__grid_account(const struct ecod_grid *g, double delta_j, double a, double b,
                        struct ecod_grid_acc *acc)
{
    acc->has_carbon |= g->carbon.loaded;
    acc->has_cost |= g->price.loaded;
    if (!(delta_j > 0) || !(b > a))
        return;
    double w = delta_j / (b - a), ca, cb;
    if (g->carbon.loaded && covered(&g->carbon.s, a, b, &ca, &cb, &acc->carbon_partial) > 0)
        acc->carbon_kg += eco_signal_carbon_kg(&g->carbon.s, w, ca, cb);
    if (g->price.loaded && covered(&g->price.s, a, b, &ca, &cb, &acc->cost_partial) > 0)
        acc->cost += eco_signal_cost(&g->price.s, w, ca, cb);
}

const char *ecod__grid_currency(const struct ecod_grid *g)
{
    return g->price.loaded ? g->price.s.currency : "";
}

/* The series the policies follow: carbon, else price; NULL when none. */
static const struct eco_signal *steering(const struct ecod_grid *g)
{
    return g->carbon.loaded ? &g->carbon.s : g->price.loaded ? &g->price.s : NULL;
}

const char *ecod__grid_forecast_name(const struct ecod_grid *g, double now)
{
    const struct eco_signal *s = steering(g);
    if (!s)
        return "none";
    return eco_signal_end(s) > now + (s->t[s->n] - s->t[s->n - 1]) ? "operator" : "persist";
}

double ecod__grid_release(struct ecod_grid *g, double now, double submit_s, double latest_s,
                          unsigned gpus, unsigned cluster_gpus)
{
    const struct eco_signal *s = steering(g);
    struct eco_forecast f;
    if (!g->policy || !s || !(latest_s > submit_s))
        return submit_s;
    /* The file's values after now are the operator's forecast, taken as they are; without
     * them, seasonal persistence from the past only. */
    bool op = strcmp(ecod__grid_forecast_name(g, now), "operator") == 0;
    if (eco_forecast_init(&f, op ? ECO_FORECAST_ORACLE : ECO_FORECAST_PERSIST, 0, s, 0, NULL) < 0)
        return submit_s;
    struct eco_carbon_view v = {
        .now_s = now,
        .epoch0_s = 0, /* the daemon's times are calendar times already */
        .forecast = &f,
        .step_s = s->n > 0 ? s->t[1] - s->t[0] : 3600,
        .cluster_gpus = cluster_gpus,
    };
    struct eco_carbon_job j = {
        .submit_s = now > submit_s ? now : submit_s,
        .run_s = g->run_s,
        .latest_start_s = latest_s,
        .gpus = gpus,
    };
    if (j.latest_start_s < j.submit_s)
        j.latest_start_s = j.submit_s;
    double r = g->policy->release(g->pol, &v, &j);
    eco_forecast_fini(&f);
    if (!(r >= j.submit_s))
        r = j.submit_s;
    return r > latest_s ? latest_s : r;
}
