/* SPDX-License-Identifier: MIT */
/* The capper family's shared instance and helpers (src/core/powercap/capper.c): a policy file
 * holds its ops table and a split function; feedback, dithering, level snapping and
 * admission are the family's. */
#ifndef ECO_CAPPER_INTERNAL_H
#define ECO_CAPPER_INTERNAL_H

#include "ecosched/powercap.h"

enum { ECO_CAPPER_ADMIT_MIN, ECO_CAPPER_ADMIT_DEADLINE };

/* Which optional keys a policy accepts besides the family's (gain, bound, margin, guard,
 * dither, early, admit, near). */
/* grid, penalty, horizon, miss, sigma, lost, weight, plan, grid_floor, value, carbon_price */
#define ECO_CAPPER_KEYS_ALLOC 1u
#define ECO_CAPPER_KEYS_THRESHOLD 2u /* rebalance, high, low, step: the threshold's */

struct eco_capper_common {
    double gain;       /* feedback: share of the measured error added to the integral per period */
    double bound;      /* feedback integral bound, share of the budget */
    double margin;     /* the feedback aims this share below the budget */
    double guard;      /* after a budget step down the integral starts this share below it */
    double dither;     /* early dithering, share of the knob's range (+-) */
    uint32_t early;    /* samples below which a job is dithered */
    double slew;       /* most a limit rises per period, share of its range (0: no bound) */
    uint32_t observer; /* feedback: 1 a disturbance observer on the models' bias, 0 an integral */
    int admit;         /* ECO_CAPPER_ADMIT_* */
    double near;       /* admit=deadline: a candidate is urgent at slack <= near x its time */
    /* The deadline-aware allocation (ECO_CAPPER_KEYS_ALLOC; docs/policies/powercap.md,
     * "Deadline-aware cost"): eco_cap_params' miss_cost, miss_sigma and lost_release, the
     * weight rule and whether the receding-horizon plan (eco_cap_plan) decides. */
    double miss;
    double sigma;
    uint32_t lost;
    int weight;    /* ECO_CAPPER_WEIGHT_* */
    uint32_t plan; /* 1: eco_cap_plan over cap.horizon periods, 0: one eco_cap_allocate */
    /* The grid floor (docs/policies/powercap.md, "Grid floor"): 1 puts the grid's price of a
     * watt under the allocator's own; value is what an hour of (weighted) completion time is
     * worth, carbon_price what a tonne of CO2eq costs, both in the price signal's currency. */
    uint32_t grid_floor;
    double value, carbon_price;
    /* 1: a decide re-splits only the jobs that are not steady when the steady ones' answers
     * stand (docs/policies/powercap.md, "Steady jobs"); 0: every decide splits every job */
    uint32_t steady;
};

/* The grid floor in the allocator's units (cost, s of weighted completion time, per W): the
 * money a watt costs over the allocator's horizon, at the view's price and carbon, over the
 * value of a second of completion time; 0 without grid_floor. */
double eco_capper__grid_floor(const struct eco_capper *c, const struct eco_capper_view *v);

/* Weight of a job's completion time in the cost: 1 for every job, or its GPUs over its
 * reference duration (miss_ref_s, else remaining_s), so that a miss or an hour of a small,
 * short job counts as much as of a large, long one per GPU-hour held. */
enum { ECO_CAPPER_WEIGHT_ONE, ECO_CAPPER_WEIGHT_SIZE };

struct eco_capper;

/* Splits gpu_budget_w over jobs[0..n) (the view's jobs with predict swapped for the truth
 * when the policy reads it) into limits_w (which holds the settings in force on entry).
 * Returns 1 when the budget binds, 0 when it does not (the feedback integral is then reset:
 * anti-windup), or a negative errno. */
typedef int (*eco_capper_split_fn)(struct eco_capper *c, const struct eco_capper_view *v,
                                   const struct eco_cap_job *jobs, double gpu_budget_w,
                                   double *limits_w);

