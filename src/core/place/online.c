/* SPDX-License-Identifier: MIT */
/* The online baselines of the FGD paper (Weng et al., USENIX ATC '23): random, gpu-clustering,
 * gpu-packing, best-fit and dot-product-ref place items in arrival order, scoring every node that
 * fits as the reference simulator's score plugins do (hkust-adsl/kubernetes-scheduler-simulator,
 * pkg/simulator/plugin/<name>_score.go). See docs/policies/placement.md. */
#include <errno.h>
#include <stdlib.h>
#include "ecosched/place.h"
#include "ecosched/rng.h"

/* kube-scheduler's score range (framework.MinNodeScore, framework.MaxNodeScore), which the
 * reference's integer scores and their ties are built on. */
#define MIN_SCORE 0
#define MAX_SCORE 100
/* The reference's normalisers (pkg/type/open-gpu-share/utils/const.go MaxSpecCpu and
 * MaxSpecGpu): the largest node of the Alibaba trace, 128 cores and 8 GPUs in milli units,
 * fixed whatever the cluster. */
#define MAX_SPEC_CPU 128000
#define MAX_SPEC_GPU 8000
/* best-fit's weights of CPU and GPU (best_fit_score.go getBestFitScore: 0.5, 0.5). */
#define BEST_FIT_WEIGHT 0.5

/* Placement state plus, for gpu-clustering, the affinity tags each node holds (bit 0: a
 * shared GPU, bit k: k whole GPUs, as gpushareutils.GetGpuAffinityFromPodAnnotation). */
struct online {
    struct eco_pl_state s;
    uint64_t *tags;
};

typedef int64_t (*score_fn)(const struct online *o, uint32_t item, uint32_t n);

static int64_t gpu_left(const struct eco_pl_state *s, uint32_t n)
{
    int64_t sum = 0;
    for (uint32_t g = 0; g < s->in->nodes[n].gpus; g++)
        sum += s->gpu_free[s->gpu_off[n] + g];
    return sum;
}

