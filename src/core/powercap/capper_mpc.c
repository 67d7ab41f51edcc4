/* SPDX-License-Identifier: MIT */
/* Capper "mpc": price-coordinated allocation over the learned models (eco_cap_allocate)
 * (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

int eco_capper__split_alloc(struct eco_capper *c, const struct eco_capper_view *v,
                            const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w)
{
    double price = c->cm.plan
                       ? eco_cap_plan(jobs, v->n, gpu_budget_w, &c->cap, 0, limits_w, NULL)
                       : eco_cap_allocate(jobs, v->n, gpu_budget_w, &c->cap, limits_w, c->scratch);
    if (price < 0)
        return (int)price;
    return price > 0;
}

static struct eco_capper *create(const char *params, struct eco_error *err);

const struct eco_capper_ops eco_capper_mpc = {
    .name = "mpc",
    .summary = "price-coordinated allocation over the learned models (eco_cap_allocate)",
    .params_help = "gain, bound, margin, guard, dither, early, admit=min|deadline, near, grid, "
                   "penalty, horizon, miss, sigma, lost, weight=one|size, plan",
    .start_at_max = 0,
    .create = create,
    .destroy = eco_capper__destroy_common,
    .decide = eco_capper__decide_family,
};

static struct eco_capper *create(const char *params, struct eco_error *err)
{
    struct eco_capper_common d;
    eco_capper__common_default(&d);
    return eco_capper__create_common(&eco_capper_mpc, params, &d, ECO_CAPPER_KEYS_ALLOC,
                                     eco_capper__split_alloc, 0, err);
}
