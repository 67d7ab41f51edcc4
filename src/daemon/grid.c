/* SPDX-License-Identifier: MIT */
/* ecoschedd's grid signals (grid.h; docs/daemon/README.md, "Grid signals"): sources, refresh,
 * per-job carbon and cost, and deferral through the core carbon policies. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "grid.h"
#include "util/grid_signal.h"
#include "util/http_client.h"
#include "util/log.h"

/* A loopback source answers in milliseconds; 5 s bounds how long one slow answer may hold the
 * daemon's loop (the fetch runs on it). */
#define FETCH_TIMEOUT_MS 5000

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

/* Fetches src->url into src->cache. 0 or -EIO with err naming the URL. */
static int fetch(struct ecod_grid_src *src, struct eco_error *err)
{
    struct eco_http_resp resp = {0};
    FILE *f = NULL;
    char tmp[4200];
    int ret = 0;
    const char *slash = strchr(src->url + 7, '/');
    char base[512];
    snprintf(base, sizeof base, "%.*s", (int)(slash - src->url), src->url);
    struct eco_http_req req = {.endpoint = base, .path = slash, .timeout_ms = FETCH_TIMEOUT_MS};
    struct eco_error why = {{0}};
    ret = eco_http_request(&req, &resp, &why);
    if (ret < 0) {
        ret = eco_errorf(err, -EIO, "%s: %s", src->url, why.msg[0] ? why.msg : "not reached");
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

/* Reads the source's file (or the URL's cached answer) into a new series and swaps it in;
 * on error the old series stays. */
static int load(struct ecod_grid_src *src, struct eco_error *err)
{
    struct eco_signal s = {0};
    const char *path = src->url[0] ? src->cache : src->path;
    int ret = src->url[0] ? fetch(src, err) : 0;
    if (ret == 0)
        ret = eco_grid_signal_read(path, src->kind, NULL, &s, err);
    if (ret < 0)
        return ret;
    if (src->loaded)
        eco_signal_free(&src->s);
    src->s = s;
    src->loaded = true;
    return 0;
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
    return load(src, err);
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
    if (g->carbon.loaded)
        eco_signal_free(&g->carbon.s);
    if (g->price.loaded)
        eco_signal_free(&g->price.s);
    if (g->policy && g->pol)
        g->policy->destroy(g->pol);
    memset(g, 0, sizeof *g);
}

static bool refresh_src(struct ecod_grid_src *src, double mono, double fetch_s)
{
    struct eco_error err = {{0}};
    if (src->url[0]) {
        if (mono < src->next_fetch_mono)
            return false;
        src->next_fetch_mono = mono + fetch_s;
    } else {
        struct stat st;
        if (!src->path[0] || stat(src->path, &st) != 0)
            return false; /* a file being replaced: the old series until it is back */
        if (st.st_mtim.tv_sec == src->mtime.tv_sec && st.st_mtim.tv_nsec == src->mtime.tv_nsec &&
            st.st_size == src->size)
            return false;
        src->mtime = st.st_mtim; /* tried once per change: a bad file is logged once */
        src->size = st.st_size;
    }
    if (load(src, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "grid", "%s signal not refreshed, the previous one is kept: %s",
                src->kind == ECO_SIGNAL_CARBON ? "carbon" : "price", err.msg);
        return false;
    }
    ECO_LOG(ECO_LOG_INFO, "grid", "%s signal read from %s: %zu pieces",
            src->kind == ECO_SIGNAL_CARBON ? "carbon" : "price", src->url[0] ? src->url : src->path,
            src->s.n);
    return true;
}

void ecod__grid_refresh(struct ecod_grid *g, double mono)
{
    if (refresh_src(&g->carbon, mono, g->fetch_s))
        g->generation++;
    if (refresh_src(&g->price, mono, g->fetch_s))
        g->generation++;
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
