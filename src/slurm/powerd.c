/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`: the cluster power controller beside Slurm. Every period it reads the
 * jobs and nodes from Slurm (squeue/sinfo --json), each node's GPU power from its ecoschedd,
 * splits the cluster's GPU power budget among the running jobs with the power-capping
 * allocator (include/ecosched/powercap.h), sends the limits to the node daemons, keeps Slurm's
 * node Weight in step with warmth and efficiency, and runs the forecast power-down policy for
 * the SuspendProgram (`ecosched power suspend`). API on a unix socket. docs/slurm.md. */
#define _GNU_SOURCE /* SO_PEERCRED */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <microhttpd.h>
#include "../util/http_server.h"
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "../cli/cli.h"
#include "ecosched/catalog.h"
#include "ecosched/cluster.h"
#include "ecosched/policy.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "slurm_int.h"
#include "../util/clock.h"
#include "../util/log.h"

#define MAX_NODES 4096
#define MAX_GPUS 64
#define MAX_JOBS 8192
/* A node daemon answers /v1/node in milliseconds; 1 s bounds one period's wait on a dead one. */
#define NODE_TIMEOUT_MS 1000
/* Remaining time of a job without a time limit, for the allocator's cost: an hour, the order
 * of a training job's remaining time; only the ratios between jobs matter. */
#define DEFAULT_REMAINING_S 3600.0
/* The capper --policy uses when not given: the one the simulator evaluates by default. */
#define DEFAULT_CAPPER "mpc"
/* Weight of the newest progress reference (busy SM cycles per second at the job's maximum
 * limit) in its running mean: a few periods at the maximum settle it. */
#define REF_ALPHA 0.2
/* Weight classes (Slurm prefers the lowest weight): nodes already running jobs (pack), idle
 * nodes that are on, then nodes powered down or not answering. Within a class the idle draw
 * per GPU in watts orders nodes by efficiency. */
#define WEIGHT_BUSY 1000
#define WEIGHT_IDLE 2000
#define WEIGHT_COLD 3000
/* The capping metrics go to the log every 600 s of periods (and at exit): ten minutes is the
 * scale of a budget's effect on the jobs, and keeps a 1 s period's log to 144 lines a day. */
#define METRICS_LOG_S 600.0

struct pgpu {
    double power_w, limit_w, min_w, max_w, default_w;
    double util;   /* SM utilisation 0..1 from the node daemon, NaN when it has none */
    double sm_mhz; /* SM clock, NaN when the node daemon has none */
    double job_cap_w; /* the job's --gpu-power-cap (0: none): a ceiling for its limit */
};

struct pnode {
    char name[128];
    char endpoint[600];
    unsigned gres_gpus, used_gpus; /* from sinfo */
    bool up;                       /* its ecoschedd answered this period */
    bool seen;                     /* it answered once */
    bool powered_down;             /* Slurm says powered down (power save) */
    bool slurm_idle;               /* Slurm says idle */
    double idle_since;             /* monotonic s, -1 when not idle */
    double max_power_w;            /* sum of its GPUs' maximum limits (last answer) */
    double power_w;
    double idle_w_per_gpu;
    unsigned n_gpus;
    struct pgpu gpu[MAX_GPUS];
    long weight; /* Slurm's */
};

struct pjob {
    int64_t id;
    bool running, managed, seen_now;
    unsigned n; /* GPUs */
    uint32_t node[MAX_GPUS], gpu[MAX_GPUS];
    double remaining_s, limit_w;
    double deadline_s; /* epoch seconds (squeue's deadline, sbatch --deadline), -1 none */
    /* Progress proxy: util x SM clock (busy SM cycles per second) over its value at the job's
     * maximum limit (ref_rate, 0 until the job has run there). */
    double ref_rate, speed;
    struct eco_job_model model;
    bool model_init;
    bool metered; /* its start has been counted by the metrics (settling) */
};

struct powerd {
    /* options */
    const char *socket, *node_pattern, *forecast;
    double period_s;
    bool weights;
    /* shared with the API thread, under lock */
    pthread_mutex_t lock;
    double budget_w;
    json_t *status; /* last period's status */
    /* controller state (main thread only) */
    struct pnode *nodes;
    size_t n_nodes;
    struct pjob *jobs;
    size_t n_jobs;
    int64_t max_seen_id; /* highest job id seen (arrivals are ids above it) */
    uint64_t arrivals;
    double arrived_gpus;
    /* capping metrics (docs/policies/powercap.md, "Metrics"): the sums, the last sample's
     * monotonic time (< 0 before the first), the budget it saw, the last log */
    struct eco_cap_metrics met;
    double met_last_t, met_budget_w, met_logged_t;
    struct eco_capper *capper; /* --policy */
    const char *policy;
    double last_budget_w;      /* budget of the last decide (its step sign) */
    struct eco_rng rng;        /* the family's dithering */
    struct eco_cluster *cluster;
    struct eco_powerdown *pd;
    const struct eco_powerdown_ops *pd_ops;
};

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* Output of a command as JSON (squeue/sinfo --json), or NULL. */
static json_t *run_json(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    if (!f) {
        ECO_LOG(ECO_LOG_ERR, NULL, "%s: %s", cmd, strerror(errno));
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadf(f, 0, &e);
    int st = pclose(f);
    if (!j)
        ECO_LOG(ECO_LOG_ERR, NULL, "%s: not JSON (exit %d): %s", cmd, st, e.text);
    return j;
}

static void expand_pattern(char *dst, size_t cap, const char *pat, const char *node)
{
    size_t n = 0;
    for (; *pat && n + 1 < cap; pat++) {
        if (pat[0] == '%' && pat[1] == 'n') {
            n += (size_t)snprintf(dst + n, cap - n, "%s", node);
            if (n >= cap)
                n = cap - 1;
            pat++;
        } else {
            dst[n++] = *pat;
        }
    }
    dst[n] = '\0';
}

/* "gpu:2" / "gpu:v100:2(S:0)" -> 2. */
static unsigned gres_gpus(const char *g)
{
    const char *p = g ? strstr(g, "gpu") : NULL;
    if (!p)
        return 0;
    const char *paren = strchr(p, '(');
    const char *colon = NULL;
    for (const char *q = p; *q && (!paren || q < paren) && *q != ','; q++)
        if (*q == ':')
            colon = q;
    return colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
}

static struct pnode *node_by_name(struct powerd *pd, const char *name, size_t *idx)
{
    for (size_t i = 0; i < pd->n_nodes; i++)
        if (!strcmp(pd->nodes[i].name, name)) {
            if (idx)
                *idx = i;
            return &pd->nodes[i];
        }
    return NULL;
}

/* Nodes from `sinfo --json`: names, GPUs, state, weight. New nodes are appended. */
static int read_nodes(struct powerd *pd, double now)
{
    json_t *j = run_json("sinfo --json 2>/dev/null");
    json_t *a = json_object_get(j, "nodes"), *o;
    size_t i;
    if (!json_is_array(a)) {
        json_decref(j);
        return -EIO;
    }
    json_array_foreach(a, i, o)
    {
        const char *name = json_string_value(json_object_get(o, "name"));
        if (!name)
            continue;
        struct pnode *nd = node_by_name(pd, name, NULL);
        if (!nd) {
            if (pd->n_nodes >= MAX_NODES)
                continue;
            nd = &pd->nodes[pd->n_nodes++];
            memset(nd, 0, sizeof *nd);
            snprintf(nd->name, sizeof nd->name, "%s", name);
            expand_pattern(nd->endpoint, sizeof nd->endpoint, pd->node_pattern, name);
            nd->idle_since = -1;
        }
        nd->gres_gpus = gres_gpus(json_string_value(json_object_get(o, "gres")));
        nd->used_gpus = gres_gpus(json_string_value(json_object_get(o, "gres_used")));
        const char *state = json_string_value(json_object_get(o, "state"));
        nd->powered_down = false;
        json_t *fl = json_object_get(o, "state_flags"), *f;
        size_t k;
        json_array_foreach(fl, k, f)
        {
            const char *s = json_string_value(f);
            if (s && (!strcmp(s, "POWERED_DOWN") || !strcmp(s, "POWERING_DOWN")))
                nd->powered_down = true;
        }
        bool idle = state && !strcmp(state, "idle") && !nd->powered_down;
        if (idle && nd->idle_since < 0)
            nd->idle_since = now;
        else if (!idle)
            nd->idle_since = -1;
        nd->slurm_idle = idle;
        nd->weight = (long)json_integer_value(json_object_get(o, "weight"));
    }
    json_decref(j);
    return 0;
}

/* GET /v1/node of every node daemon. */
static void read_node_power(struct powerd *pd)
{
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        char msg[700];
        long st;
        json_t *o =
            eco_http_json(nd->endpoint, "/v1/node", NULL, NODE_TIMEOUT_MS, &st, msg, sizeof msg);
        bool was_up = nd->up;
        nd->up = o && st == 200;
        if (!nd->up) {
            if (was_up || !nd->seen)
                ECO_LOG(ECO_LOG_WARN, NULL,
                      "node %s: no answer from its ecoschedd (%s): its limits stay, "
                      "its maximum draw (%.0f W) is set aside",
                      nd->name, o ? "bad answer" : msg, nd->max_power_w);
            json_decref(o);
            continue;
        }
        if (!was_up && nd->seen)
            ECO_LOG(ECO_LOG_INFO, NULL, "node %s: its ecoschedd answers again", nd->name);
        nd->seen = true;
        nd->power_w = json_number_value(json_object_get(o, "power_w"));
        nd->max_power_w = json_number_value(json_object_get(o, "max_power_w"));
        json_t *gs = json_object_get(o, "gpus"), *g;
        size_t k;
        double idle_sum = 0;
        unsigned idle_n = 0;
        nd->n_gpus = 0;
        json_array_foreach(gs, k, g)
        {
            if (k >= MAX_GPUS)
                break;
            struct pgpu *pg = &nd->gpu[k];
            pg->power_w = json_number_value(json_object_get(g, "power_w"));
            pg->limit_w = json_number_value(json_object_get(g, "power_limit_w"));
            pg->min_w = json_number_value(json_object_get(g, "power_min_w"));
            pg->max_w = json_number_value(json_object_get(g, "power_max_w"));
            pg->default_w = json_number_value(json_object_get(g, "power_default_w"));
            pg->job_cap_w = json_number_value(json_object_get(g, "job_cap_w"));
            json_t *u = json_object_get(g, "util"), *mhz = json_object_get(g, "sm_clock_mhz");
            pg->util = json_is_number(u) ? json_number_value(u) : NAN;
            pg->sm_mhz = json_is_number(mhz) ? json_number_value(mhz) : NAN;
            if (json_is_null(json_object_get(g, "slurm_job"))) {
                idle_sum += pg->power_w;
                idle_n++;
            }
            nd->n_gpus = (unsigned)k + 1;
        }
        if (idle_n)
            nd->idle_w_per_gpu = idle_sum / idle_n;
        json_decref(o);
    }
}

static struct pjob *job_get(struct powerd *pd, int64_t id)
{
    for (size_t i = 0; i < pd->n_jobs; i++)
        if (pd->jobs[i].id == id)
            return &pd->jobs[i];
    if (pd->n_jobs >= MAX_JOBS)
        return NULL;
    struct pjob *j = &pd->jobs[pd->n_jobs++];
    memset(j, 0, sizeof *j);
    j->id = id;
    return j;
}

/* Whether job id is new: Slurm gives increasing ids, so an id above every one seen so far is
 * an arrival (no list of past ids to keep). */
static bool seen_before(struct powerd *pd, int64_t id)
{
    if (id <= pd->max_seen_id)
        return true;
    pd->max_seen_id = id;
    return false;
}

/* "gpu:2(IDX:0-1,3)" -> indices. */
static unsigned gres_idx(const char *s, uint32_t *out, unsigned cap)
{
    const char *p = s ? strstr(s, "IDX:") : NULL;
    unsigned n = 0;
    if (!p)
        return 0;
    p += 4;
    while (*p && *p != ')' && n < cap) {
        char *e;
        long a = strtol(p, &e, 10), b = a;
        if (e == p)
            break;
        if (*e == '-')
            b = strtol(e + 1, &e, 10);
        for (long k = a; k <= b && n < cap; k++)
            out[n++] = (uint32_t)k;
        p = *e == ',' ? e + 1 : e;
    }
    return n;
}

/* A number of squeue --json: a plain integer (older Slurm) or {"set", "infinite", "number"}
 * (Slurm 23.02 and later). 1 with *out when set and finite, else 0. */
static int slurm_number(const json_t *v, double *out)
{
    if (json_is_integer(v)) {
        *out = (double)json_integer_value(v);
        return 1;
    }
    if (json_is_object(v) && json_is_true(json_object_get(v, "set")) &&
        !json_is_true(json_object_get(v, "infinite")) &&
        json_is_number(json_object_get(v, "number"))) {
        *out = json_number_value(json_object_get(v, "number"));
        return 1;
    }
    return 0;
}

/* Jobs from `squeue --json`: arrivals (new ids, with their GPUs) and the running jobs' GPUs. */
static int read_jobs(struct powerd *pd)
{
    json_t *j = run_json("squeue --json 2>/dev/null");
    json_t *a = json_object_get(j, "jobs"), *o;
    size_t i;
    time_t now = time(NULL);
    if (!json_is_array(a)) {
        json_decref(j);
        return -EIO;
    }
    for (size_t k = 0; k < pd->n_jobs; k++)
        pd->jobs[k].seen_now = false;
    json_array_foreach(a, i, o)
    {
        int64_t id = json_integer_value(json_object_get(o, "job_id"));
        const char *state = json_string_value(json_object_get(o, "job_state"));
        if (id <= 0 || !state)
            continue;
        if (!seen_before(pd, id)) {
            json_int_t nn = json_integer_value(json_object_get(o, "node_count"));
            unsigned per = gres_gpus(json_string_value(json_object_get(o, "tres_per_node")));
            pd->arrivals++;
            pd->arrived_gpus += (double)per * (double)(nn > 0 ? nn : 1);
        }
        if (strcmp(state, "RUNNING"))
            continue;
        struct pjob *pj = job_get(pd, id);
        if (!pj)
            continue;
        pj->seen_now = pj->running = true;
        pj->n = 0;
        json_t *alloc = json_object_get(json_object_get(o, "job_resources"), "allocated_nodes");
        json_t *gd = json_object_get(o, "gres_detail"), *an;
        size_t k;
        json_array_foreach(alloc, k, an)
        {
            size_t ni;
            const char *nn = json_string_value(json_object_get(an, "nodename"));
            uint32_t idx[MAX_GPUS];
            unsigned m = gres_idx(json_string_value(json_array_get(gd, k)), idx, MAX_GPUS);
            if (!nn || !node_by_name(pd, nn, &ni))
                continue;
            for (unsigned g = 0; g < m && pj->n < MAX_GPUS; g++) {
                pj->node[pj->n] = (uint32_t)ni;
                pj->gpu[pj->n++] = idx[g];
            }
        }
        double tl = 0, start = (double)now, dl = 0;
        slurm_number(json_object_get(o, "start_time"), &start);
        pj->remaining_s = DEFAULT_REMAINING_S;
        if (slurm_number(json_object_get(o, "time_limit"), &tl) && tl > 0)
            pj->remaining_s = fmax(60.0, tl * 60 - ((double)now - start));
        /* sbatch --deadline: absolute, epoch seconds; 0 or unset means none */
        pj->deadline_s = slurm_number(json_object_get(o, "deadline"), &dl) && dl > 0 ? dl : -1;
    }
    /* forget jobs that left the running set */
    size_t kept = 0;
    for (size_t k = 0; k < pd->n_jobs; k++)
        if (pd->jobs[k].seen_now)
            pd->jobs[kept++] = pd->jobs[k];
    pd->n_jobs = kept;
    json_decref(j);
    return 0;
}

/* Power per GPU: the learned model, never above the limit (a limit caps the draw). */
static void predict(const void *ctx, double limit_w, double *power_w, double *speed)
{
    eco_cap_predict_model(ctx, limit_w, power_w, speed);
    if (*power_w > limit_w)
        *power_w = limit_w;
}

static void send_limit(struct powerd *pd, struct pnode *nd, uint32_t g, double w)
{
    char path[64], body[64], msg[700];
    long st;
    (void)pd;
    snprintf(path, sizeof path, "/v1/gpus/%u/limit", g);
    snprintf(body, sizeof body, "{\"power_limit_w\":%.0f}", w);
    json_t *o = eco_http_json(nd->endpoint, path, body, NODE_TIMEOUT_MS, &st, msg, sizeof msg);
    if (!o || st != 200)
        ECO_LOG(ECO_LOG_WARN, NULL, "node %s GPU %u: limit %.0f W not set: %s", nd->name, g, w,
              o ? json_string_value(json_object_get(o, "error")) : msg);
    json_decref(o);
}

/* GPUs of answering nodes that no running job holds go back to their default limit (a limit
 * sent for a job that ended in the meantime, after its epilog restored it). */
static void restore_free_gpus(struct powerd *pd)
{
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        for (unsigned g = 0; nd->up && g < nd->n_gpus; g++) {
            bool held = false;
            for (size_t k = 0; !held && k < pd->n_jobs; k++)
                for (unsigned q = 0; !held && q < pd->jobs[k].n; q++)
                    held = pd->jobs[k].node[q] == i && pd->jobs[k].gpu[q] == g;
            if (!held && nd->gpu[g].default_w > 0 &&
                fabs(nd->gpu[g].limit_w - nd->gpu[g].default_w) >= 1.0)
                send_limit(pd, nd, g, nd->gpu[g].default_w);
        }
    }
}

/* Measured progress of job j at its setting cur (hi: its maximum): the mean over its GPUs
 * of util x SM clock, relative to that at its maximum; NaN when a GPU has no reading or the
 * job has not run at its maximum yet (docs/slurm/powerd.md). */
static double progress(struct powerd *pd, struct pjob *j, double cur, double hi)
{
    double rate = 0;
    for (unsigned g = 0; g < j->n; g++) {
        const struct pgpu *pg = &pd->nodes[j->node[g]].gpu[j->gpu[g]];
        if (!isfinite(pg->util) || !isfinite(pg->sm_mhz))
            return NAN;
        rate += pg->util * pg->sm_mhz / j->n;
    }
    if (cur >= hi - 1.0 && rate > 0) /* at its maximum: the reference */
        j->ref_rate = j->ref_rate > 0 ? (1 - REF_ALPHA) * j->ref_rate + REF_ALPHA * rate : rate;
    return j->ref_rate > 0 ? rate / j->ref_rate : NAN;
}

/* The allocation: jobs whose GPUs all answered share what the budget leaves after the other
 * GPUs' measured power and the maximum draw of the nodes that did not answer, through the
 * capper family's decide (the same one `ecosched sim` evaluates). */
static void allocate(struct powerd *pd, double budget, json_t *st)
{
    double cold = 0, measured = 0, now = (double)time(NULL);
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        if (!nd->up)
            cold += nd->max_power_w;
        else
            measured += nd->power_w;
    }
    size_t cap = pd->n_jobs ? pd->n_jobs : 1;
    struct eco_capper_job *vj = calloc(cap, sizeof *vj);
    double *lim = calloc(cap, sizeof *lim);
    size_t *map = calloc(cap, sizeof *map);
    size_t m = 0;
    double managed_power = 0;
    if (!vj || !lim || !map)
        goto out;
    for (size_t k = 0; k < pd->n_jobs; k++) {
        struct pjob *j = &pd->jobs[k];
        double lo = 0, hi = INFINITY, lsum = 0, psum = 0;
        j->managed = j->n > 0;
        for (unsigned g = 0; g < j->n; g++) {
            struct pnode *nd = &pd->nodes[j->node[g]];
            if (!nd->up || j->gpu[g] >= nd->n_gpus) {
                j->managed = false;
                break;
            }
            const struct pgpu *pg = &nd->gpu[j->gpu[g]];
            lo = fmax(lo, pg->min_w);
            hi = fmin(hi, pg->job_cap_w > 0 ? fmax(pg->min_w, pg->job_cap_w) : pg->max_w);
            lsum += pg->limit_w;
            psum += pg->power_w;
        }
        if (!j->managed || !(lo <= hi) || !isfinite(hi))
            continue;
        if (!j->model_init) {
            eco_job_model_init(&j->model, lo, hi, ECO_RLS_LAMBDA_DEFAULT);
            j->model_init = true;
        }
        double cur = lsum / j->n;
        j->speed = progress(pd, j, cur, hi);
        /* without a progress reading the speed follows the models' prior */
        eco_job_model_observe(&j->model, cur, psum / j->n,
                              isfinite(j->speed) ? j->speed : cbrt(cur / hi));
        managed_power += psum;
        double slack = j->deadline_s >= 0 ? fmax(0, j->deadline_s - now) : -1;
        vj[m] = (struct eco_capper_job){
            .cap = {.gpus = j->n,
                    .min_limit_w = lo,
                    .max_limit_w = hi,
                    .remaining_s = j->remaining_s,
                    .weight = 1,
                    .slack_s = slack,
                    .predict = predict,
                    .ctx = &j->model},
            .id = (uint32_t)k,
            .limit_w = fmin(hi, fmax(lo, cur)),
            .measured_w = psum / j->n,
            .measured_speed = j->speed,
            .deadline_s = j->deadline_s,
            .samples = j->model.power.n,
        };
        map[m++] = k;
    }
    double other = measured - managed_power;
    int step = budget < pd->last_budget_w ? -1 : budget > pd->last_budget_w ? 1 : 0;
    pd->last_budget_w = budget;
    struct eco_capper_view v = {.now_s = now,
                                .period_s = pd->period_s,
                                .budget_w = budget,
                                .fixed_w = cold + other,
                                .measured_w = measured + cold,
                                .budget_step = step,
                                .jobs = vj,
                                .n = m};
    int rc = m ? eco_capper_decide(pd->capper, &v, &pd->rng, lim) : 0;
    if (rc) {
        ECO_LOG(ECO_LOG_ERR, NULL, "allocation failed: %s", strerror(-rc));
        goto out;
    }
    for (size_t q = 0; q < m; q++) {
        struct pjob *j = &pd->jobs[map[q]];
        j->limit_w = lim[q];
        for (unsigned g = 0; g < j->n; g++) {
            struct pnode *nd = &pd->nodes[j->node[g]];
            if (fabs(nd->gpu[j->gpu[g]].limit_w - lim[q]) >= 1.0)
                send_limit(pd, nd, j->gpu[g], lim[q]);
        }
    }
    restore_free_gpus(pd);
    json_object_set_new(st, "capper", json_string(eco_capper_ops_of(pd->capper)->name));
    json_object_set_new(st, "policy", json_string(pd->policy));
    json_object_set_new(st, "measured_w", json_real(measured));
    json_object_set_new(st, "set_aside_w", json_real(cold));
    json_object_set_new(st, "for_jobs_w", json_real(budget - cold - other));
    json_object_set_new(st, "feedback_w", json_real(eco_capper_feedback_w(pd->capper)));
out:
    free(vj);
    free(lim);
    free(map);
}

/* Slurm's Weight per node: class by warmth, then idle draw per GPU (watts). */
static void update_weights(struct powerd *pd)
{
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        long w = nd->powered_down || !nd->up ? WEIGHT_COLD
                 : nd->used_gpus > 0         ? WEIGHT_BUSY
                                             : WEIGHT_IDLE;
        w += lround(fmin(999, fmax(0, nd->idle_w_per_gpu)));
        if (w == nd->weight)
            continue;
        char cmd[300];
        snprintf(cmd, sizeof cmd, "scontrol update nodename=%s weight=%ld 2>&1", nd->name, w);
        FILE *f = popen(cmd, "r");
        char line[256] = "";
        if (f) {
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
            if (pclose(f) != 0)
                ECO_LOG(ECO_LOG_WARN, NULL, "node %s: weight %ld: %s", nd->name, w, line);
        }
    }
}

/* The forecast power-down policy on the Slurm nodes: which idle nodes it would shut down now
 * (the SuspendProgram powers off only these) and which it would boot. */
static void powerdown(struct powerd *pd, double now, json_t *st)
{
    json_t *off = json_array(), *boot = json_array(), *idle = json_array();
    if (!pd->cluster || pd->cluster->n_nodes != pd->n_nodes) {
        struct eco_error err = {{0}};
        eco_cluster_destroy(pd->cluster);
        if (pd->pd_ops && pd->pd)
            pd->pd_ops->destroy(pd->pd);
        pd->pd = NULL;
        pd->cluster = eco_cluster_create();
        int type = eco_catalog_find("V100");
        for (size_t i = 0; pd->cluster && i < pd->n_nodes; i++)
            eco_cluster_add_nodes(pd->cluster, 1,
                                  pd->nodes[i].gres_gpus ? pd->nodes[i].gres_gpus : 1, type, &err);
        const char *params = NULL;
        pd->pd_ops = eco_powerdown_find(pd->forecast, &params);
        if (pd->cluster && pd->pd_ops)
            pd->pd = pd->pd_ops->create(pd->cluster, params, &err);
        if (!pd->pd)
            ECO_LOG(ECO_LOG_ERR, NULL, "power-down policy '%s': %s", pd->forecast, err.msg);
    }
    size_t n = pd->n_nodes;
    uint8_t *state = calloc(n ? n : 1, 1);
    double *since = calloc(n ? n : 1, sizeof *since), *times = calloc(n ? n : 1, sizeof *times);
    uint32_t *order = calloc(n ? n : 1, sizeof *order);
    struct eco_pd_decisions dec = {0};
    if (!pd->pd || !state || !since || !times || !order)
        goto out;
    struct eco_pd_view v = {.now_s = now, .cluster = pd->cluster};
    size_t ni = 0;
    for (size_t i = 0; i < n; i++) {
        const struct pnode *nd = &pd->nodes[i];
        state[i] = nd->powered_down ? ECO_NODE_OFF : ECO_NODE_ON;
        since[i] = nd->idle_since;
        if (!nd->powered_down) {
            v.free_on_gpus +=
                nd->gres_gpus - (nd->used_gpus < nd->gres_gpus ? nd->used_gpus : nd->gres_gpus);
            v.busy_gpus += nd->used_gpus;
        }
        if (nd->idle_since >= 0)
            order[ni++] = (uint32_t)i;
    }
    for (size_t a = 1; a < ni; a++) /* by idle_since (insertion sort: few idle nodes) */
        for (size_t b = a; b > 0 && since[order[b]] < since[order[b - 1]]; b--) {
            uint32_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (size_t a = 0; a < ni; a++) {
        times[a] = since[order[a]];
        json_array_append_new(idle, json_string(pd->nodes[order[a]].name));
    }
    v.node_state = state;
    v.idle_since = since;
    v.idle_nodes = order;
    v.n_idle_nodes = ni;
    v.idle_times = times;
    v.arrivals = pd->arrivals;
    v.arrived_gpus = pd->arrived_gpus;
    if (pd->pd_ops->decide(pd->pd, &v, &dec) == 0) {
        for (size_t k = 0; k < dec.n_shutdown; k++)
            json_array_append_new(off, json_string(pd->nodes[dec.shutdown[k]].name));
        for (size_t k = 0; k < dec.n_boot; k++)
            json_array_append_new(boot, json_string(pd->nodes[dec.boot[k]].name));
    }
out:
    json_object_set_new(st, "powerdown",
                        json_pack("{s:s,s:o,s:o,s:o}", "policy", pd->forecast, "idle", idle,
                                  "shutdown", off, "boot", boot));
    eco_pd_decisions_fini(&dec);
    free(state);
    free(since);
    free(times);
    free(order);
}

static json_t *nodes_json(const struct powerd *pd)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < pd->n_nodes; i++) {
        const struct pnode *nd = &pd->nodes[i];
        json_array_append_new(a, json_pack("{s:s,s:b,s:f,s:f,s:i}", "name", nd->name, "responsive",
                                           nd->up, "power_w", nd->power_w, "max_power_w",
                                           nd->max_power_w, "gpus", (int)nd->n_gpus));
    }
    return a;
}

static json_t *jobs_json(const struct powerd *pd)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < pd->n_jobs; i++) {
        const struct pjob *j = &pd->jobs[i];
        json_t *o = json_pack("{s:I,s:i,s:b,s:o}", "job_id", (json_int_t)j->id, "gpus", (int)j->n,
                              "managed", j->managed, "limit_w",
                              j->managed ? json_real(j->limit_w) : json_null());
        if (o) {
            json_object_set_new(o, "deadline_s",
                                j->deadline_s >= 0 ? json_real(j->deadline_s) : json_null());
            json_object_set_new(o, "measured_speed",
                                isfinite(j->speed) ? json_real(j->speed) : json_null());
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* ---- capping metrics ---------------------------------------------------------------------- */

/* One metrics period ending now: the nodes' measured GPU power (a silent node counted at its
 * maximum draw, as the allocation sets it aside), the budget in force, the demand if every
 * running job's GPUs drew their maximum limit, and settling when the budget changed or a job
 * started since the last sample. The period's length is the time since the last sample (the
 * control period for the first). */
static void metrics_sample(struct powerd *pd, double now, double budget)
{
    double power = 0, demand = 0;
    for (size_t i = 0; i < pd->n_nodes; i++) {
        const struct pnode *nd = &pd->nodes[i];
        power += nd->up ? nd->power_w : nd->max_power_w;
    }
    demand = power;
    bool settling = pd->met_last_t >= 0 && budget != pd->met_budget_w;
    for (size_t k = 0; k < pd->n_jobs; k++) {
        struct pjob *j = &pd->jobs[k];
        if (!j->running)
            continue;
        settling |= !j->metered;
        j->metered = true;
        for (unsigned g = 0; g < j->n; g++) {
            const struct pnode *nd = &pd->nodes[j->node[g]];
            if (nd->up && j->gpu[g] < nd->n_gpus)
                demand += fmax(0, nd->gpu[j->gpu[g]].max_w - nd->gpu[j->gpu[g]].power_w);
        }
    }
    if (pd->met_last_t < 0)
        pd->met_logged_t = now; /* the first log line after METRICS_LOG_S */
    double dt = pd->met_last_t >= 0 ? now - pd->met_last_t : pd->period_s;
    pd->met_last_t = now;
    pd->met_budget_w = budget;
    if (eco_cap_metrics_add(&pd->met, dt, power, budget, demand, settling) < 0)
        ECO_LOG(ECO_LOG_WARN, NULL, "metrics: period skipped (power %g W, demand %g W, %g s)", power, demand,
              dt);
}

static json_t *metrics_json(const struct powerd *pd)
{
    struct eco_cap_metrics_report r;
    eco_cap_metrics_report(&pd->met, &r);
    return json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "periods",
                     (json_int_t)r.periods, "binding_periods", (json_int_t)r.binding_periods,
                     "settling_periods", (json_int_t)r.settling_periods, "above_periods",
                     (json_int_t)r.above_periods, "mae_binding_pct", r.mae_binding_pct,
                     "mae_all_pct", r.mae_all_pct, "overshoot_pct", r.overshoot_pct,
                     "overshoot_raw_pct", r.overshoot_raw_pct, "above_s", r.above_s, "above_kwh",
                     r.above_kwh, "above_share", r.above_share);
}

static void metrics_log(const struct powerd *pd)
{
    struct eco_cap_metrics_report r;
    eco_cap_metrics_report(&pd->met, &r);
    ECO_LOG(ECO_LOG_INFO, NULL,
          "metrics: %" PRIu64 " periods (%" PRIu64 " binding, %" PRIu64 " settling): MAE %.3f%% "
          "binding, %.3f%% all; overshoot %.3f%% settled, %.3f%% raw; above budget %.0f s, "
          "%.4f kWh, %.3f of periods",
          r.periods, r.binding_periods, r.settling_periods, r.mae_binding_pct, r.mae_all_pct,
          r.overshoot_pct, r.overshoot_raw_pct, r.above_s, r.above_kwh, r.above_share);
}

static void period(struct powerd *pd)
{
    double now = eco_mono_s();
    pthread_mutex_lock(&pd->lock);
    double budget = pd->budget_w;
    pthread_mutex_unlock(&pd->lock);
    json_t *st = json_object();
    bool slurm_ok = read_nodes(pd, now) == 0;
    read_node_power(pd);
    slurm_ok = slurm_ok && read_jobs(pd) == 0;
    if (slurm_ok) {
        metrics_sample(pd, now, budget);
        allocate(pd, budget, st);
        if (pd->weights)
            update_weights(pd);
        powerdown(pd, now, st);
    } else {
        ECO_LOG(ECO_LOG_WARN, NULL, "Slurm did not answer (squeue/sinfo --json); limits left as they are");
    }
    json_object_set_new(st, "slurm", json_boolean(slurm_ok));
    json_object_set_new(st, "nodes", nodes_json(pd));
    json_object_set_new(st, "jobs", jobs_json(pd));
    json_object_set_new(st, "arrivals", json_integer((json_int_t)pd->arrivals));
    json_object_set_new(st, "metrics", metrics_json(pd));
    if (pd->met_last_t >= 0 && now - pd->met_logged_t >= METRICS_LOG_S) {
        metrics_log(pd);
        pd->met_logged_t = now;
    }
    pthread_mutex_lock(&pd->lock);
    json_decref(pd->status);
    pd->status = st;
    pthread_mutex_unlock(&pd->lock);
}

/* ---- API ---------------------------------------------------------------------------------- */

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
        json_t *o = json_deep_copy(pd->status ? pd->status : json_object());
        json_object_set_new(o, "budget_w", json_real(pd->budget_w));
        json_object_set_new(o, "period_s", json_real(pd->period_s));
        pthread_mutex_unlock(&pd->lock);
        return eco_http_reply(c, 200, o);
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
    return eco_http_fail(c, 404, NULL, "no such path (GET /v1/status, POST /v1/budget)");
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

static int listen_unix(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        eco_cli_err("powerd: --socket %s: path too long", path);
        return -1;
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0) {
        eco_cli_err("powerd: --socket %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    chmod(path, 0666); /* anyone may read the status; POST /v1/budget checks the caller */
    return fd;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ecosched powerd --budget WATTS [OPTIONS]\n\n"
            "Cluster GPU power controller beside Slurm: every period it reads the running jobs\n"
            "(squeue --json) and nodes (sinfo --json), each node's GPU power from its ecoschedd,\n"
            "splits the budget among the jobs' GPUs with the power-capping allocator and sends\n"
            "the limits to the node daemons. A node whose daemon does not answer keeps its\n"
            "limits; its maximum draw is set aside from the budget. docs/slurm.md.\n\n"
            "options:\n"
            "  --budget WATTS     GPU power budget of the cluster (change it at runtime with\n"
            "                     'ecosched power budget WATTS')\n"
            "  --period SECONDS   control period (default 5)\n"
            "  --nodes PATTERN    where each node's ecoschedd answers; %%n is the node name: a\n"
            "                     unix socket path or an http:// URL (default\n"
            "                     /run/ecosched/%%n.sock)\n"
            "  --socket PATH      API socket (default %s)\n"
            "  --power-down P     power-down policy for 'ecosched power suspend' (default\n"
            "                     forecast; docs/policies/power-down.md)\n"
            "  --policy P[:PARAMS]  power capper of the family `ecosched sim --power-policy`\n"
            "                     takes (default " DEFAULT_CAPPER "; ecosched sim --help lists them)\n"
            "  --no-weights       leave Slurm's node Weight alone\n"
            "  -h, --help         this help\n",
            ECO_POWERD_SOCKET);
}

static int parse_pos(const char *opt, const char *s, double max, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !isfinite(v) || v <= 0 || v > max) {
        eco_cli_err("powerd: %s must be a number > 0 and <= %g, got '%s'", opt, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int eco_cmd_powerd(int argc, char **argv)
{
    eco_log_setup("powerd", false);
    static const struct option longopts[] = {{"budget", required_argument, NULL, 'b'},
                                             {"period", required_argument, NULL, 'p'},
                                             {"nodes", required_argument, NULL, 'n'},
                                             {"socket", required_argument, NULL, 's'},
                                             {"power-down", required_argument, NULL, 'd'},
                                             {"no-weights", no_argument, NULL, 'W'},
                                             {"policy", required_argument, NULL, 'P'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct powerd pd = {.socket = ECO_POWERD_SOCKET,
                        .node_pattern = "/run/ecosched/%n.sock",
                        .forecast = "forecast",
                        .period_s = 5,
                        .met_last_t = -1,
                        .policy = DEFAULT_CAPPER,
                        .weights = true};
    int c, rc = ECO_EXIT_FAIL, fd = -1;
    struct MHD_Daemon *mhd = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (parse_pos("--budget", optarg, 1e9, &pd.budget_w) < 0)
                return ECO_EXIT_USAGE;
            break;
        case 'p':
            if (parse_pos("--period", optarg, 3600, &pd.period_s) < 0)
                return ECO_EXIT_USAGE;
            break;
        case 'n':
            pd.node_pattern = optarg;
            break;
        case 's':
            pd.socket = optarg;
            break;
        case 'd':
            pd.forecast = optarg;
            break;
        case 'W':
            pd.weights = false;
            break;
        case 'P':
            pd.policy = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return ECO_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        eco_cli_err("powerd: unexpected argument '%s'", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (pd.budget_w <= 0) {
        eco_cli_err("powerd: --budget WATTS is required");
        return ECO_EXIT_USAGE;
    }
    const char *params;
    if (!eco_powerdown_find(pd.forecast, &params)) {
        eco_cli_err("powerd: --power-down: unknown policy '%s'", pd.forecast);
        return ECO_EXIT_USAGE;
    }
    struct eco_error perr = {{0}};
    if (!(pd.capper = eco_capper_create(pd.policy, &perr))) {
        eco_cli_err("powerd: --policy: %s", perr.msg);
        return ECO_EXIT_USAGE;
    }
    eco_rng_init(&pd.rng, (uint64_t)time(NULL));
    pd.last_budget_w = pd.budget_w;
    if (!strstr(pd.node_pattern, "%n")) {
        eco_capper_destroy(pd.capper);
        eco_cli_err("powerd: --nodes must contain %%n (the node name), got '%s'", pd.node_pattern);
        return ECO_EXIT_USAGE;
    }
    pthread_mutex_init(&pd.lock, NULL);
    pd.nodes = calloc(MAX_NODES, sizeof *pd.nodes);
    pd.jobs = calloc(MAX_JOBS, sizeof *pd.jobs);
    if (!pd.nodes || !pd.jobs)
        goto out;
    if ((fd = listen_unix(pd.socket)) < 0)
        goto out;
    mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, &pd,
                           MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_NOTIFY_COMPLETED,
                           on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
                           MHD_OPTION_END);
    if (!mhd) {
        eco_cli_err("powerd: libmicrohttpd would not start on %s", pd.socket);
        goto out;
    }
    fd = -1;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    ECO_LOG(ECO_LOG_INFO, NULL, "budget %.0f W, period %g s, capper %s, nodes at %s, API on %s", pd.budget_w,
          pd.period_s, pd.policy, pd.node_pattern, pd.socket);
    while (!stop_flag) {
        double t0 = eco_mono_s();
        period(&pd);
        double left = pd.period_s - (eco_mono_s() - t0);
        while (left > 0 && !stop_flag) {
            struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
            nanosleep(&ts, NULL);
            left -= 0.1;
        }
    }
    metrics_log(&pd);
    ECO_LOG(ECO_LOG_INFO, NULL, "stopping");
    rc = 0;
out:
    if (mhd)
        MHD_stop_daemon(mhd);
    if (fd >= 0)
        close(fd);
    if (pd.socket)
        unlink(pd.socket);
    if (pd.pd)
        pd.pd_ops->destroy(pd.pd);
    eco_cluster_destroy(pd.cluster);
    eco_capper_destroy(pd.capper);
    json_decref(pd.status);
    free(pd.nodes);
    free(pd.jobs);
    pthread_mutex_destroy(&pd.lock);
    return rc;
}
