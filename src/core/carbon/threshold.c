/* SPDX-License-Identifier: MIT */
/* Threshold shifting: a deferrable job starts at the first time (now, then each hour) whose
 * forecast intensity is at or below the PCT-th percentile of the forecast over the job's whole
 * window (now to its latest start plus its run), else at its latest start. The rule of the
 * simple carbon-aware schedulers (run only while the grid is clean). docs/policies/carbon.md. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/carbon.h"

/* Candidate starts and window samples per job: a week of hours (as lwa). */
#define MAX_CANDIDATES 169
#define MAX_SAMPLES 1024
/* The default percentile: the cleanest 30 % of the window's hours. A setting, tuned with the
 * other policies' knobs on the tuning traces of docs/results/carbon.md. */
#define DEFAULT_PCT 30.0

struct eco_carbon {
    double pct;
};

static struct eco_carbon *thr_create(const struct eco_cluster *c, const char *params,
                                     struct eco_error *err)
{
    (void)c;
    double pct = DEFAULT_PCT;
    if (params && *params) {
        char *end;
        pct = strtod(params, &end);
        if (end == params || *end || !(pct >= 0 && pct <= 100)) {
            eco_errorf(err, -EINVAL, "threshold:PCT: '%s' is not a percentile in 0..100", params);
            return NULL;
        }
    }
    struct eco_carbon *p = calloc(1, sizeof *p);
    if (!p) {
        eco_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    p->pct = pct;
    return p;
}

static void thr_destroy(struct eco_carbon *p)
{
    free(p);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double thr_release(struct eco_carbon *p, const struct eco_carbon_view *v,
                          const struct eco_carbon_job *j)
{
    if (j->latest_start_s <= v->now_s)
        return v->now_s;
    double now = v->epoch0_s + v->now_s, step = v->step_s > 0 ? v->step_s : 3600;
    double samples[MAX_SAMPLES];
    size_t ns = 0;
    for (double t = now; t < v->epoch0_s + j->latest_start_s + j->run_s && ns < MAX_SAMPLES;
         t += step)
        samples[ns++] = eco_forecast_value(v->forecast, now, t);
    qsort(samples, ns, sizeof samples[0], cmp);
    /* the PCT-th percentile, by the nearest rank below */
    size_t k = (size_t)(p->pct / 100.0 * (double)(ns - 1));
    double thr = samples[k];
    double cand[MAX_CANDIDATES];
    size_t n = eco_carbon_candidates(v, j, cand, MAX_CANDIDATES);
    for (size_t i = 0; i < n; i++)
        if (eco_forecast_value(v->forecast, now, v->epoch0_s + cand[i]) <= thr)
            return cand[i];
    return j->latest_start_s;
}

const struct eco_carbon_ops eco_carbon_threshold = {
    .name = "threshold",
    .summary = "each deferrable job at the first hour whose forecast intensity is at or\n"
               "below the PCT-th percentile of its window (default 30), else at its\n"
               "latest start",
    .create = thr_create,
    .destroy = thr_destroy,
    .release = thr_release,
};
