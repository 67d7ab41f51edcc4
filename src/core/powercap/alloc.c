/* SPDX-License-Identifier: MIT */
/* Price-based (Lagrangian dual decomposition) power-limit allocator of CD-GPC: per-job local
 * problems on a grid of limits, the price found exactly from the lower convex hulls of the
 * jobs' (power, cost) points, leftover budget spent greedily (docs/policies/powercap.md). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/power.h"
#include "ecosched/powercap.h"
#include "alloc_internal.h"

/* Relative margin kept below the budget so that re-adding the chosen powers in another order
 * (rounding of sums over up to n x grid terms, ~1e-11 relative at 10^5 jobs) never exceeds
 * it: 1 mW per MW. */
#define BUDGET_MARGIN 1e-9
/* Floor on a predicted speed inside the cost, so that a job predicted to stall costs a lot
 * but stays finite. */
#define SPEED_FLOOR 1e-9
/* Small instances are finished exactly: up to BNB_MAX_JOBS jobs (and grids up to BNB_MAX_GRID
 * points, for the stack arrays) a branch and bound over the grid points, bounded by the convex
 * relaxation, starting from the greedy solution and stopping after BNB_MAX_NODES nodes (a few
 * milliseconds at worst; random 1-4 job instances need tens to hundreds). With few jobs, one
 * job's grid step is a large share of the total cost, and the price solution plus the greedy
 * fill can miss the optimum by several per cent (deadline kinks make costs non-convex). */
#define BNB_MAX_JOBS 8
#define BNB_MAX_GRID 64
#define BNB_MAX_NODES 20000
/* Above that and up to EXCHANGE_MAX_JOBS, a pairwise exchange pass follows the greedy fill:
 * O(n^2 grid^2) per round; above it one job's grid step is a small fraction of the total. */
#define EXCHANGE_MAX_JOBS 16
/* Buckets per histogram pass of the price search: 10 bits of the slopes' bit patterns per pass;
 * two arrays of this size live on the stack (16 KiB). */
#define PRICE_BUCKETS 1024

void eco_cap_params_default(struct eco_cap_params *p)
{
    /* A second of predicted lateness costs 10 seconds of completion time: a job predicted to
     * miss its deadline values speed 11x as much as an on-time one, enough to take power from
     * any job whose speed gain per watt is within an order of magnitude of its own, yet finite
     * so that a job that cannot make its deadline at any limit does not take everything. */
    p->deadline_penalty = 10.0;
    /* 26 limits: steps of 4 % of the range (6 W on a V100, 8 W on an A40, 20 W on an
     * H100-SXM), finer than the 25 W steps the curves were measured in; time is linear in it. */
    p->grid = 26;
    /* 10 periods of 1 s: a job that finishes within the next 10 s has its cost scaled by the
     * fraction of the horizon it still runs (cost_at); 1 s matches NVML's power averaging
     * window and the time a new limit takes to settle (hundreds of ms). */
    p->horizon = 10;
    p->period_s = 1.0;
    /* The deadline-aware parts are off by default: the linear cost above (issue 16's
     * deadline-aware mode sets them; docs/policies/powercap.md, "Deadline-aware cost"). */
    p->miss_cost = 0.0;
    p->miss_sigma = 0.0;
    p->lost_release = 0;
    /* Memos used only for equal coefficients: every result is the one without them. */
    p->reuse_tol = 0.0;
}

size_t eco_cap_scratch_len(size_t n, const struct eco_cap_params *p)
{
    size_t g = p && p->grid >= 2 ? p->grid : 26;
    /* power, cost, hull slopes and hull vertices (n x g each); hull size, current choice,
     * 3 x n for the heap (also the price search's buffer) and 6 x n for the warm start
     * (struct arrays) */
    return 4 * n * g + 11 * n;
}

double eco_cap__horizon_inv(const struct eco_cap_params *p)
{
    double hz = p->horizon * p->period_s;
    return hz > 0.0 && isfinite(hz) ? 1.0 / hz : 0.0;
}

static double sane_power(double power, double limit)
{
    /* no usable prediction: a capped GPU draws at most about its cap */
    return power >= 0.0 && isfinite(power) ? power : limit;
}

/* Default relative uncertainty of a predicted finish time in the per-miss cost: 5 %, about
 * twice the error of the learned speed models after a few dozen samples (docs/models/rls.md
 * reports 1-3 %) plus the 1 % progress noise of the simulator; wide enough that the cost is
 * smooth over two or three grid steps, so the hull-based price search sees a usable slope. */
#define MISS_SIGMA_DEFAULT 0.05

/* Predicted time to finish `rem` reference seconds at speed s0 in the current period and then
 * at the job's planned speeds (eco_cap_plan), the last one kept; rem / s0 without a plan. */
static double finish_time(const struct eco_cap_job *j, double period, double rem, double s0)
{
    if (!j->plan_speed || j->plan_len == 0 || !(period > 0.0) || rem <= s0 * period)
        return rem / s0;
    double r = rem - s0 * period, t = period, f = SPEED_FLOOR;
    for (uint32_t k = 0; k < j->plan_len; k++) {
        f = j->plan_speed[k] > SPEED_FLOOR ? j->plan_speed[k] : SPEED_FLOOR;
        if (r <= f * period)
            return t + r / f;
        r -= f * period;
        t += period;
    }
    return t + r / f;
}

/* 55 ln 2: the exponent of the bound below which a deadline term is under half an ulp of the
 * cost it is added to, with a factor 4 of margin (cost_row). */
#define LN2_55 38.123094930796995
/* z at and above which norm_cdf(z) is exactly 1.0 with glibc's erfc (cost_row). */
#define CDF_ONE_Z 8.5

/* Standard normal distribution function. */
static double norm_cdf(double z)
{
    return 0.5 * erfc(-z * 0.70710678118654752440); /* 1 / sqrt(2) */
}

/* cost_at over a row of speeds, in place (docs/policies/powercap.md, "Cost"). smax: the
 * job's highest speed over its range, for the lost-cause test. */
static void cost_row(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                     double *c, uint32_t g, double smax)
{
    const double w = j->weight > 0.0 ? j->weight : 0.0;
    const double rem = j->remaining_s > 0.0 ? j->remaining_s : 0.0;
    const double slack = j->slack_s, period = p->period_s;
    const int has_dl = j->slack_s >= 0.0;
    smax = smax > SPEED_FLOOR ? smax : SPEED_FLOOR;
    const int lost = has_dl && p->lost_release && finish_time(j, period, rem, smax) > slack;
    if (p->miss_cost > 0.0) {
        const double sig = p->miss_sigma > 0.0 ? p->miss_sigma : MISS_SIGMA_DEFAULT;
        const double pen =
            has_dl && !lost ? p->miss_cost * w * (j->miss_ref_s > 0.0 ? j->miss_ref_s : rem) : 0.0;
        /* Terms that cannot change the sum are not computed (the same values, bit for bit):
         * with v = w t > 0, adding d > 0 leaves v unchanged when d < v 2^-54 (under half an
         * ulp); Phi(z) <= exp(-z^2 / 2) / 2 for z <= 0, so pen Phi(z) < w t_min 2^-56 <= v
         * 2^-56 once z^2 > 2 (ln(pen / (w t_min)) + 55 ln 2), with t_min the finish time at
         * the row's top speed (a lower bound of every point's), a factor 4 of margin for
         * erfc's own rounding. At the other
         * end glibc's erfc(x) is exactly 2 - tiny = 2 for x <= -6, so Phi(z) = 1 for z >= 6
         * sqrt(2) (8.4853); 8.5 is used. */
        double zsq_skip = INFINITY;
        if (pen > 0.0 && w > 0.0) {
            double stop = SPEED_FLOOR; /* the row's top speed: its finish time is the least */
            for (uint32_t k = 0; k < g; k++)
                stop = c[k] > stop ? c[k] : stop;
            double tmin = finish_time(j, period, rem, stop);
            if (tmin > 0.0 && isfinite(tmin))
                zsq_skip = 2.0 * (log(pen / (w * tmin)) + LN2_55);
            zsq_skip = zsq_skip > 0.0 ? zsq_skip : 0.0;
        }
        for (uint32_t k = 0; k < g; k++) {
            double s = c[k] > SPEED_FLOOR ? c[k] : SPEED_FLOOR;
            double t = finish_time(j, period, rem, s);
            double v = w * t;
            if (pen > 0.0 && t > 0.0) {
                double z = (t - slack) / (sig * t);
                if (z >= CDF_ONE_Z)
                    v += pen;
                else if (!(z < 0.0 && z * z > zsq_skip))
                    v += pen * norm_cdf(z);
            }
            c[k] = v;
        }
        return;
    }
    /* the linear lateness cost (miss_cost 0), written branch-free so that it vectorises */
    const double pen = has_dl && !lost ? p->deadline_penalty * w : 0.0;
    for (uint32_t k = 0; k < g; k++) {
        double s = c[k] > SPEED_FLOOR ? c[k] : SPEED_FLOOR;
        double t = j->plan_speed ? finish_time(j, period, rem, s) : rem / s;
        double late = t - slack;
        double v = w * t + (late > 0.0 ? pen * late : 0.0);
        double f = t * inv_hz;
        c[k] = inv_hz > 0.0 && f < 1.0 ? v * f : v;
    }
}

/* Cost of a job running at `speed` (docs/policies/powercap.md, "Cost"): with T = remaining /
 * speed, w T + deadline_penalty w max(0, T - slack) (when slack >= 0), times min(1, T / (H x
 * period)) when there is a horizon; or the per-miss cost when miss_cost > 0. */
static double cost_at(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                      double speed, double smax)
{
    double c = speed;
    cost_row(j, p, inv_hz, &c, 1, smax);
    return c;
}

/* Of the levels l[a..b) (ascending, a < b), the nearest to x (ties to the lower), given lo,
 * the first of them >= x (b when none is). */
static double nearest_level(const double *l, uint32_t a, uint32_t b, uint32_t lo, double x)
{
    if (lo == a)
        return l[a];
    if (lo == b)
        return l[b - 1];
    return x - l[lo - 1] <= l[lo] - x ? l[lo - 1] : l[lo];
}

