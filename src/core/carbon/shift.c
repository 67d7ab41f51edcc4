/* SPDX-License-Identifier: MIT */
/* ecosched's temporal shifting: Let's Wait Awhile's choice (the start before the latest whose
 * forecast mean intensity over the run is lowest) made with the cluster's capacity in view.
 * Every arriving job, deferrable or not, books its GPUs over the hours it is expected to run;
 * a deferrable job only takes a start at which the booked GPUs plus its own stay within
 * UTIL x the cluster's GPUs over its whole run, so that shifted jobs do not pile into the same
 * clean hours and then wait in the queue past them (the herd that capacity-blind shifting
 * makes). When no start is within capacity, the least booked one. docs/policies/carbon.md. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/carbon.h"

#define MAX_CANDIDATES 169
/* Hours of booking per job looked at: a week (a longer run books its first week only). */
#define MAX_BOOK_H 168
#define HOUR_S 3600.0
/* The default utilisation cap: 0.9 of the cluster's GPUs. A setting, tuned on the tuning
 * traces of docs/results/carbon.md with the other policies' knobs. */
#define DEFAULT_UTIL 0.9

struct eco_carbon {
    double util;
    double base_hour; /* calendar hour of book[0]; NAN before the first job */
    double *book;     /* GPUs booked per hour */
    size_t n, cap;
};

static struct eco_carbon *shift_create(const struct eco_cluster *c, const char *params,
                                       struct eco_error *err)
{
    (void)c;
    double util = DEFAULT_UTIL;
    if (params && *params) {
        char *end;
        util = strtod(params, &end);
        if (end == params || *end || !(util > 0 && util <= 1)) {
            eco_errorf(err, -EINVAL, "shift:UTIL: '%s' is not a share of the GPUs in (0, 1]",
                       params);
            return NULL;
        }
    }
    struct eco_carbon *p = calloc(1, sizeof *p);
    if (!p) {
        eco_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    p->util = util;
    p->base_hour = NAN;
    return p;
}

static void shift_destroy(struct eco_carbon *p)
{
    if (p)
        free(p->book);
    free(p);
}

/* Hours [h0, h1) of the booking, relative to base_hour, grown as needed; -1 out of memory. */
static int ensure(struct eco_carbon *p, size_t h1)
{
    if (h1 <= p->n)
        return 0;
    if (h1 > p->cap) {
        size_t nc = p->cap ? p->cap : 1024;
        while (nc < h1)
            nc *= 2;
        double *b = realloc(p->book, nc * sizeof *b);
        if (!b)
            return -1;
        p->book = b;
        p->cap = nc;
    }
    memset(p->book + p->n, 0, (h1 - p->n) * sizeof *p->book);
    p->n = h1;
    return 0;
}

/* The booking hours a run at calendar a for run_s covers: [*h0, *h1). */
static void hours_of(const struct eco_carbon *p, double a, double run_s, size_t *h0, size_t *h1)
{
    double first = floor(a / HOUR_S) - p->base_hour;
    double last = ceil((a + (run_s > 0 ? run_s : 1)) / HOUR_S) - p->base_hour;
    if (first < 0)
        first = 0;
    if (last - first > MAX_BOOK_H)
        last = first + MAX_BOOK_H;
    *h0 = (size_t)first;
    *h1 = (size_t)last;
}

static double shift_release(struct eco_carbon *p, const struct eco_carbon_view *v,
                            const struct eco_carbon_job *j)
{
    double now = v->epoch0_s + v->now_s;
    if (isnan(p->base_hour))
        p->base_hour = floor(now / HOUR_S);
    double cand[MAX_CANDIDATES];
    size_t n = eco_carbon_candidates(v, j, cand, MAX_CANDIDATES);
    double limit = p->util * (double)v->cluster_gpus;
    if (limit < j->gpus)
        limit = j->gpus; /* a job larger than the cap may still take hours nothing booked */
    double best = v->now_s, best_c = INFINITY, least = v->now_s, least_peak = INFINITY;
    int room = 1;
    for (size_t i = 0; i < n && room; i++) {
        double a = v->epoch0_s + cand[i];
        size_t h0, h1;
        hours_of(p, a, j->run_s, &h0, &h1);
        if (ensure(p, h1) < 0) {
            room = 0; /* out of memory: decide without the booking */
            break;
        }
        double peak = 0;
        for (size_t h = h0; h < h1; h++)
            if (p->book[h] > peak)
                peak = p->book[h];
        peak += j->gpus;
        if (peak < least_peak) {
            least_peak = peak;
            least = cand[i];
        }
        if (peak > limit && n > 1)
            continue;
        double c = eco_forecast_mean(v->forecast, now, a, a + j->run_s);
        if (c < best_c) {
            best_c = c;
            best = cand[i];
        }
    }
    double start = isinf(best_c) ? least : best;
    size_t h0, h1;
    hours_of(p, v->epoch0_s + start, j->run_s, &h0, &h1);
    if (room && ensure(p, h1) == 0)
        for (size_t h = h0; h < h1; h++)
            p->book[h] += j->gpus;
    return start;
}

const struct eco_carbon_ops eco_carbon_shift = {
    .name = "shift",
    .summary = "ecosched's: the lowest-forecast start before the latest among those that\n"
               "keep the GPUs booked by every job within UTIL of the cluster (default\n"
               "0.9)",
    .create = shift_create,
    .destroy = shift_destroy,
    .release = shift_release,
};
