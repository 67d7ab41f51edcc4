/* SPDX-License-Identifier: MIT */
/* Cooperative GPU power capping: online models of power and speed versus power limit
 * (recursive least squares) and power-limit allocators that keep a cluster under a power
 * budget (docs/models/rls.md, docs/policies/powercap.md). Pure: no clocks, no I/O. */
#ifndef ECOSCHED_POWERCAP_H
#define ECOSCHED_POWERCAP_H

#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"

/* ---- recursive least squares ------------------------------------------------------------ */

#define ECO_RLS_DIM 3 /* quadratic in the normalised limit: theta0 + theta1 x + theta2 x^2 */

/* Defaults of the per-job models (docs/models/rls.md gives the reasoning). */
#define ECO_RLS_LAMBDA_DEFAULT 0.98 /* forgetting factor: memory of about 50 samples */
#define ECO_RLS_P0_DEFAULT 100.0    /* initial covariance scale, in the models' units */

struct eco_rls {
    double theta[ECO_RLS_DIM];
    double P[ECO_RLS_DIM][ECO_RLS_DIM]; /* kept symmetric, positive definite, P <= p0 x I */
    double lambda;                      /* forgetting factor, (0, 1] */
    double p0;  /* initial covariance scale: the eigenvalue cap and resets use it */
    uint32_t n; /* samples seen */
};

/* Starts with no data: theta = 0, P = p0 x I. lambda outside (0, 1] is taken as 1, p0 that
 * is not positive and finite as ECO_RLS_P0_DEFAULT. The caller may set theta afterwards to
 * start from a prior mean (eco_job_model_init does). */
void eco_rls_init(struct eco_rls *r, double lambda, double p0);
/* One sample y observed at normalised limit x in [0, 1]. Non-finite x or y are ignored. P is
 * updated on its upper triangle and mirrored (exactly symmetric); eigenvalues above p0
 * (covariance wind-up when the input is not exciting) are capped at p0, and if P stops being
 * positive definite (or theta stops being finite) it is reset to p0 x I keeping theta. */
void eco_rls_update(struct eco_rls *r, double x, double y);
double eco_rls_predict(const struct eco_rls *r, double x);

/* Per job: power per GPU (W) and speed (reference seconds per second) versus the limit. The
 * power model fits power / max_limit_w (dimensionless), the speed model the speed itself. */
struct eco_job_model {
    struct eco_rls power, speed;
    double min_limit_w, max_limit_w;
    double x_seen_lo, x_seen_hi; /* range of normalised limits sampled so far (+inf, -inf
                                  * before the first sample) */
    /* The power model fits power / power_scale_w: max_limit_w for a power limit, the GPU's
     * maximum power for a clock (min/max_limit_w then hold clocks in MHz). */
    double power_scale_w;
    double prior_static; /* prior power at the range's bottom, share of power_scale_w */
};

/* `lambda` forgetting factor (ECO_RLS_LAMBDA_DEFAULT), limits of the job's GPU type. Both
 * estimators start from the prior's coefficients with P = ECO_RLS_P0_DEFAULT x I. */
void eco_job_model_init(struct eco_job_model *m, double min_limit_w, double max_limit_w,
                        double lambda);
/* The same for the SM-clock knob (docs/models/clock.md): the setting is a clock in
 * [min_mhz, max_mhz] (stored in min_limit_w and max_limit_w; every other function takes the
 * clock where it says limit_w), power is normalised by max_power_w (the GPU's maximum limit),
 * and the prior's power is linear in the clock from half of max_power_w at min_mhz to
 * max_power_w at max_mhz. */
void eco_job_model_init_clock(struct eco_job_model *m, double min_mhz, double max_mhz,
                              double max_power_w, double lambda);
/* Clock knob: the lowest clock of the job's range at which its predicted power per GPU
 * (eco_job_model_predict: the prior until ready, then the learned curve) reaches min_power_w,
 * the minimum power limit of its GPUs; the range's bottom if it draws that already there, its
 * top if it never does (as under the limit knob, where such a job is never capped). Below it
 * a clock saves less power than the hosts and held GPUs cost (docs/models/clock.md). With
 * levels (strictly increasing, n_levels > 0) the result is the lowest level at or above it
 * inside the range, else the range's top. Borrows m and levels for the call only. */
