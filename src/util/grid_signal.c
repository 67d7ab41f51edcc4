/* SPDX-License-Identifier: MIT */
/* Grid-signal CSV files and ISO 8601 UTC times (util/grid_signal.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/csv.h"
#include "util/grid_signal.h"

/* Longest line accepted: the bundled files' rows are under 100 bytes; 64 KiB leaves room for
 * wide files with many columns. */
#define SIGNAL_MAX_LINE 65536
/* Columns of a row looked at; more are allowed and ignored. */
#define SIGNAL_MAX_COLS 64
#define SECONDS_PER_DAY 86400.0

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int days_in_month(int y, int m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

/* n digits at *p into *v; advances *p. */
static int digits(const char **p, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        x = x * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *v = x;
    return 0;
}

int eco_parse_utc(const char *s, double *out, struct eco_error *err)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0, sec = 0;
    double frac = 0.0;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return eco_errorf(err, -EINVAL, "'%.40s' is not an ISO 8601 time (YYYY-MM-DDTHH:MM:SSZ)",
                          s);
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return eco_errorf(err, -EINVAL, "'%.40s': no such date", s);
    if (*p == '\0')
        goto done; /* a date alone: its midnight, UTC */
    if (*p != 'T' && *p != ' ')
        return eco_errorf(err, -EINVAL, "'%.40s': expected 'T' after the date", s);
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi))
        return eco_errorf(err, -EINVAL, "'%.40s': expected HH:MM after the date", s);
    if (*p == ':') {
        p++;
        if (digits(&p, 2, &sec))
            return eco_errorf(err, -EINVAL, "'%.40s': expected two digits of seconds", s);
        if (*p == '.') {
            double scale = 0.1;
            p++;
            if (!isdigit((unsigned char)*p))
                return eco_errorf(err, -EINVAL, "'%.40s': expected digits after '.'", s);
            while (isdigit((unsigned char)*p)) {
                frac += (*p++ - '0') * scale;
                scale /= 10;
            }
        }
    }
    if (h > 23 || mi > 59 || sec > 59)
        return eco_errorf(err, -EINVAL, "'%.40s': no such time of day", s);
    if (strcmp(p, "Z") != 0 && strcmp(p, "+00:00") != 0)
        return eco_errorf(err, -EINVAL, "'%.40s': the time must be UTC, ending in 'Z' or '+00:00'",
                          s);
done:
    *out = (double)days_from_civil(y, (unsigned)mo, (unsigned)d) * SECONDS_PER_DAY + h * 3600.0 +
           mi * 60.0 + sec + frac;
    return 0;
}

int eco_parse_duration(const char *s, double *out, struct eco_error *err)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v < 0 || isspace((unsigned char)*s))
        return eco_errorf(err, -EINVAL,
                          "'%.40s' is not a duration (a number >= 0 with s, m, h or d: 6h, 90m)",
                          s);
    double unit = 1;
    if (*end && end[1] == '\0') {
        switch (*end) {
        case 's':
            unit = 1;
            break;
        case 'm':
            unit = 60;
            break;
        case 'h':
            unit = 3600;
            break;
        case 'd':
            unit = 86400;
            break;
        default:
            return eco_errorf(err, -EINVAL, "'%.40s': unknown unit '%c' (s, m, h or d)", s, *end);
        }
    } else if (*end) {
        return eco_errorf(err, -EINVAL,
                          "'%.40s' is not a duration (a number >= 0 with s, m, h or d: 6h, 90m)",
                          s);
    }
    if (!isfinite(v * unit)) /* 1e306d: finite as a number, infinite in seconds */
        return eco_errorf(err, -EINVAL, "'%.40s' is too long a duration", s);
    *out = v * unit;
    return 0;
}

int eco_check_max_delay(const char *field, double s, struct eco_error *err)
{
    if (s >= 0 && s <= ECO_MAX_DELAY_S)
        return 0;
    return eco_errorf(err, -EINVAL, "%s must be seconds 0..%.0f (31 days)", field, ECO_MAX_DELAY_S);
}

void eco_format_utc(double t, char *buf, size_t size)
{
    int64_t secs = (int64_t)floor(t);
    int64_t z = (secs >= 0 ? secs : secs - 86399) / 86400; /* days, rounded down */
    int64_t rem = secs - z * 86400;
    /* civil_from_days (H. Hinnant) */
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2;
    snprintf(buf, size, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m, d, (int)(rem / 3600),
             (int)(rem / 60 % 60), (int)(rem % 60));
}

/* 1 when `name` ends with `suffix`. */
static int ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

/* The value column's scale to the series' unit (1, or 1000 for a price per kWh), or 0 when
 * `name` is no quantity of `kind`; a price's currency goes to cur. */
