/* SPDX-License-Identifier: MIT */
/* Recursive least squares with a forgetting factor on [1, x, x^2], and the per-job models of
 * power and speed versus the normalised power limit built on it (docs/models/rls.md). */
#include <math.h>
#include <string.h>
#include "ecosched/powercap.h"

/* Readiness: a quadratic needs three samples, and samples bunched in a narrow band of limits
 * extrapolate wildly (three points 0.1 apart put a gain of ~100 on their noise at the far
 * end), so the sampled limits must also span a fifth of the range. */
#define READY_MIN_SAMPLES 3
#define READY_MIN_SPAN 0.2
/* Slack on the span for rounding in the normalisation ((240 - 100) / 200 - (200 - 100) / 200 is
 * 0.19999999999999996). */
#define READY_SPAN_EPS 1e-9

/* Sane output ranges: a capped GPU draws at most about its cap (Zeus' averages exceed it by
 * up to ~16 W at the lowest limits, docs/models/energy.md), so 1.2 x max leaves room for that;
 * speeds are relative to a V100 at 250 W and the fastest catalog GPU is 1.96. */
#define POWER_MAX_FRAC 1.2
#define SPEED_MIN 1e-3
#define SPEED_MAX 10.0
/* Clock knob: the prior's power at the knob's floor, as a share of the power at the top. The
 * fitted clock model puts 36-71 % of the top draw of a busy GPU at the floor on the power-bound
 * workloads (docs/models/clock.md); half sits in that band, and the learned model replaces the
 * prior once ready. */
#define CLOCK_PRIOR_STATIC 0.5

#define RLS_PI 3.14159265358979323846

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void reset_cov(struct eco_rls *r)
{
    for (int i = 0; i < ECO_RLS_DIM; i++)
        for (int j = 0; j < ECO_RLS_DIM; j++)
            r->P[i][j] = i == j ? r->p0 : 0.0;
}

void eco_rls_init(struct eco_rls *r, double lambda, double p0)
{
    r->lambda = lambda > 0.0 && lambda <= 1.0 ? lambda : 1.0;
    r->p0 = p0 > 0.0 && isfinite(p0) ? p0 : ECO_RLS_P0_DEFAULT;
    r->n = 0;
    for (int i = 0; i < ECO_RLS_DIM; i++)
        r->theta[i] = 0.0;
    reset_cov(r);
}

double eco_rls_predict(const struct eco_rls *r, double x)
{
    return r->theta[0] + x * (r->theta[1] + x * r->theta[2]);
}

/* Eigenvalues of the symmetric 3 x 3 A in closed form (the trigonometric solution of the
 * characteristic cubic), d[0] >= d[1] >= d[2]: constant cost, no iteration. */
static void eig_values(const double A[ECO_RLS_DIM][ECO_RLS_DIM], double d[ECO_RLS_DIM])
{
    double p1 = A[0][1] * A[0][1] + A[0][2] * A[0][2] + A[1][2] * A[1][2];
    double q = (A[0][0] + A[1][1] + A[2][2]) / 3.0;
    if (p1 <= 1e-30 * q * q) { /* diagonal */
        double x = A[0][0], y = A[1][1], z = A[2][2], t;
        if (x < y)
            t = x, x = y, y = t;
        if (y < z)
            t = y, y = z, z = t;
        if (x < y)
            t = x, x = y, y = t;
        d[0] = x, d[1] = y, d[2] = z;
        return;
    }
    double a = A[0][0] - q, b = A[1][1] - q, c = A[2][2] - q;
    double p = sqrt((a * a + b * b + c * c + 2.0 * p1) / 6.0);
    /* det((A - q I) / p) / 2 */
    double det = a * (b * c - A[1][2] * A[1][2]) - A[0][1] * (A[0][1] * c - A[1][2] * A[0][2]) +
                 A[0][2] * (A[0][1] * A[1][2] - b * A[0][2]);
    double r = det / (2.0 * p * p * p);
    double phi = r <= -1.0 ? RLS_PI / 3.0 : r >= 1.0 ? 0.0 : acos(r) / 3.0;
    d[0] = q + 2.0 * p * cos(phi);
    d[2] = q + 2.0 * p * cos(phi + 2.0 * RLS_PI / 3.0);
    d[1] = 3.0 * q - d[0] - d[2];
}

/* A unit eigenvector of the symmetric A for its eigenvalue l: the longest cross product of two
 * rows of A - l I (each row is orthogonal to the eigenvector). 0 when none is usable. */