double eco_job_model_clock_floor(const struct eco_job_model *m, double min_power_w,
                                 const double *levels, uint32_t n_levels);
/* A measurement: at limit_w the job drew power_w per GPU and progressed at speed. The limit is
 * clamped to [min, max]; a sample with a non-finite value is ignored. */
void eco_job_model_observe(struct eco_job_model *m, double limit_w, double power_w, double speed);
/* 1 once the model has seen at least 3 samples whose normalised limits span at least 0.2 of
 * the range (max seen - min seen >= 0.2), else 0; until then eco_job_model_predict returns a
 * prior: power per GPU = limit, speed = (limit / max)^(1/3). */
int eco_job_model_ready(const struct eco_job_model *m);
/* Predicted power per GPU and speed at limit_w (clamped to [min, max]): the prior until
 * ready, then the fitted quadratics, power clamped to [0, 1.2 x max_limit_w] and speed to
 * [1e-3, 10]. Either output may be NULL. */
void eco_job_model_predict(const struct eco_job_model *m, double limit_w, double *power_w,
                           double *speed);
/* The same at the g grid limits eco_cap_grid_limit(min, max, g, k), k = 0..g-1, into
 * power_w[k] and speed[k] (bit-identical to eco_job_model_predict there, computed with one
 * division per call instead of one per point; the allocator uses it for jobs whose predict is
 * eco_cap_predict_model). g >= 1. */
void eco_job_model_predict_grid(const struct eco_job_model *m, uint32_t g, double *power_w,
                                double *speed);

/* The same at n given limits limit_w[k] into power_w[k] and speed[k] (bit-identical to
 * eco_job_model_predict at each; the readiness and the range's inverse computed once). */
void eco_job_model_predict_points(const struct eco_job_model *m, const double *limit_w, uint32_t n,
                                  double *power_w, double *speed);

/* ---- allocation --------------------------------------------------------------------------- */

/* What the allocator knows of one running job. Fill it with a designated initializer (or zero
 * it first): fields left out must be 0 / NULL (levels NULL: a continuous knob). */
struct eco_cap_job {
    uint32_t gpus;
    double min_limit_w, max_limit_w;
    double remaining_s; /* work left, reference seconds */
    double weight;      /* weight of its remaining time in the cost (default 1) */
    double slack_s;     /* time to its deadline (deadline - now), or a negative value for none */
    /* Power per GPU and speed at a limit: the job's model (learned, or the truth for the
     * oracle). Called only with limits in [min_limit_w, max_limit_w]. */
    void (*predict)(const void *ctx, double limit_w, double *power_w, double *speed);
    const void *ctx;
    /* Discrete settings (SM clock levels, docs/models/clock.md), strictly increasing, or NULL
     * for a continuous knob. When set, every grid point is moved to the nearest level (ties to
     * the lower one) inside [min_limit_w, max_limit_w], and the limits returned are levels. */
    const double *levels;
    uint32_t n_levels;
    /* Deadline-aware cost (used when eco_cap_params.miss_cost > 0; docs/policies/powercap.md,
     * "Deadline-aware cost"): the reference time a miss is charged in, e.g. the job's
     * duration (0: remaining_s). */
    double miss_ref_s;
    /* Receding horizon (eco_cap_plan fills these for its inner calls): the job's predicted
     * speed in the control periods after the current one, plan_len of them; past the last
     * one the job is taken to keep that speed. NULL: the speed of the limit being priced,
     * constant until the job finishes. */
    const double *plan_speed;
    uint32_t plan_len;
    /* Trust region: the highest setting this period may take (the setting in force plus the
     * family's slew, docs/policies/powercap.md, "Slew"), so that no limit moves far into a part
     * of its curve the model has not sampled lately; 0 or above max_limit_w: no bound. Grid
     * points above it are priced as the highest one at or below it. */
    double upper_w;
    /* The allocator's memory of this job between calls (eco_cap_memo_new), or NULL: its
     * learned model's grid row and hull are kept and used again while the model's
     * coefficients stay within eco_cap_params.reuse_tol of those they were computed from
     * (docs/policies/powercap.md, "Work in proportion to what changed"). Only for jobs whose
     * predict is eco_cap_predict_model, or any predict when fixed_curve is set; the caller
     * keeps one per job and frees it. */
    struct eco_cap_memo *memo;
    /* 1: predict gives the same values for this ctx, range, levels and curve_key (the
     * measured curves of the oracle), so its row is kept without a check of coefficients; the
     * caller changes curve_key whenever the curve behind ctx changes. */
    int fixed_curve;
    uint64_t curve_key;
};

