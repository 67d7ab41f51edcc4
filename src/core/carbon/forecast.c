/* SPDX-License-Identifier: MIT */
/* Forecasts of a grid signal (ecosched/carbon.h, docs/policies/carbon.md "Forecasts"). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/carbon.h"
#include "ecosched/rng.h"

/* Let's Wait Awhile's forecast error: 5 % (Wiesner et al., Middleware '21, section 5.1). */
#define DEFAULT_SIGMA 0.05
#define HOUR_S 3600.0
#define DAY_H 24
/* pi, for Box-Muller (M_PI is not ISO C) */
#define PI 3.14159265358979323846

int eco_forecast_parse(const char *spec, enum eco_forecast_kind *kind, double *sigma,
                       struct eco_error *err)
{
    *sigma = DEFAULT_SIGMA;
    if (!strcmp(spec, "oracle")) {
        *kind = ECO_FORECAST_ORACLE;
        return 0;
    }
    if (!strcmp(spec, "persist")) {
        *kind = ECO_FORECAST_PERSIST;
        return 0;
    }
    if (!strncmp(spec, "noisy", 5) && (spec[5] == '\0' || spec[5] == ':')) {
        *kind = ECO_FORECAST_NOISY;
        if (spec[5] == ':') {
            char *end;
            double s = strtod(spec + 6, &end);
            if (end == spec + 6 || *end || !(s >= 0 && s <= 1))
                return eco_errorf(err, -EINVAL,
                                  "'%s': the relative error after 'noisy:' must be a number in "
                                  "0..1 (0.05: 5 %%)",
                                  spec);
            *sigma = s;
        }
        return 0;
    }
    return eco_errorf(err, -EINVAL, "unknown forecast '%s' (known: noisy[:SIGMA], persist, oracle)",
                      spec);
}

/* A standard normal draw (Box-Muller). */
static double normal(struct eco_rng *r)
{
    double u1 = eco_rng_uniform(r), u2 = eco_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * PI * u2);
}

int eco_forecast_init(struct eco_forecast *f, enum eco_forecast_kind kind, double sigma,
                      const struct eco_signal *truth, uint64_t seed, struct eco_error *err)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->sigma = sigma;
    f->truth = truth;
    f->issue_hour = NAN;
    if (kind != ECO_FORECAST_NOISY)
        return 0;
    double *v = malloc(truth->n * sizeof *v);
    if (!v)
        return eco_errorf(err, -ENOMEM, "out of memory for a forecast of %zu pieces", truth->n);
    struct eco_rng r;
    eco_rng_init(&r, seed ^ 0xf0cca57ULL);
    for (size_t i = 0; i < truth->n; i++) {
        v[i] = truth->v[i] * (1.0 + sigma * normal(&r));
        if (truth->kind == ECO_SIGNAL_CARBON && v[i] < 0)
            v[i] = 0; /* an intensity is never negative, nor is its forecast */
    }
    int rc = eco_signal_build(&f->noisy, truth->kind, truth->t, v, truth->n, err);
    free(v);
    return rc;
}

void eco_forecast_fini(struct eco_forecast *f)
{
    eco_signal_free(&f->noisy);
}

/* persist: the profile of the 24 whole hours before the hour of `now`. */
static void persist_issue(struct eco_forecast *f, double now)
{
    double hour = floor(now / HOUR_S);
    if (hour == f->issue_hour)
        return;
    f->issue_hour = hour;
    f->day_cum[0] = 0;
    for (int h = 0; h < DAY_H; h++) {
        /* hour index (hour - 24 + h) holds the value the same hour of day had yesterday */
        double t = (hour - DAY_H + h) * HOUR_S;
        f->day[h] = eco_signal_value(f->truth, t);
        f->day_cum[h + 1] = f->day_cum[h] + f->day[h];
    }
}

/* Integral of the repeated profile from its start (the hour issue_hour - 24) to calendar time
 * t, value x seconds: whole days of the profile, then the hours and part of an hour left. */
static double persist_cum(const struct eco_forecast *f, double t)
{
    double p = t / HOUR_S - (f->issue_hour - DAY_H); /* hours since the profile's start */
    double days = floor(p / DAY_H);
    double rem = p - days * DAY_H;
    int h = (int)floor(rem);
    if (h >= DAY_H)
        h = DAY_H - 1;
    return (days * f->day_cum[DAY_H] + f->day_cum[h] + f->day[h] * (rem - h)) * HOUR_S;
}

double eco_forecast_mean(struct eco_forecast *f, double now, double a, double b)
{
    if (!(b > a))
        return eco_forecast_value(f, now, a);
    if (f->kind == ECO_FORECAST_ORACLE)
        return eco_signal_integral(f->truth, a, b) / (b - a);
    /* the past is measured: the truth before now, the forecast after it */
    double past = 0, fut = 0;
    if (a < now)
        past = eco_signal_integral(f->truth, a, b < now ? b : now);
    if (b > now) {
        double x = a > now ? a : now;
        if (f->kind == ECO_FORECAST_NOISY) {
            fut = eco_signal_integral(&f->noisy, x, b);
        } else {
            persist_issue(f, now);
            fut = persist_cum(f, b) - persist_cum(f, x);
        }
    }
    return (past + fut) / (b - a);
}

double eco_forecast_value(struct eco_forecast *f, double now, double t)
{
    if (t < now || f->kind == ECO_FORECAST_ORACLE)
        return eco_signal_value(f->truth, t);
    if (f->kind == ECO_FORECAST_NOISY)
        return eco_signal_value(&f->noisy, t);
    persist_issue(f, now);
    double p = t / HOUR_S - (f->issue_hour - DAY_H);
    double rem = p - floor(p / DAY_H) * DAY_H;
    int h = (int)floor(rem);
    return f->day[h < DAY_H ? h : DAY_H - 1];
}