static int eig_vector(const double A[ECO_RLS_DIM][ECO_RLS_DIM], double l, double v[ECO_RLS_DIM])
{
    double M[ECO_RLS_DIM][ECO_RLS_DIM], best = 0.0;
    for (int i = 0; i < ECO_RLS_DIM; i++)
        for (int j = 0; j < ECO_RLS_DIM; j++)
            M[i][j] = A[i][j] - (i == j ? l : 0.0);
    for (int i = 0; i < ECO_RLS_DIM; i++) {
        const double *x = M[i], *y = M[(i + 1) % ECO_RLS_DIM];
        double c[ECO_RLS_DIM] = {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
                                 x[0] * y[1] - x[1] * y[0]};
        double n2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        if (n2 > best) {
            best = n2;
            for (int k = 0; k < ECO_RLS_DIM; k++)
                v[k] = c[k];
        }
    }
    if (!(best > 0.0) || !isfinite(best))
        return 0;
    double inv = 1.0 / sqrt(best);
    for (int k = 0; k < ECO_RLS_DIM; k++)
        v[k] *= inv;
    return 1;
}

/* Keeps P usable. Forgetting divides P by lambda at every sample, so directions the input does
 * not excite (a limit held constant) grow without bound ("covariance wind-up"). Their growth is
 * stopped at the prior's uncertainty: every eigenvalue of P is capped at p0 (P <= p0 I), which
 * leaves the excited directions, and so their forgetting, untouched (capping the trace instead
 * would shrink them too and turn forgetting off exactly where data arrives). The cap can only
 * bind when a Gershgorin row bound exceeds p0, so nothing more is computed otherwise; then the
 * eigenvalues come in closed form and each one above p0 is lowered to p0 along its own
 * eigenvector (P -= (d - p0) v v^T): constant cost per sample. A P that is no longer positive
 * definite or finite is reset to p0 I. */
static void guard_cov(struct eco_rls *r)
{
    double gersh = 0.0;
    for (int i = 0; i < ECO_RLS_DIM; i++) {
        if (!(r->P[i][i] > 0.0) || !isfinite(r->P[i][i])) {
            reset_cov(r);
            return;
        }
        double row = 0.0;
        for (int j = 0; j < ECO_RLS_DIM; j++)
            row += i == j ? r->P[i][i] : fabs(r->P[i][j]);
        gersh = row > gersh ? row : gersh;
    }
    if (gersh <= r->p0)
        return;
    double d[ECO_RLS_DIM];
    eig_values((const double(*)[ECO_RLS_DIM])r->P, d);
    if (!(d[2] > 0.0) || !isfinite(d[0])) { /* rounding pushed an eigenvalue to zero or below */
        reset_cov(r);
        return;
    }
    int nv = 0;
    while (nv < ECO_RLS_DIM && d[nv] > r->p0)
        nv++;
    if (nv == 0)
        return;
    if (nv == ECO_RLS_DIM) {
        reset_cov(r); /* every eigenvalue capped: P = p0 I */
        return;
    }
    /* One eigenvalue above p0: lower it along its eigenvector. Two (often equal: the two
     * unexcited directions of a held limit grow alike, where no single eigenvector is defined):
     * P = p0 I + (d2 - p0) v2 v2^T from the third, distinct one. */
    double l = nv == 1 ? d[0] : d[2], v[ECO_RLS_DIM];
    if (!eig_vector((const double(*)[ECO_RLS_DIM])r->P, l, v)) {
        reset_cov(r);
        return;
    }
    for (int i = 0; i < ECO_RLS_DIM; i++)
        for (int j = i; j < ECO_RLS_DIM; j++) {
            double x = nv == 1 ? r->P[i][j] - (d[0] - r->p0) * v[i] * v[j]
                               : (i == j ? r->p0 : 0.0) + (d[2] - r->p0) * v[i] * v[j];
            r->P[i][j] = x;
            r->P[j][i] = x;
        }
}

/* One sample's step for k estimators that share the covariance P (the same lambda, p0 and
 * inputs so far, as a job model's power and speed estimators do: P depends on the inputs
 * only): P's update and its guard are computed once for all of them, with the same values,
 * bit for bit, as k separate eco_rls_update calls. r[0]'s P, lambda and p0 are used. */
