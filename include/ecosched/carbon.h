/* SPDX-License-Identifier: MIT */
/* Carbon- and price-aware scheduling: forecasts of a grid signal as a policy may know them,
 * and the carbon policies (docs/policies/carbon.md), a family like the queue policies: a
 * deferrable job's release time is decided when it arrives, from a forecast, never from the
 * signal itself (the truth, which only judges). Pure: no clock, no I/O. */
#ifndef ECOSCHED_CARBON_H
#define ECOSCHED_CARBON_H

#include <stddef.h>
#include <stdint.h>
#include "ecosched/cluster.h"
#include "ecosched/error.h"
#include "ecosched/signal.h"

/* ---- forecasts ----------------------------------------------------------------------------- */

enum eco_forecast_kind {
    /* The truth with a fixed relative error per piece, drawn once (seeded) from N(0, sigma):
     * Let's Wait Awhile's error model (Wiesner et al., Middleware '21, 5 %). */
    ECO_FORECAST_NOISY = 0,
    /* Seasonal persistence: the 24 hours before the forecast is made, repeated; needs no
     * knowledge of the future at all. */
    ECO_FORECAST_PERSIST,
    /* The truth itself: for the bound only, never a policy's headline. */
    ECO_FORECAST_ORACLE,
};

struct eco_forecast {
    enum eco_forecast_kind kind;
    double sigma;                   /* noisy: relative standard deviation */
    const struct eco_signal *truth; /* borrowed */
    struct eco_signal noisy;        /* noisy: the forecast series; else unused */
    /* persist: the profile issued at issue_hour (24 hourly values and their prefix sums) */
    double issue_hour;
    double day[24], day_cum[25];
};

/* Parses a --forecast value: "noisy[:SIGMA]" (default 0.05), "persist" or "oracle". 0 or
 * -EINVAL with err naming the part. */
int eco_forecast_parse(const char *spec, enum eco_forecast_kind *kind, double *sigma,
                       struct eco_error *err);
/* Builds a forecast of `truth` (borrowed; it must outlive the forecast). 0, -ENOMEM. */
int eco_forecast_init(struct eco_forecast *f, enum eco_forecast_kind kind, double sigma,
                      const struct eco_signal *truth, uint64_t seed, struct eco_error *err);
void eco_forecast_fini(struct eco_forecast *f);
/* The forecast, made at calendar time `now`, of the mean of the signal over [a, b] (a < b,
 * calendar seconds). Before `now` the forecast is the truth (the past is measured). */
double eco_forecast_mean(struct eco_forecast *f, double now, double a, double b);
/* The forecast, made at `now`, of the value at t. */
double eco_forecast_value(struct eco_forecast *f, double now, double t);

/* ---- carbon policies ---------------------------------------------------------------------- */

/* A deferrable job as a carbon policy sees it when it arrives. */
struct eco_carbon_job {
    double submit_s;       /* simulated time it arrived (= now) */
    double run_s;          /* its expected run time (the trace's duration) */
    double latest_start_s; /* the latest start its slack allows (>= submit_s) */
    uint32_t gpus;
    /* The cost of one suspension (checkpoint and restore), s of the job's time at its draw:
     * an interrupting plan weighs it; 0 for the others. */
    double suspend_s;
};

/* What a policy sees: the time, the forecast, the cluster's GPUs and where simulated time
 * lies on the calendar. The forecast is the policy's only knowledge of the signal. */
struct eco_carbon_view {
    double now_s;    /* simulated */
    double epoch0_s; /* calendar time of simulated 0 */
    struct eco_forecast *forecast;
    double step_s; /* the signal's step (candidate starts are now and each step boundary) */
    uint64_t cluster_gpus;
};

/* One run of an interrupting plan: the job runs over [start_s, end_s) (simulated). */
struct eco_carbon_seg {
    double start_s, end_s;
};
/* Runs an interrupting plan holds at most (more are merged into the last). */
#define ECO_CARBON_MAX_SEGS 32

struct eco_carbon;

struct eco_carbon_ops {
    const char *name;
    const char *summary;
    struct eco_carbon *(*create)(const struct eco_cluster *c, const char *params,
                                 struct eco_error *err);
    void (*destroy)(struct eco_carbon *p);
    /* The simulated time at which the job enters the queue: in [now, latest_start]. */
    double (*release)(struct eco_carbon *p, const struct eco_carbon_view *v,
                      const struct eco_carbon_job *j);
    /* Optional, for an interrupting policy (the engine then calls it instead of release):
     * writes the job's runs to out[0..max) in time order, disjoint, the first starting in
     * [now, latest_start]; the job is suspended at the end of each run but the last and
     * resumed at the next one's start; the last runs to completion. Returns the count (>= 1). */
    size_t (*plan)(struct eco_carbon *p, const struct eco_carbon_view *v,
                   const struct eco_carbon_job *j, struct eco_carbon_seg *out, size_t max);
    /* Optional with plan: whether this instance may suspend jobs (NULL: it may). */
    int (*interrupts)(const struct eco_carbon *p);
};

/* Finds the policy of a --carbon-policy value "NAME[:PARAMS]", its params part in *params
 * (NULL when none); NULL when unknown. */
const struct eco_carbon_ops *eco_carbon_find(const char *value, const char **params);
const struct eco_carbon_ops *const *eco_carbon_all(void);

/* Candidate starts of a job: now, then each boundary of the signal's pieces after it, up to
 * latest_start (included as the last); used by the policies. Returns the count written to
 * out[0..max) (the latest start always last). */
size_t eco_carbon_candidates(const struct eco_carbon_view *v, const struct eco_carbon_job *j,
                             double *out, size_t max);

/* The runs of Let's Wait Awhile with interruption: the signal's pieces in [now, latest_start
 * + run) with the lowest forecast mean (ties: the earliest), taken until they add up to the
 * job's run time plus suspend_s for each suspension they need, written in time order with
 * adjacent pieces merged (at most max, the rest merged into the last). Returns the count; its
 * forecast carbon intensity x time (g/kWh x s) in *score when score is not NULL. */
size_t eco_carbon_lowest_runs(const struct eco_carbon_view *v, const struct eco_carbon_job *j,
                              struct eco_carbon_seg *out, size_t max, double *score);

#endif
