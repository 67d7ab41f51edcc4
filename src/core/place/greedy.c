/* SPDX-License-Identifier: MIT */
/* Greedy placements: first fit and best fit by dominant resource on items in decreasing order
 * (ffd, bfd), the dot-product rule of Tetris (Grandl et al., SIGCOMM '14) and fragmentation
 * gradient descent (fgd, Weng et al., USENIX ATC '23) on items in arrival order. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/place.h"
#include "place_internal.h"

/* Mean capacity of CPU, memory and GPU over the nodes that have some. */
static void mean_caps(const struct eco_pl_instance *in, double cap[3])
{
    double sum[3] = {0, 0, 0}, cnt[3] = {0, 0, 0};
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        const struct eco_pl_node *nd = &in->nodes[n];
        double v[3] = {(double)nd->cpu_milli, (double)nd->mem_mib, nd->gpus * 1000.0};
        for (int r = 0; r < 3; r++)
            if (v[r] > 0) {
                sum[r] += v[r];
                cnt[r]++;
            }
    }
    for (int r = 0; r < 3; r++)
        cap[r] = cnt[r] > 0 ? sum[r] / cnt[r] : 1;
}

static void item_demand(const struct eco_pl_item *it, double d[3])
{
    d[0] = (double)it->cpu_milli;
    d[1] = (double)it->mem_mib;
    d[2] = (double)it->gpus * it->gpu_milli;
}

struct keyed {
    double key;
    uint32_t idx;
};

