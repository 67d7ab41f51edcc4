/* SPDX-License-Identifier: MIT */
/* Discrete particle swarm optimisation of an assignment of items to nodes: `pso`, the improved
 * variant (heuristic seeding, linearly decreasing inertia, time-varying acceleration factors,
 * a diversity-triggered mutation and a host-elimination local search), and `pso-basic`, the
 * standard discrete PSO with constant parameters. Both share the encoding, the velocity and
 * position update, and the repair that makes every particle feasible. See docs/policies/pso.md. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/place.h"
#include "ecosched/rng.h"
#include "place_internal.h"

/* Binary PSO velocity clamp (Kennedy & Eberhart 1997): |v| <= 4 keeps the change probability
 * tanh(v / 2) below 0.97, so no dimension is certain to move. */
#define VMAX 4.0
/* Standard PSO constants (Clerc & Kennedy 2002, as recommended by Bratton & Kennedy 2007):
 * inertia 0.7298 and acceleration 1.49618 for both terms. */
#define BASIC_W 0.7298
#define BASIC_C 1.49618
/* Improved PSO: inertia from 0.9 down to 0.4 (Shi & Eberhart 1998), c1 from 2.5 down to 0.5
 * and c2 from 0.5 up to 2.5 (time-varying acceleration, Ratnaweera et al. 2004). */
#define W_MAX 0.9
#define W_MIN 0.4
#define C_HI 2.5
#define C_LO 0.5
/* Mutation: when the swarm's diversity (mean share of dimensions in which a particle differs
 * from the global best) falls below DIV_MIN, every particle but the best redraws each dimension
 * with probability MUT_P and its velocity restarts at 0. Settings, not tuned: 5 % diversity is
 * a swarm about to collapse onto the best, and redrawing 10 % of the dimensions leaves each
 * particle close to where it was while making it differ from the best again. */
#define DIV_MIN 0.05
#define MUT_P 0.1
/* Local search runs on every improved particle while items x nodes is below this (cheap on
 * the small instances), and on the global best only above it (openb: 8,000 x 1,213). */
#define LS_ALL_LIMIT 200000.0

/* At most this many hosts are tried per local search: all of them on the small instances,
 * the least loaded ones on openb. */
#define LS_TRIES 256

/* Moves tried per local search to push the first failure back (each costs one pass over the
 * items per compatible node). */
#define EJECT_TRIES 64

#define DEFAULT_SWARM 20
#define DEFAULT_ITERS 200
/* The greedy seeds of the improved variant. */
#define N_SEEDS 4

/* Lexicographic fitness. Offline: k1 items placed before the first failure, k2 items placed.
 * Online (one window): k1 the window's milli-GPUs placed, k2 its items placed. Then obj. */
struct fitness {
    uint64_t k1, k2; /* more is better */
    uint32_t placed; /* items placed (for the progress line) */
    double obj;      /* objective (less is better) */
};

static int better(const struct fitness *a, const struct fitness *b)
{
    if (a->k1 != b->k1)
        return a->k1 > b->k1;
    if (a->k2 != b->k2)
        return a->k2 > b->k2;
    return a->obj < b->obj - 1e-9 * (fabs(b->obj) + 1);
}

struct particle {
    int32_t *x;  /* node per item, -1: none */
    int8_t *gx;  /* preferred GPU for a shared request, -1: none */
    float *v;    /* velocity: tendency of each dimension to change */
    int32_t *px; /* personal best */
    int8_t *pgx;
    struct fitness f, pf;
};

struct swarm {
    const struct eco_pl_instance *in;
    const struct eco_pl_params *p;
    struct eco_pl_workload w;         /* owned (offline) */
    const struct eco_pl_workload *wl; /* the fragmentation workload: &w, or the caller's */
    /* Online window: the items already placed (borrowed; its `in` is the whole instance), the
     * FGD fragmentation of every node there, and a per-node stamp of nodes the window uses.
     * NULL offline. */
    const struct eco_pl_state *base;
    const double *base_frag;
    uint32_t *stamp, epoch;
    unsigned off;                  /* ECO_PL_PSO_OFF_* */
    struct eco_pl_outcome *counts; /* seeds, mutations, local searches counted here (or NULL) */
    struct eco_pl_state s;
    struct eco_pl_slot *slots;
    struct particle *pt;
    uint32_t n, n_alloc; /* particles in use, allocated */
    int32_t *gx;         /* global best */
    int8_t *ggx;
    struct fitness gf;
    struct eco_rng rng;
    uint32_t *on_node; /* scratch for the local search */
    uint32_t *type_of; /* request type of each item (same CPU, memory, GPUs, models) */
    uint32_t n_types;
    int64_t *memo; /* per type, in eject_for: -2 unknown, else the node excluded when it
                      found no room (-1: none at all) */
};