/* A job's memory in the allocator (eco_cap_job.memo) for grids of up to `grid` points; NULL
 * when out of memory. */
struct eco_cap_memo *eco_cap_memo_new(uint32_t grid);
void eco_cap_memo_free(struct eco_cap_memo *m);

/* `predict` callbacks: ctx is a const struct eco_job_model * (learned), or a
 * const struct eco_cap_truth * (the measured curves of eco_power_eval, for the oracle). The
 * context must outlive the allocation call. */
void eco_cap_predict_model(const void *ctx, double limit_w, double *power_w, double *speed);
struct eco_cap_truth {
    int type;        /* catalog index */
    size_t workload; /* workload index (power.h) */
};
void eco_cap_predict_truth(const void *ctx, double limit_w, double *power_w, double *speed);

#define ECO_CAP_GRID_MAX 1024 /* 1024 limits over a range is far below NVML's 1 W step */

struct eco_cap_params {
    double deadline_penalty; /* cost per second of predicted lateness, relative to weight */
    uint32_t grid;           /* limits tried per job between min and max (2..ECO_CAP_GRID_MAX) */
    uint32_t horizon;        /* MPC horizon H in control periods (0: no horizon scaling) */
    double period_s;         /* control period */
    /* Per-miss cost (0: the linear lateness cost of deadline_penalty, the old behaviour): a
     * job's cost jumps by miss_cost x weight x miss_ref_s when its predicted finish passes its
     * deadline, smoothed by a normal error of relative size miss_sigma on the predicted finish
     * time (docs/policies/powercap.md, "Deadline-aware cost"). */
    double miss_cost;
    double miss_sigma; /* relative uncertainty of a predicted finish (0: 0.05) */
    /* 1: a job predicted to miss even at its maximum limit (a lost cause) is priced without
     * its deadline term, so it holds no power for a deadline it cannot meet. */
    int lost_release;
    /* A job with a memo keeps its cached grid row while each of its two models' coefficients
     * moved by at most this much in sum of absolute values since the row was computed (in the
     * models' normalised units: a bound on the change of the predicted power, as a share of
     * its scale, and of the speed, anywhere in the range); 0: only when they are equal, so
     * that every result is the one without memos. */
    double reuse_tol;
};

/* Grid limit k of g between min and max: min + k x ((max - min) / (g - 1)), the last one (k =
 * g - 1) exactly max; g = 1 gives max. */
double eco_cap_grid_limit(double min_limit_w, double max_limit_w, uint32_t g, uint32_t k);

/* Default parameters (docs/policies/powercap.md): deadline_penalty 10, grid 26, horizon 10,
 * period_s 1; miss_cost 0, miss_sigma 0, lost_release 0 (the deadline-aware parts off). */
void eco_cap_params_default(struct eco_cap_params *p);

/* Number of doubles of scratch eco_cap_allocate needs for n jobs: 4 x n x grid + 5 x n
 * (p NULL: the default grid). */
size_t eco_cap_scratch_len(size_t n, const struct eco_cap_params *p);

/* Cost the allocator gives job j at limit_w (clamped to its range), from its predict:
 * weight x T + deadline_penalty x weight x max(0, T - slack_s) (when slack_s >= 0), with
 * T = remaining_s / speed(limit_w), times min(1, T / (horizon x period_s)) when the horizon is
 * not 0 (docs/policies/powercap.md). p NULL means the defaults. */
double eco_cap_job_cost(const struct eco_cap_job *j, const struct eco_cap_params *p,
                        double limit_w);

