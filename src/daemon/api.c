/* SPDX-License-Identifier: MIT */
/* ecoschedd's HTTP/JSON API over its unix socket (libmicrohttpd, driven by the daemon's event
 * loop; GET /v1/jobs pages built by the listing worker, lister.c): versioned routes, every
 * submit field validated, the caller's identity taken from the socket's peer credentials.
 * The routes are documented in docs/http-api.md. */
#define _GNU_SOURCE /* SO_PEERCRED, struct ucred, setgroups */
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include "util/grid_signal.h"
#include "util/http_server.h"
#include "util/munge_auth.h"
#include "api.h"
#include "ecod.h"
#include "lister.h"
#include "metrics.h"
#include "page.h"
#include "queue.h"
#include "sched.h"
#include "tcp.h"

#ifndef ECO_VERSION
#define ECO_VERSION "dev"
#endif

/* Bounds on submit fields. 4096 arguments and 128-byte names: generous for any training
 * command while keeping a listing readable; the body limit bounds the total anyway. */
#define MAX_ARGS 4096
#define MAX_NAME 128
/* Most bytes of a job's output one logs request returns: 1 MiB keeps the one-threaded
 * daemon's read short; a client asks again from the next offset for more. */
#define MAX_LOG_CHUNK (1u << 20)
/* GET /v1/jobs pages: 100 jobs by default (a screen of `ecosched ls`, about 45 KB of JSON),
 * at most 1,000 (about 0.45 MB, ~20 ms of the listing worker on this VM: the listing of all
 * 50,000 jobs of a busy server took 1.1 s and 22 MB and held every submit behind it). */
#define LIST_DEFAULT 100
#define LIST_MAX 1000

/* One request: its body as it arrives; for GET /v1/jobs handed to the listing worker, the
 * listing (and its answer once the worker resumes the connection). */
struct req {
    struct eco_http_body body; /* at most ECOD_MAX_BODY bytes */
    bool listed;               /* list holds the answer to queue when the handler runs again */
    struct ecod_list_req list;
    bool auth_sent; /* the cluster listener: auth went to the decoding worker, now answered */
    struct ecod_cluster_req auth;
};

/* Who is calling: the peer of the unix socket, the token file's owner, or the MUNGE
 * credential's uid. admin: may use the node's POST routes (root, or cluster_admin_user). */
struct peer {
    uid_t uid;
    gid_t gid;
    bool admin;
};

static int peer_of(struct MHD_Connection *c, struct peer *p)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
        return -errno ? -errno : -EIO;
    p->uid = cr.uid;
    p->gid = cr.gid;
    return 0;
}

/* "0,2" as a JSON array of integers. */
static json_t *gpus_array(const char *s)
{
    json_t *a = json_array();
    while (a && s && *s) {
        char *end;
        json_array_append_new(a, json_integer((json_int_t)strtol(s, &end, 10)));
        if (end == s)
            break;
        s = *end == ',' ? end + 1 : end;
    }
    return a;
}

/* A job as the API shows it. Reads only j and logs_dir (the daemon's logs directory), so the
 * listing worker calls it too. */
static json_t *job_json(const char *logs_dir, const struct eco_store_job *j, bool with_env)
{
    char out[4200], err[4200];
    const char *reason = j->reason;
    if (!reason && j->state == ECO_STORE_DONE && j->exit_status < 0)
        reason = "adopted; exit status unknown"; /* the store has no reason on finish */
    ecod__log_path_in(logs_dir, j->id, "out", out, sizeof out);
    ecod__log_path_in(logs_dir, j->id, "err", err, sizeof err);
    json_t *o =
        json_pack("{s:I,s:s,s:I,s:I,s:o,s:s,s:i,s:f,s:b,s:f,s:f,s:s,s:s}", "id", (json_int_t)j->id,
                  "state", eco_store_state_name(j->state), "uid", (json_int_t)j->uid, "gid",
                  (json_int_t)j->gid, "argv", json_loads(j->argv_json, 0, NULL), "cwd", j->cwd,
                  "gpus", (int)j->gpus, "gpu_mem_gb", j->gpu_mem_gb, "share", (int)j->share,
                  "submit_s", j->submit_s, "energy_j", j->energy_j, "stdout", out, "stderr", err);
    if (!o)
        return NULL;
    json_object_set_new(o, "name", j->name ? json_string(j->name) : json_null());
    /* the owner's name on this server (null: a uid without a passwd entry), for the page and
     * the CLI, which show names, not uids */
    char user[256];
    json_object_set_new(o, "user",
                        ecod__user_name((uid_t)j->uid, user, sizeof user) ? json_string(user)
                                                                          : json_null());
    json_object_set_new(o, "power_cap",
                        j->power_cap_w > 0   ? json_real(j->power_cap_w)
                        : j->power_cap_w < 0 ? json_string("auto")
                                             : json_null());
    json_object_set_new(o, "start_s", j->start_s > 0 ? json_real(j->start_s) : json_null());
    json_object_set_new(o, "deadline_s",
                        j->deadline_s > 0 ? json_real(j->deadline_s) : json_null());
    json_object_set_new(o, "deadline_missed",
                        j->deadline_s <= 0 ? json_null()
                        : j->end_s > 0     ? json_boolean(j->end_s > j->deadline_s)
                                           : json_boolean(eco_wall_s() > j->deadline_s));
    json_object_set_new(o, "end_s", j->end_s > 0 ? json_real(j->end_s) : json_null());
    json_object_set_new(o, "assigned_gpus", gpus_array(j->assigned_gpus));
    json_object_set_new(o, "pid", j->pid > 0 ? json_integer(j->pid) : json_null());
    json_object_set_new(o, "exit_status",
                        j->exit_status >= 0 ? json_integer(j->exit_status) : json_null());
    json_object_set_new(o, "reason", reason ? json_string(reason) : json_null());
    json_object_set_new(o, "energy_basis",
                        j->energy_basis[0] ? json_string(j->energy_basis) : json_null());
    json_object_set_new(o, "max_delay_s",
                        j->max_delay_s > 0 ? json_real(j->max_delay_s) : json_null());
    json_object_set_new(o, "not_before_s",
                        j->not_before_s > 0 ? json_real(j->not_before_s) : json_null());
    /* carbon and cost of its energy so far: null without a signal; *_partial: part of its run
     * lay outside the signal, so the figure counts only the covered part */
    json_object_set_new(o, "carbon_kg", j->has_carbon ? json_real(j->carbon_kg) : json_null());
    json_object_set_new(o, "carbon_partial",
                        j->has_carbon ? json_boolean(j->carbon_partial) : json_null());
    json_object_set_new(o, "cost", j->has_cost ? json_real(j->cost) : json_null());
    json_object_set_new(o, "cost_partial",
                        j->has_cost ? json_boolean(j->cost_partial) : json_null());
    json_object_set_new(o, "currency",
                        j->has_cost && j->currency[0] ? json_string(j->currency) : json_null());
    if (with_env)
        json_object_set_new(o, "env", json_loads(j->env_json ? j->env_json : "{}", 0, NULL));
    return o;
}

