/* SPDX-License-Identifier: MIT */
/* Trace reader: opens a (possibly gzip-compressed) CSV trace, reads its header, picks or checks
 * the format, and appends one job per row through the converters in trace_formats.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/csv.h"
#include "sim/trace.h"
#include "trace_internal.h"

/* Longest line accepted. A CSV trace row is well under a kilobyte; a "line" of 64 MiB means a
 * binary or newline-less file, which is refused rather than read whole into memory. */
#define LINE_MAX_BYTES (64u * 1024 * 1024)
/* Warnings handed to the callback; long lists of column names are cut with "...". */
#define WARN_MAX 1024

static const char *const format_names[] = {
    [ECO_TRACE_AUTO] = "auto",
#define ECO_TRACE_FORMAT(ID, name) [ECO_TRACE_##ID] = #name,
#include "trace_formats.def"
#undef ECO_TRACE_FORMAT
};

#define ECO_TRACE_FORMAT(ID, name) extern const struct trace_fmt eco_trace__fmt_##name;
#include "trace_formats.def"
#undef ECO_TRACE_FORMAT

/* The formats in detection order, NULL-terminated. */
static const struct trace_fmt *const formats[] = {
#define ECO_TRACE_FORMAT(ID, name) &eco_trace__fmt_##name,
#include "trace_formats.def"
#undef ECO_TRACE_FORMAT
    NULL,
};
#define NFORMATS (sizeof format_names / sizeof format_names[0])

const char *eco_trace_format_name(enum eco_trace_format f)
{
    if ((size_t)f >= NFORMATS)
        return "unknown";
    return format_names[f];
}

int eco_trace_format_parse(const char *name)
{
    for (size_t i = 0; name && i < NFORMATS; i++)
        if (strcmp(name, format_names[i]) == 0)
            return (int)i;
    return -1;
}

static const struct trace_fmt *fmt_by_id(enum eco_trace_format id)
{
    for (size_t i = 0; formats[i]; i++)
        if (formats[i]->id == id)
            return formats[i];
    return NULL;
}

static int find_col(char *const *cols, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return i;
    return -1;
}

/* The format whose sniff claims the first line, or NULL. */
static const struct trace_fmt *sniff_line(const char *line)
{
    for (size_t f = 0; formats[f]; f++)
        if (formats[f]->sniff && formats[f]->sniff(line))
            return formats[f];
    return NULL;
}

/* The first format whose signature columns all appear in the header, or NULL. */
static const struct trace_fmt *detect_fields(char *const *cols, int n)
{
    for (size_t f = 0; formats[f]; f++) {
        if (formats[f]->load)
            continue; /* not comma-separated: sniff_line knows it */
        const char *const *sig = formats[f]->signature;
        while (*sig && find_col(cols, n, *sig) >= 0)
            sig++;
        if (!*sig)
            return formats[f];
    }
    return NULL;
}

static char *skip_bom(char *s)
{
    return strncmp(s, "\xEF\xBB\xBF", 3) == 0 ? s + 3 : s;
}

/* Upper bound on the number of fields of a CSV line (quoted commas make it an overestimate). */
static int count_fields(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += (*s == ',');
    return n;
}

enum eco_trace_format eco_trace_detect(const char *header)
{
    enum eco_trace_format f = ECO_TRACE_AUTO;
    char *copy = strdup(header ? header : "");
    char **cols = NULL;
    if (!copy)
        goto out;
    char *line = skip_bom(copy);
    const struct trace_fmt *sniffed = sniff_line(line);
    if (sniffed) {
        f = sniffed->id;
        goto out;
    }
    int max = count_fields(line);
    cols = malloc((size_t)max * sizeof *cols);
    if (!cols)
        goto out;
    int n = eco_csv_split(line, cols, max);
    const struct trace_fmt *fmt = n > 0 ? detect_fields(cols, n < max ? n : max) : NULL;
    if (fmt)
        f = fmt->id;
out:
    free(cols);
    free(copy);
    return f;
}

/* ---- row helpers used by trace_formats.c ------------------------------------------------- */

