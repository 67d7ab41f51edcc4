/* SPDX-License-Identifier: MIT */
/* The trace formats: their columns, how a header identifies each, and how one row of each
 * becomes a job. File handling and the read loop live in trace.c. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "util/csv.h"
#include "trace_internal.h"

/* ---- typed field readers ---------------------------------------------------------------- */

static int intern(struct trace_loader *L, const char *s, uint32_t *off)
{
    size_t len = strlen(s);
    *off = eco_jobset_intern(L->set, s, len);
    if (len > 0 && *off == 0)
        return eco_errorf(&L->e, -ENOMEM, "%s:%lu: out of memory", L->path, L->line);
    return 0;
}

/* The job id: a required, non-empty string. */
static int read_id(struct trace_loader *L, struct eco_job *job)
{
    const char *s;
    int rc = eco_trace__field(L, TRACE_ID, &s);
    if (rc)
        return rc;
    if (*s == '\0')
        return eco_trace__bad(L, TRACE_ID, s, "is empty, expected a job id");
    return intern(L, s, &job->id_off);
}

/* The range of a time or size column (src/sim/trace.h) and how messages write it. */
struct range {
    double max;
    const char *text;
};
static const struct range time_range = {ECO_TRACE_MAX_TIME_S, "0..1e10 s"};
static const struct range duration_range = {ECO_TRACE_MAX_DURATION_S, "0..1e9 s"};
static const struct range mem_range = {ECO_TRACE_MAX_GPU_MEM_GB, "0..1e4 GB"};

/* A finite number from 0 to r.max. */
static int read_nonneg(struct trace_loader *L, enum trace_role role, struct range r, double *out)
{
    const char *s;
    double v;
    int rc = eco_trace__field(L, role, &s);
    if (rc)
        return rc;
    if (eco_parse_double(s, &v))
        return eco_trace__bad(L, role, s, "is not a number");
    if (v < 0)
        return eco_trace__bad(L, role, s, "is negative, expected a number >= 0");
    if (v > r.max) {
        char what[64];
        snprintf(what, sizeof what, "is outside %s", r.text);
        return eco_trace__bad(L, role, s, what);
    }
    *out = v;
    return 0;
}

/* A whole count of GPUs: "8" or "8.0", never "2.5"; at least 1 unless zero_ok, at most
 * ECO_TRACE_MAX_GPUS. */
static int read_count(struct trace_loader *L, enum trace_role role, bool zero_ok, uint32_t *out)
{
    const char *s;
    double v;
    int rc = eco_trace__field(L, role, &s);
    if (rc)
        return rc;
    const char *what = zero_ok ? "is not a non-negative integer" : "is not a positive integer";
    if (eco_parse_double(s, &v) || v < (zero_ok ? 0 : 1) || v > UINT32_MAX ||
        v != (double)(uint32_t)v)
        return eco_trace__bad(L, role, s, what);
    if (v > ECO_TRACE_MAX_GPUS)
        return eco_trace__bad(
            L, role, s, zero_ok ? "is outside 0..1048576 GPUs" : "is outside 1..1048576 GPUs");
    *out = (uint32_t)v;
    return 0;
}

/* The per-GPU share in 1/1000 GPU, 1..1000; a share below 1000 needs exactly one GPU (it is a
 * slice of one device). An absent or empty column means whole GPUs. */
static int read_milli(struct trace_loader *L, struct eco_job *job)
{
    const char *s;
    int64_t v;
    int rc = eco_trace__field(L, TRACE_GPU_MILLI, &s);
    if (rc || !s || (*s == '\0' && L->fmt->id == ECO_TRACE_CANONICAL))
        return rc;
    if (eco_parse_int64(s, &v) || v < 1 || v > 1000)
        return eco_trace__bad(L, TRACE_GPU_MILLI, s, "is not an integer from 1 to 1000");
    if (v < 1000 && job->gpus != 1)
        return eco_trace__bad(L, TRACE_GPU_MILLI, s,
                              "is a fractional GPU share, which needs exactly 1 GPU");
    job->gpu_milli = (uint16_t)v;
    if (v < 1000)
        L->set->fractional++;
    return 0;
}

/* ---- canonical, ITP, Philly ------------------------------------------------------------- */

/* Id, submit, duration and GPU count: all that ITP and Philly give. */
int eco_trace__row_basic(struct trace_loader *L, struct eco_job *job)
{
    int rc = read_id(L, job);
    if (!rc)
        rc = read_nonneg(L, TRACE_SUBMIT, time_range, &job->submit_s);
    if (!rc)
        rc = read_nonneg(L, TRACE_DURATION, duration_range, &job->duration_s);
    if (!rc)
        rc = read_count(L, TRACE_GPUS, false, &job->gpus);
    return rc;
}