/* ---- POST /v1/jobs ---------------------------------------------------------------------- */

/* Checks a string has no NUL inside (JSON allows \u0000; C strings and exec do not). */
static bool plain_string(const json_t *v)
{
    return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

static const char *check_argv(const json_t *v, struct eco_error *err)
{
    size_t n = json_array_size(v);
    if (!json_is_array(v) || n == 0 || n > MAX_ARGS) {
        eco_errorf(err, -EINVAL, "argv must be an array of 1 to %d strings", MAX_ARGS);
        return "argv";
    }
    for (size_t i = 0; i < n; i++)
        if (!plain_string(json_array_get(v, i))) {
            eco_errorf(err, -EINVAL, "argv[%zu] is not a string (or holds a NUL)", i);
            return "argv";
        }
    if (!*json_string_value(json_array_get(v, 0))) {
        eco_errorf(err, -EINVAL, "argv[0] is empty");
        return "argv";
    }
    return NULL;
}

static const char *check_env(const json_t *v, struct eco_error *err)
{
    const char *key;
    size_t klen;
    json_t *val;
    if (!json_is_object(v)) {
        eco_errorf(err, -EINVAL, "env must be an object of strings");
        return "env";
    }
    json_object_keylen_foreach((json_t *)v, key, klen, val)
    {
        if (!*key || strlen(key) != klen || strchr(key, '=') || !plain_string(val)) {
            eco_errorf(err, -EINVAL,
                       "env entry '%.64s': the name must be non-empty without '=' and "
                       "the value a string without NUL",
                       key);
            return "env";
        }
    }
    return NULL;
}

/* Supplementary groups a root daemon has, restored after stat_as; fixed because a daemon's
 * groups are a handful (root's: none or one), and more than 64 is refused rather than cut. */
#define MAX_OWN_GROUPS 64

/* Puts back the daemon's filesystem identity. Failing here would leave a root daemon acting
 * as a user for every later file access, so it stops instead. */
static void restore_ids(uid_t fsuid, gid_t fsgid, const gid_t *groups, int n)
{
    setfsuid(fsuid);
    setfsgid(fsgid);
    if (setgroups((size_t)n, groups) < 0 || (uid_t)setfsuid((uid_t)-1) != fsuid ||
        (gid_t)setfsgid((gid_t)-1) != fsgid) {
        ECO_LOG(ECO_LOG_ERR, "api", "cannot restore the daemon's credentials: %s", strerror(errno));
        abort();
    }
}

/* stat(path) with the file-system identity the job will have (uid, gid, groups {gid}; the
 * runner's switch), so a user learns of a path only what he could learn himself. It runs on
 * the event loop's thread only: setfsuid/setfsgid (per thread) and setgroups around the call,
 * restored at once; a few system calls, no fork. A daemon that is not root, or a root caller: plain
 * stat (the job runs as the daemon's user, or root). 0 or -errno. */
static int stat_as(const char *path, uid_t uid, gid_t gid, struct stat *st)
{
    gid_t groups[MAX_OWN_GROUPS];
    int rc = 0;
    if (geteuid() != 0 || uid == 0)
        return stat(path, st) == 0 ? 0 : -errno;
    int n = getgroups(MAX_OWN_GROUPS, groups);
    if (n < 0 || setgroups(1, &gid) < 0)
        return n < 0 ? -EOVERFLOW : -errno;
    gid_t old_g = (gid_t)setfsgid(gid);
    uid_t old_u = (uid_t)setfsuid(uid);
    if (stat(path, st) < 0)
        rc = -errno;
    restore_ids(old_u, old_g, groups, n);
    return rc;
}

/* cwd: an absolute path that is a directory for the submitting user (looked up as him). One
 * answer for every failure, so that nothing is said of a path the user cannot reach. */
static const char *check_cwd(const json_t *v, uid_t uid, gid_t gid, struct eco_error *err)
{
    struct stat st;
    const char *s = json_string_value(v);
    if (!plain_string(v) || s[0] != '/' || strlen(s) >= PATH_MAX) {
        eco_errorf(err, -EINVAL, "cwd must be an absolute path");
        return "cwd";
    }
    if (stat_as(s, uid, gid, &st) < 0 || !S_ISDIR(st.st_mode)) {
        eco_errorf(err, -EINVAL, "cwd '%.200s' is not a directory uid %u can reach on this server",
                   s, (unsigned)uid);
        return "cwd";
    }
    return NULL;
}

/* Power cap: a number of watts within every GPU's range, "auto", or null (none). */
static const char *check_cap(struct ecod *d, const json_t *v, unsigned gpus, double *cap_w,
                             struct eco_error *err)
{
    double lo = 0, hi = INFINITY;
    *cap_w = ECO_STORE_CAP_NONE;
    if (!v || json_is_null(v))
        return NULL;
    if (json_is_string(v) && !strcmp(json_string_value(v), "auto")) {
        *cap_w = ECO_STORE_CAP_AUTO;
    } else if (json_is_number(v)) {
        *cap_w = json_number_value(v);
        for (unsigned g = 0; g < d->n_gpus; g++) {
            struct eco_power_range pr;
            if (eco_platform_power_range(d->platform, g, &pr, NULL) == 0) {
                lo = fmax(lo, pr.min_w);
                hi = fmin(hi, pr.max_w);
            }
        }
        if (!isfinite(*cap_w) || *cap_w <= 0 || *cap_w < lo || *cap_w > hi) {
            eco_errorf(err, -EINVAL, "power_cap %g W is outside the GPUs' range %g..%g W", *cap_w,
                       lo, hi);
            return "power_cap";
        }
    } else {
        eco_errorf(err, -EINVAL, "power_cap must be a number of watts or \"auto\"");
        return "power_cap";
    }
    if (gpus == 0) {
        eco_errorf(err, -EINVAL, "power_cap needs a job with GPUs");
        return "power_cap";
    }
    return NULL;
}

static const char *check_gpus(struct ecod *d, const json_t *obj, struct eco_store_job *j,
                              struct eco_error *err)
{
    const json_t *g = json_object_get(obj, "gpus"), *m = json_object_get(obj, "gpu_mem_gb");
    const json_t *s = json_object_get(obj, "share");
    j->gpus = d->n_gpus > 0 ? 1 : 0; /* default: one GPU where there are GPUs */
    if (g && (!json_is_integer(g) || json_integer_value(g) < 0 ||
              json_integer_value(g) > (json_int_t)d->n_gpus)) {
        eco_errorf(err, -EINVAL, "gpus must be an integer 0..%u (GPUs of this server)", d->n_gpus);
        return "gpus";
    }
    if (g)
        j->gpus = (unsigned)json_integer_value(g);
    if (s && !json_is_boolean(s)) {
        eco_errorf(err, -EINVAL, "share must be true or false");
        return "share";
    }
    j->share = s && json_is_true(s);
    if (m && (!json_is_number(m) || !isfinite(json_number_value(m)) || json_number_value(m) < 0 ||
              json_number_value(m) > 1e6)) {
        eco_errorf(err, -EINVAL, "gpu_mem_gb must be a number of GB >= 0");
        return "gpu_mem_gb";
    }
    j->gpu_mem_gb = m ? json_number_value(m) : 0;
    uint32_t out[ECO_GPUSEL_MAX_GPUS];
    struct eco_gpu_request req = {.job_id = 0,
                                  .n_gpus = j->gpus,
                                  .mem_b = (uint64_t)(j->gpu_mem_gb * (double)(1ull << 30)),
                                  .share = j->share};
    if (d->sel && j->gpus > 0 && eco_gpusel_choose(d->sel, eco_mono_s(), &req, out) == -EOVERFLOW) {
        eco_errorf(err, -EINVAL, "no %u GPUs of this server have %g GB of memory each", j->gpus,
                   j->gpu_mem_gb);
        return "gpu_mem_gb";
    }
    return NULL;
}

/* max_delay (seconds of slack) and not_before (a Unix time) of a submit body. */
static const char *check_deferral(const json_t *obj, struct eco_store_job *job,
                                  struct eco_error *err)
{
    const json_t *md = json_object_get(obj, "max_delay"), *nb = json_object_get(obj, "not_before");
    if (md && !json_is_null(md)) {
        double x = json_is_number(md) ? json_number_value(md) : NAN;
        if (eco_check_max_delay("max_delay", x, err) < 0) /* ECO_MAX_DELAY_S, as powerd */
            return "max_delay";
        job->max_delay_s = x;
    }
    if (nb && !json_is_null(nb)) {
        double t = json_is_number(nb) ? json_number_value(nb) : NAN;
        if (!(t >= 1e9 && t < 1e10)) { /* as deadline: a duration sent by mistake is refused */
            eco_errorf(err, -EINVAL, "not_before must be a Unix time in seconds (e.g. %.0f)",
                       eco_wall_s() + 3600);
            return "not_before";
        }
        if (job->deadline_s > 0 && t >= job->deadline_s) {
            eco_errorf(err, -EINVAL, "not_before (%.0f) is not before the deadline (%.0f)", t,
                       job->deadline_s);
            return "not_before";
        }
        job->not_before_s = t;
    }
    return NULL;
}

/* Checks every field of a submit body; NULL and *s filled, or the field at fault and err. */
static const char *check_submit(struct ecod *d, const json_t *obj, struct ecod_submit *s,
                                struct eco_error *err)
{
    static const char *const known[] = {"argv",       "env",       "cwd",        "gpus",
                                        "gpu_mem_gb", "share",     "power_cap",  "name",
                                        "deadline",   "max_delay", "not_before", NULL};
    const char *key, *bad;
    size_t klen;
    json_t *val;
    json_object_keylen_foreach((json_t *)obj, key, klen, val)
    {
        size_t k = 0;
        while (known[k] && strcmp(known[k], key))
            k++;
        if (strlen(key) != klen) {
            eco_errorf(err, -EINVAL, "a field name holds a NUL");
            return "body";
        }
        if (!known[k]) {
            eco_errorf(err, -EINVAL, "unknown field '%.64s'", key);
            return key[0] ? key : "body";
        }
    }
    const json_t *argv = json_object_get(obj, "argv"), *env = json_object_get(obj, "env");
    const json_t *cwd = json_object_get(obj, "cwd"), *name = json_object_get(obj, "name");
    if ((bad = check_argv(argv, err)))
        return bad;
    if (env && (bad = check_env(env, err)))
        return bad;
    if (!cwd) {
        eco_errorf(err, -EINVAL, "cwd is required");
        return "cwd";
    }
    if ((bad = check_cwd(cwd, s->job.uid, s->job.gid, err)) ||
        (bad = check_gpus(d, obj, &s->job, err)))
        return bad;
    if (name && !json_is_null(name)) {
        const char *n = json_string_value(name);
        bool ok = plain_string(name) && *n && strlen(n) <= MAX_NAME;
        for (const char *p = n; ok && *p; p++)
            ok = (unsigned char)*p >= 0x20 && *p != 0x7f;
        if (!ok) {
            eco_errorf(err, -EINVAL, "name must be 1..%d printable characters", MAX_NAME);
            return "name";
        }
        s->job.name = n;
    }
    if ((bad = check_cap(d, json_object_get(obj, "power_cap"), s->job.gpus, &s->job.power_cap_w,
                         err)))
        return bad;
    const json_t *dl = json_object_get(obj, "deadline");
    if (dl && !json_is_null(dl)) {
        double t = json_is_number(dl) ? json_number_value(dl) : NAN;
        /* an absolute Unix time: after 2001 and before 2286, so that a duration sent by
         * mistake (e.g. 3600) is refused */
        if (!(t >= 1e9 && t < 1e10)) {
            eco_errorf(err, -EINVAL, "deadline must be a Unix time in seconds (e.g. %.0f)",
                       eco_wall_s() + 3600);
            return "deadline";
        }
        s->job.deadline_s = t;
    }
    if ((bad = check_deferral(obj, &s->job, err)))
        return bad;
    s->job.cwd = json_string_value(cwd);
    s->argv_json = json_dumps(argv, JSON_COMPACT);
    s->env_json = env ? json_dumps(env, JSON_COMPACT) : NULL;
    s->job.argv_json = s->argv_json;
    s->job.env_json = s->env_json;
    if (!s->argv_json || (env && !s->env_json)) {
        eco_errorf(err, -ENOMEM, "out of memory");
        return "";
    }
    return NULL;
}

const char *ecod__api_submit_parse(struct ecod *d, const char *body, size_t len, uid_t uid,
                                   gid_t gid, struct ecod_submit *s, struct eco_error *err)
{
    json_error_t jerr;
    *s = (struct ecod_submit){.job = {.uid = uid, .gid = gid}};
    s->obj = len ? json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr) : NULL;
    if (!json_is_object(s->obj)) {
        eco_errorf(err, -EINVAL, "the body must be a JSON object%s%s", s->obj ? "" : ": ",
                   s->obj ? "" : (len ? jerr.text : "empty body"));
        return "body";
    }
    return check_submit(d, s->obj, s, err);
}

