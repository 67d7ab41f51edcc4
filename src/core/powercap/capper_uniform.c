/* SPDX-License-Identifier: MIT */
/* Capper "uniform": the same share for every GPU (clock knob: the same fraction of every range)
 * (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

static int split(struct eco_capper *c, const struct eco_capper_view *v,
                 const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w)
{
    int rc = v->clock ? eco_cap_uniform_levels(jobs, v->n, gpu_budget_w, limits_w)
                      : eco_cap_uniform(jobs, v->n, gpu_budget_w, limits_w);
    if (rc)
        return rc;
    (void)c;
    return eco_capper__binds(jobs, v->n, limits_w);
}

static struct eco_capper *create(const char *params, struct eco_error *err);

const struct eco_capper_ops eco_capper_uniform = {
    .name = "uniform",
    .summary = "the same share for every GPU (clock knob: the same fraction of every range)",
    .params_help =
        "gain, bound, margin, guard, dither, early, slew, observer, admit=min|deadline, near",
    .start_at_max = 0,
    .create = create,
    .destroy = eco_capper__destroy_common,
    .decide = eco_capper__decide_family,
};

static struct eco_capper *create(const char *params, struct eco_error *err)
{
    struct eco_capper_common d;
    eco_capper__common_default(&d);
    d.observer = 0; /* its split does not predict through the models: the integral */
    struct eco_capper *c =
        eco_capper__create_common(&eco_capper_uniform, params, &d, 0, split, 0, err);
    if (c)
        c->limit_split = 1; /* the integral's anti-windup (capper.c, unwind) */
    return c;
}
