/* SPDX-License-Identifier: MIT */
/* Node power-down policies: none (always on), idle:SECONDS (Slurm power_save semantics) and
 * forecast (a warm reserve sized from recent demand). docs/policies/power-down.md. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/policy.h"

/* Slurm's power_save defaults (slurm.conf): ResumeRate=300 and SuspendRate=60 nodes per
 * minute. */
#define SLURM_RESUME_RATE 300
#define SLURM_SUSPEND_RATE 60

static int grow_push(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        uint32_t *p = realloc(*a, c * sizeof *p);
        if (!p)
            return -ENOMEM;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

void eco_pd_decisions_fini(struct eco_pd_decisions *d)
{
    free(d->boot);
    free(d->shutdown);
    *d = (struct eco_pd_decisions){0};
}

int eco_pd_boot(struct eco_pd_decisions *d, uint32_t node)
{
    return grow_push(&d->boot, &d->n_boot, &d->cap_boot, node);
}

int eco_pd_shutdown(struct eco_pd_decisions *d, uint32_t node)
{
    return grow_push(&d->shutdown, &d->n_shutdown, &d->cap_shutdown, node);
}

/* Per-minute rate limit, as Slurm applies ResumeRate / SuspendRate. */
struct rate {
    double minute_start_s;
    unsigned used, per_minute;
};

static unsigned rate_left(struct rate *r, double now_s)
{
    if (now_s >= r->minute_start_s + 60.0) {
        r->minute_start_s = now_s;
        r->used = 0;
    }
    return r->used < r->per_minute ? r->per_minute - r->used : 0;
}

/* Is node n an idle ON node, idle since t? */
static int idle_entry_valid(const struct eco_pd_view *v, size_t k)
{
    uint32_t n = v->idle_nodes[k];
    return v->node_state[n] == ECO_NODE_ON && v->idle_since[n] == v->idle_times[k];
}

/* Break-even idle time of node n: powering it down saves energy, its boot, shutdown and
 * power-cycle cost included, only when it stays off longer than this
 * (eco_node_group_breakeven_s). */
static double breakeven_s(const struct eco_pd_view *v, uint32_t n)
{
    const struct eco_cluster *c = v->cluster;
    return eco_node_group_breakeven_s(&c->groups[c->nodes[n].group]);
}

/* When idle entry k becomes due under `wait` s of idle time (idle:SECONDS or forecast's
 * dwell): the expected off time of a node idle for d seconds is taken as d (the time already
 * idle predicts the time still to come), so it goes down only after max(wait, break-even). */
static double due_s(const struct eco_pd_view *v, size_t k, double wait)
{
    double be = breakeven_s(v, v->idle_nodes[k]);
    return v->idle_times[k] + (wait > be ? wait : be);
}

#define MAX_TYPES 32

/* Supply for waiting jobs: GPUs of idle ON nodes and of booting nodes, in all and per GPU
 * type. Free GPUs on busy nodes are not counted: a job still waiting could not use them
 * (fragmentation). */
struct supply {
    uint64_t any;
    uint64_t type[MAX_TYPES];
};

static void add_supply(struct supply *s, const struct eco_node *node)
{
    s->any += node->gpus;
    if (node->type < MAX_TYPES)
        s->type[node->type] += node->gpus;
}

/* GPUs of idle ON nodes (the idle list's valid entries). */
static uint64_t idle_node_gpus(const struct eco_pd_view *v)
{
    uint64_t g = 0;
    for (size_t k = 0; k < v->n_idle_nodes; k++)
        if (idle_entry_valid(v, k))
            g += v->cluster->nodes[v->idle_nodes[k]].gpus;
    return g;
}

static void count_supply(const struct eco_pd_view *v, struct supply *s)
{
    memset(s, 0, sizeof *s);
    for (size_t k = 0; k < v->n_idle_nodes; k++)
        if (idle_entry_valid(v, k))
            add_supply(s, &v->cluster->nodes[v->idle_nodes[k]]);
    if (!v->booting_gpus)
        return;
    for (uint32_t n = 0; n < v->cluster->n_nodes; n++)
        if (v->node_state[n] == ECO_NODE_BOOTING)
            add_supply(s, &v->cluster->nodes[n]);
}

/* Takes g GPUs of supply for a job of type `type` (-1: any); 1 when there was enough. */
static int take_supply(struct supply *s, int type, uint64_t g)
{
    if (type >= 0 && type < MAX_TYPES) {
        if (s->type[type] < g)
            return 0;
        s->type[type] -= g;
        s->any -= g;
        return 1;
    }
    if (s->any < g)
        return 0;
    s->any -= g;
    for (size_t t = 0; t < MAX_TYPES && g > 0; t++) {
        uint64_t d = s->type[t] < g ? s->type[t] : g;
        s->type[t] -= d;
        g -= d;
    }
    return 1;
}

static int jobs_waiting(const struct eco_pd_view *v)
{
    for (size_t i = 0; i < v->queue_len; i++)
        if (v->jobs[v->queue[i]].state == ECO_JOB_QUEUED)
            return 1;
    return 0;
}

/* Boots OFF nodes for waiting jobs that the idle and booting nodes will not serve, in queue
 * order: a job that needs more GPUs (of its type, if it names one) than are coming gets
 * compatible OFF nodes, lowest index first. At most `limit` boots. */
static int wake_for_queue(const struct eco_pd_view *v, struct eco_pd_decisions *out, unsigned limit,
                          unsigned *booted, uint8_t *picked)
{
    struct supply sup;
    count_supply(v, &sup);
    *booted = 0;
    for (size_t i = 0; i < v->queue_len && *booted < limit; i++) {
        const struct eco_job *j = &v->jobs[v->queue[i]];
        if (j->state != ECO_JOB_QUEUED)
            continue;
        if (take_supply(&sup, j->gpu_type, j->gpus))
            continue;
        /* What is left of the supply it may use goes to it; boot the rest. */
        uint64_t have =
            j->gpu_type >= 0 && j->gpu_type < MAX_TYPES ? sup.type[j->gpu_type] : sup.any;
        take_supply(&sup, j->gpu_type, have);
        uint64_t need = j->gpus - have;
        for (uint32_t n = 0; n < v->cluster->n_nodes && need > 0 && *booted < limit; n++) {
            if (v->node_state[n] != ECO_NODE_OFF || picked[n])
                continue;
            if (j->gpu_type >= 0 && v->cluster->nodes[n].type != j->gpu_type)
                continue;
            int rc = eco_pd_boot(out, n);
            if (rc)
                return rc;
            picked[n] = 1;
            (*booted)++;
            uint16_t g = v->cluster->nodes[n].gpus;
            if (g >= need) {
                /* The rest of the node is supply for later jobs. */
                sup.any += g - need;
                if (v->cluster->nodes[n].type < MAX_TYPES)
                    sup.type[v->cluster->nodes[n].type] += g - need;
                need = 0;
            } else {
                need -= g;
            }
        }
    }
    return 0;
}

/* ---- none --------------------------------------------------------------------------------- */

static struct eco_powerdown *none_create(const struct eco_cluster *c, const char *params,
                                         struct eco_error *err)
{
    static char token;
    (void)c;
    if (params) {
        eco_errorf(err, -EINVAL, "--power-down: 'none' takes no parameters (got 'none:%s')",
                   params);
        return NULL;
    }
    return (struct eco_powerdown *)&token;
}

static void none_destroy(struct eco_powerdown *p)
{
    (void)p;
}

static int none_decide(struct eco_powerdown *p, const struct eco_pd_view *v,
                       struct eco_pd_decisions *out)
{
    (void)p;
    (void)v;
    (void)out;
    return 0;
}

static const struct eco_powerdown_ops none_ops = {
    .name = "none",
    .summary = "nodes stay on",
    .create = none_create,
    .destroy = none_destroy,
    .decide = none_decide,
};

/* ---- idle:SECONDS ------------------------------------------------------------------------- */

struct idle {
    double suspend_time_s;
    struct rate resume, suspend;
    uint8_t *picked;
    uint32_t n_nodes;
};

static void idle_destroy(struct eco_powerdown *p)
{
    struct idle *s = (struct idle *)p;
    if (!s)
        return;
    free(s->picked);
    free(s);
}

static struct eco_powerdown *idle_create(const struct eco_cluster *c, const char *params,
                                         struct eco_error *err)
{
    char *end = NULL;
    double t = params ? strtod(params, &end) : -1;
    if (!params || end == params || *end || !(t >= 0) || t > 1e9) {
        eco_errorf(err, -EINVAL,
                   "--power-down: expected idle:SECONDS with SECONDS a number >= 0, "
                   "e.g. idle:600 (got 'idle%s%s')",
                   params ? ":" : "", params ? params : "");
        return NULL;
    }
    struct idle *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->picked = calloc(c->n_nodes ? c->n_nodes : 1, 1);
    if (!s->picked) {
        free(s);
        return NULL;
    }
    s->n_nodes = c->n_nodes;
    s->suspend_time_s = t;
    s->resume = (struct rate){-1e300, 0, SLURM_RESUME_RATE};
    s->suspend = (struct rate){-1e300, 0, SLURM_SUSPEND_RATE};
    return (struct eco_powerdown *)s;
}

static int idle_decide(struct eco_powerdown *p, const struct eco_pd_view *v,
                       struct eco_pd_decisions *out)
{
    struct idle *s = (struct idle *)p;
    unsigned booted;
    memset(s->picked, 0, s->n_nodes);
    unsigned left = rate_left(&s->resume, v->now_s);
    int rc = wake_for_queue(v, out, left, &booted, s->picked);
    if (rc)
        return rc;
    s->resume.used += booted;
    if (jobs_waiting(v))
        return 0; /* waiting jobs may need every node that is on */
    left = rate_left(&s->suspend, v->now_s);
    for (size_t k = 0; k < v->n_idle_nodes && left > 0; k++) {
        if (!idle_entry_valid(v, k))
            continue;
        if (v->idle_times[k] + s->suspend_time_s > v->now_s)
            break; /* entries are in idle-time order */
        if (due_s(v, k, s->suspend_time_s) > v->now_s)
            continue; /* would not stay off long enough to pay for its cycle */
        if ((rc = eco_pd_shutdown(out, v->idle_nodes[k])))
            return rc;
        s->suspend.used++;
        left--;
    }
    return 0;
}

static double idle_next_wakeup(struct eco_powerdown *p, const struct eco_pd_view *v)
{
    struct idle *s = (struct idle *)p;
    if (jobs_waiting(v))
        return -1; /* the next completion or arrival brings the next pass */
    double best = -1;
    for (size_t k = 0; k < v->n_idle_nodes; k++) {
        if (!idle_entry_valid(v, k))
            continue;
        if (best >= 0 && v->idle_times[k] + s->suspend_time_s >= best)
            break; /* entries are in idle-time order: no later one is due sooner */
        double t = due_s(v, k, s->suspend_time_s);
        if (t <= v->now_s) /* due but rate-limited: try at the next minute */
            t = s->suspend.minute_start_s + 60.0;
        if (t > v->now_s && (best < 0 || t < best))
            best = t;
    }
    return best;
}

static const struct eco_powerdown_ops idle_ops = {
    .name = "idle",
    .summary = "Slurm power_save: a node idle for SECONDS shuts down; queued jobs wake nodes",
    .usage = "idle:SECONDS",
    .create = idle_create,
    .destroy = idle_destroy,
    .decide = idle_decide,
    .next_wakeup = idle_next_wakeup,
};

/* ---- forecast ----------------------------------------------------------------------------- */

/* Demand window: arrivals of the last hour size the reserve. An hour covers the bursts of the
 * ITP traces (a few to a dozen jobs per hour per cluster) while following their daily cycle. */
#define FC_WINDOW_S 3600.0
/* Reserve = margin x GPUs expected to arrive during one node boot, kept as whole idle nodes.
 * The reserve trades energy for boot waits; 0.5 is where, in the sweep of docs/results/
 * energy.md, forecast still used less energy than Slurm's idle:600 on every ITP cluster while
 * its average JCT was no higher on most of them. */
#define FC_MARGIN 0.5

/* How long an idle node beyond the reserve stays on while arrivals are frequent (see
 * FC_BUSY_ARRIVALS); in quiet periods idle nodes go at once. 900 s: on the ITP traces this
 * keeps average JCT within 0.05% of Slurm's idle:600 while using less energy (docs/results/
 * energy.md shows the sweep). */
#define FC_DWELL_S 900.0
/* Arrivals expected within one boot + shutdown above which the cluster counts as busy. */
#define FC_BUSY_ARRIVALS 0.1

struct sample {
    double t_s;
    double cum_before; /* arrived GPUs before t_s */
    double cum_gpus;   /* arrived GPUs up to and at t_s */
    uint32_t gpus;     /* the largest job that arrived at t_s */
};

struct forecast {
    double window_s, margin, dwell_s;
    struct sample *s;
    size_t head, n, cap; /* ring buffer */
    uint64_t last_arrivals;
    double last_cum;
    double boot_s, shutdown_s;
    uint8_t *picked;
    uint32_t n_nodes;
};

static void fc_destroy(struct eco_powerdown *p)
{
    struct forecast *f = (struct forecast *)p;
    if (!f)
        return;
    free(f->s);
    free(f->picked);
    free(f);
}

/* "window=SECONDS,margin=X" in any order, each optional. */
static int parse_fc_params(const char *params, double *window_s, double *margin, double *dwell_s,
                           struct eco_error *err)
{
    const char *p = params;
    while (*p) {
        double *dst;
        const char *name;
        if (!strncmp(p, "window=", 7)) {
            dst = window_s;
            name = "window";
            p += 7;
        } else if (!strncmp(p, "dwell=", 6)) {
            dst = dwell_s;
            name = "dwell";
            p += 6;
        } else if (!strncmp(p, "margin=", 7)) {
            dst = margin;
            name = "margin";
            p += 7;
        } else {
            return eco_errorf(err, -EINVAL,
                              "--power-down: forecast parameters are window=SECONDS, "
                              "margin=X and dwell=SECONDS, got 'forecast:%s'",
                              params);
        }
        char *end;
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ',') || !(v >= 0) || v > 1e9 ||
            (dst == window_s && !(v > 0)))
            return eco_errorf(err, -EINVAL,
                              "--power-down: forecast %s must be a number %s, got "
                              "'forecast:%s'",
                              name, dst == window_s ? "> 0" : ">= 0", params);
        *dst = v;
        p = *end ? end + 1 : end;
    }
    return 0;
}

