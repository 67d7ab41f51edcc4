/* SPDX-License-Identifier: MIT */
/* Trace readers: canonical CSV, Microsoft ITP, Philly job files and Alibaba openb pod lists.
 * gzip-compressed files are read transparently. */
#ifndef ECOSCHED_TRACE_H
#define ECOSCHED_TRACE_H

#include <stdbool.h>
#include "ecosched/error.h"
#include "ecosched/job.h"

enum eco_trace_format {
    ECO_TRACE_AUTO = 0,
    ECO_TRACE_CANONICAL,
    ECO_TRACE_ITP,
    ECO_TRACE_PHILLY,
    ECO_TRACE_OPENB,
};

struct eco_trace_opts {
    enum eco_trace_format format;
    bool skip_bad_rows;  /* skip and count bad rows instead of failing */
    size_t max_jobs;     /* 0: no limit */
    /* Called once per warning (unknown column ...); may be NULL. */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
};

/* Name of a format ("canonical", "itp", ...), and the reverse (-1 when unknown). */
const char *eco_trace_format_name(enum eco_trace_format f);
int eco_trace_format_parse(const char *name);

/* Detects the format from a header line (without newline); ECO_TRACE_AUTO when unknown. */
enum eco_trace_format eco_trace_detect(const char *header);

/* Reads `path` and appends its jobs to `set`, with the GPU catalog used to resolve the
 * gpu_type column. Returns 0, or -EINVAL (bad row: err names file, line and column),
 * -ENOENT / -EIO (cannot read: err says why) or -ENOMEM. */
int eco_trace_load(const char *path, const struct eco_trace_opts *opts, struct eco_jobset *set,
                   struct eco_error *err);

#endif
