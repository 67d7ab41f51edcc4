/* SPDX-License-Identifier: MIT */
/* The sacct format: Slurm accounting exports as sites make them, `sacct --parsable2` ('|'-
 * separated, a header line, any column order) and `sacct --json` (Slurm 22.05's schema and the
 * later ones that wrap numbers in {"set", "infinite", "number"}). One job per job allocation:
 * steps (123.batch, 123.0) are folded into their job, the components of a heterogeneous job
 * (123+0, 123+1) into one job, array tasks (123_4) are jobs of their own. Jobs that never ran,
 * pending and running ones and CPU-only ones are skipped and counted in one warning.
 * docs/formats/traces.md, "sacct". */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "sim/slurm_gres.h"
#include "util/csv.h"
#include "trace_internal.h"

/* The columns the reader knows; a -P header may hold them in any order. */
enum col {
    C_JOBID,
    C_JOBIDRAW,
    C_SUBMIT,
    C_START,
    C_END,
    C_ELAPSEDRAW,
    C_ELAPSED,
    C_TIMELIMIT,
    C_TIMELIMITRAW,
    C_ALLOCTRES,
    C_REQTRES,
    C_ALLOCGRES,
    C_USER,
    C_ACCOUNT,
    C_PARTITION,
    C_STATE,
    NCOL,
};
static const char *const col_names[NCOL] = {
    "JobID",   "JobIDRaw",  "Submit",       "Start",     "End",     "ElapsedRaw",
    "Elapsed", "Timelimit", "TimelimitRaw", "AllocTRES", "ReqTRES", "AllocGRES",
    "User",    "Account",   "Partition",    "State",
};

/* One job allocation as an export gives it, before it becomes a job. */
struct rec {
    const char *id;            /* as sacct prints it: 123, 123_4, 123+1, 123.batch */
    double submit, start, end; /* Unix s; NAN: Unknown / None */
    double elapsed;            /* s; NAN: not given */
    double limit;              /* s; 0: not given, INFINITY: unlimited */
    struct eco_gres_gpus alloc, req;
    bool alloc_given;        /* the allocation's GPUs are known (AllocTRES non-empty) */
    const char *alloc_field; /* where the GPUs came from, for messages */
    const char *req_field;
    const char *user, *account, *partition, *state;
    const char *end_text; /* -P: End as written, for messages */
};

struct sacct {
    struct trace_loader *L;
    bool json;
    size_t index;      /* JSON: jobs[index] */
    const char *jobid; /* JSON: the job's id, for messages */
    struct eco_gres_map map;
    size_t first_job; /* the set's first job of this file */
    uint8_t *het;     /* het[i - first_job]: job i came from a het component */
    size_t het_cap;
    size_t steps, unfinished, never_ran, cpu_only;
    int col[NCOL]; /* -P: header column of each, -1 when absent */
    char **row;    /* -P: the current row's fields */
};

/* ---- messages ------------------------------------------------------------------------------ */

/* A bad field: -P names the line and column, JSON the job's index, id and field. */
static int bad(struct sacct *S, const char *field, const char *value, const char *what)
{
    struct trace_loader *L = S->L;
    if (S->json && value)
        return eco_errorf(&L->e, -EINVAL, "%s: jobs[%zu] (job_id %s): field '%s': '%.64s' %s",
                          L->path, S->index, S->jobid ? S->jobid : "?", field, value, what);
    if (S->json)
        return eco_errorf(&L->e, -EINVAL, "%s: jobs[%zu] (job_id %s): field '%s': %s", L->path,
                          S->index, S->jobid ? S->jobid : "?", field, what);
    return eco_errorf(&L->e, -EINVAL, "%s:%lu: column '%s': '%.64s' %s", L->path, L->line, field,
                      value ? value : "", what);
}

static int oom(struct sacct *S)
{
    return eco_errorf(&S->L->e, -ENOMEM, "%s: out of memory", S->L->path);
}

/* ---- times --------------------------------------------------------------------------------- */

static bool unknown_time(const char *s)
{
    return !*s || !strcmp(s, "Unknown") || !strcmp(s, "None");
}

/* sacct's local time, 2024-03-01T12:00:00, in the zone of TZ (set for the load), or a Unix
 * time (SLURM_TIME_FORMAT=%s); NAN for Unknown / None. */
