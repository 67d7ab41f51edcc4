/* SPDX-License-Identifier: MIT */
/* Power budget files: "time_s,watts" rows sorted by time (demand-response steps). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/csv.h"
#include "ecosched/sim.h"

int eco_budget_load(const char *path, struct eco_budget_step **steps, size_t *n,
                    struct eco_error *err)
{
    *steps = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        eco_error_set(err, "%s: cannot open: %s", path, strerror(e));
        return -ENOENT;
    }
    char line[1024];
    char *fields[4];
    size_t cap = 0, cnt = 0, lineno = 0;
    struct eco_budget_step *s = NULL;
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '\n' || (line[0] == '\r' && line[1] == '\n'))
            continue;
        int nf = eco_csv_split(line, fields, 4);
        if (lineno == 1) {
            if (nf != 2 || strcmp(fields[0], "time_s") || strcmp(fields[1], "watts")) {
                rc = eco_error_set(err, "%s:1: expected the header 'time_s,watts'", path);
                goto done;
            }
            continue;
        }
        if (nf != 2) {
            rc = eco_error_set(err, "%s:%zu: expected 2 fields (time_s,watts), got %d", path,
                               lineno, nf < 0 ? 0 : nf);
            goto done;
        }
        double t, w;
        if (eco_parse_double(fields[0], &t) || t < 0) {
            rc = eco_error_set(err, "%s:%zu: column 'time_s': '%s' is not a number >= 0", path,
                               lineno, fields[0]);
            goto done;
        }
        if (eco_parse_double(fields[1], &w) || !(w > 0)) {
            rc = eco_error_set(err, "%s:%zu: column 'watts': '%s' is not a number > 0", path,
                               lineno, fields[1]);
            goto done;
        }
        if (cnt && t <= s[cnt - 1].t_s) {
            rc = eco_error_set(err, "%s:%zu: column 'time_s': %s is not after the previous row's "
                                    "%g (rows must be sorted by time)", path, lineno, fields[0],
                               s[cnt - 1].t_s);
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
    if (ferror(f)) {
        rc = eco_error_set(err, "%s: read error", path);
        goto done;
    }
    if (cnt == 0) {
        rc = eco_error_set(err, "%s: no budget rows after the header 'time_s,watts'", path);
        goto done;
    }
    *steps = s;
    *n = cnt;
    s = NULL;
done:
    free(s);
    fclose(f);
    return rc;
}
