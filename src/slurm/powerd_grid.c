/* SPDX-License-Identifier: MIT */
/* `ecosched powerd` and grid signals (docs/slurm/powerd.md, "Grid signals"): the signal read as
 * ecoschedd reads it (src/daemon/grid.c: a file re-read when it changes, or a loopback URL), a
 * demand-response budget (lower when the signal is high, never under a guaranteed floor), and
 * deferrable Slurm jobs (sbatch --hold --comment=ecosched:max-delay=DURATION) kept held until
 * the carbon policy's release time, then released with `scontrol release` (a deferrable job
 * submitted without --hold is held with `scontrol uhold` when powerd sees it pending); only a
 * hold powerd owns is ever released (struct pdefer), never an administrator's. */
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

/* The comments powerd reads begin with DEFER_KEY; a deferrable job's is DEFER_PREFIX and a
 * duration (eco_parse_duration), at most ECO_MAX_DELAY_S (31 days, as ecoschedd's max_delay). */
#define DEFER_KEY "ecosched:"
#define DEFER_PREFIX "ecosched:max-delay="

int eco_powerd__defer_parse(const char *comment, double *delay_s, struct eco_error *err)
{
    const char *v = comment + strlen(DEFER_PREFIX);
    struct eco_error e = {{0}};
    if (strncmp(comment, DEFER_PREFIX, strlen(DEFER_PREFIX))) {
        const char *k = comment + strlen(DEFER_KEY);
        return eco_errorf(err, -EINVAL,
                          "field '%.*s': powerd knows only max-delay=DURATION (an earliest "
                          "start is sbatch --begin)",
                          (int)strcspn(k, "=,"), k);
    }
    if (eco_parse_duration(v, delay_s, &e) < 0)
        return eco_errorf(err, -EINVAL, "field max-delay: %s", e.msg);
    if (eco_check_max_delay("max-delay", *delay_s, &e) < 0)
        return eco_errorf(err, -EINVAL, "field %s", e.msg);
    return 0;
}

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
static int scontrol_run(const char *verb, int64_t id)
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

static int scontrol(const struct powerd *pd, const char *verb, int64_t id)
{
    return (pd->scontrol ? pd->scontrol : scontrol_run)(verb, id);
}

/* Job id's entry; with add, a new one (a full table reuses the entry of the job squeue has not
 * listed for longest; NULL when every job in it is listed now). */
static struct pdefer *defer_get(struct powerd *pd, int64_t id, bool add, double now_s)
{
    struct pdefer *old = NULL;
    for (size_t i = 0; i < pd->n_defer; i++) {
        if (pd->defer[i].id == id)
            return &pd->defer[i];
        if (!pd->defer[i].seen_now && (!old || pd->defer[i].last_seen_s < old->last_seen_s))
            old = &pd->defer[i];
    }
    if (!add)
        return NULL;
    struct pdefer *d = pd->n_defer < MAX_JOBS ? &pd->defer[pd->n_defer++] : old;
    if (d) {
        memset(d, 0, sizeof *d);
        d->id = id;
        d->last_seen_s = now_s;
    }
    return d;
}

/* The release time of job id (comment parsed into delay), decided by the carbon policy. */
static void decide(struct powerd *pd, struct pdefer *d, const json_t *o, double delay, double now_s)
{
    double submit = now_s;
    const json_t *st = json_object_get(o, "submit_time");
    if (json_is_integer(st) && json_integer_value(st) > 0 && json_integer_value(st) < (1LL << 40))
        submit = (double)json_integer_value(st);
    d->release_s = ecod__grid_release(&pd->grid, now_s, submit, submit + delay, 1, 1);
    d->decided = true;
    d->generation = pd->grid.generation;
    char when[32];
    eco_format_utc(d->release_s, when, sizeof when);
    ECO_LOG(ECO_LOG_INFO, NULL, "job %" PRId64 ": release at %s (%s forecast)", d->id, when,
            ecod__grid_forecast_name(&pd->grid, now_s));
}

