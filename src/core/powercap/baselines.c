/* SPDX-License-Identifier: MIT */
/* Baseline power-limit allocators to compare the price-based one with: uniform split (Flux's
 * power manager), proportional to predicted draw, and a threshold controller in the style of
 * Slurm's power/cray plugin (docs/policies/powercap.md). */
#include <errno.h>
#include <math.h>
#include "ecosched/powercap.h"

/* Bisection steps of the proportional split: the bracket shrinks 2^-60, far below a watt. */
#define PROP_ITERS 60

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int check(const struct eco_cap_job *jobs, size_t n, const double *limits_w, int need_pred)
{
    if (n > 0 && (!jobs || !limits_w))
        return -EINVAL;
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &jobs[i];
        if (j->gpus == 0 || !isfinite(j->min_limit_w) || !isfinite(j->max_limit_w) ||
            j->min_limit_w > j->max_limit_w || (need_pred && !j->predict))
            return -EINVAL;
    }
    return 0;
}

/* Sum of the limits when every GPU gets `share`, clamped to its range. */
static double uniform_total(const struct eco_cap_job *jobs, size_t n, double share)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++)
        total += clampd(share, jobs[i].min_limit_w, jobs[i].max_limit_w) * jobs[i].gpus;
    return total;
}

int eco_cap_uniform(const struct eco_cap_job *jobs, size_t n, double budget_w, double *limits_w)
{
    if (check(jobs, n, limits_w, 0) || isnan(budget_w))
        return -EINVAL;
    if (n == 0)
        return 0;
    double gpus = 0.0, lo = INFINITY, hi = 0.0;
    for (size_t i = 0; i < n; i++) {
        gpus += jobs[i].gpus;
        lo = fmin(lo, jobs[i].min_limit_w);
        hi = fmax(hi, jobs[i].max_limit_w);
    }
    double share = budget_w / gpus; /* the even share */
    if (uniform_total(jobs, n, lo) >= budget_w) {
        share = lo; /* not even the minimums fit: every GPU at its minimum */
    } else if (uniform_total(jobs, n, hi) <= budget_w) {
        share = hi; /* every GPU at its maximum */
    } else if (uniform_total(jobs, n, share) != budget_w) {
        /* Clamping binds: GPUs held at their minimum take more than the share, GPUs held at
         * their maximum less. Move the share until the limits add up to the budget (the total
         * is continuous and non-decreasing in the share; the largest share that fits). */
        double a = lo, b = hi;
        for (int it = 0; it < PROP_ITERS; it++) {
            double mid = 0.5 * (a + b);
            if (mid == a || mid == b)
                break; /* adjacent doubles: every step left would repeat this one */
            if (uniform_total(jobs, n, mid) <= budget_w)
                a = mid;
            else
                b = mid;
        }
        share = a;
    }
    for (size_t i = 0; i < n; i++)
        limits_w[i] = clampd(share, jobs[i].min_limit_w, jobs[i].max_limit_w);
    return 0;
}

static double job_power(const struct eco_cap_job *j, double limit)
{
    double pw = limit, sp = 0.0;
    j->predict(j->ctx, limit, &pw, &sp);
    if (!(pw >= 0.0) || !isfinite(pw))
        pw = limit;
    return pw * j->gpus;
}

/* Predicted total with limits clamp(alpha x draw_i); writes the limits when `out` is set. */
static double prop_total(const struct eco_cap_job *jobs, size_t n, const double *draw, double alpha,
                         double *out)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        double L = clampd(alpha * draw[i], jobs[i].min_limit_w, jobs[i].max_limit_w);
        total += job_power(&jobs[i], L);
        if (out)
            out[i] = L;
    }
    return total;
}

int eco_cap_proportional(const struct eco_cap_job *jobs, size_t n, double budget_w,
                         double *limits_w)
{
    return eco_cap_proportional_demand(jobs, n, NULL, budget_w, limits_w);
}

