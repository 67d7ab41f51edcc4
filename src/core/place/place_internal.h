/* SPDX-License-Identifier: MIT */
/* Helpers shared by the placement algorithms of src/core/place (not public). */
#ifndef ECOSCHED_PLACE_INTERNAL_H
#define ECOSCHED_PLACE_INTERNAL_H

#include "ecosched/place.h"

/* FGD fragmentation of node `node` with the given free CPU, memory and GPU shares. */
double eco_place__frag_raw(const struct eco_pl_instance *in, const struct eco_pl_workload *w,
                           uint32_t node, int64_t cpu_free, int64_t mem_free, const uint16_t *f);

/* fgd-fine's rule (greedy.c): fgd on the growth itself; private, next to enum eco_pl_rule. */
#define ECO_PLACE__RULE_FGD_FINE 100

/* eco_pl_greedy_pick with the current fragmentation of every node (frag_now, may be NULL). */
int64_t eco_place__pick_cached(const struct eco_pl_state *s, const struct eco_pl_workload *w,
                               int rule, uint32_t item, const double *frag_now, uint64_t *gpus_out);

/* A greedy algorithm: items in arrival order or decreasing dominant share, each placed by
 * `rule`. 0 or -ENOMEM. */
int eco_place__greedy_run(const struct eco_pl_instance *in, int rule, int decreasing,
                          struct eco_pl_slot *slots);

#endif