static int by_key_desc(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void eco_pl_order_decreasing(const struct eco_pl_instance *in, uint32_t *order)
{
    double cap[3];
    struct keyed *k = malloc((in->n_items ? in->n_items : 1) * sizeof *k);
    mean_caps(in, cap);
    for (uint32_t i = 0; i < in->n_items; i++) {
        double d[3], m = 0;
        item_demand(&in->items[i], d);
        for (int r = 0; r < 3; r++)
            if (d[r] / cap[r] > m)
                m = d[r] / cap[r];
        order[i] = i;
        if (k)
            k[i] = (struct keyed){m, i};
    }
    if (!k)
        return; /* out of memory: arrival order */
    qsort(k, in->n_items, sizeof *k, by_key_desc);
    for (uint32_t i = 0; i < in->n_items; i++)
        order[i] = k[i].idx;
    free(k);
}

/* The item's dominant resource: the largest demand relative to the mean node capacity. */
static int dominant(const struct eco_pl_instance *in, const struct eco_pl_item *it)
{
    double cap[3], d[3];
    mean_caps(in, cap);
    item_demand(it, d);
    int best = 0;
    for (int r = 1; r < 3; r++)
        if (d[r] / cap[r] > d[best] / cap[best])
            best = r;
    return best;
}

/* Free share of resource r on node n, less `less` (a demand in the resource's units). */
static double free_of(const struct eco_pl_state *s, uint32_t n, int r, double less)
{
    const struct eco_pl_node *nd = &s->in->nodes[n];
    if (r == 0)
        return nd->cpu_milli ? ((double)s->cpu_free[n] - less) / nd->cpu_milli : 0;
    if (r == 1)
        return nd->mem_mib ? ((double)s->mem_free[n] - less) / nd->mem_mib : 0;
    double f = 0;
    for (uint32_t g = 0; g < nd->gpus; g++)
        f += s->gpu_free[s->gpu_off[n] + g];
    return nd->gpus ? (f - less) / (nd->gpus * 1000.0) : 0;
}

static double dot_score(const struct eco_pl_state *s, uint32_t item, uint32_t n)
{
    const struct eco_pl_node *nd = &s->in->nodes[n];
    double d[3], cap[3] = {(double)nd->cpu_milli, (double)nd->mem_mib, nd->gpus * 1000.0};
    item_demand(&s->in->items[item], d);
    double score = 0;
    for (int r = 0; r < 3; r++)
        if (cap[r] > 0)
            score += d[r] / cap[r] * free_of(s, n, r, 0);
    return score;
}

/* FGD's score as the reference computes it (hkust-adsl/kubernetes-scheduler-simulator,
 * pkg/simulator/plugin/fgd_score.go): int64(sigmoid((F_before - F_after) / 1000) x 100) with F
 * in milli-GPUs, i.e. the frag growth `grow` in GPUs squashed and truncated to an integer of
 * 0-100. The truncation makes many nodes tie; the caller keeps the first of them. */
#define FGD_REF_MAX_SCORE 100.0 /* framework.MaxNodeScore of the Kubernetes scheduler */
static double fgd_ref_score(double grow)
{
    return floor(FGD_REF_MAX_SCORE / (1.0 + exp(grow)));
}

/* Share of CPU-only types in the workload. The reference counts all of a node's free GPU share
 * as fragmentation for them (pkg/utils/frag.go NodeGpuShareFragAmount, classes XL and XR),
 * which eco_place__frag_raw leaves out; placing `milli` GPU share on any node lowers that part
 * by share x milli, which moves the reference's truncated score. */
static double cpu_only_share(const struct eco_pl_workload *w)
{
    double sh = 0;
    for (size_t k = 0; w && k < w->n; k++)
        if (w->types[k].gpus == 0)
            sh += w->types[k].share;
    return sh;
}

/* fgd-fine: the growth itself (lower is better), GPU ties by best fit: ecosched's rule before
 * it followed the reference's truncated score, kept because the truncation ignores growth
 * differences below about 0.04 GPU (docs/policies/fgd.md). */
static double fgd_delta(const struct eco_pl_state *s, const struct eco_pl_workload *w,
                        uint32_t item, uint32_t n, double before, uint64_t *gpus_out)
{
    const struct eco_pl_item *it = &s->in->items[item];
    uint32_t ng = s->in->nodes[n].gpus;
    uint16_t f[ECO_PL_MAX_GPUS];
    memcpy(f, s->gpu_free + s->gpu_off[n], ng * sizeof *f);
    int64_t cpu = s->cpu_free[n] - it->cpu_milli, mem = s->mem_free[n] - it->mem_mib;
    double best = 0;
    uint64_t best_mask = 0;
    if (it->gpus == 0) {
        best = eco_place__frag_raw(s->in, w, n, cpu, mem, f) - before;
    } else if (it->gpu_milli < ECO_PL_GPU_MILLI) {
        int have = 0;
        for (uint32_t g = 0; g < ng; g++) {
            if (f[g] < it->gpu_milli)
                continue;
            f[g] -= it->gpu_milli;
            double d = eco_place__frag_raw(s->in, w, n, cpu, mem, f) - before;
            f[g] += it->gpu_milli;
            /* ties: the GPU with less free share (best fit) */
            if (!have || d < best - 1e-9 ||
                (d <= best + 1e-9 &&
                 f[g] < s->gpu_free[s->gpu_off[n] + __builtin_ctzll(best_mask)])) {
                best = d;
                best_mask = 1ull << g;
                have = 1;
            }
        }
    } else {
        best_mask = eco_pl_pick_gpus(s, item, n, -1);
        for (uint64_t m = best_mask; m; m &= m - 1)
            f[__builtin_ctzll(m)] = 0;
        best = eco_place__frag_raw(s->in, w, n, cpu, mem, f) - before;
    }
    *gpus_out = best_mask;
    return best;
}

/* FGD: the reference's score (higher is better) of placing item on node n with its GPU
 * choice; *gpus_out gets it. A shared item takes the first GPU of the highest score (the
 * reference's strict `>` over GPU indices); whole GPUs are the lowest-index free ones
 * (pkg/type/resource.go AllocateExclusiveGpuId). */
static double fgd_score(const struct eco_pl_state *s, const struct eco_pl_workload *w,
                        uint32_t item, uint32_t n, double before, uint64_t *gpus_out)
{
    const struct eco_pl_item *it = &s->in->items[item];
    uint32_t ng = s->in->nodes[n].gpus;
    uint16_t f[ECO_PL_MAX_GPUS];
    memcpy(f, s->gpu_free + s->gpu_off[n], ng * sizeof *f);
    /* CPU and memory after placing decide which task types still fit */
    int64_t cpu = s->cpu_free[n] - it->cpu_milli, mem = s->mem_free[n] - it->mem_mib;
    double cpu_part = -cpu_only_share(w) * it->gpus * it->gpu_milli / ECO_PL_GPU_MILLI;
    double best = 0;
    uint64_t best_mask = 0;
    if (it->gpus == 0) {
        best = fgd_ref_score(eco_place__frag_raw(s->in, w, n, cpu, mem, f) - before);
    } else if (it->gpu_milli < ECO_PL_GPU_MILLI) {
        int have = 0;
        for (uint32_t g = 0; g < ng; g++) {
            if (f[g] < it->gpu_milli)
                continue;
            f[g] -= it->gpu_milli;
            double d = eco_place__frag_raw(s->in, w, n, cpu, mem, f) - before + cpu_part;
            f[g] += it->gpu_milli;
            double sc = fgd_ref_score(d);
            if (!have || sc > best) {
                best = sc;
                best_mask = 1ull << g;
                have = 1;
            }
        }
    } else {
        best_mask = eco_pl_pick_gpus(s, item, n, -1);
        for (uint64_t m = best_mask; m; m &= m - 1)
            f[__builtin_ctzll(m)] = 0;
        best = fgd_ref_score(eco_place__frag_raw(s->in, w, n, cpu, mem, f) - before + cpu_part);
    }
    *gpus_out = best_mask;
    return best;
}

int64_t eco_place__pick_cached(const struct eco_pl_state *s, const struct eco_pl_workload *w,
                               int rule, uint32_t item, const double *frag_now, uint64_t *gpus_out)
{
    const struct eco_pl_instance *in = s->in;
    int dom = rule == ECO_PL_RULE_BEST ? dominant(in, &in->items[item]) : 0;
    double dem[3];
    item_demand(&in->items[item], dem);
    int64_t best = -1;
    double best_score = 0;
    uint64_t best_gpus = 0;
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        if (!eco_pl_fits(s, item, n))
            continue;
        uint64_t gpus = 0;
        double score;
        if (rule == ECO_PL_RULE_FIRST) {
            *gpus_out = eco_pl_pick_gpus(s, item, n, -1);
            return n;
        } else if (rule == ECO_PL_RULE_BEST) {
            /* residual of the dominant resource after placing (lower is better) */
            score = free_of(s, n, dom, dem[dom]);
            gpus = eco_pl_pick_gpus(s, item, n, -1);
        } else if (rule == ECO_PL_RULE_DOT) {
            score = -dot_score(s, item, n);
            gpus = eco_pl_pick_gpus(s, item, n, -1);
        } else {
            double before = frag_now ? frag_now[n] : eco_pl_node_frag(s, w, n, NULL);
            score = rule == ECO_PLACE__RULE_FGD_FINE ? fgd_delta(s, w, item, n, before, &gpus)
                                                     : -fgd_score(s, w, item, n, before, &gpus);
        }
        /* ties (within rounding of the sums; fgd's integer scores tie exactly) keep the lower
         * index, as the reference keeps the lowest node name */
        if (best < 0 || score < best_score - 1e-9) {
            best = n;
            best_score = score;
            best_gpus = gpus;
        }
    }
    *gpus_out = best_gpus;
    return best;
}