void ecod__api_submit_fini(struct ecod_submit *s)
{
    json_decref(s->obj);
    free(s->argv_json);
    free(s->env_json);
    *s = (struct ecod_submit){.obj = NULL};
}

static enum MHD_Result submit(struct ecod *d, struct MHD_Connection *c, const struct peer *p,
                              const struct req *rq)
{
    struct eco_error why = {{0}};
    struct ecod_submit s;
    struct eco_error err = {{0}};
    enum MHD_Result ret;
    int64_t id = 0;
    const char *bad =
        ecod__api_submit_parse(d, rq->body.data, rq->body.len, p->uid, p->gid, &s, &why);
    if (bad) {
        ret = eco_http_fail(c, *bad ? 400 : 500, *bad ? bad : NULL, "%s", why.msg);
        goto out;
    }
    s.job.submit_s = eco_wall_s();
    int rc = eco_store_insert(d->store, &s.job, &id, &err);
    if (rc < 0) {
        ECO_LOG(ECO_LOG_ERR, "api", "submit: %s", err.msg);
        ret = eco_http_fail(c, rc == -EINVAL ? 400 : 500, NULL, "%s", err.msg);
        goto out;
    }
    s.job.id = id;
    s.job.state = ECO_STORE_QUEUED;
    if (ecod__defer_enqueue(d, &s.job, s.job.submit_s) < 0) /* stored: the next start queues it */
        ECO_LOG(ECO_LOG_ERR, "api", "job %" PRId64 ": queue: out of memory", id);
    ECO_LOG(ECO_LOG_INFO, "api", "job %" PRId64 " submitted by uid %u", id, (unsigned)p->uid);
    d->want_sched = true;
    ret = eco_http_reply(c, 201, json_pack("{s:I,s:s}", "id", (json_int_t)id, "state", "queued"));
out:
    ecod__api_submit_fini(&s);
    return ret;
}