/* ---- repair and evaluation ---------------------------------------------------------------- */

/* Fallback for an item whose node is none or full: first fit among active nodes, then among
 * all nodes. */
static int64_t fallback(const struct eco_pl_state *s, uint32_t item)
{
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t n = 0; n < s->in->n_nodes; n++)
            if ((pass || s->n_on[n]) && eco_pl_fits(s, item, n))
                return n;
    return -1;
}

/* Decodes positions x/gx in arrival order into feasible slots on sw->s: an item keeps its
 * node when it fits there, else takes the fallback node, else stays unplaced. Writes the
 * repaired position back (every particle is feasible afterwards). */
static void repair_upto(struct swarm *sw, int32_t *x, int8_t *gx, uint32_t upto)
{
    const struct eco_pl_instance *in = sw->in;
    if (sw->base)
        eco_pl_state_copy(&sw->s, sw->base);
    else
        eco_pl_state_reset(&sw->s);
    for (uint32_t i = 0; i < upto; i++) {
        int64_t n = x[i];
        if (n < 0 || n >= in->n_nodes || !eco_pl_fits(&sw->s, i, (uint32_t)n))
            n = fallback(&sw->s, i);
        struct eco_pl_slot sl = {(int32_t)n, 0};
        if (n >= 0) {
            sl.gpus = eco_pl_pick_gpus(&sw->s, i, (uint32_t)n, gx[i]);
            eco_pl_take(&sw->s, i, &sl);
        }
        sw->slots[i] = sl;
        x[i] = (int32_t)n;
        gx[i] = (int8_t)(in->items[i].gpus == 1 && sl.gpus ? __builtin_ctzll(sl.gpus) : -1);
    }
}

static void repair(struct swarm *sw, int32_t *x, int8_t *gx)
{
    repair_upto(sw, x, gx, sw->in->n_items);
}

/* Online: the growth of FGD fragmentation over the already placed items, summed over the
 * nodes the window uses (the others keep theirs). */
static double frag_growth(struct swarm *sw)
{
    double d = 0;
    if (++sw->epoch == 0) {
        memset(sw->stamp, 0, sw->in->n_nodes * sizeof *sw->stamp);
        sw->epoch = 1;
    }
    for (uint32_t i = 0; i < sw->in->n_items; i++) {
        int32_t n = sw->slots[i].node;
        if (n < 0 || sw->stamp[n] == sw->epoch)
            continue;
        sw->stamp[n] = sw->epoch;
        d += eco_pl_node_frag(&sw->s, sw->wl, (uint32_t)n, NULL) - sw->base_frag[n];
    }
    return d;
}

static double objective(struct swarm *sw)
{
    const struct eco_pl_instance *in = sw->in;
    const struct eco_pl_state *s = &sw->s;
    double obj = 0, sum = 0, sum2 = 0;
    if (sw->base)
        return frag_growth(sw);
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        const struct eco_pl_node *nd = &in->nodes[n];
        const uint16_t *f = s->gpu_free + s->gpu_off[n];
        double u;
        if (nd->gpus) {
            double used = 0;
            for (uint32_t g = 0; g < nd->gpus; g++)
                used += ECO_PL_GPU_MILLI - f[g];
            u = used / (nd->gpus * 1000.0);
        } else {
            u = nd->cpu_milli ? 1.0 - (double)s->cpu_free[n] / nd->cpu_milli : 0;
        }
        sum += u;
        sum2 += u * u;
        switch (sw->p->objective) {
        case ECO_PL_OBJ_FRAG:
            obj += eco_pl_node_frag(s, sw->wl, n, NULL);
            break;
        case ECO_PL_OBJ_ENERGY:
            if (s->n_on[n])
                obj += eco_pl_node_power_w(in, n, f);
            break;
        case ECO_PL_OBJ_HOSTS:
            if (s->n_on[n]) {
                double cu = nd->cpu_milli ? 1.0 - (double)s->cpu_free[n] / nd->cpu_milli : 0;
                double d = u > cu ? u : cu;
                /* one host, less up to 0.5 for full hosts: ties prefer uneven loads, whose
                 * least loaded hosts are easier to empty */
                obj += 1.0 - 0.5 * d * d / (in->n_nodes ? in->n_nodes : 1);
            }
            break;
        default:
            break;
        }
    }
    if (sw->p->objective == ECO_PL_OBJ_BALANCE && in->n_nodes) {
        double mean = sum / in->n_nodes, var = sum2 / in->n_nodes - mean * mean;
        obj = var > 0 ? sqrt(var) : 0;
    }
    return obj;
}

