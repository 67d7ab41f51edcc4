/* SPDX-License-Identifier: MIT */
/* `ecosched advise` (docs/advise.md): the held-out split of a trace and the one rule that
 * picks each lever's setting from simulator summaries. Pure functions, no output. */
#ifndef ECOSCHED_SIM_ADVISE_H
#define ECOSCHED_SIM_ADVISE_H

#include <stddef.h>
#include "ecosched/error.h"
#include "ecosched/job.h"
#include "sim/sim.h"

/* Fewest jobs either part of the split may hold: with fewer, one long job decides a part's
 * averages and p95 and the held-out figures say nothing about the site. */
#define ECO_ADVISE_MIN_PART_JOBS 20

/* The service limits of the rule, each against the baseline run (no lever) of the same part:
 * avg JCT at most +jct_pct %, p95 wait at most +p95_wait_pct % (and at least
 * ECO_ADVISE_WAIT_SLACK_S more allowed, so that a baseline without waits allows a minute),
 * the deadline-miss ratio at most +dl_miss_pts percentage points. */
struct eco_advise_limits {
    double jct_pct, p95_wait_pct, dl_miss_pts;
};
/* One minute: a p95 wait of 0 in the baseline would otherwise forbid any wait at all. */
#define ECO_ADVISE_WAIT_SLACK_S 60.0

/* What the rule maximises, the same for every lever: carbon with a carbon signal, else cost
 * with a price signal, else energy. */
enum eco_advise_goal { ECO_ADVISE_ENERGY, ECO_ADVISE_CARBON, ECO_ADVISE_COST };
enum eco_advise_goal eco_advise_goal_of(int have_carbon, int have_price);
/* "energy", "carbon" or "cost". */
const char *eco_advise_goal_name(enum eco_advise_goal g);

/* A run against the baseline: savings (baseline - run; > 0 saves) and changes (run -
 * baseline; > 0 is worse). */
struct eco_advise_delta {
    double energy_j, carbon_kg, cost; /* saved */
    double avg_jct_pct;               /* change of avg JCT, % of the baseline's */
    double p95_wait_pct;              /* change of p95 wait, % of the baseline's (0 when both 0) */
    double p95_wait_s;                /* change of p95 wait, s */
    double dl_miss_pts;               /* change of the deadline-miss ratio, percentage points */
};
void eco_advise_delta(const struct eco_sim_summary *base, const struct eco_sim_summary *run,
                      struct eco_advise_delta *d);
/* The saving the goal counts. */
double eco_advise_saving(const struct eco_advise_delta *d, enum eco_advise_goal g);
/* 1 when run keeps the limits against base; else 0 with why (which limit, by how much). */
int eco_advise_within(const struct eco_sim_summary *base, const struct eco_sim_summary *run,
                      const struct eco_advise_limits *lim, char *why, size_t why_size);
/* The rule: of the n candidate runs of one lever, the one with the largest saving of the goal
 * among those within the limits; a saving must be > 0. Returns its index, or -1 with why ("no
 * setting saves energy", or the best saving's setting and the limit it breaks); `names` (may be
 * NULL) name the candidates in why. */
long eco_advise_pick(const struct eco_sim_summary *base, const struct eco_sim_summary *runs,
                     const char *const *names, size_t n, const struct eco_advise_limits *lim,
                     enum eco_advise_goal g, char *why, size_t why_size);

/* The held-out split: the jobs ordered by submit time (ties by trace order), the first
 * round(share x n) of them the tuning part, the rest the held-out part; each part keeps the
 * trace's order, ids and strings (the whole string arena is copied). 0; -EINVAL with err when
 * share is not in (0, 1) or either part would hold fewer than min_part jobs (err says how many
 * each has); -ENOMEM. The caller destroys both sets. */
int eco_advise_split(const struct eco_jobset *all, double share, size_t min_part,
                     struct eco_jobset **tune, struct eco_jobset **held, struct eco_error *err);

/* Jobs of set that started more than ECO_ADVISE_DELAY_S later than they did in the baseline
 * run of the same set, whose start times base_start (by index) holds. */
#define ECO_ADVISE_DELAY_S 60.0
size_t eco_advise_delayed(const struct eco_jobset *set, const double *base_start);

/* v over a history of span_s seconds scaled to a year (365 days); 0 when span_s <= 0. */
double eco_advise_per_year(double v, double span_s);

#endif
