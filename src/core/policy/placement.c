/* SPDX-License-Identifier: MIT */
/* Placements: which GPUs a starting job gets. pool ignores node boundaries; pack (best fit),
 * spread (worst fit) and first-fit keep a job that fits on one node on one node, and give a
 * larger job whole free nodes plus one node for the rest, all or nothing. See
 * docs/policies/placement.md. */
#include <errno.h>
#include <stdbool.h>
#include <strings.h>
#include "ecosched/policy.h"
#include "ecosched/place.h"
#include "ecosched/power.h"

enum fit_mode { FIT_BEST, FIT_WORST, FIT_FIRST };

static bool eligible(const struct eco_node_class *nc, const struct eco_job *job)
{
    return job->gpu_type < 0 || nc->type == job->gpu_type;
}

static bool excluded(uint32_t node, const struct eco_alloc *taken, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (taken[i].node == node)
            return true;
    return false;
}

/* Lowest-index node of class cls with exactly f free GPUs that is not in taken[], or -1. */
static int64_t find_free(const struct eco_freemap *fm, size_t cls, uint16_t f,
                         const struct eco_alloc *taken, size_t n_taken)
{
    int64_t node = eco_freemap_find(fm, cls, f, 0);
    while (node >= 0 && excluded((uint32_t)node, taken, n_taken))
        node = eco_freemap_find(fm, cls, f, (uint32_t)node + 1);
    return node;
}

/* Among eligible classes, the lowest-index node with exactly f free GPUs, or -1. */
static int64_t find_any_class(const struct eco_freemap *fm, const struct eco_job *job, uint16_t f,
                              const struct eco_alloc *taken, size_t n_taken)
{
    int64_t best = -1;
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++) {
        const struct eco_node_class *nc = eco_freemap_class(fm, k);
        if (nc->gpus < f || !eligible(nc, job))
            continue;
        int64_t node = find_free(fm, k, f, taken, n_taken);
        if (node >= 0 && (best < 0 || node < best))
            best = node;
    }
    return best;
}

/* One node with at least g free GPUs, chosen by mode; -1 when none. */
static int64_t single_node(const struct eco_freemap *fm, const struct eco_job *job, uint16_t g,
                           enum fit_mode mode, const struct eco_alloc *taken, size_t n_taken)
{
    uint16_t maxcap = eco_freemap_cluster(fm)->max_gpus_per_node;
    if (g > maxcap)
        return -1;
    if (mode == FIT_BEST) {
        for (uint32_t f = g; f <= maxcap; f++) {
            int64_t node = find_any_class(fm, job, (uint16_t)f, taken, n_taken);
            if (node >= 0)
                return node;
        }
        return -1;
    }
    if (mode == FIT_WORST) {
        for (uint32_t f = maxcap; f >= g && f > 0; f--) {
            int64_t node = find_any_class(fm, job, (uint16_t)f, taken, n_taken);
            if (node >= 0)
                return node;
        }
        return -1;
    }
    int64_t best = -1;
    for (uint32_t f = g; f <= maxcap; f++) {
        int64_t node = find_any_class(fm, job, (uint16_t)f, taken, n_taken);
        if (node >= 0 && (best < 0 || node < best))
            best = node;
    }
    return best;
}

/* How the node for the rest of a multi-node job is chosen. */
struct rest_picker {
    int64_t (*pick)(const struct rest_picker *rp, uint16_t g, const struct eco_alloc *taken,
                    size_t n_taken);
    const struct eco_freemap *fm;
    const struct eco_job *job;
    enum fit_mode mode;
    const size_t *order;
    size_t n_order;
};

/* A job that fits on no single node now: whole free nodes of the classes in `order`, lowest
 * index first, while they are not larger than what is left, then one node for the rest; all
 * or nothing. */