static struct fitness evaluate(struct swarm *sw)
{
    struct fitness f = {0, 0, 0, 0};
    uint64_t prefix = 0, milli = 0;
    int failed = 0;
    for (uint32_t i = 0; i < sw->in->n_items; i++) {
        const struct eco_pl_item *it = &sw->in->items[i];
        if (sw->slots[i].node < 0) {
            failed = 1;
            continue;
        }
        f.placed++;
        prefix += !failed;
        milli += (uint64_t)it->gpus * it->gpu_milli;
    }
    /* online, the first failure of a window says nothing about the cluster's state: what
     * counts is how much of the window's GPU demand is served, then how fragmented the state
     * is left for what comes next (FGD's own criterion) */
    f.k1 = sw->base ? milli : prefix;
    f.k2 = f.placed;
    f.obj = objective(sw);
    return f;
}

/* ---- local search: empty the least loaded hosts ------------------------------------------- */

/* Tries to move every item of node c to other active nodes (best fit by dominant resource
 * among them). Commits and returns 1 when all moved; else restores and returns 0. */
static int empty_node(struct swarm *sw, uint32_t c, int32_t *x, int8_t *gx)
{
    const struct eco_pl_instance *in = sw->in;
    uint32_t k = 0;
    for (uint32_t i = 0; i < in->n_items; i++)
        if (x[i] == (int32_t)c)
            sw->on_node[k++] = i;
    struct eco_pl_state *s = &sw->s;
    uint32_t moved = 0;
    for (; moved < k; moved++) {
        uint32_t i = sw->on_node[moved];
        eco_pl_give(s, i, &sw->slots[i]);
        int64_t best = -1;
        double best_left = 0;
        for (uint32_t n = 0; n < in->n_nodes; n++) {
            if (n == c || !s->n_on[n] || !eco_pl_fits(s, i, n))
                continue;
            /* least total free share left (CPU, memory, GPU) after the move */
            const struct eco_pl_node *nd = &in->nodes[n];
            double left = nd->cpu_milli
                              ? (double)(s->cpu_free[n] - in->items[i].cpu_milli) / nd->cpu_milli
                              : 0;
            left += nd->mem_mib ? (double)(s->mem_free[n] - in->items[i].mem_mib) / nd->mem_mib : 0;
            if (nd->gpus) {
                double f = 0;
                for (uint32_t g = 0; g < nd->gpus; g++)
                    f += s->gpu_free[s->gpu_off[n] + g];
                left +=
                    (f - (double)in->items[i].gpus * in->items[i].gpu_milli) / (nd->gpus * 1000.0);
            }
            if (best < 0 || left < best_left) {
                best = n;
                best_left = left;
            }
        }
        if (best < 0) {
            eco_pl_take(s, i, &sw->slots[i]);
            break;
        }
        struct eco_pl_slot sl = {(int32_t)best, eco_pl_pick_gpus(s, i, (uint32_t)best, -1)};
        eco_pl_take(s, i, &sl);
        sw->slots[i] = sl;
        x[i] = sl.node;
        gx[i] = (int8_t)(in->items[i].gpus == 1 ? __builtin_ctzll(sl.gpus) : -1);
    }
    if (moved == k)
        return 1;
    /* roll back: the moved items return to node c; their old GPUs are free again there */
    for (uint32_t j = 0; j < moved; j++) {
        uint32_t i = sw->on_node[j];
        eco_pl_give(s, i, &sw->slots[i]);
    }
    for (uint32_t j = 0; j < moved; j++) {
        uint32_t i = sw->on_node[j];
        struct eco_pl_slot sl = {(int32_t)c, eco_pl_pick_gpus(s, i, c, -1)};
        eco_pl_take(s, i, &sl);
        sw->slots[i] = sl;
        x[i] = (int32_t)c;
        gx[i] = (int8_t)(in->items[i].gpus == 1 ? __builtin_ctzll(sl.gpus) : -1);
    }
    return 0;
}

/* ---- local search: make room for the first item that failed ------------------------------ */

/* sw->s holds items 0..f-1 as decoded. Looks for a node where moving one earlier item away
 * (to any node with room) lets item f in; commits the two moves into x/gx. 1 when found. */
