/* SPDX-License-Identifier: MIT */
/* power_cap "auto": the most energy-efficient limit within a slowdown bound, from the power
 * model (include/ecosched/power.h). Pure: the daemon passes the GPU's range and the bound. */
#include <errno.h>
#include <stddef.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"

int eco_power_auto_cap(int type, double min_w, double max_w, double max_slowdown, double *cap_w)
{
    if (type < 0 || (size_t)type >= eco_catalog_count())
        return -EINVAL;
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    double lo = t->min_limit_w > min_w ? t->min_limit_w : min_w;
    double hi = t->max_limit_w < max_w ? t->max_limit_w : max_w;
    double s_max = 0, best = -1, chosen = hi;
    if (!(lo <= hi) || eco_power_eval(type, ECO_WORKLOAD_GENERIC, hi, &s_max, NULL) < 0 ||
        !(s_max > 0))
        return -ERANGE;
    /* 1e-9: the float sums of the steps may land a hair above hi, and a bound met exactly
     * (slowdown == max_slowdown) counts as met */
    for (double w = lo; w <= hi + 1e-9; w += ECO_POWER_AUTO_CAP_STEP_W) {
        double s = 0, p = 0;
        if (eco_power_eval(type, ECO_WORKLOAD_GENERIC, w, &s, &p) < 0 || !(s > 0))
            continue;
        if (s_max / s - 1 > max_slowdown + 1e-9)
            continue;
        if (best < 0 || p / s <= best) {
            best = p / s;
            chosen = w;
        }
    }
    *cap_w = chosen;
    return 0;
}
