/* SPDX-License-Identifier: MIT */
/* Capper "threshold": Slurm power/cray-style steps when measured power leaves a band
 * (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

static int split(struct eco_capper *c, const struct eco_capper_view *v,
                 const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w)
{
    /* Without a fresh measurement (a decide on a start or a budget step) limits stay. */
    if (isfinite(v->measured_w)) {
        int rc = eco_threshold_step(&c->thr, v->now_s, v->measured_w - v->fixed_w, gpu_budget_w,
                                    jobs, v->n, limits_w);
        if (rc < -1)
            return rc;
    }
    return eco_capper__binds(jobs, v->n, limits_w);
}

static struct eco_capper *create(const char *params, struct eco_error *err);

const struct eco_capper_ops eco_capper_threshold = {
    .name = "threshold",
    .summary = "Slurm power/cray-style steps when measured power leaves a band",
    .params_help =
        "gain, bound, margin, guard, dither, early, slew, observer, admit=min|deadline, near, "
        "rebalance, high, low, step",
    .start_at_max = 1,
    .create = create,
    .destroy = eco_capper__destroy_common,
    .decide = eco_capper__decide_family,
};

static struct eco_capper *create(const char *params, struct eco_error *err)
{
    struct eco_capper_common d;
    eco_capper__common_default(&d);
    d.observer = 0; /* its split does not predict through the models: the integral */
    d.gain = 0;     /* it is a feedback controller on measured power itself */
    d.dither = 0;   /* it reads no model */
    return eco_capper__create_common(&eco_capper_threshold, params, &d, ECO_CAPPER_KEYS_THRESHOLD,
                                     split, 0, err);
}