static int parse_time(struct sacct *S, const char *field, const char *s, double *out)
{
    if (unknown_time(s)) {
        *out = NAN;
        return 0;
    }
    int64_t unix_s;
    if (!eco_parse_int64(s, &unix_s)) {
        if (unix_s < 0 || unix_s > ECO_TRACE_MAX_TIME_S)
            return bad(S, field, s, "is outside 0..1e10 s");
        *out = (double)unix_s;
        return 0;
    }
    struct tm tm = {0};
    int n = -1;
    if (strlen(s) != 19 ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n != 19)
        return bad(S, field, s,
                   "is not a time as sacct prints it (YYYY-MM-DDTHH:MM:SS, Unknown or None)");
    struct tm want = tm;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1 || tm.tm_year != want.tm_year - 1900 || tm.tm_mon != want.tm_mon - 1 ||
        tm.tm_mday != want.tm_mday || want.tm_hour > 23 || want.tm_min > 59 || want.tm_sec > 60)
        return bad(S, field, s, "is not a valid date and time");
    if (t < 0 || (double)t > ECO_TRACE_MAX_TIME_S)
        return bad(S, field, s, "is outside 1970..2286 (0..1e10 s)");
    *out = (double)t;
    return 0;
}

/* A time limit: UNLIMITED and Partition_Limit are INFINITY, "" not given. */
static int parse_limit(struct sacct *S, const char *field, const char *s, bool raw_minutes,
                       double *out)
{
    int64_t min;
    if (!*s) {
        *out = 0;
        return 0;
    }
    if (!strcmp(s, "UNLIMITED") || !strcmp(s, "Partition_Limit") || !strcmp(s, "INFINITE")) {
        *out = INFINITY;
        return 0;
    }
    if (raw_minutes) {
        if (eco_parse_int64(s, &min) || min < 0)
            return bad(S, field, s,
                       "is not a whole number of minutes, UNLIMITED or "
                       "Partition_Limit");
        *out = (double)min * 60;
    } else if (eco_slurm_duration(s, out)) {
        return bad(S, field, s,
                   "is not a time limit ([DD-]HH:MM:SS, MM:SS, minutes, UNLIMITED or "
                   "Partition_Limit)");
    }
    if (*out > ECO_TRACE_MAX_DURATION_S)
        return bad(S, field, s, "is outside 0..1e9 s");
    return 0;
}

/* ---- from a record to a job ---------------------------------------------------------------- */

static int intern(struct sacct *S, const char *s, uint32_t *off)
{
    size_t len = strlen(s);
    *off = eco_jobset_intern(S->L->set, s, len);
    return len > 0 && *off == 0 ? oom(S) : 0;
}

/* The catalog type of a gres type; an unknown one is an error that names it. */
static int gres_type(struct sacct *S, const char *field, const char *type, int *out)
{
    int t = eco_gres_type(&S->map, type);
    if (t < 0 || t > INT16_MAX) {
        char what[160];
        snprintf(what, sizeof what,
                 "is not a GPU type of the catalog (map it: --gpu-type-map %.40s=TYPE; see "
                 "'ecosched catalog')",
                 type);
        return bad(S, field, type, what);
    }
    *out = t;
    return 0;
}

/* The job id's parts: a step (123.batch) and a het component (123+1, base 123). */
static bool is_step(const char *id)
{
    return strchr(id, '.') != NULL;
}

static int grow_het(struct sacct *S, size_t n)
{
    if (n <= S->het_cap)
        return 0;
    size_t cap = S->het_cap ? S->het_cap * 2 : 256;
    while (cap < n)
        cap *= 2;
    uint8_t *p = realloc(S->het, cap);
    if (!p)
        return -ENOMEM;
    memset(p + S->het_cap, 0, cap - S->het_cap);
    S->het = p;
    S->het_cap = cap;
    return 0;
}