static int eject_for(struct swarm *sw, int32_t *x, int8_t *gx, uint32_t f)
{
    const struct eco_pl_instance *in = sw->in;
    struct eco_pl_state *s = &sw->s;
    for (uint32_t t = 0; t < sw->n_types; t++)
        sw->memo[t] = -2;
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        if (!eco_pl_compatible(in, f, n))
            continue;
        if (n % 64 == 63 && sw->p->stop && sw->p->stop(sw->p->stop_ctx))
            return 0;
        for (uint32_t i = 0; i < f; i++) {
            if (sw->slots[i].node != (int32_t)n)
                continue;
            eco_pl_give(s, i, &sw->slots[i]);
            if (eco_pl_fits(s, f, n)) {
                struct eco_pl_slot fs = {(int32_t)n, eco_pl_pick_gpus(s, f, n, -1)};
                eco_pl_take(s, f, &fs);
                /* items of one request type that found no other node before (when node
                 * memo[t] was the one excluded) can only fit on that node now */
                uint32_t t = sw->type_of[i];
                int64_t m = -1;
                if (sw->memo[t] == -2) {
                    for (uint32_t k = 0; k < in->n_nodes && m < 0; k++)
                        if (k != n && eco_pl_fits(s, i, k))
                            m = k;
                } else if (sw->memo[t] >= 0 && sw->memo[t] != (int64_t)n &&
                           eco_pl_fits(s, i, (uint32_t)sw->memo[t])) {
                    m = sw->memo[t];
                }
                if (m < 0)
                    sw->memo[t] = sw->memo[t] == -2 ? (int64_t)n : -1;
                if (m >= 0) {
                    struct eco_pl_slot is = {(int32_t)m, eco_pl_pick_gpus(s, i, (uint32_t)m, -1)};
                    eco_pl_take(s, i, &is);
                    sw->slots[i] = is;
                    sw->slots[f] = fs;
                    x[i] = (int32_t)m;
                    gx[i] = (int8_t)(in->items[i].gpus == 1 ? __builtin_ctzll(is.gpus) : -1);
                    x[f] = (int32_t)n;
                    gx[f] = (int8_t)(in->items[f].gpus == 1 ? __builtin_ctzll(fs.gpus) : -1);
                    return 1;
                }
                eco_pl_give(s, f, &fs);
            }
            eco_pl_take(s, i, &sw->slots[i]);
        }
    }
    return 0;
}

/* Pushes the first failure back: up to EJECT_TRIES times, decode up to the first item that
 * fails and make room for it by moving one earlier item. Leaves x decoded in sw->s. */
static void push_first_failure(struct swarm *sw, int32_t *x, int8_t *gx)
{
    for (int t = 0; t < EJECT_TRIES; t++) {
        repair(sw, x, gx);
        uint32_t f = 0;
        while (f < sw->in->n_items && sw->slots[f].node >= 0)
            f++;
        if (f == sw->in->n_items)
            return;
        repair_upto(sw, x, gx, f);
        if (!eject_for(sw, x, gx, f))
            break;
        if (sw->p->stop && sw->p->stop(sw->p->stop_ctx))
            break;
    }
    repair(sw, x, gx);
}

/* Host elimination on the position x (already repaired into sw->s and sw->slots): active
 * nodes in order of increasing items, each emptied when its items all fit elsewhere. */
static void local_search(struct swarm *sw, int32_t *x, int8_t *gx)
{
    push_first_failure(sw, x, gx);
    if (sw->base || (sw->p->objective != ECO_PL_OBJ_HOSTS && sw->p->objective != ECO_PL_OBJ_ENERGY))
        return;
    const struct eco_pl_instance *in = sw->in;
    uint32_t tries = 0;
    for (uint32_t load = 1; tries < LS_TRIES; load++) {
        int more = 0;
        for (uint32_t n = 0; n < in->n_nodes && tries < LS_TRIES; n++) {
            if (sw->s.n_on[n] > load)
                more = 1;
            if (sw->s.n_on[n] == load) {
                empty_node(sw, n, x, gx);
                tries++;
            }
        }
        if (!more)
            break;
    }
    /* re-decode so that the position and the slots agree in arrival order */
    repair(sw, x, gx);
}

/* ---- the swarm ---------------------------------------------------------------------------- */

static int32_t random_node(struct swarm *sw, uint32_t item)
{
    for (int t = 0; t < 8; t++) {
        uint32_t n = (uint32_t)(eco_rng_uniform(&sw->rng) * sw->in->n_nodes);
        if (n < sw->in->n_nodes && eco_pl_compatible(sw->in, item, n))
            return (int32_t)n;
    }
    return -1;
}

static void swarm_free(struct swarm *sw)
{
    if (sw->pt)
        for (uint32_t k = 0; k < sw->n_alloc; k++) {
            free(sw->pt[k].x);
            free(sw->pt[k].gx);
            free(sw->pt[k].v);
            free(sw->pt[k].px);
            free(sw->pt[k].pgx);
        }
    free(sw->pt);
    free(sw->gx);
    free(sw->ggx);
    free(sw->slots);
    free(sw->on_node);
    free(sw->type_of);
    free(sw->memo);
    free(sw->stamp);
    eco_pl_state_fini(&sw->s);
    eco_pl_workload_fini(&sw->w);
}

