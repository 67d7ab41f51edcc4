/* SPDX-License-Identifier: MIT */
/* Interrupting shifting: the lowest-forecast pieces of a job's window that add up to its run
 * (Let's Wait Awhile with interruption, Wiesner et al., Middleware '21), shared by `lwa-int`
 * and `shift:interrupt=1`; and the `lwa-int` policy itself. docs/policies/carbon.md. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "ecosched/carbon.h"

/* Pieces of the signal looked at per job: a week of hourly steps plus the run's own (a
 * longer window is cut to its first MAX_PIECES pieces, a bound no bundled run reaches). */
#define MAX_PIECES 512

struct piece {
    double s, e, val, len; /* simulated [s, e), forecast mean, length taken (0: not taken) */
};

/* Runs (groups of adjacent taken pieces) among p[0..n). */
static size_t runs_of(const struct piece *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i].len > 0 && (i == 0 || !(p[i - 1].len > 0)))
            k++;
    return k;
}

/* Index order by forecast value, ties by time (a stable selection: n is small). */
static void order_by_value(const struct piece *p, size_t n, size_t *ord)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        while (k > 0 && p[ord[k - 1]].val > p[i].val)
            k--;
        for (size_t m = i; m > k; m--)
            ord[m] = ord[m - 1];
        ord[k] = i;
    }
}

/* The window's pieces, cut at the signal's step boundaries. */
static size_t pieces_of(const struct eco_carbon_view *v, double a, double b, struct piece *p)
{
    double step = v->step_s > 0 ? v->step_s : 3600;
    double now = v->epoch0_s + v->now_s;
    size_t n = 0;
    for (double s = a; s < b && n < MAX_PIECES;) {
        double cal = v->epoch0_s + s;
        double e = (floor(cal / step) + 1) * step - v->epoch0_s;
        if (e > b || n + 1 == MAX_PIECES)
            e = b;
        if (e <= s) /* rounding at a boundary: step on */
            e = s + step;
        p[n] = (struct piece){s, e, eco_forecast_mean(v->forecast, now, cal, v->epoch0_s + e), 0};
        n++;
        s = e;
    }
    return n;
}

size_t eco_carbon_lowest_runs(const struct eco_carbon_view *v, const struct eco_carbon_job *j,
                              struct eco_carbon_seg *out, size_t max, double *score)
{
    static const size_t none = (size_t)-1;
    struct piece p[MAX_PIECES];
    size_t ord[MAX_PIECES];
    double a = v->now_s, b = j->latest_start_s + j->run_s;
    size_t n = (max && j->run_s > 0 && b > a) ? pieces_of(v, a, b, p) : 0;
    if (n == 0) {
        if (max)
            out[0] = (struct eco_carbon_seg){a, a + j->run_s};
        if (score)
            *score = 0;
        return max ? 1 : 0;
    }
    order_by_value(p, n, ord);
    double taken = 0;
    size_t last = none;
    for (size_t r = 0; r < n; r++) {
        size_t i = ord[r];
        p[i].len = p[i].e - p[i].s;
        taken += p[i].len;
        last = i;
        double need = j->run_s + (double)(runs_of(p, n) - 1) * j->suspend_s;
        if (taken >= need) {
            p[i].len -= taken - need; /* the last piece in part */
            if (!(p[i].len > 0))
                p[i].len = 0;
            break;
        }
    }
    /* The part piece keeps the side that touches a taken neighbour (no extra suspension). */
    if (last != none && p[last].len < p[last].e - p[last].s) {
        int left = last > 0 && p[last - 1].len > 0;
        int right = last + 1 < n && p[last + 1].len > 0;
        if (right && !left)
            p[last].s = p[last].e - p[last].len;
        else
            p[last].e = p[last].s + p[last].len;
    }
    size_t k = 0;
    double sc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(p[i].len > 0))
            continue;
        sc += p[i].val * (p[i].e - p[i].s);
        if (k && out[k - 1].end_s == p[i].s)
            out[k - 1].end_s = p[i].e;
        else if (k == max)
            out[k - 1].end_s = p[i].e; /* out of room: the last run goes on through */
        else
            out[k++] = (struct eco_carbon_seg){p[i].s, p[i].e};
    }
    if (k == 0)
        out[k++] = (struct eco_carbon_seg){a, a + j->run_s};
    if (score)
        *score = sc;
    return k;
}

struct eco_carbon {
    int unused;
};

static struct eco_carbon *lwa_int_create(const struct eco_cluster *c, const char *params,
                                         struct eco_error *err)
{
    (void)c;
    if (params && *params) {
        eco_errorf(err, -EINVAL, "lwa-int takes no parameters (got '%s')", params);
        return NULL;
    }
    struct eco_carbon *p = calloc(1, sizeof *p);
    if (!p)
        eco_errorf(err, -ENOMEM, "out of memory");
    return p;
}

static void lwa_int_destroy(struct eco_carbon *p)
{
    free(p);
}

static size_t lwa_int_plan(struct eco_carbon *p, const struct eco_carbon_view *v,
                           const struct eco_carbon_job *j, struct eco_carbon_seg *out, size_t max)
{
    (void)p;
    return eco_carbon_lowest_runs(v, j, out, max, NULL);
}

static double lwa_int_release(struct eco_carbon *p, const struct eco_carbon_view *v,
                              const struct eco_carbon_job *j)
{
    struct eco_carbon_seg s[ECO_CARBON_MAX_SEGS];
    lwa_int_plan(p, v, j, s, ECO_CARBON_MAX_SEGS);
    return s[0].start_s;
}

const struct eco_carbon_ops eco_carbon_lwa_int = {
    .name = "lwa-int",
    .summary = "Let's Wait Awhile with interruption: each deferrable job runs in the\n"
               "lowest-forecast steps before its deadline that add up to its run",
    .create = lwa_int_create,
    .destroy = lwa_int_destroy,
    .release = lwa_int_release,
    .plan = lwa_int_plan,
};
