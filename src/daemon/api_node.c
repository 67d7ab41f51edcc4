/* SPDX-License-Identifier: MIT */
/* ecoschedd's routes for Slurm and the cluster power controller: the node's GPU power
 * (GET /v1/node), a GPU's limit set from the controller (POST /v1/gpus/N/limit; all of a
 * node's at once with its lease, POST /v1/node/limits), and Slurm
 * jobs registered and ended by the SPANK plugin so that their GPU energy is measured here
 * (POST /v1/slurm/jobs, POST /v1/slurm/jobs/JOBID/end). docs/http-api.md, docs/slurm.md. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/http_server.h"
#include "api.h"
#include "runs.h"
#include "ecod.h"
#include "lease.h"
#include "nodecap.h"
#include "sched.h"

/* The watched run of Slurm job `job`, or NULL. */
static const struct ecod_run *slurm_run(const struct ecod *d, int64_t job)
{
    for (size_t i = 0; i < d->n_runs; i++)
        if (d->runs[i].slurm_job == job)
            return &d->runs[i];
    return NULL;
}

static json_t *gpus_json(const uint32_t *gpus, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer(gpus[i]));
    return a;
}

/* ---- GET /v1/node ------------------------------------------------------------------------ */

/* The node power budget and its capping metrics (docs/policies/powercap.md, "Metrics"). */
static json_t *budget_json(const struct ecod *d)
{
    struct ecod_nodecap_status s;
    ecod_nodecap_status(d, &s);
    const struct eco_cap_metrics_report *m = &s.met;
    json_t *met = json_pack(
        "{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "periods", (json_int_t)m->periods,
        "binding_periods", (json_int_t)m->binding_periods, "settling_periods",
        (json_int_t)m->settling_periods, "above_periods", (json_int_t)m->above_periods,
        "mae_binding_pct", m->mae_binding_pct, "mae_all_pct", m->mae_all_pct, "overshoot_pct",
        m->overshoot_pct, "overshoot_raw_pct", m->overshoot_raw_pct, "above_s", m->above_s,
        "above_kwh", m->above_kwh, "above_share", m->above_share);
    return json_pack("{s:f,s:s?,s:o,s:o,s:f,s:I,s:o}", "budget_w", s.budget_w, "policy", s.policy,
                     "measured_w", isfinite(s.measured_w) ? json_real(s.measured_w) : json_null(),
                     "demand_w", isfinite(s.demand_w) ? json_real(s.demand_w) : json_null(),
                     "feedback_w", s.feedback_w, "jobs", (json_int_t)s.jobs, "metrics", met);
}

/* powerd's lease (lease.c): null when none was ever given. */
static json_t *fallback_json(const struct ecod *d)
{
    const struct ecod_lease *l = &d->lease;
    if (!(l->fallback_w > 0))
        return json_null();
    double mono = eco_mono_s();
    return json_pack("{s:f,s:f,s:b,s:f,s:f}", "fallback_w", l->fallback_w, "lease_s", l->lease_s,
                     "active", l->active, "heard_s_ago", mono - l->heard_mono, "lease_left_s",
                     fmax(0, ecod_lease_left_s(l, mono)));
}