/* The nearest of the job's levels to x (ties to the lower), keeping to [min, max] when some
 * level is inside it; x itself for a continuous knob. */
static double snap_level(const struct eco_cap_job *j, double x)
{
    if (!j->levels || j->n_levels == 0)
        return x;
    const double *l = j->levels;
    uint32_t a = 0, b = j->n_levels, lo, hi;
    /* the usual case first, one search: x between two levels that are both inside [min, max]
     * (the general search below then gives the nearer of the same two) */
    for (lo = 0, hi = j->n_levels; lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && lo < j->n_levels && l[lo - 1] >= j->min_limit_w && l[lo] <= j->max_limit_w)
        return nearest_level(l, lo - 1, lo + 1, lo, x);
    /* the levels inside [min, max]: indices a..b-1 (binary searches) */
    for (lo = 0, hi = j->n_levels; lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid] < j->min_limit_w)
            lo = mid + 1;
        else
            hi = mid;
    }
    a = lo;
    for (lo = a, hi = j->n_levels; lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid] <= j->max_limit_w)
            lo = mid + 1;
        else
            hi = mid;
    }
    b = lo;
    if (a >= b)
        return x;
    /* first level >= x among them */
    for (lo = a, hi = b; lo < hi;) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return nearest_level(l, a, b, lo, x);
}

/* Grid point k of job j: the grid limit, on a level when the job has levels. */
double eco_cap__grid_at(const struct eco_cap_job *j, uint32_t g, uint32_t k)
{
    return snap_level(j, eco_cap_grid_limit(j->min_limit_w, j->max_limit_w, g, k));
}

double eco_cap__snap_level(const struct eco_cap_job *j, double x)
{
    return snap_level(j, x);
}

/* All g grid points of job j into out[] (eco_cap__grid_at for k = 0..g-1, the same values):
 * the grid limits rise with k, so the levels are walked once instead of searched per point. */
static void grid_points(const struct eco_cap_job *j, uint32_t g, double *out)
{
    for (uint32_t k = 0; k < g; k++)
        out[k] = eco_cap_grid_limit(j->min_limit_w, j->max_limit_w, g, k);
    if (!j->levels || j->n_levels == 0)
        return;
    const double *l = j->levels;
    uint32_t a = 0, b = j->n_levels; /* snap_level's levels inside [min, max]: a..b-1 */
    while (a < b && l[a] < j->min_limit_w)
        a++;
    while (b > a && l[b - 1] > j->max_limit_w)
        b--;
    if (a >= b)
        return;
    uint32_t lo = a;
    for (uint32_t k = 0; k < g; k++) {
        double x = out[k];
        if (k > 0 && x < out[k - 1])
            lo = a; /* not reached: the grid rises (kept exact all the same) */
        while (lo < b && l[lo] < x)
            lo++;
        out[k] = nearest_level(l, a, b, lo, x);
    }
}

/* Job power (all its GPUs) and cost at every grid limit. */
/* A not-ready model's prior curve from the cache, computed once per range and prior. */
static void prior_grid(struct eco_cap_prior_cache *cache, const struct eco_job_model *m, uint32_t g,
                       double *pw, double *sp)
{
    uint32_t s = 0;
    while (s < cache->used &&
           !(cache->slot[s].min_w == m->min_limit_w && cache->slot[s].max_w == m->max_limit_w &&
             cache->slot[s].scale_w == m->power_scale_w &&
             cache->slot[s].prior_static == m->prior_static))
        s++;
    if (s == cache->used) {
        if (s == ECO_CAP_PRIOR_SLOTS) { /* full: more ranges than slots, computed each time */
            eco_job_model_predict_grid(m, g, pw, sp);
            return;
        }
        cache->slot[s].min_w = m->min_limit_w;
        cache->slot[s].max_w = m->max_limit_w;
        cache->slot[s].scale_w = m->power_scale_w;
        cache->slot[s].prior_static = m->prior_static;
        eco_job_model_predict_grid(m, g, cache->slot[s].pw, cache->slot[s].sp);
        cache->used++;
    }
    memcpy(pw, cache->slot[s].pw, g * sizeof *pw);
    memcpy(sp, cache->slot[s].sp, g * sizeof *sp);
}

/* Whether job j is priced on its learned model's own grid (eco_job_model_predict_grid): the
 * model's predict, on the model's own range, without levels. */
static int model_grid(const struct eco_cap_job *j)
{
    const struct eco_job_model *m = j->ctx;
    return j->predict == eco_cap_predict_model && !j->levels && m->min_limit_w == j->min_limit_w &&
           m->max_limit_w == j->max_limit_w;
}

/* Job power (all its GPUs) into pw[] and speed into sp[] at every grid point. */
static void eval_rows(const struct eco_cap_job *j, uint32_t g, struct eco_cap_prior_cache *cache,
                      const double *pts, double *pw, double *sp)
{
    const struct eco_job_model *m = j->ctx;
    if (model_grid(j)) {
        /* a learned model: all points in one call, the same values */
        if (cache && !eco_job_model_ready(m))
            prior_grid(cache, m, g, pw, sp);
        else
            eco_job_model_predict_grid(m, g, pw, sp);
        const double gpus = j->gpus;
        for (uint32_t k = 0; k < g; k++)
            pw[k] *= gpus; /* the model's powers are finite and >= 0 */
    } else if (j->predict == eco_cap_predict_model) {
        /* a learned model on levels (the clock knob) or another range: its grid points in one
         * walk, then one call for all of them (eco_job_model_predict's values, point by point) */
        double L[ECO_CAP_GRID_MAX];
        if (!pts) {
            L[0] = j->min_limit_w; /* g >= 2 (eco_cap_params_check); this tells the compiler so */
            grid_points(j, g, L);
            pts = L;
        }
        eco_job_model_predict_points(m, pts, g, pw, sp);
        const double gpus = j->gpus;
        for (uint32_t k = 0; k < g; k++)
            pw[k] = sane_power(pw[k], pts[k]) * gpus;
    } else {
        for (uint32_t k = 0; k < g; k++) {
            double limit = pts ? pts[k] : eco_cap__grid_at(j, g, k);
            double power = limit, speed = 0.0;
            j->predict(j->ctx, limit, &power, &speed);
            pw[k] = sane_power(power, limit) * j->gpus;
            sp[k] = speed;
        }
    }
}

/* The speeds in c[] become costs; points above the trust region (index top) are priced as
 * it. */
static void eval_costs(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                       uint32_t top, double *pw, double *c)
{
    const uint32_t g = p->grid;
    double smax = 0.0;
    for (uint32_t k = 0; k < g; k++)
        smax = c[k] > smax ? c[k] : smax;
    cost_row(j, p, inv_hz, c, g, smax);
    /* the trust region: points above the slew bound are priced as the last one within it,
     * so that they add no power and save no cost (never chosen over it) */
    for (uint32_t k = top + 1; k < g; k++) {
        pw[k] = pw[top];
        c[k] = c[top];
    }
}

void eco_cap__eval_grid(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                        struct eco_cap_prior_cache *cache, double *pw, double *c)
{
    eval_rows(j, p->grid, cache, NULL, pw, c);
    eval_costs(j, p, inv_hz, eco_cap__upper_index(j, p->grid), pw, c);
}

