/* SPDX-License-Identifier: MIT */
/* Capping metrics accumulated one control period at a time, with the definitions that the
 * simulator, `ecosched powerd` and ecoschedd share (docs/policies/powercap.md, "Metrics").
 * Pure: no clocks, no I/O. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "ecosched/powercap.h"

/* Joules in a kilowatt-hour. */
#define J_PER_KWH 3.6e6

void eco_cap_metrics_init(struct eco_cap_metrics *m)
{
    memset(m, 0, sizeof *m);
}

int eco_cap_metrics_add(struct eco_cap_metrics *m, double dt_s, double power_w, double budget_w,
                        double demand_w, int settling)
{
    if (!(dt_s > 0) || !isfinite(dt_s) || !(budget_w > 0) || !isfinite(budget_w) ||
        !isfinite(power_w) || !isfinite(demand_w))
        return -EINVAL;
    double rel = (power_w - budget_w) / budget_w;
    double err = dt_s * fabs(rel);
    m->periods++;
    m->t_s += dt_s;
    m->err_s += err;
    if (demand_w > budget_w) {
        m->binding++;
        m->binding_s += dt_s;
        m->binding_err_s += err;
    }
    if (settling)
        m->settling++;
    if (rel > 0) {
        m->above++;
        m->above_s += dt_s;
        m->above_j += dt_s * (power_w - budget_w);
        if (rel > m->max_raw)
            m->max_raw = rel;
        if (!settling && rel > m->max_settled)
            m->max_settled = rel;
    }
    return 0;
}

void eco_cap_metrics_report(const struct eco_cap_metrics *m, struct eco_cap_metrics_report *r)
{
    *r = (struct eco_cap_metrics_report){
        .periods = m->periods,
        .binding_periods = m->binding,
        .settling_periods = m->settling,
        .above_periods = m->above,
        .mae_binding_pct = m->binding_s > 0 ? 100.0 * m->binding_err_s / m->binding_s : 0,
        .mae_all_pct = m->t_s > 0 ? 100.0 * m->err_s / m->t_s : 0,
        .overshoot_pct = 100.0 * m->max_settled,
        .overshoot_raw_pct = 100.0 * m->max_raw,
        .above_s = m->above_s,
        .above_kwh = m->above_j / J_PER_KWH,
        .above_share = m->periods ? (double)m->above / (double)m->periods : 0,
    };
}
