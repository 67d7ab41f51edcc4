/* SPDX-License-Identifier: MIT */
/* Capper "proportional": limits in proportion to each job's measured draw, scaled to its maximum
 * (docs/policies/powercap.md, "Capper family"). */
#include <math.h>
#include "capper_internal.h"

static int split(struct eco_capper *c, const struct eco_capper_view *v,
                 const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w)
{
    /* Demand per GPU: the measured draw scaled by the model's power at the maximum over its
     * power at the setting in force (a job held low is not taken to want little). */
    for (size_t i = 0; i < v->n; i++) {
        const struct eco_capper_job *j = &v->jobs[i];
        double at_max = 0, at_cur = 0, s;
        jobs[i].predict(jobs[i].ctx, jobs[i].max_limit_w, &at_max, &s);
        jobs[i].predict(jobs[i].ctx, j->limit_w, &at_cur, &s);
        c->aux[i] = isfinite(j->measured_w) && at_cur > 0 ? j->measured_w * at_max / at_cur : NAN;
    }
    int rc = eco_cap_proportional_demand(jobs, v->n, c->aux, gpu_budget_w, limits_w);
    if (rc)
        return rc;
    return eco_capper__binds(jobs, v->n, limits_w);
}

static struct eco_capper *create(const char *params, struct eco_error *err);

const struct eco_capper_ops eco_capper_proportional = {
    .name = "proportional",
    .summary = "limits in proportion to each job's measured draw, scaled to its maximum",
    .params_help =
        "gain, bound, margin, guard, dither, early, slew, observer, admit=min|deadline, near",
    .start_at_max = 0,
    .limits_only = 1,
    .reads_job_samples = 1,
    .create = create,
    .destroy = eco_capper__destroy_common,
    .decide = eco_capper__decide_family,
};

static struct eco_capper *create(const char *params, struct eco_error *err)
{
    struct eco_capper_common d;
    eco_capper__common_default(&d);
    d.observer = 0; /* its split does not predict through the models: the integral */
    return eco_capper__create_common(&eco_capper_proportional, params, &d, 0, split, 0, err);
}
