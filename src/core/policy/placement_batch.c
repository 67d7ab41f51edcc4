/* SPDX-License-Identifier: MIT */
/* Batch placements for the simulator: at each scheduling pass the queued jobs are placed as a
 * whole by a static placement optimiser (pso, pso-basic; ilp from the edge), and the queue
 * policy's starts then follow that plan while it still fits. See docs/policies/placement.md
 * ("Batch placements"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/place.h"
#include "ecosched/policy.h"

/* Optimiser effort per pass for pso and pso-basic: 10 particles, 30 iterations, smaller than
 * the static command's defaults (20 x 200, for one large solve) because a run solves once per
 * scheduling pass (docs/policies/placement.md). */
#define PLAN_SWARM 10
#define PLAN_ITERS 30
/* Nodes offered to one solve: every partly used node with free GPUs (lowest index first) and
 * of each node class only as many wholly free nodes as the batch could fill, at most
 * PLAN_MAX_NODES in all (keeps the ILP small). */
#define PLAN_MAX_NODES 256

struct plan {
    struct eco_pl_instance in;
    struct eco_pl_slot *slots;
    uint32_t *job_of;  /* item -> job index */
    uint32_t *node_of; /* instance node -> cluster node */
    int64_t *planned;  /* item -> cluster node, -1: none */
    uint32_t n_planned;
    int16_t model_of_type[256]; /* catalog type -> instance model, -1: not yet */
    const struct eco_placement_ops *fallback;
    struct eco_plan_stats st;
};