/* eco_cap__upper_index, reading the grid points from pts[0..g) (grid_points) when given. */
static uint32_t upper_index(const struct eco_cap_job *j, uint32_t g, const double *pts)
{
    if (!(j->upper_w > 0.0) || !(j->upper_w < j->max_limit_w))
        return g - 1;
    /* grid points never decrease with k (snapping to levels keeps the order): a binary
     * search for the last one at or below the bound, point 0 when none is */
    uint32_t lo = 0, hi = g - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if ((pts ? pts[mid] : eco_cap__grid_at(j, g, mid)) <= j->upper_w)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

uint32_t eco_cap__upper_index(const struct eco_cap_job *j, uint32_t g)
{
    return upper_index(j, g, NULL);
}

double eco_cap_job_cost(const struct eco_cap_job *j, const struct eco_cap_params *p, double limit_w)
{
    struct eco_cap_params def;
    if (!p) {
        eco_cap_params_default(&def);
        p = &def;
    }
    double L = limit_w < j->min_limit_w   ? j->min_limit_w
               : limit_w > j->max_limit_w ? j->max_limit_w
                                          : limit_w;
    double power = L, speed = 0.0, smax = 0.0;
    j->predict(j->ctx, L, &power, &speed);
    if (p->lost_release && j->slack_s >= 0.0)
        j->predict(j->ctx, j->max_limit_w, &power, &smax);
    return cost_at(j, p, eco_cap__horizon_inv(p), speed, smax);
}

/* ---- lower convex hull of one job's grid points -------------------------------------------- */

/* The lower convex hull of (pw[k], c[k]) from the lowest-power point (lowest cost among equal
 * powers) to the lowest-cost point (lowest power among equal costs), in increasing power and
 * strictly decreasing cost: its grid indices go to hull[], the slopes of its segments (cost
 * saved per watt from vertex s to s + 1) to slope[] (may be NULL), its size is returned.
 * Andrew's monotone chain, with the convexity test done on the slopes themselves, so that the
 * slopes returned strictly decrease along the hull, bit for bit (the price search relies on
 * it; a cross-product test could keep nearly collinear points whose rounded slopes do not).
 * *mono is set to 1 when power never decreases with the limit. */
static uint32_t job_hull(const double *pw, const double *c, uint32_t g, uint16_t *ord,
                         uint16_t *hull, double *slope, int *mono)
{
    /* The points in order of (power, cost): the grid order when power strictly rises with the
     * limit (the usual case), else an insertion sort (linear on nearly sorted input). */
    uint32_t strict = 1;
    *mono = 1;
    for (uint32_t k = 1; k < g; k++) {
        strict &= pw[k] > pw[k - 1];
        *mono &= pw[k] >= pw[k - 1];
    }
    for (uint32_t k = 0; !strict && k < g; k++) {
        uint32_t m = k;
        while (m > 0) {
            uint32_t q = ord[m - 1];
            if (pw[q] < pw[k] || (pw[q] == pw[k] && c[q] <= c[k]))
                break;
            ord[m] = ord[m - 1];
            m--;
        }
        ord[m] = (uint16_t)k;
    }
    /* In grid order the slope from a point to the next is the one the chain needs most often
     * (a convex row keeps every point): computed up front, in a loop without dependencies
     * between its divisions, with the same expression as below (the same values). */
    double sl[ECO_CAP_GRID_MAX], next[ECO_CAP_GRID_MAX];
    for (uint32_t k = 1; strict && k < g; k++)
        next[k] = (c[k - 1] - c[k]) / (pw[k] - pw[k - 1]);
    uint32_t h = 0;
    for (uint32_t t = 0; t < g; t++) {
        uint32_t k = strict ? t : ord[t];
        if (h > 0 && (pw[k] == pw[hull[h - 1]] || c[k] >= c[hull[h - 1]]))
            continue; /* not below the last vertex: never on the decreasing hull */
        double s = 0.0;
        while (h > 0) {
            uint32_t b = hull[h - 1];
            s = strict && b + 1 == k ? next[k] : (c[b] - c[k]) / (pw[k] - pw[b]);
            if (h < 2 || sl[h - 2] > s)
                break;
            h--; /* b is on or above the segment from the vertex before it to k */
        }
        if (h > 0)
            sl[h - 1] = s;
        hull[h++] = (uint16_t)k;
    }
    if (slope)
        for (uint32_t s = 0; s + 1 < h; s++)
            slope[s] = sl[s];
    return h;
}

/* ---- a job's memory between calls (eco_cap_job.memo) ------------------------------------ */

struct eco_cap_memo {
    uint32_t cap; /* grid points it can hold */
    uint32_t g;   /* grid points of the row held, 0: none */
    /* what the row was computed for: the job's curve, GPUs, range and levels, and for a
     * learned model the coefficients */
    const void *ctx;
    void (*predict)(const void *ctx, double limit_w, double *power_w, double *speed);
    const double *levels;
    uint32_t n_levels;
    int fixed;
    uint64_t curve_key;
    uint32_t gpus;
    double min_w, max_w, scale_w;
    double theta_p[ECO_RLS_DIM], theta_s[ECO_RLS_DIM];
    /* the row's hull under a cost proportional to weight x remaining time (hull_ok), for the
     * trust region's index hull_top */
    int hull_ok, hull_mono;
    /* the last allocation's answer for the job (iv_ok): its chosen point is the hull vertex
     * that prices from iv_lo up to iv_hi choose, for a cost proportional to weight x remaining
     * work iv_wrem (then the interval scales with it), its top speed iv_smax (the horizon) */
    int iv_ok;
    uint32_t iv_top; /* the trust region's top index the answer was found under */
    double iv_lo, iv_hi, iv_wrem, iv_smax;
    uint32_t hull_n, hull_top;
    double hull_lo_pw, hull_hi_pw; /* power at the hull's first and last vertex */
    /* the row's highest and lowest speed (at least SPEED_FLOOR), for cost_affine */
    double smax, smin;
    /* the last allocation's price (price_ok) and the position on the hull of the job's answer
     * then (vpos), where the warm start (allocate_warm) begins */
    int price_ok;
    uint32_t vpos;
    double price;
    double *pw, *sp; /* the row: power of all the job's GPUs, speed */
    double *pts;     /* the grid points on the job's levels (pts_ok), for the same range */
    int pts_ok;
    uint16_t *hull;
};

struct eco_cap_memo *eco_cap_memo_new(uint32_t grid)
{
    if (grid < 2 || grid > ECO_CAP_GRID_MAX)
        return NULL;
    /* the hull's vertex indices first, next to the header (read at every allocation), the
     * rows after them, aligned */
    size_t hull_len = (grid + 3) / 4 * 4;
    struct eco_cap_memo *m =
        calloc(1, sizeof *m + hull_len * sizeof(uint16_t) + 3 * grid * sizeof(double));
    if (!m)
        return NULL;
    m->cap = grid;
    m->hull = (uint16_t *)(m + 1);
    m->pw = (double *)(m->hull + hull_len);
    m->sp = m->pw + grid;
    m->pts = m->sp + grid;
    return m;
}

void eco_cap_memo_free(struct eco_cap_memo *m)
{
    free(m);
}

/* Sum of absolute differences of two coefficient vectors (NaN when one is). */
static double coef_dist(const double *a, const double *b)
{
    double d = 0.0;
    for (int k = 0; k < ECO_RLS_DIM; k++)
        d += fabs(a[k] - b[k]);
    return d;
}

/* The job's memo when its row may be kept there: a fixed curve, or a learned model that is
 * ready (a prior row is shared by the prior cache); memo_row_ok checks the range and levels. */
static struct eco_cap_memo *memo_of(const struct eco_cap_job *j, uint32_t g)
{
    if (!j->memo || j->memo->cap < g)
        return NULL;
    if (j->fixed_curve)
        return j->memo;
    return j->predict == eco_cap_predict_model && eco_job_model_ready(j->ctx) ? j->memo : NULL;
}

/* Whether the memo's row serves job j now: the same curve, GPUs, range and levels, and for a
 * learned model coefficients within tol of those it was computed from (equal at tol 0). */
static int memo_row_ok(const struct eco_cap_memo *mo, const struct eco_cap_job *j, uint32_t g,
                       double tol)
{
    if (mo->g != g || mo->ctx != j->ctx || mo->predict != j->predict || mo->gpus != j->gpus ||
        mo->min_w != j->min_limit_w || mo->max_w != j->max_limit_w || mo->levels != j->levels ||
        mo->n_levels != j->n_levels || mo->fixed != (j->fixed_curve != 0))
        return 0;
    if (j->fixed_curve)
        return mo->curve_key == j->curve_key;
    const struct eco_job_model *m = j->ctx;
    return mo->scale_w == m->power_scale_w && coef_dist(mo->theta_p, m->power.theta) <= tol &&
           coef_dist(mo->theta_s, m->speed.theta) <= tol;
}

/* A speed as cost_row takes it: at least SPEED_FLOOR. */
static double floor_speed(double s)
{
    return s > SPEED_FLOOR ? s : SPEED_FLOOR;
}

/* The highest of the speeds sp[0..g), at least SPEED_FLOOR. */
static double top_speed(const double *sp, uint32_t g)
{
    double smax = SPEED_FLOOR;
    for (uint32_t k = 0; k < g; k++)
        smax = sp[k] > smax ? sp[k] : smax;
    return smax;
}

/* The lowest of the speeds sp[0..g), each taken as at least SPEED_FLOOR (as cost_row does). */
static double low_speed(const double *sp, uint32_t g)
{
    double smin = INFINITY;
    for (uint32_t k = 0; k < g; k++) {
        double s = floor_speed(sp[k]);
        smin = s < smin ? s : smin;
    }
    return smin;
}

static void memo_store_row(struct eco_cap_memo *mo, const struct eco_cap_job *j, uint32_t g,
                           const double *pts, const double *pw, const double *sp)
{
    mo->g = g;
    mo->ctx = j->ctx;
    mo->predict = j->predict;
    mo->gpus = j->gpus;
    mo->min_w = j->min_limit_w;
    mo->max_w = j->max_limit_w;
    mo->levels = j->levels;
    mo->n_levels = j->n_levels;
    mo->fixed = j->fixed_curve != 0;
    mo->curve_key = j->curve_key;
    if (!mo->fixed) {
        const struct eco_job_model *m = j->ctx;
        mo->scale_w = m->power_scale_w;
        memcpy(mo->theta_p, m->power.theta, sizeof mo->theta_p);
        memcpy(mo->theta_s, m->speed.theta, sizeof mo->theta_s);
    }
    memcpy(mo->pw, pw, g * sizeof *pw);
    memcpy(mo->sp, sp, g * sizeof *sp);
    mo->smax = top_speed(sp, g);
    mo->smin = low_speed(sp, g);
    mo->pts_ok = pts != NULL;
    if (pts)
        memcpy(mo->pts, pts, g * sizeof *pts);
    mo->hull_ok = 0;
}

/* Whether cost_row gives job j costs proportional to weight x remaining time for a row whose
 * top speed is smax (top_speed): no deadline, no plan and, with a horizon, no point finishing
 * within it. The hull's vertices then do not depend on the remaining time, only its slopes
 * (scaled). */
static int cost_proportional(const struct eco_cap_job *j, const struct eco_cap_params *p,
                             double inv_hz, double smax)
{
    if (!(j->weight > 0.0) || !(j->remaining_s > 0.0) || j->slack_s >= 0.0 || j->plan_speed)
        return 0;
    if (p->miss_cost > 0.0 || !(inv_hz > 0.0))
        return 1;
    return j->remaining_s / smax * inv_hz >= 1.0; /* cost_row's f at the least finish time */
}

/* Whether cost_row gives job j, for a row whose speeds lie in [smin, smax] (top_speed,
 * low_speed), the costs w t + pen max(0, t - slack) with t = rem / speed at every point and the
 * deadline term zero at every point or positive at every point: no plan, no horizon scaling
 * (no point finishing within it), no per-miss cost on a deadline, and a deadline either met
 * at the slowest point or missed at the fastest. Such costs are an increasing affine function
 * of t, so the row's lower hull has the same vertices whatever w, rem and slack (in exact
 * arithmetic; memo_hull checks the rounding). *pen: the deadline term's weight (0: none). */
static int cost_affine(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                       double smax, double smin, double *pen)
{
    if (!(j->weight > 0.0) || !(j->remaining_s > 0.0) || j->plan_speed)
        return 0;
    const double rem = j->remaining_s, slack = j->slack_s;
    const int has_dl = slack >= 0.0;
    smax = floor_speed(smax);
    smin = floor_speed(smin);
    *pen = 0.0;
    if (p->miss_cost > 0.0)
        return !has_dl; /* the per-miss branch of cost_row has no horizon scaling */
    if (inv_hz > 0.0 && !(rem / smax * inv_hz >= 1.0))
        return 0; /* cost_row's f below 1 at the fastest point */
    const int lost = has_dl && p->lost_release && finish_time(j, p->period_s, rem, smax) > slack;
    const double pn = has_dl && !lost ? p->deadline_penalty * j->weight : 0.0;
    if (pn > 0.0 && !(rem / smax - slack > 0.0) && rem / smin - slack > 0.0)
        return 0; /* met at some points, missed at others: the kink moves with the work */
    *pen = pn;
    return 1;
}

/* Job j's cost at speed s where cost_affine holds (pen from it): cost_row's expression for
 * one point, the same value. */
static double lazy_cost(const struct eco_cap_job *j, double pen, double s)
{
    double t = j->remaining_s / floor_speed(s), late = t - j->slack_s;
    return j->weight * t + (late > 0.0 ? pen * late : 0.0);
}

/* The memo's hull vertices over the costs c[]: their slopes into slope[] (job_hull's
 * expression), the size returned; 0 when the slopes are not positive and strictly decreasing
 * (rounding on nearly collinear points), and job_hull decides. */
static uint32_t memo_hull(const struct eco_cap_memo *mo, const double *pw, const double *c,
                          double *slope)
{
    uint32_t h = mo->hull_n;
    for (uint32_t v = 0; v + 1 < h; v++) {
        uint32_t a = mo->hull[v], b = mo->hull[v + 1];
        double s = (c[a] - c[b]) / (pw[b] - pw[a]);
        if (!(s > 0.0) || (v > 0 && !(slope[v - 1] > s)))
            return 0;
        slope[v] = s;
    }
    return h;
}

/* ---- price: weighted selection over all hull segments -------------------------------------- */

/* The per-job data the price search reads: for job i, hsize[i] hull vertices vidx[i g + v]
 * (grid indices, as doubles) and their hsize[i] - 1 segments' slopes slope[i g + s] (cost
 * saved per watt from vertex s to s + 1, strictly decreasing), powers in pw. */
struct hulls {
    const double *pw, *slope, *vidx, *hsize;
    size_t n;
    uint32_t g;
};

static double seg_power(const struct hulls *H, size_t i, uint32_t s)
{
    const double *v = H->vidx + i * H->g, *pw = H->pw + i * H->g;
    return pw[(uint32_t)v[s + 1]] - pw[(uint32_t)v[s]];
}

/* Slopes are positive, and the bit patterns of positive doubles order like their values. */
static uint64_t key_of(double slope)
{
    uint64_t k;
    memcpy(&k, &slope, sizeof k);
    return k;
}

static void swap_pair(double *s, size_t a, size_t b)
{
    double t0 = s[2 * a], t1 = s[2 * a + 1];
    s[2 * a] = s[2 * b];
    s[2 * a + 1] = s[2 * b + 1];
    s[2 * b] = t0;
    s[2 * b + 1] = t1;
}

/* buf holds m (slope, power) pairs whose powers sum to more than `room`. Returns the smallest
 * slope lambda with sum(power of pairs with slope > lambda) <= room: quickselect with a
 * three-way partition, expected O(m), pivots from a fixed xorshift sequence (deterministic). */
static double select_in(double *buf, size_t m, double room)
{
    size_t lo = 0, hi = m;
    uint64_t rs = 0x9e3779b97f4a7c15ULL;
    double last = 0.0;
    while (lo < hi) {
        rs ^= rs << 13;
        rs ^= rs >> 7;
        rs ^= rs << 17;
        double pivot = buf[2 * (lo + rs % (hi - lo))];
        size_t lt = lo, i = lo, gt = hi;
        double w_gt = 0.0, w_eq = 0.0;
        while (i < gt) {
            double v = buf[2 * i];
            if (v > pivot) {
                w_gt += buf[2 * i + 1];
                swap_pair(buf, i++, lt++);
            } else if (v < pivot) {
                swap_pair(buf, i, --gt);
            } else {
                w_eq += buf[2 * i + 1];
                i++;
            }
        }
        last = pivot;
        if (w_gt > room) {
            hi = lt;
            continue;
        }
        room -= w_gt;
        if (w_eq > room)
            return pivot;
        room -= w_eq;
        lo = gt;
    }
    return last; /* rounding left nothing over: the last pivot */
}

/* The price: the smallest slope lambda such that the segments with slope > lambda fit in
 * `room` (their powers sum to more than room overall). Histogram passes over the slopes' bit
 * patterns narrow a key range [klo, khi] that contains the answer, 10 bits per pass, until the
 * segments inside fit in buf (cap pairs) and a quickselect finishes; no segment array is built
 * or permuted, and each pass is a branch-light scan. Typically two passes. */
static double find_price(const struct hulls *H, double room, uint64_t klo, uint64_t khi,
                         double *buf, size_t cap)
{
    for (;;) {
        double wsum[PRICE_BUCKETS];
        uint32_t cnt[PRICE_BUCKETS];
        int shift = 0;
        while (((khi - klo) >> shift) >= PRICE_BUCKETS)
            shift++;
        memset(wsum, 0, sizeof wsum);
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < H->n; i++) {
            uint32_t ns = (uint32_t)fabs(H->hsize[i]) - 1;
            const double *sl = H->slope + i * H->g;
            for (uint32_t s = 0; s < ns; s++) {
                uint64_t k = key_of(sl[s]);
                if (k < klo)
                    break; /* slopes decrease along a hull */
                if (k > khi)
                    continue;
                size_t b = (size_t)((k - klo) >> shift);
                wsum[b] += seg_power(H, i, s);
                cnt[b]++;
            }
        }
        size_t top = (size_t)((khi - klo) >> shift), b = top;
        for (;; b--) { /* from the highest slopes down */
            if (wsum[b] > room)
                break;
            room -= wsum[b];
            if (b == 0) { /* all fit after all (rounding): leave the lowest slope out */
                double lowest;
                memcpy(&lowest, &klo, sizeof lowest);
                return lowest;
            }
        }
        uint64_t nlo = klo + ((uint64_t)b << shift);
        uint64_t nhi = b == top ? khi : nlo + (((uint64_t)1 << shift) - 1);
        klo = nlo;
        khi = nhi;
        double first;
        uint64_t kf = klo;
        memcpy(&first, &kf, sizeof first);
        if (klo == khi)
            return first; /* every segment in range has this slope */
        if (cnt[b] <= cap) {
            size_t m = 0;
            for (size_t i = 0; i < H->n; i++) {
                uint32_t ns = (uint32_t)fabs(H->hsize[i]) - 1;
                const double *sl = H->slope + i * H->g;
                for (uint32_t s = 0; s < ns; s++) {
                    uint64_t k = key_of(sl[s]);
                    if (k < klo)
                        break;
                    if (k <= khi) {
                        buf[2 * m] = sl[s];
                        buf[2 * m + 1] = seg_power(H, i, s);
                        m++;
                    }
                }
            }
            return select_in(buf, m, room);
        }
    }
}