/* Splits `budget_w` (GPU power available to these jobs) into per-job limits written to
 * limits_w[i] (per GPU, one of the job's grid limits). Price-based: each job picks its limit to
 * minimise cost + lambda x power; the smallest lambda whose predicted total meets the budget
 * is found exactly from the lower convex hulls of the jobs' (power, cost) grid points, then
 * leftover budget is spent greedily; instances of at most 8 jobs are finished by branch and
 * bound, exactly (docs/policies/powercap.md). When even the lowest
 * predicted powers exceed the budget every job gets its minimum limit. Scratch memory is the
 * caller's: at least eco_cap_scratch_len(n, p) doubles, or NULL to let the function allocate
 * and free it. p NULL means the defaults. Returns the price found (>= 0; +inf when every job
 * gets its minimum because the budget is too small), or a negative errno (-EINVAL for a job
 * without predict, gpus 0 or a limit range that is not finite and ordered, or grid < 2;
 * -ENOMEM) with limits_w untouched. Deterministic: the same input gives the same limits. */
double eco_cap_allocate(const struct eco_cap_job *jobs, size_t n, double budget_w,
                        const struct eco_cap_params *p, double *limits_w, double *scratch);

/* ---- dual decomposition and receding horizon (docs/policies/powercap.md) ------------- */

/* The local subproblem of dual decomposition: given the price (cost per watt), the job picks
 * the grid limit minimising cost(limit) + price x power(limit) (power of all its GPUs), ties
 * to the lower power, using only its own data, so it can run on its own node. Writes the
 * limit (per GPU) and, if power_w is not NULL, its predicted power (all GPUs). Returns the
 * chosen limit's cost, or NaN for a bad job (as eco_cap_allocate's -EINVAL). p NULL: the
 * defaults. */
double eco_cap_local_choice(const struct eco_cap_job *j, const struct eco_cap_params *p,
                            double price, double *limit_w, double *power_w);

/* The coordinator of the decomposed form: a bisection on the price, each round asking every
 * job for its local choice and summing the powers (what powerd exchanges with its nodes),
 * until the smallest price whose summed power fits budget_w is bracketed within rel_tol
 * (relative; 0: 1e-9) or max_rounds (0: 200) rounds pass. Limits are the local choices at the
 * upper end of the bracket (they fit); no greedy fill, so the central eco_cap_allocate spends
 * the leftover better and is never worse. Returns the price, +inf with every job at its
 * minimum when even that does not fit, 0 when all unconstrained choices fit, or -EINVAL.
 * *rounds (may be NULL) gets the number of exchange rounds. */
double eco_cap_allocate_dual(const struct eco_cap_job *jobs, size_t n, double budget_w,
                             const struct eco_cap_params *p, double rel_tol, uint32_t max_rounds,
                             double *limits_w, uint32_t *rounds);

/* A receding-horizon forecast over p->horizon periods: remaining_s[k x n + i] is job i's
 * predicted remaining work at the start of period k (0 once finished), power_w[k x n + i] its
 * predicted power (all GPUs, 0 once finished) and limit_w[k x n + i] its limit in period k. */
struct eco_cap_forecast {
    double *remaining_s, *power_w, *limit_w; /* caller-owned, horizon x n each */
};

/* Receding-horizon MPC: rolls the jobs forward over p->horizon periods of p->period_s, each
 * period allocating the budget among the jobs still running (finished jobs free their power)
 * with their predicted remaining work and slack; then re-prices period 0 with each job's
 * finish time predicted along the plan (its planned speeds in the later periods, so a job
 * that will get the power freed by a finisher may run slower now), and repeats the rollout
 * `iters` times (0: 2). The limits applied (limits_w) are period 0's; fc (may be NULL) gets
 * the last rollout. horizon 0 or 1 is one eco_cap_allocate call. Returns as eco_cap_allocate
 * (period 0's price). */
double eco_cap_plan(const struct eco_cap_job *jobs, size_t n, double budget_w,
                    const struct eco_cap_params *p, uint32_t iters, double *limits_w,
                    struct eco_cap_forecast *fc);

/* ---- baselines (docs/policies/powercap.md) ------------------------------------------------ */

