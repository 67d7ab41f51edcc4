/* SPDX-License-Identifier: MIT */
/* ecoschedd's fallback lease from powerd: the share of the cluster budget it takes as its node
 * budget when powerd has been silent for the lease time, and the limits powerd last set, put
 * back at a restart (docs/daemon/README.md, "Fallback when powerd is silent"). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lease.h"
#include "ecod.h"
#include "nodecap.h"
#include "runs.h"

/* The file's format version, written and required ("version"). */
#define LEASE_FILE_VERSION 1

int ecod_lease_check(double fallback_w, double lease_s, struct eco_error *err)
{
    if (fallback_w == 0 && lease_s == 0) /* the release: no lease from here on */
        return 0;
    if (!(fallback_w > 0 && fallback_w <= ECOD_LEASE_MAX_W))
        return eco_errorf(err, -EINVAL, "fallback_w must be a number of watts, > 0 and <= %g",
                          ECOD_LEASE_MAX_W);
    if (!(lease_s >= ECOD_LEASE_MIN_S && lease_s <= ECOD_LEASE_MAX_S))
        return eco_errorf(err, -EINVAL, "lease_s must be %g..%g seconds", ECOD_LEASE_MIN_S,
                          ECOD_LEASE_MAX_S);
    return 0;
}

bool ecod_lease_renew(struct ecod_lease *l, double fallback_w, double lease_s, double wall,
                      double mono)
{
    bool ended = l->active;
    l->fallback_w = fallback_w;
    l->lease_s = lease_s;
    l->heard_wall = wall;
    l->heard_mono = mono;
    l->active = false;
    return ended;
}

double ecod_lease_left_s(const struct ecod_lease *l, double mono)
{
    if (!(l->fallback_w > 0))
        return INFINITY;
    return l->heard_mono + l->lease_s - mono;
}

bool ecod_lease_due(const struct ecod_lease *l, double mono)
{
    return !l->active && ecod_lease_left_s(l, mono) <= 0;
}

void ecod_lease_resume(struct ecod_lease *l, double wall, double mono)
{
    /* a wall clock set back below the renewal counts as heard now: the lease runs again */
    l->heard_mono = mono - fmax(0, wall - l->heard_wall);
    l->active = false;
}

/* The number at key of o into *out; false when it is missing or not a finite number >= 0. */
static bool get_num(const json_t *o, const char *key, double *out)
{
    const json_t *v = json_object_get(o, key);
    *out = json_number_value(v);
    return json_is_number(v) && isfinite(*out) && *out >= 0;
}

static int decode(const json_t *o, struct ecod_lease *l, struct eco_error *err)
{
    const char *bad = NULL;
    const json_t *lim = json_object_get(o, "limits_w");
    if (json_integer_value(json_object_get(o, "version")) != LEASE_FILE_VERSION)
        bad = "version";
    else if (!get_num(o, "fallback_w", &l->fallback_w))
        bad = "fallback_w";
    else if (!get_num(o, "lease_s", &l->lease_s))
        bad = "lease_s";
    else if (!get_num(o, "heard_wall_s", &l->heard_wall))
        bad = "heard_wall_s";
    else if (!get_num(o, "saved_budget_w", &l->saved_budget_w))
        bad = "saved_budget_w";
    else if (!json_is_array(lim) || json_array_size(lim) > ECO_GPUSEL_MAX_GPUS)
        bad = "limits_w";
    for (size_t g = 0; !bad && g < json_array_size(lim); g++) {
        l->limit_w[g] = json_number_value(json_array_get(lim, g));
        if (!json_is_number(json_array_get(lim, g)) || !(l->limit_w[g] >= 0))
            bad = "limits_w";
    }
    l->active = json_is_true(json_object_get(o, "active"));
    if (bad)
        return eco_errorf(err, -EBADMSG, "field '%s' missing or out of range", bad);
    return 0;
}

