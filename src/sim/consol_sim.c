/* SPDX-License-Identifier: MIT */
/* The consolidation simulator: every period, containers' utilisation and memory change, the
 * policy moves containers and powers hosts down or up, and energy, migrations, SLA violation
 * and lost work are accounted (docs/policies/consolidation.md). */
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ecosched/catalog.h"
#include "ecosched/coloc.h"
#include "sim/consol_sim.h"
#include "ecosched/power.h"
#include "sim/sim.h"

#define NONE UINT32_MAX
#define HIST ECO_CONSOL_HISTORY

struct csim {
    const struct eco_consol_workload *w;
    const struct eco_cluster *cl; /* the hosts' node groups (GPU power states) */
    uint32_t nh, nc;
    struct eco_consol_host *hosts;
    uint16_t *hosts_type; /* per host: catalog GPU type index */
    struct eco_consol_ctr *ctrs;
    struct eco_consol_series *series;
    double *hist;            /* nc x HIST, end-aligned */
    double *pause_left;      /* s */
    double *demanded, *lost; /* per container: active seconds, seconds of work lost */
    uint32_t *off, *list;    /* CSR of containers by host (nh + 1 offsets, nc entries) */
    uint32_t *scratch;       /* nc + 1 */
    uint64_t *mask;          /* per container: its GPUs in the last assignment */
    double *factor;          /* per container: co-location speed factor this period */
    double *drain;           /* per host: seconds it stays on after its last container left */
    struct eco_consol_mig mig;
    /* Co-location pairs: per container and catalog GPU type, the workload whose pairs apply
     * (truth: the judge's) and those DGDDEP decides with; NULL: the container's own. */
    int32_t *wl_truth, *wl_decide;
    size_t n_types;
    double *speed_memo; /* n_workloads^2 pair speeds, < 0 until asked */
    size_t n_workloads;
};

/* ---- co-location on a host's GPUs ------------------------------------------------------ */

/* Container c's GPU utilisation, GPUs: its demand now, or (`alone`) its workload's utilisation
 * alone on each of its GPUs, what it draws whenever it is active. */
static double util_of(const struct csim *s, uint32_t c, int alone)
{
    return alone ? s->w->c[c].util_alone * s->ctrs[c].gpus : s->ctrs[c].util_gpus;
}

/* Assigns the containers list[0..n) of a host of `gpus` GPUs to GPUs, largest utilisation
 * (util_of) first, each to its least-loaded GPU(s) (LPT); writes each one's GPU mask into
 * mask[]. */
static void assign_gpus(const struct csim *s, uint32_t gpus, uint32_t *list, size_t n,
                        uint64_t *mask, int alone)
{
    double load[64] = {0};
    for (size_t i = 1; i < n; i++) { /* insertion sort by utilisation, ties by index */
        uint32_t x = list[i];
        size_t j = i;
        while (j > 0) {
            uint32_t y = list[j - 1];
            double uy = util_of(s, y, alone), ux = util_of(s, x, alone);
            if (uy > ux || (uy == ux && y < x))
                break;
            list[j] = y;
            j--;
        }
        list[j] = x;
    }
    for (size_t i = 0; i < n; i++) {
        const struct eco_consol_ctr *c = &s->ctrs[list[i]];
        uint32_t g = c->gpus < gpus ? c->gpus : gpus;
        uint64_t m = 0;
        for (uint32_t k = 0; k < g; k++) {
            uint32_t best = NONE;
            for (uint32_t q = 0; q < gpus; q++)
                if (!(m >> q & 1) && (best == NONE || load[q] < load[best]))
                    best = q;
            m |= 1ull << best;
            load[best] += util_of(s, list[i], alone) / g;
        }
        mask[i] = m;
    }
}

/* Speed of workload wa beside wb (measured pairs, else the utilisation rule; time-slicing for
 * a pair that cannot share), remembered per run: the pair tables' search is the costly part
 * of the gate. */
static double pair_speed(struct csim *s, int32_t wa, int32_t wb)
{
    size_t nw = s->n_workloads;
    double *memo = wa >= 0 && wb >= 0 && s->speed_memo && (size_t)wa < nw && (size_t)wb < nw
                       ? &s->speed_memo[(size_t)wa * nw + (size_t)wb]
                       : NULL;
    if (memo && *memo >= 0)
        return *memo;
    struct eco_coloc_pair pr;
    double v = ECO_COLOC_TIMESLICE;
    if (!(wa < 0 || wb < 0 || eco_coloc_pair((size_t)wa, (size_t)wb, &pr) || !pr.feasible))
        v = pr.speed_a;
    if (memo)
        *memo = v;
    return v;
}

/* The workload whose pairs stand for container c's on host h: its own, or its Gavel
 * counterpart on the host's GPU type (`map` per container and catalog type). */
static int32_t pair_workload(const struct csim *s, const int32_t *map, uint32_t c, uint32_t h)
{
    return map ? map[(size_t)c * s->n_types + s->hosts_type[h]] : (int32_t)s->ctrs[c].workload;
}

/* Speed factor of list[i] given the GPU masks of list[0..n): on each of its GPUs, the
 * measured pair speed beside one active co-tenant, the utilisation rule beside several; the
 * slowest of its GPUs. Idle containers neither slow others nor are slowed. */
static double coloc_factor(struct csim *s, const int32_t *map, uint32_t h, const uint32_t *list,
                           const uint64_t *mask, size_t n, size_t i, int alone)
{
    const struct eco_consol_ctr *a = &s->ctrs[list[i]];
    double ua = util_of(s, list[i], alone) / a->gpus, f = 1;
    if (!(ua > 0))
        return 1;
    for (int q = 0; q < 64 && mask[i] >> q; q++) {
        if (!(mask[i] >> q & 1))
            continue;
        size_t others = 0;
        uint32_t other = NONE;
        double ub = 0;
        for (size_t j = 0; j < n; j++) {
            const struct eco_consol_ctr *b = &s->ctrs[list[j]];
            double u = util_of(s, list[j], alone);
            if (j == i || !(mask[j] >> q & 1) || !(u > 0))
                continue;
            others++;
            other = list[j];
            ub += u / b->gpus;
        }
        double g = 1;
        if (others == 1)
            g = pair_speed(s, pair_workload(s, map, list[i], h), pair_workload(s, map, other, h));
        else if (others > 1)
            eco_coloc_estimate(ua > 1 ? 1 : ua, ub > 1 ? 1 : ub, &g, NULL);
        if (g < f)
            f = g;
    }
    return f;
}