static const char *col_name(const struct trace_loader *L, enum trace_role role)
{
    return L->hdr[L->idx[role]];
}

int eco_trace__field(struct trace_loader *L, enum trace_role role, const char **out)
{
    int i = L->idx[role];
    *out = NULL;
    if (i < 0)
        return 0;
    if (i >= L->nfields)
        return eco_errorf(&L->e, -EINVAL,
                          "%s:%lu: column '%s': missing field (the row has %d of %d fields)",
                          L->path, L->line, col_name(L, role), L->nfields, L->ncols);
    *out = L->fields[i];
    return 0;
}

int eco_trace__bad(struct trace_loader *L, enum trace_role role, const char *value,
                   const char *what)
{
    /* Values are cut at 64 bytes so that one absurd field cannot crowd out the rest. */
    return eco_errorf(&L->e, -EINVAL, "%s:%lu: column '%s': '%.64s' %s", L->path, L->line,
                      col_name(L, role), value, what);
}

void eco_trace__warn(const struct trace_loader *L, const char *fmt, ...)
{
    char msg[WARN_MAX];
    va_list ap;
    if (!L->opts->warn)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    L->opts->warn(L->opts->warn_ctx, msg);
}

/* ---- file and lines ---------------------------------------------------------------------- */

/* Reads the next line into L->buf (the reader's, without its line end). Returns 1, 0 at end
 * of file, or a negative errno with L->e naming file and line (NUL bytes, over-long lines and
 * read errors are the reader's to find: src/util/csv.c). */
int eco_trace__next_line(struct trace_loader *L)
{
    size_t len;
    int rc = eco_csv_next(L->csv, &L->buf, &len, &L->e);
    L->line = eco_csv_lineno(L->csv);
    return rc;
}

/* ---- header -------------------------------------------------------------------------------- */

/* Every required column must be there; openb lists without times get their own message. */
static int check_required(struct trace_loader *L)
{
    for (size_t k = 0; k < L->fmt->ncols; k++) {
        const struct trace_col *c = &L->fmt->cols[k];
        if (!c->required || L->idx[c->role] >= 0)
            continue;
        if (L->fmt->id == ECO_TRACE_OPENB &&
            (c->role == TRACE_SUBMIT || c->role == TRACE_START || c->role == TRACE_END))
            return eco_errorf(&L->e, -EINVAL,
                              "%s: openb pod list has no times (no column '%s'; the "
                              "multigpuNN variants are for static packing only) and "
                              "cannot be replayed",
                              L->path, c->name);
        return eco_errorf(&L->e, -EINVAL,
                          "%s: missing required column '%s' in the header (%s format)", L->path,
                          c->name, L->fmt->name);
    }
    return 0;
}

/* Maps header columns to roles and checks the required ones are there; then warns once about
 * columns the format does not know. */
static int map_columns(struct trace_loader *L)
{
    char unknown[WARN_MAX] = "";
    size_t used = 0, nunknown = 0;
    for (int r = 0; r < TRACE_NROLES; r++)
        L->idx[r] = -1;
    for (int i = 0; i < L->ncols; i++) {
        const struct trace_col *c = NULL;
        for (size_t k = 0; k < L->fmt->ncols && !c; k++)
            if (strcmp(L->hdr[i], L->fmt->cols[k].name) == 0)
                c = &L->fmt->cols[k];
        if (!c) {
            nunknown++;
            if (used < sizeof unknown)
                used += (size_t)snprintf(unknown + used, sizeof unknown - used, "%s'%s'",
                                         nunknown > 1 ? ", " : "", L->hdr[i]);
            continue;
        }
        if (c->role == TRACE_IGNORED)
            continue;
        if (L->idx[c->role] >= 0)
            return eco_errorf(&L->e, -EINVAL, "%s:%lu: column '%s' appears twice in the header",
                              L->path, L->line, c->name);
        L->idx[c->role] = i;
    }
    int rc = check_required(L);
    if (rc)
        return rc;
    if (nunknown > 0) {
        L->set->unknown_columns += nunknown;
        eco_trace__warn(L, "%s: ignoring %zu unknown column%s of the %s format: %s%s", L->path,
                        nunknown, nunknown > 1 ? "s" : "", L->fmt->name, unknown,
                        used >= sizeof unknown ? "..." : "");
    }
    return 0;
}

