/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`: Slurm (sinfo, squeue --json, scontrol) and the node daemons (/v1/node,
 * /v1/node/limits, or /v1/node/budget and /v1/gpus/N/limit of older ones) once a period: what the
 * allocation step reads and what it decided. */
#define _GNU_SOURCE
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
#include "powerd.h"
#include "slurm_int.h"
#include "util/log.h"
#include "util/clock.h"
#include "util/munge_auth.h"

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
int eco_powerd__read_nodes(struct powerd *pd, double now)
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

/* Node nd's answer o (status st, err e when o is NULL) to GET /v1/node. */
static void take_node(struct pnode *nd, json_t *o, long st, const struct eco_error *e)
{
    bool was_up = nd->up;
    nd->up = o && st == 200;
    if (!nd->up) {
        /* a refusal says why (a node's cluster listener: "HTTP 401: credential replayed") */
        const char *refusal = json_string_value(json_object_get(o, "error"));
        char why[ECO_ERROR_MSG_MAX];
        snprintf(why, sizeof why, "HTTP %ld: %s", st, refusal ? refusal : "bad answer");
        if (was_up || !nd->down_logged)
            ECO_LOG(ECO_LOG_WARN, NULL,
                    "node %s: no answer from its ecoschedd (%s): its limits stay, "
                    "its maximum draw (%.0f W) is set aside",
                    nd->name, o ? why : e->msg, nd->max_power_w);
        nd->down_logged = true; /* down since powerd started: logged once, not every period */
        nd->legacy_periods = 0; /* back, it may be a newer ecoschedd: asked again */
        return;
    }
    if (!was_up && nd->down_logged)
        ECO_LOG(ECO_LOG_INFO, NULL, "node %s: its ecoschedd answers again", nd->name);
    nd->seen = true;
    /* the share it holds (a lease of powerd's before a restart of it); 0: none */
    nd->held_w = json_number_value(json_object_get(json_object_get(o, "fallback"), "fallback_w"));
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
    json_t *sj = json_object_get(o, "slurm_jobs"), *s;
    nd->n_sjob = 0;
    json_array_foreach(sj, k, s)
    {
        json_t *id = json_object_get(s, "job_id"), *en = json_object_get(s, "energy_j");
        json_t *run = json_object_get(s, "id");
        if (nd->n_sjob >= MAX_GPUS || !json_is_integer(id) || !json_is_integer(run) ||
            !json_is_number(en))
            continue;
        nd->sjob[nd->n_sjob].id = (int64_t)json_integer_value(id);
        nd->sjob[nd->n_sjob].run = (int64_t)json_integer_value(run);
        nd->sjob[nd->n_sjob++].energy_j = json_number_value(en);
    }
}

static long timeout_ms(const struct powerd *pd)
{
    double s = pd->node_timeout_s > 0 ? pd->node_timeout_s : NODE_TIMEOUT_S;
    long ms = lround(s * 1000);
    return ms > 0 ? ms : 1;
}

/* Room for one "Authorization: MUNGE CRED" line: a credential of the payload is under 1 KiB. */
#define NODE_AUTH_MAX (ECO_MUNGE_AUTH_CRED_MAX + 64)

/* One signer's share of a batch: calls first, first + step, ... signed over m into block; the
 * first failure kept in err. */
struct signer {
    struct eco_munge *m;
    struct eco_http_call *calls;
    char *block;
    size_t n, first, step;
    bool failed;
    struct eco_error err;
};

static void *sign_some(void *arg)
{
    struct signer *s = arg;
    for (size_t i = s->first; i < s->n; i += s->step) {
        struct eco_error err = {{0}};
        char *hdr = s->block + i * NODE_AUTH_MAX;
        const char *body = s->calls[i].body;
        if (eco_munge_header(s->m, body ? "POST" : "GET", s->calls[i].path, body,
                             body ? strlen(body) : 0, hdr, NODE_AUTH_MAX, &err) == 0)
            s->calls[i].auth = hdr;
        else if (!s->failed && (s->failed = true))
            s->err = err;
    }
    return NULL;
}

/* Just before a batch is sent: with --node-auth munge, a fresh credential for each call (munged
 * refuses one used twice), made on POWERD_SIGNERS threads for a large batch, in the block
 * returned (the caller's to free, NULL without --node-auth munge or out of memory); every call
 * gets --node-ca. A call whose credential cannot be made goes without (its node answers 401);
 * the first failure of a batch is logged. */
static char *sign_calls(const struct powerd *pd, struct eco_http_call *calls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        calls[i].ca_file = pd->node_ca;
    if (!pd->munge[0] || !n)
        return NULL;
    char *block = malloc(n * NODE_AUTH_MAX);
    if (!block) {
        ECO_LOG(ECO_LOG_ERR, NULL, "node requests without a MUNGE credential: out of memory");
        return NULL;
    }
    struct signer sg[POWERD_SIGNERS];
    pthread_t th[POWERD_SIGNERS];
    bool started[POWERD_SIGNERS] = {false};
    size_t k = 1;
    while (n >= POWERD_SIGN_THREADED_MIN && k < POWERD_SIGNERS && pd->munge[k])
        k++;
    for (size_t t = 0; t < k; t++)
        sg[t] = (struct signer){
            .m = pd->munge[t], .calls = calls, .block = block, .n = n, .first = t, .step = k};
    /* a thread that cannot start leaves its share to the calling thread's pass after */
    for (size_t t = 1; t < k; t++)
        started[t] = pthread_create(&th[t], NULL, sign_some, &sg[t]) == 0;
    sign_some(&sg[0]);
    for (size_t t = 1; t < k; t++) {
        if (started[t]) {
            pthread_join(th[t], NULL);
        } else {
            sg[t].m = pd->munge[0];
            sign_some(&sg[t]);
        }
    }
    for (size_t t = 0; t < k; t++)
        if (sg[t].failed) {
            ECO_LOG(ECO_LOG_ERR, NULL, "node requests without a MUNGE credential: %s",
                    sg[t].err.msg);
            break;
        }
    return block;
}

/* The pre-signer: pr->n credentials of GET /v1/node over the last munged connection. */
static void *presign_run(void *arg)
{
    struct powerd *pd = arg;
    struct powerd_presign *pr = &pd->presign;
    struct eco_error err = {{0}};
    for (pr->made = 0; pr->made < pr->n; pr->made++)
        if (eco_munge_header(pd->munge[POWERD_SIGNERS], "GET", "/v1/node", NULL, 0,
                             pr->block + pr->made * NODE_AUTH_MAX, NODE_AUTH_MAX, &err) < 0)
            break; /* the rest is made when needed, and the failure logged then */
    pr->made_at = eco_mono_s();
    return NULL;
}

static void presign_join(struct powerd *pd)
{
    if (pd->presign.running)
        pthread_join(pd->presign.th, NULL);
    pd->presign.running = false;
}

/* Starts making n reading credentials for the next period (with --node-auth munge and a
 * period short enough for them to stay fresh); without memory or a thread, none. */
static void presign_start(struct powerd *pd, size_t n)
{
    struct powerd_presign *pr = &pd->presign;
    if (!pd->munge[POWERD_SIGNERS] || !n || pd->period_s > POWERD_PRESIGN_MAX_AGE_S)
        return;
    free(pr->block);
    pr->made = 0;
    pr->n = n;
    if (!(pr->block = malloc(n * NODE_AUTH_MAX)))
        return;
    pr->running = pthread_create(&pr->th, NULL, presign_run, pd) == 0;
}

/* The reading's credentials: those made ahead when there are enough and they are fresh (the
 * block returned, the caller's to free), else made now (sign_calls). */
static char *reading_auth(struct powerd *pd, struct eco_http_call *calls, size_t n)
{
    struct powerd_presign *pr = &pd->presign;
    presign_join(pd);
    if (!pr->block || pr->made < n || eco_mono_s() - pr->made_at > POWERD_PRESIGN_MAX_AGE_S)
        return sign_calls(pd, calls, n);
    for (size_t i = 0; i < n; i++) {
        calls[i].ca_file = pd->node_ca;
        calls[i].auth = pr->block + i * NODE_AUTH_MAX;
    }
    char *block = pr->block;
    pr->block = NULL;
    pr->made = 0;
    return block;
}

void eco_powerd__nodes_fini(struct powerd *pd)
{
    presign_join(pd);
    free(pd->presign.block);
    pd->presign.block = NULL;
    pd->presign.made = 0;
}

/* GET /v1/node of every node daemon, all at once; the next period's credentials are made
 * meanwhile (with --node-auth munge). */
void eco_powerd__read_node_power(struct powerd *pd)
{
    struct eco_http_call *calls = calloc(pd->n_nodes ? pd->n_nodes : 1, sizeof *calls);
    if (!calls) {
        ECO_LOG(ECO_LOG_ERR, NULL, "node daemons not read: out of memory");
        return;
    }
    for (size_t i = 0; i < pd->n_nodes; i++)
        calls[i] = (struct eco_http_call){.endpoint = pd->nodes[i].endpoint, .path = "/v1/node"};
    char *auth = reading_auth(pd, calls, pd->n_nodes);
    presign_start(pd, pd->n_nodes);
    eco_http_json_all(calls, pd->n_nodes, ECO_HTTP_PARALLEL, timeout_ms(pd));
    free(auth);
    for (size_t i = 0; i < pd->n_nodes; i++) {
        take_node(&pd->nodes[i], calls[i].answer, calls[i].status, &calls[i].err);
        json_decref(calls[i].answer);
    }
    free(calls);
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
int eco_powerd__read_jobs(struct powerd *pd)
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
        eco_powerd__defer_job(pd, o, (double)now);
        if (strcmp(state, "RUNNING"))
            continue;
        struct pjob *pj = job_get(pd, id);
        if (!pj)
            continue;
        pj->seen_now = pj->running = true;
        pj->n = 0;
        const char *user = json_string_value(json_object_get(o, "user_name"));
        snprintf(pj->user, sizeof pj->user, "%s", user ? user : "");
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
    eco_powerd__defer_sweep(pd, (double)now);
    json_decref(j);
    return 0;
}

/* The limits a period wants (node, GPU, watts), sorted by node and GPU before they are sent. */
struct limits {
    struct limit {
        uint32_t node, gpu;
        double w;
    } * v;
    size_t n, cap;
};

static void want_limit(struct limits *l, uint32_t node, uint32_t g, double w)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        struct limit *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            ECO_LOG(ECO_LOG_ERR, NULL, "node %" PRIu32 " GPU %" PRIu32 ": out of memory", node, g);
            return;
        }
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = (struct limit){.node = node, .gpu = g, .w = w};
}

static int limit_cmp(const void *a, const void *b)
{
    const struct limit *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

/* Sorted by node and GPU, one limit per GPU: the lowest, where two jobs sharing a GPU were
 * decided apart (the budget holds with either). */
static void sort_limits(struct limits *l)
{
    size_t m = 0;
    if (l->n)
        qsort(l->v, l->n, sizeof *l->v, limit_cmp);
    for (size_t i = 0; i < l->n; i++)
        if (!m || l->v[m - 1].node != l->v[i].node || l->v[m - 1].gpu != l->v[i].gpu)
            l->v[m++] = l->v[i];
    l->n = m;
}

/* The requests of one batch, sent together (eco_http_json_all): a node's lease and limits in
 * one (POST /v1/node/limits), or, to a node daemon without that route, its lease (POST
 * /v1/node/budget) and each GPU's limit (POST /v1/gpus/N/limit) apart. */
enum req_kind { REQ_NODE, REQ_LEASE, REQ_GPU };
struct batch {
    struct req {
        enum req_kind kind;
        uint32_t node;
        size_t lim, n_lim; /* the node's limits in struct limits: v[lim..lim + n_lim) */
        bool lease;        /* REQ_NODE: its lease is in the body */
        char path[32];
        char *body; /* malloc'd */
    } * r;
    struct eco_http_call *calls;
    size_t n, cap;
};

/* Room for a REQ_NODE body: {"limits_w":{...}} of MAX_GPUS limits ("63":1000,), a lease. */
#define NODE_BODY_MAX (MAX_GPUS * 16 + 128)

static struct req *batch_add(struct batch *b, enum req_kind kind, uint32_t node)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        struct req *r = realloc(b->r, cap * sizeof *r);
        if (!r)
            return NULL;
        b->r = r, b->cap = cap;
    }
    struct req *x = &b->r[b->n];
    *x = (struct req){.kind = kind, .node = node};
    if (!(x->body = malloc(kind == REQ_NODE ? NODE_BODY_MAX : 96)))
        return NULL;
    b->n++;
    return x;
}

/* The lease request of node nd (POST /v1/node/budget), or its lease and limits
 * l->v[lim..lim + n_lim) in one (POST /v1/node/limits). */
static void add_node(struct batch *b, const struct powerd *pd, uint32_t i, bool lease,
                     const struct limits *l, size_t lim, size_t n_lim, enum req_kind kind)
{
    const struct pnode *nd = &pd->nodes[i];
    struct req *x = batch_add(b, kind, i);
    if (!x) {
        ECO_LOG(ECO_LOG_ERR, NULL, "node %s: lease and limits not sent: out of memory", nd->name);
        return;
    }
    x->lease = lease, x->lim = lim, x->n_lim = n_lim;
    if (kind == REQ_LEASE) {
        snprintf(x->path, sizeof x->path, "/v1/node/budget");
        snprintf(x->body, 96, "{\"fallback_w\":%.1f,\"lease_s\":%g}", nd->share_w,
                 pd->node_lease_s);
        return;
    }
    size_t o = (size_t)snprintf(x->body, NODE_BODY_MAX, "{\"limits_w\":{");
    for (size_t k = 0; k < n_lim; k++)
        o += (size_t)snprintf(x->body + o, NODE_BODY_MAX - o, "%s\"%" PRIu32 "\":%.0f",
                              k ? "," : "", l->v[lim + k].gpu, l->v[lim + k].w);
    if (lease)
        o += (size_t)snprintf(x->body + o, NODE_BODY_MAX - o,
                              "},\"fallback_w\":%.1f,\"lease_s\":%g}", nd->share_w,
                              pd->node_lease_s);
    else
        snprintf(x->body + o, NODE_BODY_MAX - o, "}}");
    snprintf(x->path, sizeof x->path, "/v1/node/limits");
}

/* Each limit of l->v[lim..lim + n) of node i as its own request (POST /v1/gpus/N/limit). */
static void add_gpus(struct batch *b, uint32_t i, const struct limits *l, size_t lim, size_t n)
{
    for (size_t k = lim; k < lim + n; k++) {
        struct req *x = batch_add(b, REQ_GPU, i);
        if (!x) {
            ECO_LOG(ECO_LOG_ERR, NULL, "node %" PRIu32 " GPU %" PRIu32 ": out of memory", i,
                    l->v[k].gpu);
            return;
        }
        x->lim = k, x->n_lim = 1;
        snprintf(x->path, sizeof x->path, "/v1/gpus/%" PRIu32 "/limit", l->v[k].gpu);
        snprintf(x->body, 96, "{\"power_limit_w\":%.0f}", l->v[k].w);
    }
}

/* Sends the batch's requests at once; their answers stay in b->calls. */
static void batch_send(struct powerd *pd, struct batch *b)
{
    if (!b->n)
        return;
    if (!(b->calls = calloc(b->n, sizeof *b->calls))) {
        ECO_LOG(ECO_LOG_ERR, NULL, "%zu node requests not sent: out of memory", b->n);
        return;
    }
    for (size_t i = 0; i < b->n; i++)
        b->calls[i] = (struct eco_http_call){.endpoint = pd->nodes[b->r[i].node].endpoint,
                                             .path = b->r[i].path,
                                             .body = b->r[i].body};
    char *auth = sign_calls(pd, b->calls, b->n);
    eco_http_json_all(b->calls, b->n, ECO_HTTP_PARALLEL, timeout_ms(pd));
    free(auth);
}

static void batch_fini(struct batch *b)
{
    for (size_t i = 0; b->calls && i < b->n; i++)
        json_decref(b->calls[i].answer);
    for (size_t i = 0; i < b->n; i++)
        free(b->r[i].body);
    free(b->calls);
    free(b->r);
}

/* Why call k of b failed: the node's refusal, else the transport's. */
static const char *why(const struct batch *b, size_t k)
{
    const char *e = json_string_value(json_object_get(b->calls[k].answer, "error"));
    return e ? e : b->calls[k].answer ? "bad answer" : b->calls[k].err.msg;
}

static bool call_ok(const struct batch *b, size_t k)
{
    return b->calls && b->calls[k].answer && b->calls[k].status == 200;
}

/* The answer to a lease (call k of b): held_w follows what the node took; a node whose lease
 * fails is logged when it starts failing, never every period. */
static void took_lease(struct pnode *nd, const struct batch *b, size_t k)
{
    bool ok = call_ok(b, k);
    if (ok)
        nd->held_w = nd->share_w;
    if (!ok && !nd->lease_failing)
        ECO_LOG(ECO_LOG_WARN, NULL,
                "node %s: lease (fallback %.0f W) not renewed: %s (logged again only once it "
                "takes one)",
                nd->name, nd->share_w, b->calls ? why(b, k) : "out of memory");
    nd->lease_failing = !ok;
}

/* The answer to limits (call k of b, its first limit x): res[node] 1 taken, 2 failed this
 * period (a failed one wins); a node's first failure is logged with its first GPU's. */
static void took_limits(struct powerd *pd, uint8_t *res, const struct batch *b, size_t k,
                        const struct limit *x)
{
    struct pnode *nd = &pd->nodes[x->node];
    bool ok = call_ok(b, k);
    if (!ok && !nd->limit_failing && (!res || res[x->node] != 2))
        ECO_LOG(ECO_LOG_WARN, NULL,
                "node %s GPU %" PRIu32 ": limit %.0f W not set: %s (logged again only once "
                "its limits are taken)",
                nd->name, x->gpu, x->w, b->calls ? why(b, k) : "out of memory");
    if (res && (!ok || !res[x->node]))
        res[x->node] = ok ? 1 : 2;
}

/* A node daemon answered 404 to POST /v1/node/limits (an ecoschedd older than the route): it
 * gets its lease and limits one request each for LEGACY_PERIODS periods, then is asked again
 * (or sooner, once it stops answering: a restart may be its upgrade). Logged once. */
static void node_legacy(struct pnode *nd)
{
    if (!nd->legacy_logged)
        ECO_LOG(ECO_LOG_INFO, NULL,
                "node %s: its ecoschedd has no POST /v1/node/limits (an older version): its "
                "lease and limits go one request each",
                nd->name);
    nd->legacy_logged = true;
    nd->legacy_periods = LEGACY_PERIODS;
}

/* GPUs of answering nodes that no running job holds go back to their default limit (a limit
 * sent for a job that ended in the meantime, after its epilog restored it). */
static void restore_free_gpus(struct powerd *pd, struct limits *l)
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
                want_limit(l, (uint32_t)i, g, nd->gpu[g].default_w);
        }
    }
}

/* The period's limits: each decided job's where it differs, then the free GPUs' defaults. */
static void period_limits(struct powerd *pd, struct limits *l)
{
    for (size_t k = 0; k < pd->n_jobs; k++) {
        struct pjob *j = &pd->jobs[k];
        for (unsigned g = 0; j->decided && g < j->n; g++) {
            struct pnode *nd = &pd->nodes[j->node[g]];
            if (fabs(nd->gpu[j->gpu[g]].limit_w - j->limit_w) >= 1.0)
                want_limit(l, j->node[g], j->gpu[g], j->limit_w);
        }
    }
    restore_free_gpus(pd, l);
    sort_limits(l);
}

/* The first batch's answers: a node request answered 404 (an older node daemon) moves to the
 * per-GPU requests, its lease to the second batch; one refused (400: a limit out of the range
 * the node now has) still has its lease renewed alone in the second batch. */
static void first_answers(struct powerd *pd, uint8_t *res, struct batch *b1, struct batch *b2,
                          struct batch *b3, const struct limits *l)
{
    for (size_t k = 0; k < b1->n; k++) {
        const struct req *x = &b1->r[k];
        struct pnode *nd = &pd->nodes[x->node];
        long st = b1->calls ? b1->calls[k].status : 0;
        if (x->kind == REQ_LEASE) {
            took_lease(nd, b1, k);
            continue;
        }
        if (st == 404) {
            node_legacy(nd);
            if (x->lease)
                add_node(b2, pd, x->node, true, l, 0, 0, REQ_LEASE);
            add_gpus(b3, x->node, l, x->lim, x->n_lim);
            continue;
        }
        if (nd->legacy_logged && st == 200) {
            ECO_LOG(ECO_LOG_INFO, NULL, "node %s: its ecoschedd takes POST /v1/node/limits now",
                    nd->name);
            nd->legacy_logged = false;
        }
        if (x->lease && st == 400)
            add_node(b2, pd, x->node, true, l, 0, 0, REQ_LEASE);
        else if (x->lease)
            took_lease(nd, b1, k);
        if (x->n_lim)
            took_limits(pd, res, b1, k, &l->v[x->lim]);
    }
}

void eco_powerd__send_nodes(struct powerd *pd)
{
    struct limits l = {0};
    struct batch b1 = {0}, b2 = {0}, b3 = {0};
    period_limits(pd, &l);
    for (size_t i = 0, k = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        size_t lim = k;
        while (k < l.n && l.v[k].node == i)
            k++;
        bool lease = nd->up && nd->share_w > 0;
        if (k == lim && !lease)
            continue;
        if (nd->legacy_periods > 0) { /* the lease first, then the limits (third batch) */
            nd->legacy_periods--;
            if (lease)
                add_node(&b1, pd, (uint32_t)i, true, &l, 0, 0, REQ_LEASE);
            add_gpus(&b3, (uint32_t)i, &l, lim, k - lim);
        } else {
            add_node(&b1, pd, (uint32_t)i, lease, &l, lim, k - lim, REQ_NODE);
        }
    }
    /* per node: limits failed this period (2), taken (1), none sent (0) */
    uint8_t *res = calloc(pd->n_nodes ? pd->n_nodes : 1, 1);
    batch_send(pd, &b1);
    first_answers(pd, res, &b1, &b2, &b3, &l);
    batch_send(pd, &b2);
    for (size_t k = 0; k < b2.n; k++)
        took_lease(&pd->nodes[b2.r[k].node], &b2, k);
    batch_send(pd, &b3);
    for (size_t k = 0; k < b3.n; k++)
        took_limits(pd, res, &b3, k, &l.v[b3.r[k].lim]);
    for (size_t i = 0; res && i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        if (res[i] == 1 && nd->limit_failing)
            ECO_LOG(ECO_LOG_INFO, NULL, "node %s: its ecoschedd takes limits again", nd->name);
        if (res[i])
            nd->limit_failing = res[i] == 2;
    }
    free(res);
    batch_fini(&b1);
    batch_fini(&b2);
    batch_fini(&b3);
    free(l.v);
}

/* Slurm's Weight per node: class by warmth, then idle draw per GPU (watts). */
void eco_powerd__update_weights(struct powerd *pd)
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