/* ---- jobs ------------------------------------------------------------------------------- */

/* An optional integer query parameter in lo..hi into *v; false when present and not one. */
static bool query_int(struct MHD_Connection *c, const char *name, long long lo, long long hi,
                      long long *v)
{
    const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    char *end = NULL;
    if (!s)
        return true;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi)
        return false;
    *v = x;
    return true;
}

/* Seconds a client told 503 waits before listing again: a page takes ~1 ms, so the queue has
 * long drained by then. */
#define LIST_RETRY_S "1"

/* The body of obj (consumed) as ecod__reply sends it: compact JSON and a newline. */
static void page_body(json_t *obj, struct ecod_list_req *r)
{
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_decref(obj);
    r->body = text;
    r->len = text ? strlen(text) + 1 : 0;
    if (text)
        text[r->len - 1] = '\n'; /* replaces the NUL */
}

/* The pruned jobs' totals (store.h, eco_store_pruned): {"jobs", "energy_j", "carbon_kg",
 * "cost", "gpu_s", "last_end_s" (null when none was pruned), "users": [{"uid", "jobs",
 * "started", "with_carbon", "energy_j", "gpu_s", "carbon_kg", "cost", "last_end_s"}]}; NULL on
 * a store error (logged) or out of memory. */
static json_t *pruned_json(struct eco_store *s)
{
    struct eco_store_pruned *rows = NULL;
    struct eco_error err = {{0}};
    size_t n = 0;
    if (eco_store_pruned(s, &rows, &n, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "api", "pruned totals: %s", err.msg);
        return NULL;
    }
    json_t *users = json_array();
    json_int_t jobs = 0;
    double e = 0, c = 0, cost = 0, gpu_s = 0, last = 0;
    for (size_t i = 0; users && i < n; i++) {
        const struct eco_store_pruned *p = &rows[i];
        jobs += (json_int_t)p->jobs;
        e += p->energy_j, c += p->carbon_kg, cost += p->cost, gpu_s += p->gpu_s;
        last = p->last_end_s > last ? p->last_end_s : last;
        json_array_append_new(users, json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f}", "uid",
                                               (json_int_t)p->uid, "jobs", (json_int_t)p->jobs,
                                               "started", (json_int_t)p->started, "with_carbon",
                                               (json_int_t)p->with_carbon, "energy_j", p->energy_j,
                                               "gpu_s", p->gpu_s, "carbon_kg", p->carbon_kg, "cost",
                                               p->cost, "last_end_s", p->last_end_s));
    }
    free(rows);
    return users ? json_pack("{s:I,s:f,s:f,s:f,s:f,s:o,s:o}", "jobs", jobs, "energy_j", e,
                             "carbon_kg", c, "cost", cost, "gpu_s", gpu_s, "last_end_s",
                             jobs ? json_real(last) : json_null(), "users", users)
                 : NULL;
}

void ecod__api_jobs_page(struct eco_store *s, const char *logs_dir, struct ecod_list_req *r)
{
    struct eco_store_job *jobs = NULL;
    struct eco_error err = {{0}};
    size_t n = 0;
    /* one more than the page: whether a next page exists */
    if (eco_store_list_after(s, r->state, r->after, r->limit + 1, &jobs, &n, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "api", "list jobs: %s", err.msg);
        r->status = 500;
        page_body(json_pack("{s:s}", "error", err.msg), r);
        goto out;
    }
    bool more = n > r->limit;
    size_t shown = more ? r->limit : n;
    json_t *a = json_array();
    for (size_t i = 0; a && i < shown; i++)
        json_array_append_new(a, job_json(logs_dir, &jobs[i], false));
    r->status = 200;
    json_t *page = json_pack("{s:o,s:o}", "jobs", a, "next",
                             more ? json_integer((json_int_t)jobs[shown - 1].id) : json_null());
    /* the first page of the whole listing also says what pruning took out of it, so a sum
     * over the pages (report --accounting daemon:) can still count every job */
    if (page && r->after == 0 && r->state == ECO_STORE_ANY &&
        json_object_set_new(page, "pruned", pruned_json(s)) < 0) {
        json_decref(page); /* a page without it would undercount: none rather */
        r->status = 500;
        page = json_pack("{s:s}", "error", "cannot read the pruned jobs' totals");
    }
    page_body(page, r);
out:
    eco_store_jobs_free(jobs, n);
}

