/* SPDX-License-Identifier: MIT */
/* Power budget files: "time_s,watts" rows sorted by time (demand-response steps). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/csv.h"
#include "ecosched/sim.h"
#include "ecosched/trace.h"

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
