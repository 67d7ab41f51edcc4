/* SPDX-License-Identifier: MIT */
/* Power caps actuated as locked SM clocks (config power_knob = clock): a job's cap in watts
 * becomes the highest clock level of the GPU's type whose modelled draw of the generic workload
 * stays within it (eco_clock_for_power, docs/models/clock.md); the lock is undone when the job
 * ends, as limits are restored, and reconciled with the store at start-up. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include "ecosched/catalog.h"
#include "ecosched/clock.h"
#include "ecosched/power.h"
#include "clockctl.h"
#include "ecod.h"

/* The clock for cap_w on GPU g, or -errno with err set. */
static int clock_for(struct ecod *d, unsigned g, double cap_w, double *mhz, struct eco_error *err)
{
    char model[ECO_PLATFORM_STR_MAX];
    int rc = eco_platform_gpu_name(d->platform, g, model, sizeof model, err);
    if (rc < 0)
        return rc;
    int type = eco_catalog_match(model);
    if (type < 0)
        return eco_errorf(err, -ENOENT, "no clock model for GPU model '%s'", model);
    return eco_clock_for_power(type, ECO_WORKLOAD_GENERIC, cap_w, mhz) < 0
               ? eco_errorf(err, -EINVAL, "cap %g W is not a power", cap_w)
               : 0;
}

/* Locks GPU g for cap_w (> 0) or resets it (0); logs failures. 0 or -errno. */
static int apply_one(struct ecod *d, int64_t id, unsigned g, double cap_w)
{
    struct eco_error err = {{0}};
    double mhz = 0;
    int rc = cap_w > 0 ? clock_for(d, g, cap_w, &mhz, &err) : 0;
    if (rc == 0)
        rc = cap_w > 0 ? eco_platform_set_locked_clocks(d->platform, g, mhz, mhz, &err)
                       : eco_platform_reset_locked_clocks(d->platform, g, &err);
    if (rc < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": GPU %u: SM clock: %s", id, g, err.msg);
    else if (cap_w > 0)
        ECO_LOG(ECO_LOG_INFO, "sched",
                "job %" PRId64 ": GPU %u: SM clock locked at %.0f MHz (cap %.0f W)", id, g, mhz,
                cap_w);
    return rc;
}

bool ecod__clock_apply(struct ecod *d, int64_t id, const uint32_t *gpus, uint32_t n, double cap_w)
{
    bool any = false;
    for (uint32_t i = 0; i < n; i++)
        any |= apply_one(d, id, gpus[i], cap_w) == 0;
    return any;
}

void ecod__clock_reconcile(struct ecod *d, const double *want, const int64_t *by)
{
    for (unsigned g = 0; g < d->n_gpus; g++) {
        if (apply_one(d, by[g], g, want[g] > 0 ? want[g] : 0) == 0 && !(want[g] > 0))
            ECO_LOG(ECO_LOG_DEBUG, "sched", "GPU %u: SM clock reset (no capped job)", g);
    }
}