/* The interference callback DGDDEP calls: container c's factor if it joined host h. */
static double interference(void *ctx, uint32_t c, uint32_t h, const uint32_t *on_host, size_t n)
{
    struct csim *s = ctx;
    uint32_t l[128];
    uint64_t m[128];
    if (n + 1 > 128)
        return 1.0 / sqrt((double)(n + 1)); /* beyond what a host of 64 GPUs shares sensibly */
    memcpy(l, on_host, n * sizeof *l);
    l[n] = c;
    assign_gpus(s, s->hosts[h].gpus, l, n + 1, m, 0);
    for (size_t i = 0; i <= n; i++)
        if (l[i] == c)
            return coloc_factor(s, s->wl_decide, h, l, m, n + 1, i, 0);
    return 1;
}

/* The co-location gate's callback: the least speed factor, by the pairs decided with, among
 * container c and the containers on host h if c joined them, every one of them active at its
 * workload's utilisation alone (idle now, a container may be active next period: the gate
 * guards the worst case of its activity, not this period's). */
static double coloc_worst(void *ctx, uint32_t c, uint32_t h, const uint32_t *on_host, size_t n)
{
    struct csim *s = ctx;
    uint32_t l[128];
    uint64_t m[128];
    if (n + 1 > 128)
        return 1.0 / sqrt((double)(n + 1)); /* as interference() */
    uint32_t slots = s->ctrs[c].gpus;
    for (size_t i = 0; i < n; i++)
        slots += s->ctrs[on_host[i]].gpus;
    if (slots <= s->hosts[h].gpus)
        return 1; /* LPT gives every one GPUs of its own */
    memcpy(l, on_host, n * sizeof *l);
    l[n] = c;
    assign_gpus(s, s->hosts[h].gpus, l, n + 1, m, 1);
    /* Per GPU its active tenants, their summed utilisation shares and the first two of them;
     * then each one's factor as coloc_factor() gives it. */
    uint32_t cnt[64] = {0}, who[64][2];
    double sum[64] = {0}, share[128];
    for (size_t i = 0; i <= n; i++) {
        share[i] = util_of(s, l[i], 1) / s->ctrs[l[i]].gpus;
        if (!(share[i] > 0))
            continue;
        for (int q = 0; q < 64 && m[i] >> q; q++)
            if (m[i] >> q & 1) {
                if (cnt[q] < 2)
                    who[q][cnt[q]] = (uint32_t)i;
                cnt[q]++;
                sum[q] += share[i];
            }
    }
    double worst = 1;
    for (size_t i = 0; i <= n; i++) {
        double ua = share[i];
        if (!(ua > 0))
            continue;
        for (int q = 0; q < 64 && m[i] >> q; q++) {
            if (!(m[i] >> q & 1) || cnt[q] < 2)
                continue;
            double g = 1;
            if (cnt[q] == 2) {
                uint32_t o = who[q][0] == i ? who[q][1] : who[q][0];
                g = pair_speed(s, pair_workload(s, s->wl_decide, l[i], h),
                               pair_workload(s, s->wl_decide, l[o], h));
            } else {
                double ub = sum[q] - ua;
                eco_coloc_estimate(ua > 1 ? 1 : ua, ub > 1 ? 1 : ub, &g, NULL);
            }
            if (g < worst)
                worst = g;
        }
    }
    return worst;
}

/* ---- setup ------------------------------------------------------------------------------ */

static void csim_free(struct csim *s)
{
    free(s->hosts);
    free(s->ctrs);
    free(s->series);
    free(s->hist);
    free(s->pause_left);
    free(s->demanded);
    free(s->lost);
    free(s->off);
    free(s->list);
    free(s->scratch);
    free(s->mask);
    free(s->factor);
    free(s->drain);
    free(s->hosts_type);
    free(s->wl_truth);
    free(s->wl_decide);
    free(s->speed_memo);
}

static int csim_alloc(struct csim *s)
{
    size_t nh = s->nh, nc = s->nc;
    s->hosts = calloc(nh, sizeof *s->hosts);
    s->ctrs = calloc(nc, sizeof *s->ctrs);
    s->series = calloc(nc, sizeof *s->series);
    s->hist = calloc(nc * HIST, sizeof *s->hist);
    s->pause_left = calloc(nc, sizeof *s->pause_left);
    s->demanded = calloc(nc, sizeof *s->demanded);
    s->lost = calloc(nc, sizeof *s->lost);
    s->off = calloc(nh + 1, sizeof *s->off);
    s->list = calloc(nc + 1, sizeof *s->list);
    s->scratch = calloc(nc + 1, sizeof *s->scratch);
    s->mask = calloc(nc + 1, sizeof *s->mask);
    s->factor = calloc(nc + 1, sizeof *s->factor);
    s->drain = calloc(nh, sizeof *s->drain);
    s->hosts_type = calloc(nh, sizeof *s->hosts_type);
    return s->hosts && s->ctrs && s->series && s->hist && s->pause_left && s->demanded && s->lost &&
                   s->off && s->list && s->scratch && s->mask && s->factor && s->drain &&
                   s->hosts_type
               ? 0
               : -ENOMEM;
}

static int setup_hosts(struct csim *s, const struct eco_cluster *c, struct eco_error *err)
{
    s->cl = c;
    for (uint32_t h = 0; h < s->nh; h++) {
        const struct eco_node *n = &c->nodes[h];
        const struct eco_node_group *g = &c->groups[n->group];
        const struct eco_gpu_type *t = eco_catalog_get(n->type);
        double busy_w = 0;
        if (!t || eco_power_eval(n->type, ECO_WORKLOAD_GENERIC, g->limit_w, NULL, &busy_w))
            return eco_errorf(err, -EINVAL, "cluster: node %u has an unknown GPU type", h);
        if (n->gpus > 64)
            return eco_errorf(err, -EINVAL,
                              "cluster: consolidation handles hosts of at most 64 GPUs "
                              "(node %u has %u)",
                              h, n->gpus);
        s->hosts[h] = (struct eco_consol_host){
            .gpus = n->gpus,
            .on = 0,
            .mem_cap_mb = n->gpus * t->mem_gb * 1024.0,
            .base_w = g->base_w,
            .gpu_idle_w = g->gpu_idle_w,
            .gpu_busy_w = busy_w > g->gpu_idle_w ? busy_w : g->gpu_idle_w,
            .gpu_ctx_w = g->gpu_idle_ctx_w,
            .gpu_low_w = g->gpu_low_w,
            .off_w = g->off_w,
            .boot_s = g->boot_s,
        };
    }
    return 0;
}