static int read_header(struct trace_loader *L)
{
    int rc;
    do
        rc = eco_trace__next_line(L);
    while (rc == 1 && L->buf[0] == '\0');
    if (rc < 0)
        return rc;
    if (rc == 0)
        return eco_errorf(&L->e, -EINVAL, "%s: empty file, expected a header line", L->path);
    if (L->opts->format == ECO_TRACE_AUTO)
        L->fmt = sniff_line(skip_bom(L->buf));
    else
        L->fmt = fmt_by_id(L->opts->format);
    if (L->fmt && L->fmt->load)
        return 0; /* the format reads its own header */

    L->header = strdup(skip_bom(L->buf));
    int max = L->header ? count_fields(L->header) : 0;
    L->hdr = L->header ? malloc((size_t)max * sizeof *L->hdr) : NULL;
    L->fields = L->hdr ? malloc((size_t)max * sizeof *L->fields) : NULL;
    if (!L->fields)
        return eco_errorf(&L->e, -ENOMEM, "%s: out of memory", L->path);
    L->ncols = eco_csv_split(L->header, L->hdr, max);
    if (L->ncols < 0)
        return eco_errorf(&L->e, -EINVAL, "%s:%lu: malformed quoted field in the header", L->path,
                          L->line);

    if (L->opts->format == ECO_TRACE_AUTO) {
        L->fmt = detect_fields(L->hdr, L->ncols);
        if (!L->fmt)
            return eco_errorf(&L->e, -EINVAL,
                              "%s: the header matches no known trace format (canonical needs "
                              "job_id,submit_s,duration_s,gpus): '%.80s'",
                              L->path, skip_bom(L->buf));
    } else {
        L->fmt = fmt_by_id(L->opts->format);
        if (!L->fmt)
            return eco_errorf(&L->e, -EINVAL, "%s: unknown trace format %d", L->path,
                              (int)L->opts->format);
    }
    return map_columns(L);
}

/* ---- rows ---------------------------------------------------------------------------------- */

static const char *job_id(const void *ctx, uint32_t i)
{
    const struct eco_jobset *set = ctx;
    return eco_jobset_str(set, set->jobs[i].id_off);
}

/* A job id seen on an earlier row of the file is a bad row that names both lines. */
static int check_unique(struct trace_loader *L, uint32_t job)
{
    uint32_t first;
    const char *id = job_id(L->set, job);
    int rc = eco_csv_names_add(&L->ids, id, job, &first);
    if (rc < 0)
        return eco_errorf(&L->e, -ENOMEM, "%s:%lu: out of memory", L->path, L->line);
    if (rc == 0)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "repeats the job id of line %u (job ids must be unique)",
             L->set->jobs[first].line);
    return eco_trace__bad(L, TRACE_ID, id, what);
}

/* Parses the current line into a new job at the end of the set; on anything but success the
 * job and the strings it interned are taken back. */
static int read_row(struct trace_loader *L)
{
    struct eco_jobset *set = L->set;
    size_t str_mark = set->str_len;
    struct eco_job *job = eco_jobset_add(set);
    if (!job)
        return eco_errorf(&L->e, -ENOMEM, "%s:%lu: out of memory", L->path, L->line);
    job->line = (uint32_t)L->line;

    int rc;
    L->nfields = eco_csv_split(L->buf, L->fields, L->ncols);
    if (L->nfields < 0)
        rc = eco_errorf(&L->e, -EINVAL,
                        "%s:%lu: malformed quoted field (unterminated, or text after "
                        "the closing quote)",
                        L->path, L->line);
    else if (L->nfields > L->ncols)
        rc = eco_errorf(&L->e, -EINVAL, "%s:%lu: %d fields, but the header has %d columns", L->path,
                        L->line, L->nfields, L->ncols);
    else
        rc = L->fmt->row(L, job);
    if (!rc)
        rc = check_unique(L, (uint32_t)(set->n - 1));
    if (rc) {
        set->n--;
        set->str_len = str_mark;
    }
    return rc;
}