/* ---- leftover: greedy fill by cost decrease per watt --------------------------------------- */

struct fill {
    const double *pw, *c; /* n x g */
    const double *hsize;  /* sign: power monotone in the limit (+) or not (-) */
    double *cur;          /* chosen grid index per job */
    double *heap;         /* (ratio, job, target) triples */
    size_t len;
    uint32_t g;
    /* the warm start's lazy jobs (pen[i] not NaN; pen NULL: none): their power row is their
     * memo's and their costs lazy_cost's, the same values up to the trust region's top */
    const struct eco_cap_job *jobs;
    const double *pen;
    /* per job, the power its next grid point adds where known (NaN: not known): a job whose
     * next point does not fit has no move (monotone power), passed over without its row */
    const double *step;
};

/* The power a lazy job's grid point after k adds (its row is monotone), INFINITY at its top. */
static double memo_step(const struct eco_cap_memo *mo, uint32_t k)
{
    return k < mo->hull_top ? mo->pw[k + 1] - mo->pw[k] : INFINITY;
}

/* Power of job i at grid point k. */
static double fill_pw(const struct fill *f, size_t i, uint32_t k)
{
    if (f->pen && !isnan(f->pen[i]))
        return f->jobs[i].memo->pw[k];
    return f->pw[i * f->g + k];
}

/* Point k of a row of powers pw, adding dp watts for a saving dc > 0, as the best move so far
 * when none is (*found 0) or it saves more per watt (a move that adds no power first), ties to
 * the smaller power. */
static void keep_best(const double *pw, uint32_t k, double dp, double dc, int *found, double *ratio,
                      uint32_t *to)
{
    double r = dp > 0.0 ? dc / dp : INFINITY;
    if (!*found || r > *ratio || (r == *ratio && pw[k] < pw[*to])) {
        *ratio = r;
        *to = k;
        *found = 1;
    }
}

/* best_move for a lazy job (its point at or below its top): the points up to the top only, as
 * the rows repeat the top above it (never a better move: the same ratio at the same power). */
static int best_move_lazy(const struct fill *f, size_t i, double room, double *ratio, uint32_t *to)
{
    const struct eco_cap_job *j = &f->jobs[i];
    const struct eco_cap_memo *mo = j->memo;
    const double *pw = mo->pw, pen = f->pen[i];
    uint32_t cur = (uint32_t)f->cur[i], k = 0;
    int found = 0, mono = mo->hull_mono;
    double ccur = NAN; /* the cost here, once a point fits */
    if (mono)
        k = cur + 1;
    for (; k <= mo->hull_top; k++) {
        double dp = pw[k] - pw[cur];
        if (dp > room) {
            if (mono)
                break;
            continue;
        }
        /* a point no faster costs no less (each step of lazy_cost is monotone): no saving */
        if (!(floor_speed(mo->sp[k]) > floor_speed(mo->sp[cur])))
            continue;
        if (isnan(ccur))
            ccur = lazy_cost(j, pen, mo->sp[cur]);
        double dc = ccur - lazy_cost(j, pen, mo->sp[k]);
        if (!(dc > 0.0))
            continue;
        keep_best(pw, k, dp, dc, &found, ratio, to);
    }
    return found;
}

/* Best move of job i to a point that saves cost and fits in `room`: the highest saving per
 * watt (a move that saves cost without adding power ranks first), ties to the smaller power.
 * When power rises with the limit only the points above the current one, up to room, are
 * looked at (points below cost more: the current point is on the hull or was the best move). */
