/* SPDX-License-Identifier: MIT */
/* Piecewise-constant grid signals and their exact integrals (ecosched/signal.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/signal.h"

/* Joules per kWh and per MWh. */
#define J_PER_KWH 3.6e6
#define J_PER_MWH 3.6e9
/* Grams per kilogram. */
#define G_PER_KG 1000.0

int eco_signal_build(struct eco_signal *s, enum eco_signal_kind kind, const double *t,
                     const double *v, size_t n, struct eco_error *err)
{
    memset(s, 0, sizeof *s);
    if (n == 0)
        return eco_errorf(err, -EINVAL, "a signal needs at least one piece");
    for (size_t i = 0; i <= n; i++) {
        if (!isfinite(t[i]))
            return eco_errorf(err, -EINVAL, "time %zu is not a finite number", i);
        if (i > 0 && !(t[i] > t[i - 1]))
            return eco_errorf(err, -EINVAL, "time %zu (%.17g) is not after time %zu (%.17g)", i,
                              t[i], i - 1, t[i - 1]);
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return eco_errorf(err, -EINVAL, "value %zu is not a finite number", i);
    s->t = malloc((n + 1) * sizeof *s->t);
    s->v = malloc(n * sizeof *s->v);
    s->cum = malloc((n + 1) * sizeof *s->cum);
    if (!s->t || !s->v || !s->cum) {
        eco_signal_free(s);
        return eco_errorf(err, -ENOMEM, "out of memory for a signal of %zu pieces", n);
    }
    memcpy(s->t, t, (n + 1) * sizeof *s->t);
    memcpy(s->v, v, n * sizeof *s->v);
    s->cum[0] = 0.0;
    for (size_t i = 0; i < n; i++)
        s->cum[i + 1] = s->cum[i] + v[i] * (t[i + 1] - t[i]);
    s->n = n;
    s->kind = kind;
    return 0;
}

void eco_signal_free(struct eco_signal *s)
{
    if (!s)
        return;
    free(s->t);
    free(s->v);
    free(s->cum);
    s->t = s->v = s->cum = NULL;
    s->n = 0;
}

double eco_signal_start(const struct eco_signal *s)
{
    return s->t[0];
}

double eco_signal_end(const struct eco_signal *s)
{
    return s->t[s->n];
}

int eco_signal_covers(const struct eco_signal *s, double a, double b)
{
    return s->n > 0 && a >= s->t[0] && b <= s->t[s->n] && a <= b;
}

/* The piece holding t (t inside the cover): the last i with t[i] <= t, at most n - 1. */
static size_t piece(const struct eco_signal *s, double t)
{
    /* Evenly spaced series (hourly signals) first: the piece t falls in at an even spacing,
     * or its neighbour, checked; else (gaps, uneven pieces) the binary search. */
    double x = (t - s->t[0]) / (s->t[s->n] - s->t[0]) * (double)s->n;
    size_t g = x > 0 ? (x < (double)(s->n - 1) ? (size_t)x : s->n - 1) : 0;
    for (size_t k = g > 0 ? g - 1 : g; k <= g + 1 && k < s->n; k++)
        if (s->t[k] <= t && (k + 1 == s->n || t < s->t[k + 1]))
            return k;
    size_t lo = 0, hi = s->n; /* t[lo] <= t < t[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static double clamp(const struct eco_signal *s, double t)
{
    return t < s->t[0] ? s->t[0] : (t > s->t[s->n] ? s->t[s->n] : t);
}

double eco_signal_value(const struct eco_signal *s, double t)
{
    return s->v[piece(s, clamp(s, t))];
}

/* Integral from t[0] to t, t inside the cover and in piece i. */
static double cumulative(const struct eco_signal *s, size_t i, double t)
{
    return s->cum[i] + s->v[i] * (t - s->t[i]);
}

double eco_signal_integral(const struct eco_signal *s, double a, double b)
{
    if (a == b)
        return 0.0;
    /* Within one piece the difference of two cumulative sums would round; v x (b - a) is
     * exact up to one rounding, so a constant signal gives energy x intensity exactly. */
    double ca = clamp(s, a), cb = clamp(s, b);
    size_t ia = piece(s, ca), ib = piece(s, cb);
    if (ia == ib)
        return s->v[ia] * (cb - ca);
    return cumulative(s, ib, cb) - cumulative(s, ia, ca);
}

double eco_signal_carbon_kg(const struct eco_signal *s, double w, double a, double b)
{
    return w * eco_signal_integral(s, a, b) / J_PER_KWH / G_PER_KG;
}

double eco_signal_cost(const struct eco_signal *s, double w, double a, double b)
{
    return w * eco_signal_integral(s, a, b) / J_PER_MWH;
}