static int read_rows(struct trace_loader *L, char *first_bad)
{
    const struct eco_trace_opts *o = L->opts;
    size_t loaded = 0;
    while (o->max_jobs == 0 || loaded < o->max_jobs) {
        int rc = eco_trace__next_line(L);
        if (rc <= 0)
            return rc;
        if (L->buf[0] == '\0')
            continue; /* blank line */
        rc = read_row(L);
        if (rc == 0) {
            loaded++;
        } else if (rc == -EINVAL && o->skip_bad_rows) {
            L->set->skipped_rows++;
            if (first_bad[0] == '\0')
                memcpy(first_bad, L->e.msg, sizeof L->e.msg);
        } else if (rc != TRACE_ROW_SKIPPED) {
            return rc;
        }
    }
    return 0;
}

/* A file that gave no job: say why, with what was skipped. */
static int no_jobs(struct trace_loader *L, const struct eco_jobset *saved, const char *first_bad)
{
    const struct eco_jobset *s = L->set;
    size_t bad = s->skipped_rows - saved->skipped_rows;
    size_t cpu = s->skipped_non_gpu - saved->skipped_non_gpu;
    size_t pending = s->skipped_unfinished - saved->skipped_unfinished;
    if (bad)
        return eco_errorf(&L->e, -EINVAL, "%s: holds no job: all %zu rows were bad; the first: %s",
                          L->path, bad, first_bad);
    if (cpu || pending)
        return eco_errorf(&L->e, -EINVAL,
                          "%s: holds no GPU job: %zu CPU-only and %zu pending pods were "
                          "skipped",
                          L->path, cpu, pending);
    return eco_errorf(&L->e, -EINVAL, "%s: holds no job (a header line and no rows)", L->path);
}

int eco_trace_load(const char *path, const struct eco_trace_opts *opts, struct eco_jobset *set,
                   struct eco_error *err)
{
    static const struct eco_trace_opts defaults = {.format = ECO_TRACE_AUTO};
    struct trace_loader L = {.path = path, .opts = opts ? opts : &defaults, .set = set};
    struct eco_jobset saved = *set;
    char *first_bad = L.first_bad;

    eco_csv_names_init(&L.ids, job_id, set);
    int rc = eco_csv_open(path, LINE_MAX_BYTES, &L.csv, &L.e);
    if (!rc)
        eco_csv_set_max_bytes(L.csv, L.opts->max_bytes ? L.opts->max_bytes : ECO_TRACE_MAX_BYTES,
                              "a trace (docs/formats/traces.md)");
    if (!rc)
        rc = read_header(&L);
    if (!rc)
        rc = L.fmt->load ? L.fmt->load(&L) : read_rows(&L, first_bad);
    if (!rc && set->n == saved.n)
        rc = no_jobs(&L, &saved, first_bad);

    if (rc) {
        /* All or nothing: the set is as it was before the call. */
        set->n = saved.n;
        set->str_len = saved.str_len;
        set->skipped_rows = saved.skipped_rows;
        set->skipped_non_gpu = saved.skipped_non_gpu;
        set->skipped_unfinished = saved.skipped_unfinished;
        set->fractional = saved.fractional;
        set->unknown_columns = saved.unknown_columns;
        set->has_epoch = saved.has_epoch;
        set->epoch_s = saved.epoch_s;
        if (err)
            memcpy(err->msg, L.e.msg, sizeof err->msg);
    } else if (set->skipped_rows > saved.skipped_rows) {
        size_t n = set->skipped_rows - saved.skipped_rows;
        eco_trace__warn(&L, "%s: skipped %zu bad row%s; the first: %s", path, n, n > 1 ? "s" : "",
                        first_bad);
    }
    eco_csv_close(L.csv);
    eco_csv_names_fini(&L.ids);
    free(L.header);
    free(L.hdr);
    free(L.fields);
    return rc;
}