static int same_request(const struct eco_pl_item *a, const struct eco_pl_item *b)
{
    return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib && a->gpus == b->gpus &&
           a->gpu_milli == b->gpu_milli && a->models == b->models;
}

static uint64_t request_hash(const struct eco_pl_item *it)
{
    uint64_t h = (uint64_t)it->cpu_milli * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)it->mem_mib * 0xC2B2AE3D27D4EB4Full + (h << 6);
    h ^= ((uint64_t)it->gpus << 16 | it->gpu_milli) * 0x165667B19E3779F9ull + (h >> 3);
    return h ^ it->models;
}

/* Numbers the distinct requests with an open-addressing hash table. */
static int assign_types(struct swarm *sw)
{
    uint32_t ni = sw->in->n_items, cap = 16;
    while (cap < 2 * ni + 16)
        cap *= 2;
    uint32_t *slot = malloc(cap * sizeof *slot); /* first item of the type + 1, 0: empty */
    sw->type_of = malloc((ni ? ni : 1) * sizeof *sw->type_of);
    sw->memo = malloc((ni ? ni : 1) * sizeof *sw->memo);
    if (!slot || !sw->type_of || !sw->memo) {
        free(slot);
        return -ENOMEM;
    }
    memset(slot, 0, cap * sizeof *slot);
    for (uint32_t i = 0; i < ni; i++) {
        const struct eco_pl_item *it = &sw->in->items[i];
        uint32_t h = (uint32_t)request_hash(it) & (cap - 1);
        while (slot[h] && !same_request(&sw->in->items[slot[h] - 1], it))
            h = (h + 1) & (cap - 1);
        if (!slot[h]) {
            slot[h] = i + 1;
            sw->type_of[i] = sw->n_types++;
        } else {
            sw->type_of[i] = sw->type_of[slot[h] - 1];
        }
    }
    free(slot);
    return 0;
}

static int swarm_alloc(struct swarm *sw)
{
    size_t ni = sw->in->n_items ? sw->in->n_items : 1;
    sw->pt = calloc(sw->n, sizeof *sw->pt);
    sw->n_alloc = sw->pt ? sw->n : 0;
    sw->gx = malloc(ni * sizeof *sw->gx);
    sw->ggx = malloc(ni * sizeof *sw->ggx);
    sw->slots = malloc(ni * sizeof *sw->slots);
    sw->on_node = malloc(ni * sizeof *sw->on_node);
    if (!sw->pt || !sw->gx || !sw->ggx || !sw->slots || !sw->on_node)
        return -ENOMEM;
    for (uint32_t k = 0; k < sw->n; k++) {
        struct particle *q = &sw->pt[k];
        q->x = malloc(ni * sizeof *q->x);
        q->gx = malloc(ni * sizeof *q->gx);
        q->v = calloc(ni, sizeof *q->v);
        q->px = malloc(ni * sizeof *q->px);
        q->pgx = malloc(ni * sizeof *q->pgx);
        if (!q->x || !q->gx || !q->v || !q->px || !q->pgx)
            return -ENOMEM;
    }
    if (eco_pl_state_init(&sw->s, sw->in))
        return -ENOMEM;
    if (assign_types(sw))
        return -ENOMEM;
    if (sw->base) {
        sw->stamp = calloc(sw->in->n_nodes ? sw->in->n_nodes : 1, sizeof *sw->stamp);
        return sw->stamp ? 0 : -ENOMEM;
    }
    sw->wl = &sw->w;
    return eco_pl_workload_from_items(sw->in, &sw->w);
}

/* Repairs, scores and (improved variant) locally improves particle q, then updates its
 * personal best and the global best. */
static void settle(struct swarm *sw, struct particle *q, int improved)
{
    uint32_t ni = sw->in->n_items;
    repair(sw, q->x, q->gx);
    q->f = evaluate(sw);
    if (improved && !(sw->off & ECO_PL_PSO_OFF_LOCAL_SEARCH) &&
        (better(&q->f, &q->pf) || better(&q->f, &sw->gf))) {
        double size = (double)ni * sw->in->n_nodes;
        if (size <= LS_ALL_LIMIT || better(&q->f, &sw->gf)) {
            if (sw->counts)
                sw->counts->local_searches++;
            local_search(sw, q->x, q->gx);
            q->f = evaluate(sw);
        }
    }
    if (better(&q->f, &q->pf)) {
        q->pf = q->f;
        memcpy(q->px, q->x, ni * sizeof *q->x);
        memcpy(q->pgx, q->gx, ni * sizeof *q->gx);
    }
    if (better(&q->f, &sw->gf)) {
        sw->gf = q->f;
        memcpy(sw->gx, q->x, ni * sizeof *q->x);
        memcpy(sw->ggx, q->gx, ni * sizeof *q->gx);
    }
}

