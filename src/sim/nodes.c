/* SPDX-License-Identifier: MIT */
/* Node power states (on, off, booting, shutting down) and exact energy integration: cluster
 * power is piecewise constant between events, so energy is power x time, per category, per
 * node and per job. docs/models/energy.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/clock.h"
#include "engine_internal.h"

static const struct eco_node_group *group_of(const struct engine *e, uint32_t n)
{
    return &e->c->groups[e->c->nodes[n].group];
}

void eco_nodes__job_power(const struct engine *e, const struct eco_job *j, uint32_t n,
                          double *speed, double *power_per_gpu_w)
{
    const struct eco_node_group *g = group_of(e, n);
    double limit = j->limit_w > 0 ? j->limit_w : g->limit_w;
    if (eco_power_eval(g->type, j->workload, limit, speed, power_per_gpu_w)) {
        *speed = 1;
        *power_per_gpu_w = 0;
        return;
    }
    double s, p, lo, hi, mhz = j->clock_mhz;
    /* A job on several GPU types has one clock setting: each GPU takes it clamped into its own
     * type's knob range (powerctl.c). */
    if (mhz > 0 && eco_clock_range(g->type, &lo, &hi) == 0)
        mhz = mhz < lo ? lo : mhz > hi ? hi : mhz;
    /* A locked clock: the model of docs/models/clock.md; should it draw more than the limit
     * allows, the firmware lowers the clock further and the limit's figures hold. */
    if (mhz > 0 && eco_clock_eval(g->type, j->workload, mhz, &s, &p) == 0 && p < *power_per_gpu_w) {
        *speed = s;
        *power_per_gpu_w = p;
    }
}

static struct contrib node_contrib(const struct engine *e, uint32_t n)
{
    const struct eco_node_group *g = group_of(e, n);
    struct contrib c = {0};
    switch (e->state[n]) {
    case ECO_NODE_ON:
        c.busy = e->busy_w[n];
        c.idle = (double)eco_freemap_free(e->fm, n) * g->gpu_idle_w;
        c.base = g->base_w;
        break;
    case ECO_NODE_OFF:
        c.off = g->off_w;
        break;
    default:
        /* Booting or shutting down: trans_w, by default the host on with its GPUs idle. */
        c.trans = eco_node_group_trans_w(g);
        break;
    }
    return c;
}

static double sum(const struct contrib *c)
{
    return c->busy + c->idle + c->base + c->off + c->trans;
}

double eco_nodes__power_w(const struct engine *e)
{
    return sum(&e->p);
}

void eco_nodes__advance(struct engine *e, double t)
{
    double dt = t - e->t_prev;
    if (dt <= 0)
        return;
    double p = sum(&e->p);
    if (p > e->peak_w)
        e->peak_w = p;
    if (e->pc && p > eco_powerctl__budget(e))
        e->overshoot_s += dt;
    e->en.busy += e->p.busy * dt;
    e->en.idle += e->p.idle * dt;
    e->en.base += e->p.base * dt;
    e->en.off += e->p.off * dt;
    e->en.trans += e->p.trans * dt;
    if (e->node_c)
        eco_nodes__grid(e, p, e->t_prev, t, &e->carbon_kg, &e->cost);
    e->t_prev = t;
}

static void idle_push(struct engine *e, uint32_t n, double t)
{
    if (e->idle_head + e->idle_n == e->idle_cap) {
        /* Drop stale entries, or grow. */
        size_t w = 0;
        for (size_t k = e->idle_head; k < e->idle_head + e->idle_n; k++) {
            uint32_t m = e->idle_nodes[k];
            if (e->state[m] == ECO_NODE_ON && e->idle_since[m] == e->idle_times[k]) {
                e->idle_nodes[w] = m;
                e->idle_times[w++] = e->idle_times[k];
            }
        }
        e->idle_head = 0;
        e->idle_n = w;
        if (w + 1 > e->idle_cap / 2) {
            size_t cap = e->idle_cap * 2;
            uint32_t *a = realloc(e->idle_nodes, cap * sizeof *a);
            if (a)
                e->idle_nodes = a;
            double *b = realloc(e->idle_times, cap * sizeof *b);
            if (b)
                e->idle_times = b;
            if (a && b)
                e->idle_cap = cap;
        }
        if (e->idle_n == e->idle_cap)
            return; /* out of memory: the node just is not offered for power-down */
    }
    e->idle_nodes[e->idle_head + e->idle_n] = n;
    e->idle_times[e->idle_head + e->idle_n] = t;
    e->idle_n++;
}

