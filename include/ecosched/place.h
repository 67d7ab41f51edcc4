/* SPDX-License-Identifier: MIT */
/* Static placement of items (VMs, containers, pods) onto nodes with CPU, memory and shareable
 * GPUs: instances, feasibility, metrics (FGD fragmentation, active hosts, energy) and the
 * placement algorithms (ffd, bfd, dot-product, fgd, pso, pso-basic, and the online baselines
 * random, gpu-clustering, gpu-packing, best-fit, dot-product-ref; ilp at the edge).
 * See docs/policies/placement-optimisers.md. */
#ifndef ECOSCHED_PLACE_H
#define ECOSCHED_PLACE_H

#include <stdint.h>
#include <stddef.h>
#include "ecosched/error.h"

#define ECO_PL_MAX_MODELS 64  /* distinct GPU models in one instance (bit mask) */
#define ECO_PL_MAX_GPUS 64    /* GPUs per node (bit mask of GPUs) */
#define ECO_PL_GPU_MILLI 1000 /* one whole GPU */
#define ECO_PL_NAME_MAX 48

struct eco_pl_node {
    char name[ECO_PL_NAME_MAX];
    int64_t cpu_milli; /* CPU capacity, 1/1000 core */
    int64_t mem_mib;   /* memory capacity, MiB */
    uint16_t gpus;     /* GPUs on the node */
    int16_t model;     /* index into eco_pl_instance.models, -1: no GPU model */
};

struct eco_pl_item {
    char name[ECO_PL_NAME_MAX];
    int64_t cpu_milli;
    int64_t mem_mib;
    uint16_t gpus;      /* GPUs requested */
    uint16_t gpu_milli; /* per GPU, 1..1000; < 1000 only with gpus == 1 (a shared GPU); 0 when
                           gpus == 0 */
    uint64_t models;    /* allowed GPU models (bits of model indices); 0: any */
};

struct eco_pl_instance {
    struct eco_pl_node *nodes;
    uint32_t n_nodes;
    struct eco_pl_item *items;
    uint32_t n_items;
    char models[ECO_PL_MAX_MODELS][ECO_PL_NAME_MAX];
    uint16_t n_models;
    uint32_t max_gpus; /* largest GPU count of a node */
};

/* Frees nodes and items (not the struct itself). NULL-safe. */
void eco_pl_instance_fini(struct eco_pl_instance *in);
/* Index of model `name` (exact), adding it when new; -1 when ECO_PL_MAX_MODELS are in use. */
int eco_pl_model_index(struct eco_pl_instance *in, const char *name);
/* Checks every node and item (ranges, gpu_milli rules); 0 or -EINVAL naming the entry. */
int eco_pl_instance_check(const struct eco_pl_instance *in, struct eco_error *err);

/* ---- placement state ---------------------------------------------------------------------- */

/* Free resources of every node while items are placed one by one. */
struct eco_pl_state {
    const struct eco_pl_instance *in; /* borrowed */
    int64_t *cpu_free;
    int64_t *mem_free;
    uint16_t *gpu_free; /* free milli-GPU per GPU, node n's GPUs at gpu_off[n] */
    uint32_t *gpu_off;
    uint32_t *n_on; /* items on each node */
};

/* Where one item went: node (-1: not placed) and the bit mask of its GPUs on that node. */
struct eco_pl_slot {
    int32_t node;
    uint64_t gpus;
};

int eco_pl_state_init(struct eco_pl_state *s, const struct eco_pl_instance *in);
void eco_pl_state_fini(struct eco_pl_state *s);
void eco_pl_state_reset(struct eco_pl_state *s);
void eco_pl_state_copy(struct eco_pl_state *dst, const struct eco_pl_state *src);

/* Is node allowed for item by GPU model, and are its total capacities large enough (ignoring
 * what is in use)? */
int eco_pl_compatible(const struct eco_pl_instance *in, uint32_t item, uint32_t node);
/* Would `item` fit on `node` now? 1 or 0. */
int eco_pl_fits(const struct eco_pl_state *s, uint32_t item, uint32_t node);
/* The GPUs `item` would take on `node` now: a shared request takes the GPU with the least free
 * share that still holds it (best fit, lowest index on ties), `prefer` (a GPU index, or -1)
 * when it holds it; a whole-GPU request takes the lowest-index wholly free GPUs. 0 when it does
 * not fit (a CPU-only item gets 0 too: check eco_pl_fits first). */
uint64_t eco_pl_pick_gpus(const struct eco_pl_state *s, uint32_t item, uint32_t node, int prefer);
/* Takes / returns the resources of item on slot->node with GPUs slot->gpus. */
void eco_pl_take(struct eco_pl_state *s, uint32_t item, const struct eco_pl_slot *slot);
void eco_pl_give(struct eco_pl_state *s, uint32_t item, const struct eco_pl_slot *slot);