static uint64_t tag_of(const struct eco_pl_item *it)
{
    if (it->gpus == 0)
        return 0;
    if (it->gpu_milli < ECO_PL_GPU_MILLI)
        return 1;
    /* 64 whole GPUs share bit 63 with 63: no node of the traces has more than 8 */
    return 1ull << (it->gpus < 63 ? it->gpus : 63);
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* best_fit_score.go getBestFitScore: 0.5 (CPU free - request) / 128 cores + 0.5 (GPU free -
 * request) / 8 GPUs, lower is better, reported as (1 - that) x 100 truncated to an integer. */
static int64_t best_fit_score(const struct online *o, uint32_t item, uint32_t n)
{
    const struct eco_pl_item *it = &o->s.in->items[item];
    double score = 0;
    score += (double)(o->s.cpu_free[n] - it->cpu_milli) / MAX_SPEC_CPU * BEST_FIT_WEIGHT;
    score += (double)(gpu_left(&o->s, n) - (int64_t)it->gpus * it->gpu_milli) / MAX_SPEC_GPU *
             BEST_FIT_WEIGHT;
    return (int64_t)((1.0 - score) * MAX_SCORE);
}

/* gpu_packing_score.go getPackingScore: a CPU-only item scores 0 everywhere; a node with all
 * GPUs free max(33 - free GPUs, free GPUs); else the GPUs the item would use, least free
 * first: if some are wholly free max(50 - their number, 33), else max(100 - sum of their free
 * percentages / 10, 50). */
static int64_t gpu_packing_score(const struct online *o, uint32_t item, uint32_t n)
{
    const struct eco_pl_item *it = &o->s.in->items[item];
    const uint16_t *f = o->s.gpu_free + o->s.gpu_off[n];
    uint32_t ng = o->s.in->nodes[n].gpus, full = 0;
    if (it->gpus == 0)
        return MIN_SCORE;
    for (uint32_t g = 0; g < ng; g++)
        full += f[g] == ECO_PL_GPU_MILLI;
    if (full == ng)
        return max64(MAX_SCORE / 3 - (int64_t)full, full);
    uint32_t idx[ECO_PL_MAX_GPUS];
    for (uint32_t g = 0; g < ng; g++) { /* stable insertion sort, least free first */
        uint32_t k = g;
        for (; k > 0 && f[idx[k - 1]] > f[g]; k--)
            idx[k] = idx[k - 1];
        idx[k] = g;
    }
    int64_t need = it->gpus, used_full = 0, ratio = 0;
    for (uint32_t k = 0; k < ng && need > 0; k++) {
        uint16_t left = f[idx[k]];
        if (it->gpu_milli > left)
            continue;
        need--;
        used_full += left == ECO_PL_GPU_MILLI;
        ratio += left * 100 / ECO_PL_GPU_MILLI;
    }
    if (need > 0)
        return MIN_SCORE; /* unreachable: the node fits */
    if (used_full > 0)
        return max64(MAX_SCORE / 2 - used_full, MAX_SCORE / 3);
    return max64(MAX_SCORE - ratio / 10, MAX_SCORE / 2);
}

/* gpu_clustering_score.go Score: a CPU-only item scores 0 everywhere; a GPU item gets
 * 25 (8 GPUs - free GPUs) / 8 GPUs (integer) plus 75 on a node whose only affinity is the
 * item's, 50 on one that has it among others, 25 on a node with no GPU item, 0 otherwise. */
static int64_t gpu_clustering_score(const struct online *o, uint32_t item, uint32_t n)
{
    const struct eco_pl_item *it = &o->s.in->items[item];
    uint64_t tag = tag_of(it), t = o->tags[n];
    if (!tag)
        return MIN_SCORE;
    int64_t base = MAX_SCORE / 4 * (MAX_SPEC_GPU - gpu_left(&o->s, n)) / MAX_SPEC_GPU;
    if (t & tag)
        return base + (__builtin_popcountll(t) == 1 ? MAX_SCORE * 3 / 4 : MAX_SCORE * 2 / 4);
    return base + (t == 0 ? MAX_SCORE / 4 : 0);
}

/* dot_product_score.go calculateDotProductScore as the paper's runs configure it (dimExtMethod
 * "merge", normMethod "max"): the dot product of the node's free (CPU, GPU) and the request,
 * both over (128 cores, 8 GPUs), halved; reported as int((1 - that) x 100), so the node with
 * the smallest dot product wins, ties to the lower index. */
static int64_t dot_product_ref_score(const struct online *o, uint32_t item, uint32_t n)
{
    const struct eco_pl_item *it = &o->s.in->items[item];
    double node[2] = {(double)o->s.cpu_free[n] / MAX_SPEC_CPU,
                      (double)gpu_left(&o->s, n) / MAX_SPEC_GPU};
    double pod[2] = {(double)it->cpu_milli / MAX_SPEC_CPU,
                     (double)((int64_t)it->gpus * it->gpu_milli) / MAX_SPEC_GPU};
    double dot = 0;
    for (int r = 0; r < 2; r++)
        dot += node[r] * pod[r];
    return (int64_t)(MAX_SCORE * (1 - dot / 2));
}

/* plugin_utils.go NormalizeScore, which best-fit applies: min-max scaling of the nodes'
 * scores to 0..100 in integers, all 0 when they are equal. */
static int64_t normalized(int64_t v, int64_t lo, int64_t hi)
{
    if (hi == lo)
        return MIN_SCORE;
    return (v - lo) * (MAX_SCORE - MIN_SCORE) / (hi - lo) + MIN_SCORE;
}

/* The node with the highest score among those that fit; ties go to the lower index (the
 * reference's selectHost takes the lexicographically smallest name, and openb's names are
 * zero-padded in file order). -1 when none fits. */
static int64_t pick_scored(const struct online *o, score_fn score, int normalize, uint32_t item,
                           int64_t *sc)
{
    uint32_t nn = o->s.in->n_nodes;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t n = 0; n < nn; n++) {
        sc[n] = INT64_MIN;
        if (!eco_pl_fits(&o->s, item, n))
            continue;
        sc[n] = score(o, item, n);
        lo = sc[n] < lo ? sc[n] : lo;
        hi = sc[n] > hi ? sc[n] : hi;
    }
    int64_t best = -1, best_sc = 0;
    for (uint32_t n = 0; n < nn; n++) {
        if (sc[n] == INT64_MIN)
            continue;
        int64_t v = normalize ? normalized(sc[n], lo, hi) : sc[n];
        if (best < 0 || v > best_sc) {
            best = n;
            best_sc = v;
        }
    }
    return best;
}

static uint32_t draw_below(struct eco_rng *r, uint32_t k)
{
    uint32_t v = (uint32_t)(eco_rng_uniform(r) * k);
    return v < k ? v : k - 1;
}

/* random_score.go PreScore: a node drawn uniformly among those that fit; then, for a shared
 * GPU, a GPU drawn uniformly among those that hold it (open_gpu_share.go
 * allocateGpuIdBasedOnRandomFit). *gpus gets the GPUs; -1 when no node fits. */