/* The pair workloads of `pairs` for every container on every catalog GPU type (NULL map for
 * Lucid's: the container's own workload). 0, -ENOMEM, or -EINVAL (err names the workload
 * without a Gavel counterpart). */
static int pair_map(struct csim *s, int pairs, int32_t **out, struct eco_error *err)
{
    *out = NULL;
    if (pairs == ECO_CONSOL_PAIRS_LUCID)
        return 0;
    int32_t *m = calloc((size_t)s->nc * s->n_types, sizeof *m);
    if (!m)
        return -ENOMEM;
    for (uint32_t c = 0; c < s->nc; c++) {
        for (size_t t = 0; t < s->n_types; t++) {
            const struct eco_gpu_type *g = eco_catalog_get(t);
            int w = eco_coloc_gavel_match(s->w->c[c].workload, g ? g->name : NULL);
            if (w < 0) {
                free(m);
                return eco_errorf(err, -EINVAL,
                                  "container %u: workload '%s' has no Gavel "
                                  "counterpart",
                                  c, eco_coloc_workload(s->w->c[c].workload)->name);
            }
            m[(size_t)c * s->n_types + t] = w;
        }
    }
    *out = m;
    return 0;
}

static int setup_pairs(struct csim *s, const struct eco_cluster *c,
                       const struct eco_consol_sim_config *cfg, struct eco_error *err)
{
    if ((cfg->judge != ECO_CONSOL_PAIRS_LUCID && cfg->judge != ECO_CONSOL_PAIRS_GAVEL) ||
        (cfg->decide != ECO_CONSOL_PAIRS_LUCID && cfg->decide != ECO_CONSOL_PAIRS_GAVEL))
        return eco_errorf(err, -EINVAL, "judge/decide: must be lucid or gavel (got %d, %d)",
                          cfg->judge, cfg->decide);
    s->n_types = eco_catalog_count();
    s->n_workloads = eco_coloc_n_workloads();
    s->speed_memo = malloc(s->n_workloads * s->n_workloads * sizeof *s->speed_memo);
    if (!s->speed_memo)
        return -ENOMEM;
    for (size_t i = 0; i < s->n_workloads * s->n_workloads; i++)
        s->speed_memo[i] = -1;
    for (uint32_t h = 0; h < s->nh; h++)
        s->hosts_type[h] = (uint16_t)c->nodes[h].type;
    int rc = pair_map(s, cfg->judge, &s->wl_truth, err);
    return rc ? rc : pair_map(s, cfg->decide, &s->wl_decide, err);
}

/* First fit by request, hosts in order; hosts that receive a container start on. */
static int initial_placement(struct csim *s, struct eco_error *err)
{
    double *req = calloc(s->nh, sizeof *req);
    if (!req)
        return -ENOMEM;
    int rc = 0;
    double total = 0;
    for (uint32_t i = 0; i < s->nc; i++)
        total += s->w->c[i].request;
    for (uint32_t i = 0; i < s->nc && !rc; i++) {
        const struct eco_consol_container *k = &s->w->c[i];
        uint32_t h = 0;
        for (; h < s->nh; h++)
            if (k->gpus <= s->hosts[h].gpus && req[h] + k->request <= s->hosts[h].gpus + 1e-9)
                break;
        if (h == s->nh) {
            rc = eco_errorf(err, -EINVAL,
                            "cluster too small: container %u (pod at line %u, %.2f GPUs) does "
                            "not fit; the %zu containers request %.1f GPUs in all",
                            i, k->pod_line, k->request, s->w->n, total);
            break;
        }
        req[h] += k->request;
        s->ctrs[i].host = h;
        s->hosts[h].on = 1;
    }
    free(req);
    return rc;
}

/* Rebuilds the by-host container lists. */
static void index_hosts(struct csim *s)
{
    memset(s->off, 0, (s->nh + 1) * sizeof *s->off);
    for (uint32_t i = 0; i < s->nc; i++)
        s->off[s->ctrs[i].host + 1]++;
    for (uint32_t h = 0; h < s->nh; h++)
        s->off[h + 1] += s->off[h];
    memcpy(s->scratch, s->off, s->nh * sizeof *s->scratch);
    for (uint32_t i = 0; i < s->nc; i++)
        s->list[s->scratch[s->ctrs[i].host]++] = i;
}

/* ---- one period ------------------------------------------------------------------------- */

static void sample(struct csim *s, double rho, size_t step, const struct eco_consol_sim_config *cfg)
{
    for (uint32_t i = 0; i < s->nc; i++) {
        struct eco_consol_ctr *c = &s->ctrs[i];
        const struct eco_consol_container *k = &s->w->c[i];
        double per_gpu_mem = s->hosts[c->host].mem_cap_mb / s->hosts[c->host].gpus;
        if (cfg->demand)
            cfg->demand(cfg->demand_ctx, i, step, &c->util_gpus, &c->mem_mb);
        else
            eco_consol_series_next(&s->series[i], k, rho, per_gpu_mem, &c->util_gpus, &c->mem_mb);
        double *h = s->hist + (size_t)i * HIST;
        memmove(h, h + 1, (HIST - 1) * sizeof *h);
        h[HIST - 1] = c->util_gpus;
        if (c->n_hist < HIST)
            c->n_hist++;
        c->hist = h + (HIST - c->n_hist);
    }
}

struct acc {
    struct eco_consol_summary *sum;
    double host_on_s, sla_s, over_s;
    double work_lost_gpu_s;
    uint32_t moves_now;
};

static void apply(struct csim *s, const struct eco_consol_decisions *d, struct acc *a)
{
    for (size_t i = 0; i < d->n_wake; i++) {
        struct eco_consol_host *h = &s->hosts[d->wake[i]];
        h->on = 1;
        a->sum->boots++;
        a->sum->energy_boot_j += h->boot_s * eco_consol_host_power_w(h, 0);
    }
    for (uint32_t h = 0; h < s->nh; h++)
        s->drain[h] = 0;
    for (size_t i = 0; i < d->n_moves; i++) {
        uint32_t c = d->moves[i].ctr, to = d->moves[i].to;
        struct eco_consol_ctr *x = &s->ctrs[c];
        uint32_t from = x->host;
        double mig = x->mig_s; /* set before the decision, from the memory it saw */
        int woken = 0;
        for (size_t k = 0; k < d->n_wake; k++)
            woken |= d->wake[k] == to;
        a->sum->energy_migration_j += x->mig_j;
        s->pause_left[c] += mig + (woken ? s->hosts[to].boot_s : 0);
        if (mig > s->drain[from])
            s->drain[from] = mig;
        x->host = to;
        a->sum->migrations++;
        a->sum->migrated_mib += x->mem_mb;
    }
    a->moves_now = (uint32_t)d->n_moves;
    for (size_t i = 0; i < d->n_off; i++) {
        uint32_t h = d->off[i];
        s->hosts[h].on = 0;
        a->sum->shutdowns++;
    }
}