static int add_rec(struct sacct *S, struct rec *r)
{
    struct trace_loader *L = S->L;
    struct eco_jobset *set = L->set;
    if (is_step(r->id)) {
        S->steps++; /* the job's own row carries its allocation */
        return 0;
    }
    static const char *const not_done[] = {"PENDING",   "RUNNING",      "REQUEUED",   "RESIZING",
                                           "SUSPENDED", "REQUEUE_HOLD", "REQUEUE_FED"};
    for (size_t i = 0; i < sizeof not_done / sizeof not_done[0]; i++)
        if (!strcmp(r->state, not_done[i])) {
            S->unfinished++;
            return 0;
        }
    /* Pending or running: no start or no end yet; never ran: cancelled before it started. */
    if (isnan(r->start) || isnan(r->end)) {
        if (isnan(r->start) && !isnan(r->end))
            S->never_ran++;
        else
            S->unfinished++;
        return 0;
    }
    const struct eco_gres_gpus *g = r->alloc_given ? &r->alloc : &r->req;
    const char *gfield = r->alloc_given ? r->alloc_field : r->req_field;
    if (g->count == 0) {
        S->cpu_only++;
        return 0;
    }
    if (isnan(r->submit))
        return bad(S, S->json ? "time.submission" : col_names[C_SUBMIT], "Unknown",
                   "is not a submit time");
    double elapsed = r->elapsed;
    if (isnan(elapsed))
        elapsed = r->end - r->start;
    if (elapsed < 0)
        return bad(S, S->json ? "time.end" : col_names[C_END], r->end_text,
                   "is before the start (a negative run time)");
    if (elapsed > ECO_TRACE_MAX_DURATION_S)
        return bad(S, S->json ? "time.elapsed" : "Elapsed", "", "is outside 0..1e9 s");

    /* The type it ran on scales Elapsed to reference seconds; the type it asked for pins it. */
    int ran = -1, asked = -1, rc;
    if (g->type[0] && !g->mixed && (rc = gres_type(S, gfield, g->type, &ran)))
        return rc;
    if (r->req.count > 0 && r->req.type[0] && !r->req.mixed &&
        (rc = gres_type(S, r->req_field, r->req.type, &asked)))
        return rc;
    double speed = 1;
    if (ran >= 0 && !L->opts->elapsed_as_measured) {
        const struct eco_gpu_type *t = eco_catalog_get((size_t)ran);
        if (eco_power_eval(ran, ECO_WORKLOAD_GENERIC, t->default_limit_w, &speed, NULL) ||
            !(speed > 0))
            speed = 1;
    }
    double duration = elapsed * speed;

    /* A het component joins the job of its base id. */
    char idbuf[256];
    const char *plus = strchr(r->id, '+');
    size_t idlen = plus ? (size_t)(plus - r->id) : strlen(r->id);
    if (idlen == 0 || idlen >= sizeof idbuf)
        return bad(S, S->json ? "job_id" : col_names[C_JOBID], r->id, "is not a job id");
    memcpy(idbuf, r->id, idlen);
    idbuf[idlen] = '\0';

    size_t str_mark = set->str_len;
    struct eco_job *job = eco_jobset_add(set);
    if (!job || grow_het(S, set->n - S->first_job))
        return oom(S);
    job->line = (uint32_t)(S->json ? S->index + 1 : L->line);
    job->submit_s = r->submit;
    job->duration_s = duration;
    job->gpus = (uint32_t)g->count;
    job->gpu_type = (int16_t)asked;
    job->limit_s = r->limit;
    if ((rc = intern(S, idbuf, &job->id_off)) || (rc = intern(S, r->user, &job->user_off)) ||
        (rc = intern(S, r->account, &job->account_off)) ||
        (rc = intern(S, r->partition, &job->partition_off)) ||
        (rc = intern(S, r->state, &job->acct_state_off)))
        goto undo;
    uint32_t first;
    uint32_t idx = (uint32_t)(set->n - 1);
    rc = eco_csv_names_add(&L->ids, idbuf, idx, &first);
    if (rc < 0) {
        rc = oom(S);
        goto undo;
    }
    if (rc == 0) {
        S->het[idx - S->first_job] = plus != NULL;
        return 0;
    }
    if (plus && S->het[first - S->first_job]) {
        /* another component: its GPUs add up, the job lasts as long as the longest */
        struct eco_job *j0 = &set->jobs[first];
        uint64_t gpus = (uint64_t)j0->gpus + job->gpus;
        if (gpus > ECO_TRACE_MAX_GPUS) {
            rc = bad(S, gfield, "", "makes the heterogeneous job more than 1048576 GPUs");
            goto undo;
        }
        j0->gpus = (uint32_t)gpus;
        if (job->duration_s > j0->duration_s)
            j0->duration_s = job->duration_s;
        if (job->submit_s < j0->submit_s)
            j0->submit_s = job->submit_s;
        if (job->limit_s > j0->limit_s)
            j0->limit_s = job->limit_s;
        if (j0->gpu_type != job->gpu_type)
            j0->gpu_type = -1;
        set->n--;
        set->str_len = str_mark;
        return 0;
    }
    {
        char what[96];
        snprintf(what, sizeof what, "repeats the job id of %s %u (job ids must be unique)",
                 S->json ? "jobs entry" : "line", set->jobs[first].line);
        rc = bad(S, S->json ? "job_id" : col_names[C_JOBID], idbuf, what);
    }
undo:
    set->n--;
    set->str_len = str_mark;
    return rc;
}

/* ---- sacct --parsable2 ---------------------------------------------------------------------- */

/* Splits s at '|' in place; the number of fields (more than max: not stored). */
static int split_bars(char *s, char **f, int max)
{
    int n = 0;
    for (;;) {
        char *bar = strchr(s, '|');
        if (n < max)
            f[n] = s;
        n++;
        if (!bar)
            return n;
        *bar = '\0';
        s = bar + 1;
    }
}