static enum MHD_Result node(struct ecod *d, struct MHD_Connection *c)
{
    char host[256] = "";
    double total = 0, max_total = 0;
    json_t *gpus = json_array(), *jobs = json_array();
    gethostname(host, sizeof host - 1);
    for (unsigned g = 0; gpus && g < d->n_gpus; g++) {
        double p = 0, lim = 0;
        struct eco_power_range pr = {0};
        int64_t job = 0;
        double job_cap = 0;
        eco_platform_power(d->platform, g, &p, NULL);
        eco_platform_power_limit(d->platform, g, &lim, NULL);
        eco_platform_power_range(d->platform, g, &pr, NULL);
        for (size_t i = 0; i < d->n_runs; i++)
            for (uint32_t k = 0; d->runs[i].slurm_job > 0 && k < d->runs[i].n_gpus; k++)
                if (d->runs[i].gpus[k] == g) {
                    job = d->runs[i].slurm_job;
                    job_cap = d->runs[i].slurm_cap_w;
                }
        total += p;
        max_total += pr.max_w;
        json_t *o = json_pack("{s:i,s:f,s:f,s:f,s:f,s:f}", "index", (int)g, "power_w", p,
                              "power_limit_w", lim, "power_min_w", pr.min_w, "power_max_w",
                              pr.max_w, "power_default_w", pr.default_w);
        if (o) {
            json_object_set_new(o, "slurm_job", job > 0 ? json_integer(job) : json_null());
            json_object_set_new(o, "job_cap_w", job_cap > 0 ? json_real(job_cap) : json_null());
            /* For powerd's progress proxy (docs/slurm/powerd.md): null where the platform
             * cannot read them. */
            double util = 0, mhz = 0;
            json_object_set_new(o, "util",
                                eco_platform_util(d->platform, g, &util, NULL) == 0
                                    ? json_real(util)
                                    : json_null());
            json_object_set_new(o, "sm_clock_mhz",
                                eco_platform_sm_clock(d->platform, g, &mhz, NULL) == 0 && mhz > 0
                                    ? json_real(mhz)
                                    : json_null());
        }
        json_array_append_new(gpus, o);
    }
    for (size_t i = 0; jobs && i < d->n_runs; i++) {
        const struct ecod_run *r = &d->runs[i];
        if (r->slurm_job > 0)
            json_array_append_new(jobs, json_pack("{s:I,s:I,s:o,s:f}", "job_id",
                                                  (json_int_t)r->slurm_job, "id", (json_int_t)r->id,
                                                  "gpus", gpus_json(r->gpus, r->n_gpus), "energy_j",
                                                  r->energy_j));
    }
    json_t *out = json_pack("{s:s,s:s,s:f,s:f,s:o,s:o}", "node", host, "platform",
                            eco_platform_name(d->platform), "power_w", total, "max_power_w",
                            max_total, "gpus", gpus, "slurm_jobs", jobs);
    if (out) {
        json_object_set_new(out, "power_budget", budget_json(d));
        json_object_set_new(out, "fallback", fallback_json(d));
    }
    return eco_http_reply(c, 200, out);
}

/* ---- POST /v1/node/budget ------------------------------------------------------------------ */

/* The lease of a body (POST /v1/node/budget, POST /v1/node/limits): fallback_w and lease_s
 * together (ecod_lease_check's rules), or neither. NULL, or the field at fault with err. */
static const char *lease_fields(const json_t *b, struct eco_error *err)
{
    const json_t *f = json_object_get(b, "fallback_w"), *l = json_object_get(b, "lease_s");
    if (!f && !l)
        return NULL;
    struct eco_error why = {{0}};
    int rc = ecod_lease_check(json_is_number(f) ? json_number_value(f) : NAN,
                              json_is_number(l) ? json_number_value(l) : NAN, &why);
    if (rc < 0) {
        eco_errorf(err, -EINVAL, "%.199s (a lease is fallback_w with lease_s)", why.msg);
        return strncmp(why.msg, "lease_s", 7) ? "fallback_w" : "lease_s";
    }
    return NULL;
}

/* The lease of a body checked by lease_fields, renewed (or released) now; none: nothing. */
static void lease_apply(struct ecod *d, const json_t *b)
{
    const json_t *f = json_object_get(b, "fallback_w");
    if (f)
        ecod__lease_heard(d, json_number_value(f), json_number_value(json_object_get(b, "lease_s")),
                          eco_wall_s(), eco_mono_s());
}

/* The fields of a budget body: each known, fallback_w and lease_s together, at least a
 * budget_w or a lease. NULL, or the field at fault with err saying why. */
