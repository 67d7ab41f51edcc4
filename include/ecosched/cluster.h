/* SPDX-License-Identifier: MIT */
/* Cluster model: nodes, each holding GPUs of one catalog type. */
#ifndef ECOSCHED_CLUSTER_H
#define ECOSCHED_CLUSTER_H

#include <stdint.h>
#include <stddef.h>
#include "ecosched/error.h"

#define ECO_MAX_GPUS_PER_NODE 64
#define ECO_MAX_NODES (1u << 20)

struct eco_node {
    uint16_t type; /* index into the GPU catalog */
    uint16_t gpus; /* GPUs on this node */
};

struct eco_cluster {
    struct eco_node *nodes;
    uint32_t n_nodes;
    uint32_t cap_nodes;
    uint64_t total_gpus;
    uint16_t max_gpus_per_node;
};

/* An empty cluster; free with eco_cluster_destroy. */
struct eco_cluster *eco_cluster_create(void);
void eco_cluster_destroy(struct eco_cluster *c);

/* Appends `count` nodes of `gpus` GPUs of catalog type `type`. 0 or -EINVAL / -ENOMEM. */
int eco_cluster_add_nodes(struct eco_cluster *c, uint32_t count, uint32_t gpus, int type,
                          struct eco_error *err);

/* Parses the inline spec COUNTxGPUS[:TYPE][,COUNTxGPUS[:TYPE]...] (type defaults to V100)
 * into a new cluster owned by the caller. 0 or -EINVAL with err naming the bad part. */
int eco_cluster_parse_spec(const char *spec, struct eco_cluster **out, struct eco_error *err);

/* GPUs of catalog type `type` in the cluster (type < 0: all GPUs). */
uint64_t eco_cluster_gpus_of_type(const struct eco_cluster *c, int type);

#endif
