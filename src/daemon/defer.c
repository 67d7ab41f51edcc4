/* SPDX-License-Identifier: MIT */
/* Deferral in ecoschedd (docs/daemon/README.md, "Grid signals"): a queued job with slack
 * (max_delay) or a not_before time is held out of the queue until its release time, decided
 * once by the configured carbon policy from a forecast of the signal (grid.c); held jobs are
 * kept as ids and fetched from the store when released, so a cancel meanwhile needs nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "sched.h"
#include "queue.h"
#include "util/grid_signal.h"

double ecod__defer_release(struct ecod *d, const struct eco_store_job *j, double now)
{
    double latest = j->submit_s + j->max_delay_s;
    if (j->deadline_s > 0 && latest > j->deadline_s)
        latest = j->deadline_s; /* the slack never passes a deadline */
    double r = j->max_delay_s > 0
                   ? ecod__grid_release(&d->grid, now, j->submit_s, latest, j->gpus, d->n_gpus)
                   : j->submit_s;
    return r < j->not_before_s ? j->not_before_s : r;
}

int ecod__defer_enqueue(struct ecod *d, const struct eco_store_job *j, double now)
{
    double r = ecod__defer_release(d, j, now);
    if (r <= now)
        return ecod__queue_add(d, j);
    if (d->n_release == d->cap_release) {
        size_t cap = d->cap_release ? 2 * d->cap_release : 64;
        int64_t *ids = realloc(d->release_id, cap * sizeof *ids);
        if (ids)
            d->release_id = ids;
        double *ts = realloc(d->release_s, cap * sizeof *ts);
        if (ts)
            d->release_s = ts;
        if (!ids || !ts)
            return -ENOMEM;
        d->cap_release = cap;
    }
    d->release_id[d->n_release] = j->id;
    d->release_s[d->n_release++] = r;
    char when[32];
    eco_format_utc(r, when, sizeof when);
    ECO_LOG(ECO_LOG_INFO, "sched", "job %" PRId64 " held until %s (%s forecast)", j->id, when,
            ecod__grid_forecast_name(&d->grid, now));
    return 0;
}

double ecod__defer_held_until(const struct ecod *d, int64_t id)
{
    for (size_t i = 0; i < d->n_release; i++)
        if (d->release_id[i] == id)
            return d->release_s[i];
    return 0;
}

void ecod__defer_release_due(struct ecod *d, double now)
{
    size_t w = 0;
    for (size_t i = 0; i < d->n_release; i++) {
        if (d->release_s[i] > now) {
            d->release_id[w] = d->release_id[i];
            d->release_s[w++] = d->release_s[i];
            continue;
        }
        struct eco_store_job j;
        struct eco_error err = {{0}};
        int rc = eco_store_get(d->store, d->release_id[i], &j, &err);
        if (rc == 0 && j.state == ECO_STORE_QUEUED && ecod__queue_add(d, &j) == 0) {
            ECO_LOG(ECO_LOG_INFO, "sched", "job %" PRId64 " released", j.id);
            d->want_sched = true;
        } else if (rc == 0 && j.state == ECO_STORE_QUEUED) {
            rc = -ENOMEM;
        }
        eco_store_job_fini(&j);
        if (rc < 0 && rc != -ENOENT) { /* kept for the next pass (a store that failed) */
            d->release_id[w] = d->release_id[i];
            d->release_s[w++] = d->release_s[i];
        }
    }
    d->n_release = w;
}