static const char *budget_fields(const json_t *b, struct eco_error *err)
{
    static const char *const known[] = {"budget_w", "policy", "fallback_w", "lease_s", NULL};
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)b, key, val)
    {
        size_t k = 0;
        while (known[k] && strcmp(known[k], key))
            k++;
        if (!known[k]) {
            eco_errorf(err, -EINVAL,
                       "unknown field '%.64s' (budget_w, policy, fallback_w, lease_s)", key);
            return key[0] ? key : "body";
        }
    }
    const json_t *w = json_object_get(b, "budget_w"), *p = json_object_get(b, "policy");
    const json_t *f = json_object_get(b, "fallback_w"), *l = json_object_get(b, "lease_s");
    if ((w || !(f || l)) && !json_is_number(w)) {
        eco_errorf(err, -EINVAL, "budget_w must be a number of watts (0: none)");
        return "budget_w";
    }
    if (w && !(json_number_value(w) >= 0 && json_number_value(w) <= ECOD_LEASE_MAX_W)) {
        eco_errorf(err, -EINVAL, "budget_w must be 0..%g W (0: none)", ECOD_LEASE_MAX_W);
        return "budget_w";
    }
    if (p && !json_is_string(p)) {
        eco_errorf(err, -EINVAL, "policy must be a capper name (FAMILY[:PARAMS])");
        return "policy";
    }
    return lease_fields(b, err);
}

const char *ecod__api_node_budget(struct ecod *d, const json_t *b, struct eco_error *err)
{
    const char *bad = budget_fields(b, err);
    if (bad)
        return bad;
    const json_t *w = json_object_get(b, "budget_w"), *p = json_object_get(b, "policy");
    struct eco_error why = {{0}};
    if (w || p) {
        /* under a fallback the asked budget is kept for its end, the lower of the two holds */
        struct ecod_nodecap_status now;
        ecod_nodecap_status(d, &now);
        double bw = w ? json_number_value(w) : now.budget_w;
        if (ecod__nodecap_set(d, w ? ecod__lease_budget(d, bw) : bw,
                              p ? json_string_value(p) : NULL, &why) < 0) {
            /* the message as the reply always had it: at most 199 bytes */
            eco_errorf(err, -EINVAL, "%.199s", why.msg);
            return p && !strncmp(why.msg, "policy", 6) ? "policy" : "budget_w";
        }
    }
    lease_apply(d, b);
    return NULL;
}

static enum MHD_Result set_budget(struct ecod *d, struct MHD_Connection *c, const json_t *b)
{
    struct eco_error err = {{0}};
    const char *bad = ecod__api_node_budget(d, b, &err);
    if (bad)
        return eco_http_fail(c, 400, bad, "%s", err.msg);
    const json_t *w = json_object_get(b, "budget_w"), *p = json_object_get(b, "policy");
    if (w || p) /* a lease alone comes every period of powerd's: not logged */
        ECO_LOG(ECO_LOG_INFO, "power", "node power budget %.0f W (%s)", json_number_value(w),
                p ? json_string_value(p) : "policy kept");
    return eco_http_reply(c, 200, budget_json(d));
}

/* ---- POST /v1/gpus/N/limit --------------------------------------------------------------- */

/* A GPU's new limit v (WATTS or "default") within pr: *w, or field (named in err) at fault. */
static const char *check_watts(const json_t *v, const struct eco_power_range *pr, const char *field,
                               double *w, struct eco_error *err)
{
    *w = pr->default_w;
    if (json_is_string(v) && !strcmp(json_string_value(v), "default"))
        return NULL;
    *w = json_number_value(v);
    if (!json_is_number(v) || !isfinite(*w) || *w < pr->min_w - 1e-9 || *w > pr->max_w + 1e-9) {
        eco_errorf(err, -EINVAL, "%s must be %g..%g W or \"default\"", field, pr->min_w, pr->max_w);
        return field;
    }
    return NULL;
}