/* A greedy run of `rule` over the window's items (in arrival or decreasing order) on the
 * already placed items, into sw->slots. 0 or -ENOMEM. */
static int greedy_on_base(struct swarm *sw, int rule, int decreasing)
{
    const struct eco_pl_instance *in = sw->in;
    uint32_t ni = in->n_items ? in->n_items : 1, nn = in->n_nodes ? in->n_nodes : 1;
    uint32_t *order = malloc(ni * sizeof *order);
    double *frag = malloc(nn * sizeof *frag);
    if (!order || !frag) {
        free(order);
        free(frag);
        return -ENOMEM;
    }
    eco_pl_state_copy(&sw->s, sw->base);
    memcpy(frag, sw->base_frag, in->n_nodes * sizeof *frag);
    if (decreasing)
        eco_pl_order_decreasing(in, order);
    else
        for (uint32_t i = 0; i < in->n_items; i++)
            order[i] = i;
    for (uint32_t k = 0; k < in->n_items; k++) {
        uint32_t i = order[k];
        uint64_t gpus = 0;
        int64_t n = eco_place__pick_cached(&sw->s, sw->wl, rule, i, frag, &gpus);
        sw->slots[i] = (struct eco_pl_slot){.node = (int32_t)n, .gpus = n >= 0 ? gpus : 0};
        if (n < 0)
            continue;
        eco_pl_take(&sw->s, i, &sw->slots[i]);
        if (rule == ECO_PL_RULE_FGD)
            frag[n] = eco_pl_node_frag(&sw->s, sw->wl, (uint32_t)n, NULL);
    }
    free(order);
    free(frag);
    return 0;
}

static void seed_greedy(struct swarm *sw, struct particle *q, int rule, int decreasing)
{
    int rc = sw->base ? greedy_on_base(sw, rule, decreasing)
                      : eco_place__greedy_run(sw->in, rule, decreasing, sw->slots);
    if (rc) {
        for (uint32_t i = 0; i < sw->in->n_items; i++)
            q->x[i] = random_node(sw, i), q->gx[i] = -1;
        return;
    }
    for (uint32_t i = 0; i < sw->in->n_items; i++) {
        q->x[i] = sw->slots[i].node;
        q->gx[i] = (int8_t)(sw->slots[i].gpus && sw->in->items[i].gpus == 1
                                ? __builtin_ctzll(sw->slots[i].gpus)
                                : -1);
    }
}

/* Mean share of dimensions in which particles differ from the global best. */
static double diversity(const struct swarm *sw)
{
    uint32_t ni = sw->in->n_items;
    if (ni == 0)
        return 1;
    double d = 0;
    for (uint32_t k = 0; k < sw->n; k++)
        for (uint32_t i = 0; i < ni; i++)
            d += sw->pt[k].x[i] != sw->gx[i];
    return d / ((double)sw->n * ni);
}

static void move(struct swarm *sw, struct particle *q, double w, double c1, double c2)
{
    for (uint32_t i = 0; i < sw->in->n_items; i++) {
        double r1 = eco_rng_uniform(&sw->rng), r2 = eco_rng_uniform(&sw->rng);
        double a = c1 * r1 * (q->x[i] != q->px[i]), b = c2 * r2 * (q->x[i] != sw->gx[i]);
        double v = w * q->v[i] + a + b;
        if (v > VMAX)
            v = VMAX;
        q->v[i] = (float)v;
        if (a + b <= 0 || eco_rng_uniform(&sw->rng) >= tanh(v / 2))
            continue;
        if (eco_rng_uniform(&sw->rng) * (a + b) < a) {
            q->x[i] = q->px[i];
            q->gx[i] = q->pgx[i];
        } else {
            q->x[i] = sw->gx[i];
            q->gx[i] = sw->ggx[i];
        }
    }
}

/* Tells p->progress how far the swarm is, with its best position so far. */
static void pso_progress(const struct eco_pl_params *p, const char *stage, uint64_t step,
                         uint64_t steps, const struct fitness *best)
{
    if (p->progress) {
        struct eco_pl_progress pr = {
            stage, step, steps, best->placed, best->obj < INFINITY ? best->obj : NAN, NAN};
        p->progress(p->progress_ctx, &pr);
    }
}

/* The swarm on sw->in (sw->in, p, base, base_frag, wl and off set by the caller): seeds,
 * iterations, the best position decoded into slots. 0 or -ENOMEM. */
