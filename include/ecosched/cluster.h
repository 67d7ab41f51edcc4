/* SPDX-License-Identifier: MIT */
/* Cluster model: nodes, each holding GPUs of one catalog type. */
#ifndef ECOSCHED_CLUSTER_H
#define ECOSCHED_CLUSTER_H

#include <stdint.h>
#include <stddef.h>
#include "ecosched/error.h"

#define ECO_MAX_GPUS_PER_NODE 64
#define ECO_MAX_NODES (1u << 20)

#define ECO_MAX_NODE_GROUPS 256

/* Nodes are added in groups that share GPU type, GPU count and power figures. */
struct eco_node_group {
    uint16_t type;         /* index into the GPU catalog */
    uint16_t gpus;         /* GPUs per node */
    uint32_t count;        /* nodes in the group */
    double base_w;         /* node power without its GPUs while on (CPU, memory, fans, NICs), W */
    double off_w;          /* node power while off (BMC), W */
    double boot_s;         /* time from power-on to accepting jobs, s */
    double shutdown_s;     /* time from shutdown to off, s */
    double gpu_idle_w;     /* power of one idle GPU holding no CUDA context, W */
    double limit_w;        /* power limit of the group's GPUs, W */
    double gpu_idle_ctx_w; /* power of one idle GPU holding a context (a job or container), W */
    double gpu_low_w;      /* power of one GPU at low utilisation (ECO_LOW_UTIL), W */
    double trans_w;        /* node power while booting or shutting down, W; < 0: as an idle
                            * node that is on (base_w + gpus x gpu_idle_w) */
    double cycle_j;        /* wear of one power cycle as an energy equivalent, J */
};

struct eco_node {
    uint16_t type;  /* index into the GPU catalog */
    uint16_t gpus;  /* GPUs on this node */
    uint16_t group; /* index into eco_cluster.groups */
};

struct eco_cluster {
    struct eco_node *nodes;
    uint32_t n_nodes;
    uint32_t cap_nodes;
    uint64_t total_gpus;
    uint16_t max_gpus_per_node;
    struct eco_node_group groups[ECO_MAX_NODE_GROUPS];
    uint16_t n_groups;
};

/* Default power figures for a node of `gpus` GPUs of catalog type `type` (docs/models/
 * energy.md gives the source of each). */
void eco_node_group_defaults(struct eco_node_group *g, int type, uint32_t gpus);

/* Power of a node of the group while booting or shutting down, W. */
double eco_node_group_trans_w(const struct eco_node_group *g);

/* Power of one GPU of the group that holds at least one context, at utilisation u (0..1,
 * clamped), when it draws busy_w fully busy: piecewise linear through gpu_idle_ctx_w at 0,
 * gpu_low_w at ECO_LOW_UTIL and busy_w (at least gpu_low_w) at 1. W. */
double eco_node_group_gpu_power_w(const struct eco_node_group *g, double busy_w, double u);

/* Break-even idle time of a node of the group: an idle node powered down saves energy (its
 * shutdown, off time and boot against staying on idle, plus cycle_j) only when it stays off
 * longer than this. s; a huge value when off_w is not below the idle node's power. */
double eco_node_group_breakeven_s(const struct eco_node_group *g);

/* The group's power figure named `key` (the cluster-file field names: base_w, off_w, boot_s,
 * shutdown_s, gpu_idle_w, gpu_idle_ctx_w, gpu_low_w, trans_w, cycle_j, power_limit_w), or
 * NULL when there is none. The pointer is into g. */
double *eco_node_group_field(struct eco_node_group *g, const char *key);
/* Those names, comma-separated, for messages (static storage). */
const char *eco_node_group_field_names(void);

/* Sets power figures of every group from "KEY=VALUE[,KEY=VALUE...]" (keys as
 * eco_node_group_field), e.g. "base_w=450,cycle_j=0": all are parsed and every group checked
 * before any is changed. 0, or -EINVAL with err naming the key (nothing changed). */
int eco_cluster_set_power(struct eco_cluster *c, const char *spec, struct eco_error *err);

/* Checks a group's figures: non-negative, idle power below the type's maximum limit, limit
 * within the type's range. 0 or -EINVAL with err naming the field. */
int eco_node_group_check(const struct eco_node_group *g, struct eco_error *err);

/* Appends g->count nodes as a new group (checked first). 0, -EINVAL or -ENOMEM. */
int eco_cluster_add_group(struct eco_cluster *c, const struct eco_node_group *g,
                          struct eco_error *err);

/* An empty cluster; free with eco_cluster_destroy. */
struct eco_cluster *eco_cluster_create(void);
void eco_cluster_destroy(struct eco_cluster *c);

/* Appends `count` nodes of `gpus` GPUs of catalog type `type` with default power figures.
 * 0 or -EINVAL / -ENOMEM. */
int eco_cluster_add_nodes(struct eco_cluster *c, uint32_t count, uint32_t gpus, int type,
                          struct eco_error *err);

/* Parses the inline spec COUNTxGPUS[:TYPE][,COUNTxGPUS[:TYPE]...] (type defaults to V100)
 * into a new cluster owned by the caller. 0 or -EINVAL with err naming the bad part. */
int eco_cluster_parse_spec(const char *spec, struct eco_cluster **out, struct eco_error *err);

/* GPUs of catalog type `type` in the cluster (type < 0: all GPUs). */
uint64_t eco_cluster_gpus_of_type(const struct eco_cluster *c, int type);

#endif