static int best_move(const struct fill *f, size_t i, double room, double *ratio, uint32_t *to)
{
    if (f->pen && !isnan(f->pen[i]))
        return best_move_lazy(f, i, room, ratio, to);
    const double *pw = f->pw + i * f->g, *c = f->c + i * f->g;
    uint32_t cur = (uint32_t)f->cur[i], k = 0;
    int found = 0, mono = f->hsize[i] > 0;
    if (mono)
        k = cur + 1;
    for (; k < f->g; k++) {
        double dp = pw[k] - pw[cur], dc = c[cur] - c[k];
        if (dp > room) {
            if (mono)
                break;
            continue;
        }
        if (!(dc > 0.0))
            continue;
        keep_best(pw, k, dp, dc, &found, ratio, to);
    }
    return found;
}

/* A lower bound of the power any move best_move can give job i from its point adds (INFINITY:
 * none): the next point's with monotone power (the points above add no less), else the least
 * over the points that may save cost (lower cost; for a lazy job, a higher speed). */
static double least_step(const struct fill *f, size_t i)
{
    uint32_t cur = (uint32_t)f->cur[i];
    if (f->pen && !isnan(f->pen[i])) {
        const struct eco_cap_memo *mo = f->jobs[i].memo;
        if (mo->hull_mono)
            return memo_step(mo, cur);
        double m = INFINITY, sc = floor_speed(mo->sp[cur]);
        for (uint32_t k = 0; k <= mo->hull_top; k++)
            if (floor_speed(mo->sp[k]) > sc && mo->pw[k] - mo->pw[cur] < m)
                m = mo->pw[k] - mo->pw[cur];
        return m;
    }
    const double *pw = f->pw + i * f->g, *c = f->c + i * f->g;
    if (f->hsize[i] > 0)
        return cur + 1 < f->g ? pw[cur + 1] - pw[cur] : INFINITY;
    double m = INFINITY;
    for (uint32_t k = 0; k < f->g; k++)
        if (c[k] < c[cur] && pw[k] - pw[cur] < m)
            m = pw[k] - pw[cur];
    return m;
}

static int heap_above(const double *h, size_t a, size_t b)
{
    return h[3 * a] > h[3 * b] || (h[3 * a] == h[3 * b] && h[3 * a + 1] < h[3 * b + 1]);
}

static void heap_down(struct fill *f, size_t i)
{
    double *h = f->heap;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < f->len && heap_above(h, l, top))
            top = l;
        if (r < f->len && heap_above(h, r, top))
            top = r;
        if (top == i)
            return;
        for (int k = 0; k < 3; k++) {
            double t = h[3 * i + k];
            h[3 * i + k] = h[3 * top + k];
            h[3 * top + k] = t;
        }
        i = top;
    }
}

/* Replaces the heap's top with job i's best move in `room`, or removes the top if none. */
static void heap_retop(struct fill *f, size_t i, double room)
{
    double r = 0.0;
    uint32_t to = 0;
    if (best_move(f, i, room, &r, &to)) {
        f->heap[0] = r;
        f->heap[1] = (double)i;
        f->heap[2] = to;
    } else {
        f->len--;
        for (int k = 0; k < 3; k++)
            f->heap[k] = f->heap[3 * f->len + k];
    }
    if (f->len > 0)
        heap_down(f, 0);
}

/* Spends `room` watts: repeatedly applies the move with the best saving per watt that still
 * fits. Candidates are kept in a max-heap and re-evaluated lazily when room has shrunk below
 * them. Returns the room left. */
static double greedy_fill(struct fill *f, size_t n, double room)
{
    f->len = 0;
    double least = INFINITY; /* at most the least power any move of a job in the heap adds */
    for (size_t i = 0; i < n; i++) {
        double r = 0.0;
        uint32_t to = 0;
        if (f->step && f->step[i] > room)
            continue;
        if (best_move(f, i, room, &r, &to)) {
            f->heap[3 * f->len] = r;
            f->heap[3 * f->len + 1] = (double)i;
            f->heap[3 * f->len + 2] = to;
            f->len++;
            double m = least_step(f, i);
            least = m < least ? m : least;
        }
    }
    for (size_t i = f->len / 2; i-- > 0;)
        heap_down(f, i);
    /* once no move of any job in the heap fits, each would leave it without a move: stop */
    while (f->len > 0 && !(room < least)) {
        size_t i = (size_t)f->heap[1];
        uint32_t to = (uint32_t)f->heap[2];
        double dp = fill_pw(f, i, to) - fill_pw(f, i, (uint32_t)f->cur[i]);
        if (dp <= room) {
            room -= dp > 0.0 ? dp : 0.0;
            f->cur[i] = to;
            double m = least_step(f, i);
            least = m < least ? m : least;
        }
        heap_retop(f, i, room); /* next move of i, or i's best move that fits what is left */
    }
    return room;
}

/* Pairwise exchange for small instances: raise one job to any point and move another to any
 * point when the pair fits and saves cost; repeats until no pair improves (each accepted
 * exchange lowers the total cost by a non-negligible amount, so it ends). */
static void exchange(struct fill *f, size_t n, double room)
{
    uint32_t g = f->g;
    /* Each job's least cost and power over its grid: a pair (i at ki, j anywhere) whose best
     * conceivable saving or least added power already fails is passed over; rounding is
     * monotone, so no point of j could pass where that bound fails (the same moves, bit for
     * bit, in a fraction of the n^2 g^2 scan). */
    double cmin[EXCHANGE_MAX_JOBS], pmin[EXCHANGE_MAX_JOBS];
    for (size_t j = 0; j < n && j < EXCHANGE_MAX_JOBS; j++) {
        const double *pj = f->pw + j * g, *cj = f->c + j * g;
        cmin[j] = cj[0];
        pmin[j] = pj[0];
        for (uint32_t k = 1; k < g; k++) {
            cmin[j] = cj[k] < cmin[j] ? cj[k] : cmin[j];
            pmin[j] = pj[k] < pmin[j] ? pj[k] : pmin[j];
        }
    }
    /* A row whose power strictly rises and whose cost strictly falls along its points (up to
     * the last distinct one: points above the trust region repeat it and never save more) has
     * its feasible points, under the very expression below (rounding is monotone), as a prefix,
     * and the saving never falls along it: the scan's pick (the first point of the largest
     * saving) is found by a binary search for the prefix's end and a walk down over equal
     * savings, in O(log g) instead of O(g). */
    uint32_t len[EXCHANGE_MAX_JOBS];
    for (size_t j = 0; j < n && j < EXCHANGE_MAX_JOBS; j++) {
        const double *pj = f->pw + j * g, *cj = f->c + j * g;
        uint32_t L = g;
        while (L > 1 && pj[L - 1] == pj[L - 2] && cj[L - 1] == cj[L - 2])
            L--;
        int strict = 1;
        for (uint32_t k = 1; k < L && strict; k++)
            strict = pj[k] > pj[k - 1] && cj[k] < cj[k - 1];
        len[j] = strict ? L : 0;
    }
    for (int improved = 1; improved;) {
        improved = 0;
        double best = 0.0;
        size_t bi = 0, bj = 0;
        uint32_t bki = 0, bkj = 0;
        for (size_t i = 0; i < n; i++) {
            const double *pi = f->pw + i * g, *ci = f->c + i * g;
            uint32_t ui = (uint32_t)f->cur[i];
            for (size_t j = 0; j < n; j++) {
                if (j == i)
                    continue;
                const double *pj = f->pw + j * g, *cj = f->c + j * g;
                uint32_t uj = (uint32_t)f->cur[j];
                /* a saving lost in rounding would let the pass cycle */
                double min_save = 1e-12 * (ci[ui] + cj[uj]);
                for (uint32_t ki = 0; ki < g; ki++) {
                    double dpi = pi[ki] - pi[ui], dci = ci[ui] - ci[ki];
                    if (!(dci > 0.0))
                        continue;
                    if (!(dci + cj[uj] - cmin[j] > best) || dpi + pmin[j] - pj[uj] > room)
                        continue;
                    if (len[j]) { /* the last feasible point, then back over equal savings */
                        uint32_t lo = 0, hi = len[j]; /* point lo is feasible (pmin[j] is pj[0]) */
                        while (hi - lo > 1) {
                            uint32_t mid = lo + (hi - lo) / 2;
                            if (dpi + pj[mid] - pj[uj] <= room)
                                lo = mid;
                            else
                                hi = mid;
                        }
                        double save = dci + cj[uj] - cj[lo];
                        while (lo > 0 && dci + cj[uj] - cj[lo - 1] == save)
                            lo--;
                        if (save > best && save > min_save) {
                            best = save;
                            bi = i, bj = j, bki = ki, bkj = lo;
                        }
                        continue;
                    }
                    for (uint32_t kj = 0; kj < g; kj++) {
                        double dp = dpi + pj[kj] - pj[uj];
                        double save = dci + cj[uj] - cj[kj];
                        if (dp <= room && save > best && save > min_save) {
                            best = save;
                            bi = i, bj = j, bki = ki, bkj = kj;
                        }
                    }
                }
            }
        }
        if (best > 0.0) {
            const double *pi = f->pw + bi * g, *pj = f->pw + bj * g;
            room -= pi[bki] - pi[(uint32_t)f->cur[bi]] + pj[bkj] - pj[(uint32_t)f->cur[bj]];
            f->cur[bi] = bki;
            f->cur[bj] = bkj;
            improved = 1;
        }
    }
}

/* ---- branch and bound for small instances ------------------------------------------------- */

