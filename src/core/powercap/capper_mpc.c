/* SPDX-License-Identifier: MIT */
/* Capper "mpc": price-coordinated allocation over the learned models (eco_cap_allocate)
 * (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

/* Joules in a MWh and in a kWh; grams in a tonne; seconds in an hour. */
#define J_PER_MWH 3.6e9
#define J_PER_KWH 3.6e6
#define G_PER_T 1e6
#define S_PER_H 3600.0

double eco_capper__grid_floor(const struct eco_capper *c, const struct eco_capper_view *v)
{
    if (!c->cm.grid_floor || !(c->cm.value > 0))
        return 0;
    double per_j = v->grid_price_per_mwh / J_PER_MWH +
                   c->cm.carbon_price * v->grid_carbon_g_per_kwh / G_PER_T / J_PER_KWH;
    double horizon_s = (c->cap.horizon ? c->cap.horizon : 1) * v->period_s;
    double grid = per_j * horizon_s / (c->cm.value / S_PER_H);
    return grid > 0 ? grid : 0; /* a negative price buys nothing more than full power */
}

int eco_capper__split_alloc(struct eco_capper *c, const struct eco_capper_view *v,
                            const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w)
{
    double price = c->cm.plan
                       ? eco_cap_plan(jobs, v->n, gpu_budget_w, &c->cap, 0, limits_w, NULL)
                       : eco_cap_allocate(jobs, v->n, gpu_budget_w, &c->cap, limits_w, c->scratch);
    if (price < 0)
        return (int)price;
    double grid = eco_capper__grid_floor(c, v);
    if (grid > price) /* the grid's price binds: each job buys power only above it */
        for (size_t i = 0; i < v->n; i++)
            eco_cap_local_choice(&jobs[i], &c->cap, grid, &limits_w[i], NULL);
    return price > 0;
}

static struct eco_capper *create(const char *params, struct eco_error *err);

const struct eco_capper_ops eco_capper_mpc = {
    .name = "mpc",
    .summary = "price-coordinated allocation over the learned models (eco_cap_allocate)",
    .params_help = "gain, bound, margin, guard, dither, early, slew, observer, admit=min|deadline, "
                   "near, grid, "
                   "penalty, horizon, miss, sigma, lost, weight=one|size, plan, grid_floor, "
                   "value, carbon_price, steady",
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