static struct eco_powerdown *fc_create(const struct eco_cluster *c, const char *params,
                                       struct eco_error *err)
{
    double window_s = FC_WINDOW_S, margin = FC_MARGIN, dwell_s = FC_DWELL_S;
    if (params && parse_fc_params(params, &window_s, &margin, &dwell_s, err))
        return NULL;
    struct forecast *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->window_s = window_s;
    f->margin = margin;
    f->dwell_s = dwell_s;
    f->picked = calloc(c->n_nodes ? c->n_nodes : 1, 1);
    if (!f->picked) {
        free(f);
        return NULL;
    }
    f->n_nodes = c->n_nodes;
    for (uint16_t g = 0; g < c->n_groups; g++) {
        if (c->groups[g].boot_s > f->boot_s)
            f->boot_s = c->groups[g].boot_s;
        if (c->groups[g].shutdown_s > f->shutdown_s)
            f->shutdown_s = c->groups[g].shutdown_s;
    }
    return (struct eco_powerdown *)f;
}

static struct sample *fc_at(struct forecast *f, size_t k)
{
    return &f->s[(f->head + k) % f->cap];
}

static int fc_record(struct forecast *f, const struct eco_pd_view *v)
{
    if (v->arrivals != f->last_arrivals) {
        if (f->n == f->cap) {
            size_t cap = f->cap ? f->cap * 2 : 64;
            struct sample *s = malloc(cap * sizeof *s);
            if (!s)
                return -ENOMEM;
            for (size_t k = 0; k < f->n; k++)
                s[k] = *fc_at(f, k);
            free(f->s);
            f->s = s;
            f->cap = cap;
            f->head = 0;
        }
        f->s[(f->head + f->n) % f->cap] =
            (struct sample){v->now_s, f->last_cum, v->arrived_gpus, v->last_arrival_gpus};
        f->n++;
        f->last_cum = v->arrived_gpus;
        f->last_arrivals = v->arrivals;
    }
    while (f->n && fc_at(f, 0)->t_s <= v->now_s - f->window_s) {
        f->head = (f->head + 1) % f->cap;
        f->n--;
    }
    return 0;
}