static double unit_scale(const char *name, enum eco_signal_kind kind, char *cur, size_t cursz)
{
    if (kind == ECO_SIGNAL_CARBON) {
        if (strncmp(name, "carbon", 6) == 0 &&
            (ends_with(name, "_gco2eq_per_kwh") || ends_with(name, "_gco2_per_kwh")))
            return 1.0;
        return 0.0;
    }
    double scale = ends_with(name, "_per_mwh") ? 1.0 : (ends_with(name, "_per_kwh") ? 1000.0 : 0);
    if (scale == 0.0 || strncmp(name, "price_", 6) != 0)
        return 0.0;
    const char *c = name + 6, *e = strstr(c, "_per_");
    size_t len = (size_t)(e - c);
    if (len == 0 || len >= cursz)
        return 0.0;
    for (size_t i = 0; i < len; i++) {
        if (!isalpha((unsigned char)c[i]))
            return 0.0;
        cur[i] = (char)toupper((unsigned char)c[i]);
    }
    cur[len] = '\0';
    return scale;
}

static const char *kind_name(enum eco_signal_kind kind)
{
    return kind == ECO_SIGNAL_CARBON ? "carbon" : "price";
}

/* A value (raw as written, v in the series' unit) outside its kind's bounds: -EINVAL naming
 * file, line, column and the range in the column's own unit. */
static int check_range(enum eco_signal_kind kind, double raw, double v, double scale,
                       const char *path, unsigned long ln, int vcol, const char *colname,
                       struct eco_error *err)
{
    double hi =
        kind == ECO_SIGNAL_CARBON ? ECO_SIGNAL_CARBON_MAX_G_PER_KWH : ECO_SIGNAL_PRICE_MAX_PER_MWH;
    double lo = kind == ECO_SIGNAL_CARBON ? 0 : -hi;
    if (v >= lo && v <= hi)
        return 0;
    return eco_errorf(err, -EINVAL,
                      "%s:%lu: column %d (%s): %g is outside %g..%g: not a %s (the bounds are in "
                      "docs/formats/grid-signal.md)",
                      path, ln, vcol + 1, colname, raw, lo / scale, hi / scale,
                      kind == ECO_SIGNAL_CARBON ? "carbon intensity in gCO2eq/kWh"
                                                : "price a market sets");
}