/* Queues the answer ecod__api_jobs_page (or the 503 below) left in rq->list (the body handed
 * to MHD), with a Retry-After header when retry_after is not NULL. */
static enum MHD_Result queue_listing(struct MHD_Connection *c, struct req *rq,
                                     const char *retry_after)
{
    struct ecod_list_req *r = &rq->list;
    rq->listed = false;
    if (!r->body)
        return MHD_NO; /* out of memory: the connection is closed */
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
    if (!resp)
        return MHD_NO; /* r->body is freed with the request */
    r->body = NULL;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    if (retry_after)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
    enum MHD_Result ret = MHD_queue_response(c, r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* GET /v1/jobs?state=S&limit=N&after=ID: a page of jobs in id order, and "next", the `after`
 * of the next page (null on the last one). Every caller sees every job, without its env
 * (as before the worker). The query is checked here; the page is built by the listing worker
 * (lister.c) while this connection is suspended, or here when there is no worker. */
static enum MHD_Result list_jobs(struct ecod *d, struct MHD_Connection *c, struct req *rq)
{
    const char *st = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
    enum eco_store_state state;
    long long limit = LIST_DEFAULT, after = 0;
    if (st && eco_store_state_parse(st, &state) < 0)
        return eco_http_fail(c, 400, "state", "unknown state '%.32s'", st);
    if (!query_int(c, "limit", 1, LIST_MAX, &limit))
        return eco_http_fail(c, 400, "limit",
                             "limit must be an integer 1..%d (default %d; page on "
                             "with after=NEXT)",
                             LIST_MAX, LIST_DEFAULT);
    if (!query_int(c, "after", 0, INT64_MAX, &after))
        return eco_http_fail(c, 400, "after",
                             "after must be a job id >= 0 (the previous page's next)");
    rq->list = (struct ecod_list_req){.conn = c,
                                      .state = st ? (int)state : ECO_STORE_ANY,
                                      .after = after,
                                      .limit = (size_t)limit};
    if (!d->lister) {
        ecod__api_jobs_page(d->store, d->logs_dir, &rq->list);
        return queue_listing(c, rq, NULL);
    }
    if (ecod__lister_submit(d->lister, &rq->list) < 0) {
        ECO_LOG(ECO_LOG_DEBUG, "api", "%d listings waiting: GET /v1/jobs answered 503",
                ECOD_LIST_QUEUE);
        json_t *o =
            json_pack("{s:s}", "error", "too many listings waiting; retry in " LIST_RETRY_S " s");
        rq->list.status = 503;
        page_body(o, &rq->list);
        return queue_listing(c, rq, LIST_RETRY_S);
    }
    rq->listed = true; /* the worker resumes c; MHD then calls on_request again */
    return MHD_YES;
}

/* Fetches job `ids` ("123") for a route; on failure a response is queued and *ret set. */
static int fetch(struct ecod *d, struct MHD_Connection *c, const char *ids, struct eco_store_job *j,
                 enum MHD_Result *ret)
{
    struct eco_error err = {{0}};
    char *end;
    errno = 0;
    long long id = strtoll(ids, &end, 10);
    if (!*ids || *end || errno || id <= 0) {
        *ret = eco_http_fail(c, 404, "id", "no job '%.32s'", ids);
        return -ENOENT;
    }
    int rc = eco_store_get(d->store, id, j, &err);
    if (rc < 0)
        *ret = rc == -ENOENT ? eco_http_fail(c, 404, "id", "no job %lld", id)
                             : eco_http_fail(c, 500, NULL, "%s", err.msg);
    return rc;
}

static enum MHD_Result show_job(struct ecod *d, struct MHD_Connection *c, const struct peer *p,
                                const char *ids)
{
    struct eco_store_job j = {0};
    enum MHD_Result ret;
    if (fetch(d, c, ids, &j, &ret) < 0)
        goto out;
    /* the environment may hold secrets: only its owner and root see it */
    json_t *o = job_json(d->logs_dir, &j, p->uid == 0 || p->uid == j.uid);
    double held = ecod__defer_held_until(d, j.id);
    if (o && j.state == ECO_STORE_QUEUED) { /* a deferred job: until when, by which forecast */
        json_object_set_new(o, "held_until_s", held > 0 ? json_real(held) : json_null());
        json_object_set_new(o, "forecast",
                            json_string(ecod__grid_forecast_name(&d->grid, eco_wall_s())));
    }
    ret = eco_http_reply(c, 200, o);
out:
    eco_store_job_fini(&j);
    return ret;
}

static enum MHD_Result cancel_job(struct ecod *d, struct MHD_Connection *c, const struct peer *p,
                                  const char *ids)
{
    struct eco_store_job j = {0};
    struct eco_error err = {{0}};
    enum eco_store_state prev;
    enum MHD_Result ret;
    char reason[64];
    if (fetch(d, c, ids, &j, &ret) < 0)
        goto out;
    if (p->uid != 0 && p->uid != j.uid) {
        ret = eco_http_fail(c, 403, NULL,
                            "job %" PRId64 " belongs to uid %u; uid %u may not cancel it", j.id,
                            (unsigned)j.uid, (unsigned)p->uid);
        goto out;
    }
    snprintf(reason, sizeof reason, "cancelled by uid %u", (unsigned)p->uid);
    int rc = eco_store_cancel(d->store, j.id, eco_wall_s(), reason, &prev, &err);
    if (rc == -ESTALE) {
        ret = eco_http_fail(c, 409, NULL, "job %" PRId64 " has already ended", j.id);
        goto out;
    }
    if (rc < 0) {
        ret = eco_http_fail(c, 500, NULL, "%s", err.msg);
        goto out;
    }
    if (prev == ECO_STORE_RUNNING)
        ecod__sched_cancelled(d, j.id, eco_wall_s(), eco_mono_s());
    else if (prev == ECO_STORE_QUEUED)
        ecod__queue_remove(d, j.id);
    ECO_LOG(ECO_LOG_INFO, "api", "job %" PRId64 " %s", j.id, reason);
    d->want_sched = true;
    ret = eco_http_reply(c, 200,
                         json_pack("{s:I,s:s,s:s}", "id", (json_int_t)j.id, "state", "cancelled",
                                   "previous", eco_store_state_name(prev)));
out:
    eco_store_job_fini(&j);
    return ret;
}

/* Reads up to MAX_LOG_CHUNK bytes of `path` from `offset` into *buf (caller's, freed with
 * free()); a missing file (a queued job) reads as empty. *size: the file's size. */
static int read_chunk(const char *path, uint64_t offset, char **buf, size_t *len, uint64_t *size)
{
    struct stat st;
    int ret = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    *buf = NULL;
    *len = 0;
    *size = 0;
    if (fd < 0) {
        ret = errno == ENOENT ? 0 : -errno;
        goto out;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        ret = -EIO;
        goto out;
    }
    *size = (uint64_t)st.st_size;
    size_t want = offset >= *size                  ? 0
                  : *size - offset > MAX_LOG_CHUNK ? MAX_LOG_CHUNK
                                                   : (size_t)(*size - offset);
    if (!(*buf = malloc(want ? want : 1))) {
        ret = -ENOMEM;
        goto out;
    }
    while (*len < want) {
        ssize_t r = pread(fd, *buf + *len, want - *len, (off_t)(offset + *len));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            ret = r < 0 ? -errno : 0;
            break;
        }
        *len += (size_t)r;
    }
out:
    if (fd >= 0)
        close(fd);
    return ret;
}

/* GET /v1/jobs/ID/logs?stream=stdout|stderr&offset=N: the raw bytes of the job's output from
 * byte N (at most MAX_LOG_CHUNK); headers say the job's state (read before the file, so an
 * ended state with an empty body means the output is drained) and the next offset. */
static enum MHD_Result job_logs(struct ecod *d, struct MHD_Connection *c, const struct peer *p,
                                const char *ids)
{
    const char *stream = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "stream");
    const char *offs = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
    struct eco_store_job j = {0};
    struct MHD_Response *r = NULL;
    char path[4200], hdr[32], *data = NULL, *end = NULL;
    size_t len = 0;
    uint64_t size = 0;
    unsigned long long offset = 0;
    enum MHD_Result ret;
    if (stream && strcmp(stream, "stdout") && strcmp(stream, "stderr")) {
        ret = eco_http_fail(c, 400, "stream", "stream must be stdout or stderr");
        goto out;
    }
    errno = 0;
    if (offs && (!*offs || *offs == '-' || (offset = strtoull(offs, &end, 10), errno || *end) ||
                 offset > (unsigned long long)INT64_MAX)) {
        ret = eco_http_fail(c, 400, "offset", "offset must be an integer >= 0 (bytes)");
        goto out;
    }
    if (fetch(d, c, ids, &j, &ret) < 0)
        goto out;
    if (p->uid != 0 && p->uid != j.uid) {
        ret = eco_http_fail(c, 403, NULL,
                            "job %" PRId64 " belongs to uid %u; uid %u may not read its logs", j.id,
                            (unsigned)j.uid, (unsigned)p->uid);
        goto out;
    }
    ecod__log_path(d, j.id, stream && !strcmp(stream, "stderr") ? "err" : "out", path, sizeof path);
    int rc = read_chunk(path, offset, &data, &len, &size);
    if (rc < 0) {
        ECO_LOG(ECO_LOG_WARN, "api", "logs of job %" PRId64 ": %s: %s", j.id, path, strerror(-rc));
        ret = eco_http_fail(c, 500, NULL, "cannot read the output of job %" PRId64 ": %s", j.id,
                            strerror(-rc));
        goto out;
    }
    if (!(r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE))) {
        ret = MHD_NO;
        goto out;
    }
    data = NULL;
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    MHD_add_response_header(r, "X-Ecosched-Job-State", eco_store_state_name(j.state));
    snprintf(hdr, sizeof hdr, "%llu", offset + len);
    MHD_add_response_header(r, "X-Ecosched-Next-Offset", hdr);
    snprintf(hdr, sizeof hdr, "%" PRIu64, size);
    MHD_add_response_header(r, "X-Ecosched-Size", hdr);
    ret = MHD_queue_response(c, 200, r);