struct bnb {
    size_t n;
    uint32_t g;
    const double *pw, *c; /* n x g */
    double budget;
    /* suffix sums, from job d on, of the lowest-power hull vertex's power and cost */
    double base_p[BNB_MAX_JOBS + 1], base_c[BNB_MAX_JOBS + 1];
    /* the hull segments of all jobs, by decreasing slope: job, slope, power added, cost saved */
    size_t m;
    uint8_t seg_job[BNB_MAX_JOBS * BNB_MAX_GRID];
    double seg_sl[BNB_MAX_JOBS * BNB_MAX_GRID];
    double seg_dp[BNB_MAX_JOBS * BNB_MAX_GRID], seg_dc[BNB_MAX_JOBS * BNB_MAX_GRID];
    uint8_t order[BNB_MAX_JOBS][BNB_MAX_GRID]; /* each job's points by increasing cost */
    uint32_t k[BNB_MAX_JOBS], best_k[BNB_MAX_JOBS];
    double best;
    long nodes;
};

/* Lower bound on the cost of jobs d..n-1 within `room` watts: the convex relaxation (each job
 * on its hull, the steepest segments first, the last one fractionally); +inf if not even the
 * lowest powers fit. */
static double bnb_bound(const struct bnb *b, size_t d, double room)
{
    room -= b->base_p[d];
    if (room < 0.0)
        return INFINITY;
    double cost = b->base_c[d];
    for (size_t s = 0; s < b->m; s++) {
        if (b->seg_job[s] < d)
            continue;
        if (b->seg_dp[s] <= room) {
            room -= b->seg_dp[s];
            cost -= b->seg_dc[s];
        } else {
            cost -= b->seg_dc[s] * (room / b->seg_dp[s]);
            break;
        }
    }
    return cost;
}

static void bnb_dfs(struct bnb *b, size_t d, double power, double cost)
{
    if (d == b->n) {
        if (cost < b->best) {
            b->best = cost;
            for (size_t i = 0; i < b->n; i++)
                b->best_k[i] = b->k[i];
        }
        return;
    }
    const double *pd = b->pw + d * b->g, *cd = b->c + d * b->g;
    for (uint32_t t = 0; t < b->g && b->nodes < BNB_MAX_NODES; t++) {
        uint32_t k = b->order[d][t];
        /* a point equal to the one before it (grid points on one clock level, a fixed range)
         * has the same subtree: exploring it again only spends the node budget */
        if (t > 0 && pd[k] == pd[b->order[d][t - 1]] && cd[k] == cd[b->order[d][t - 1]])
            continue;
        double p = power + pd[k], cc = cost + cd[k];
        if (cc >= b->best)
            break; /* points come by increasing cost: none further can do better */
        if (cc + bnb_bound(b, d + 1, b->budget - p) >= b->best * (1.0 - 1e-12))
            continue; /* includes "the rest does not fit" (+inf) */
        b->nodes++;
        b->k[d] = k;
        bnb_dfs(b, d + 1, p, cc);
    }
}

/* Improves f->cur to the best combination of grid points within `room_all` (exact unless the
 * node budget runs out; never worse than the starting point). */
static void bnb_solve(struct bnb *b, struct fill *f, size_t n, double room_all)
{
    uint32_t g = f->g;
    b->n = n;
    b->g = g;
    b->pw = f->pw;
    b->c = f->c;
    b->budget = room_all;
    b->m = 0;
    b->nodes = 0;
    b->base_p[n] = b->base_c[n] = 0.0;
    double start = 0.0;
    for (size_t i = n; i-- > 0;) {
        const double *pi = f->pw + i * g, *ci = f->c + i * g;
        uint16_t ord[BNB_MAX_GRID], hull[BNB_MAX_GRID];
        int mono;
        double sl[BNB_MAX_GRID];
        uint32_t h = job_hull(pi, ci, g, ord, hull, sl, &mono);
        b->base_p[i] = b->base_p[i + 1] + pi[hull[0]];
        b->base_c[i] = b->base_c[i + 1] + ci[hull[0]];
        for (uint32_t s = 0; s + 1 < h; s++) { /* insert by decreasing slope */
            double dp = pi[hull[s + 1]] - pi[hull[s]], dc = ci[hull[s]] - ci[hull[s + 1]];
            size_t at = b->m++;
            while (at > 0 && b->seg_sl[at - 1] < sl[s]) {
                b->seg_sl[at] = b->seg_sl[at - 1];
                b->seg_job[at] = b->seg_job[at - 1];
                b->seg_dp[at] = b->seg_dp[at - 1];
                b->seg_dc[at] = b->seg_dc[at - 1];
                at--;
            }
            b->seg_job[at] = (uint8_t)i;
            b->seg_sl[at] = sl[s];
            b->seg_dp[at] = dp;
            b->seg_dc[at] = dc;
        }
        for (uint32_t k = 0; k < g; k++) { /* points by increasing cost */
            uint32_t at = k;
            while (at > 0 && ci[b->order[i][at - 1]] > ci[k]) {
                b->order[i][at] = b->order[i][at - 1];
                at--;
            }
            b->order[i][at] = (uint8_t)k;
        }
        b->best_k[i] = (uint32_t)f->cur[i];
        start += ci[(uint32_t)f->cur[i]];
    }
    b->best = start;
    bnb_dfs(b, 0, 0.0, 0.0);
    for (size_t i = 0; i < n; i++)
        f->cur[i] = b->best_k[i];
}

int eco_cap__steady_interval(const struct eco_cap_job *j, const struct eco_cap_params *p,
                             double *lo, double *hi)
{
    const struct eco_cap_memo *m = j->memo;
    /* still proportional, and the trust region where it was (a setting moved since prices
     * its points anew) */
    if (!m || !m->iv_ok || m->cap < p->grid ||
        !cost_proportional(j, p, eco_cap__horizon_inv(p), m->iv_smax) ||
        eco_cap__upper_index(j, p->grid) != m->iv_top)
        return 0;
    double r = j->weight * j->remaining_s / m->iv_wrem; /* the slopes scale with the cost */
    *lo = m->iv_lo * r;
    *hi = m->iv_hi * r;
    return 1;
}

/* ---- the allocator --------------------------------------------------------------------- */

int eco_cap__check_jobs(const struct eco_cap_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &jobs[i];
        if (!j->predict || j->gpus == 0 || !isfinite(j->min_limit_w) || !isfinite(j->max_limit_w) ||
            j->min_limit_w > j->max_limit_w)
            return -EINVAL;
    }
    return 0;
}

static double allocate(const struct eco_cap_job *jobs, size_t n, double budget_w,
                       const struct eco_cap_params *p, double *limits_w, double *scratch,
                       int small_exact);

double eco_cap_allocate(const struct eco_cap_job *jobs, size_t n, double budget_w,
                        const struct eco_cap_params *p, double *limits_w, double *scratch)
{
    return allocate(jobs, n, budget_w, p, limits_w, scratch, 1);
}

double eco_cap__allocate_part(const struct eco_cap_job *jobs, size_t n, double budget_w,
                              const struct eco_cap_params *p, double *limits_w, double *scratch)
{
    return allocate(jobs, n, budget_w, p, limits_w, scratch, 0);
}

/* One job's local problem into its rows of the scratch (the cold path): its grid points'
 * power pi[] and cost ci[], its hull's vertices vi[] (grid indices as doubles) and slopes
 * si[]; returns the hull's size, *mono whether power never decreases with the limit. Sets the
 * memo's interval bookkeeping (iv_ok to whether the cost is proportional, the top index and
 * speed) and keeps the row and hull in the memo where they may serve again. */
static uint32_t prep_job(const struct eco_cap_job *j, const struct eco_cap_params *p, double inv_hz,
                         struct eco_cap_prior_cache *prior, double *pi, double *ci, double *si,
                         double *vi, int *mono)
{
    const uint32_t g = p->grid;
    uint16_t ord[ECO_CAP_GRID_MAX], hull[ECO_CAP_GRID_MAX];
    /* a job with a memo: its row while its model stays within reuse_tol, and the row's hull
     * while its cost stays an affine function of its time left (cost_affine) */
    struct eco_cap_memo *mo = memo_of(j, g);
    int row_ok = mo && memo_row_ok(mo, j, g, p->reuse_tol);
    /* a job on levels: its grid points walked once (or kept in its memo, whose range and
     * levels are the job's when the row is) */
    const double *pts = NULL;
    double L[ECO_CAP_GRID_MAX];
    if (j->levels && j->n_levels) {
        if (row_ok && mo->pts_ok) {
            pts = mo->pts;
        } else if (mo && mo->pts_ok && mo->g == g && mo->levels == j->levels &&
                   mo->n_levels == j->n_levels && mo->min_w == j->min_limit_w &&
                   mo->max_w == j->max_limit_w) { /* the model moved, not the points */
            memcpy(L, mo->pts, g * sizeof *L);
            pts = L;
        } else {
            L[0] = j->min_limit_w; /* g >= 2; this tells the compiler so */
            grid_points(j, g, L);
            pts = L;
        }
    }
    uint32_t top = upper_index(j, g, pts), h = 0;
    if (row_ok) {
        memcpy(pi, mo->pw, g * sizeof *pi);
        memcpy(ci, mo->sp, g * sizeof *ci);
    } else {
        eval_rows(j, g, prior, pts, pi, ci);
        if (mo)
            memo_store_row(mo, j, g, pts, pi, ci);
    }
    struct eco_cap_memo *ivm = j->memo && j->memo->cap >= g ? j->memo : NULL;
    /* the row's top speed: the memo's (made with its row, which ci now is) where there is one */
    double smax = mo ? mo->smax : ivm ? top_speed(ci, g) : 0.0, pen = 0.0;
    int aff = mo && cost_affine(j, p, inv_hz, smax, mo->smin, &pen);
    /* any job with a memo (mo, when its row may be kept, is that memo) keeps the prices its
     * answer stands for (remember), whatever its curve: the caller says when the
     * curve has not moved (eco_capper_job.steady) */
    if (ivm) {
        ivm->iv_ok = cost_proportional(j, p, inv_hz, smax);
        ivm->iv_top = top;
        ivm->iv_smax = smax;
    }
    eval_costs(j, p, inv_hz, top, pi, ci);
    if (aff && mo->hull_ok && mo->hull_top == top && (h = memo_hull(mo, pi, ci, si))) {
        *mono = mo->hull_mono;
        for (uint32_t v = 0; v < h; v++)
            hull[v] = mo->hull[v];
    } else {
        h = job_hull(pi, ci, g, ord, hull, si, mono);
        if (mo) {
            mo->hull_ok = aff;
            mo->hull_top = top;
            mo->hull_mono = *mono;
            mo->hull_n = h;
            memcpy(mo->hull, hull, h * sizeof *hull);
            mo->hull_lo_pw = pi[hull[0]];
            mo->hull_hi_pw = pi[hull[h - 1]];
        }
    }
    for (uint32_t v = 0; v < h; v++)
        vi[v] = hull[v];
    return h;
}