static const char *field(struct sacct *S, enum col c)
{
    return S->col[c] >= 0 ? S->row[S->col[c]] : NULL;
}

static int read_gpus_field(struct sacct *S, enum col c, struct eco_gres_gpus *g)
{
    const char *s = field(S, c);
    int rc = c == C_ALLOCGRES ? eco_gres_gres(s, g) : eco_gres_tres(s, g);
    if (rc) {
        char what[256];
        snprintf(what, sizeof what, "has a malformed entry '%s' (expected %s)", g->bad,
                 c == C_ALLOCGRES ? "gpu[:TYPE][:COUNT]" : "NAME=COUNT, e.g. gres/gpu:a100=4");
        return bad(S, col_names[c], s, what);
    }
    return 0;
}

static int parsable_row(struct sacct *S)
{
    struct trace_loader *L = S->L;
    int n = split_bars(L->buf, S->row, L->ncols + 1);
    if (n == L->ncols + 1 && !*S->row[L->ncols])
        n = L->ncols; /* --parsable (-p) ends each line with a '|' */
    if (n != L->ncols)
        return eco_errorf(&L->e, -EINVAL, "%s:%lu: %d fields, but the header has %d columns",
                          L->path, L->line, n, L->ncols);
    struct rec r = {.start = 0,
                    .end = 0,
                    .elapsed = NAN,
                    .user = "",
                    .account = "",
                    .partition = "",
                    .state = ""};
    int rc = 0;
    const char *s;
    r.id = field(S, C_JOBID) ? field(S, C_JOBID) : field(S, C_JOBIDRAW);
    if (!*r.id)
        return bad(S, col_names[S->col[C_JOBID] >= 0 ? C_JOBID : C_JOBIDRAW], r.id,
                   "is empty, expected a job id");
    if (is_step(r.id))
        return add_rec(S, &r);
    if ((rc = parse_time(S, col_names[C_SUBMIT], field(S, C_SUBMIT), &r.submit)))
        return rc;
    if ((s = field(S, C_START)) && (rc = parse_time(S, col_names[C_START], s, &r.start)))
        return rc;
    if ((s = field(S, C_END)) && (rc = parse_time(S, col_names[C_END], s, &r.end)))
        return rc;
    r.end_text = s;
    if ((s = field(S, C_ELAPSEDRAW)) && *s) {
        int64_t v;
        if (eco_parse_int64(s, &v) || v < 0)
            return bad(S, col_names[C_ELAPSEDRAW], s, "is not a whole number of seconds");
        r.elapsed = (double)v;
    } else if ((s = field(S, C_ELAPSED)) && *s && eco_slurm_duration(s, &r.elapsed)) {
        return bad(S, col_names[C_ELAPSED], s, "is not a run time ([DD-]HH:MM:SS or MM:SS)");
    }
    if (!isnan(r.elapsed) && r.elapsed > ECO_TRACE_MAX_DURATION_S)
        return bad(S, col_names[S->col[C_ELAPSEDRAW] >= 0 ? C_ELAPSEDRAW : C_ELAPSED], s,
                   "is outside 0..1e9 s");
    if (S->col[C_TIMELIMIT] >= 0)
        rc = parse_limit(S, col_names[C_TIMELIMIT], field(S, C_TIMELIMIT), false, &r.limit);
    else if (S->col[C_TIMELIMITRAW] >= 0)
        rc = parse_limit(S, col_names[C_TIMELIMITRAW], field(S, C_TIMELIMITRAW), true, &r.limit);
    if (rc)
        return rc;
    /* GPUs: AllocTRES, else (empty: the job got nothing yet) ReqTRES or AllocGRES */
    if (S->col[C_ALLOCTRES] >= 0 && *field(S, C_ALLOCTRES)) {
        if ((rc = read_gpus_field(S, C_ALLOCTRES, &r.alloc)))
            return rc;
        r.alloc_given = true;
        r.alloc_field = col_names[C_ALLOCTRES];
    } else if (S->col[C_ALLOCGRES] >= 0 && *field(S, C_ALLOCGRES)) {
        if ((rc = read_gpus_field(S, C_ALLOCGRES, &r.alloc)))
            return rc;
        r.alloc_given = true;
        r.alloc_field = col_names[C_ALLOCGRES];
    }
    if (S->col[C_REQTRES] >= 0 && (rc = read_gpus_field(S, C_REQTRES, &r.req)))
        return rc;
    r.req_field = col_names[C_REQTRES];
    r.user = field(S, C_USER) ? field(S, C_USER) : "";
    r.account = field(S, C_ACCOUNT) ? field(S, C_ACCOUNT) : "";
    r.partition = field(S, C_PARTITION) ? field(S, C_PARTITION) : "";
    if (field(S, C_STATE)) {
        /* "CANCELLED by 1000": the state is the first word */
        char *st = S->row[S->col[C_STATE]];
        st[strcspn(st, " ")] = '\0';
        r.state = st;
    }
    return add_rec(S, &r);
}