out:
    if (r)
        MHD_destroy_response(r);
    free(data);
    eco_store_job_fini(&j);
    return ret;
}

/* ---- GPUs and status -------------------------------------------------------------------- */

static json_t *gpu_json(struct ecod *d, unsigned g, double mono)
{
    char name[ECO_PLATFORM_STR_MAX] = "";
    uint64_t total = 0, used = 0;
    double util = 0, power = 0, limit = 0;
    struct eco_power_range pr = {0};
    struct eco_gpusel_gpu st = {0};
    eco_platform_gpu_name(d->platform, g, name, sizeof name, NULL);
    eco_platform_memory(d->platform, g, &total, &used, NULL);
    eco_platform_util(d->platform, g, &util, NULL);
    eco_platform_power(d->platform, g, &power, NULL);
    eco_platform_power_limit(d->platform, g, &limit, NULL);
    eco_platform_power_range(d->platform, g, &pr, NULL);
    eco_gpusel_gpu_status(d->sel, g, mono, &st);
    json_t *jobs = json_array();
    for (size_t i = 0; jobs && i < d->n_runs; i++)
        for (uint32_t k = 0; k < d->runs[i].n_gpus; k++)
            if (d->runs[i].gpus[k] == g)
                json_array_append_new(jobs, json_integer((json_int_t)d->runs[i].id));
    double energy = 0;
    bool have_energy = eco_platform_energy(d->platform, g, &energy, NULL) == 0;
    /* "state" agrees with "jobs": busy while a job of the daemon or a process of none
     * (unattributed) is on the GPU, free otherwise, whatever the averaged load says (it lags
     * by the utilisation window: busy for seconds after a job ended, free for the first seconds
     * of one). "sensed" is the live GPU selection's own hysteresis view of the load. */
    const struct ecod_stray *sy = &d->stray[g];
    bool in_use = (jobs && json_array_size(jobs) > 0) || sy->n > 0;
    const char *sensed = !st.has_sample ? "unsampled" : st.busy ? "busy" : "free";
    const char *state = in_use ? "busy" : !st.has_sample ? "unsampled" : "free";
    json_t *o = json_pack("{s:i,s:s,s:f,s:f,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:s,s:s,s:i,s:o}", "index",
                          (int)g, "name", name, "util", util, "util_avg", st.util_avg,
                          "memory_used_b", (json_int_t)used, "memory_total_b", (json_int_t)total,
                          "power_w", power, "power_limit_w", limit, "power_min_w", pr.min_w,
                          "power_max_w", pr.max_w, "power_default_w", pr.default_w, "state", state,
                          "sensed", sensed, "claims", (int)st.n_claims, "jobs", jobs);
    if (o)
        json_object_set_new(o, "energy_j", have_energy ? json_real(energy) : json_null());
    /* its processes of no job (attrib.c), whose share is charged to no job */
    json_t *pids = json_array();
    for (unsigned i = 0; pids && i < sy->n && i < ECOD_STRAY_PIDS; i++)
        json_array_append_new(pids, json_integer(sy->pids[i]));
    if (o)
        json_object_set_new(o, "unattributed",
                            json_pack("{s:i,s:o,s:f,s:f}", "processes", (int)sy->n, "pids",
                                      pids ? pids : json_array(), "share", sy->share, "energy_j",
                                      sy->energy_j));
    return o;
}