static int read_gpu_type(struct trace_loader *L, struct eco_job *job)
{
    const char *s;
    int rc = eco_trace__field(L, TRACE_GPU_TYPE, &s);
    if (rc || !s || *s == '\0')
        return rc;
    int t = eco_catalog_find(s);
    if (t < 0 || t > INT16_MAX)
        return eco_trace__bad(L, TRACE_GPU_TYPE, s, "is not a GPU type in the catalog");
    job->gpu_type = (int16_t)t;
    return 0;
}

/* An optional number >= 0: absent or empty leaves *out alone. */
static int read_opt_nonneg(struct trace_loader *L, enum trace_role role, struct range r,
                           double *out)
{
    const char *s;
    int rc = eco_trace__field(L, role, &s);
    if (rc || !s || *s == '\0')
        return rc;
    return read_nonneg(L, role, r, out);
}

static int read_opt_string(struct trace_loader *L, enum trace_role role, uint32_t *off)
{
    const char *s;
    int rc = eco_trace__field(L, role, &s);
    if (rc || !s)
        return rc;
    return intern(L, s, off);
}

static int row_canonical(struct trace_loader *L, struct eco_job *job)
{
    int rc = eco_trace__row_basic(L, job);
    if (!rc)
        rc = read_gpu_type(L, job);
    if (!rc)
        rc = read_opt_nonneg(L, TRACE_GPU_MEM, mem_range, &job->gpu_mem_gb);
    if (!rc)
        rc = read_opt_nonneg(L, TRACE_DEADLINE, time_range, &job->deadline_s);
    if (!rc && job->deadline_s != ECO_NO_DEADLINE && job->deadline_s < job->submit_s) {
        const char *s;
        eco_trace__field(L, TRACE_DEADLINE, &s);
        rc = eco_trace__bad(L, TRACE_DEADLINE, s, "is before submit_s");
    }
    if (!rc)
        rc = read_milli(L, job);
    if (!rc)
        rc = read_opt_string(L, TRACE_WORKLOAD, &job->workload_off);
    if (!rc)
        rc = read_opt_string(L, TRACE_USER, &job->user_off);
    return rc;
}

/* ---- Alibaba openb pod lists ------------------------------------------------------------ */

/* openb GPU model names and the catalog type each runs as. The trace names V100 boards by
 * memory size (V100M16, V100M32); both are the catalog's "V100". P100 is "P100". Any other
 * model is looked up by its own name: T4, A10 and the undisclosed G1-G3 have no catalog entry,
 * so pods restricted to them get gpu_type -1 (any GPU). */
static const struct {
    const char *model;
    const char *catalog;
} openb_models[] = {
    {"V100M16", "V100"},
    {"V100M32", "V100"},
    {"P100", "P100"},
};

static int openb_model_type(const char *model)
{
    for (size_t i = 0; i < sizeof openb_models / sizeof openb_models[0]; i++)
        if (strcmp(model, openb_models[i].model) == 0)
            return eco_catalog_find(openb_models[i].catalog);
    return eco_catalog_find(model);
}

/* gpu_spec lists the models a pod may run on, '|'-separated (possibly with repeats). When all
 * of them are the same catalog type, the job is pinned to it; otherwise (no list, several
 * types, or a model outside the catalog) it may run on any GPU. Splits `spec` in place. */
static int16_t openb_gpu_type(char *spec)
{
    int type = -1;
    char *save = NULL;
    for (char *m = strtok_r(spec, "|", &save); m; m = strtok_r(NULL, "|", &save)) {
        int t = openb_model_type(m);
        if (t < 0 || t > INT16_MAX || (type >= 0 && t != type))
            return -1;
        type = t;
    }
    return (int16_t)type;
}

/* submit = creation_time; duration = deletion_time - scheduled_time (for pods still Running
 * when the trace was cut, deletion_time is the cut: the duration is censored). */
static int row_openb(struct trace_loader *L, struct eco_job *job)
{
    const char *sched, *del;
    double start = 0, end = 0;
    int rc = read_id(L, job);
    if (!rc)
        rc = read_count(L, TRACE_GPUS, true, &job->gpus);
    if (!rc && job->gpus == 0) {
        L->set->skipped_non_gpu++;
        return TRACE_ROW_SKIPPED;
    }
    if (!rc)
        rc = eco_trace__field(L, TRACE_START, &sched);
    if (!rc && *sched == '\0') {
        L->set->skipped_unfinished++; /* Pending: never bound to a node */
        return TRACE_ROW_SKIPPED;
    }
    if (!rc)
        rc = read_nonneg(L, TRACE_SUBMIT, time_range, &job->submit_s);
    if (!rc)
        rc = read_nonneg(L, TRACE_START, time_range, &start);
    if (!rc)
        rc = read_nonneg(L, TRACE_END, time_range, &end);
    if (!rc && end < start) {
        eco_trace__field(L, TRACE_END, &del);
        rc = eco_trace__bad(L, TRACE_END, del, "is before scheduled_time");
    }
    if (!rc && end - start > ECO_TRACE_MAX_DURATION_S) {
        eco_trace__field(L, TRACE_END, &del);
        rc = eco_trace__bad(L, TRACE_END, del,
                            "is more than 1e9 s (the longest duration) after scheduled_time");
    }
    job->duration_s = end - start;
    if (!rc)
        rc = read_milli(L, job);
    if (!rc)
        rc = eco_trace__field(L, TRACE_GPU_SPEC, &sched);
    if (!rc && sched)
        job->gpu_type = openb_gpu_type((char *)sched);
    return rc;
}