int ecod_lease_load(const char *path, struct ecod_lease *l, struct eco_error *err)
{
    json_error_t jerr;
    memset(l, 0, sizeof *l);
    json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    int rc = 0;
    if (!o) {
        FILE *f = fopen(path, "r");
        if (!f)
            return eco_errorf(err, -ENOENT, "%s: no lease", path);
        fclose(f);
        return eco_errorf(err, -EBADMSG, "%s:%d: %s", path, jerr.line, jerr.text);
    }
    struct eco_error why = {{0}};
    if ((rc = decode(o, l, &why)) < 0) {
        memset(l, 0, sizeof *l);
        eco_errorf(err, rc, "%s: %s", path, why.msg);
    }
    json_decref(o);
    return rc;
}

int ecod_lease_save(const char *path, const struct ecod_lease *l, struct eco_error *err)
{
    char tmp[4200];
    int rc = 0;
    json_t *lim = json_array(), *o = NULL;
    size_t n = ECO_GPUSEL_MAX_GPUS;
    while (n > 0 && !(l->limit_w[n - 1] > 0)) /* the GPUs up to the last one powerd set */
        n--;
    for (size_t g = 0; lim && g < n; g++)
        json_array_append_new(lim, json_real(l->limit_w[g]));
    o = json_pack("{s:i,s:f,s:f,s:f,s:b,s:f,s:o}", "version", LEASE_FILE_VERSION, "fallback_w",
                  l->fallback_w, "lease_s", l->lease_s, "heard_wall_s", l->heard_wall, "active",
                  l->active, "saved_budget_w", l->saved_budget_w, "limits_w", lim);
    if (!o) {
        rc = eco_errorf(err, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        rc = eco_errorf(err, -ENAMETOOLONG, "%s: path too long", path);
        goto out;
    }
    if (json_dump_file(o, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0) {
        rc = eco_errorf(err, -(errno ? errno : EIO), "%s: %s", path, strerror(errno ? errno : EIO));
        remove(tmp);
    }
out:
    json_decref(o);
    return rc;
}

/* ---- the daemon's side ------------------------------------------------------------------- */

static void save(struct ecod *d)
{
    struct eco_error err = {{0}};
    if (!d->lease_path[0]) /* a daemon without a state directory (the fuzz target) */
        return;
    if (ecod_lease_save(d->lease_path, &d->lease, &err) < 0)
        ECO_LOG(ECO_LOG_WARN, "power", "lease not kept for a restart: %s", err.msg);
}

/* Puts back the limit powerd last set on each GPU (within its range and its jobs' caps), and
 * logs them in one line ("-": none kept for that GPU). */
static void reapply_limits(struct ecod *d)
{
    char line[ECO_GPUSEL_MAX_GPUS * 8 + 1] = "";
    size_t off = 0;
    for (unsigned g = 0; g < d->n_gpus && g < ECO_GPUSEL_MAX_GPUS; g++) {
        struct eco_power_range pr;
        struct eco_error err = {{0}};
        double w = d->lease.limit_w[g], now_w = -1;
        if (!(w > 0) || eco_platform_power_range(d->platform, g, &pr, NULL) < 0) {
            off += (size_t)snprintf(line + off, sizeof line - off, " -");
            continue;
        }
        double cap_w = ecod__caps_gpu(d, g); /* an adopted job's own cap, when lower */
        w = fmin(pr.max_w, fmax(pr.min_w, cap_w > 0 ? fmin(w, cap_w) : w));
        off += (size_t)snprintf(line + off, sizeof line - off, " %.0f", w);
        if (eco_platform_power_limit(d->platform, g, &now_w, NULL) == 0 && fabs(now_w - w) < 0.5)
            continue;
        if (eco_platform_set_power_limit(d->platform, g, w, &err) < 0)
            ECO_LOG(ECO_LOG_WARN, "power", "GPU %u: limit %.0f W: %s", g, w, err.msg);
    }
    ECO_LOG(ECO_LOG_INFO, "power", "powerd's last limits kept (W per GPU):%s", line);
}

void ecod__lease_init(struct ecod *d, double wall, double mono)
{
    struct eco_error err = {{0}};
    snprintf(d->lease_path, sizeof d->lease_path, "%s/lease.json", d->state_dir);
    int rc = ecod_lease_load(d->lease_path, &d->lease, &err);
    if (rc == -ENOENT)
        return;
    if (rc < 0) {
        ECO_LOG(ECO_LOG_WARN, "power", "%s: no lease kept", err.msg);
        return;
    }
    if (!(d->lease.fallback_w > 0)) /* limits set without a lease: as before, not kept */
        return;
    ecod_lease_resume(&d->lease, wall, mono);
    double left = ecod_lease_left_s(&d->lease, mono);
    ECO_LOG(ECO_LOG_INFO, "power", "lease from powerd kept: fallback %.0f W, %s %.1f s",
            d->lease.fallback_w, left > 0 ? "expires in" : "expired", fabs(left));
    if (!d->power_knob_clock)
        reapply_limits(d);
}

void ecod__lease_tick(struct ecod *d, double mono)
{
    struct ecod_lease *l = &d->lease;
    if (!d->nodecap || !ecod_lease_due(l, mono))
        return;
    struct ecod_nodecap_status s;
    ecod_nodecap_status(d, &s);
    l->saved_budget_w = s.budget_w;
    l->active = true;
    double w = s.budget_w > 0 ? fmin(s.budget_w, l->fallback_w) : l->fallback_w;
    ecod__nodecap_hand_over(d, w);
    ECO_LOG(ECO_LOG_WARN, "power",
            "nothing from powerd for %.1f s (lease %.0f s): fallback node budget %.0f W",
            mono - l->heard_mono, l->lease_s, w);
    save(d);
}

void ecod__lease_keep_limits(struct ecod *d)
{
    bool moved = false;
    for (unsigned g = 0; d->lease.active && g < d->n_gpus && g < ECO_GPUSEL_MAX_GPUS; g++) {
        double w;
        if (eco_platform_power_limit(d->platform, g, &w, NULL) == 0 &&
            fabs(w - d->lease.limit_w[g]) >= 0.5) {
            d->lease.limit_w[g] = w;
            moved = true;
        }
    }
    if (moved)
        save(d);
}

/* The release ({"fallback_w": 0, "lease_s": 0}): no lease and no fallback from here on, the
 * limits powerd set forgotten for a restart; an active fallback gives the node budget back. */
static void lease_release(struct ecod *d)
{
    bool was = d->lease.fallback_w > 0, active = d->lease.active;
    double saved = d->lease.saved_budget_w;
    d->lease = (struct ecod_lease){0};
    if (active)
        ecod__nodecap_hand_over(d, saved);
    if (was)
        ECO_LOG(ECO_LOG_INFO, "power", "powerd's lease released: no fallback%s",
                active ? " (it ended)" : "");
    save(d);
}

void ecod__lease_heard(struct ecod *d, double fallback_w, double lease_s, double wall, double mono)
{
    if (fallback_w == 0) {
        lease_release(d);
        return;
    }
    if (ecod_lease_renew(&d->lease, fallback_w, lease_s, wall, mono)) {
        ecod__nodecap_hand_over(d, d->lease.saved_budget_w);
        ECO_LOG(ECO_LOG_INFO, "power", "powerd heard again: fallback ended, node budget %.0f W",
                d->lease.saved_budget_w);
    }
    save(d);
}

void ecod__lease_limit(struct ecod *d, unsigned g, double w)
{
    if (g >= ECO_GPUSEL_MAX_GPUS || d->lease.limit_w[g] == w)
        return;
    d->lease.limit_w[g] = w;
    save(d);
}

double ecod__lease_budget(struct ecod *d, double budget_w)
{
    if (!d->lease.active)
        return budget_w;
    d->lease.saved_budget_w = budget_w;
    save(d);
    return budget_w > 0 ? fmin(budget_w, d->lease.fallback_w) : d->lease.fallback_w;
}