static int run_swarm(struct swarm *sw, struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                     int improved)
{
    const struct eco_pl_instance *in = sw->in;
    const struct eco_pl_params *p = sw->p;
    int seeding = improved && !(sw->off & ECO_PL_PSO_OFF_SEEDING);
    int adaptive = improved && !(sw->off & ECO_PL_PSO_OFF_ADAPTIVE);
    int mutation = improved && !(sw->off & ECO_PL_PSO_OFF_MUTATION);
    sw->n = p->swarm ? p->swarm : DEFAULT_SWARM;
    uint32_t iters = p->iterations ? p->iterations : DEFAULT_ITERS;
    if (improved && (sw->off & ECO_PL_PSO_OFF_SWARM)) {
        sw->n = N_SEEDS; /* the seeds and their local search, nothing else */
        iters = 0;
    }
    eco_rng_init(&sw->rng, p->seed);
    sw->counts = out;
    int rc = swarm_alloc(sw);
    if (rc)
        return rc;
    uint32_t ni = in->n_items;
    sw->gf = (struct fitness){0, 0, 0, INFINITY};
    /* greedy seeds: offline dot-product, fgd, bfd, ffd; online fgd first (its choice for the
     * window given what is placed, the baseline the swarm must beat), then dot-product, and
     * bfd and ffd over the window in decreasing order */
    static const int off_rule[] = {ECO_PL_RULE_DOT, ECO_PL_RULE_FGD, ECO_PL_RULE_BEST,
                                   ECO_PL_RULE_FIRST};
    static const int on_rule[] = {ECO_PL_RULE_FGD, ECO_PL_RULE_DOT, ECO_PL_RULE_BEST,
                                  ECO_PL_RULE_FIRST};
    static const int seed_dec[] = {0, 0, 1, 1};
    const int *seed_rule = sw->base ? on_rule : off_rule;
    for (uint32_t k = 0; k < sw->n; k++) {
        struct particle *q = &sw->pt[k];
        if (k > 0 && p->stop && p->stop(p->stop_ctx)) {
            sw->n = k; /* out of time: the swarm is what is seeded so far */
            break;
        }
        if (seeding && k < N_SEEDS) {
            seed_greedy(sw, q, seed_rule[k], seed_dec[k]);
            if (out)
                out->seeds++;
        } else {
            for (uint32_t i = 0; i < ni; i++) {
                q->x[i] = random_node(sw, i);
                q->gx[i] = -1;
            }
        }
        q->pf = (struct fitness){0, 0, 0, INFINITY};
        settle(sw, q, improved);
        pso_progress(p, "seeding", k + 1, sw->n, &sw->gf);
    }
    uint32_t t = 0;
    for (; t < iters; t++) {
        if (p->stop && p->stop(p->stop_ctx))
            break;
        double w = BASIC_W, c1 = BASIC_C, c2 = BASIC_C;
        if (adaptive) {
            double r = iters > 1 ? (double)t / (iters - 1) : 1;
            w = W_MAX - (W_MAX - W_MIN) * r;
            c1 = C_HI - (C_HI - C_LO) * r;
            c2 = C_LO + (C_HI - C_LO) * r;
        }
        if (out)
            out->inertia = w;
        if (mutation && diversity(sw) < DIV_MIN) {
            if (out)
                out->mutations++;
            for (uint32_t k = 0; k < sw->n; k++) {
                struct particle *q = &sw->pt[k];
                if (!memcmp(q->x, sw->gx, ni * sizeof *q->x))
                    continue; /* the best keeps its place */
                for (uint32_t i = 0; i < ni; i++) {
                    q->v[i] = 0;
                    if (eco_rng_uniform(&sw->rng) < MUT_P) {
                        q->x[i] = random_node(sw, i);
                        q->gx[i] = -1;
                    }
                }
            }
        }
        for (uint32_t k = 0; k < sw->n; k++) {
            if (k && p->stop && p->stop(p->stop_ctx))
                break;
            move(sw, &sw->pt[k], w, c1, c2);
            settle(sw, &sw->pt[k], improved);
        }
        pso_progress(p, "iterating", t + 1, iters, &sw->gf);
    }
    repair(sw, sw->gx, sw->ggx);
    memcpy(slots, sw->slots, ni * sizeof *slots);
    if (out)
        out->iterations += t;
    return 0;
}

static int run_offline(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                       struct eco_pl_slot *slots, struct eco_pl_outcome *out, int improved)
{
    struct swarm sw = {.in = in, .p = p, .off = p->pso_off};
    if (out)
        out->iterations = out->seeds = out->mutations = out->local_searches = 0, out->inertia = 0;
    int rc = run_swarm(&sw, slots, out, improved);
    swarm_free(&sw);
    return rc;
}

/* Online: the items in windows of p->window in arrival order, each window placed by a swarm of
 * its own on the items placed before it, which stay put. The fragmentation workload is the
 * whole instance's, as fgd's. */