double eco_consol_sim__host_power_w(const struct eco_node_group *g, double busy_w, uint32_t gpus,
                                    const double *load, uint64_t held)
{
    double p = g->base_w;
    for (uint32_t q = 0; q < gpus && q < 64; q++)
        p += held >> q & 1 ? eco_node_group_gpu_power_w(g, busy_w, load[q]) : g->gpu_idle_w;
    return p;
}

/* Power of on host h over a period of dt with its containers l[0..n) on the GPUs of their
 * masks (assign_gpus): each container's utilisation, less the part it spends paused, spread
 * evenly over its GPUs; a GPU holding any container keeps a context. */
static double on_host_power_w(const struct csim *s, uint32_t h, const uint32_t *l, size_t n,
                              const uint64_t *mask, double dt)
{
    const struct eco_consol_host *H = &s->hosts[h];
    double load[64] = {0};
    uint64_t held = 0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_consol_ctr *x = &s->ctrs[l[i]];
        double paused = s->pause_left[l[i]] < dt ? s->pause_left[l[i]] : dt;
        int k = __builtin_popcountll(mask[i]);
        for (uint32_t q = 0; q < H->gpus && k > 0; q++)
            if (mask[i] >> q & 1)
                load[q] += x->util_gpus * (dt - paused) / dt / k;
        held |= mask[i];
    }
    return eco_consol_sim__host_power_w(&s->cl->groups[s->cl->nodes[h].group], H->gpu_busy_w,
                                        H->gpus, load, held);
}

/* Energy, SLA and lost work of the period [t, t + dt) after the decisions. */
static void account(struct csim *s, double t, double dt, const struct eco_consol_sim_config *cfg,
                    struct acc *a)
{
    struct eco_consol_tl_row row = {.t_s = t, .migrations = a->moves_now};
    double on_gpus = 0, on_mem = 0, dem_u = 0, dem_m = 0, energy = 0;
    index_hosts(s);
    for (uint32_t h = 0; h < s->nh; h++) {
        const struct eco_consol_host *H = &s->hosts[h];
        uint32_t *l = s->list + s->off[h];
        size_t n = s->off[h + 1] - s->off[h];
        if (!H->on) {
            double drain = s->drain[h] < dt ? s->drain[h] : dt;
            double e_on = eco_consol_host_power_w(H, 0) * drain, e_off = H->off_w * (dt - drain);
            a->sum->energy_on_j += e_on;
            a->sum->energy_off_j += e_off;
            energy += e_on + e_off;
            continue;
        }
        double u = 0, m = 0;
        for (size_t i = 0; i < n; i++) {
            u += s->ctrs[l[i]].util_gpus;
            m += s->ctrs[l[i]].mem_mb;
        }
        assign_gpus(s, H->gpus, l, n, s->mask, 0);
        double e = on_host_power_w(s, h, l, n, s->mask, dt) * dt;
        a->sum->energy_on_j += e;
        energy += e;
        row.hosts_on++;
        a->host_on_s += dt;
        on_gpus += H->gpus;
        on_mem += H->mem_cap_mb;
        dem_u += u;
        dem_m += m;
        double us = u / H->gpus, ms = m / H->mem_cap_mb;
        if (us > 1 + 1e-9 || ms > 1 + 1e-9) {
            row.sla_hosts++;
            a->sla_s += dt;
        }
        if (us > cfg->thresholds.hi_util + 1e-12 || ms > cfg->thresholds.hi_mem + 1e-12)
            a->over_s += dt;
        double contention = us > ms ? us : ms;
        contention = contention > 1 ? 1 / contention : 1;
        for (size_t i = 0; i < n; i++)
            s->factor[i] = coloc_factor(s, s->wl_truth, h, l, s->mask, n, i, 0);
        for (size_t i = 0; i < n; i++) {
            uint32_t c = l[i];
            double paused = s->pause_left[c] < dt ? s->pause_left[c] : dt;
            s->pause_left[c] -= paused;
            if (!(s->ctrs[c].util_gpus > 0))
                continue; /* idle: no work to slow */
            double run = dt - paused;
            double lc = run * (1 - contention), lo = run * contention * (1 - s->factor[i]);
            s->demanded[c] += dt;
            s->lost[c] += paused + lc + lo;
            a->sum->work_demanded_gpu_s += s->ctrs[c].util_gpus * dt;
            a->work_lost_gpu_s += s->ctrs[c].util_gpus * (paused + lc + lo);
            a->sum->lost_migration += paused;
            a->sum->lost_contention += lc;
            a->sum->lost_coloc += lo;
        }
    }
    /* Paused containers on hosts that went off cannot exist: moves leave them on a host that
     * is on. */
    a->sum->energy_j += energy;
    row.power_w = energy / dt;
    row.util = on_gpus > 0 ? dem_u / on_gpus : 0;
    row.mem = on_mem > 0 ? dem_m / on_mem : 0;
    if (row.hosts_on > a->sum->peak_hosts_on)
        a->sum->peak_hosts_on = row.hosts_on;
    if (cfg->timeline)
        cfg->timeline(cfg->timeline_ctx, &row);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int finish(struct csim *s, struct acc *a)
{
    struct eco_consol_summary *sum = a->sum;
    double dem = 0, lost = 0;
    size_t n = 0;
    double *sl = malloc((s->nc + 1) * sizeof *sl);
    if (!sl)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nc; i++) {
        dem += s->demanded[i];
        lost += s->lost[i];
        if (s->demanded[i] > 0)
            sl[n++] = s->demanded[i] / fmax(s->demanded[i] - s->lost[i], 1e-9 * s->demanded[i]);
    }
    qsort(sl, n, sizeof *sl, cmp_double);
    sum->slowdown_p95 = n ? eco_percentile_sorted(sl, n, 95) : 1;
    free(sl);
    sum->slowdown_mean = dem > lost ? dem / (dem - lost) : 1;
    if (dem > 0) {
        sum->lost_migration /= dem;
        sum->lost_contention /= dem;
        sum->lost_coloc /= dem;
    }
    /* Lost work charged: the demanded work done at the run's own energy per useful work. */
    sum->work_useful_gpu_s = sum->work_demanded_gpu_s - a->work_lost_gpu_s;
    if (sum->work_useful_gpu_s < 0)
        sum->work_useful_gpu_s = 0;
    sum->energy_per_work_j =
        sum->work_useful_gpu_s > 0 ? sum->energy_j / sum->work_useful_gpu_s : 0;
    sum->energy_charged_j = sum->work_useful_gpu_s > 0
                                ? sum->energy_per_work_j * sum->work_demanded_gpu_s
                                : sum->energy_j;
    sum->avg_hosts_on = a->host_on_s / sum->horizon_s;
    sum->sla_violation = a->host_on_s > 0 ? a->sla_s / a->host_on_s : 0;
    sum->over_threshold = a->host_on_s > 0 ? a->over_s / a->host_on_s : 0;
    return 0;
}