/* GPUs to keep free and on: margin x the GPUs expected to arrive within one boot. (Keeping
 * room for the largest recent job as well was tried: on the ITP traces it costs more energy
 * than the boot waits it saves.) */
static double fc_reserve(struct forecast *f)
{
    if (!f->n)
        return 0;
    double rate = (fc_at(f, f->n - 1)->cum_gpus - fc_at(f, 0)->cum_before) / f->window_s;
    double reserve = floor(f->margin * rate * f->boot_s + 0.5);
    return reserve;
}

static int fc_decide(struct eco_powerdown *p, const struct eco_pd_view *v,
                     struct eco_pd_decisions *out)
{
    struct forecast *f = (struct forecast *)p;
    int rc = fc_record(f, v);
    if (rc)
        return rc;
    memset(f->picked, 0, f->n_nodes);
    unsigned booted;
    if ((rc = wake_for_queue(v, out, UINT32_MAX, &booted, f->picked)))
        return rc;
    double reserve = fc_reserve(f);
    double coming = (double)(v->free_on_gpus + v->booting_gpus);
    for (size_t i = 0; i < out->n_boot; i++)
        coming += v->cluster->nodes[out->boot[i]].gpus;
    if (coming < reserve) {
        /* Wake ahead of need. */
        for (uint32_t n = 0; n < v->cluster->n_nodes && coming < reserve; n++) {
            if (v->node_state[n] != ECO_NODE_OFF || f->picked[n])
                continue;
            if ((rc = eco_pd_boot(out, n)))
                return rc;
            f->picked[n] = 1;
            coming += v->cluster->nodes[n].gpus;
        }
        return 0;
    }
    if (booted || jobs_waiting(v))
        return 0;
    /* Shut idle nodes down, longest idle first, keeping the reserve of whole idle nodes (the
     * free GPUs of busy nodes serve small jobs, not whole-node ones). */
    double spare = (double)idle_node_gpus(v) - reserve;
    /* Ski rental: keeping an idle node on for its next job is worth it when the next arrival is
     * likely to come within the break-even time (a boot and a shutdown cost about what an idle
     * node draws over that long); then idle nodes stay for `dwell`, else they go at once. */
    double jobs_rate = (double)f->n / f->window_s;
    double dwell = jobs_rate * (f->boot_s + f->shutdown_s) >= FC_BUSY_ARRIVALS ? f->dwell_s : 0;
    for (size_t k = 0; k < v->n_idle_nodes; k++) {
        if (!idle_entry_valid(v, k))
            continue;
        uint32_t n = v->idle_nodes[k];
        if (v->cluster->nodes[n].gpus > spare)
            continue;
        if (v->idle_times[k] + dwell > v->now_s)
            break; /* entries are in idle-time order */
        /* Expected off time: the time already idle, or the mean time between arrivals when
         * that is longer; it must pay for the boot, the shutdown and the cycle. */
        double be = breakeven_s(v, n);
        if (!(jobs_rate <= 0 || 1 / jobs_rate >= be) && due_s(v, k, 0) > v->now_s)
            continue;
        if ((rc = eco_pd_shutdown(out, n)))
            return rc;
        spare -= v->cluster->nodes[n].gpus;
    }
    return 0;
}