int64_t eco_pl_greedy_pick(const struct eco_pl_state *s, const struct eco_pl_workload *w, int rule,
                           uint32_t item, uint64_t *gpus_out)
{
    return eco_place__pick_cached(s, w, rule, item, NULL, gpus_out);
}

int eco_place__greedy_run(const struct eco_pl_instance *in, int rule, int decreasing,
                          struct eco_pl_slot *slots)
{
    struct eco_pl_state s;
    struct eco_pl_workload w = {0};
    uint32_t *order = malloc((in->n_items ? in->n_items : 1) * sizeof *order);
    double *frag = malloc((in->n_nodes ? in->n_nodes : 1) * sizeof *frag);
    int rc = -ENOMEM;
    if (!order || !frag || eco_pl_state_init(&s, in)) {
        free(order);
        free(frag);
        return -ENOMEM;
    }
    int fgd = rule == ECO_PL_RULE_FGD || rule == ECO_PLACE__RULE_FGD_FINE;
    if (fgd && eco_pl_workload_from_items(in, &w))
        goto out;
    for (uint32_t n = 0; n < in->n_nodes; n++)
        frag[n] = fgd ? eco_pl_node_frag(&s, &w, n, NULL) : 0;
    if (decreasing)
        eco_pl_order_decreasing(in, order);
    else
        for (uint32_t i = 0; i < in->n_items; i++)
            order[i] = i;
    for (uint32_t k = 0; k < in->n_items; k++) {
        uint32_t i = order[k];
        uint64_t gpus = 0;
        int64_t n = eco_place__pick_cached(&s, &w, rule, i, frag, &gpus);
        slots[i] = (struct eco_pl_slot){.node = (int32_t)n, .gpus = n >= 0 ? gpus : 0};
        if (n < 0)
            continue;
        eco_pl_take(&s, i, &slots[i]);
        if (fgd)
            frag[n] = eco_pl_node_frag(&s, &w, (uint32_t)n, NULL);
    }
    rc = 0;
out:
    eco_pl_workload_fini(&w);
    eco_pl_state_fini(&s);
    free(order);
    free(frag);
    return rc;
}

