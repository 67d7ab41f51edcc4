/* SPDX-License-Identifier: MIT */
/* Registry of carbon policies by name, and the candidate starts they share. */
#include <math.h>
#include <string.h>
#include <strings.h>
#include "ecosched/carbon.h"

#define ECO_CARBON(name) extern const struct eco_carbon_ops eco_carbon_##name;
#include "carbon.def"
#undef ECO_CARBON

static const struct eco_carbon_ops *const policies[] = {
#define ECO_CARBON(name) &eco_carbon_##name,
#include "carbon.def"
#undef ECO_CARBON
    NULL,
};

const struct eco_carbon_ops *const *eco_carbon_all(void)
{
    return policies;
}

const struct eco_carbon_ops *eco_carbon_find(const char *value, const char **params)
{
    const char *colon = strchr(value, ':');
    size_t len = colon ? (size_t)(colon - value) : strlen(value);
    *params = colon ? colon + 1 : NULL;
    for (size_t i = 0; policies[i]; i++)
        if (strlen(policies[i]->name) == len && !strncasecmp(policies[i]->name, value, len))
            return policies[i];
    return NULL;
}

size_t eco_carbon_candidates(const struct eco_carbon_view *v, const struct eco_carbon_job *j,
                             double *out, size_t max)
{
    size_t n = 0;
    if (max == 0)
        return 0;
    out[n++] = v->now_s;
    if (j->latest_start_s <= v->now_s || !(v->step_s > 0))
        return n;
    /* calendar boundaries k x step after now, as simulated times */
    double cal = v->epoch0_s + v->now_s;
    double k = floor(cal / v->step_s) + 1;
    for (;; k++) {
        double s = k * v->step_s - v->epoch0_s;
        if (s >= j->latest_start_s || n + 1 >= max)
            break;
        out[n++] = s;
    }
    out[n++] = j->latest_start_s;
    return n;
}