/* Uniform split (an even split as in Flux's power manager): every GPU gets budget_w / (total
 * GPUs), clamped to its job's [min, max]; when clamping binds, the share is moved (bisection)
 * so that the limits still add up to the budget: GPUs held at their minimum leave less for the
 * others, GPUs held at their maximum leave more. All at the minimum when even that exceeds the
 * budget, all at the maximum when that fits. 0 or -EINVAL (n > 0 with NULL arrays, a job with
 * gpus 0 or a bad range). */
int eco_cap_uniform(const struct eco_cap_job *jobs, size_t n, double budget_w, double *limits_w);

/* Uniform split of a discrete knob (clock levels, docs/models/clock.md): every job at the same
 * fraction t of its range [min, max], rounded down to one of its levels (its range's bottom
 * level when none is below), with t the largest (bisection) whose predicted total power
 * sum(gpus_i x power_i) fits budget_w; t = 0 when even that does not fit, 1 when the top fits.
 * Jobs without levels get the fraction itself. Uses predict. 0 or -EINVAL. */
int eco_cap_uniform_levels(const struct eco_cap_job *jobs, size_t n, double budget_w,
                           double *limits_w);

/* Proportional split: limit_i = clamp(alpha x d_i, min_i, max_i) with d_i the predicted draw
 * per GPU at the maximum limit and alpha the largest scale (bisection) whose predicted total
 * power sum(gpus_i x power_i(limit_i)) stays within budget_w; all max when that fits, all min
 * when even that does not. Uses predict. 0 or -EINVAL. */
int eco_cap_proportional(const struct eco_cap_job *jobs, size_t n, double budget_w,
                         double *limits_w);
/* The same with the proportions given: demand_w[i] is job i's demand per GPU (W; the capper
 * family passes the measured draw scaled to the maximum limit, docs/policies/powercap.md);
 * an entry that is not finite and positive, or demand_w NULL, falls back to the predicted
 * draw at the maximum. Whether all-max fits is still judged on the predicted draws. */
int eco_cap_proportional_demand(const struct eco_cap_job *jobs, size_t n, const double *demand_w,
                                double budget_w, double *limits_w);

/* Threshold controller (Slurm power/cray-style thresholds, cluster-wide): every rebalance_s,
 * if the measured power is above high_frac x budget every limit is lowered by step_frac of
 * its job's range, if below low_frac x budget raised by it, clamped to [min, max]. */
struct eco_threshold_ctl {
    double rebalance_s; /* 30 s: Slurm power/cray's balance_interval default */
    double high_frac;   /* 0.95: Slurm power/cray's upper_threshold default (95 %) */
    double low_frac;    /* 0.90: Slurm power/cray's lower_threshold default (90 %) */
    double step_frac;   /* 0.05 of each GPU's [min, max] range per step */
    double last_s;      /* time of the last check, -inf before the first */
};
/* The defaults above. */
void eco_threshold_init(struct eco_threshold_ctl *c);
/* Called at any time now_s with the measured power (the same scope as budget_w); acts only
 * when now_s - last_s >= rebalance_s (the first call always acts), and then compares and moves
 * every job's limit. limits_w holds the current limits (per GPU) and is updated in place; only
 * gpus, min_limit_w and max_limit_w of jobs are read. Returns -1 (lowered), +1 (raised), 0 (not
 * due, within the band, or every limit already at its bound: nothing moved), or -EINVAL. */
int eco_threshold_step(struct eco_threshold_ctl *c, double now_s, double measured_w,
                       double budget_w, const struct eco_cap_job *jobs, size_t n, double *limits_w);

/* ---- capper family (docs/policies/powercap.md, "Capper family") -------------------------- */

/* Power capping policies are a family like the queue policies: a const ops table per policy,
 * found by name in a registry (eco_capper_find), each instance created with a parameter string.
 * The simulator (src/sim/powerctl.c), `ecosched powerd` (a cluster GPU budget over Slurm jobs)
 * and ecoschedd (a node budget) build the same view each control period and call the same
 * decide; feedback on measured power, limit dithering and power admission live inside the
 * family, so what the simulator evaluates is what the daemons run. */

struct eco_rng;

