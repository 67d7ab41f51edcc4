/* SPDX-License-Identifier: MIT */
/* Grid signals: a piecewise-constant series over calendar time (hourly carbon intensity in
 * gCO2eq/kWh, an electricity price per MWh), and its exact integral, so that carbon and cost are
 * integrated over the same constant-power pieces as energy. Times are seconds since the Unix
 * epoch (UTC) as doubles: at 2e9 s a double resolves 0.25 microseconds. Pure: the file reader is
 * at the edge (util/grid_signal.h). */
#ifndef ECOSCHED_SIGNAL_H
#define ECOSCHED_SIGNAL_H

#include <stddef.h>
#include "ecosched/error.h"

/* What a series measures. */
enum eco_signal_kind {
    ECO_SIGNAL_CARBON = 0, /* gCO2eq per kWh */
    ECO_SIGNAL_PRICE = 1,  /* currency per MWh */
};

#define ECO_SIGNAL_NAME_MAX 64

struct eco_signal {
    enum eco_signal_kind kind;
    char column[ECO_SIGNAL_NAME_MAX]; /* the column read ("carbon_lca_gco2eq_per_kwh") */
    char currency[8];                 /* price: upper-case currency code ("AUD"); "" carbon */
    size_t n;                         /* pieces */
    double *t;                        /* n + 1 times: piece i is [t[i], t[i + 1]) */
    double *v;                        /* n values */
    double *cum;                      /* n + 1: cum[i] = integral of the series from t[0] to t[i] */
    size_t gaps;                      /* pieces whose value was missing, held from the one before */
};

/* Builds a series of n >= 1 pieces: piece i holds v[i] over [t[i], t[i + 1]) (t has n + 1
 * increasing finite times, v n finite values), copied. Returns 0, -EINVAL (err says which
 * index is wrong) or -ENOMEM. Free with eco_signal_free. */
int eco_signal_build(struct eco_signal *s, enum eco_signal_kind kind, const double *t,
                     const double *v, size_t n, struct eco_error *err);
void eco_signal_free(struct eco_signal *s);

/* Start and end of the series' cover. */
double eco_signal_start(const struct eco_signal *s);
double eco_signal_end(const struct eco_signal *s);
/* 1 when [a, b] lies inside the series' cover. */
int eco_signal_covers(const struct eco_signal *s, double a, double b);
/* The value at time t (the piece holding t; the last piece at its end time); t is clamped to
 * the cover, so callers check eco_signal_covers once for the whole run. */
double eco_signal_value(const struct eco_signal *s, double t);
/* The exact integral of the series from a to b (value x seconds; negative when b < a); times
 * are clamped to the cover. Constant power P over [a, b] then weighs P x integral: see
 * eco_signal_carbon_kg and eco_signal_cost for the units. */
double eco_signal_integral(const struct eco_signal *s, double a, double b);

/* Carbon (kg CO2eq) of constant power w watts over [a, b] under a carbon series: W x s =
 * J, J / 3.6e6 = kWh, x g/kWh = g, / 1000 = kg. */
double eco_signal_carbon_kg(const struct eco_signal *s, double w, double a, double b);
/* Cost (in the series' currency) of constant power w watts over [a, b] under a price series
 * per MWh: J / 3.6e9 = MWh. */
double eco_signal_cost(const struct eco_signal *s, double w, double a, double b);

#endif