int eco_consol_sim_run(const struct eco_cluster *c, const struct eco_consol_workload *w,
                       const struct eco_consol_sim_config *cfg, struct eco_consol_summary *sum,
                       struct eco_error *err)
{
    struct csim s = {.w = w, .nh = c->n_nodes, .nc = (uint32_t)w->n};
    struct eco_consol *pol = NULL;
    struct eco_consol_decisions d = {0};
    double dt = cfg->period_s > 0 ? cfg->period_s : ECO_CONSOL_PERIOD_S;
    double horizon = cfg->horizon_s > 0 ? cfg->horizon_s : ECO_CONSOL_HORIZON_S;
    if (cfg->mig)
        s.mig = *cfg->mig;
    else
        eco_consol_mig_default(&s.mig, cfg->mig_bw_mibs);
    double bw = s.mig.bw_mibs;
    *sum = (struct eco_consol_summary){.policy = cfg->policy->name,
                                       .thresholds = cfg->thresholds,
                                       .period_s = dt,
                                       .horizon_s = horizon,
                                       .mig_bw_mibs = bw,
                                       .hosts = c->n_nodes,
                                       .gpus = (uint32_t)c->total_gpus,
                                       .containers = w->n,
                                       .judge = cfg->judge,
                                       .decide = cfg->decide};
    int rc = eco_consol_thresholds_check(&cfg->thresholds, err);
    if (rc)
        return rc;
    if (w->n == 0 || w->n >= UINT32_MAX || c->n_nodes == 0)
        return eco_errorf(err, -EINVAL, "consolidation needs at least one host and one container");
    if (!(s.mig.bw_mibs > 0) || !(s.mig.pcie_mibs >= 0) || !(s.mig.ckpt_fixed_s >= 0) ||
        !(s.mig.restore_fixed_s >= 0) || !(s.mig.host_w >= 0))
        return eco_errorf(err, -EINVAL,
                          "migration model: bandwidth must be > 0 and the PCIe rate, fixed "
                          "times and copy power >= 0");
    if ((rc = csim_alloc(&s)))
        goto out;
    if ((rc = setup_hosts(&s, c, err)) || (rc = initial_placement(&s, err)) ||
        (rc = setup_pairs(&s, c, cfg, err)))
        goto out;
    for (uint32_t i = 0; i < s.nc; i++) {
        const struct eco_consol_container *k = &w->c[i];
        eco_consol_series_init(&s.series[i], k);
        s.ctrs[i].gpus = k->gpus;
        s.ctrs[i].workload = k->workload;
        sum->requested_gpus += k->request;
    }
    pol = cfg->policy->create(&cfg->thresholds, err);
    if (!pol) {
        rc = -ENOMEM;
        goto out;
    }
    double rho = exp(-dt / w->corr_s);
    size_t steps = (size_t)ceil(horizon / dt - 1e-9);
    struct acc a = {.sum = sum};
    for (size_t k = 0; k < steps; k++) {
        double t = (double)k * dt;
        /* At each period's start the policy sees what was measured up to now (the last
         * period's utilisation and memory); then the period's new demand materialises. */
        a.moves_now = 0;
        if (k > 0) {
            for (uint32_t i = 0; i < s.nc; i++) {
                s.ctrs[i].pinned = s.pause_left[i] > 0;
                s.ctrs[i].mig_s =
                    eco_consol_mig_time_s(&s.mig, s.ctrs[i].mem_mb, w->c[i].host_mem_mb);
                s.ctrs[i].mig_j = eco_consol_mig_energy_j(&s.mig, s.ctrs[i].mig_s);
            }
            struct eco_consol_view v = {.now_s = t,
                                        .period_s = dt,
                                        .hosts = s.hosts,
                                        .n_hosts = s.nh,
                                        .ctrs = s.ctrs,
                                        .n_ctrs = s.nc,
                                        .interference = interference,
                                        .interference_ctx = &s,
                                        .coloc_worst = coloc_worst};
            if ((rc = cfg->policy->decide(pol, &v, &d)))
                goto out;
            apply(&s, &d, &a);
        }
        sample(&s, rho, k, cfg);
        account(&s, t, dt, cfg, &a);
    }
    sum->energy_j += sum->energy_boot_j + sum->energy_migration_j;
    sum->mig_bw_mibs = bw;
    sum->horizon_s = (double)steps * dt;
    rc = finish(&s, &a);
out:
    if (rc == -ENOMEM)
        rc = eco_errorf(err, -ENOMEM, "out of memory");
    if (pol)
        cfg->policy->destroy(pol);
    eco_consol_decisions_fini(&d);
    csim_free(&s);
    return rc;
}

/* ---- migration model and pair names -------------------------------------------------------- */

void eco_consol_mig_default(struct eco_consol_mig *m, double bw_mibs)
{
    *m = (struct eco_consol_mig){.bw_mibs = bw_mibs > 0 ? bw_mibs : ECO_CONSOL_MIG_BW_MIBS,
                                 .pcie_mibs = ECO_CONSOL_PCIE_MIBS,
                                 .ckpt_fixed_s = ECO_CONSOL_CKPT_FIXED_S,
                                 .restore_fixed_s = ECO_CONSOL_RESTORE_FIXED_S,
                                 .host_w = ECO_CONSOL_MIG_HOST_W};
}

