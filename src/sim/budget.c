/* SPDX-License-Identifier: MIT */
/* Power budget files: "time_s,watts" rows sorted by time (demand-response steps), and budget
 * steps that follow a grid signal's forecast (--power-budget-follow). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/csv.h"
#include "sim/sim.h"
#include "sim/trace.h"

/* A budget row is two numbers; 1 KiB is far more than any such line needs. */
#define LINE_MAX_BYTES 1024
/* 1e15 W, as --power-budget: a thousand times the world's power plants, so only a typo. */
#define MAX_WATTS 1e15

int eco_budget_load(const char *path, struct eco_budget_step **steps, size_t *n,
                    struct eco_error *err)
{
    *steps = NULL;
    *n = 0;
    struct eco_csv_file *f = NULL;
    int rc = eco_csv_open(path, LINE_MAX_BYTES, &f, err);
    if (rc)
        return rc;
    char *line;
    char *fields[4];
    size_t cap = 0, cnt = 0, lineno = 0, len;
    struct eco_budget_step *s = NULL;
    while ((rc = eco_csv_next(f, &line, &len, err)) == 1) {
        lineno = eco_csv_lineno(f);
        if (len == 0)
            continue;
        int nf = eco_csv_split(line, fields, 4);
        if (lineno == 1) {
            if (nf != 2 || strcmp(fields[0], "time_s") || strcmp(fields[1], "watts")) {
                rc = eco_errorf(err, -EINVAL, "%s:1: expected the header 'time_s,watts'", path);
                goto done;
            }
            continue;
        }
        if (nf != 2) {
            rc = eco_errorf(err, -EINVAL, "%s:%zu: expected 2 fields (time_s,watts), got %d", path,
                            lineno, nf < 0 ? 0 : nf);
            goto done;
        }
        double t, w;
        if (eco_parse_double(fields[0], &t) || t < 0 || t > ECO_TRACE_MAX_TIME_S) {
            rc = eco_errorf(err, -EINVAL,
                            "%s:%zu: column 'time_s': '%.64s' is not a number in "
                            "0..1e10 s",
                            path, lineno, fields[0]);
            goto done;
        }
        if (eco_parse_double(fields[1], &w) || !(w > 0)) {
            rc = eco_errorf(err, -EINVAL, "%s:%zu: column 'watts': '%.64s' is not a number > 0",
                            path, lineno, fields[1]);
            goto done;
        }
        if (w > MAX_WATTS) {
            rc = eco_errorf(err, -EINVAL, "%s:%zu: column 'watts': '%.64s' is outside 0..1e15 W",
                            path, lineno, fields[1]);
            goto done;
        }
        if (cnt && t <= s[cnt - 1].t_s) {
            rc = eco_errorf(err, -EINVAL,
                            "%s:%zu: column 'time_s': %s is not after the previous row's "
                            "%g (rows must be sorted by time)",
                            path, lineno, fields[0], s[cnt - 1].t_s);
            goto done;
        }
        if (cnt == cap) {
            cap = cap ? cap * 2 : 16;
            struct eco_budget_step *p = realloc(s, cap * sizeof *p);
            if (!p) {
                rc = -ENOMEM;
                goto done;
            }
            s = p;
        }
        s[cnt++] = (struct eco_budget_step){t, w};
    }
    if (rc < 0)
        goto done;
    rc = 0;
    if (cnt == 0) {
        rc = eco_errorf(err, -EINVAL, "%s: no budget rows after the header 'time_s,watts'", path);
        goto done;
    }
    *steps = s;
    *n = cnt;
    s = NULL;
done:
    free(s);
    eco_csv_close(f);
    return rc;
}

/* Demand response (docs/policies/powercap.md, "Demand response"): the budget follows a grid
 * signal's forecast. A day's forecast is issued at its midnight (UTC), day-ahead, hour by
 * hour; an hour whose forecast mean is above the PCT-th percentile (nearest rank) of that
 * day's hours gets LOW_W, the others HIGH_W. */
#define DAY_S 86400.0
#define HOUR_S 3600.0