static enum MHD_Result list_gpus(struct ecod *d, struct MHD_Connection *c)
{
    json_t *a = json_array();
    double mono = eco_mono_s();
    for (unsigned g = 0; a && g < d->n_gpus; g++)
        json_array_append_new(a, gpu_json(d, g, mono));
    return eco_http_reply(
        c, 200, json_pack("{s:s,s:o}", "platform", eco_platform_name(d->platform), "gpus", a));
}

static enum MHD_Result status(struct ecod *d, struct MHD_Connection *c, const struct peer *p)
{
    const struct ecod_pass_stats *ps = &d->pass;
    double n = ps->passes ? (double)ps->passes : 1;
    json_t *pass =
        json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:I,s:f}", "count", (json_int_t)ps->passes, "last_ms",
                  ps->last_s * 1e3, "max_ms", ps->max_s * 1e3, "mean_ms", ps->sum_s / n * 1e3,
                  "queue_mean_ms", ps->queue_sum_s / n * 1e3, "queue_max_ms", ps->queue_max_s * 1e3,
                  "last_queued", (json_int_t)ps->last_queue_len, "sample_age_ms",
                  ps->last_sample_age_s * 1e3);
    const struct ecod_sample_stats *ss = &d->sample;
    double ns = ss->samples ? (double)ss->samples : 1;
    json_t *sample =
        json_pack("{s:I,s:f,s:f,s:f}", "count", (json_int_t)ss->samples, "last_ms",
                  ss->last_s * 1e3, "max_ms", ss->max_s * 1e3, "mean_ms", ss->sum_s / ns * 1e3);
    return eco_http_reply(c, 200,
                          json_pack("{s:s,s:s,s:i,s:i,s:I,s:s,s:I,s:o,s:o}", "version", ECO_VERSION,
                                    "platform", eco_platform_name(d->platform), "gpus",
                                    (int)d->n_gpus, "watched_jobs", (int)d->n_runs, "peer_uid",
                                    (json_int_t)p->uid, "queue_policy", ecod__queue_policy_name(d),
                                    "queued", (json_int_t)ecod__queue_len(d), "pass", pass,
                                    "sample", sample));
}

/* GET /metrics: Prometheus text, format 0.0.4. */
static enum MHD_Result metrics(struct ecod *d, struct MHD_Connection *c)
{
    struct eco_error err = {{0}};
    char *text = NULL;
    size_t len = 0;
    struct MHD_Response *r = NULL;
    enum MHD_Result ret = MHD_NO;
    if (ecod__metrics_render(d, &text, &len, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "api", "%s", err.msg);
        ret = eco_http_fail(c, 500, NULL, "%s", err.msg);
        goto out;
    }
    if (!(r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE)))
        goto out;
    text = NULL;
    MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    ret = MHD_queue_response(c, 200, r);
out:
    if (r)
        MHD_destroy_response(r);
    free(text);
    return ret;
}

/* ---- routing ---------------------------------------------------------------------------- */

/* Seconds a client told 503 (munged down, or the decoding queue full) waits: munged restarts
 * in about a second; a full queue drains in milliseconds. */
#define CLUSTER_RETRY_S "1"

/* 401 (or status) with the scheme to use ("Bearer realm=..."), for a request without the
 * right credential; msg says why. */
static enum MHD_Result unauthorized(struct MHD_Connection *c, unsigned status, const char *scheme,
                                    const char *msg)
{
    json_t *o = json_pack("{s:s}", "error", msg);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return MHD_NO;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (status == 401)
        MHD_add_response_header(r, "WWW-Authenticate", scheme);
    if (status == 503)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, CLUSTER_RETRY_S);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

#define MUNGE_SCHEME ECO_MUNGE_AUTH_SCHEME " realm=\"ecoschedd\""

/* The cluster listener's first pass over a request: its credential goes to the decoding
 * worker (the connection suspended), or the request is refused at once. */
static enum MHD_Result cluster_submit(const struct ecod_listener *l, struct MHD_Connection *c,
                                      const char *url, const char *method, struct req *rq)
{
    struct ecod_cluster_req *a = &rq->auth;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *cred = eco_munge_auth_cred(h);
    if (rq->body.too_big)
        return eco_http_fail(c, 413, "body", "request body over %u bytes", ECOD_MAX_BODY);
    if (!cred)
        return unauthorized(c, 401, MUNGE_SCHEME,
                            h ? "garbled Authorization header (send 'Authorization: MUNGE CRED', "
                                "CRED a munge credential of the request's payload)"
                              : "no Authorization header (the cluster listener needs "
                                "'Authorization: MUNGE CRED'; docs/http-api.md)");
    if (strlen(method) >= sizeof a->method || strlen(url) >= sizeof a->path)
        return unauthorized(c, 401, MUNGE_SCHEME, "request method or path too long");
    *a = (struct ecod_cluster_req){.conn = c, .body = rq->body.data, .len = rq->body.len};
    snprintf(a->method, sizeof a->method, "%s", method);
    snprintf(a->path, sizeof a->path, "%s", url);
    if (!(a->cred = strdup(cred)))
        return MHD_NO;
    if (ecod__cluster_submit(l->cluster, a) < 0) {
        ecod__cluster_req_fini(a);
        ECO_LOG(ECO_LOG_DEBUG, "api", "%d credentials waiting: %s %s answered 503",
                ECOD_CLUSTER_QUEUE, method, url);
        return unauthorized(c, 503, NULL,
                            "too many requests waiting; retry in " CLUSTER_RETRY_S " s");
    }
    rq->auth_sent = true; /* the worker resumes c; MHD then calls on_request again */
    return MHD_YES;
}

/* The cluster listener's caller once the worker decoded its credential: false with *p, or
 * true with *ret when refused (401, 403, 503). */
static bool cluster_peer(const struct ecod_listener *l, struct MHD_Connection *c,
                         const char *method, struct req *rq, struct peer *p, enum MHD_Result *ret)
{
    const struct ecod_cluster_req *a = &rq->auth;
    struct eco_error err = {{0}};
    if (a->rc == -EHOSTUNREACH || a->rc == -ENOMEM) {
        ECO_LOG(ECO_LOG_ERR, "api", "cluster listener: %s", a->msg);
        *ret = a->rc == -ENOMEM ? eco_http_fail(c, 500, NULL, "%s", a->msg)
                                : unauthorized(c, 503, NULL, a->msg);
        return true;
    }
    if (a->rc < 0) {
        ECO_LOG(ECO_LOG_INFO, "api", "cluster listener: %s %s refused: %s", method, a->path,
                a->msg);
        *ret = unauthorized(c, 401, MUNGE_SCHEME, a->msg);
        return true;
    }
    if (ecod__cluster_policy_check(ecod__cluster_policy(l->cluster), a->uid, method, &p->admin,
                                   &err) < 0) {
        *ret = eco_http_fail(c, 403, NULL, "%s", err.msg);
        return true;
    }
    p->uid = a->uid;
    p->gid = a->gid;
    return false;
}

