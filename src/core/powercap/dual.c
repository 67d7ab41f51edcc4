/* SPDX-License-Identifier: MIT */
/* The decomposed form of the allocator (per-job local choices coordinated by a price
 * bisection, as powerd can run across nodes) and the receding-horizon planner
 * (docs/policies/powercap.md). Deadline-aware admission is the capper family's admit=deadline
 * (capper.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/powercap.h"
#include "alloc_internal.h"

/* Defaults of the price bisection: 1e-9 relative bracket (far below a grid step's share of
 * the price) within 200 rounds (a bracket halves each round: 200 rounds go from 1e30 to 1e-30). */
#define DUAL_TOL_DEFAULT 1e-9
#define DUAL_ROUNDS_DEFAULT 200
/* Rollouts of eco_cap_plan: the second re-prices period 0 with the plan's speeds; more move
 * the limits of random 20-job instances by under one grid step (tests/test_powercap_deadline.c). */
#define PLAN_ITERS_DEFAULT 2

static const struct eco_cap_params *params_or_default(const struct eco_cap_params *p,
                                                      struct eco_cap_params *def)
{
    if (p)
        return p;
    eco_cap_params_default(def);
    return def;
}

/* Index of the grid point minimising c + price x pw (ties to the lower power). */
static uint32_t local_best(const double *pw, const double *c, uint32_t g, double price)
{
    uint32_t best = 0;
    double bv = c[0] + price * pw[0];
    for (uint32_t k = 1; k < g; k++) {
        double v = c[k] + price * pw[k];
        if (v < bv || (v == bv && pw[k] < pw[best])) {
            bv = v;
            best = k;
        }
    }
    return best;
}

double eco_cap_local_choice(const struct eco_cap_job *j, const struct eco_cap_params *p,
                            double price, double *limit_w, double *power_w)
{
    struct eco_cap_params def;
    p = params_or_default(p, &def);
    if (!j || p->grid < 2 || p->grid > ECO_CAP_GRID_MAX || eco_cap__check_jobs(j, 1) ||
        isnan(price))
        return NAN;
    double pw[ECO_CAP_GRID_MAX], c[ECO_CAP_GRID_MAX];
    eco_cap__eval_grid(j, p, eco_cap__horizon_inv(p), NULL, pw, c);
    uint32_t k = isinf(price) ? 0 : local_best(pw, c, p->grid, price),
             top = eco_cap__upper_index(j, p->grid);
    k = k < top ? k : top; /* a point above the trust region is priced as its top one */
    if (limit_w)
        *limit_w = eco_cap__grid_at(j, p->grid, k);
    if (power_w)
        *power_w = pw[k];
    return c[k];
}

/* One exchange round: every job's local choice at `price`; returns the summed power. */
static double round_power(const struct eco_cap_job *jobs, size_t n, const struct eco_cap_params *p,
                          double price, double *limits_w)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        double pw = 0.0;
        eco_cap_local_choice(&jobs[i], p, price, &limits_w[i], &pw);
        total += pw;
    }
    return total;
}

double eco_cap_allocate_dual(const struct eco_cap_job *jobs, size_t n, double budget_w,
                             const struct eco_cap_params *p, double rel_tol, uint32_t max_rounds,
                             double *limits_w, uint32_t *rounds)
{
    struct eco_cap_params def;
    p = params_or_default(p, &def);
    uint32_t r = 0;
    if (rounds)
        *rounds = 0;
    if (p->grid < 2 || p->grid > ECO_CAP_GRID_MAX || isnan(budget_w) ||
        (n > 0 && (!jobs || !limits_w)) || eco_cap__check_jobs(jobs, n))
        return -EINVAL;
    if (n == 0)
        return 0.0;
    rel_tol = rel_tol > 0.0 ? rel_tol : DUAL_TOL_DEFAULT;
    max_rounds = max_rounds ? max_rounds : DUAL_ROUNDS_DEFAULT;
    r++;
    if (round_power(jobs, n, p, 0.0, limits_w) <= budget_w) {
        if (rounds)
            *rounds = r;
        return 0.0;
    }
    r++;
    if (round_power(jobs, n, p, INFINITY, limits_w) > budget_w) {
        if (rounds)
            *rounds = r;
        return INFINITY;
    }
    /* bracket [lo, hi]: lo too cheap (over budget), hi fits; grow hi from 1 by doubling */
    double lo = 0.0, hi = 1.0;
    while (r < max_rounds && round_power(jobs, n, p, hi, limits_w) > budget_w) {
        r++;
        lo = hi;
        hi *= 2.0;
        if (isinf(hi))
            break;
    }
    r++;
    while (r < max_rounds && hi - lo > rel_tol * hi) {
        double mid = 0.5 * (lo + hi);
        r++;
        if (round_power(jobs, n, p, mid, limits_w) > budget_w)
            lo = mid;
        else
            hi = mid;
    }
    round_power(jobs, n, p, hi, limits_w); /* the fitting end's choices */
    if (rounds)
        *rounds = r + 1;
    return hi;
}

/* ---- receding horizon ------------------------------------------------------------------ */

/* One rollout over H periods from the jobs' current state, with work[] (n jobs x (H + 1)
 * rows of remaining work) and the period-0 costs priced along `plan` (H - 1 speeds per job,
 * or NULL). Writes each period's limits, powers and speeds. Returns period 0's price. */