double eco_consol_mig_time_s(const struct eco_consol_mig *m, double gpu_mb, double host_mb)
{
    double pcie = m->pcie_mibs > 0 ? 2 * gpu_mb / m->pcie_mibs : 0; /* out, then in */
    return m->ckpt_fixed_s + pcie + (gpu_mb + host_mb) / m->bw_mibs + m->restore_fixed_s;
}

double eco_consol_mig_energy_j(const struct eco_consol_mig *m, double t_s)
{
    return 2 * m->host_w * t_s; /* source and destination */
}

int eco_consol_pairs_parse(const char *name, int *out)
{
    if (name && !strcasecmp(name, "lucid"))
        *out = ECO_CONSOL_PAIRS_LUCID;
    else if (name && !strcasecmp(name, "gavel"))
        *out = ECO_CONSOL_PAIRS_GAVEL;
    else
        return -EINVAL;
    return 0;
}

const char *eco_consol_pairs_name(int pairs)
{
    return pairs == ECO_CONSOL_PAIRS_GAVEL ? "gavel" : "lucid";
}

/* ---- output ----------------------------------------------------------------------------- */

char *eco_consol_summary_json(const struct eco_consol_summary *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f,
            "{\"policy\": \"%s\", \"thresholds\": {\"lo_util\": %.15g, \"hi_util\": %.15g, "
            "\"lo_mem\": %.15g, \"hi_mem\": %.15g},\n",
            s->policy, s->thresholds.lo_util, s->thresholds.hi_util, s->thresholds.lo_mem,
            s->thresholds.hi_mem);
    fprintf(f,
            " \"period_s\": %.15g, \"horizon_s\": %.15g, \"migration_bw_mibs\": %.15g, "
            "\"hosts\": %u, \"gpus\": %u, \"containers\": %zu, \"requested_gpus\": %.15g,\n",
            s->period_s, s->horizon_s, s->mig_bw_mibs, s->hosts, s->gpus, s->containers,
            s->requested_gpus);
    fprintf(f,
            " \"energy_kwh\": %.15g, \"energy_j\": {\"total\": %.15g, \"hosts_on\": %.15g, "
            "\"hosts_off\": %.15g, \"boot\": %.15g, \"migration\": %.15g},\n",
            s->energy_j / 3.6e6, s->energy_j, s->energy_on_j, s->energy_off_j, s->energy_boot_j,
            s->energy_migration_j);
    fprintf(f,
            " \"avg_hosts_on\": %.15g, \"peak_hosts_on\": %.15g, \"migrations\": %llu, "
            "\"migrated_gib\": %.15g, \"boots\": %llu, \"shutdowns\": %llu,\n",
            s->avg_hosts_on, s->peak_hosts_on, (unsigned long long)s->migrations,
            s->migrated_mib / 1024, (unsigned long long)s->boots, (unsigned long long)s->shutdowns);
    fprintf(f,
            " \"sla_violation\": %.15g, \"over_threshold\": %.15g, \"lost_work\": "
            "{\"migration\": %.15g, \"contention\": %.15g, \"colocation\": %.15g}, "
            "\"slowdown_mean\": %.15g, \"slowdown_p95\": %.15g,\n",
            s->sla_violation, s->over_threshold, s->lost_migration, s->lost_contention,
            s->lost_coloc, s->slowdown_mean, s->slowdown_p95);
    double lost_share =
        s->work_demanded_gpu_s > 0 ? 1 - s->work_useful_gpu_s / s->work_demanded_gpu_s : 0;
    fprintf(f,
            " \"work_gpu_h\": {\"demanded\": %.15g, \"useful\": %.15g}, \"lost_work_share\": "
            "%.15g, \"energy_per_work_kwh_per_gpu_h\": %.15g, \"energy_charged_kwh\": %.15g,\n",
            s->work_demanded_gpu_s / 3600, s->work_useful_gpu_s / 3600, lost_share,
            s->energy_per_work_j * 3600 / 3.6e6, s->energy_charged_j / 3.6e6);
    fprintf(f,
            " \"knobs\": {\"thr\": %.15g, \"mad_safety\": %.15g, \"iqr_safety\": %.15g, "
            "\"lr_safety\": %.15g, \"underload_horizon_s\": %.15g, \"coloc_gate\": %.15g}, "
            "\"judge\": \"%s\", \"decide\": \"%s\"}",
            s->thresholds.thr_upper, s->thresholds.mad_safety, s->thresholds.iqr_safety,
            s->thresholds.lr_safety, s->thresholds.underload_horizon_s, s->thresholds.coloc_gate,
            eco_consol_pairs_name(s->judge), eco_consol_pairs_name(s->decide));
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}

int eco_consol_timeline_header(FILE *f)
{
    return fputs("t_s,power_w,hosts_on,migrations,sla_hosts,util,mem\n", f) < 0 ? -EIO : 0;
}

void eco_consol_timeline_write(void *ctx, const struct eco_consol_tl_row *r)
{
    fprintf((FILE *)ctx, "%.15g,%.15g,%u,%u,%u,%.15g,%.15g\n", r->t_s, r->power_w, r->hosts_on,
            r->migrations, r->sla_hosts, r->util, r->mem);
}

/* ---- the co-location bound at a service level ------------------------------------------ */

/* Slots of one period's heavy containers grouped by their least lost work when shared: at most
 * this many groups per period (each group counts at its least member's figure). */
#define BOUND_GROUPS 8

struct bslot {
    double loss; /* lost work (GPU-seconds per second) if the slot shares its GPU with another
                  * heavy container */
};

static int cmp_bslot(const void *x, const void *y)
{
    double a = ((const struct bslot *)x)->loss, b = ((const struct bslot *)y)->loss;
    return (a > b) - (a < b);
}

/* The fastest a container of judged workload `wa` can run beside one other of any workload
 * in `ws` (n of them): the largest pair speed, capped at 1. */
static double best_pair_speed(struct csim *s, int32_t wa, const int32_t *ws, size_t n)
{
    double best = 0;
    for (size_t j = 0; j < n; j++) {
        double sp = pair_speed(s, wa, ws[j]);
        if (sp > best)
            best = sp;
    }
    return best < 1 ? best : 1;
}