/* One running job as a capper sees it. `cap` is what the allocators read: gpus, the knob's
 * range, fresh remaining work (reference seconds, as of now_s), weight, slack to the deadline
 * (deadline - now_s, negative for none), the learned model as predict/ctx, clock levels. */
struct eco_capper_job {
    struct eco_cap_job cap;
    uint32_t id;       /* the caller's job index: the family keeps each job's allocator memo by it
                        * (an id that names another job later only costs a fresh row) */
    double limit_w;    /* setting in force now (a limit, W, or a clock, MHz) */
    double measured_w; /* measured draw per GPU over the last period; NaN when unknown */
    double measured_speed; /* measured progress (reference s per s); NaN when unknown */
    double deadline_s;     /* absolute deadline, negative for none */
    uint32_t samples;      /* measurements its model has seen */
    /* 1: since the family's last decide its model has taken no sample and its setting has not
     * changed (the simulator's held jobs); the family may keep its setting when the others'
     * split leaves it standing (docs/policies/powercap.md, "Steady jobs"). 0 is always safe. */
    int steady;
    /* The truth (the measured curves) for the oracle only; NULL elsewhere. A capper other
     * than the oracle never reads it. */
    void (*truth)(const void *ctx, double limit_w, double *power_w, double *speed);
    const void *truth_ctx;
    uint64_t truth_key; /* changes whenever the curve behind truth_ctx changes (a restart) */
};

/* What one decide sees, borrowed for the call. Powers are in the budget's scope (the whole
 * cluster for the simulator and powerd, one server for ecoschedd). */
struct eco_capper_view {
    double now_s;
    double period_s;   /* control period */
    double budget_w;   /* budget in force */
    double fixed_w;    /* power the capper does not control (hosts, idle GPUs, silent nodes) */
    double measured_w; /* measured total power of the scope over the last period; NaN unknown */
    int budget_step;   /* the budget changed since the last decide: -1 down, +1 up, 0 no */
    int clock;         /* the settings are SM clocks (MHz, docs/models/clock.md), not limits */
    const struct eco_capper_job *jobs;
    size_t n;
    /* The grid now (measured, 0 without a signal): electricity price per MWh and carbon
     * intensity, g CO2eq per kWh, for the allocator's grid floor (grid_floor=1). */
    double grid_price_per_mwh, grid_carbon_g_per_kwh;
    /* Nonzero: every view with this epoch has the same jobs at the same time (a scheduling
     * pass's admissions), so admit=deadline sums their needs once per epoch, not once per
     * candidate; 0: no such promise. */
    uint64_t epoch;
};

/* A queued job asking to start on GPUs whose minimum draw is min_w in total (each GPU at its
 * knob's lowest setting); the other fields as in struct eco_capper_job, for deadline-aware
 * admission. */
struct eco_capper_candidate {
    struct eco_cap_job cap;
    double min_w;
    double deadline_s;
};

struct eco_capper;

struct eco_capper_ops {
    const char *name;
    const char *summary;
    /* The parameter keys it accepts, for --help and the docs ("gain=0.3,..." style). */
    const char *params_help;
    /* 1: a new job starts at its knob's maximum (threshold: it only moves limits in steps);
     * 0: at its minimum, so that the start never raises the total above what admission
     * counted (the next decide then gives it its share). */
    int start_at_max;
    /* 1: it splits power limits only and cannot drive the clock knob (--power-knob clock
     * refuses it); 0: it works on either knob. */
    int limits_only;
    /* 1: its split reads every job's own measured power (measured_w of the view's jobs), so
     * the simulator measures each job every period for it; 0: it reads a job's samples only
     * during its early ones (the family's feedback) and the measured total. */
    int reads_job_samples;
    /* params: "key=value,..." (NULL or "" for the defaults; docs list the keys per policy).
     * NULL on bad parameters (err names the key) or ENOMEM. */
    struct eco_capper *(*create)(const char *params, struct eco_error *err);
    void (*destroy)(struct eco_capper *c);
    /* Next period's setting for each of view->n jobs into limits_w[i], each within its job's
     * [min, max] (and on one of its levels when it has levels). Pure: no clock, no I/O; the
     * instance's own state (feedback integral, threshold timer) may change; randomness only
     * from rng (dithering). 0 or a negative errno (-EINVAL, -ENOMEM). */
    int (*decide)(struct eco_capper *c, const struct eco_capper_view *v, struct eco_rng *rng,
                  double *limits_w);
    /* May `cand` start now next to the running jobs of v? 1 yes, 0 not now, negative errno.
     * committed_min_w: the minimum draw of the running jobs and of those already admitted in
     * this pass (the caller keeps it as a running sum). NULL: the family's default
     * (eco_capper_admit_default). */
    int (*admit)(struct eco_capper *c, const struct eco_capper_view *v, double committed_min_w,
                 const struct eco_capper_candidate *cand);
};

