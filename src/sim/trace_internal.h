/* SPDX-License-Identifier: MIT */
/* Internals shared by the trace reader (trace.c: files, lines, header) and the per-format row
 * converters (trace_formats.c). Not installed; nothing outside src/sim/trace*.c includes it. */
#ifndef ECOSCHED_TRACE_INTERNAL_H
#define ECOSCHED_TRACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include "util/csv.h"
#include "ecosched/error.h"
#include "ecosched/job.h"
#include "sim/trace.h"

/* What a column means to the reader; one column per role at most. */
enum trace_role {
    TRACE_ID = 0,
    TRACE_SUBMIT,
    TRACE_DURATION,
    TRACE_GPUS,
    TRACE_GPU_TYPE,
    TRACE_GPU_MEM,
    TRACE_DEADLINE,
    TRACE_WORKLOAD,
    TRACE_USER,
    TRACE_GPU_MILLI,
    TRACE_GPU_SPEC, /* openb: allowed GPU models, '|'-separated */
    TRACE_START,    /* openb: scheduled_time */
    TRACE_END,      /* openb: deletion_time */
    TRACE_NROLES,
    TRACE_IGNORED = TRACE_NROLES, /* a known column the reader does not use */
};

struct trace_col {
    const char *name;
    enum trace_role role;
    bool required;
};

struct trace_loader;

/* Fills `job` from the current row. Returns 0, TRACE_ROW_SKIPPED (the row is not a job and was
 * counted in the set's skip counters), -EINVAL (bad row, L->e says why) or -ENOMEM. */
typedef int (*trace_row_fn)(struct trace_loader *L, struct eco_job *job);
#define TRACE_ROW_SKIPPED 1

struct trace_fmt {
    enum eco_trace_format id;
    const char *name;
    const struct trace_col *cols;
    size_t ncols;
    /* Columns whose presence in a header identifies the format (NULL-terminated). */
    const char *const *signature;
    trace_row_fn row;
    /* A format that is not comma-separated (sacct: '|'-separated or JSON) reads the file
     * itself. sniff says whether a first line (BOM skipped) is the format's, before the
     * header columns are tried; load is called with that line in L->buf and reads the rest
     * with eco_trace__next_line, appending its jobs to L->set. Both NULL for CSV formats. */
    bool (*sniff)(const char *first_line);
    int (*load)(struct trace_loader *L);
};

/* A format is a `const struct trace_fmt eco_trace__fmt_<name>` listed in trace_formats.def
 * (trace.c builds the registry from it). */

struct trace_loader {
    const char *path;
    const struct eco_trace_opts *opts;
    struct eco_jobset *set;
    struct eco_error e; /* local: filled even when the caller passed no error */

    struct eco_csv_file *csv;
    char *buf;          /* current line, NUL-terminated (the reader's) */
    unsigned long line; /* 1-based number of the line in buf */

    const struct trace_fmt *fmt;
    char *header; /* copy of the header line; hdr[] points into it */
    char **hdr;   /* header column names */
    int ncols;
    char **fields; /* the current row's fields (ncols slots) */
    int nfields;
    int idx[TRACE_NROLES];    /* header column of each role, -1 when absent */
    struct eco_csv_names ids; /* job ids of this file's rows, by job index */
    /* --skip-bad-rows: the message of the first bad row skipped (a format's load that skips
     * one counts it in set->skipped_rows and copies L->e.msg here when this is empty) */
    char first_bad[ECO_ERROR_MSG_MAX];
};

/* Row helpers for the converters; each returns 0 or -EINVAL with L->e naming file, line,
 * column and value. A role whose column the header lacks reads as NULL. */
int eco_trace__field(struct trace_loader *L, enum trace_role role, const char **out);
int eco_trace__bad(struct trace_loader *L, enum trace_role role, const char *value,
                   const char *what);
/* The next line into L->buf (L->line its number): 1, 0 at end of file, or a negative errno
 * with L->e naming file and line. */
int eco_trace__next_line(struct trace_loader *L);
/* One warning through opts->warn (nothing without one). */
void eco_trace__warn(const struct trace_loader *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The row of a format with an id, submit time, duration and GPU count, as the ITP and Philly
 * formats read it: a new format with renamed columns needs only its cols table. */
int eco_trace__row_basic(struct trace_loader *L, struct eco_job *job);

#endif
