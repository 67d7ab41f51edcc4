/* SPDX-License-Identifier: MIT */
/* nodecap.c: ecoschedd's node power budget. */
#ifndef ECOD_NODECAP_H
#define ECOD_NODECAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"
#include "ecosched/powercap.h"
#include "ecod.h"

/* nodecap.c: the node power budget (config power_budget_w, power_policy; POST /v1/node/budget;
 * docs/daemon/README.md, "Node power budget"). Every tick with a budget the running jobs'
 * GPUs get their limits from the capper family's shared decide (include/ecosched/powercap.h). */
/* 0 when `spec` names a capper with good parameters, else -EINVAL and err says why. */
int ecod__nodecap_check(const char *spec, struct eco_error *err);
/* Creates d->nodecap with d->power_budget_w and d->power_policy. 0, or < 0 and err. */
int ecod__nodecap_init(struct ecod *d, struct eco_error *err);
void ecod__nodecap_fini(struct ecod *d);
/* One control period at monotonic time mono (after the GPUs were sampled). */
void ecod__nodecap_tick(struct ecod *d, double mono);
/* A new budget (0: none; the GPUs go back to their jobs' caps or the default) and optionally a
 * new policy (NULL: keep). 0, or -EINVAL with err saying which field is wrong ("policy: ..."
 * or "budget_w ..."). */
int ecod__nodecap_set(struct ecod *d, double budget_w, const char *policy, struct eco_error *err);
/* The budget becomes budget_w (0: none) without giving the GPUs their jobs' caps back: the
 * fallback's end (lease.c), when powerd takes over the limits the budget left. */
void ecod__nodecap_hand_over(struct ecod *d, double budget_w);
/* The budget's state, borrowed from d. */
struct ecod_nodecap_status {
    double budget_w; /* 0: none */
    const char *policy;
    double measured_w; /* sum of the GPUs' power at the last period, NaN before */
    double demand_w;   /* the same with every controlled GPU at its maximum limit */
    double feedback_w;
    size_t jobs; /* jobs in the last decide */
    struct eco_cap_metrics_report met;
};
void ecod_nodecap_status(const struct ecod *d, struct ecod_nodecap_status *s);

#endif