int eco_budget_follow_parse(const char *spec, struct eco_budget_follow *out, struct eco_error *err)
{
    char buf[128], *save = NULL;
    if (strlen(spec) >= sizeof buf)
        return eco_errorf(err, -EINVAL, "'%.32s...' is too long", spec);
    strcpy(buf, spec);
    static const char *const part[] = {"HIGH_W", "LOW_W", "PCT"};
    double v[3];
    char *tok = strtok_r(buf, ":", &save);
    for (int i = 0; i < 3; i++, tok = strtok_r(NULL, ":", &save)) {
        if (!tok || eco_parse_double(tok, &v[i]))
            return eco_errorf(err, -EINVAL,
                              "'%s': %s is %s (expected HIGH_W:LOW_W:PCT[:carbon|price])", spec,
                              part[i], tok ? "not a number" : "missing");
    }
    out->which = 0;
    if (tok) {
        if (!strcmp(tok, "carbon"))
            out->which = 1;
        else if (!strcmp(tok, "price"))
            out->which = 2;
        else
            return eco_errorf(err, -EINVAL, "'%s': '%s' is not carbon or price", spec, tok);
        if (strtok_r(NULL, ":", &save))
            return eco_errorf(err, -EINVAL, "'%s': too many parts", spec);
    }
    if (!(v[0] > 0 && v[0] <= MAX_WATTS) || !(v[1] > 0 && v[1] <= v[0]))
        return eco_errorf(err, -EINVAL,
                          "'%s': want 0 < LOW_W <= HIGH_W <= 1e15 W (LOW_W is the guaranteed "
                          "floor)",
                          spec);
    if (!(v[2] >= 0 && v[2] <= 100))
        return eco_errorf(err, -EINVAL, "'%s': PCT %g is not a percentile in 0..100", spec, v[2]);
    out->high_w = v[0];
    out->low_w = v[1];
    out->pct = v[2];
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Appends (t, w) unless w is the last step's; 0 or -ENOMEM. */
static int push_step(struct eco_budget_step **s, size_t *n, size_t *cap, double t, double w)
{
    if (*n && (*s)[*n - 1].watts == w)
        return 0;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct eco_budget_step *p = realloc(*s, nc * sizeof *p);
        if (!p)
            return -ENOMEM;
        *s = p;
        *cap = nc;
    }
    (*s)[(*n)++] = (struct eco_budget_step){t, w};
    return 0;
}

int eco_budget_follow(const struct eco_budget_follow *bf, struct eco_forecast *f, double epoch0_s,
                      struct eco_budget_step **steps, size_t *n)
{
    const struct eco_signal *sig = f->truth;
    *steps = NULL;
    *n = 0;
    struct eco_budget_step *s = NULL;
    size_t cnt = 0, cap = 0;
    int rc = 0;
    double a = sig->t[0], b = sig->t[sig->n];
    for (double d = floor(epoch0_s / DAY_S) * DAY_S; d < b; d += DAY_S) {
        double v[24], sorted[24];
        int k = 0;
        for (int h = 0; h < 24; h++) {
            double h0 = d + h * HOUR_S, h1 = h0 + HOUR_S;
            v[h] = NAN;
            if (h0 >= a && h1 <= b)
                sorted[k++] = v[h] = eco_forecast_mean(f, d, h0, h1);
        }
        if (k == 0)
            continue;
        qsort(sorted, (size_t)k, sizeof *sorted, cmp_double);
        int rank = (int)ceil(bf->pct / 100.0 * k) - 1;
        double thr = sorted[rank < 0 ? 0 : rank];
        for (int h = 0; h < 24; h++) {
            double t = d + h * HOUR_S - epoch0_s;
            if (isnan(v[h]) || t + HOUR_S <= 0)
                continue;
            if ((rc =
                     push_step(&s, &cnt, &cap, t > 0 ? t : 0, v[h] > thr ? bf->low_w : bf->high_w)))
                goto done;
        }
    }
    if (cnt == 0 && (rc = push_step(&s, &cnt, &cap, 0, bf->high_w)))
        goto done;
    s[0].t_s = 0; /* the first step holds from the start */
    *steps = s;
    *n = cnt;
    s = NULL;
done:
    free(s);
    return rc;
}