/* Replays `slots` (one per item) on a fresh state and checks every capacity, GPU share and
 * model constraint. 0 or -EINVAL naming the first violation. */
int eco_pl_verify(const struct eco_pl_instance *in, const struct eco_pl_slot *slots,
                  struct eco_error *err);

/* ---- FGD fragmentation (Weng et al., USENIX ATC '23) -------------------------------------- */

/* A task type of the target workload: a GPU request and its popularity. */
struct eco_pl_task_type {
    int64_t cpu_milli, mem_mib; /* mean of the items of this type */
    uint16_t gpus, gpu_milli;
    uint64_t models;
    double share; /* popularity, the shares of all types sum to 1 */
};

struct eco_pl_workload {
    struct eco_pl_task_type *types;
    size_t n;
};

/* The typical task types of in->items, as the FGD reference simulator builds them: grouped by
 * exact CPU, GPU share, GPU count and model, the most popular kept until they cover 95 % of the
 * items, popularity renormalised (docs/policies/placement.md, "Reference protocol"). 0 or
 * -ENOMEM. Free with eco_pl_workload_fini. */
int eco_pl_workload_from_items(const struct eco_pl_instance *in, struct eco_pl_workload *w);
void eco_pl_workload_fini(struct eco_pl_workload *w);

/* Expected GPU fragmentation of node n for workload w, in GPUs: sum over task types of
 * share x the free GPU amount that the type cannot use (all of it when the type does not fit
 * on the node; else the free shares of GPUs below min(request, 1)). `gpu_free` overrides the
 * node's GPU free shares when not NULL (ngpu entries). */
double eco_pl_node_frag(const struct eco_pl_state *s, const struct eco_pl_workload *w,
                        uint32_t node, const uint16_t *gpu_free);

/* ---- metrics ------------------------------------------------------------------------------ */

struct eco_pl_metrics {
    uint32_t placed, failed;
    int64_t first_failed;    /* index of the first item not placed, -1 when all placed */
    double gpus_requested;   /* GPUs requested by all items */
    double gpus_placed;      /* GPUs of placed items */
    double gpus_before_fail; /* GPUs of the items before the first failure */
    uint32_t active_hosts;   /* nodes with at least one item */
    double cpu_util, mem_util, gpu_util; /* used / capacity over active hosts, 0..1 */
    double gpu_alloc_ratio;              /* GPUs placed / GPUs of the cluster */
    double frag_gpus;                    /* FGD fragmentation summed over nodes, GPUs */
    double frag_ratio;                   /* frag_gpus / free GPUs of the cluster */
    double power_w;                      /* power of active hosts (energy model below) */
    double energy_j;                     /* power_w x hold_s */
    double balance; /* standard deviation of per-node GPU (or CPU) utilisation */
};

/* Power of a node with the given allocated GPU shares: host base power (the simulator's
 * default node figures) + per GPU idle + share x (TDP - idle). */
double eco_pl_node_power_w(const struct eco_pl_instance *in, uint32_t node,
                           const uint16_t *gpu_free);

/* Metrics of `slots` (one per item; assumed feasible), w is the fragmentation workload. */
int eco_pl_metrics_compute(const struct eco_pl_instance *in, const struct eco_pl_workload *w,
                           const struct eco_pl_slot *slots, double hold_s,
                           struct eco_pl_metrics *m);

/* ---- algorithms --------------------------------------------------------------------------- */

enum eco_pl_objective {
    ECO_PL_OBJ_HOSTS = 0, /* fewest active hosts */
    ECO_PL_OBJ_FRAG,      /* least FGD fragmentation */
    ECO_PL_OBJ_ENERGY,    /* least power of active hosts */
    ECO_PL_OBJ_BALANCE,   /* most even GPU utilisation */
};

/* Parses "hosts", "frag", "energy", "balance"; -1 when unknown. */
int eco_pl_objective_parse(const char *s);
const char *eco_pl_objective_name(int obj);

/* How far a pso or ilp run has come (eco_pl_params.progress). */
struct eco_pl_progress {
    const char *stage; /* "seeding", "iterating" (pso), "branch and cut" (ilp) */
    uint64_t step;     /* particles seeded, iterations done, or branch-and-bound nodes */
    uint64_t steps;    /* of so many (0: not known in advance) */
    uint32_t placed;   /* pso: items the best solution so far places (it ranks first) */
    double best;       /* objective of the best solution so far (NAN: none yet) */
    double bound;      /* ilp: best bound of the objective (NAN: none) */
};

/* pso's operators, each switched off by one bit of eco_pl_params.pso_off (the ablation of
 * docs/policies/pso.md, "Ablation"). */
enum {
    ECO_PL_PSO_OFF_MUTATION = 1u << 0,     /* no diversity-triggered mutation */
    ECO_PL_PSO_OFF_ADAPTIVE = 1u << 1,     /* constant inertia and acceleration (pso-basic's) */
    ECO_PL_PSO_OFF_LOCAL_SEARCH = 1u << 2, /* no local search */
    ECO_PL_PSO_OFF_SEEDING = 1u << 3,      /* random particles instead of the greedy seeds */
    ECO_PL_PSO_OFF_SWARM = 1u << 4,        /* the greedy seeds and their local search only */
};