static int place_multi(const struct eco_freemap *fm, const struct eco_job *job, const size_t *order,
                       size_t n_order, const struct rest_picker *rp, struct eco_alloc *out,
                       size_t cap)
{
    uint32_t g = job->gpus;
    if (eco_freemap_total_free(fm, job->gpu_type) < g)
        return -EAGAIN;
    size_t n = 0;
    uint32_t rem = g;
    for (size_t i = 0; i < n_order && rem > 0; i++) {
        const struct eco_node_class *nc = eco_freemap_class(fm, order[i]);
        if (nc->gpus > rem)
            continue;
        for (int64_t node = eco_freemap_find(fm, order[i], nc->gpus, 0);
             node >= 0 && nc->gpus <= rem;
             node = eco_freemap_find(fm, order[i], nc->gpus, (uint32_t)node + 1)) {
            if (n == cap)
                return -ENOSPC;
            out[n++] = (struct eco_alloc){.node = (uint32_t)node, .gpus = nc->gpus};
            rem -= nc->gpus;
        }
    }
    if (rem > 0) {
        int64_t node = rem <= UINT16_MAX ? rp->pick(rp, (uint16_t)rem, out, n) : -1;
        if (node < 0)
            return -EAGAIN;
        if (n == cap)
            return -ENOSPC;
        out[n++] = (struct eco_alloc){.node = (uint32_t)node, .gpus = (uint16_t)rem};
    }
    return (int)n;
}

static int64_t pick_fit(const struct rest_picker *rp, uint16_t g, const struct eco_alloc *taken,
                        size_t n_taken)
{
    return single_node(rp->fm, rp->job, g, rp->mode, taken, n_taken);
}

static int place_nodes(const struct eco_freemap *fm, const struct eco_job *job,
                       struct eco_alloc *out, size_t cap, enum fit_mode mode)
{
    uint32_t g = job->gpus;
    if (g == 0)
        return 0;
    if (g <= UINT16_MAX) {
        int64_t node = single_node(fm, job, (uint16_t)g, mode, NULL, 0);
        if (node >= 0) {
            if (cap < 1)
                return -ENOSPC;
            out[0] = (struct eco_alloc){.node = (uint32_t)node, .gpus = (uint16_t)g};
            return 1;
        }
    }
    /* Whole free nodes, largest class first (class order), lowest index first. */
    size_t order[ECO_MAX_NODE_GROUPS], n_order = 0;
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++)
        if (eligible(eco_freemap_class(fm, k), job))
            order[n_order++] = k;
    struct rest_picker rp = {.pick = pick_fit, .fm = fm, .job = job, .mode = mode};
    return place_multi(fm, job, order, n_order, &rp, out, cap);
}

static int place_pack(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                      struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    return place_nodes(fm, job, out, cap, FIT_BEST);
}

static int place_spread(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                        struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    return place_nodes(fm, job, out, cap, FIT_WORST);
}

static int place_first_fit(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                           struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    return place_nodes(fm, job, out, cap, FIT_FIRST);
}

/* pool: every GPU of the cluster in one pool; GPUs are drawn from nodes with free GPUs, node
 * class by node class (largest first), lowest index first, only for bookkeeping. */
static int place_pool(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                      struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    uint32_t rem = job->gpus;
    if (eco_freemap_total_free(fm, job->gpu_type) < rem)
        return -EAGAIN;
    size_t n = 0;
    for (size_t k = 0; k < eco_freemap_n_classes(fm) && rem > 0; k++) {
        if (!eligible(eco_freemap_class(fm, k), job))
            continue;
        for (int64_t node = eco_freemap_find_nonempty(fm, k, 0); node >= 0 && rem > 0;
             node = eco_freemap_find_nonempty(fm, k, (uint32_t)node + 1)) {
            uint16_t f = eco_freemap_free(fm, (uint32_t)node);
            uint16_t take = f < rem ? f : (uint16_t)rem;
            if (n == cap)
                return -ENOSPC;
            out[n++] = (struct eco_alloc){.node = (uint32_t)node, .gpus = take};
            rem -= take;
        }
    }
    return rem ? -EAGAIN : (int)n;
}

/* ---- energy ------------------------------------------------------------------------------ */

/* Energy per unit of the job's work on a GPU of class k: (GPU power + the node's host power
 * shared by its GPUs) / speed, J per reference second. */
static double class_energy(const struct eco_freemap *fm, size_t k, const struct eco_job *job)
{
    const struct eco_node_class *nc = eco_freemap_class(fm, k);
    const struct eco_node_group *g = &eco_freemap_cluster(fm)->groups[nc->group];
    double speed, power_w;
    if (eco_power_eval(nc->type, job->workload, g->limit_w, &speed, &power_w) || !(speed > 0))
        return 1e300;
    return (power_w + g->base_w / nc->gpus) / speed;
}

