/* SPDX-License-Identifier: MIT */
/* The edges of the placement optimisers: node and item lists from CSV (openb's own columns or
 * ecosched's placement CSV, plain or gzip) and the exact ILP with GLPK. */
#ifndef ECOSCHED_PLACE_IO_H
#define ECOSCHED_PLACE_IO_H

#include "ecosched/place.h"

/* Appends the nodes of `path` to `in` (models are added to in->models). The header picks the
 * columns (docs/formats/placement.md). 0, or -EINVAL / -ENOENT / -ENOMEM with err naming
 * file, line and column. */
int eco_pl_read_nodes(const char *path, struct eco_pl_instance *in, struct eco_error *err);
/* Appends the items of `path`; read the nodes first so that model names are shared. */
int eco_pl_read_items(const char *path, struct eco_pl_instance *in, struct eco_error *err);

/* Shuffles in->items in place, seeded (`place --shuffle`, before --inflate, as the
 * reference simulator's shufflePod): a Fisher-Yates shuffle drawn from eco_rng seeded with seed +
 * SHUFFLE_STREAM (a stream apart from eco_pl_inflate's with the same seed). The multiset of items
 * is kept. */
void eco_pl_shuffle(struct eco_pl_instance *in, uint64_t seed);

/* Exact placement with GLPK's branch and cut: places as many items as possible, then uses as
 * few active hosts as possible, within p->time_limit_s (<= 0: no limit). Objectives other than
 * hosts are refused (-EINVAL). out gets the bound, the gap and whether it is proven optimal. */
extern const struct eco_pl_algo eco_pl_algo_ilp;

/* An upper bound on the GPUs that any placement of in->items[0 .. n_items) on in's nodes can
 * allocate, in GPUs, into *gpus: the LP relaxation (GLPK simplex) of the assignment of identical
 * items to identical nodes with CPU, memory and GPUs as capacities; with `cuts`, also the valid
 * rows of the Fekete-Schepers dual feasible functions (per GPU for shares; per node for CPU,
 * memory and GPUs), which a fractional solution may break and no placement does
 * (docs/policies/ilp.md, "LP bound"). 0, -ENOMEM, -EINVAL (n_items too large) or -EIO (GLPK
 * failed), with err saying which. */
int eco_pl_lp_bound(const struct eco_pl_instance *in, uint32_t n_items, int cuts, double *gpus,
                    struct eco_error *err);

/* 1 when nodes a and b are interchangeable for a placement: same CPU, memory, GPUs and model
 * (the ILP's symmetry rows and the LP bound's node groups). */
static inline int eco_pl_same_node(const struct eco_pl_node *a, const struct eco_pl_node *b)
{
    return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib && a->gpus == b->gpus &&
           a->model == b->model;
}

/* Any placement algorithm by name: the core's and ilp. NULL when unknown. */
const struct eco_pl_algo *eco_pl_find_any(const char *name);
/* The i-th of all placement algorithms: the core's registry, then ilp; NULL past the last
 * (for listing them in --help and "known: ..." messages). */
const struct eco_pl_algo *eco_pl_algo_any_at(size_t i);

/* The simulator placement `ilp` (the queue of each pass placed by eco_pl_algo_ilp), and any
 * simulator placement by name: the core's registry and ilp. NULL when unknown. */
struct eco_placement_ops;
extern const struct eco_placement_ops eco_placement_ilp;
const struct eco_placement_ops *eco_placement_find_any(const char *name);
/* The i-th of all simulator placements: the core's registry, then ilp; NULL past the last. */
const struct eco_placement_ops *eco_placement_any_at(size_t i);

#endif