/* The LP for one heavy share theta (docs/policies/consolidation.md, "A bound at a service
 * level"). Period t has ylo_t + sum_j d_tj hosts on, ylo_t the fewest whole hosts that hold its
 * demand and d_tj in [0, 1] the j-th host more, at cost inc_tj (J; rising in j: each further
 * host lets the load spread less steeply), and shared heavy slots z_tb per group b:
 * G (ylo_t + sum_j d_tj) + sum_b z_tb >= B_t (every GPU holds at most one heavy container
 * unless shared), sum_t dt sum_b loss_tb z_tb <= budget. *j: the least sum of the increments'
 * cost, J. 0 or -EINVAL (no optimum). */
static int bound_lp(size_t steps, double dt, const double *ylo, const uint32_t *B,
                    const double *gloss, const double *gcap, uint32_t H, uint32_t G,
                    const double *inc, double budget, double *j)
{
    glp_term_out(GLP_OFF); /* GLPK's messages are not ours */
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    int rc = 0;
    glp_add_rows(lp, (int)(steps + 1)); /* per period the heavy slots, then the budget */
    int budget_row = (int)steps + 1;
    glp_set_row_bnds(lp, budget_row, GLP_UP, 0.0, budget);
    int ind[3];
    double val[3];
    for (size_t t = 0; t < steps; t++) {
        int r = (int)t + 1;
        double need = (double)B[t] - G * ylo[t];
        if (!(need > 0)) {
            glp_set_row_bnds(lp, r, GLP_FR, 0.0, 0.0); /* the demand's hosts hold them */
            continue;
        }
        glp_set_row_bnds(lp, r, GLP_LO, need, 0.0);
        for (uint32_t k = (uint32_t)ylo[t]; k < H; k++) {
            int d = glp_add_cols(lp, 1);
            glp_set_col_bnds(lp, d, GLP_DB, 0.0, 1.0);
            glp_set_obj_coef(lp, d, inc[t * H + k]);
            ind[1] = r;
            val[1] = G;
            glp_set_mat_col(lp, d, 1, ind, val);
        }
        for (int b = 0; b < BOUND_GROUPS; b++) {
            double cap = gcap[t * BOUND_GROUPS + b];
            if (!(cap > 0))
                continue;
            int z = glp_add_cols(lp, 1);
            glp_set_col_bnds(lp, z, GLP_DB, 0.0, cap);
            ind[1] = r;
            val[1] = 1;
            ind[2] = budget_row;
            val[2] = dt * gloss[t * BOUND_GROUPS + b];
            glp_set_mat_col(lp, z, 2, ind, val);
        }
    }
    if (glp_get_num_cols(lp) == 0) { /* no heavy slot beyond the demand's hosts */
        *j = 0;
        glp_delete_prob(lp);
        return 0;
    }
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.presolve = GLP_ON;
    int st = glp_simplex(lp, &sm);
    if (st == 0 && glp_get_status(lp) == GLP_OPT)
        *j = glp_get_obj_val(lp);
    else
        rc = -EINVAL;
    glp_delete_prob(lp);
    return rc;
}

/* The least power of `y` hosts on that carry utilisation u (GPUs) with at least kmin GPUs
 * holding a context: each host's base and idle GPUs, and the load spread evenly over the
 * number k of GPUs (kmin <= k <= y G, k >= u) that draws least (a GPU's power is convex in its
 * load up to 1). W. */
static double hosts_w(const struct eco_node_group *g, double busy_w,
                      const struct eco_consol_host *H, double y, double u, double kmin)
{
    double p = y * (H->base_w + H->gpus * H->gpu_idle_w);
    double k0 = fmax(ceil(u - 1e-9), kmin), best = INFINITY;
    if (!(u > 0) && !(kmin > 0))
        return p;
    for (double k = k0 > 1 ? k0 : 1; k <= y * H->gpus; k++) {
        double q = k * (eco_node_group_gpu_power_w(g, busy_w, u / k) - H->gpu_idle_w);
        if (q < best)
            best = q;
    }
    return p + (isfinite(best) ? best : 0);
}