const char *ecod__api_node_check_limit(const json_t *body, const struct eco_power_range *pr,
                                       double *w, struct eco_error *err)
{
    const json_t *v = json_object_get(body, "power_limit_w");
    if (json_object_size(body) != 1 || !v) {
        eco_errorf(err, -EINVAL, "the body must be {\"power_limit_w\": WATTS|\"default\"}");
        return "power_limit_w";
    }
    return check_watts(v, pr, "power_limit_w", w, err);
}

/* GPU g's limit set to w (checked): 0, or < 0 with err (the platform refused; logged). Kept in
 * the lease file, so that a restart of the daemon puts it back (lease.c). */
static int apply_limit(struct ecod *d, unsigned g, double w, struct eco_error *err)
{
    int rc = eco_platform_set_power_limit(d->platform, g, w, err);
    if (rc < 0) {
        ECO_LOG(ECO_LOG_WARN, "api", "GPU %u: limit %.0f W: %s", g, w, err->msg);
        return rc;
    }
    ECO_LOG(ECO_LOG_DEBUG, "api", "GPU %u: limit %.0f W", g, w);
    ecod__lease_limit(d, g, w);
    return 0;
}

static enum MHD_Result set_limit(struct ecod *d, struct MHD_Connection *c, const char *gs,
                                 const json_t *body)
{
    char *end;
    long g = strtol(gs, &end, 10);
    struct eco_power_range pr;
    struct eco_error err = {{0}};
    double w;
    if (!*gs || *end || g < 0 || g >= (long)d->n_gpus)
        return eco_http_fail(c, 404, "gpu", "no GPU '%.16s' on this server (0..%d)", gs,
                             (int)d->n_gpus - 1);
    if (json_object_size(body) != 1 || !json_object_get(body, "power_limit_w"))
        return eco_http_fail(c, 400, "power_limit_w",
                             "the body must be {\"power_limit_w\": WATTS|\"default\"}");
    if (eco_platform_power_range(d->platform, (unsigned)g, &pr, &err) < 0)
        return eco_http_fail(c, 500, NULL, "%s", err.msg);
    const char *bad = ecod__api_node_check_limit(body, &pr, &w, &err);
    if (bad)
        return eco_http_fail(c, 400, bad, "%s", err.msg);
    if (apply_limit(d, (unsigned)g, w, &err) < 0)
        return eco_http_fail(c, 500, NULL, "%s", err.msg);
    return eco_http_reply(c, 200, json_pack("{s:i,s:f}", "index", (int)g, "power_limit_w", w));
}

/* ---- POST /v1/node/limits ---------------------------------------------------------------- */

/* GPU index of a limits_w key: canonical decimal ("3", not "03" or "+3", so that no two keys
 * name one GPU) below n. -1 otherwise. */
static long gpu_key(const char *k, unsigned n)
{
    long g = 0;
    if (!*k || (k[0] == '0' && k[1]) || strlen(k) > 4)
        return -1;
    for (; *k; k++) {
        if (*k < '0' || *k > '9')
            return -1;
        g = g * 10 + (*k - '0');
    }
    return g < (long)n ? g : -1;
}