static int run_online(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                      struct eco_pl_slot *slots, struct eco_pl_outcome *out, int improved)
{
    struct eco_pl_state base = {0};
    struct eco_pl_workload w = {0};
    double *frag = malloc((in->n_nodes ? in->n_nodes : 1) * sizeof *frag);
    int rc = -ENOMEM;
    if (!frag || eco_pl_state_init(&base, in))
        goto out;
    if (eco_pl_workload_from_items(in, &w))
        goto out;
    for (uint32_t n = 0; n < in->n_nodes; n++)
        frag[n] = eco_pl_node_frag(&base, &w, n, NULL);
    if (out)
        out->iterations = out->seeds = out->mutations = out->local_searches = 0, out->inertia = 0;
    struct eco_pl_params wp = *p;
    wp.progress = NULL; /* one line per window below, not per iteration */
    uint64_t windows = (in->n_items + p->window - 1) / p->window;
    rc = 0;
    for (uint32_t b = 0, k = 0; b < in->n_items && !rc; b += p->window, k++) {
        struct eco_pl_instance sub = *in; /* the same nodes, the window's items */
        sub.items = in->items + b;
        sub.n_items = in->n_items - b < p->window ? in->n_items - b : p->window;
        /* a stream of its own per window: windows do not share draws */
        wp.seed = p->seed + 0x9E3779B97F4A7C15ull * (k + 1);
        struct swarm sw = {
            .in = &sub, .p = &wp, .wl = &w, .base = &base, .base_frag = frag, .off = p->pso_off};
        rc = run_swarm(&sw, slots + b, out, improved);
        for (uint32_t i = 0; i < sub.n_items && !rc; i++) {
            if (slots[b + i].node < 0)
                continue;
            eco_pl_take(&base, b + i, &slots[b + i]);
            frag[slots[b + i].node] =
                eco_pl_node_frag(&base, &w, (uint32_t)slots[b + i].node, NULL);
        }
        swarm_free(&sw);
        if (p->progress) {
            struct eco_pl_progress pr = {"windows", k + 1, windows, 0, NAN, NAN};
            p->progress(p->progress_ctx, &pr);
        }
    }
out:
    if (base.in)
        eco_pl_state_fini(&base);
    eco_pl_workload_fini(&w);
    free(frag);
    return rc;
}

static int run_pso(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                   struct eco_pl_slot *slots, struct eco_pl_outcome *out, int improved)
{
    return p->window ? run_online(in, p, slots, out, improved)
                     : run_offline(in, p, slots, out, improved);
}

/* Names of the ECO_PL_PSO_OFF_* bits, in bit order. */
static const char *const off_names[] = {"mutation", "adaptive", "local-search", "seeding", "swarm"};
#define N_OFF (sizeof off_names / sizeof *off_names)

const char *eco_pl_pso_off_names(void)
{
    return "mutation, adaptive, local-search, seeding, swarm";
}

int eco_pl_pso_off_parse(const char *list, unsigned *bits, struct eco_error *err)
{
    unsigned b = 0;
    const char *s = list;
    for (;;) {
        size_t len = strcspn(s, ",");
        size_t k = 0;
        while (k < N_OFF && !(strlen(off_names[k]) == len && !strncmp(off_names[k], s, len)))
            k++;
        if (k == N_OFF)
            return eco_errorf(err, -EINVAL, "unknown operator '%.*s' (known: %s)", (int)len, s,
                              eco_pl_pso_off_names());
        b |= 1u << k;
        if (!s[len])
            break;
        s += len + 1;
    }
    if ((b & ECO_PL_PSO_OFF_SEEDING) && (b & ECO_PL_PSO_OFF_SWARM))
        return eco_errorf(err, -EINVAL, "'seeding' and 'swarm' together leave nothing to run");
    *bits = b;
    return 0;
}

static int solve_pso(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                     struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err)
{
    (void)err;
    return run_pso(in, p, slots, out, 1);
}

static int solve_pso_basic(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                           struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                           struct eco_error *err)
{
    (void)err;
    return run_pso(in, p, slots, out, 0);
}

const struct eco_pl_algo eco_pl_algo_pso = {
    .name = "pso",
    .summary = "improved discrete PSO: greedy seeds, decreasing inertia, time-varying "
               "acceleration, diversity-triggered mutation, host-elimination local search",
    .solve = solve_pso,
};

const struct eco_pl_algo eco_pl_algo_pso_basic = {
    .name = "pso-basic",
    .summary = "standard discrete PSO: random swarm, constant inertia 0.7298 and acceleration "
               "1.49618, no mutation or local search",
    .solve = solve_pso_basic,
};
