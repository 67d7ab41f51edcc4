/* SPDX-License-Identifier: MIT */
/* Trace readers: canonical CSV, Microsoft ITP, Philly job files, Alibaba openb pod lists and
 * Slurm accounting exports (sacct -P or --json).
 * gzip-compressed files are read transparently. */
#ifndef ECOSCHED_TRACE_H
#define ECOSCHED_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include "ecosched/error.h"
#include "ecosched/job.h"

enum eco_trace_format {
    ECO_TRACE_AUTO = 0,
#define ECO_TRACE_FORMAT(ID, name) ECO_TRACE_##ID,
#include "sim/trace_formats.def"
#undef ECO_TRACE_FORMAT
};

/* The range of each value a trace row may give; a value outside is a bad row that names file,
 * line and column (docs/formats/traces.md). They keep every sum the simulator forms exact
 * enough: at 1e10 s a double still resolves 2 microseconds, so submit + duration loses nothing
 * a trace states (2^63 would round a duration of hours away).
 * Times: submit, deadline, openb's creation/scheduled/deletion. 1e10 s is 317 years: relative
 * times and Unix timestamps (1.7e9 in 2024) both fit. */
#define ECO_TRACE_MAX_TIME_S 1e10
/* Durations: 1e9 s is 31.7 years, longer than any job has run (Philly's longest is 60 days). */
#define ECO_TRACE_MAX_DURATION_S 1e9
/* GPUs of one job: 2^20, ten times the largest GPU clusters built so far (about 100k GPUs). */
#define ECO_TRACE_MAX_GPUS 1048576
/* GPU memory a job needs per GPU: 1e4 GB, 35 times the largest GPU memory (288 GB, B300). */
#define ECO_TRACE_MAX_GPU_MEM_GB 1e4

/* Most text a trace may hold after decompression: 4 GiB. A million-job trace is about 52 MB
 * (data/itp's rows average 52 bytes; bench/README.md, "One million jobs", replays them), the
 * largest public GPU trace, Helios (3.36 M jobs), a few hundred MB: 4 GiB is some 80 times the
 * million-job trace, and a gzip bomb stops there instead of inflating without end. */
#define ECO_TRACE_MAX_BYTES (4ull << 30)

struct eco_trace_opts {
    enum eco_trace_format format;
    bool skip_bad_rows; /* skip and count bad rows instead of failing */
    size_t max_jobs;    /* 0: no limit */
    uint64_t max_bytes; /* the most text read (after decompression); 0: ECO_TRACE_MAX_BYTES */
    /* sacct traces (docs/formats/traces.md, "sacct"): site gres type names mapped to catalog
     * types ("a100_80g=A100-SXM,tesla=V100"; NULL: none), the time zone of sacct's local times
     * (NULL: TZ, else the system's), and whether Elapsed is taken as the reference duration as
     * measured instead of being scaled by the catalog's speed of the GPU type it ran on. */
    const char *gpu_type_map;
    const char *tz;
    bool elapsed_as_measured;
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
 * gpu_type column. Job ids must be unique within the file (a repeat is a bad row) and the file
 * must hold at least one job (a header alone, or only rows that were skipped, is -EINVAL).
 * NUL bytes are refused with file and line; so is a file that is not a regular one (a FIFO)
 * and more text than opts->max_bytes. Returns 0, or -EINVAL (bad row: err names file, line and
 * column), -ENOENT / -EIO (cannot read: err says why), -EFBIG (over the limit) or -ENOMEM. */
int eco_trace_load(const char *path, const struct eco_trace_opts *opts, struct eco_jobset *set,
                   struct eco_error *err);

#endif