#define MAX_CLASSES ECO_MAX_NODE_GROUPS

/* Eligible classes ordered by energy per work (ties: class order). Returns the count. */
static size_t energy_order(const struct eco_freemap *fm, const struct eco_job *job, size_t *order)
{
    double e[MAX_CLASSES];
    size_t n = 0;
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++) {
        if (!eligible(eco_freemap_class(fm, k), job))
            continue;
        double ek = class_energy(fm, k, job);
        size_t i = n++;
        while (i > 0 && e[i - 1] > ek) {
            e[i] = e[i - 1];
            order[i] = order[i - 1];
            i--;
        }
        e[i] = ek;
        order[i] = k;
    }
    return n;
}

/* Among the partly used nodes of class k with at least g free GPUs (not in taken[]), the best
 * fit (fewest free GPUs), and among those the one whose jobs' expected end best covers the new
 * job's end `end_s`: the earliest-ending node still busy until end_s, else the latest-ending
 * one, so that the node's idle time starts as late as it would anyway and whole nodes fall
 * idle together. Ties: lower index. -1 when none. Best fit comes first: choosing by end time
 * alone scattered free GPUs over nodes, so multi-GPU jobs found no node with room while the
 * cluster held enough free GPUs in total (openb at 0.75x peak with power-down: average JCT
 * +36 % against pack; docs/policies/placement.md#energy). */
static int64_t aligned_node(const struct eco_freemap *fm, size_t k, uint16_t g, double end_s,
                            const struct eco_alloc *taken, size_t n_taken)
{
    const struct eco_node_class *nc = eco_freemap_class(fm, k);
    int64_t best = -1;
    int best_covers = 0;
    double best_until = 0;
    for (uint32_t f = g; f < nc->gpus; f++) {
        for (int64_t node = eco_freemap_find(fm, k, (uint16_t)f, 0); node >= 0;
             node = eco_freemap_find(fm, k, (uint16_t)f, (uint32_t)node + 1)) {
            if (excluded((uint32_t)node, taken, n_taken))
                continue;
            double until = eco_freemap_busy_until(fm, (uint32_t)node);
            int covers = until >= end_s;
            int better = best < 0 || (covers && !best_covers) ||
                         (covers && best_covers && until < best_until) ||
                         (!covers && !best_covers && until > best_until);
            if (better) {
                best = node;
                best_covers = covers;
                best_until = until;
            }
        }
        if (best >= 0)
            return best;
    }
    return best;
}

/* A node for g GPUs: a partly used node of the most efficient class that has one (chosen by
 * aligned_node), so that whole nodes stay idle and can be shut down; else a whole free node
 * of the most efficient class. -1 when none. */
static int64_t energy_node(const struct eco_freemap *fm, const struct eco_job *job,
                           const size_t *order, size_t n, uint16_t g, const struct eco_alloc *taken,
                           size_t n_taken)
{
    for (size_t i = 0; i < n; i++) {
        const struct eco_node_class *nc = eco_freemap_class(fm, order[i]);
        const struct eco_node_group *grp = &eco_freemap_cluster(fm)->groups[nc->group];
        double speed, power_w;
        if (eco_power_eval(nc->type, job->workload, grp->limit_w, &speed, &power_w) || !(speed > 0))
            speed = 1;
        double end_s = eco_freemap_now(fm) + job->remaining_s / speed;
        int64_t node = aligned_node(fm, order[i], g, end_s, taken, n_taken);
        if (node >= 0)
            return node;
    }
    for (size_t i = 0; i < n; i++) {
        const struct eco_node_class *nc = eco_freemap_class(fm, order[i]);
        if (nc->gpus < g)
            continue;
        int64_t node = find_free(fm, order[i], nc->gpus, taken, n_taken);
        if (node >= 0)
            return node;
    }
    return -1;
}

static int64_t pick_energy(const struct rest_picker *rp, uint16_t g, const struct eco_alloc *taken,
                           size_t n_taken)
{
    return energy_node(rp->fm, rp->job, rp->order, rp->n_order, g, taken, n_taken);
}