/* Ends powerd's part in a job: it never acts on it again. */
static void give_up(struct pdefer *d, const char *why)
{
    if (why)
        ECO_LOG(ECO_LOG_INFO, NULL, "job %" PRId64 ": %s", d->id, why);
    d->done = true;
    d->owned = false;
}

void eco_powerd__defer_job(struct powerd *pd, const json_t *o, double now_s)
{
    const char *comment = json_string_value(json_object_get(o, "comment"));
    const char *state = json_string_value(json_object_get(o, "job_state"));
    const char *reason = json_string_value(json_object_get(o, "state_reason"));
    int64_t id = json_integer_value(json_object_get(o, "job_id"));
    if (!comment || strncmp(comment, DEFER_KEY, strlen(DEFER_KEY)) || !state || id <= 0)
        return;
    bool pending = strcmp(state, "PENDING") == 0;
    /* Slurm's reasons for a priority-0 hold: JobHeldUser (sbatch --hold, scontrol uhold: the
     * user may release it) and JobHeldAdmin (scontrol hold by root or an operator) */
    bool user_hold = pending && reason && !strcmp(reason, "JobHeldUser");
    bool other_hold = pending && reason && !strncmp(reason, "JobHeld", 7) && !user_hold;
    struct pdefer *d = defer_get(pd, id, pending, now_s);
    if (!d)
        return;
    d->seen_now = true;
    d->last_seen_s = now_s;
    if (d->done)
        return;
    double delay = 0;
    struct eco_error err = {{0}};
    if (!d->decided) { /* first seen with the comment */
        if (eco_powerd__defer_parse(comment, &delay, &err) < 0) {
            ECO_LOG(ECO_LOG_WARN, NULL,
                    "job %" PRId64 ": comment '%.80s': %s: not deferred (a hold of its user's "
                    "stays for the user to release)",
                    id, comment, err.msg);
            give_up(d, NULL);
            return;
        }
        if (other_hold) {
            give_up(d, "held by an administrator (JobHeldAdmin): not deferred, the hold left "
                       "alone");
            return;
        }
        d->owned = user_hold; /* sbatch --hold: the user's hold, handed over by the comment */
        decide(pd, d, o, delay, now_s);
    } else if (d->owned && d->generation != pd->grid.generation &&
               eco_powerd__defer_parse(comment, &delay, &err) == 0) {
        decide(pd, d, o, delay, now_s); /* the signal changed: the operator's new forecast */
    }
    if (!pending) {
        give_up(d, NULL); /* running or ended: nothing to hold */
        return;
    }
    if (other_hold) { /* an administrator's hold on top: theirs to release, never powerd's */
        give_up(d, "held by an administrator (JobHeldAdmin): its hold left alone, no longer "
                   "deferred");
        return;
    }
    if (d->owned && !user_hold) {
        give_up(d, "released before its time (by its user): no longer deferred");
        return;
    }
    if (!d->owned) {
        if (d->release_s <= now_s)
            give_up(d, NULL); /* its time has come: nothing to hold */
        else if (!user_hold && scontrol(pd, "uhold", id) == 0)
            d->owned = true; /* a user hold, so that the job's user may still release it */
        return;
    }
    if (d->release_s <= now_s && scontrol(pd, "release", id) == 0) {
        give_up(d, NULL);
        ECO_LOG(ECO_LOG_INFO, NULL, "job %" PRId64 " released", id);
    }
}

void eco_powerd__defer_sweep(struct powerd *pd, double now_s)
{
    size_t w = 0;
    for (size_t i = 0; i < pd->n_defer; i++)
        if (pd->defer[i].seen_now || now_s - pd->defer[i].last_seen_s < DEFER_FORGET_S) {
            pd->defer[i].seen_now = false;
            pd->defer[w++] = pd->defer[i];
        }
    pd->n_defer = w;
}

json_t *eco_powerd__grid_json(const struct powerd *pd, double budget, double now_s)
{
    json_t *held = json_array();
    for (size_t i = 0; held && i < pd->n_defer; i++)
        if (pd->defer[i].owned && !pd->defer[i].done)
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
