/* SPDX-License-Identifier: MIT */
/* Grid-signal files (docs/formats/grid-signal.md): `time_utc,<quantity>_<unit>[,...]` CSV, plain
 * or gzip, one row per piece (the start of its hour), read into an eco_signal with the same
 * file:line:column errors as the trace readers; and the ISO 8601 UTC times they and
 * `--trace-start` use. */
#ifndef ECOSCHED_UTIL_GRID_SIGNAL_H
#define ECOSCHED_UTIL_GRID_SIGNAL_H

#include "ecosched/error.h"
#include "ecosched/signal.h"

/* Parses an ISO 8601 UTC time, "YYYY-MM-DDTHH:MM[:SS[.frac]]" followed by "Z" or "+00:00" (a
 * space may stand for the T; a date alone is its midnight), into seconds since the Unix epoch.
 * Returns 0 and sets *out, or -EINVAL with err saying what is wrong (the caller adds where). */
int eco_parse_utc(const char *s, double *out, struct eco_error *err);
/* Parses a duration: a number >= 0 with an optional unit s, m (minutes), h or d ("6h", "90m",
 * "1.5d", "3600"), into seconds; one that is infinite in seconds (1e306d) is refused. 0 or
 * -EINVAL with err saying what is wrong. */
int eco_parse_duration(const char *s, double *out, struct eco_error *err);
/* Formats epoch seconds as "YYYY-MM-DDTHH:MM:SSZ" (whole seconds, rounded down) into buf. */
void eco_format_utc(double t, char *buf, size_t size);

/* Reads a signal of `kind` from path. The value column is `column` when given, else the first
 * column whose name is a quantity of that kind with a known unit: carbon `carbon*_gco2eq_per_kwh`
 * (or `_gco2_per_kwh`), price `price_<currency>_per_mwh` (or `_per_kwh`, scaled to per MWh).
 * Each row's piece lasts until the next row's time; the last lasts as long as the one before.
 * An empty value is a gap: the previous piece's value is held (counted in s->gaps); the first
 * value may not be empty. Errors name file, line and column: 0, -ENOENT, -EINVAL, -EIO, -ENOMEM. */
int eco_grid_signal_read(const char *path, enum eco_signal_kind kind, const char *column,
                         struct eco_signal *s, struct eco_error *err);

#endif