static void update_shared(struct eco_rls *const *r, int k, double x, const double *y)
{
    const double phi[ECO_RLS_DIM] = {1.0, x, x * x};
    struct eco_rls *r0 = r[0];
    double g[ECO_RLS_DIM]; /* P phi */
    double den = r0->lambda;
    for (int i = 0; i < ECO_RLS_DIM; i++) {
        g[i] = 0.0;
        for (int j = 0; j < ECO_RLS_DIM; j++)
            g[i] += r0->P[i][j] * phi[j];
        den += phi[i] * g[i];
    }
    if (!(den > 0.0) || !isfinite(den)) { /* P is no longer positive definite */
        for (int q = 0; q < k; q++)
            reset_cov(r[q]);
        return;
    }
    int ok[2];
    for (int q = 0; q < k; q++) {
        double pred = 0.0;
        for (int i = 0; i < ECO_RLS_DIM; i++)
            pred += phi[i] * r[q]->theta[i];
        double e = y[q] - pred, theta[ECO_RLS_DIM];
        for (int i = 0; i < ECO_RLS_DIM; i++)
            theta[i] = r[q]->theta[i] + g[i] / den * e;
        ok[q] = isfinite(theta[0]) && isfinite(theta[1]) && isfinite(theta[2]);
        if (ok[q])
            for (int i = 0; i < ECO_RLS_DIM; i++)
                r[q]->theta[i] = theta[i];
    }
    /* P = (P - g g^T / den) / lambda, computed on the upper triangle and mirrored so that P
     * stays exactly symmetric. */
    struct eco_rls cov = *r0;
    for (int i = 0; i < ECO_RLS_DIM; i++)
        for (int j = i; j < ECO_RLS_DIM; j++) {
            double v = (cov.P[i][j] - g[i] * g[j] / den) / cov.lambda;
            cov.P[i][j] = v;
            cov.P[j][i] = v;
        }
    guard_cov(&cov);
    for (int q = 0; q < k; q++) {
        if (ok[q])
            memcpy(r[q]->P, cov.P, sizeof cov.P);
        else
            reset_cov(r[q]); /* the guard leaves p0 I as it is */
        if (r[q]->n < UINT32_MAX)
            r[q]->n++;
    }
}

void eco_rls_update(struct eco_rls *r, double x, double y)
{
    if (!isfinite(x) || !isfinite(y))
        return;
    update_shared(&r, 1, x, &y);
}

/* Whether a and b share their covariance step (update_shared). */
static int same_cov(const struct eco_rls *a, const struct eco_rls *b)
{
    return a->lambda == b->lambda && a->p0 == b->p0 && !memcmp(a->P, b->P, sizeof a->P);
}

/* ---- per-job models ----------------------------------------------------------------------- */

/* 1 / (max - min), or 0 for a fixed limit (every limit maps to x = 0). */
static double inv_range(const struct eco_job_model *m)
{
    double range = m->max_limit_w - m->min_limit_w;
    return range > 0.0 ? 1.0 / range : 0.0;
}

static double norm_x(const struct eco_job_model *m, double limit_w, double inv)
{
    return clamp((limit_w - m->min_limit_w) * inv, 0.0, 1.0);
}

static double prior_speed(const struct eco_job_model *m, double limit_w)
{
    return m->max_limit_w > 0.0 ? cbrt(limit_w / m->max_limit_w) : 1.0;
}

void eco_job_model_init(struct eco_job_model *m, double min_limit_w, double max_limit_w,
                        double lambda)
{
    m->min_limit_w = min_limit_w;
    m->max_limit_w = max_limit_w > min_limit_w ? max_limit_w : min_limit_w;
    m->power_scale_w = m->max_limit_w;
    m->x_seen_lo = INFINITY;
    m->x_seen_hi = -INFINITY;
    eco_rls_init(&m->power, lambda, ECO_RLS_P0_DEFAULT);
    eco_rls_init(&m->speed, lambda, ECO_RLS_P0_DEFAULT);
    /* Start both estimators from the prior, so that the first samples correct it instead of
     * a zero curve: power / max = limit / max is linear in x; the speed prior is the quadratic
     * through its values at x = 0, 1/2, 1 (within 1.1 % of the cube root on the catalog's
     * ranges, the widest being the A100-SXM's 100-400 W). */
    double mx = m->max_limit_w > 0.0 ? m->max_limit_w : 1.0,
           range = m->max_limit_w - m->min_limit_w;
    m->power.theta[0] = m->min_limit_w / mx;
    m->power.theta[1] = range / mx;
    m->prior_static = m->power.theta[0];
    double s0 = prior_speed(m, m->min_limit_w), s1 = prior_speed(m, m->min_limit_w + range / 2),
           s2 = prior_speed(m, m->max_limit_w);
    m->speed.theta[0] = s0;
    m->speed.theta[1] = -3.0 * s0 + 4.0 * s1 - s2;
    m->speed.theta[2] = 2.0 * s0 - 4.0 * s1 + 2.0 * s2;
}