/* Parses a comma-separated list of "mutation", "adaptive", "local-search", "seeding", "swarm"
 * into ECO_PL_PSO_OFF_* bits. 0, or -EINVAL with err naming the unknown entry (or the
 * combination "seeding,swarm", which leaves nothing to run). */
int eco_pl_pso_off_parse(const char *list, unsigned *bits, struct eco_error *err);
/* The names eco_pl_pso_off_parse knows, comma-separated (static storage). */
const char *eco_pl_pso_off_names(void);

struct eco_pl_params {
    uint64_t seed;
    int objective;       /* enum eco_pl_objective */
    uint32_t swarm;      /* particles (pso); 0: default */
    uint32_t iterations; /* iterations (pso); 0: default */
    /* pso, pso-basic: 0 places all items at once (offline); N > 0 places them online, N
     * arriving items at a time given those already placed, which stay put. */
    uint32_t window;
    unsigned pso_off;    /* pso: ECO_PL_PSO_OFF_* bits */
    double time_limit_s; /* ilp: solver limit; others: only through `stop` */
    /* Optional: polled between iterations; non-zero stops early with the best so far. Lets the
     * caller impose a wall-clock limit without the core reading a clock. */
    int (*stop)(void *ctx);
    void *stop_ctx;
    /* Optional: called as the search goes (pso: while seeding and at every iteration; ilp: at
     * every branch-and-cut callback), for a progress display; the core prints nothing. The
     * struct is borrowed for the call. */
    void (*progress)(void *ctx, const struct eco_pl_progress *pr);
    void *progress_ctx;
};

struct eco_pl_outcome {
    uint32_t iterations; /* iterations run (pso) */
    int optimal;         /* ilp: 1 when proven optimal */
    double bound;        /* ilp: best bound of the objective (active hosts); NAN otherwise */
    double objective;    /* ilp: objective of the solution (active hosts) */
    double gap;          /* ilp: (objective - bound) / objective, 0 when optimal */
    /* pso (summed over the windows online): greedy seeds used, mutations triggered, local
     * searches run, and the inertia of the last iteration (0: none ran); what --pso-off
     * switches off shows here */
    uint32_t seeds, mutations, local_searches;
    double inertia;
};

struct eco_pl_algo {
    const char *name;
    const char *summary;
    /* Fills slots[n_items]; every slot is feasible. 0, -ENOMEM, or -EINVAL (err says why). */
    int (*solve)(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                 struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err);
};

/* Pure algorithms of the core: ffd, bfd, dot-product, fgd, pso, pso-basic, random,
 * gpu-clustering, gpu-packing, best-fit, dot-product-ref. */
const struct eco_pl_algo *const *eco_pl_algo_all(void);
const struct eco_pl_algo *eco_pl_algo_find(const char *name);

/* Greedy rules for one item on the current state. */
enum eco_pl_rule {
    ECO_PL_RULE_FIRST = 0, /* lowest-index node that fits */
    ECO_PL_RULE_BEST,      /* least free dominant resource left after placing */
    ECO_PL_RULE_DOT,       /* largest dot product of request and free capacity (Tetris) */
    ECO_PL_RULE_FGD,       /* least growth of FGD fragmentation */
};

/* The node chosen for `item` by `rule` on state s, and its GPUs in *gpus_out; -1 when it fits
 * nowhere. w is needed by ECO_PL_RULE_FGD only (may be NULL otherwise). */
int64_t eco_pl_greedy_pick(const struct eco_pl_state *s, const struct eco_pl_workload *w, int rule,
                           uint32_t item, uint64_t *gpus_out);

/* Items in order of decreasing dominant share (demand / mean node capacity, the largest over
 * CPU, memory and GPU), ties by index; order[] gets n_items entries. */
void eco_pl_order_decreasing(const struct eco_pl_instance *in, uint32_t *order);

/* A seeded random instance (docs/results/placement.md, "random instances"): between
 * min_items and max_items items (whole GPUs, GPU shares, CPU-only, some with a GPU model
 * constraint) and nodes of two models with gpus_per_node GPUs, enough for every item. Fills
 * *in (free with eco_pl_instance_fini). 0 or -ENOMEM. */
int eco_pl_random_instance(uint64_t seed, uint32_t min_items, uint32_t max_items,
                           uint16_t gpus_per_node, struct eco_pl_instance *in);

/* FGD's saturation workload: appends items drawn uniformly (seeded) from the n_items listed
 * until the requested GPUs reach pct % of the nodes' GPUs. 0 or -ENOMEM. */
int eco_pl_inflate(struct eco_pl_instance *in, double pct, uint64_t seed);

#endif