static int ensure(void **p, size_t n, size_t elem)
{
    void *q = realloc(*p, (n ? n : 1) * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    return 0;
}

static int16_t model_index(struct plan *pl, uint16_t type)
{
    if (type >= 256)
        return -1;
    if (pl->model_of_type[type] < 0) {
        char name[16];
        snprintf(name, sizeof name, "t%u", (unsigned)type);
        int m = eco_pl_model_index(&pl->in, name);
        if (m < 0)
            return -1;
        pl->model_of_type[type] = (int16_t)m;
    }
    return pl->model_of_type[type];
}

static struct plan *plan_new(void)
{
    struct plan *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    memset(pl->model_of_type, 0xff, sizeof pl->model_of_type);
    pl->fallback = eco_placement_find("pack");
    return pl;
}

static int add_node(struct plan *pl, const struct eco_freemap *fm, uint32_t node, size_t cls)
{
    const struct eco_node_class *nc = eco_freemap_class(fm, cls);
    uint32_t k = pl->in.n_nodes;
    if (k >= PLAN_MAX_NODES)
        return 0;
    struct eco_pl_node *nd = &pl->in.nodes[k];
    memset(nd, 0, sizeof *nd);
    snprintf(nd->name, sizeof nd->name, "n%u", (unsigned)node);
    nd->gpus = eco_freemap_free(fm, node);
    nd->model = model_index(pl, nc->type);
    if (nd->gpus > pl->in.max_gpus)
        pl->in.max_gpus = nd->gpus;
    pl->node_of[k] = node;
    pl->in.n_nodes++;
    return 1;
}

int eco_placement_batch_plan(void **state, const struct eco_freemap *fm, const struct eco_job *jobs,
                             const uint32_t *queue, size_t n, uint64_t seed,
                             const struct eco_pl_algo *algo, double time_limit_s)
{
    struct plan *pl = *state;
    if (!pl && !(pl = *state = plan_new()))
        return -ENOMEM;
    uint64_t call = pl->st.passes++;
    pl->n_planned = 0;
    pl->in.n_items = pl->in.n_nodes = 0;
    pl->in.max_gpus = 0;
    const struct eco_cluster *c = eco_freemap_cluster(fm);
    if (ensure((void **)&pl->in.items, ECO_PLAN_MAX_JOBS, sizeof *pl->in.items) ||
        ensure((void **)&pl->job_of, ECO_PLAN_MAX_JOBS, sizeof *pl->job_of) ||
        ensure((void **)&pl->planned, ECO_PLAN_MAX_JOBS, sizeof *pl->planned) ||
        ensure((void **)&pl->slots, ECO_PLAN_MAX_JOBS, sizeof *pl->slots) ||
        ensure((void **)&pl->in.nodes, PLAN_MAX_NODES, sizeof *pl->in.nodes) ||
        ensure((void **)&pl->node_of, PLAN_MAX_NODES, sizeof *pl->node_of))
        return -ENOMEM;
    /* Items: the first queued jobs that fit on one node; larger jobs are left to `place`. */
    uint64_t batch_gpus = 0;
    for (size_t i = 0; i < n && pl->in.n_items < ECO_PLAN_MAX_JOBS; i++) {
        const struct eco_job *j = &jobs[queue[i]];
        if (j->state != ECO_JOB_QUEUED || j->gpus == 0 || j->gpus > c->max_gpus_per_node ||
            j->gpus > ECO_PL_MAX_GPUS)
            continue;
        struct eco_pl_item *it = &pl->in.items[pl->in.n_items];
        memset(it, 0, sizeof *it);
        snprintf(it->name, sizeof it->name, "j%u", (unsigned)queue[i]);
        it->gpus = (uint16_t)j->gpus;
        it->gpu_milli = ECO_PL_GPU_MILLI;
        if (j->gpu_type >= 0) {
            int16_t m = model_index(pl, (uint16_t)j->gpu_type);
            if (m < 0)
                continue;
            it->models = 1ULL << m;
        }
        pl->job_of[pl->in.n_items++] = queue[i];
        batch_gpus += j->gpus;
    }
    /* One job alone: nothing to optimise, `place` decides. */
    if (pl->in.n_items < 2)
        return 0;
    /* Nodes: partly used nodes, then wholly free ones up to what the batch could fill. */
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++)
        for (int64_t node = eco_freemap_find_nonempty(fm, k, 0); node >= 0;
             node = eco_freemap_find_nonempty(fm, k, (uint32_t)node + 1))
            if (eco_freemap_free(fm, (uint32_t)node) < eco_freemap_class(fm, k)->gpus)
                add_node(pl, fm, (uint32_t)node, k);
    for (size_t k = 0; k < eco_freemap_n_classes(fm); k++) {
        const struct eco_node_class *nc = eco_freemap_class(fm, k);
        uint64_t want = nc->gpus ? (batch_gpus + nc->gpus - 1) / nc->gpus : 0;
        for (int64_t node = eco_freemap_find(fm, k, nc->gpus, 0); node >= 0 && want > 0;
             node = eco_freemap_find(fm, k, nc->gpus, (uint32_t)node + 1), want--)
            add_node(pl, fm, (uint32_t)node, k);
    }
    if (pl->in.n_nodes == 0)
        return 0;
    /* Each pass its own stream: splitmix64 of (seed, pass). */
    uint64_t z = seed + (call + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    struct eco_pl_params p = {.seed = z ^ (z >> 31),
                              .objective = ECO_PL_OBJ_HOSTS,
                              .swarm = PLAN_SWARM,
                              .iterations = PLAN_ITERS,
                              .time_limit_s = time_limit_s};
    struct eco_pl_outcome out;
    struct eco_error err = {0};
    memset(&out, 0, sizeof out);
    int rc = algo->solve(&pl->in, &p, pl->slots, &out, &err);
    if (rc == -ENOMEM)
        return rc;
    if (rc) { /* e.g. an instance too large for the solver: `place` decides this pass */
        pl->st.solve_errors++;
        return 0;
    }
    for (uint32_t i = 0; i < pl->in.n_items; i++)
        pl->planned[i] = pl->slots[i].node >= 0 ? (int64_t)pl->node_of[pl->slots[i].node] : -1;
    pl->n_planned = pl->in.n_items;
    pl->st.planned += pl->n_planned;
    return 0;
}

int eco_placement_batch_place(const void *state, const struct eco_freemap *fm,
                              const struct eco_job *jobs, uint32_t job, struct eco_alloc *out,
                              size_t cap)
{
    const struct plan *pl = state;
    const struct eco_job *j = &jobs[job];
    for (uint32_t i = 0; i < pl->n_planned; i++) {
        if (pl->job_of[i] != job)
            continue;
        int64_t node = pl->planned[i];
        if (node >= 0 && eco_freemap_free(fm, (uint32_t)node) >= j->gpus) {
            if (cap < 1)
                return -ENOSPC;
            out[0] = (struct eco_alloc){.node = (uint32_t)node, .gpus = (uint16_t)j->gpus};
            return 1;
        }
        break;
    }
    return pl->fallback->place(NULL, fm, j, out, cap);
}

void eco_placement_batch_stats(const void *state, struct eco_plan_stats *st)
{
    const struct plan *pl = state;
    memset(st, 0, sizeof *st);
    if (!pl)
        return;
    *st = pl->st;
}

void eco_placement_batch_free(void *state)
{
    struct plan *pl = state;
    if (!pl)
        return;
    free(pl->in.items);
    free(pl->in.nodes);
    free(pl->slots);
    free(pl->job_of);
    free(pl->planned);
    free(pl->node_of);
    free(pl);
}