int eco_cap_proportional_demand(const struct eco_cap_job *jobs, size_t n, const double *demand_w,
                                double budget_w, double *limits_w)
{
    if (check(jobs, n, limits_w, 1) || isnan(budget_w))
        return -EINVAL;
    /* limits_w first holds each GPU's demand (the proportions: the given one, else the
     * predicted draw at its maximum limit), then the answer. */
    double at_max = 0.0, alpha_hi = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = job_power(&jobs[i], jobs[i].max_limit_w);
        at_max += d;
        d /= jobs[i].gpus;
        if (demand_w && isfinite(demand_w[i]) && demand_w[i] > 0.0)
            d = demand_w[i];
        limits_w[i] = d > 0.0 ? d : jobs[i].max_limit_w;
        double a = jobs[i].max_limit_w / limits_w[i];
        if (a > alpha_hi)
            alpha_hi = a; /* every job at its maximum from here on */
    }
    if (at_max <= budget_w || n == 0) {
        for (size_t i = 0; i < n; i++)
            limits_w[i] = jobs[i].max_limit_w;
        return 0;
    }
    double alpha_lo = 0.0;
    if (prop_total(jobs, n, limits_w, alpha_lo, NULL) > budget_w) { /* all min: still over */
        for (size_t i = 0; i < n; i++)
            limits_w[i] = jobs[i].min_limit_w;
        return 0;
    }
    for (int it = 0; it < PROP_ITERS; it++) {
        double mid = 0.5 * (alpha_lo + alpha_hi);
        if (mid == alpha_lo || mid == alpha_hi)
            break; /* adjacent doubles: every step left would repeat this one */
        if (prop_total(jobs, n, limits_w, mid, NULL) <= budget_w)
            alpha_lo = mid;
        else
            alpha_hi = mid;
    }
    /* alpha_lo always fits; the draws are overwritten in the same pass that reads them */
    for (size_t i = 0; i < n; i++)
        limits_w[i] = clampd(alpha_lo * limits_w[i], jobs[i].min_limit_w, jobs[i].max_limit_w);
    return 0;
}

void eco_threshold_init(struct eco_threshold_ctl *c)
{
    c->rebalance_s = 30.0;
    c->high_frac = 0.95;
    c->low_frac = 0.90;
    c->step_frac = 0.05;
    c->last_s = -INFINITY;
}

int eco_threshold_step(struct eco_threshold_ctl *c, double now_s, double measured_w,
                       double budget_w, const struct eco_cap_job *jobs, size_t n, double *limits_w)
{
    if (check(jobs, n, limits_w, 0) || !isfinite(now_s) || isnan(budget_w) || isnan(measured_w))
        return -EINVAL;
    if (now_s - c->last_s < c->rebalance_s)
        return 0;
    c->last_s = now_s;
    int dir = measured_w > c->high_frac * budget_w ? -1 : measured_w < c->low_frac * budget_w;
    if (dir == 0)
        return 0;
    int moved = 0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &jobs[i];
        double step = c->step_frac * (j->max_limit_w - j->min_limit_w);
        double L = clampd(limits_w[i] + dir * step, j->min_limit_w, j->max_limit_w);
        if (L != limits_w[i])
            moved = 1;
        limits_w[i] = L;
    }
    return moved ? dir : 0;
}

/* ---- uniform over discrete settings (clock levels) ---------------------------------------- */

/* The highest of the job's levels at or below x inside its range (the lowest one when none);
 * x itself, clamped, without levels. */
static double level_down(const struct eco_cap_job *j, double x)
{
    x = clampd(x, j->min_limit_w, j->max_limit_w);
    if (!j->levels || !j->n_levels)
        return x;
    const double *l = j->levels;
    uint32_t lo = 0, hi = j->n_levels;
    double xt = x + 1e-9 * fabs(x); /* min + 1.0 x (max - min) may round below max */
    while (lo < hi) {               /* first level above x */
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid] <= xt)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && l[lo - 1] >= j->min_limit_w)
        return l[lo - 1];
    while (lo < j->n_levels && l[lo] < j->min_limit_w)
        lo++; /* nothing at or below x in the range: its lowest level */
    return lo < j->n_levels && l[lo] <= j->max_limit_w ? l[lo] : x;
}

/* Predicted total power with every job at the same fraction t of its range (rounded down). */
static double frac_total(const struct eco_cap_job *jobs, size_t n, double t)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &jobs[i];
        double s = level_down(j, j->min_limit_w + t * (j->max_limit_w - j->min_limit_w));
        total += job_power(j, s);
    }
    return total;
}

int eco_cap_uniform_levels(const struct eco_cap_job *jobs, size_t n, double budget_w,
                           double *limits_w)
{
    if (check(jobs, n, limits_w, 1) || isnan(budget_w))
        return -EINVAL;
    double t = 1.0;
    if (n > 0 && frac_total(jobs, n, 1.0) > budget_w) {
        double a = 0.0, b = 1.0;
        for (int it = 0; it < PROP_ITERS; it++) {
            double mid = 0.5 * (a + b);
            if (frac_total(jobs, n, mid) <= budget_w)
                a = mid;
            else
                b = mid;
        }
        t = a;
    }
    for (size_t i = 0; i < n; i++)
        limits_w[i] = level_down(&jobs[i], jobs[i].min_limit_w +
                                               t * (jobs[i].max_limit_w - jobs[i].min_limit_w));
    return 0;
}