static int parsable_header(struct sacct *S)
{
    struct trace_loader *L = S->L;
    char *line = L->buf;
    if (!strncmp(line, "\xEF\xBB\xBF", 3))
        line += 3;
    L->header = strdup(line);
    if (!L->header)
        return oom(S);
    int max = 1;
    for (const char *p = L->header; *p; p++)
        max += *p == '|';
    L->hdr = malloc((size_t)max * sizeof *L->hdr);
    S->row = malloc((size_t)(max + 1) * sizeof *S->row);
    if (!L->hdr || !S->row)
        return oom(S);
    L->ncols = split_bars(L->header, L->hdr, max);
    if (L->ncols > 1 && !*L->hdr[L->ncols - 1])
        L->ncols--; /* --parsable's trailing '|' */
    for (int c = 0; c < NCOL; c++)
        S->col[c] = -1;
    char unknown[512] = "";
    size_t used = 0, nunknown = 0;
    for (int i = 0; i < L->ncols; i++) {
        int c = 0;
        while (c < NCOL && strcmp(L->hdr[i], col_names[c]))
            c++;
        if (c == NCOL) {
            nunknown++;
            if (used < sizeof unknown)
                used += (size_t)snprintf(unknown + used, sizeof unknown - used, "%s'%s'",
                                         nunknown > 1 ? ", " : "", L->hdr[i]);
            continue;
        }
        if (S->col[c] >= 0)
            return eco_errorf(&L->e, -EINVAL, "%s:%lu: column '%s' appears twice in the header",
                              L->path, L->line, col_names[c]);
        S->col[c] = i;
    }
    const char *missing = NULL;
    if (S->col[C_JOBID] < 0 && S->col[C_JOBIDRAW] < 0)
        missing = "'JobID' (or 'JobIDRaw')";
    else if (S->col[C_SUBMIT] < 0)
        missing = "'Submit'";
    else if (S->col[C_ELAPSEDRAW] < 0 && S->col[C_ELAPSED] < 0 &&
             (S->col[C_START] < 0 || S->col[C_END] < 0))
        missing = "'ElapsedRaw', 'Elapsed' or 'Start' and 'End'";
    else if (S->col[C_ALLOCTRES] < 0 && S->col[C_REQTRES] < 0 && S->col[C_ALLOCGRES] < 0)
        missing = "'AllocTRES', 'ReqTRES' or 'AllocGRES'";
    if (missing)
        return eco_errorf(&L->e, -EINVAL,
                          "%s: missing required column %s in the header (sacct format; export "
                          "with sacct -P -o as docs/formats/traces.md says)",
                          L->path, missing);
    if (nunknown > 0) {
        L->set->unknown_columns += nunknown;
        eco_trace__warn(L, "%s: ignoring %zu unknown column%s of the sacct format: %s%s", L->path,
                        nunknown, nunknown > 1 ? "s" : "", unknown,
                        used >= sizeof unknown ? "..." : "");
    }
    return 0;
}

static int load_parsable(struct sacct *S)
{
    struct trace_loader *L = S->L;
    int rc = parsable_header(S);
    size_t loaded = 0;
    while (!rc && (L->opts->max_jobs == 0 || loaded < L->opts->max_jobs)) {
        rc = eco_trace__next_line(L);
        if (rc <= 0)
            break;
        rc = 0;
        if (L->buf[0] == '\0')
            continue;
        size_t before = L->set->n;
        rc = parsable_row(S);
        if (rc == -EINVAL && L->opts->skip_bad_rows) {
            L->set->skipped_rows++; /* trace.c warns once, quoting the first */
            if (!L->first_bad[0])
                memcpy(L->first_bad, L->e.msg, sizeof L->first_bad);
            rc = 0;
        }
        loaded += L->set->n - before;
    }
    return rc;
}

/* ---- sacct --json -------------------------------------------------------------------------- */

/* A number of Slurm's JSON: a plain integer (22.05) or {"set": .., "infinite": .., "number":
 * ..} (later schemas). *out NAN when unset or null, INFINITY when infinite. -1 when neither. */