void eco_nodes__refresh(struct engine *e, uint32_t n, double t)
{
    struct contrib old = e->cur[n];
    e->node_e[n] += sum(&old) * (t - e->node_t[n]);
    if (e->node_c)
        eco_nodes__grid(e, sum(&old), e->node_t[n], t, &e->node_c[n], &e->node_cost[n]);
    e->node_t[n] = t;
    struct contrib now = node_contrib(e, n);
    e->p.busy += now.busy - old.busy;
    e->p.idle += now.idle - old.idle;
    e->p.base += now.base - old.base;
    e->p.off += now.off - old.off;
    e->p.trans += now.trans - old.trans;
    e->cur[n] = now;
    uint16_t f = eco_freemap_free(e->fm, n);
    int idle = e->state[n] == ECO_NODE_ON && f == e->c->nodes[n].gpus;
    if (idle && e->idle_since[n] < 0) {
        e->idle_since[n] = t;
        idle_push(e, n, t);
    } else if (!idle) {
        e->idle_since[n] = -1;
    }
}

void eco_nodes__grid(const struct engine *e, double w, double a, double b, double *kg, double *cost)
{
    const struct eco_sim_config *cfg = e->cfg;
    if (cfg->carbon)
        *kg += eco_signal_carbon_kg(cfg->carbon, w, cfg->epoch0_s + a, cfg->epoch0_s + b);
    if (cfg->price)
        *cost += eco_signal_cost(cfg->price, w, cfg->epoch0_s + a, cfg->epoch0_s + b);
}

int eco_nodes__init(struct engine *e, double t0)
{
    uint32_t nn = e->c->n_nodes;
    if (e->cfg->carbon || e->cfg->price) {
        size_t nj = e->n_jobs ? e->n_jobs : 1;
        e->node_c = calloc(nn, sizeof *e->node_c);
        e->node_cost = calloc(nn, sizeof *e->node_cost);
        e->job_c = calloc(nj, sizeof *e->job_c);
        e->job_cost = calloc(nj, sizeof *e->job_cost);
        if (!e->node_c || !e->node_cost || !e->job_c || !e->job_cost)
            return -ENOMEM;
    }
    e->state = calloc(nn, sizeof *e->state);
    e->idle_since = malloc(nn * sizeof *e->idle_since);
    e->busy_w = calloc(nn, sizeof *e->busy_w);
    e->node_e = calloc(nn, sizeof *e->node_e);
    e->node_t = malloc(nn * sizeof *e->node_t);
    e->cur = calloc(nn, sizeof *e->cur);
    e->boots = calloc(nn, sizeof *e->boots);
    e->up_s = malloc(nn * sizeof *e->up_s);
    e->idle_cap = 2 * (size_t)nn + 64;
    e->idle_nodes = malloc(e->idle_cap * sizeof *e->idle_nodes);
    e->idle_times = malloc(e->idle_cap * sizeof *e->idle_times);
    if (!e->state || !e->idle_since || !e->busy_w || !e->node_e || !e->node_t || !e->cur ||
        !e->boots || !e->up_s || !e->idle_nodes || !e->idle_times)
        return -ENOMEM;
    e->t0 = e->t_prev = t0;
    for (uint32_t n = 0; n < nn; n++) {
        e->state[n] = ECO_NODE_ON;
        e->idle_since[n] = -1;
        e->up_s[n] = -1;
        e->node_t[n] = t0;
        eco_nodes__refresh(e, n, t0);
    }
    e->nodes_powered = nn;
    return 0;
}

void eco_nodes__fini(struct engine *e)
{
    free(e->state);
    free(e->idle_since);
    free(e->busy_w);
    free(e->node_e);
    free(e->node_t);
    free(e->node_c);
    free(e->node_cost);
    free(e->job_c);
    free(e->job_cost);
    free(e->cur);
    free(e->boots);
    free(e->up_s);
    free(e->idle_nodes);
    free(e->idle_times);
}

