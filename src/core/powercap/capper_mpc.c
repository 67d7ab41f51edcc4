/* SPDX-License-Identifier: MIT */
/* Capper "mpc": price-coordinated allocation over the learned models (eco_cap_allocate) (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

static int split(struct eco_capper *c, const struct eco_capper_view *v,
                 const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w)
{
    double price = eco_cap_allocate(jobs, v->n, gpu_budget_w, &c->cap, limits_w, c->scratch);
    if (price < 0)
        return (int)price;
    return price > 0;
}

static struct eco_capper *create(const char *params, struct eco_error *err);

static void destroy(struct eco_capper *c)
{
    eco_capper_destroy_common(c);
}

static int decide(struct eco_capper *c, const struct eco_capper_view *v, struct eco_rng *rng,
                  double *limits_w)
{
    return eco_capper_decide_common(c, v, rng, limits_w, split, 0);
}

const struct eco_capper_ops eco_capper_mpc = {
    .name = "mpc",
    .summary = "price-coordinated allocation over the learned models (eco_cap_allocate)",
    .params_help = "gain, bound, margin, guard, dither, early, admit=min|deadline, near, grid, penalty, horizon",
    .start_at_max = 0,
    .create = create,
    .destroy = destroy,
    .decide = decide,
};

static struct eco_capper *create(const char *params, struct eco_error *err)
{
    struct eco_capper_common d;
    eco_capper_common_default(&d);
    return eco_capper_create_common(&eco_capper_mpc, params, &d, ECO_CAPPER_KEYS_ALLOC, err);
}