static int json_num(json_t *v, double *out)
{
    if (!v || json_is_null(v)) {
        *out = NAN;
        return 0;
    }
    if (json_is_object(v)) {
        json_t *set = json_object_get(v, "set"), *inf = json_object_get(v, "infinite");
        if (inf && json_is_true(inf)) {
            *out = INFINITY;
            return 0;
        }
        if (set && json_is_false(set)) {
            *out = NAN;
            return 0;
        }
        v = json_object_get(v, "number");
    }
    if (!json_is_integer(v))
        return -1;
    *out = (double)json_integer_value(v);
    return 0;
}

static json_t *json_path(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return b ? json_object_get(v, b) : v;
}

static int json_time(struct sacct *S, json_t *job, const char *key, const char *field, double *out)
{
    double v;
    if (json_num(json_path(job, "time", key), &v))
        return bad(S, field, NULL, "is not a whole number of seconds");
    if (isnan(v) || v == 0) {
        *out = NAN; /* 0: unknown (not yet started or ended) */
        return 0;
    }
    if (v < 0 || v > ECO_TRACE_MAX_TIME_S)
        return bad(S, field, NULL, "is outside 0..1e10 s");
    *out = v;
    return 0;
}

static const char *json_str(json_t *v)
{
    if (json_is_array(v)) /* state.current is a list in later schemas */
        v = json_array_get(v, 0);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* tres.allocated / tres.requested: [{"type": "gres", "name": "gpu:a100", "count": 1}, ...] */
static int json_tres(struct sacct *S, json_t *list, const char *field, struct eco_gres_gpus *g)
{
    uint64_t total = 0, typed = 0;
    bool have_total = false;
    memset(g, 0, sizeof *g);
    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return bad(S, field, NULL, "is not a list of TRES");
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t)
    {
        const char *type = json_str(json_object_get(t, "type"));
        const char *name = json_str(json_object_get(t, "name"));
        if (strcmp(type, "gres") || strncmp(name, "gpu", 3) || (name[3] && name[3] != ':'))
            continue;
        double n;
        if (json_num(json_object_get(t, "count"), &n) || isnan(n) || n < 0 ||
            n > ECO_TRACE_MAX_GPUS)
            return bad(S, field, name, "has a count that is not a number of GPUs in 0..1048576");
        if (!name[3]) {
            total = (uint64_t)n;
            have_total = true;
        } else if (n > 0) {
            typed += (uint64_t)n;
            if (!g->type[0])
                snprintf(g->type, sizeof g->type, "%s", name + 4);
            else if (strcasecmp(g->type, name + 4))
                g->mixed = true;
        }
    }
    g->count = have_total ? total : typed;
    if (g->count > ECO_TRACE_MAX_GPUS)
        return bad(S, field, NULL, "holds more than 1048576 GPUs");
    if (g->count == 0)
        g->type[0] = '\0';
    return 0;
}

static int json_job(struct sacct *S, json_t *job)
{
    char id[96];
    double jid, array_id, task, het_id, het_off;
    S->jobid = NULL;
    if (!json_is_object(job))
        return bad(S, "jobs", NULL, "entry is not an object");
    if (json_num(json_object_get(job, "job_id"), &jid) || isnan(jid) || jid < 0 ||
        jid > 4294967295.0)
        return bad(S, "job_id", NULL, "is not a job id (a whole number)");
    if (json_num(json_path(job, "array", "job_id"), &array_id) ||
        json_num(json_path(job, "array", "task_id"), &task) ||
        json_num(json_path(job, "het", "job_id"), &het_id) ||
        json_num(json_path(job, "het", "job_offset"), &het_off))
        return bad(S, "array/het", NULL, "holds an id that is not a whole number");
    if (!isnan(array_id) && array_id > 0 && !isnan(task) && !isinf(task))
        snprintf(id, sizeof id, "%.0f_%.0f", array_id, task);
    else if (!isnan(het_id) && het_id > 0 && !isnan(het_off) && !isinf(het_off))
        snprintf(id, sizeof id, "%.0f+%.0f", het_id, het_off);
    else
        snprintf(id, sizeof id, "%.0f", jid);
    S->jobid = id;
    struct rec r = {.id = id, .elapsed = NAN};
    int rc;
    if ((rc = json_time(S, job, "submission", "time.submission", &r.submit)) ||
        (rc = json_time(S, job, "start", "time.start", &r.start)) ||
        (rc = json_time(S, job, "end", "time.end", &r.end)))
        return rc;
    double v;
    if (json_num(json_path(job, "time", "elapsed"), &v) || v < 0 || v > ECO_TRACE_MAX_DURATION_S)
        return bad(S, "time.elapsed", NULL, "is not a whole number of seconds in 0..1e9");
    r.elapsed = v;
    /* time.limit: minutes; null (22.05) or infinite: unlimited */
    json_t *lim = json_path(job, "time", "limit");
    int lrc = json_num(lim, &v);
    if (!lrc && v >= 4294967294.0) /* Slurm's NO_VAL and INFINITE as plain numbers */
        v = INFINITY;
    if (lrc || v < 0 || (!isinf(v) && v * 60 > ECO_TRACE_MAX_DURATION_S))
        return bad(S, "time.limit", NULL, "is not a whole number of minutes in 0..1e9 s");
    if (isnan(v))
        r.limit = json_is_null(lim) ? INFINITY : 0; /* null: UNLIMITED; absent or unset: none */
    else
        r.limit = v * 60;
    if ((rc = json_tres(S, json_path(job, "tres", "allocated"), "tres.allocated", &r.alloc)) ||
        (rc = json_tres(S, json_path(job, "tres", "requested"), "tres.requested", &r.req)))
        return rc;
    json_t *alloc = json_path(job, "tres", "allocated");
    r.alloc_given = json_is_array(alloc) && json_array_size(alloc) > 0;
    r.alloc_field = "tres.allocated";
    r.req_field = "tres.requested";
    r.user = json_str(json_object_get(job, "user"));
    r.account = json_str(json_object_get(job, "account"));
    r.partition = json_str(json_object_get(job, "partition"));
    r.state = json_str(json_path(job, "state", "current"));
    return add_rec(S, &r);
}

