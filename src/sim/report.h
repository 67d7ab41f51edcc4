/* SPDX-License-Identifier: MIT */
/* The HTML report of simulator runs: one self-contained file (inline CSS, SVG plots, no
 * script, no external asset) drawn from the output directories of `ecosched sim --out`. */
#ifndef ECOSCHED_REPORT_H
#define ECOSCHED_REPORT_H

#include <stddef.h>
#include <stdio.h>
#include "ecosched/error.h"

/* One run: a directory holding summary.json, timeline.csv and jobs.csv, and the name it has
 * in the report's legends and table (both borrowed for the call). */
struct eco_report_run {
    const char *dir;
    const char *label;
};

struct eco_report_opts {
    const char *title;     /* page title; NULL: "ecosched simulation report" */
    const char *generator; /* e.g. "ecosched 0.1.0", shown in the footer; NULL: none */
};

/* Most runs one report holds (the plots' legends stay readable up to about this many). */
#define ECO_REPORT_MAX_RUNS 16

/* The file of a --compare output directory naming its runs' subdirectories, one a line, in
 * --compare order (`ecosched sim` writes it, the report keeps the order). */
#define ECO_REPORT_ORDER_FILE "compare.txt"

/* Writes DIR/compare.txt: the names, one a line. Returns 0 or -EINVAL (err names the file). */
int eco_report_save_order(const char *dir, const char *const *names, size_t n,
                          struct eco_error *err);

/* Lists the runs of `dir`: `dir` itself when it holds summary.json (label: its policy, read
 * later; here NULL), else every subdirectory holding one (label: the subdirectory's name), as
 * `ecosched sim --compare ... --out DIR` writes them: in the order of DIR/compare.txt when it
 * exists (the --compare order), the ones it does not name after them by name. *runs and the
 * strings in it are the caller's, freed with eco_report_runs_free. Returns 0, or -EINVAL
 * (err: no run found, or more than ECO_REPORT_MAX_RUNS), -ENOMEM, -errno (err says which). */
int eco_report_find_runs(const char *dir, struct eco_report_run **runs, size_t *n,
                         struct eco_error *err);
void eco_report_runs_free(struct eco_report_run *runs, size_t n); /* accepts NULL */

/* Reads every run's files, then writes the report to `out`. A run with a NULL label is named
 * after the `policy` of its summary. Nothing is written when a file is missing or bad: the
 * error names the file, line and field. Deterministic: same files, same bytes. Returns 0,
 * -EINVAL (bad or missing input), -ENOMEM, or -EIO (writing failed). */
int eco_report_write(FILE *out, const struct eco_report_run *runs, size_t n,
                     const struct eco_report_opts *opts, struct eco_error *err);

/* The report's style sheet (for pages beside it, as `ecosched advise`'s index.html). */
const char *eco_report_css(void);

#endif
