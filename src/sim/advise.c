/* SPDX-License-Identifier: MIT */
/* The held-out split and the selection rule of `ecosched advise` (advise.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/advise.h"

enum eco_advise_goal eco_advise_goal_of(int have_carbon, int have_price)
{
    return have_carbon ? ECO_ADVISE_CARBON : have_price ? ECO_ADVISE_COST : ECO_ADVISE_ENERGY;
}

const char *eco_advise_goal_name(enum eco_advise_goal g)
{
    return g == ECO_ADVISE_CARBON ? "carbon" : g == ECO_ADVISE_COST ? "cost" : "energy";
}

/* 100 x (v - b) / b; 0 when both are 0, +-inf-free: a zero baseline gives 100 per unit. */
static double pct(double b, double v)
{
    if (b == 0)
        return v == 0 ? 0 : 100.0 * (v > 0 ? 1 : -1);
    return 100.0 * (v - b) / b;
}

void eco_advise_delta(const struct eco_sim_summary *base, const struct eco_sim_summary *run,
                      struct eco_advise_delta *d)
{
    d->energy_j = base->energy_j.total - run->energy_j.total;
    d->carbon_kg = base->carbon_kg - run->carbon_kg;
    d->cost = base->cost - run->cost;
    d->avg_jct_pct = pct(base->avg_jct_s, run->avg_jct_s);
    d->p95_wait_pct = pct(base->p95_wait_s, run->p95_wait_s);
    d->p95_wait_s = run->p95_wait_s - base->p95_wait_s;
    d->dl_miss_pts = 100.0 * (run->deadline_miss_ratio - base->deadline_miss_ratio);
}

double eco_advise_saving(const struct eco_advise_delta *d, enum eco_advise_goal g)
{
    return g == ECO_ADVISE_CARBON ? d->carbon_kg : g == ECO_ADVISE_COST ? d->cost : d->energy_j;
}

int eco_advise_within(const struct eco_sim_summary *base, const struct eco_sim_summary *run,
                      const struct eco_advise_limits *lim, char *why, size_t why_size)
{
    struct eco_advise_delta d;
    eco_advise_delta(base, run, &d);
    double wait_allowed = base->p95_wait_s * lim->p95_wait_pct / 100.0;
    if (wait_allowed < ECO_ADVISE_WAIT_SLACK_S)
        wait_allowed = ECO_ADVISE_WAIT_SLACK_S;
    if (run->avg_jct_s > base->avg_jct_s * (1 + lim->jct_pct / 100.0)) {
        snprintf(why, why_size, "avg JCT %+.2f %% (limit %+g %%)", d.avg_jct_pct, lim->jct_pct);
        return 0;
    }
    if (d.p95_wait_s > wait_allowed) {
        snprintf(why, why_size, "p95 wait %+.2f %% (limit %+g %%)", d.p95_wait_pct,
                 lim->p95_wait_pct);
        return 0;
    }
    if (d.dl_miss_pts > lim->dl_miss_pts) {
        snprintf(why, why_size, "deadline misses %+.2f points (limit %+g)", d.dl_miss_pts,
                 lim->dl_miss_pts);
        return 0;
    }
    if (why_size)
        why[0] = '\0';
    return 1;
}

long eco_advise_pick(const struct eco_sim_summary *base, const struct eco_sim_summary *runs,
                     const char *const *names, size_t n, const struct eco_advise_limits *lim,
                     enum eco_advise_goal g, char *why, size_t why_size)
{
    long best = -1, best_any = -1;
    double best_s = 0, best_any_s = 0;
    char reason[160] = "", r[160];
    for (size_t i = 0; i < n; i++) {
        struct eco_advise_delta d;
        eco_advise_delta(base, &runs[i], &d);
        double s = eco_advise_saving(&d, g);
        if (!(s > 0))
            continue;
        int ok = eco_advise_within(base, &runs[i], lim, r, sizeof r);
        if (ok && (best < 0 || s > best_s)) {
            best = (long)i;
            best_s = s;
        }
        if (!ok && (best_any < 0 || s > best_any_s)) {
            best_any = (long)i;
            best_any_s = s;
            memcpy(reason, r, sizeof reason);
        }
    }
    if (best >= 0) {
        if (why_size)
            why[0] = '\0';
        return best;
    }
    if (best_any < 0)
        snprintf(why, why_size, "no setting saves %s", eco_advise_goal_name(g));
    else
        snprintf(why, why_size, "the settings that save %s break a limit (%s%s%s)",
                 eco_advise_goal_name(g), names ? names[best_any] : "", names ? ": " : "", reason);
    return -1;
}

struct order {
    double submit;
    size_t i;
};

static int by_submit(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* A set with all's strings and loader fields, and room for n jobs. */
static struct eco_jobset *part_new(const struct eco_jobset *all, size_t n)
{
    struct eco_jobset *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    *s = *all;
    s->jobs = malloc((n ? n : 1) * sizeof *s->jobs);
    s->strings = malloc(all->str_cap ? all->str_cap : 1);
    if (!s->jobs || !s->strings) {
        free(s->jobs);
        free(s->strings);
        free(s);
        return NULL;
    }
    if (all->str_len)
        memcpy(s->strings, all->strings, all->str_len);
    s->n = 0;
    s->cap = n ? n : 1;
    s->str_cap = all->str_cap ? all->str_cap : 1;
    return s;
}

int eco_advise_split(const struct eco_jobset *all, double share, size_t min_part,
                     struct eco_jobset **tune, struct eco_jobset **held, struct eco_error *err)
{
    *tune = *held = NULL;
    if (!(share > 0 && share < 1))
        return eco_errorf(err, -EINVAL, "the tuning share must be between 0 and 1 (got %g)", share);
    size_t n = all->n, k = (size_t)llround(share * (double)n);
    if (k < min_part || n - k < min_part)
        return eco_errorf(err, -EINVAL,
                          "the trace is too short to split: %zu jobs give %zu to tune on and "
                          "%zu to report on; each part needs at least %zu",
                          n, k, n - k, min_part);
    struct order *o = malloc(n * sizeof *o);
    unsigned char *in_tune = calloc(n, 1);
    int rc = -ENOMEM;
    if (!o || !in_tune)
        goto done;
    for (size_t i = 0; i < n; i++)
        o[i] = (struct order){all->jobs[i].submit_s, i};
    qsort(o, n, sizeof *o, by_submit);
    for (size_t i = 0; i < k; i++)
        in_tune[o[i].i] = 1;
    *tune = part_new(all, k);
    *held = part_new(all, n - k);
    if (!*tune || !*held)
        goto done;
    for (size_t i = 0; i < n; i++) {
        struct eco_jobset *p = in_tune[i] ? *tune : *held;
        p->jobs[p->n++] = all->jobs[i];
    }
    rc = 0;
done:
    if (rc) {
        eco_jobset_destroy(*tune);
        eco_jobset_destroy(*held);
        *tune = *held = NULL;
        if (err)
            eco_errorf(err, rc, "out of memory");
    }
    free(o);
    free(in_tune);
    return rc;
}

size_t eco_advise_delayed(const struct eco_jobset *set, const double *base_start)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->start_s >= 0 && base_start[i] >= 0 &&
            j->start_s > base_start[i] + ECO_ADVISE_DELAY_S)
            n++;
    }
    return n;
}

double eco_advise_per_year(double v, double span_s)
{
    return span_s > 0 ? v * 365.0 * 86400.0 / span_s : 0;
}