static int64_t pick_random(const struct online *o, struct eco_rng *r, uint32_t item, uint64_t *gpus)
{
    const struct eco_pl_instance *in = o->s.in;
    const struct eco_pl_item *it = &in->items[item];
    uint32_t cnt = 0;
    for (uint32_t n = 0; n < in->n_nodes; n++)
        cnt += (uint32_t)eco_pl_fits(&o->s, item, n);
    if (cnt == 0)
        return -1;
    uint32_t k = draw_below(r, cnt), n = 0;
    for (;; n++)
        if (eco_pl_fits(&o->s, item, n) && k-- == 0)
            break;
    *gpus = eco_pl_pick_gpus(&o->s, item, n, -1);
    if (it->gpus == 1 && it->gpu_milli < ECO_PL_GPU_MILLI) {
        const uint16_t *f = o->s.gpu_free + o->s.gpu_off[n];
        uint32_t fit = 0, g = 0;
        for (uint32_t h = 0; h < in->nodes[n].gpus; h++)
            fit += f[h] >= it->gpu_milli;
        for (uint32_t j = draw_below(r, fit);; g++)
            if (f[g] >= it->gpu_milli && j-- == 0)
                break;
        *gpus = 1ull << g;
    }
    return n;
}

/* Items in arrival order, each on the node `score` ranks first (NULL: random), its GPUs by
 * best fit as the reference's default gpuSelMethod "best" (eco_pl_pick_gpus). */
static int online_run(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                      score_fn score, int normalize, struct eco_pl_slot *slots)
{
    struct online o = {0};
    struct eco_rng rng;
    int64_t *sc = malloc((in->n_nodes ? in->n_nodes : 1) * sizeof *sc);
    int rc = -ENOMEM;
    o.tags = calloc(in->n_nodes ? in->n_nodes : 1, sizeof *o.tags);
    if (!sc || !o.tags || eco_pl_state_init(&o.s, in)) {
        o.s.in = NULL;
        goto out;
    }
    eco_rng_init(&rng, p ? p->seed : 0);
    for (uint32_t i = 0; i < in->n_items; i++) {
        uint64_t gpus = 0;
        int64_t n =
            score ? pick_scored(&o, score, normalize, i, sc) : pick_random(&o, &rng, i, &gpus);
        if (score && n >= 0)
            gpus = eco_pl_pick_gpus(&o.s, i, (uint32_t)n, -1);
        slots[i] = (struct eco_pl_slot){.node = (int32_t)n, .gpus = n >= 0 ? gpus : 0};
        if (n < 0)
            continue;
        eco_pl_take(&o.s, i, &slots[i]);
        o.tags[n] |= tag_of(&in->items[i]);
    }
    rc = 0;
out:
    if (o.s.in)
        eco_pl_state_fini(&o.s);
    free(o.tags);
    free(sc);
    return rc;
}

static int solve_random(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                        struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                        struct eco_error *err)
{
    (void)out, (void)err;
    return online_run(in, p, NULL, 0, slots);
}

static int solve_clustering(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                            struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                            struct eco_error *err)
{
    (void)out, (void)err;
    return online_run(in, p, gpu_clustering_score, 0, slots);
}

static int solve_packing(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                         struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                         struct eco_error *err)
{
    (void)out, (void)err;
    return online_run(in, p, gpu_packing_score, 0, slots);
}

static int solve_dot_ref(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                         struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                         struct eco_error *err)
{
    (void)out, (void)err;
    return online_run(in, p, dot_product_ref_score, 0, slots);
}

static int solve_best_fit(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                          struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                          struct eco_error *err)
{
    (void)out, (void)err;
    return online_run(in, p, best_fit_score, 1, slots);
}

const struct eco_pl_algo eco_pl_algo_random = {
    .name = "random",
    .summary = "items in arrival order, each on a node drawn uniformly (--seed) among those "
               "that fit, a shared GPU drawn likewise (FGD paper's Random)",
    .solve = solve_random,
};
const struct eco_pl_algo eco_pl_algo_gpu_clustering = {
    .name = "gpu-clustering",
    .summary = "items in arrival order, each on a node already holding only its kind of GPU "
               "request, then a mixed one, an idle one, any (FGD paper's GpuClustering)",
    .solve = solve_clustering,
};
const struct eco_pl_algo eco_pl_algo_gpu_packing = {
    .name = "gpu-packing",
    .summary = "items in arrival order, each on a partly used GPU, else free GPUs of a used "
               "node, else an idle node (FGD paper's GpuPacking)",
    .solve = solve_packing,
};
const struct eco_pl_algo eco_pl_algo_dot_product_ref = {
    .name = "dot-product-ref",
    .summary = "items in arrival order, each on the node whose free CPU and GPU over 128 cores "
               "and 8 GPUs have the smallest dot product with the request (FGD paper's "
               "DotProduct as its simulator codes it)",
    .solve = solve_dot_ref,
};
const struct eco_pl_algo eco_pl_algo_best_fit = {
    .name = "best-fit",
    .summary = "items in arrival order, each on the node with the least free CPU and GPU left "
               "after it, weighted 1/2 each (FGD paper's BestFit)",
    .solve = solve_best_fit,
};