int eco_grid_signal_read(const char *path, enum eco_signal_kind kind, const char *column,
                         struct eco_signal *s, struct eco_error *err)
{
    struct eco_csv_file *f = NULL;
    char *line, *fld[SIGNAL_MAX_COLS], cur[8] = "", colname[ECO_SIGNAL_NAME_MAX] = "";
    size_t len, n = 0, cap = 0, gaps = 0;
    double *t = NULL, *v = NULL, scale = 0.0;
    int rc, vcol = -1, nf;
    memset(s, 0, sizeof *s);
    if ((rc = eco_csv_open(path, SIGNAL_MAX_LINE, &f, err)) < 0)
        return rc;
    eco_csv_set_max_bytes(f, ECO_SIGNAL_MAX_BYTES, "a grid-signal file");
    rc = eco_csv_next(f, &line, &len, err);
    if (rc <= 0) {
        rc = rc < 0 ? rc : eco_errorf(err, -EINVAL, "%s: empty file, expected a header line", path);
        goto out;
    }
    if ((unsigned char)line[0] == 0xef && (unsigned char)line[1] == 0xbb &&
        (unsigned char)line[2] == 0xbf)
        line += 3; /* a UTF-8 byte-order mark */
    nf = eco_csv_split(line, fld, SIGNAL_MAX_COLS);
    if (nf < 0 || nf > SIGNAL_MAX_COLS) {
        rc =
            eco_errorf(err, -EINVAL, "%s:1: malformed header (more than %d columns or a bad quote)",
                       path, SIGNAL_MAX_COLS);
        goto out;
    }
    if (strcmp(fld[0], "time_utc") != 0) {
        rc = eco_errorf(err, -EINVAL, "%s:1: column 1: expected 'time_utc' first, got '%.40s'",
                        path, fld[0]);
        goto out;
    }
    for (int i = 1; i < nf && vcol < 0; i++) {
        char c8[8] = "";
        double sc = unit_scale(fld[i], kind, c8, sizeof c8);
        if (column ? strcmp(fld[i], column) == 0 : sc > 0) {
            if (sc == 0) {
                rc = eco_errorf(err, -EINVAL,
                                "%s:1: column %d ('%s'): not a %s column with a known unit "
                                "(carbon*_gco2eq_per_kwh, price_<currency>_per_mwh)",
                                path, i + 1, fld[i], kind_name(kind));
                goto out;
            }
            vcol = i;
            scale = sc;
            memcpy(cur, c8, sizeof cur);
            snprintf(colname, sizeof colname, "%s", fld[i]);
        }
    }
    if (vcol < 0) {
        rc = column ? eco_errorf(err, -EINVAL, "%s:1: no column named '%s'", path, column)
                    : eco_errorf(err, -EINVAL, "%s:1: no %s column: expected a name like %s", path,
                                 kind_name(kind),
                                 kind == ECO_SIGNAL_CARBON ? "carbon_gco2eq_per_kwh"
                                                           : "price_eur_per_mwh");
        goto out;
    }
    while ((rc = eco_csv_next(f, &line, &len, err)) == 1) {
        unsigned long ln = eco_csv_lineno(f);
        if (len == 0)
            continue;
        nf = eco_csv_split(line, fld, SIGNAL_MAX_COLS);
        if (nf < 0) {
            rc = eco_errorf(err, -EINVAL, "%s:%lu: malformed quoted field", path, ln);
            goto out;
        }
        if (n == ECO_SIGNAL_MAX_ROWS) {
            rc = eco_errorf(err, -EFBIG, "%s:%lu: more than %d data rows: the limit for a signal",
                            path, ln, ECO_SIGNAL_MAX_ROWS);
            goto out;
        }
        if (nf <= vcol) {
            rc = eco_errorf(err, -EINVAL, "%s:%lu: %d fields, the value column '%s' is field %d",
                            path, ln, nf, colname, vcol + 1);
            goto out;
        }
        if (n + 2 > cap) {
            size_t nc = cap ? 2 * cap : 1024;
            double *nt = realloc(t, nc * sizeof *t), *nv = nt ? realloc(v, nc * sizeof *v) : NULL;
            if (nt)
                t = nt;
            if (!nv) {
                rc = eco_errorf(err, -ENOMEM, "%s:%lu: out of memory", path, ln);
                goto out;
            }
            v = nv;
            cap = nc;
        }
        struct eco_error e2;
        if (eco_parse_utc(fld[0], &t[n], &e2) < 0) {
            rc = eco_errorf(err, -EINVAL, "%s:%lu: column 1 (time_utc): %s", path, ln, e2.msg);
            goto out;
        }
        if (n > 0 && !(t[n] > t[n - 1])) {
            char a[32], b[32];
            eco_format_utc(t[n], a, sizeof a);
            eco_format_utc(t[n - 1], b, sizeof b);
            rc = eco_errorf(err, -EINVAL,
                            "%s:%lu: column 1 (time_utc): %s is not after the row before (%s): "
                            "rows must be in increasing time",
                            path, ln, a, b);
            goto out;
        }
        if (fld[vcol][0] == '\0') {
            if (n == 0) {
                rc = eco_errorf(err, -EINVAL,
                                "%s:%lu: column %d (%s): the first value is missing (a gap holds "
                                "the value before it, and there is none)",
                                path, ln, vcol + 1, colname);
                goto out;
            }
            v[n] = v[n - 1];
            gaps++;
        } else if (eco_parse_double(fld[vcol], &v[n]) < 0) {
            rc = eco_errorf(err, -EINVAL, "%s:%lu: column %d (%s): '%.40s' is not a number", path,
                            ln, vcol + 1, colname, fld[vcol]);
            goto out;
        } else {
            double raw = v[n];
            v[n] *= scale;
            if (kind == ECO_SIGNAL_CARBON && v[n] < 0) {
                rc = eco_errorf(err, -EINVAL,
                                "%s:%lu: column %d (%s): %g: carbon intensity cannot be negative",
                                path, ln, vcol + 1, colname, v[n]);
                goto out;
            }
            if ((rc = check_range(kind, raw, v[n], scale, path, ln, vcol, colname, err)) < 0)
                goto out;
        }
        n++;
    }
    if (rc < 0)
        goto out;
    if (n < 2) {
        rc = eco_errorf(err, -EINVAL,
                        "%s: %zu data row%s: a signal needs at least two (the step between "
                        "rows sets the last one's length)",
                        path, n, n == 1 ? "" : "s");
        goto out;
    }
    t[n] = t[n - 1] + (t[n - 1] - t[n - 2]);
    if ((rc = eco_signal_build(s, kind, t, v, n, err)) < 0)
        goto out;
    s->gaps = gaps;
    snprintf(s->column, sizeof s->column, "%s", colname);
    memcpy(s->currency, cur, sizeof s->currency);
out:
    free(t);
    free(v);
    eco_csv_close(f);
    return rc;
}