/* ---- the warm start: from the last price, in proportion to what moves ----------------------- */

/* The arrays of one allocation: the cold path's rows (n x g: pw, c, slope, vidx) and per job
 * hsize (+-hull size), cur (chosen grid index), heap (3 n); the warm start's per job vpos
 * (position on the hull), up and dn (slopes of the segments into and out of it), pen (NaN: the
 * job is in the rows; else it is read from its memo, pen its deadline weight), moved, and step
 * (for the greedy fill: the power the next grid point adds, NaN where not known). */
struct arrays {
    double *pw, *c, *slope, *vidx, *hsize, *cur, *heap;
    double *vpos, *up, *dn, *pen, *moved, *step;
};

static void arrays_at(struct arrays *a, double *scratch, size_t n, uint32_t g)
{
    const size_t ng = n * g;
    a->pw = scratch;
    a->c = a->pw + ng;
    a->slope = a->c + ng;
    a->vidx = a->slope + ng;
    a->hsize = a->vidx + ng;
    a->cur = a->hsize + n;
    a->heap = a->cur + n;
    a->vpos = a->heap + 3 * n;
    a->up = a->vpos + n;
    a->dn = a->up + n;
    a->pen = a->dn + n;
    a->moved = a->pen + n;
    a->step = a->moved + n;
}

/* Job i read from its memo (the warm start's lazy jobs) rather than from the rows. */
static int lazy(const struct arrays *a, size_t i)
{
    return !isnan(a->pen[i]);
}

static uint32_t n_vert(const struct arrays *a, const struct eco_cap_job *jobs, size_t i)
{
    return lazy(a, i) ? jobs[i].memo->hull_n : (uint32_t)fabs(a->hsize[i]);
}

/* Grid index and power of vertex v of job i's hull. */
static uint32_t vert_at(const struct arrays *a, const struct eco_cap_job *jobs, size_t i,
                        uint32_t g, uint32_t v)
{
    return lazy(a, i) ? jobs[i].memo->hull[v] : (uint32_t)a->vidx[i * g + v];
}

static double vert_pw(const struct arrays *a, const struct eco_cap_job *jobs, size_t i, uint32_t g,
                      uint32_t v)
{
    return lazy(a, i) ? jobs[i].memo->pw[jobs[i].memo->hull[v]]
                      : a->pw[i * g + (uint32_t)a->vidx[i * g + v]];
}

/* Slope of segment s (vertex s to s + 1) of job i's hull; a lazy job's with memo_hull's
 * expression over lazy_cost's costs (the values the rows would hold). */
static double seg_slope(const struct arrays *a, const struct eco_cap_job *jobs, size_t i,
                        uint32_t g, uint32_t s)
{
    if (!lazy(a, i))
        return a->slope[i * g + s];
    const struct eco_cap_memo *mo = jobs[i].memo;
    uint32_t x = mo->hull[s], y = mo->hull[s + 1];
    double cx = lazy_cost(&jobs[i], a->pen[i], mo->sp[x]);
    double cy = lazy_cost(&jobs[i], a->pen[i], mo->sp[y]);
    return (cx - cy) / (mo->pw[y] - mo->pw[x]);
}

/* Sets job i's vertex at price lambda (it takes the segments steeper than lambda) walking from
 * vpos[i], with up[i] and dn[i] the slopes into and out of it (INFINITY, -INFINITY at the
 * ends). */
static void vertex_at(struct arrays *a, const struct eco_cap_job *jobs, size_t i, uint32_t g,
                      double lambda)
{
    uint32_t h = n_vert(a, jobs, i), v = (uint32_t)a->vpos[i];
    v = v < h ? v : h - 1;
    double su = v > 0 ? seg_slope(a, jobs, i, g, v - 1) : INFINITY;
    while (v > 0 && !(su > lambda)) {
        v--;
        su = v > 0 ? seg_slope(a, jobs, i, g, v - 1) : INFINITY;
    }
    double sd = v + 1 < h ? seg_slope(a, jobs, i, g, v) : -INFINITY;
    while (v + 1 < h && sd > lambda) {
        v++;
        su = sd;
        sd = v + 1 < h ? seg_slope(a, jobs, i, g, v) : -INFINITY;
    }
    a->vpos[i] = v;
    a->up[i] = su;
    a->dn[i] = sd;
}

/* A max-heap of (key, job) pairs in h[0..2 len), ties to the smaller job. */
static int kheap_above(const double *h, size_t x, size_t y)
{
    return h[2 * x] > h[2 * y] || (h[2 * x] == h[2 * y] && h[2 * x + 1] < h[2 * y + 1]);
}

static void kheap_down(double *h, size_t len, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, t = i;
        if (l < len && kheap_above(h, l, t))
            t = l;
        if (r < len && kheap_above(h, r, t))
            t = r;
        if (t == i)
            return;
        swap_pair(h, i, t);
        i = t;
    }
}

/* Replaces the top's key with k, or removes the top when k is NaN. */
static void kheap_retop(double *h, size_t *len, double k)
{
    if (isnan(k)) {
        (*len)--;
        h[0] = h[2 * *len];
        h[1] = h[2 * *len + 1];
    } else {
        h[0] = k;
    }
    if (*len > 0)
        kheap_down(h, *len, 0);
}

/* step[i]: for a lazy job with monotone power, the power its grid point after its vertex vpos
 * adds (INFINITY at its top); NaN for the others. */
static void next_step(struct arrays *a, const struct eco_cap_job *jobs, size_t i, uint32_t g)
{
    a->step[i] = NAN;
    if (!lazy(a, i) || !jobs[i].memo->hull_mono)
        return;
    a->step[i] = memo_step(jobs[i].memo, vert_at(a, jobs, i, g, (uint32_t)a->vpos[i]));
}

#define WARM_ABORT (-1.0) /* the warm start gave up: the cold path decides */

/* The price from lambda0 (the last allocation's): every job's vertex at lambda0, then the
 * segments between lambda0 and the price taken (the price lies below) or given back (above)
 * in order of slope through a heap, until the powers fit `room_all` (total: the powers at
 * lambda0). The price and each job's vertex are the cold path's (find_price): the smallest
 * slope whose steeper segments fit; the sums are added in another order, so a total within
 * rounding of the budget may decide the other way. WARM_ABORT after more than n steps (a
 * price that moved far: the cold path is then cheaper). */
static double warm_price(struct arrays *a, const struct eco_cap_job *jobs, size_t n, uint32_t g,
                         double lambda0, double total, double room_all)
{
    double *h = a->heap, price = lambda0;
    size_t len = 0, steps = 0;
    int down = total <= room_all; /* the price lies at or below lambda0: take segments */
    for (size_t i = 0; i < n; i++) {
        double k = down ? a->dn[i] : -a->up[i];
        if (isfinite(k)) {
            h[2 * len] = k;
            h[2 * len + 1] = (double)i;
            len++;
        }
    }
    for (size_t i = len / 2; i-- > 0;)
        kheap_down(h, len, i);
    size_t batch = 0; /* down: jobs that took segments of the last slope, in a->heap's tail */
    double *last = a->heap + 2 * n;
    while (len > 0) {
        double x = down ? h[0] : -h[0];
        batch = 0;
        while (len > 0 && (down ? h[0] : -h[0]) == x) {
            size_t i = (size_t)h[1];
            uint32_t v = (uint32_t)a->vpos[i], nv = n_vert(a, jobs, i);
            a->moved[i] = 1;
            if (down) {
                total += vert_pw(a, jobs, i, g, v + 1) - vert_pw(a, jobs, i, g, v);
                a->vpos[i] = ++v;
                last[batch++] = (double)i;
                kheap_retop(h, &len, v + 1 < nv ? seg_slope(a, jobs, i, g, v) : NAN);
            } else {
                total -= vert_pw(a, jobs, i, g, v) - vert_pw(a, jobs, i, g, v - 1);
                a->vpos[i] = --v;
                kheap_retop(h, &len, v > 0 ? -seg_slope(a, jobs, i, g, v - 1) : NAN);
            }
            if (++steps > n)
                return WARM_ABORT;
        }
        price = x;
        if (down ? total > room_all : total <= room_all)
            break;
        if (len == 0 && !down)
            return WARM_ABORT; /* nothing left to give back (rounding): let the cold path see */
    }
    if (down) /* segments of slope equal to the price are not taken */
        for (size_t b = 0; b < batch; b++)
            a->vpos[(size_t)last[b]] -= 1;
    return price;
}

/* The warm start (docs/policies/powercap.md, "Warm start"): a job whose memo holds its row
 * and hull, under a cost that stays affine in its time left, is read from the memo (its
 * costs at the few points looked at, lazy_cost); the others are prepared as in the cold path.
 * The price walks from the last one (warm_price). Returns the price, INFINITY when not even
 * the lowest powers fit, or WARM_ABORT with nothing written to limits_w. */
