/* SPDX-License-Identifier: MIT */
/* `ecosched powerd` and grid signals (docs/slurm/powerd.md, "Grid signals"): the signal read as
 * ecoschedd reads it (src/daemon/grid.c: a file re-read when it changes, or a loopback URL), a
 * demand-response budget (lower when the signal is high, never under a guaranteed floor), and
 * deferrable Slurm jobs (sbatch --hold --comment=ecosched:max-delay=DURATION) kept held until
 * the carbon policy's release time, then released with `scontrol release` (a deferrable job
 * submitted without --hold is held with `scontrol hold` when powerd sees it pending). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "powerd.h"
#include "util/grid_signal.h"
#include "util/log.h"

/* The comment a deferrable job carries: the prefix, then a duration (eco_parse_duration). */
#define DEFER_PREFIX "ecosched:max-delay="

double eco_powerd__dr_budget(const struct powerd *pd, double budget, double now_s)
{
    const struct ecod_grid_src *src = pd->grid.carbon.loaded  ? &pd->grid.carbon
                                      : pd->grid.price.loaded ? &pd->grid.price
                                                              : NULL;
    if (!src || !(pd->dr_above > -INFINITY) || !eco_signal_covers(&src->s, now_s, now_s))
        return budget; /* no signal now: the operator's budget, nothing invented */
    if (eco_signal_value(&src->s, now_s) <= pd->dr_above)
        return budget;
    double low = budget * pd->dr_scale;
    return fmin(budget, fmax(low, pd->dr_floor_w));
}

/* Runs `scontrol VERB ID`; 0 or -EIO (logged). */
static int scontrol(const char *verb, int64_t id)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "scontrol %s %" PRId64 " 2>&1", verb, id);
    FILE *f = popen(cmd, "r");
    char line[256] = "";
    if (!f)
        return -EIO;
    while (fgets(line, sizeof line, f))
        ;
    int st = pclose(f);
    if (st != 0) {
        ECO_LOG(ECO_LOG_WARN, NULL, "scontrol %s %" PRId64 " failed: %s", verb, id, line);
        return -EIO;
    }
    return 0;
}

static struct pdefer *defer_get(struct powerd *pd, int64_t id, bool add)
{
    for (size_t i = 0; i < pd->n_defer; i++)
        if (pd->defer[i].id == id)
            return &pd->defer[i];
    if (!add || pd->n_defer == MAX_JOBS)
        return NULL;
    struct pdefer *d = &pd->defer[pd->n_defer++];
    memset(d, 0, sizeof *d);
    d->id = id;
    return d;
}

void eco_powerd__defer_job(struct powerd *pd, const json_t *o, double now_s)
{
    const char *comment = json_string_value(json_object_get(o, "comment"));
    const char *state = json_string_value(json_object_get(o, "job_state"));
    int64_t id = json_integer_value(json_object_get(o, "job_id"));
    double delay = 0, submit = now_s;
    struct eco_error err = {{0}};
    if (!comment || strncmp(comment, DEFER_PREFIX, strlen(DEFER_PREFIX)) || !state || id <= 0)
        return;
    struct pdefer *d = defer_get(pd, id, strcmp(state, "PENDING") == 0);
    if (!d || d->done)
        return;
    d->seen_now = true;
    if (!d->decided || (d->held && d->generation != pd->grid.generation)) {
        if (eco_parse_duration(comment + strlen(DEFER_PREFIX), &delay, &err) < 0) {
            ECO_LOG(ECO_LOG_WARN, NULL, "job %" PRId64 ": comment '%s': %s: not deferred", id,
                    comment, err.msg);
            d->done = true;
            return;
        }
        const json_t *st = json_object_get(o, "submit_time");
        if (json_is_integer(st) && json_integer_value(st) > 0)
            submit = (double)json_integer_value(st);
        /* decided again when the signal changed: the operator's new forecast */
        d->release_s = ecod__grid_release(&pd->grid, now_s, submit, submit + delay, 1, 1);
        d->decided = true;
        d->generation = pd->grid.generation;
        char when[32];
        eco_format_utc(d->release_s, when, sizeof when);
        ECO_LOG(ECO_LOG_INFO, NULL, "job %" PRId64 ": release at %s (%s forecast)", id, when,
                ecod__grid_forecast_name(&pd->grid, now_s));
    }
    if (strcmp(state, "PENDING"))
        return;
    /* submitted with sbatch --hold (the documented way: it cannot start before powerd decided) */
    const char *reason = json_string_value(json_object_get(o, "state_reason"));
    if (reason && !strncmp(reason, "JobHeld", 7))
        d->held = true;
    if (!d->held && d->release_s > now_s && scontrol("hold", id) == 0)
        d->held = true;
    else if (d->held && d->release_s <= now_s && scontrol("release", id) == 0) {
        d->held = false;
        d->done = true;
        ECO_LOG(ECO_LOG_INFO, NULL, "job %" PRId64 " released", id);
    }
}

void eco_powerd__defer_sweep(struct powerd *pd)
{
    size_t w = 0;
    for (size_t i = 0; i < pd->n_defer; i++)
        if (pd->defer[i].seen_now) {
            pd->defer[i].seen_now = false;
            pd->defer[w++] = pd->defer[i];
        }
    pd->n_defer = w;
}

json_t *eco_powerd__grid_json(const struct powerd *pd, double budget, double now_s)
{
    json_t *held = json_array();
    for (size_t i = 0; held && i < pd->n_defer; i++)
        if (pd->defer[i].held)
            json_array_append_new(held,
                                  json_pack("{s:I,s:f}", "job_id", (json_int_t)pd->defer[i].id,
                                            "release_s", pd->defer[i].release_s));
    const struct ecod_grid_src *c = &pd->grid.carbon, *p = &pd->grid.price;
    json_t *o =
        json_pack("{s:f,s:s,s:o}", "budget_effective_w", eco_powerd__dr_budget(pd, budget, now_s),
                  "forecast", ecod__grid_forecast_name(&pd->grid, now_s), "held", held);
    if (o && c->loaded && eco_signal_covers(&c->s, now_s, now_s))
        json_object_set_new(o, "carbon_gco2eq_per_kwh", json_real(eco_signal_value(&c->s, now_s)));
    if (o && p->loaded && eco_signal_covers(&p->s, now_s, now_s)) {
        json_object_set_new(o, "price_per_mwh", json_real(eco_signal_value(&p->s, now_s)));
        json_object_set_new(o, "currency", json_string(p->s.currency));
    }
    return o;
}