int ecod__api_node_check_limits(struct ecod *d, const json_t *b, double *w, char *field, size_t cap,
                                struct eco_error *err)
{
    static const char *const known[] = {"limits_w", "fallback_w", "lease_s", NULL};
    const char *key, *bad = NULL;
    json_t *val;
    field[0] = '\0';
    json_object_foreach((json_t *)b, key, val)
    {
        size_t k = 0;
        while (known[k] && strcmp(known[k], key))
            k++;
        if (!known[k]) {
            if (!key[0]) /* "" names no field: the body is what is wrong */
                eco_errorf(err, -EINVAL,
                           "body: a field has an empty name (limits_w, fallback_w, "
                           "lease_s)");
            else
                eco_errorf(err, -EINVAL, "unknown field '%.64s' (limits_w, fallback_w, lease_s)",
                           key);
            snprintf(field, cap, "%.64s", key[0] ? key : "body");
            return -EINVAL;
        }
    }
    const json_t *lim = json_object_get(b, "limits_w");
    if (!json_is_object(lim)) {
        eco_errorf(err, -EINVAL,
                   "limits_w must be an object of GPU index to watts or "
                   "\"default\" ({\"0\": 150, \"3\": 200})");
        snprintf(field, cap, "limits_w");
        return -EINVAL;
    }
    if ((bad = lease_fields(b, err))) {
        snprintf(field, cap, "%s", bad);
        return -EINVAL;
    }
    for (unsigned g = 0; g < d->n_gpus; g++)
        w[g] = NAN;
    json_object_foreach((json_t *)lim, key, val)
    {
        long g = gpu_key(key, d->n_gpus);
        struct eco_power_range pr;
        snprintf(field, cap, "limits_w.%.32s", key);
        if (g < 0) {
            return eco_errorf(err, -EINVAL, "%s: no GPU '%.32s' on this server (0..%d)", field, key,
                              (int)d->n_gpus - 1);
        }
        int rc = eco_platform_power_range(d->platform, (unsigned)g, &pr, err);
        if (rc < 0)
            return rc == -EINVAL ? -EIO : rc; /* the platform's fault, not the body's */
        if (check_watts(val, &pr, field, &w[g], err))
            return -EINVAL;
    }
    field[0] = '\0';
    return 0;
}

/* Checked (nothing applied on error), then the lease first, as powerd renews it before the
 * limits (a node in fallback ends it before it takes them), then each GPU's limit. */
static enum MHD_Result set_limits(struct ecod *d, struct MHD_Connection *c, const json_t *b)
{
    double w[ECO_GPUSEL_MAX_GPUS];
    char field[48];
    struct eco_error err = {{0}};
    int rc = ecod__api_node_check_limits(d, b, w, field, sizeof field, &err);
    if (rc == -EINVAL)
        return eco_http_fail(c, 400, field, "%s", err.msg);
    if (rc < 0)
        return eco_http_fail(c, 500, NULL, "%s", err.msg);
    lease_apply(d, b);
    json_t *set = json_object();
    struct eco_error first = {{0}};
    for (unsigned g = 0; g < d->n_gpus; g++) {
        char k[12];
        if (isnan(w[g]))
            continue;
        if (apply_limit(d, g, w[g], &err) < 0) {
            if (!first.msg[0]) /* the others are still set: one GPU's refusal is not theirs */
                eco_errorf(&first, -EIO, "GPU %u: %.180s", g, err.msg);
            continue;
        }
        snprintf(k, sizeof k, "%u", g);
        json_object_set_new(set, k, json_real(w[g]));
    }
    if (first.msg[0]) {
        json_decref(set);
        return eco_http_fail(c, 500, NULL, "%s", first.msg);
    }
    return eco_http_reply(c, 200,
                          json_pack("{s:o,s:o}", "limits_w", set, "fallback", fallback_json(d)));
}

/* ---- POST /v1/slurm/jobs ------------------------------------------------------------------ */