static int place_energy(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                        struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    size_t order[MAX_CLASSES];
    size_t ncls = energy_order(fm, job, order);
    uint32_t g = job->gpus;
    if (g == 0)
        return 0;
    if (cap < 1)
        return -ENOSPC;
    if (g <= UINT16_MAX) {
        int64_t node = energy_node(fm, job, order, ncls, (uint16_t)g, NULL, 0);
        if (node >= 0) {
            out[0] = (struct eco_alloc){.node = (uint32_t)node, .gpus = (uint16_t)g};
            return 1;
        }
    }
    /* Whole free nodes of the most efficient classes, then one node for the rest. */
    struct rest_picker rp = {
        .pick = pick_energy, .fm = fm, .job = job, .order = order, .n_order = ncls};
    return place_multi(fm, job, order, ncls, &rp, out, cap);
}

/* ---- fgd, dot-product (the placement optimisers' rules for whole-GPU jobs) ----------------- */

/* Target workload of fgd in the simulator: GPU counts of openb's default pod list (Weng et al.,
 * ATC '23), shared GPUs counted as one: 1 GPU 6,989 pods, 2: 16, 4: 15, 8: 44 (of 7,064 GPU
 * pods; data/alibaba_gpu_v2023_openb/README.md). */
static const struct {
    uint16_t gpus;
    double share;
} fgd_mix[] = {{1, 6989 / 7064.0}, {2, 16 / 7064.0}, {4, 15 / 7064.0}, {8, 44 / 7064.0}};

/* FGD fragmentation of a node with f whole GPUs free: every task type larger than f leaves
 * all f unusable, F(f) = f x P(size > f). */
static double fgd_frag(uint32_t f)
{
    double tail = 0;
    for (size_t k = 0; k < sizeof fgd_mix / sizeof fgd_mix[0]; k++)
        if (fgd_mix[k].gpus > f)
            tail += fgd_mix[k].share;
    return f * tail;
}

/* Score (lower is better) of putting g GPUs on a node of G GPUs with f free. */
typedef double (*node_score)(uint32_t f, uint32_t G, uint32_t g);

static double score_fgd(uint32_t f, uint32_t G, uint32_t g)
{
    (void)G;
    return fgd_frag(f - g) - fgd_frag(f);
}

/* Tetris dot product of the request and the free capacity, both relative to the node size. */
static double score_dot(uint32_t f, uint32_t G, uint32_t g)
{
    return -((double)g / G) * ((double)f / G);
}

/* Nodes of one class with the same free count score the same: one lookup per (class, f). */
static int64_t scored_node(const struct eco_freemap *fm, const struct eco_job *job, uint16_t g,
                           node_score score, const struct eco_alloc *taken, size_t n_taken)
{
    int64_t best = -1;
    double best_s = 0;
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++) {
        const struct eco_node_class *nc = eco_freemap_class(fm, k);
        if (nc->gpus < g || !eligible(nc, job))
            continue;
        for (uint32_t f = g; f <= nc->gpus; f++) {
            int64_t node = find_free(fm, k, (uint16_t)f, taken, n_taken);
            if (node < 0)
                continue;
            double sc = score(f, nc->gpus, g);
            if (best < 0 || sc < best_s - 1e-12 || (sc <= best_s + 1e-12 && node < best)) {
                best = node;
                best_s = sc;
            }
        }
    }
    return best;
}

struct score_picker {
    struct rest_picker rp; /* first: place_multi passes &rp */
    node_score score;
};

static int64_t pick_scored(const struct rest_picker *rp, uint16_t g, const struct eco_alloc *taken,
                           size_t n_taken)
{
    const struct score_picker *sp = (const struct score_picker *)rp;
    return scored_node(rp->fm, rp->job, g, sp->score, taken, n_taken);
}

static int place_scored(const struct eco_freemap *fm, const struct eco_job *job,
                        struct eco_alloc *out, size_t cap, node_score score)
{
    uint32_t g = job->gpus;
    if (g == 0)
        return 0;
    if (g <= UINT16_MAX) {
        int64_t node = scored_node(fm, job, (uint16_t)g, score, NULL, 0);
        if (node >= 0) {
            if (cap < 1)
                return -ENOSPC;
            out[0] = (struct eco_alloc){.node = (uint32_t)node, .gpus = (uint16_t)g};
            return 1;
        }
    }
    size_t order[ECO_MAX_NODE_GROUPS], n_order = 0;
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++)
        if (eligible(eco_freemap_class(fm, k), job))
            order[n_order++] = k;
    struct score_picker sp = {.rp = {.pick = pick_scored, .fm = fm, .job = job}, .score = score};
    return place_multi(fm, job, order, n_order, &sp.rp, out, cap);
}

