/* SPDX-License-Identifier: MIT */
/* The power caps ecoschedd's watched runs ask of a GPU: the lowest cap of the jobs on it, on
 * the power-limit knob or the clock knob. Reads struct ecod's runs only (no platform). */
#include <stddef.h>
#include <stdint.h>
#include "caps.h"

/* Whether run r's cap acts on the SM clock (the daemon's jobs with power_knob = clock) rather
 * than on the power limit (Slurm jobs, whose limit the SPANK plugin sets, and the others). */
bool ecod_caps_clock(const struct ecod *d, const struct ecod_run *r)
{
    return d->power_knob_clock && r->slurm_job <= 0;
}

/* The lowest cap of the watched jobs on GPU g, other than run `skip` (SIZE_MAX: none), whose
 * caps act on the clock (clock) or on the power limit (!clock); 0 when none is capped. An
 * uncapped job does not raise it: jobs sharing a GPU get the strictest of their caps. *by: the
 * job that sets it (0 for none), when by is not NULL. */
double ecod_caps_lowest(const struct ecod *d, uint32_t g, size_t skip, bool clock, int64_t *by)
{
    double w = 0;
    int64_t id = 0;
    for (size_t i = 0; i < d->n_runs; i++) {
        const struct ecod_run *r = &d->runs[i];
        if (i == skip || !(r->cap_w > 0) || ecod_caps_clock(d, r) != clock)
            continue;
        for (uint32_t k = 0; k < r->n_gpus; k++)
            if (r->gpus[k] == g && (w == 0 || r->cap_w < w)) {
                w = r->cap_w;
                id = r->id;
            }
    }
    if (by)
        *by = id;
    return w;
}

double ecod_caps_gpu(const struct ecod *d, uint32_t g)
{
    return ecod_caps_lowest(d, g, SIZE_MAX, false, NULL);
}