/* By name (case-insensitive), NULL when unknown. */
const struct eco_capper_ops *eco_capper_find(const char *name);
/* "family[:PARAMS]" (e.g. "mpc", "proportional:gain=0,dither=0"): finds the family and creates
 * an instance with PARAMS. NULL with err naming the unknown family or the bad key/value, or on
 * ENOMEM (err says so). The caller frees it with eco_capper_destroy. */
struct eco_capper *eco_capper_create(const char *spec, struct eco_error *err);
/* ops->destroy; accepts NULL. */
void eco_capper_destroy(struct eco_capper *c);
/* ops->decide. */
int eco_capper_decide(struct eco_capper *c, const struct eco_capper_view *v, struct eco_rng *rng,
                      double *limits_w);
/* The setting a job starts at on a knob range [min, max] (see start_at_max). */
double eco_capper_start_setting(const struct eco_capper *c, double min_setting, double max_setting);
/* The feedback correction in force (W added to the jobs' budget; tests and status). */
double eco_capper_feedback_w(const struct eco_capper *c);
/* 1 when the integral (observer=0) stands at its upper bound (bound x budget_w): a measured
 * total under the budget can raise the limits no further. 0 for the observer, gain 0 or NULL. */
int eco_capper_feedback_at_bound(const struct eco_capper *c, double budget_w);
/* 1 when c's feedback is the integral (observer=0, gain > 0), which takes periods to absorb a
 * change; 0 for the disturbance observer, gain 0 or NULL. */
int eco_capper_has_integral(const struct eco_capper *c);
/* NULL-terminated list of every capper. */
const struct eco_capper_ops *const *eco_capper_all(void);
/* The ops table an instance was created from. */
const struct eco_capper_ops *eco_capper_ops_of(const struct eco_capper *c);
/* 1 when c's admission reads the view's jobs (admit=deadline, or an ops->admit of its own),
 * 0 when only budget_w, fixed_w and the sums matter: a caller may then pass a view with n = 0
 * and save building it for every queued candidate. */
int eco_capper_admit_reads_jobs(const struct eco_capper *c);
/* 1 when c's admission has already summed what it reads of the jobs of a view with this
 * (nonzero) epoch: a caller may then pass that epoch with n = 0. */
int eco_capper_admit_cached(const struct eco_capper *c, uint64_t epoch);
/* ops->reads_job_samples (0 for NULL). */
int eco_capper_reads_job_samples(const struct eco_capper *c);
/* The family's early samples (its parameter early): a job with fewer is dithered. */
uint32_t eco_capper_early(const struct eco_capper *c);
/* What decide makes of a split's `limit` for job j with `samples` samples so far: dithered
 * downwards while samples < early (one rng draw whenever the family dithers), kept in j's range
 * and snapped to its levels. For a caller that takes a job's early samples without a decide:
 * the simulator while no split can bind (docs/policies/powercap.md, "Slack"). */
/* The limit the capper's split gives view job j while the budget cannot bind, when that limit
 * is j's alone (before exploration): 1 and *limit_w for mpc and the oracle without the plan or
 * the grid floor (the job's own choice at price 0, eco_cap_local_choice, on its model, or its
 * truth for the oracle); 0 when the split couples the jobs even then (uniform, proportional,
 * threshold) or the choice moves with time (plan, grid floor), and the caller decides. For the
 * simulator's start of a job while the budget has slack (docs/policies/powercap.md, "Slack"). */
int eco_capper_slack_choice(const struct eco_capper *c, const struct eco_capper_view *v,
                            const struct eco_capper_job *j, double *limit_w);