static int place_fgd(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                     struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    return place_scored(fm, job, out, cap, score_fgd);
}

static int place_dot(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                     struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    return place_scored(fm, job, out, cap, score_dot);
}

static const struct eco_placement_ops fgd_ops = {
    .name = "fgd",
    .summary = "fragmentation gradient descent (ATC '23): the node where expected GPU "
               "fragmentation for openb's job sizes grows least",
    .place = place_fgd,
};
static const struct eco_placement_ops dot_ops = {
    .name = "dot-product",
    .summary = "Tetris: the node whose free share has the largest dot product with the request",
    .place = place_dot,
};
/* With GPUs the only resource and jobs placed one at a time in queue order, ffd and bfd of
 * `ecosched place` are first-fit and pack; the names are kept so that one list of algorithms
 * works in both commands. */
static const struct eco_placement_ops ffd_ops = {
    .name = "ffd",
    .summary = "first fit (as first-fit; decreasing order is the queue policy's)",
    .place = place_first_fit,
};
static const struct eco_placement_ops bfd_ops = {
    .name = "bfd",
    .summary = "best fit (as pack; decreasing order is the queue policy's)",
    .place = place_pack,
};

static const struct eco_placement_ops energy_ops = {
    .name = "energy",
    .summary = "least energy per unit of work: efficient GPU types first, partly used nodes "
               "before idle ones so that whole nodes fall idle",
    .place = place_energy,
};

static const struct eco_placement_ops pool_ops = {
    .name = "pool",
    .summary = "all GPUs of the cluster are one pool; node boundaries are ignored",
    .place = place_pool,
};
static const struct eco_placement_ops pack_ops = {
    .name = "pack",
    .summary = "best fit: the node with the fewest free GPUs that still fit",
    .place = place_pack,
};
static const struct eco_placement_ops spread_ops = {
    .name = "spread",
    .summary = "worst fit: the node with the most free GPUs",
    .place = place_spread,
};
static const struct eco_placement_ops first_fit_ops = {
    .name = "first-fit",
    .summary = "the lowest-index node that fits",
    .place = place_first_fit,
};

/* ---- pso, pso-basic: the queue of each pass placed as a batch (placement_batch.c) ---------- */

static int plan_pso(void **state, const struct eco_freemap *fm, const struct eco_job *jobs,
                    const uint32_t *queue, size_t n, uint64_t seed)
{
    return eco_placement_batch_plan(state, fm, jobs, queue, n, seed, eco_pl_algo_find("pso"), 0);
}

static int plan_pso_basic(void **state, const struct eco_freemap *fm, const struct eco_job *jobs,
                          const uint32_t *queue, size_t n, uint64_t seed)
{
    return eco_placement_batch_plan(state, fm, jobs, queue, n, seed, eco_pl_algo_find("pso-basic"),
                                    0);
}

static const struct eco_placement_ops pso_ops = {
    .name = "pso",
    .summary = "the queue of each pass placed as a batch by the improved discrete PSO (fewest "
               "nodes touched); best fit where the plan no longer fits",
    .place = place_pack,
    .plan = plan_pso,
    .place_planned = eco_placement_batch_place,
    .plan_free = eco_placement_batch_free,
};
static const struct eco_placement_ops pso_basic_ops = {
    .name = "pso-basic",
    .summary = "as pso with the standard discrete PSO",
    .place = place_pack,
    .plan = plan_pso_basic,
    .place_planned = eco_placement_batch_place,
    .plan_free = eco_placement_batch_free,
};

static const struct eco_placement_ops *const placements[] = {
    &pack_ops, &pool_ops, &spread_ops, &first_fit_ops, &energy_ops,    &ffd_ops,
    &bfd_ops,  &dot_ops,  &fgd_ops,    &pso_ops,       &pso_basic_ops, NULL,
};

const struct eco_placement_ops *const *eco_placement_all(void)
{
    return placements;
}

const struct eco_placement_ops *eco_placement_find(const char *name)
{
    for (size_t i = 0; placements[i]; i++)
        if (!strcasecmp(placements[i]->name, name))
            return placements[i];
    return NULL;
}