static int shutdown_node(struct engine *e, uint32_t n, double t)
{
    uint16_t g = e->c->nodes[n].gpus;
    if (e->state[n] != ECO_NODE_ON || eco_freemap_free(e->fm, n) != g)
        return 0; /* only idle nodes that are on */
    e->state[n] = ECO_NODE_SHUTTING_DOWN;
    eco_freemap_take(e->fm, n, g);
    e->node_shutdowns++;
    e->cycle_j += group_of(e, n)->cycle_j; /* a shutdown starts a power cycle */
    eco_nodes__refresh(e, n, t);
    return eco_heap_push(&e->heap, t + group_of(e, n)->shutdown_s, EV_NODE_DOWN, n, 0);
}

static int boot_node(struct engine *e, uint32_t n, double t)
{
    if (e->state[n] != ECO_NODE_OFF)
        return 0;
    e->state[n] = ECO_NODE_BOOTING;
    e->booting_gpus += e->c->nodes[n].gpus;
    e->boots[n]++;
    e->node_boots++;
    e->nodes_powered++;
    eco_nodes__refresh(e, n, t);
    return eco_heap_push(&e->heap, t + group_of(e, n)->boot_s, EV_NODE_UP, n, 0);
}

void eco_nodes__event(struct engine *e, uint32_t kind, uint32_t n, double t)
{
    if (kind == EV_NODE_DOWN && e->state[n] == ECO_NODE_SHUTTING_DOWN) {
        e->state[n] = ECO_NODE_OFF;
        e->nodes_powered--;
        eco_nodes__refresh(e, n, t);
    } else if (kind == EV_NODE_UP && e->state[n] == ECO_NODE_BOOTING) {
        e->state[n] = ECO_NODE_ON;
        e->booting_gpus -= e->c->nodes[n].gpus;
        e->up_s[n] = t;
        eco_freemap_give(e->fm, n, e->c->nodes[n].gpus);
        eco_nodes__refresh(e, n, t);
    }
}

static void pd_view(struct engine *e, double t, struct eco_pd_view *v)
{
    while (e->idle_n) {
        uint32_t m = e->idle_nodes[e->idle_head];
        if (e->state[m] == ECO_NODE_ON && e->idle_since[m] == e->idle_times[e->idle_head])
            break;
        e->idle_head++;
        e->idle_n--;
    }
    *v = (struct eco_pd_view){
        .now_s = t,
        .cluster = e->c,
        .jobs = e->jobs,
        .queue = e->q + e->qhead,
        .queue_len = e->qn - e->qhead,
        .node_state = e->state,
        .idle_since = e->idle_since,
        .idle_nodes = e->idle_nodes + e->idle_head,
        .n_idle_nodes = e->idle_n,
        .idle_times = e->idle_times + e->idle_head,
        .free_on_gpus = eco_freemap_total_free(e->fm, -1),
        .booting_gpus = e->booting_gpus,
        .busy_gpus = e->busy_gpus,
        .arrivals = e->arrived,
        .arrived_gpus = e->arrived_gpus,
        .last_arrival_gpus = e->instant_max_gpus,
    };
}

int eco_nodes__powerdown_pass(struct engine *e, double t)
{
    const struct eco_powerdown_ops *ops = e->cfg->power_down;
    if (!ops || !e->pd)
        return 0;
    struct eco_pd_view v;
    pd_view(e, t, &v);
    e->pdd.n_boot = e->pdd.n_shutdown = 0;
    int rc = ops->decide(e->pd, &v, &e->pdd);
    if (rc)
        return rc;
    for (size_t i = 0; i < e->pdd.n_shutdown; i++)
        if (e->pdd.shutdown[i] < e->c->n_nodes && (rc = shutdown_node(e, e->pdd.shutdown[i], t)))
            return rc;
    for (size_t i = 0; i < e->pdd.n_boot; i++)
        if (e->pdd.boot[i] < e->c->n_nodes && (rc = boot_node(e, e->pdd.boot[i], t)))
            return rc;
    if (ops->next_wakeup) {
        pd_view(e, t, &v);
        double w = ops->next_wakeup(e->pd, &v);
        if (w > t && (e->pd_wake_s < 0 || w < e->pd_wake_s || e->pd_wake_s <= t)) {
            e->pd_wake_s = w;
            if ((rc = eco_heap_push(&e->heap, w, EV_PD_WAKEUP, 0, 0)))
                return rc;
        }
    }
    return 0;
}