/* The last decide's split for its view's job i, before exploration (kept in the trust region;
 * not yet in the range or on a level): NaN when that decide did not split (another decide, or
 * i out of range). */
double eco_capper_split_of(const struct eco_capper *c, size_t i);
/* Decides so far answered by the steady split (docs/policies/powercap.md, "Steady jobs"):
 * the jobs marked steady kept, the others split over what they leave. */
uint64_t eco_capper_steady_decides(const struct eco_capper *c);
double eco_capper_explore(const struct eco_capper *c, const struct eco_cap_job *j, uint32_t samples,
                          double limit, struct eco_rng *rng);
/* Calls ops->admit, or eco_capper_admit_default when it is NULL. */
int eco_capper_admit(struct eco_capper *c, const struct eco_capper_view *v, double committed_min_w,
                     const struct eco_capper_candidate *cand);
/* The family's admission, by the instance's `admit` parameter. admit=min (the default):
 * 1 when fixed_w + committed_min_w + cand->min_w <= budget_w. admit=deadline: that, and also
 * the power the running jobs with a reachable deadline need to meet it (their models' lowest
 * grid setting finishing in time, above their minimum) must still fit next to the candidate's
 * minimum, unless the candidate's own deadline is near (slack <= near x its remaining time at
 * full speed), which is never refused when its minimum fits (docs/policies/powercap.md). c may
 * be NULL (admit=min). */
int eco_capper_admit_default(struct eco_capper *c, const struct eco_capper_view *v,
                             double committed_min_w, const struct eco_capper_candidate *cand);

/* ---- metrics (docs/policies/powercap.md, "Metrics") ----------------------------------------- */

/* Capping metrics, accumulated one control period at a time by the simulator, `ecosched powerd`
 * and ecoschedd with the same definitions. A period is [t, t + dt_s) with its power (mean
 * measured or true power over the period, in the budget's scope), the budget in force, the
 * demand at full power (every running GPU at its maximum setting plus everything the capper
 * does not control) and a settling flag (the first period after a budget change or a job's
 * admission). Means are weighted by dt_s (the plain mean when every period has the same
 * length). Plain struct: zero it with eco_cap_metrics_init, no allocation. */
struct eco_cap_metrics {
    uint64_t periods;      /* periods added */
    uint64_t binding;      /* of those, periods whose demand at full power exceeds the budget */
    uint64_t settling;     /* periods flagged settling */
    uint64_t above;        /* periods whose power exceeds the budget */
    double t_s, binding_s; /* summed dt_s: all periods, binding periods */
    double err_s, binding_err_s; /* sums of dt_s x |power - budget| / budget */
    double max_raw;              /* largest (power - budget) / budget over every period, >= 0 */
    double max_settled;          /* the same over the periods not flagged settling, >= 0 */
    double above_s;              /* summed dt_s of the periods above the budget */
    double above_j;              /* sum of dt_s x max(0, power - budget) */
};

/* What the sums mean (eco_cap_metrics_report). Each figure is 0 when its set of periods is
 * empty. */
struct eco_cap_metrics_report {
    uint64_t periods, binding_periods, settling_periods, above_periods;
    double mae_binding_pct;   /* 100 x binding_err_s / binding_s */
    double mae_all_pct;       /* 100 x err_s / t_s */
    double overshoot_pct;     /* 100 x max_settled: largest excess after settling */
    double overshoot_raw_pct; /* 100 x max_raw: largest excess, settling periods included */
    double above_s;           /* time above the budget */
    double above_kwh;         /* energy above the budget, above_j / 3.6e6 */
    double above_share;       /* above / periods */
};

void eco_cap_metrics_init(struct eco_cap_metrics *m);
/* Adds one period. 0, or -EINVAL with m untouched when dt_s is not positive and finite, budget_w
 * is not positive and finite, or power_w or demand_w is not finite. */
int eco_cap_metrics_add(struct eco_cap_metrics *m, double dt_s, double power_w, double budget_w,
                        double demand_w, int settling);
/* The figures of m into *r (caller-owned). */
void eco_cap_metrics_report(const struct eco_cap_metrics *m, struct eco_cap_metrics_report *r);

#endif
