/* SPDX-License-Identifier: MIT */
/* Between the --cluster argument's reader (cluster_json.c) and the Slurm node lists
 * (cluster_slurm.c). */
#ifndef ECOSCHED_CLUSTER_INTERNAL_H
#define ECOSCHED_CLUSTER_INTERNAL_H

#include <jansson.h>
#include "sim/sim.h"

/* What a file holds: 1 scontrol show node (its first word is NodeName=), 2 a Slurm JSON node
 * list (root's nodes[0] has "name" or "gres": sinfo --json), 0 neither. root: the file's JSON
 * when it parsed, else NULL. */
int eco_cluster__slurm_kind(const char *path, json_t *root);
/* Appends the nodes of a Slurm node list of that kind to c. 0, -EINVAL (err names file, line
 * or node, and field) or -ENOMEM. */
int eco_cluster__load_slurm(const char *path, int kind, json_t *root,
                            const struct eco_cluster_opts *o, struct eco_cluster *c,
                            struct eco_error *err);

#endif