const char *ecod__api_node_check_register(struct ecod *d, const json_t *b, json_int_t *job,
                                          uid_t *uid, gid_t *gid, uint32_t *gpus, uint32_t *n,
                                          const json_t **cap, struct eco_error *err)
{
    static const char *const known[] = {"job_id", "uid", "gid", "gpus", "power_cap", NULL};
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)b, key, val)
    {
        size_t k = 0;
        while (known[k] && strcmp(known[k], key))
            k++;
        if (!known[k]) {
            eco_errorf(err, -EINVAL, "unknown field '%.64s'", key);
            return key[0] ? key : "body";
        }
    }
    const json_t *j = json_object_get(b, "job_id"), *u = json_object_get(b, "uid");
    const json_t *g = json_object_get(b, "gid"), *a = json_object_get(b, "gpus");
    if (!json_is_integer(j) || (*job = json_integer_value(j)) <= 0) {
        eco_errorf(err, -EINVAL, "job_id must be a Slurm job id (integer > 0)");
        return "job_id";
    }
    if (u && (!json_is_integer(u) || json_integer_value(u) < 0 ||
              json_integer_value(u) > (json_int_t)UINT32_MAX - 1)) {
        eco_errorf(err, -EINVAL, "uid must be an integer >= 0");
        return "uid";
    }
    if (g && (!json_is_integer(g) || json_integer_value(g) < 0 ||
              json_integer_value(g) > (json_int_t)UINT32_MAX - 1)) {
        eco_errorf(err, -EINVAL, "gid must be an integer >= 0");
        return "gid";
    }
    *uid = u ? (uid_t)json_integer_value(u) : 0;
    *gid = g ? (gid_t)json_integer_value(g) : 0;
    *n = 0;
    if (!json_is_array(a) || json_array_size(a) > ECO_GPUSEL_MAX_GPUS) {
        eco_errorf(err, -EINVAL, "gpus must be an array of GPU indices of this server (0..%d)",
                   (int)d->n_gpus - 1);
        return "gpus";
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *x = json_array_get(a, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) >= (json_int_t)d->n_gpus) {
            eco_errorf(err, -EINVAL, "gpus[%zu] is not a GPU of this server (0..%d)", i,
                       (int)d->n_gpus - 1);
            return "gpus";
        }
        gpus[(*n)++] = (uint32_t)json_integer_value(x);
    }
    *cap = json_object_get(b, "power_cap");
    if (*cap && !json_is_null(*cap) && !json_is_number(*cap) &&
        !(json_is_string(*cap) && !strcmp(json_string_value(*cap), "auto"))) {
        eco_errorf(err, -EINVAL, "power_cap must be a number of watts, \"auto\" or null");
        return "power_cap";
    }
    return NULL;
}

/* The limit to apply for the requested cap: watts as asked (checked against the GPUs'
 * ranges), "auto" chosen by the daemon's model, or 0 (none). */
static const char *resolve_cap(struct ecod *d, const json_t *v, const uint32_t *gpus, uint32_t n,
                               double *cap_w, struct eco_error *err)
{
    *cap_w = 0;
    if (!v || json_is_null(v) || n == 0)
        return NULL;
    if (json_is_string(v)) {
        struct eco_error why = {{0}};
        if (ecod__sched_auto_cap(d, gpus[0], cap_w, &why) < 0) {
            ECO_LOG(ECO_LOG_WARN, "slurm", "power_cap auto: %s; no cap", why.msg);
            *cap_w = 0;
        }
        return NULL;
    }
    *cap_w = json_number_value(v);
    for (uint32_t i = 0; i < n; i++) {
        struct eco_power_range pr;
        if (eco_platform_power_range(d->platform, gpus[i], &pr, NULL) == 0 &&
            (!isfinite(*cap_w) || *cap_w < pr.min_w || *cap_w > pr.max_w)) {
            eco_errorf(err, -EINVAL, "power_cap %g W is outside GPU %u's range %g..%g W", *cap_w,
                       gpus[i], pr.min_w, pr.max_w);
            return "power_cap";
        }
    }
    return NULL;
}

/* The limit each of the GPUs must have with the Slurm job registered: the lowest cap of all the
 * jobs on it (null: none capped, the limit stays), for the plugin to set in the prolog. */
static json_t *gpu_limits_json(const struct ecod *d, const uint32_t *gpus, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++) {
        double w = ecod__caps_gpu(d, gpus[i]);
        json_array_append_new(a, w > 0 ? json_real(w) : json_null());
    }
    return a;
}