/* ---- format tables ---------------------------------------------------------------------- */

#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

static const struct trace_col canonical_cols[] = {
    {"job_id", TRACE_ID, true},
    {"submit_s", TRACE_SUBMIT, true},
    {"duration_s", TRACE_DURATION, true},
    {"gpus", TRACE_GPUS, true},
    {"gpu_type", TRACE_GPU_TYPE, false},
    {"gpu_mem_gb", TRACE_GPU_MEM, false},
    {"deadline_s", TRACE_DEADLINE, false},
    {"gpu_milli", TRACE_GPU_MILLI, false},
    {"workload", TRACE_WORKLOAD, false},
    {"user", TRACE_USER, false},
};
static const char *const canonical_sig[] = {"job_id", "submit_s", "duration_s", "gpus", NULL};

static const struct trace_col itp_cols[] = {
    {"job_id", TRACE_ID, true},
    {"submission_time", TRACE_SUBMIT, true},
    {"duration", TRACE_DURATION, true},
    {"num_gpu", TRACE_GPUS, true},
};
static const char *const itp_sig[] = {"job_id", "submission_time", "duration", "num_gpu", NULL};

static const struct trace_col philly_cols[] = {
    {"job_id", TRACE_ID, true},
    {"num_gpus", TRACE_GPUS, true},
    {"submit_s", TRACE_SUBMIT, true},
    {"run_s", TRACE_DURATION, true},
    {"submitted_time", TRACE_IGNORED, false},
    {"first_start_time", TRACE_IGNORED, false},
    {"last_end_time", TRACE_IGNORED, false},
    {"queue_s", TRACE_IGNORED, false},
    {"span_s", TRACE_IGNORED, false},
    {"n_attempts", TRACE_IGNORED, false},
    {"upstream_runtime_min", TRACE_IGNORED, false},
    {"attempts_s", TRACE_IGNORED, false},
};
static const char *const philly_sig[] = {"job_id", "num_gpus", "submit_s", "run_s", NULL};

/* The time columns are required: trace.c names them when a header lacks them (the multigpuNN
 * variants), since that is a different problem from a damaged header. */
static const struct trace_col openb_cols[] = {
    {"name", TRACE_ID, true},
    {"num_gpu", TRACE_GPUS, true},
    {"gpu_milli", TRACE_GPU_MILLI, true},
    {"gpu_spec", TRACE_GPU_SPEC, false},
    {"creation_time", TRACE_SUBMIT, true},
    {"deletion_time", TRACE_END, true},
    {"scheduled_time", TRACE_START, true},
    {"cpu_milli", TRACE_IGNORED, false},
    {"memory_mib", TRACE_IGNORED, false},
    {"qos", TRACE_IGNORED, false},
    {"pod_phase", TRACE_IGNORED, false},
};
static const char *const openb_sig[] = {"name", "num_gpu", "gpu_milli", NULL};

const struct trace_fmt eco_trace__fmt_canonical = {
    .id = ECO_TRACE_CANONICAL,
    .name = "canonical",
    .cols = canonical_cols,
    .ncols = NCOLS(canonical_cols),
    .signature = canonical_sig,
    .row = row_canonical,
};
const struct trace_fmt eco_trace__fmt_itp = {
    .id = ECO_TRACE_ITP,
    .name = "itp",
    .cols = itp_cols,
    .ncols = NCOLS(itp_cols),
    .signature = itp_sig,
    .row = eco_trace__row_basic,
};
const struct trace_fmt eco_trace__fmt_philly = {
    .id = ECO_TRACE_PHILLY,
    .name = "philly",
    .cols = philly_cols,
    .ncols = NCOLS(philly_cols),
    .signature = philly_sig,
    .row = eco_trace__row_basic,
};
const struct trace_fmt eco_trace__fmt_openb = {
    .id = ECO_TRACE_OPENB,
    .name = "openb",
    .cols = openb_cols,
    .ncols = NCOLS(openb_cols),
    .signature = openb_sig,
    .row = row_openb,
};