static int load_json(struct sacct *S)
{
    struct trace_loader *L = S->L;
    size_t len = 0, cap = 0;
    char *text = NULL;
    int rc;
    json_t *root = NULL;
    /* the whole text, through the line reader (gzip, NUL bytes and the size limit as for every
     * trace); lines are joined with '\n' so that the parser's line numbers are the file's */
    do {
        size_t n = strlen(L->buf);
        if (len + n + 2 > cap) {
            size_t c = cap ? cap * 2 : 65536;
            while (c < len + n + 2)
                c *= 2;
            char *p = realloc(text, c);
            if (!p) {
                rc = oom(S);
                goto out;
            }
            text = p;
            cap = c;
        }
        memcpy(text + len, L->buf, n);
        len += n;
        text[len++] = '\n';
        text[len] = '\0';
    } while ((rc = eco_trace__next_line(L)) == 1);
    if (rc < 0)
        goto out;
    json_error_t jerr;
    const char *start = !strncmp(text, "\xEF\xBB\xBF", 3) ? text + 3 : text;
    root = json_loadb(start, len - (size_t)(start - text), JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = eco_errorf(&L->e, -EINVAL, "%s:%d:%d: invalid JSON: %s", L->path, jerr.line,
                        jerr.column, jerr.text);
        goto out;
    }
    json_t *jobs = json_object_get(root, "jobs");
    if (!json_is_array(jobs)) {
        rc =
            eco_errorf(&L->e, -EINVAL,
                       "%s: expected sacct --json output: an object with an array 'jobs'", L->path);
        goto out;
    }
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        if (L->opts->max_jobs && L->set->n - S->first_job >= L->opts->max_jobs)
            break;
        S->index = i;
        rc = json_job(S, job);
        if (rc == -EINVAL && L->opts->skip_bad_rows) {
            L->set->skipped_rows++;
            if (!L->first_bad[0])
                memcpy(L->first_bad, L->e.msg, sizeof L->first_bad);
            rc = 0;
        }
        if (rc)
            goto out;
    }
out:
    json_decref(root);
    free(text);
    return rc;
}

/* ---- the format ---------------------------------------------------------------------------- */

/* TZ for the load (--tz), put back after. A zone name must exist under /usr/share/zoneinfo
 * (glibc takes an unknown one as UTC without a word); a POSIX rule ("CET-1CEST") is taken. */
struct tz_save {
    char *old;
    bool had, set;
};

static int tz_enter(struct trace_loader *L, struct tz_save *t)
{
    const char *tz = L->opts->tz;
    memset(t, 0, sizeof *t);
    if (!tz)
        return 0;
    const char *name = tz[0] == ':' ? tz + 1 : tz;
    bool posix = strpbrk(name, "0123456789") && !strchr(name, '/');
    char path[512];
    struct stat st;
    snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", name);
    if (!*name || strstr(name, "..") ||
        (!posix && strcmp(name, "UTC") && (stat(path, &st) || !S_ISREG(st.st_mode))))
        return eco_errorf(&L->e, -EINVAL,
                          "%s: time zone '%.64s' is unknown (no %s; give a zone such as "
                          "Europe/Berlin or UTC)",
                          L->path, tz, path);
    const char *old = getenv("TZ");
    t->had = old != NULL;
    t->old = old ? strdup(old) : NULL;
    if (old && !t->old)
        return eco_errorf(&L->e, -ENOMEM, "%s: out of memory", L->path);
    setenv("TZ", tz, 1);
    tzset();
    t->set = true;
    return 0;
}