void eco_job_model_init_clock(struct eco_job_model *m, double min_mhz, double max_mhz,
                              double max_power_w, double lambda)
{
    eco_job_model_init(m, min_mhz, max_mhz, lambda);
    m->power_scale_w = max_power_w > 0.0 && isfinite(max_power_w) ? max_power_w : 1.0;
    m->prior_static = CLOCK_PRIOR_STATIC;
    m->power.theta[0] = CLOCK_PRIOR_STATIC;
    m->power.theta[1] = 1.0 - CLOCK_PRIOR_STATIC;
}

void eco_job_model_observe(struct eco_job_model *m, double limit_w, double power_w, double speed)
{
    if (!isfinite(limit_w) || !isfinite(power_w) || !isfinite(speed))
        return;
    double x = norm_x(m, limit_w, inv_range(m)),
           mx = m->power_scale_w > 0.0 ? m->power_scale_w : 1.0;
    struct eco_rls *both[2] = {&m->power, &m->speed};
    const double y[2] = {power_w / mx, speed};
    if (same_cov(&m->power, &m->speed)) {
        update_shared(both, 2, x, y);
    } else {
        eco_rls_update(&m->power, x, y[0]);
        eco_rls_update(&m->speed, x, y[1]);
    }
    if (x < m->x_seen_lo)
        m->x_seen_lo = x;
    if (x > m->x_seen_hi)
        m->x_seen_hi = x;
}

int eco_job_model_ready(const struct eco_job_model *m)
{
    return m->power.n >= READY_MIN_SAMPLES &&
           m->x_seen_hi - m->x_seen_lo >= READY_MIN_SPAN - READY_SPAN_EPS;
}

/* Prediction at a limit already clamped to [min, max]; `ready` and `inv` (inv_range) are
 * passed in so that the grid version computes them once. Both public functions go through
 * here, so they give bit-identical values. */
static void predict_at(const struct eco_job_model *m, int ready, double inv, double L,
                       double *power_w, double *speed)
{
    if (!ready) {
        /* the limit knob's prior is the limit itself (kept exact); a clock's is linear from
         * prior_static x scale at the floor to the scale at the top */
        *power_w = m->power_scale_w == m->max_limit_w
                       ? L
                       : m->power_scale_w *
                             (m->prior_static + (1.0 - m->prior_static) * norm_x(m, L, inv));
        *speed = prior_speed(m, L);
        return;
    }
    double x = norm_x(m, L, inv);
    double pw = clamp(eco_rls_predict(&m->power, x) * m->power_scale_w, 0.0,
                      POWER_MAX_FRAC * m->power_scale_w);
    double sp = clamp(eco_rls_predict(&m->speed, x), SPEED_MIN, SPEED_MAX);
    *power_w = pw == pw ? pw : L; /* NaN (not reached: theta stays finite) */
    *speed = sp == sp ? sp : SPEED_MIN;
}

void eco_job_model_predict(const struct eco_job_model *m, double limit_w, double *power_w,
                           double *speed)
{
    double L = clamp(isfinite(limit_w) ? limit_w : m->max_limit_w, m->min_limit_w, m->max_limit_w);
    double pw, sp;
    predict_at(m, eco_job_model_ready(m), inv_range(m), L, &pw, &sp);
    if (power_w)
        *power_w = pw;
    if (speed)
        *speed = sp;
}

/* The grid: min + k x step with step = (max - min) / (g - 1), the last point exactly max. */
static double grid_step(double min_w, double max_w, uint32_t g)
{
    return g > 1 ? (max_w - min_w) / (double)(g - 1) : 0.0;
}

static double grid_at(double min_w, double max_w, double step, uint32_t g, uint32_t k)
{
    return k + 1 >= g ? max_w : min_w + (double)k * step;
}

double eco_cap_grid_limit(double min_limit_w, double max_limit_w, uint32_t g, uint32_t k)
{
    return grid_at(min_limit_w, max_limit_w, grid_step(min_limit_w, max_limit_w, g), g, k);
}

