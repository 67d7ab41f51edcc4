/* SPDX-License-Identifier: MIT */
/* Capper "oracle": eco_cap_allocate over the true curves: the bound for the learned cappers
 * (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

static struct eco_capper *create(const char *params, struct eco_error *err);

const struct eco_capper_ops eco_capper_oracle = {
    .name = "oracle",
    .summary = "eco_cap_allocate over the true curves: the bound for the learned cappers",
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
    d.dither = 0; /* it reads the truth: nothing to explore */
    d.gain = 0;   /* nor a model bias to correct: the integral would chase noise */
    return eco_capper__create_common(&eco_capper_oracle, params, &d, ECO_CAPPER_KEYS_ALLOC,
                                     eco_capper__split_alloc, 1, err);
}
