/* SPDX-License-Identifier: MIT */
/* Free GPUs per node, indexed so that placement finds "lowest-index node of a node class with
 * exactly f free GPUs" in a few word operations (two-level bitmaps per (class, f) bucket). */
#ifndef ECOSCHED_FREEMAP_H
#define ECOSCHED_FREEMAP_H

#include <stdint.h>
#include <stddef.h>
#include "ecosched/cluster.h"

/* A node class: the nodes of one node group (one GPU type, GPU count and power figures). */
struct eco_node_class {
    uint16_t type;
    uint16_t gpus;
    uint16_t group;
};

struct eco_freemap;

/* Builds an all-free map for `c` (borrowed; must outlive the map). NULL on ENOMEM. */
struct eco_freemap *eco_freemap_create(const struct eco_cluster *c);
void eco_freemap_destroy(struct eco_freemap *fm);
/* Back to all GPUs free. */
void eco_freemap_reset(struct eco_freemap *fm);

const struct eco_cluster *eco_freemap_cluster(const struct eco_freemap *fm);
size_t eco_freemap_n_classes(const struct eco_freemap *fm);
/* Classes are ordered by GPU count, largest first, then by group. */
const struct eco_node_class *eco_freemap_class(const struct eco_freemap *fm, size_t cls);
size_t eco_freemap_class_of(const struct eco_freemap *fm, uint32_t node);

uint16_t eco_freemap_free(const struct eco_freemap *fm, uint32_t node);
/* Free GPUs of type `type` (or all when type < 0). */
uint64_t eco_freemap_total_free(const struct eco_freemap *fm, int type);

/* Lowest node index >= from in class `cls` with exactly `f` free GPUs, or -1. */
int64_t eco_freemap_find(const struct eco_freemap *fm, size_t cls, uint16_t f, uint32_t from);
/* Lowest node index >= from in class `cls` with at least one free GPU, or -1. */
int64_t eco_freemap_find_nonempty(const struct eco_freemap *fm, size_t cls, uint32_t from);

/* Time hints for time-aware placements, set by the caller: the current time, and per node the
 * latest expected end of the jobs on it (0 when idle). */
void eco_freemap_set_now(struct eco_freemap *fm, double now_s);
double eco_freemap_now(const struct eco_freemap *fm);
void eco_freemap_set_busy_until(struct eco_freemap *fm, uint32_t node, double t_s);
double eco_freemap_busy_until(const struct eco_freemap *fm, uint32_t node);

/* Takes / returns n GPUs on a node. The caller keeps counts in range. */
void eco_freemap_take(struct eco_freemap *fm, uint32_t node, uint16_t n);
void eco_freemap_give(struct eco_freemap *fm, uint32_t node, uint16_t n);

#endif