/* Who is calling on listener l: false with *p, or true with *ret (answered or suspended). */
static bool caller(const struct ecod_listener *l, struct MHD_Connection *c, const char *url,
                   const char *method, struct req *rq, struct peer *p, enum MHD_Result *ret)
{
    *p = (struct peer){.admin = false};
    if (l->cluster) {
        if (!rq->auth_sent) {
            *ret = cluster_submit(l, c, url, method, rq);
            return true;
        }
        return cluster_peer(l, c, method, rq, p, ret);
    }
    if (l->tcp) {
        const char *auth =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
        if (!ecod__tcp_token_ok(l->tcp, auth)) {
            *ret = unauthorized(c, 401, "Bearer realm=\"ecoschedd\"",
                                "missing or wrong bearer token (send 'Authorization: Bearer "
                                "TOKEN', TOKEN from the daemon's tcp_token_file)");
            return true;
        }
        p->uid = l->tcp->uid;
        p->gid = l->tcp->gid;
    } else if (peer_of(c, p) < 0) {
        *ret = eco_http_fail(c, 500, NULL, "cannot read the caller's credentials");
        return true;
    }
    p->admin = p->uid == 0;
    return false;
}

static enum MHD_Result route(const struct ecod_listener *l, struct MHD_Connection *c,
                             const char *url, const char *method, struct req *rq)
{
    struct ecod *d = l->d;
    struct peer p;
    bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
    char ids[32];
    char tail[16];
    /* the page holds no data (its script asks the API, with the token of its #token=...),
     * so a browser may load it over TCP without the token */
    if (!strcmp(url, "/") && get && l->tcp)
        return (enum MHD_Result)ecod__page(c);
    enum MHD_Result ret;
    if (caller(l, c, url, method, rq, &p, &ret))
        return ret;
    if (rq->body.too_big)
        return eco_http_fail(c, 413, "body", "request body over %u bytes", ECOD_MAX_BODY);
    int node_ret; /* Slurm and power-controller routes: api_node.c */
    if (ecod__api_node_route(d, c, url, method, rq->body.data, rq->body.len, p.uid, p.admin,
                             &node_ret))
        return (enum MHD_Result)node_ret;
    if (!strcmp(url, "/v1/jobs")) {
        if (post)
            return submit(d, c, &p, rq);
        return get ? list_jobs(d, c, rq)
                   : eco_http_fail(c, 405, NULL, "use GET or POST on %s", url);
    }
    if (!strcmp(url, "/v1/gpus"))
        return get ? list_gpus(d, c) : eco_http_fail(c, 405, NULL, "use GET on %s", url);
    if (!strcmp(url, "/"))
        return get ? (enum MHD_Result)ecod__page(c)
                   : eco_http_fail(c, 405, NULL, "use GET on %s", url);
    if (!strcmp(url, "/metrics"))
        return get ? metrics(d, c) : eco_http_fail(c, 405, NULL, "use GET on %s", url);
    if (!strcmp(url, "/v1/status"))
        return get ? status(d, c, &p) : eco_http_fail(c, 405, NULL, "use GET on %s", url);
    if (!strncmp(url, "/v1/jobs/", 9) && strlen(url + 9) < sizeof ids) {
        const char *slash = strchr(url + 9, '/');
        size_t n = slash ? (size_t)(slash - (url + 9)) : strlen(url + 9);
        memcpy(ids, url + 9, n);
        ids[n] = '\0';
        snprintf(tail, sizeof tail, "%s", slash ? slash : "");
        if (!*tail)
            return get ? show_job(d, c, &p, ids)
                       : eco_http_fail(c, 405, NULL, "use GET on %s", url);
        if (!strcmp(tail, "/cancel"))
            return post ? cancel_job(d, c, &p, ids)
                        : eco_http_fail(c, 405, NULL, "use POST on %s", url);
        if (!strcmp(tail, "/logs"))
            return get ? job_logs(d, c, &p, ids)
                       : eco_http_fail(c, 405, NULL, "use GET on %s", url);
    }
    return eco_http_fail(c, 404, NULL, "no such path: %.200s (API paths start with /v1/)", url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
    struct req *rq = *con_cls;
    (void)version;
    if (!rq) {
        if (!(rq = calloc(1, sizeof *rq)))
            return MHD_NO;
        rq->body.max = ECOD_MAX_BODY;
        *con_cls = rq;
        return MHD_YES;
    }
    if (rq->listed) /* resumed by the listing worker: its answer */
        return queue_listing(c, rq, NULL);
    if (*upload_size > 0) {
        /* past the limit the rest is read and dropped, so the client gets its 413 */
        if (eco_http_body_add(&rq->body, upload_data, *upload_size) < 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    return route(cls, c, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct req *rq = *con_cls;
    (void)cls, (void)c, (void)toe;
    if (rq) {
        eco_http_body_fini(&rq->body);
        free(rq->list.body);
        ecod__cluster_req_fini(&rq->auth);
    }
    free(rq);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    (void)cls;
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    ECO_LOG(ECO_LOG_WARN, "http", "%s", msg);
}

struct MHD_Daemon *ecod__api_start(struct ecod_listener *l, int fd, struct eco_error *err)
{
    /* the cluster listener with a certificate speaks https (its PEM texts live as long as l) */
    const char *cert = l->cluster ? ecod__cluster_tls_cert(l->cluster) : NULL;
    struct MHD_OptionItem tls[] = {
        {cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, cert ? (void *)ecod__cluster_tls_key(l->cluster) : NULL},
        {MHD_OPTION_END, 0, NULL}};
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    /* Connection limits: a few hundred clients at once is far beyond one server's users;
     * 30 s idle timeout drops clients that connect and send nothing. */
    struct MHD_Daemon *m = MHD_start_daemon(
        flags | (cert ? MHD_USE_TLS : 0), 0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER,
        mhd_log, NULL, MHD_OPTION_ARRAY, tls, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_CONNECTION_LIMIT, (unsigned)256,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!m)
        eco_errorf(err, -EIO, "libmicrohttpd would not start on the socket");
    return m;
}