static int solve_ffd(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                     struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err)
{
    (void)p, (void)out, (void)err;
    return eco_place__greedy_run(in, ECO_PL_RULE_FIRST, 1, slots);
}

static int solve_bfd(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                     struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err)
{
    (void)p, (void)out, (void)err;
    return eco_place__greedy_run(in, ECO_PL_RULE_BEST, 1, slots);
}

static int solve_dot(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                     struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err)
{
    (void)p, (void)out, (void)err;
    return eco_place__greedy_run(in, ECO_PL_RULE_DOT, 0, slots);
}

static int solve_fgd(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                     struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err)
{
    (void)p, (void)out, (void)err;
    return eco_place__greedy_run(in, ECO_PL_RULE_FGD, 0, slots);
}

static int solve_fgd_fine(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                          struct eco_pl_slot *slots, struct eco_pl_outcome *out,
                          struct eco_error *err)
{
    (void)p, (void)out, (void)err;
    return eco_place__greedy_run(in, ECO_PLACE__RULE_FGD_FINE, 0, slots);
}

static const struct eco_pl_algo ffd_algo = {
    .name = "ffd",
    .summary = "first fit decreasing: items by dominant share, largest first, each on the "
               "lowest-index node that fits",
    .solve = solve_ffd,
};
static const struct eco_pl_algo bfd_algo = {
    .name = "bfd",
    .summary = "best fit decreasing: items by dominant share, each on the node left with the "
               "least of the item's dominant resource",
    .solve = solve_bfd,
};
static const struct eco_pl_algo dot_algo = {
    .name = "dot-product",
    .summary = "items in arrival order, each on the node whose free capacity has the largest "
               "dot product with the request (Tetris)",
    .solve = solve_dot,
};
static const struct eco_pl_algo fgd_algo = {
    .name = "fgd",
    .summary = "fragmentation gradient descent (ATC '23): items in arrival order, each on the "
               "node and GPU where expected GPU fragmentation grows least, scored as the "
               "paper's simulator does (truncated to 0-100)",
    .solve = solve_fgd,
};
static const struct eco_pl_algo fgd_fine_algo = {
    .name = "fgd-fine",
    .summary = "fgd on the growth itself, not the reference's truncated integer score; "
               "GPU ties by best fit",
    .solve = solve_fgd_fine,
};

extern const struct eco_pl_algo eco_pl_algo_pso, eco_pl_algo_pso_basic;
/* online.c: the FGD paper's other online baselines */
extern const struct eco_pl_algo eco_pl_algo_random, eco_pl_algo_gpu_clustering,
    eco_pl_algo_gpu_packing, eco_pl_algo_best_fit, eco_pl_algo_dot_product_ref;

static const struct eco_pl_algo *const algos[] = {
    &ffd_algo,
    &bfd_algo,
    &dot_algo,
    &fgd_algo,
    &fgd_fine_algo,
    &eco_pl_algo_random,
    &eco_pl_algo_gpu_clustering,
    &eco_pl_algo_gpu_packing,
    &eco_pl_algo_best_fit,
    &eco_pl_algo_dot_product_ref,
    &eco_pl_algo_pso,
    &eco_pl_algo_pso_basic,
    NULL,
};

const struct eco_pl_algo *const *eco_pl_algo_all(void)
{
    return algos;
}

const struct eco_pl_algo *eco_pl_algo_find(const char *name)
{
    for (size_t i = 0; algos[i]; i++)
        if (!strcmp(algos[i]->name, name))
            return algos[i];
    return NULL;
}