static double rollout(const struct eco_cap_job *jobs, size_t n, double budget_w,
                      const struct eco_cap_params *p, uint32_t H, const double *plan,
                      struct eco_cap_job *tmp, size_t *idx, double *lim, double *rem, double *pwr,
                      double *spd, double *scratch)
{
    double price0 = 0.0;
    for (size_t i = 0; i < n; i++)
        rem[i] = jobs[i].remaining_s > 0.0 ? jobs[i].remaining_s : 0.0;
    for (uint32_t k = 0; k < H; k++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            lim[k * n + i] = jobs[i].min_limit_w;
            pwr[k * n + i] = spd[k * n + i] = 0.0;
            if (k > 0 && rem[k * n + i] <= 0.0)
                continue; /* finished inside the horizon: its power goes to the others */
            tmp[m] = jobs[i];
            tmp[m].remaining_s = rem[k * n + i];
            if (jobs[i].slack_s >= 0.0) {
                double s = jobs[i].slack_s - k * p->period_s;
                tmp[m].slack_s = s > 0.0 ? s : 0.0;
            }
            if (plan && k < H - 1) {
                tmp[m].plan_speed = plan + i * (H - 1) + k;
                tmp[m].plan_len = H - 1 - k;
            } else {
                tmp[m].plan_speed = NULL;
                tmp[m].plan_len = 0;
            }
            idx[m++] = i;
        }
        double price = m ? eco_cap_allocate(tmp, m, budget_w, p, scratch, scratch + m) : 0.0;
        if (price < 0.0)
            return price;
        if (k == 0)
            price0 = price;
        for (size_t t = 0; t < m; t++) {
            size_t i = idx[t];
            double pw = scratch[t], sp = 0.0;
            jobs[i].predict(jobs[i].ctx, scratch[t], &pw, &sp);
            lim[k * n + i] = scratch[t];
            pwr[k * n + i] = (pw >= 0.0 && isfinite(pw) ? pw : scratch[t]) * jobs[i].gpus;
            spd[k * n + i] = sp > 0.0 && isfinite(sp) ? sp : 0.0;
        }
        for (size_t i = 0; i < n; i++) {
            double r = rem[k * n + i] - spd[k * n + i] * p->period_s;
            rem[(k + 1) * n + i] = r > 0.0 ? r : 0.0;
        }
    }
    return price0;
}

double eco_cap_plan(const struct eco_cap_job *jobs, size_t n, double budget_w,
                    const struct eco_cap_params *p, uint32_t iters, double *limits_w,
                    struct eco_cap_forecast *fc)
{
    struct eco_cap_params def;
    p = params_or_default(p, &def);
    uint32_t H = p->horizon;
    if (H <= 1 || n == 0 || !(p->period_s > 0.0))
        return eco_cap_allocate(jobs, n, budget_w, p, limits_w, NULL);
    if (!jobs || !limits_w || eco_cap__check_jobs(jobs, n))
        return -EINVAL;
    iters = iters ? iters : PLAN_ITERS_DEFAULT;
    /* The planner prices whole trajectories itself: the old cost factor of a job's last
     * periods (horizon_inv) would count the horizon twice. */
    struct eco_cap_params q = *p;
    q.horizon = 0;
    double price = -ENOMEM;
    size_t nh = (size_t)H * n;
    struct eco_cap_job *tmp = malloc(n * sizeof *tmp);
    size_t *idx = malloc(n * sizeof *idx);
    double *lim = malloc(nh * sizeof *lim), *rem = malloc((nh + n) * sizeof *rem);
    double *pwr = malloc(nh * sizeof *pwr), *spd = malloc(nh * sizeof *spd);
    double *plan = malloc(nh * sizeof *plan);
    double *scratch = malloc((n + eco_cap_scratch_len(n, &q)) * sizeof *scratch);
    if (!tmp || !idx || !lim || !rem || !pwr || !spd || !plan || !scratch)
        goto out;
    const double *use_plan = NULL;
    for (uint32_t it = 0; it < iters; it++) {
        price = rollout(jobs, n, budget_w, &q, H, use_plan, tmp, idx, lim, rem, pwr, spd, scratch);
        if (price < 0.0)
            goto out;
        /* the plan's speeds in periods 1..H-1, per job, for the next re-pricing */
        for (size_t i = 0; i < n; i++)
            for (uint32_t k = 1; k < H; k++)
                plan[i * (H - 1) + (k - 1)] =
                    rem[k * n + i] > 0.0 ? spd[k * n + i] : spd[(k - 1) * n + i];
        use_plan = plan;
    }
    for (size_t i = 0; i < n; i++)
        limits_w[i] = lim[i];
    if (fc) {
        if (fc->remaining_s)
            memcpy(fc->remaining_s, rem, nh * sizeof *rem);
        if (fc->power_w)
            memcpy(fc->power_w, pwr, nh * sizeof *pwr);
        if (fc->limit_w)
            memcpy(fc->limit_w, lim, nh * sizeof *lim);
    }
out:
    free(tmp);
    free(idx);
    free(lim);
    free(rem);
    free(pwr);
    free(spd);
    free(plan);
    free(scratch);
    return price;
}