struct eco_capper {
    const struct eco_capper_ops *ops;
    struct eco_capper_common cm;
    struct eco_cap_params cap;    /* ECO_CAPPER_KEYS_ALLOC */
    struct eco_threshold_ctl thr; /* ECO_CAPPER_KEYS_THRESHOLD */
    double integral;              /* feedback correction of the jobs' budget, W */
    double bias;                  /* observer: smoothed measured - predicted total, W */
    int bias_n;                   /* observer: the estimate has a first sample */
    /* admit=deadline: the running jobs' summed needs and the view epoch they were summed in */
    uint64_t admit_epoch;
    double admit_extra;
    eco_capper_split_fn split; /* the policy's own part */
    int use_truth;             /* its jobs' predict is their truth (the oracle) */
    /* its split budgets limits, not draw (uniform): while it does not bind, the integral's
     * anti-windup holds it at the edge where the split lets go instead of resetting it */
    int limit_split;
    /* The allocator's memo of each job (eco_cap_job.memo) by the view's job id, for splits
     * that call it (ECO_CAPPER_KEYS_ALLOC): memo_gen[id] is the last decide that saw the id,
     * memo_live the ids that have a memo (those not in a decide's view are freed after it). */
    int use_memo;
    struct eco_cap_memo **memo;
    uint32_t *memo_gen, *memo_live;
    size_t n_memo, n_live, cap_live;
    uint32_t gen;
    /* Scratch, grown on demand and kept between decides. */
    struct eco_cap_job *cj;
    double *lim, *aux, *scratch;
    /* the steady split's subset: its jobs, their limits, their indexes in the view */
    struct eco_cap_job *sub;
    double *sub_lim;
    uint32_t *sub_idx;
    double *sub_iv; /* 2 per job: the interval of prices its answer stands for */
    size_t n_cap;
    uint64_t n_steady; /* decides answered by the steady split (for tests and the docs) */
    uint32_t steady_fail, steady_wait; /* the steady split's back-off after failures */
    size_t n_split; /* lim[0..n_split) holds the last decide's split, before exploration */
};

/* Creates an instance of ops from "key=value,..." over defaults d (the family's keys plus
 * those in `keys`), deciding with split (and the truth when use_truth). NULL with err naming
 * the key on a bad parameter. */
struct eco_capper *eco_capper__create_common(const struct eco_capper_ops *ops, const char *params,
                                             const struct eco_capper_common *d, unsigned keys,
                                             eco_capper_split_fn split, int use_truth,
                                             struct eco_error *err);
/* An ops table's destroy and decide: every policy's are these (the policy's own part is the
 * split given to eco_capper__create_common). */
void eco_capper__destroy_common(struct eco_capper *c);
int eco_capper__decide_family(struct eco_capper *c, const struct eco_capper_view *v,
                              struct eco_rng *rng, double *limits_w);
/* A split's answer for a rule without a price: 1 (binds) when some job is below its maximum. */
int eco_capper__binds(const struct eco_cap_job *jobs, size_t n, const double *limits_w);
/* The split of mpc and the oracle: eco_cap_plan (plan=1) or eco_cap_allocate over the jobs'
 * predict (capper_mpc.c). */
int eco_capper__split_alloc(struct eco_capper *c, const struct eco_capper_view *v,
                            const struct eco_cap_job *jobs, double gpu_budget_w, double *limits_w);
/* The family's decide around split: feedback on v->measured_w (when finite), the jobs'
 * budget (budget - fixed + integral), split, anti-windup, early dithering (draws from rng
 * only when dither > 0), settings clamped and put on levels. use_truth: jobs' predict is
 * their truth. */
int eco_capper__decide_common(struct eco_capper *c, const struct eco_capper_view *v,
                              struct eco_rng *rng, double *limits_w, eco_capper_split_fn split,
                              int use_truth);
/* The family's defaults (docs/policies/powercap.md). */
void eco_capper__common_default(struct eco_capper_common *d);

#endif