static void tz_leave(struct tz_save *t)
{
    if (!t->set)
        return;
    if (t->had)
        setenv("TZ", t->old, 1);
    else
        unsetenv("TZ");
    tzset();
    free(t->old);
}

static bool sacct_sniff(const char *line)
{
    /* a -P header names JobID (or JobIDRaw) among '|'-separated columns; JSON opens an object */
    if (line[0] == '{')
        return true;
    if (!strchr(line, '|'))
        return false;
    size_t n = strcspn(line, "|");
    return (n == 5 && !strncmp(line, "JobID", 5)) || (n == 8 && !strncmp(line, "JobIDRaw", 8)) ||
           strstr(line, "|JobID|") || strstr(line, "|JobIDRaw|");
}

/* Jobs in the order an export's rows cannot give alike (-P lists array tasks after the
 * other jobs, --json by database id): by submit time, then job id, then array task. */
struct order {
    double submit;
    unsigned long long id, task;
    size_t i;
};

static int cmp_order(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int sort_jobs(struct sacct *S)
{
    struct eco_jobset *set = S->L->set;
    size_t n = set->n - S->first_job;
    struct eco_job *jobs = set->jobs + S->first_job;
    struct order *o = malloc(n * sizeof *o);
    struct eco_job *copy = malloc(n * sizeof *copy);
    if (!o || !copy) {
        free(o);
        free(copy);
        return oom(S);
    }
    for (size_t i = 0; i < n; i++) {
        const char *id = eco_jobset_str(set, jobs[i].id_off);
        char *end;
        o[i].submit = jobs[i].submit_s;
        o[i].id = strtoull(id, &end, 10);
        o[i].task = *end == '_' ? strtoull(end + 1, NULL, 10) : 0;
        o[i].i = i;
    }
    qsort(o, n, sizeof *o, cmp_order);
    memcpy(copy, jobs, n * sizeof *copy);
    for (size_t i = 0; i < n; i++)
        jobs[i] = copy[o[i].i];
    free(o);
    free(copy);
    return 0;
}

/* The skipped jobs, in one warning; the trace's calendar time from its first Submit. */
static int finish(struct sacct *S)
{
    struct trace_loader *L = S->L;
    struct eco_jobset *set = L->set;
    size_t skipped = S->unfinished + S->never_ran + S->cpu_only;
    if (set->n == S->first_job) {
        if (skipped)
            return eco_errorf(&L->e, -EINVAL,
                              "%s: holds no GPU job that ran: %zu pending or running, %zu that "
                              "never ran and %zu CPU-only jobs were skipped",
                              L->path, S->unfinished, S->never_ran, S->cpu_only);
        return 0; /* trace.c says there is no job */
    }
    if (skipped)
        eco_trace__warn(L,
                        "%s: skipped %zu job%s: %zu pending or running, %zu that never ran, %zu "
                        "CPU-only",
                        L->path, skipped, skipped > 1 ? "s" : "", S->unfinished, S->never_ran,
                        S->cpu_only);
    double t0 = INFINITY;
    for (size_t i = S->first_job; i < set->n; i++)
        if (set->jobs[i].submit_s < t0)
            t0 = set->jobs[i].submit_s;
    for (size_t i = S->first_job; i < set->n; i++)
        set->jobs[i].submit_s -= t0;
    set->has_epoch = 1;
    set->epoch_s = t0;
    return sort_jobs(S);
}

static int sacct_load(struct trace_loader *L)
{
    struct sacct S = {.L = L, .first_job = L->set->n};
    struct tz_save tz;
    struct eco_error merr;
    int rc = eco_gres_map_parse(L->opts->gpu_type_map, &S.map, &merr);
    if (rc)
        return eco_errorf(&L->e, rc, "%s: --gpu-type-map: %s", L->path, merr.msg);
    const char *first = L->buf;
    if (!strncmp(first, "\xEF\xBB\xBF", 3))
        first += 3;
    S.json = first[0] == '{';
    if ((rc = tz_enter(L, &tz)))
        return rc;
    rc = S.json ? load_json(&S) : load_parsable(&S);
    if (!rc)
        rc = finish(&S);
    tz_leave(&tz);
    free(S.het);
    free(S.row);
    return rc;
}

static const char *const no_signature[] = {NULL};

const struct trace_fmt eco_trace__fmt_sacct = {
    .id = ECO_TRACE_SACCT,
    .name = "sacct",
    .cols = NULL,
    .ncols = 0,
    .signature = no_signature,
    .row = NULL,
    .sniff = sacct_sniff,
    .load = sacct_load,
};
