/* SPDX-License-Identifier: MIT */
/* GPU co-location model: lookups in the measured Gavel and Lucid tables (coloc_tables.c) and the
 * utilisation fallback for pairs not measured (docs/models/colocation.md). */
#include "ecosched/coloc.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "coloc_tables.h"

size_t eco_coloc_n_workloads(void)
{
    return ECO_COLOC_N_WORKLOADS;
}

size_t eco_coloc_n_measured(void)
{
    return ECO_COLOC_N_PAIRS;
}

const struct eco_coloc_workload *eco_coloc_workload(size_t i)
{
    return i < ECO_COLOC_N_WORKLOADS ? &eco_coloc_workloads[i] : NULL;
}

int eco_coloc_find(const char *name, const char *gpu_type)
{
    if (!name)
        return -EINVAL;
    for (size_t i = 0; i < ECO_COLOC_N_WORKLOADS; i++) {
        const struct eco_coloc_workload *w = &eco_coloc_workloads[i];
        if (strcmp(w->name, name) == 0 && (!gpu_type || strcasecmp(w->gpu_type, gpu_type) == 0))
            return (int)i;
    }
    return -ENOENT;
}

enum eco_coloc_kind eco_coloc_estimate(double u_a, double u_b, double *speed_a, double *speed_b)
{
    double f = ECO_COLOC_TIMESLICE;
    enum eco_coloc_kind kind = ECO_COLOC_TIMESLICED;
    if (u_a >= 0.0 && u_b >= 0.0) {
        double u = u_a + u_b;
        f = u > 1.0 ? pow(u, -ECO_COLOC_FALLBACK_EXP) : 1.0;
        kind = ECO_COLOC_FALLBACK;
    }
    if (speed_a)
        *speed_a = f;
    if (speed_b)
        *speed_b = f;
    return kind;
}

/* The measured row for the ordered pair (a, b), or NULL: binary search on (a, b). */
static const struct eco_coloc_row *find_row(size_t a, size_t b)
{
    size_t lo = 0, hi = ECO_COLOC_N_PAIRS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct eco_coloc_row *r = &eco_coloc_rows[mid];
        if (r->a == a && r->b == b)
            return r;
        if (r->a < a || (r->a == a && r->b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int eco_coloc_pair(size_t a, size_t b, struct eco_coloc_pair *out)
{
    if (!out || a >= ECO_COLOC_N_WORKLOADS || b >= ECO_COLOC_N_WORKLOADS)
        return -EINVAL;
    const struct eco_coloc_workload *wa = &eco_coloc_workloads[a], *wb = &eco_coloc_workloads[b];
    if (wa->source == ECO_COLOC_GAVEL && wb->source == ECO_COLOC_GAVEL &&
        strcmp(wa->gpu_type, wb->gpu_type) != 0)
        return -EINVAL;

    const struct eco_coloc_row *r = find_row(a, b);
    int swapped = 0;
    if (!r) {
        r = find_row(b, a);
        swapped = 1;
    }
    if (r) {
        out->speed_a = swapped ? r->speed_b : r->speed_a;
        out->speed_b = swapped ? r->speed_a : r->speed_b;
        out->feasible = out->speed_a > 0.0 || out->speed_b > 0.0;
        out->kind = ECO_COLOC_MEASURED;
        out->gpu_util = r->gpu_util;
        out->gmem_mb = r->gmem_mb;
        return 0;
    }
    out->kind = eco_coloc_estimate(wa->gpu_util, wb->gpu_util, &out->speed_a, &out->speed_b);
    out->feasible = 1;
    int known = wa->gpu_util >= 0.0 && wb->gpu_util >= 0.0;
    out->gpu_util = known ? fmin(1.0, wa->gpu_util + wb->gpu_util) : -1.0;
    out->gmem_mb = wa->gmem_mb > 0.0 && wb->gmem_mb > 0.0 ? wa->gmem_mb + wb->gmem_mb : 0.0;
    return 0;
}