static enum MHD_Result slurm_register(struct ecod *d, struct MHD_Connection *c, const json_t *b)
{
    struct eco_error why = {{0}};
    char name[48], argv[64], gl[ECO_GPUSEL_MAX_GPUS * 4 + 1] = "";
    struct eco_error err = {{0}};
    json_int_t job = 0;
    uid_t uid;
    gid_t gid;
    uint32_t gpus[ECO_GPUSEL_MAX_GPUS], n = 0;
    const json_t *capv = NULL;
    double cap_w = 0;
    int64_t id = 0;
    const char *bad = ecod__api_node_check_register(d, b, &job, &uid, &gid, gpus, &n, &capv, &why);
    if (!bad)
        bad = resolve_cap(d, capv, gpus, n, &cap_w, &why);
    if (bad)
        return eco_http_fail(c, 400, bad, "%s", why.msg);
    const struct ecod_run *old = slurm_run(d, job);
    if (old) /* the prolog ran again (requeue): the same record */
        return eco_http_reply(c, 200,
                              json_pack("{s:I,s:I,s:o,s:o}", "job_id", job, "id",
                                        (json_int_t)old->id, "power_cap_w",
                                        cap_w > 0 ? json_real(cap_w) : json_null(), "gpu_limits_w",
                                        gpu_limits_json(d, old->gpus, old->n_gpus)));
    for (uint32_t i = 0, off = 0; i < n && off < sizeof gl; i++)
        off += (uint32_t)snprintf(gl + off, sizeof gl - off, "%s%u", i ? "," : "", gpus[i]);
    snprintf(name, sizeof name, "slurm-%" JSON_INTEGER_FORMAT, job);
    snprintf(argv, sizeof argv, "[\"slurm-job\",\"%" JSON_INTEGER_FORMAT "\"]", job);
    double now = eco_wall_s();
    struct eco_store_job sj = {.uid = uid,
                               .gid = gid,
                               .name = name,
                               .cwd = "/",
                               .argv_json = argv,
                               .gpus = n,
                               .power_cap_w = cap_w,
                               .submit_s = now};
    if (eco_store_insert(d->store, &sj, &id, &err) < 0 ||
        eco_store_start(d->store, id, 0, 0, n ? gl : NULL, now, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "slurm", "job %" JSON_INTEGER_FORMAT ": %s", job, err.msg);
        if (id > 0)
            eco_store_cancel(d->store, id, now, "could not record the Slurm job", NULL, NULL);
        return eco_http_fail(c, 500, NULL, "%s", err.msg);
    }
    if (ecod__sched_add_slurm(d, id, job, gpus, n, cap_w, now, eco_mono_s()) < 0) {
        eco_store_finish(d->store, id, ECO_STORE_FAILED, -1, now, 0, NULL);
        return eco_http_fail(c, 500, NULL, "out of memory");
    }
    ECO_LOG(ECO_LOG_INFO, "slurm",
            "Slurm job %" JSON_INTEGER_FORMAT " (uid %u): GPUs [%s], job %" PRId64 ", cap %.0f W",
            job, (unsigned)uid, gl, id, cap_w);
    return eco_http_reply(c, 201,
                          json_pack("{s:I,s:I,s:o,s:o}", "job_id", job, "id", (json_int_t)id,
                                    "power_cap_w", cap_w > 0 ? json_real(cap_w) : json_null(),
                                    "gpu_limits_w", gpu_limits_json(d, gpus, n)));
}