void eco_job_model_predict_grid(const struct eco_job_model *m, uint32_t g, double *power_w,
                                double *speed)
{
    const struct eco_job_model mm = *m; /* a local copy: the stores below cannot alias it */
    int ready = eco_job_model_ready(&mm);
    double inv = inv_range(&mm), step = grid_step(mm.min_limit_w, mm.max_limit_w, g);
    if (!ready) {
        for (uint32_t k = 0; k < g; k++)
            predict_at(&mm, 0, inv, grid_at(mm.min_limit_w, mm.max_limit_w, step, g, k),
                       &power_w[k], &speed[k]);
        return;
    }
    /* predict_at's ready branch, written out branch-free so that it vectorises; the same
     * operations in the same order, hence the same values */
    const double lo = mm.min_limit_w, hi = mm.max_limit_w, sc = mm.power_scale_w,
                 pmax = POWER_MAX_FRAC * sc;
    const double p0 = mm.power.theta[0], p1 = mm.power.theta[1], p2 = mm.power.theta[2];
    const double s0 = mm.speed.theta[0], s1 = mm.speed.theta[1], s2 = mm.speed.theta[2];
    for (uint32_t k = 0; k < g; k++) {
        double L = k + 1 >= g ? hi : lo + (double)k * step;
        double x = (L - lo) * inv;
        x = x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
        double pw = (p0 + x * (p1 + x * p2)) * sc;
        pw = pw < 0.0 ? 0.0 : pw > pmax ? pmax : pw;
        double sp = s0 + x * (s1 + x * s2);
        sp = sp < SPEED_MIN ? SPEED_MIN : sp > SPEED_MAX ? SPEED_MAX : sp;
        power_w[k] = pw == pw ? pw : L; /* NaN (not reached: theta stays finite) */
        speed[k] = sp == sp ? sp : SPEED_MIN;
    }
}

void eco_job_model_predict_points(const struct eco_job_model *m, const double *limit_w, uint32_t n,
                                  double *power_w, double *speed)
{
    const struct eco_job_model mm = *m; /* a local copy: the stores below cannot alias it */
    int ready = eco_job_model_ready(&mm);
    double inv = inv_range(&mm);
    for (uint32_t k = 0; k < n; k++) {
        /* eco_job_model_predict's clamp, then predict_at: the same values */
        double L = clamp(isfinite(limit_w[k]) ? limit_w[k] : mm.max_limit_w, mm.min_limit_w,
                         mm.max_limit_w);
        predict_at(&mm, ready, inv, L, &power_w[k], &speed[k]);
    }
}

void eco_cap_predict_model(const void *ctx, double limit_w, double *power_w, double *speed)
{
    eco_job_model_predict(ctx, limit_w, power_w, speed);
}

/* The smallest x in [0, 1] with c0 + c1 x + c2 x^2 >= t, or 1 if there is none (the curve stays
 * below t on the whole range). */
static double first_reach(double c0, double c1, double c2, double t)
{
    double a = c0 - t;
    if (a >= 0.0)
        return 0.0;
    double best = 1.0;
    if (c2 == 0.0) {
        if (c1 > 0.0)
            best = fmin(1.0, -a / c1);
        return best;
    }
    double disc = c1 * c1 - 4.0 * c2 * a;
    if (disc < 0.0)
        return 1.0;
    /* numerically stable roots: q = -(c1 + sign(c1) sqrt(disc)) / 2, roots q / c2 and a / q */
    double q = -0.5 * (c1 + (c1 >= 0.0 ? sqrt(disc) : -sqrt(disc)));
    double r[2] = {q / c2, q != 0.0 ? a / q : INFINITY};
    for (int i = 0; i < 2; i++)
        if (r[i] >= 0.0 && r[i] < best)
            best = r[i];
    return best;
}

double eco_job_model_clock_floor(const struct eco_job_model *m, double min_power_w,
                                 const double *levels, uint32_t n_levels)
{
    double lo = m->min_limit_w, hi = m->max_limit_w, f = lo;
    if (hi > lo && isfinite(min_power_w)) {
        double sc = m->power_scale_w, c0, c1, c2 = 0.0;
        if (eco_job_model_ready(m)) { /* predict_at's ready branch, in W */
            c0 = m->power.theta[0] * sc;
            c1 = m->power.theta[1] * sc;
            c2 = m->power.theta[2] * sc;
        } else if (sc == hi) { /* the limit knob's prior: power = limit */
            c0 = lo;
            c1 = hi - lo;
        } else { /* the clock prior: linear from prior_static x scale to the scale */
            c0 = m->prior_static * sc;
            c1 = (1.0 - m->prior_static) * sc;
        }
        /* predictions are clamped to POWER_MAX_FRAC x scale: a higher minimum is never met */
        double x = min_power_w > POWER_MAX_FRAC * sc ? 1.0 : first_reach(c0, c1, c2, min_power_w);
        f = x >= 1.0 ? hi : lo + x * (hi - lo);
    }
    if (!levels || !n_levels)
        return f;
    /* the lowest level >= f (less a rounding slack of 1e-9 MHz) inside [lo, hi] */
    uint32_t a = 0, b = n_levels;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (levels[mid] < f - 1e-9)
            a = mid + 1;
        else
            b = mid;
    }
    return a < n_levels && levels[a] <= hi ? levels[a] : hi;
}
