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
/* The longest slack a deferrable job may ask for, seconds: a month, for ecoschedd's max_delay
 * and powerd's `ecosched:max-delay=`. Longer is a job to submit later, not a deferral, and a
 * typo in units (6d meant 6h) is caught at a plausible size; it also bounds what one job's
 * deferral costs a carbon policy (its candidate starts and bookings). */
#define ECO_MAX_DELAY_S (31.0 * 86400)
/* 0 when s is a slack in 0..ECO_MAX_DELAY_S (not NaN, not inf), else -EINVAL with err
 * "FIELD must be seconds 0..2678400 (31 days)", FIELD as the caller names it. */
int eco_check_max_delay(const char *field, double s, struct eco_error *err);
/* Formats epoch seconds as "YYYY-MM-DDTHH:MM:SSZ" (whole seconds, rounded down) into buf. */
void eco_format_utc(double t, char *buf, size_t size);

/* Bounds on what a signal file may hold (docs/formats/grid-signal.md, "Limits"); a value
 * outside is an error naming file, line and column, so that no carbon or cost figure can
 * overflow to infinity or NaN downstream.
 * Carbon intensity, gCO2eq/kWh, 0..5000: the dirtiest generation, coal, emits 820 g/kWh over
 * its life cycle (IPCC AR5 median), and the bundled EIA-930 series stay under 1,100
 * (data/grid_signals/us_eia930_2022/README.md; their maximum is 749); 5000 leaves room for
 * marginal-emission figures and refuses a value given in another unit (g/MWh). */
#define ECO_SIGNAL_CARBON_MAX_G_PER_KWH 5000.0
/* Price, in the file's currency per MWh, -1e7..1e7 (-10,000..10,000 per kWh): the bundled
 * markets range from -601.7 AUD/MWh (AEMO VIC1) to 16,600 AUD/MWh (AEMO's market price cap,
 * FY2023-24) and from -440.1 to 871 EUR/MWh (Energinet DK1; the READMEs in data/grid_signals/);
 * the bound is far wider, for currencies with small units (JPY, KRW: hundreds per kWh), and
 * still keeps every cost finite. Negative prices are real: markets have negative hours. */
#define ECO_SIGNAL_PRICE_MAX_PER_MWH 1e7
/* Most text a signal file may hold after decompression: 64 MiB. A year of hourly rows is about
 * 0.3 MB (the bundled EIA-930 files: 0.27 MB; five years of AEMO prices: 2.1 MB), so 64 MiB
 * holds decades of 5-minute rows, and a gzip bomb stops there (977 KB inflate to ~1 GB). */
#define ECO_SIGNAL_MAX_BYTES (64ull << 20)
/* Most data rows: 2,000,000, 19 years of 5-minute data; the reader keeps every row (24 bytes
 * each with the series' prefix sums). */
#define ECO_SIGNAL_MAX_ROWS 2000000

/* Reads a signal of `kind` from path. The value column is `column` when given, else the first
 * column whose name is a quantity of that kind with a known unit: carbon `carbon*_gco2eq_per_kwh`
 * (or `_gco2_per_kwh`), price `price_<currency>_per_mwh` (or `_per_kwh`, scaled to per MWh).
 * Each row's piece lasts until the next row's time; the last lasts as long as the one before.
 * An empty value is a gap: the previous piece's value is held (counted in s->gaps); the first
 * value may not be empty. Values must lie within the bounds above; the file must be a regular
 * file of at most ECO_SIGNAL_MAX_BYTES (after decompression) and ECO_SIGNAL_MAX_ROWS rows.
 * Errors name file, line and column: 0, -ENOENT, -EINVAL, -EIO, -EFBIG, -ENOMEM. */
int eco_grid_signal_read(const char *path, enum eco_signal_kind kind, const char *column,
                         struct eco_signal *s, struct eco_error *err);

#endif