static enum MHD_Result slurm_end(struct ecod *d, struct MHD_Connection *c, const char *js)
{
    char *end;
    long long job = strtoll(js, &end, 10);
    double energy = 0;
    if (!*js || *end || job <= 0)
        return eco_http_fail(c, 404, "job_id", "no Slurm job '%.32s'", js);
    const struct ecod_run *r = slurm_run(d, job);
    if (!r)
        return eco_http_fail(c, 404, "job_id", "Slurm job %lld is not registered here", job);
    int64_t id = r->id;
    json_t *gpus = gpus_json(r->gpus, r->n_gpus);
    struct eco_store_job sj = {0};
    double start = 0;
    if (eco_store_get(d->store, id, &sj, NULL) == 0)
        start = sj.start_s;
    eco_store_job_fini(&sj);
    /* sets each GPU to the lowest cap of the jobs still on it, or the default */
    double now = eco_wall_s();
    ecod__sched_end_slurm(d, id, now, eco_mono_s(), &energy);
    ECO_LOG(ECO_LOG_INFO, "slurm", "Slurm job %lld ended: %.1f J", job, energy);
    return eco_http_reply(c, 200,
                          json_pack("{s:I,s:I,s:o,s:f,s:f,s:b}", "job_id", (json_int_t)job, "id",
                                    (json_int_t)id, "gpus", gpus, "energy_j", energy, "elapsed_s",
                                    start > 0 ? now - start : 0.0, "limits_restored", 1));
}

/* ---- routing ----------------------------------------------------------------------------- */

json_t *ecod__api_node_body(const char *body, size_t len, struct eco_error *err)
{
    json_error_t jerr;
    json_t *b = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr) : json_object();
    if (!json_is_object(b)) {
        eco_errorf(err, -EINVAL, "the body must be a JSON object%s%s", b ? "" : ": ",
                   b ? "" : jerr.text);
        json_decref(b);
        return NULL;
    }
    return b;
}

bool ecod__api_node_route(struct ecod *d, struct MHD_Connection *c, const char *url,
                          const char *method, const char *body, size_t len, uid_t peer_uid,
                          bool admin, int *mhd_ret)
{
    bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    json_t *b = NULL;
    const char *tail = NULL;
    enum MHD_Result ret;
    if (!strcmp(url, "/v1/node")) {
        ret = get ? node(d, c) : eco_http_fail(c, 405, NULL, "use GET on %s", url);
        goto out;
    }
    bool limit =
        !strncmp(url, "/v1/gpus/", 9) && (tail = strchr(url + 9, '/')) && !strcmp(tail, "/limit");
    bool slurm = !strncmp(url, "/v1/slurm/jobs", 14);
    bool budget = !strcmp(url, "/v1/node/budget"), limits = !strcmp(url, "/v1/node/limits");
    if (!limit && !slurm && !budget && !limits)
        return false;
    if (!post) {
        ret = eco_http_fail(c, 405, NULL, "use POST on %s", url);
        goto out;
    }
    if (!admin) {
        ret = eco_http_fail(c, 403, NULL,
                            "only root (or the cluster listener's cluster_admin_user) may use %s "
                            "(caller uid %u)",
                            url, (unsigned)peer_uid);
        goto out;
    }
    struct eco_error berr = {{0}};
    if (!(b = ecod__api_node_body(body, len, &berr))) {
        ret = eco_http_fail(c, 400, "body", "%s", berr.msg);
        goto out;
    }
    if (budget) {
        ret = set_budget(d, c, b);
    } else if (limits) {
        ret = set_limits(d, c, b);
    } else if (limit) {
        char gs[16];
        size_t n = (size_t)(tail - (url + 9));
        snprintf(gs, sizeof gs, "%.*s", (int)(n < sizeof gs ? n : sizeof gs - 1), url + 9);
        ret = set_limit(d, c, gs, b);
    } else if (!strcmp(url, "/v1/slurm/jobs")) {
        ret = slurm_register(d, c, b);
    } else {
        char js[32];
        const char *s = url + 14;
        const char *slash = *s == '/' ? strchr(s + 1, '/') : NULL;
        if (!slash || strcmp(slash, "/end") || (size_t)(slash - s - 1) >= sizeof js) {
            ret = eco_http_fail(c, 404, NULL, "no such path: %.200s", url);
            goto out;
        }
        snprintf(js, sizeof js, "%.*s", (int)(slash - s - 1), s + 1);
        ret = slurm_end(d, c, js);
    }
out:
    json_decref(b);
    *mhd_ret = (int)ret;
    return true;
}
