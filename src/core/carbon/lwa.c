/* SPDX-License-Identifier: MIT */
/* Let's Wait Awhile (Wiesner et al., Middleware '21), without interruption: each deferrable job
 * starts at the time before its latest start whose forecast mean intensity over the job's run
 * is lowest (ties: the earliest), whatever else runs then (the cluster's capacity is not its
 * concern: the queue holds what does not fit). lwa:HOURS searches only the first HOURS of the
 * slack: the paper's "flexibility window", the knob it is evaluated over. docs/policies/carbon.md.
 */
#include <errno.h>
#include <stdlib.h>
#include "ecosched/carbon.h"

/* Candidate starts looked at per job: a week of hourly steps (slack beyond that is cut to the
 * first week of candidates, a bound no bundled run reaches). */
#define MAX_CANDIDATES 169

struct eco_carbon {
    double window_s; /* the longest wait it uses; 0: the whole slack */
};

static struct eco_carbon *lwa_create(const struct eco_cluster *c, const char *params,
                                     struct eco_error *err)
{
    (void)c;
    double hours = 0;
    if (params && *params) {
        char *end;
        hours = strtod(params, &end);
        if (end == params || *end || !(hours > 0 && hours < 1e6)) {
            eco_errorf(err, -EINVAL,
                       "lwa:HOURS: '%s' is not a window in hours > 0 (the longest wait it uses)",
                       params);
            return NULL;
        }
    }
    struct eco_carbon *p = calloc(1, sizeof *p);
    if (!p) {
        eco_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    p->window_s = hours * 3600.0;
    return p;
}

static void lwa_destroy(struct eco_carbon *p)
{
    free(p);
}

static double lwa_release(struct eco_carbon *p, const struct eco_carbon_view *v,
                          const struct eco_carbon_job *j)
{
    double cand[MAX_CANDIDATES];
    struct eco_carbon_job w = *j;
    if (p->window_s > 0 && w.latest_start_s > w.submit_s + p->window_s)
        w.latest_start_s = w.submit_s + p->window_s; /* the flexibility window it searches */
    size_t n = eco_carbon_candidates(v, &w, cand, MAX_CANDIDATES);
    double now = v->epoch0_s + v->now_s, best = v->now_s, best_c = 0;
    for (size_t i = 0; i < n; i++) {
        double a = v->epoch0_s + cand[i];
        double c = eco_forecast_mean(v->forecast, now, a, a + j->run_s);
        if (i == 0 || c < best_c) {
            best_c = c;
            best = cand[i];
        }
    }
    return best;
}

const struct eco_carbon_ops eco_carbon_lwa = {
    .name = "lwa",
    .summary = "Let's Wait Awhile: each deferrable job at the start before its latest\n"
               "(or within HOURS, its flexibility window) whose forecast mean intensity\n"
               "over its run is lowest",
    .create = lwa_create,
    .destroy = lwa_destroy,
    .release = lwa_release,
};
