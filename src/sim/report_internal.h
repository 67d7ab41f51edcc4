/* SPDX-License-Identifier: MIT */
/* Internals of the HTML report: what is read from one run's files (report_data.c) and drawn
 * (report.c). */
#ifndef ECOSCHED_REPORT_INTERNAL_H
#define ECOSCHED_REPORT_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include "sim/report.h"

/* Width of a time plot's data area in SVG units, and so the number of M4 bins per series:
 * one bin per unit keeps the drawn line exact at the plot's full size (M4, below). */
#define RPT_COLS 800

/* The timeline columns drawn over time. */
enum { TS_POWER, TS_BUDGET, TS_BUSY, TS_NODES, TS_QUEUED, TS_N };

/* The energy parts of summary.json's energy_j object, in drawing order. */
#define RPT_PARTS 5
extern const char *const eco_report__part_key[RPT_PARTS];
extern const char *const eco_report__part_label[RPT_PARTS];

/* One bin of the M4 aggregation (Jugel et al., "M4: A Visualization-Oriented Time Series Data
 * Aggregation", PVLDB 7(10), 2014): the first, lowest, highest and last value of a step
 * series over the bin's time span, with where the extremes occur. Drawing these four points
 * per pixel column gives the same pixels as drawing every row. */
struct eco_report_bin {
    double first, lo, hi, last;
    double x_lo, x_hi; /* positions (in bins) where lo and hi were first reached */
    int used;
};

struct eco_report_data {
    const char *label; /* borrowed: the caller's, or a string inside summary */
    json_t *summary;
    double avg_jct_s, energy_j, part_j[RPT_PARTS];
    double gpus, nodes;    /* cluster_gpus, cluster_nodes */
    double win0_s, win1_s; /* window_start_s, window_end_s */
    struct eco_report_bin ts[TS_N][RPT_COLS];
    double ts_max[TS_N];
    size_t timeline_rows;
    double *jct_s, *wait_s; /* of completed jobs, sorted ascending */
    size_t n_done;
};

/* Reads DIR/summary.json and DIR/jobs.csv into r (zeroed first). */
int eco_report__load(struct eco_report_data *r, const struct eco_report_run *in,
                     struct eco_error *err);
/* Reads DIR/timeline.csv into r's M4 bins, time t0..t1 spread over RPT_COLS bins. */
int eco_report__load_timeline(struct eco_report_data *r, const char *dir, double t0, double t1,
                              struct eco_error *err);
void eco_report__fini(struct eco_report_data *r);

#endif