static double allocate_warm(const struct eco_cap_job *jobs, size_t n,
                            const struct eco_cap_params *p, struct arrays *a, double room_all,
                            double lambda0)
{
    const uint32_t g = p->grid;
    const double inv_hz = eco_cap__horizon_inv(p);
    struct eco_cap_prior_cache prior;
    prior.used = 0;
    double lo = 0.0, hi = 0.0, total = 0.0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &jobs[i];
        struct eco_cap_memo *mo = memo_of(j, g);
        double pen = 0.0;
        a->pen[i] = NAN;
        a->moved[i] = 0;
        a->vpos[i] = 0;
        if (mo && mo->hull_ok && memo_row_ok(mo, j, g, p->reuse_tol) &&
            (!(j->levels && j->n_levels) || mo->pts_ok)) {
            uint32_t top = upper_index(j, g, j->levels && j->n_levels ? mo->pts : NULL);
            if (mo->hull_top == top && cost_affine(j, p, inv_hz, mo->smax, mo->smin, &pen)) {
                a->pen[i] = pen;
                a->hsize[i] = mo->hull_mono ? (double)mo->hull_n : -(double)mo->hull_n;
                a->vpos[i] = mo->price_ok ? mo->vpos : 0;
                mo->iv_ok = cost_proportional(j, p, inv_hz, mo->smax);
                mo->iv_top = top;
                mo->iv_smax = mo->smax;
            }
        }
        if (lazy(a, i)) {
            lo += mo->hull_lo_pw;
            hi += mo->hull_hi_pw;
        } else {
            int mono;
            uint32_t h = prep_job(j, p, inv_hz, &prior, a->pw + i * g, a->c + i * g,
                                  a->slope + i * g, a->vidx + i * g, &mono);
            a->hsize[i] = mono ? (double)h : -(double)h;
            a->vpos[i] = h - 1; /* a good start for the scan from the top */
            lo += vert_pw(a, jobs, i, g, 0);
            hi += vert_pw(a, jobs, i, g, h - 1);
        }
        vertex_at(a, jobs, i, g, lambda0);
        total += vert_pw(a, jobs, i, g, (uint32_t)a->vpos[i]);
        next_step(a, jobs, i, g);
    }
    if (lo > room_all)
        return INFINITY;
    double price = 0.0;
    if (hi > room_all) {
        price = warm_price(a, jobs, n, g, lambda0, total, room_all);
        if (price == WARM_ABORT)
            return WARM_ABORT;
    } else {
        for (size_t i = 0; i < n; i++) { /* every job at its cheapest point */
            uint32_t h = n_vert(a, jobs, i);
            a->moved[i] = a->moved[i] || a->vpos[i] != h - 1;
            a->vpos[i] = h - 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        a->cur[i] = vert_at(a, jobs, i, g, (uint32_t)a->vpos[i]);
        if (a->moved[i])
            next_step(a, jobs, i, g);
    }
    return price;
}

/* The cold path: every job's local problem into the rows (prep_job), the price by find_price
 * over all hull segments, each job's vertex at it into cur and vpos. Returns the price (0 when
 * the budget does not bind), or INFINITY when not even the lowest powers fit. */
static double allocate_cold(const struct eco_cap_job *jobs, size_t n,
                            const struct eco_cap_params *p, struct arrays *a, double room_all)
{
    const uint32_t g = p->grid;
    const double inv_hz = eco_cap__horizon_inv(p);
    double lo_total = 0.0, hi_total = 0.0, price = 0.0;
    uint64_t kmin = UINT64_MAX, kmax = 0;
    struct eco_cap_prior_cache prior;
    prior.used = 0;
    /* Local problems: every job's grid points, its hull and the hull's slopes; cur[i] = the
     * job's unconstrained best (the hull's last vertex). */
    for (size_t i = 0; i < n; i++) {
        double *pi = a->pw + i * g, *si = a->slope + i * g, *vi = a->vidx + i * g;
        int mono;
        uint32_t h = prep_job(&jobs[i], p, inv_hz, &prior, pi, a->c + i * g, si, vi, &mono);
        if (h > 1) {
            uint64_t k0 = key_of(si[0]), k1 = key_of(si[h - 2]);
            kmax = k0 > kmax ? k0 : kmax;
            kmin = k1 < kmin ? k1 : kmin;
        }
        a->hsize[i] = mono ? (double)h : -(double)h;
        a->pen[i] = NAN;
        a->moved[i] = 1;
        a->step[i] = NAN;
        lo_total += pi[(uint32_t)vi[0]];
        hi_total += pi[(uint32_t)vi[h - 1]];
        a->cur[i] = vi[h - 1];
        a->vpos[i] = h - 1;
    }
    if (lo_total > room_all) /* not even the lowest powers fit */
        return INFINITY;
    if (hi_total > room_all) { /* the price is positive */
        struct hulls H = {
            .pw = a->pw, .slope = a->slope, .vidx = a->vidx, .hsize = a->hsize, .n = n, .g = g};
        price = find_price(&H, room_all - lo_total, kmin, kmax, a->heap, 3 * n / 2);
        for (size_t i = 0; i < n; i++) {
            const double *si = a->slope + i * g, *vi = a->vidx + i * g;
            uint32_t s = 0, ns = (uint32_t)fabs(a->hsize[i]) - 1;
            while (s < ns && si[s] > price)
                s++;
            a->cur[i] = vi[s];
            a->vpos[i] = s;
        }
    }
    return price;
}

/* The last allocation's price from the first job whose memo holds one. */
static int last_price(const struct eco_cap_job *jobs, size_t n, uint32_t g, double *lambda)
{
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_memo *m = jobs[i].memo;
        if (m && m->cap >= g && m->price_ok) {
            *lambda = m->price;
            return 1;
        }
    }
    return 0;
}

/* What job i's memo keeps of the allocation's answer: the price and the job's hull position
 * (the next warm start's), and the prices its answer stands for (the steady split's): when
 * iv_ok (its cost proportional to its remaining work) and its point is the price solution's
 * vertex v, the slopes around it, lo = slope[v] <= price < hi = slope[v - 1]; else none (a
 * point the greedy fill or the exchange moved it to). */
static void remember(struct eco_cap_memo *m, const struct arrays *a, const struct eco_cap_job *jobs,
                     size_t i, uint32_t g, double price)
{
    const struct eco_cap_job *j = &jobs[i];
    uint32_t v = (uint32_t)a->vpos[i], h = n_vert(a, jobs, i);
    m->price_ok = 1;
    m->price = price;
    m->vpos = v;
    if (!m->iv_ok)
        return;
    m->iv_ok = 0;
    if ((uint32_t)a->cur[i] != vert_at(a, jobs, i, g, v))
        return;
    double lo = v + 1 < h ? (a->moved[i] ? seg_slope(a, jobs, i, g, v) : a->dn[i]) : 0.0;
    double hi = v > 0 ? (a->moved[i] ? seg_slope(a, jobs, i, g, v - 1) : a->up[i]) : INFINITY;
    double wrem = j->weight * j->remaining_s;
    if (lo <= price && price < hi && wrem > 0.0) {
        m->iv_ok = 1;
        m->iv_lo = lo;
        m->iv_hi = hi;
        m->iv_wrem = wrem;
    }
}

/* eco_cap_allocate; small_exact 0 leaves out the branch and bound and the exchange pass of
 * small instances (a part of a larger allocation, whose other jobs give the granularity). */
static double allocate(const struct eco_cap_job *jobs, size_t n, double budget_w,
                       const struct eco_cap_params *p, double *limits_w, double *scratch,
                       int small_exact)
{
    struct eco_cap_params def;
    if (!p) {
        eco_cap_params_default(&def);
        p = &def;
    }
    if (p->grid < 2 || p->grid > ECO_CAP_GRID_MAX || isnan(budget_w) ||
        (n > 0 && (!jobs || !limits_w)) || eco_cap__check_jobs(jobs, n))
        return -EINVAL;
    if (n == 0)
        return 0.0;
    double *own = NULL;
    if (!scratch) {
        own = malloc(eco_cap_scratch_len(n, p) * sizeof *own);
        if (!own)
            return -ENOMEM;
        scratch = own;
    }
    const uint32_t g = p->grid;
    struct arrays a;
    arrays_at(&a, scratch, n, g);
    const double room_all = budget_w - (isfinite(budget_w) ? fabs(budget_w) * BUDGET_MARGIN : 0.0);
    double price = WARM_ABORT, lambda0 = 0.0;
    /* the warm start where a last price is known and the small-instance passes do not run */
    if (n > (small_exact ? EXCHANGE_MAX_JOBS : 0) && last_price(jobs, n, g, &lambda0))
        price = allocate_warm(jobs, n, p, &a, room_all, lambda0);
    if (price == WARM_ABORT)
        price = allocate_cold(jobs, n, p, &a, room_all);
    if (isinf(price)) { /* not even the lowest powers fit */
        for (size_t i = 0; i < n; i++) {
            limits_w[i] = eco_cap__grid_at(&jobs[i], g, 0);
            if (jobs[i].memo) {
                jobs[i].memo->iv_ok = 0;
                jobs[i].memo->price_ok = 0;
            }
        }
        free(own);
        return INFINITY;
    }
    if (price > 0.0) { /* the budget binds: spend what the price solution leaves */
        struct fill f = {.pw = a.pw,
                         .c = a.c,
                         .hsize = a.hsize,
                         .cur = a.cur,
                         .heap = a.heap,
                         .g = g,
                         .jobs = jobs,
                         .pen = a.pen,
                         .step = a.step};
        double total = 0.0;
        for (size_t i = 0; i < n; i++)
            total += fill_pw(&f, i, (uint32_t)a.cur[i]);
        double room = greedy_fill(&f, n, room_all - total);
        if (small_exact && n <= BNB_MAX_JOBS && g <= BNB_MAX_GRID) {
            struct bnb b;
            bnb_solve(&b, &f, n, room_all);
        } else if (small_exact && n <= EXCHANGE_MAX_JOBS) {
            exchange(&f, n, room);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &jobs[i];
        const struct eco_cap_memo *mo = memo_of(j, g);
        /* a job on levels keeps its grid points in its memo (stored above) */
        const double *pts = j->levels && j->n_levels && mo && mo->pts_ok ? mo->pts : NULL;
        uint32_t k = (uint32_t)a.cur[i], top = upper_index(j, g, pts);
        k = k < top ? k : top;
        limits_w[i] = pts ? pts[k] : eco_cap__grid_at(j, g, k);
        if (j->memo && j->memo->cap >= g)
            remember(j->memo, &a, jobs, i, g, price);
    }
    free(own);
    return price;
}

void eco_cap_predict_truth(const void *ctx, double limit_w, double *power_w, double *speed)
{
    const struct eco_cap_truth *t = ctx;
    if (eco_power_eval(t->type, t->workload, limit_w, speed, power_w)) {
        if (power_w)
            *power_w = limit_w;
        if (speed)
            *speed = 0.0;
    }
}