int eco_consol_bound(const struct eco_cluster *c, const struct eco_consol_workload *w,
                     const struct eco_consol_sim_config *cfg, double level,
                     struct eco_consol_bound *out, struct eco_error *err)
{
    static const double thetas[] = {0.55, 0.6, 0.75, 0.9};
    enum { NT = sizeof thetas / sizeof thetas[0] };
    struct csim s = {.w = w, .nh = c->n_nodes, .nc = (uint32_t)w->n};
    double dt = cfg->period_s > 0 ? cfg->period_s : ECO_CONSOL_PERIOD_S;
    double horizon = cfg->horizon_s > 0 ? cfg->horizon_s : ECO_CONSOL_HORIZON_S;
    size_t steps = (size_t)ceil(horizon / dt - 1e-9);
    *out = (struct eco_consol_bound){.level = level};
    if (!(level >= 0 && level <= 1))
        return eco_errorf(err, -EINVAL, "bound: the lost-work level %g is outside 0-1", level);
    if (w->n == 0 || w->n >= UINT32_MAX || c->n_nodes == 0)
        return eco_errorf(err, -EINVAL, "consolidation needs at least one host and one container");
    double *U = NULL, *M = NULL, *ylo = NULL, *inc = NULL, *gloss = NULL, *gcap = NULL;
    uint32_t *B = NULL;
    struct bslot *sl = NULL;
    int32_t *ws = NULL;
    double *ub = NULL;
    int rc = csim_alloc(&s);
    if (rc)
        goto out;
    if ((rc = setup_hosts(&s, c, err)) || (rc = initial_placement(&s, err)) ||
        (rc = setup_pairs(&s, c, cfg, err)))
        goto out;
    const struct eco_consol_host *H0 = &s.hosts[0];
    for (uint32_t h = 1; h < s.nh; h++) {
        const struct eco_consol_host *x = &s.hosts[h];
        if (x->gpus != H0->gpus || x->mem_cap_mb != H0->mem_cap_mb || x->base_w != H0->base_w ||
            x->gpu_idle_w != H0->gpu_idle_w || x->gpu_ctx_w != H0->gpu_ctx_w ||
            x->gpu_low_w != H0->gpu_low_w || x->gpu_busy_w != H0->gpu_busy_w ||
            x->off_w != H0->off_w) {
            rc = eco_errorf(err, -EINVAL,
                            "bound: hosts of one kind only (host %u differs from host 0 in its "
                            "GPUs, memory or power figures)",
                            h);
            goto out;
        }
    }
    size_t nslot = 0;
    for (uint32_t i = 0; i < s.nc; i++) {
        const struct eco_consol_container *k = &w->c[i];
        eco_consol_series_init(&s.series[i], k);
        s.ctrs[i].gpus = k->gpus;
        s.ctrs[i].workload = k->workload;
        nslot += k->gpus;
    }
    U = calloc(steps, sizeof *U);
    M = calloc(steps, sizeof *M);
    ylo = calloc(steps, sizeof *ylo);
    B = calloc(steps * NT, sizeof *B);
    gloss = calloc(steps * NT * BOUND_GROUPS, sizeof *gloss);
    gcap = calloc(steps * NT * BOUND_GROUPS, sizeof *gcap);
    sl = calloc(nslot + 1, sizeof *sl);
    ws = calloc(s.nc, sizeof *ws);
    ub = calloc(s.nc, sizeof *ub);
    if (!U || !M || !ylo || !B || !gloss || !gcap || !sl || !ws || !ub) {
        rc = -ENOMEM;
        goto out;
    }
    /* Each container's fastest speed beside any workload of the run, by the judge's pairs on
     * the hosts' GPU type. */
    for (uint32_t i = 0; i < s.nc; i++)
        ws[i] = pair_workload(&s, s.wl_truth, i, 0);
    for (uint32_t i = 0; i < s.nc; i++) {
        size_t j = 0;
        while (j < i && ws[j] != ws[i])
            j++;
        ub[i] = j < i ? ub[j] : best_pair_speed(&s, ws[i], ws, s.nc);
    }
    uint32_t G = H0->gpus;
    double rho = exp(-dt / w->corr_s), demanded = 0;
    for (size_t k = 0; k < steps; k++) {
        sample(&s, rho, k, cfg);
        for (uint32_t i = 0; i < s.nc; i++) {
            U[k] += s.ctrs[i].util_gpus;
            M[k] += s.ctrs[i].mem_mb;
        }
        demanded += U[k] * dt;
        for (int th = 0; th < NT; th++) {
            size_t n = 0;
            for (uint32_t i = 0; i < s.nc; i++) {
                double a = s.ctrs[i].util_gpus / s.ctrs[i].gpus;
                if (!(a >= thetas[th]))
                    continue;
                /* Beside one other active container on a GPU: the judged pair speed; beside
                 * several, one of them heavy: the utilisation rule with at least a + theta. */
                double rule = pow(a + thetas[th], -ECO_COLOC_FALLBACK_EXP);
                double f = ub[i] > rule ? ub[i] : rule;
                for (uint16_t g = 0; g < s.ctrs[i].gpus; g++)
                    sl[n++].loss = a * (1 - f);
            }
            B[k * NT + th] = (uint32_t)n;
            qsort(sl, n, sizeof *sl, cmp_bslot);
            for (size_t q = 0; q < n; q++) {
                size_t b = q * BOUND_GROUPS / n, at = (k * NT + th) * BOUND_GROUPS + b;
                if (gcap[at] == 0)
                    gloss[at] = sl[q].loss; /* the group's least */
                gcap[at] += 1;
            }
        }
    }
    /* The fewest whole hosts that hold each period's utilisation and GPU memory (and GPUs that
     * hold the memory), their power with the load spread at least power, the others off, and
     * what each further host would cost. */
    const struct eco_node_group *grp = &s.cl->groups[s.cl->nodes[0].group];
    double gpu_mb = H0->mem_cap_mb / G, fixed_j = 0;
    inc = calloc(steps * s.nh, sizeof *inc);
    if (!inc) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < steps; k++) {
        ylo[k] = ceil(fmax(U[k] / G, M[k] / H0->mem_cap_mb) - 1e-9);
        if (ylo[k] > s.nh) {
            rc = eco_errorf(err, -EINVAL,
                            "bound: period %zu needs %.0f hosts for its demand; the cluster has "
                            "%u",
                            k, ylo[k], s.nh);
            goto out;
        }
        double kmin = ceil(M[k] / gpu_mb - 1e-9);
        double prev =
            hosts_w(grp, H0->gpu_busy_w, H0, ylo[k], U[k], kmin) + (s.nh - ylo[k]) * H0->off_w;
        fixed_j += dt * prev;
        for (uint32_t y = (uint32_t)ylo[k] + 1; y <= s.nh; y++) {
            double now = hosts_w(grp, H0->gpu_busy_w, H0, y, U[k], kmin) + (s.nh - y) * H0->off_w;
            inc[k * s.nh + y - 1] = dt * (now - prev);
            prev = now;
        }
    }
    out->demanded_gpu_h = demanded / 3600;
    out->kwh = -1;
    uint32_t *tB = calloc(steps, sizeof *tB);
    double *tl = calloc(steps * BOUND_GROUPS, sizeof *tl);
    double *tc = calloc(steps * BOUND_GROUPS, sizeof *tc);
    if (!tB || !tl || !tc) {
        free(tB);
        free(tl);
        free(tc);
        rc = -ENOMEM;
        goto out;
    }
    for (int th = -1; th < NT && !rc; th++) { /* th -1: no heavy term (the hosts' capacity) */
        for (size_t k = 0; k < steps; k++) {
            tB[k] = th < 0 ? 0 : B[k * NT + th];
            for (int b = 0; b < BOUND_GROUPS; b++) {
                size_t at = (k * NT + (th < 0 ? 0 : th)) * BOUND_GROUPS + b;
                tl[k * BOUND_GROUPS + b] = th < 0 ? 0 : gloss[at];
                tc[k * BOUND_GROUPS + b] = th < 0 ? 0 : gcap[at];
            }
        }
        double j;
        if (bound_lp(steps, dt, ylo, tB, tl, tc, s.nh, G, inc, level * demanded, &j)) {
            rc = eco_errorf(err, -EINVAL,
                            "bound: no consolidation of this demand loses at most %g of its "
                            "work on %u hosts",
                            level, s.nh);
            break;
        }
        double kwh = (j + fixed_j) / 3.6e6;
        if (th < 0)
            out->hosts_only_kwh = kwh;
        if (kwh > out->kwh + 1e-9) {
            out->kwh = kwh;
            out->theta = th < 0 ? 0 : thetas[th];
        }
    }
    free(tB);
    free(tl);
    free(tc);
out:
    if (rc == -ENOMEM)
        rc = eco_errorf(err, -ENOMEM, "out of memory");
    free(U);
    free(M);
    free(ylo);
    free(inc);
    free(B);
    free(gloss);
    free(gcap);
    free(sl);
    free(ws);
    free(ub);
    csim_free(&s);
    return rc;
}