/* When the oldest arrival leaves the window the reserve may shrink. */
static double fc_next_wakeup(struct eco_powerdown *p, const struct eco_pd_view *v)
{
    struct forecast *f = (struct forecast *)p;
    double best = f->n ? fc_at(f, 0)->t_s + f->window_s : -1;
    if (best <= v->now_s)
        best = -1;
    for (size_t k = 0; k < v->n_idle_nodes; k++) {
        if (!idle_entry_valid(v, k))
            continue;
        if (best >= 0 && v->idle_times[k] >= best)
            break; /* entries are in idle-time order: no later one is due sooner */
        /* Due after the dwell, or once idle for its break-even time should that hold it. */
        double t = v->idle_times[k] + f->dwell_s, tb = due_s(v, k, 0);
        if (t <= v->now_s || f->dwell_s <= 0)
            t = tb;
        if (t > v->now_s && (best < 0 || t < best))
            best = t;
    }
    return best;
}

static const struct eco_powerdown_ops forecast_ops = {
    .name = "forecast",
    .summary = "keeps a warm reserve sized from recent demand, shuts the rest down at once, "
               "wakes nodes ahead of need",
    .create = fc_create,
    .destroy = fc_destroy,
    .decide = fc_decide,
    .next_wakeup = fc_next_wakeup,
};

static const struct eco_powerdown_ops *const pd_all[] = {&none_ops, &idle_ops, &forecast_ops, NULL};

const struct eco_powerdown_ops *const *eco_powerdown_all(void)
{
    return pd_all;
}

const struct eco_powerdown_ops *eco_powerdown_find(const char *value, const char **params)
{
    const char *colon = strchr(value, ':');
    size_t len = colon ? (size_t)(colon - value) : strlen(value);
    *params = colon ? colon + 1 : NULL;
    for (size_t i = 0; pd_all[i]; i++)
        if (strlen(pd_all[i]->name) == len && !strncmp(pd_all[i]->name, value, len))
            return pd_all[i];
    return NULL;
}
