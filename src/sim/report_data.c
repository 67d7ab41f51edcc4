/* SPDX-License-Identifier: MIT */
/* What the HTML report reads from one run's output directory: summary.json, the completion
 * and wait times of jobs.csv (sorted, for the CDFs) and timeline.csv aggregated into M4 bins.
 * Every problem names the file, the line and the field. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "util/csv.h"
#include "report_internal.h"

const char *const eco_report__part_key[RPT_PARTS] = {"gpu_busy", "gpu_idle", "node_base", "off",
                                                     "transitions"};
const char *const eco_report__part_label[RPT_PARTS] = {
    "GPUs busy", "GPUs idle", "hosts (node base)", "nodes off", "boots and shutdowns"};

/* Most fields a jobs.csv or timeline.csv line may have; more is an error. */
#define MAX_FIELDS 64

static int path_of(char *buf, size_t cap, const char *dir, const char *name, struct eco_error *err)
{
    if ((size_t)snprintf(buf, cap, "%s/%s", dir, name) >= cap)
        return eco_errorf(err, -EINVAL, "%s: path too long", dir);
    return 0;
}

/* Reads number `key` of object o; `name` is how the message calls it ("energy_j.total"). */
static int num_field(const json_t *o, const char *key, const char *name, const char *path,
                     double *out, struct eco_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return eco_errorf(err, -EINVAL, "%s: field '%s' is missing or not a number", path, name);
    *out = json_number_value(v);
    return 0;
}

static int load_summary(struct eco_report_data *r, const char *dir, struct eco_error *err)
{
    char path[4200];
    json_error_t je;
    int rc = path_of(path, sizeof path, dir, "summary.json", err);
    if (rc)
        return rc;
    r->summary = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!r->summary) {
        if (je.line <= 0)
            return eco_errorf(err, -EINVAL,
                              "%s: %s (is %s an output directory of `ecosched sim "
                              "--out`?)",
                              path, je.text, dir);
        return eco_errorf(err, -EINVAL, "%s: line %d: %s", path, je.line, je.text);
    }
    if (!json_is_object(r->summary))
        return eco_errorf(err, -EINVAL, "%s: line 1: not a JSON object", path);
    const json_t *en = json_object_get(r->summary, "energy_j");
    if (!json_is_object(en))
        return eco_errorf(err, -EINVAL, "%s: field 'energy_j' is missing or not an object", path);
    const json_t *o = r->summary;
    if ((rc = num_field(o, "avg_jct_s", "avg_jct_s", path, &r->avg_jct_s, err)) ||
        (rc = num_field(o, "cluster_gpus", "cluster_gpus", path, &r->gpus, err)) ||
        (rc = num_field(o, "cluster_nodes", "cluster_nodes", path, &r->nodes, err)) ||
        (rc = num_field(o, "window_start_s", "window_start_s", path, &r->win0_s, err)) ||
        (rc = num_field(o, "window_end_s", "window_end_s", path, &r->win1_s, err)) ||
        (rc = num_field(en, "total", "energy_j.total", path, &r->energy_j, err)))
        return rc;
    for (int p = 0; p < RPT_PARTS; p++) {
        const json_t *v = json_object_get(en, eco_report__part_key[p]);
        if (v && !json_is_number(v))
            return eco_errorf(err, -EINVAL, "%s: field 'energy_j.%s' is not a number", path,
                              eco_report__part_key[p]);
        r->part_j[p] = v ? json_number_value(v) : 0;
    }
    if (!r->label) {
        const json_t *pol = json_object_get(r->summary, "policy");
        if (!json_is_string(pol))
            return eco_errorf(err, -EINVAL, "%s: field 'policy' is missing or not a string", path);
        r->label = json_string_value(pol);
    }
    return 0;
}

/* Index of column `name` in a header split into f[0..n), or -1. */
static int column(char **f, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(f[i], name))
            return i;
    return -1;
}

static int push(double **a, size_t *n, size_t *cap, double v)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 1024;
        double *b = realloc(*a, nc * sizeof *b);
        if (!b)
            return -ENOMEM;
        *a = b;
        *cap = nc;
    }
    (*a)[(*n)++] = v;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Opens DIR/NAME and splits its header; *cols gets the indices of the `n` wanted columns. */
static FILE *open_csv(const char *dir, const char *name, const char *const *want, int n, int *cols,
                      char *path, size_t cap, char **line, size_t *lcap, struct eco_error *err)
{
    char *f[MAX_FIELDS];
    if (path_of(path, cap, dir, name, err))
        return NULL;
    FILE *in = fopen(path, "r");
    if (!in) {
        eco_errorf(err, -EINVAL, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (getline(line, lcap, in) < 0) {
        eco_errorf(err, -EINVAL, "%s: line 1: empty file, expected a header", path);
        goto bad;
    }
    int nf = eco_csv_split(*line, f, MAX_FIELDS);
    if (nf < 0 || nf > MAX_FIELDS) {
        eco_errorf(err, -EINVAL, "%s: line 1: malformed header", path);
        goto bad;
    }
    for (int i = 0; i < n; i++)
        if ((cols[i] = column(f, nf, want[i])) < 0) {
            eco_errorf(err, -EINVAL, "%s: line 1: no column '%s'", path, want[i]);
            goto bad;
        }
    return in;
bad:
    fclose(in);
    return NULL;
}

/* Splits data line `ln` and parses the wanted columns into v (NAN for an empty field when
 * `empty_ok`). */
static int parse_row(char *line, const int *cols, const char *const *names, int n, double *v,
                     int empty_ok, const char *path, size_t ln, struct eco_error *err)
{
    char *f[MAX_FIELDS];
    int nf = eco_csv_split(line, f, MAX_FIELDS);
    if (nf < 0 || nf > MAX_FIELDS)
        return eco_errorf(err, -EINVAL, "%s: line %zu: malformed CSV line", path, ln);
    for (int i = 0; i < n; i++) {
        if (cols[i] >= nf)
            return eco_errorf(err, -EINVAL, "%s: line %zu: field '%s' is missing", path, ln,
                              names[i]);
        const char *s = f[cols[i]];
        if (!*s && empty_ok) {
            v[i] = NAN;
            continue;
        }
        if (eco_parse_double(s, &v[i]) || v[i] < 0)
            return eco_errorf(err, -EINVAL,
                              "%s: line %zu: field '%s': '%.40s' is not a number >= 0", path, ln,
                              names[i], s);
    }
    return 0;
}

static int load_jobs(struct eco_report_data *r, const char *dir, struct eco_error *err)
{
    static const char *const want[] = {"jct_s", "wait_s"};
    char path[4200], *line = NULL;
    size_t lcap = 0, cap_j = 0, cap_w = 0, ln = 1, nw = 0;
    int cols[2], rc = 0;
    FILE *in = open_csv(dir, "jobs.csv", want, 2, cols, path, sizeof path, &line, &lcap, err);
    if (!in) {
        free(line);
        return -EINVAL;
    }
    while (getline(&line, &lcap, in) >= 0) {
        double v[2];
        ln++;
        if ((rc = parse_row(line, cols, want, 2, v, 1, path, ln, err)))
            goto out;
        if (isnan(v[0]) != isnan(v[1])) {
            rc = eco_errorf(err, -EINVAL, "%s: line %zu: field '%s' is empty but '%s' is not", path,
                            ln, isnan(v[0]) ? "jct_s" : "wait_s", isnan(v[0]) ? "wait_s" : "jct_s");
            goto out;
        }
        if (isnan(v[0]))
            continue; /* not completed */
        if (push(&r->jct_s, &r->n_done, &cap_j, v[0]) || push(&r->wait_s, &nw, &cap_w, v[1])) {
            rc = -ENOMEM;
            goto out;
        }
    }
    if (ferror(in))
        rc = eco_errorf(err, -EINVAL, "%s: read error", path);
    qsort(r->jct_s, r->n_done, sizeof *r->jct_s, cmp_double);
    qsort(r->wait_s, r->n_done, sizeof *r->wait_s, cmp_double);
out:
    free(line);
    fclose(in);
    return rc;
}

int eco_report__load(struct eco_report_data *r, const struct eco_report_run *in,
                     struct eco_error *err)
{
    memset(r, 0, sizeof *r);
    r->label = in->label;
    int rc = load_summary(r, in->dir, err);
    return rc ? rc : load_jobs(r, in->dir, err);
}

/* Adds the value v held over bins [x0, x1) (positions in bins) to the M4 bins of one series. */
static void m4_add(struct eco_report_bin *b, double x0, double x1, double v)
{
    if (!(x1 > x0) || x1 <= 0 || x0 >= RPT_COLS)
        return;
    int b0 = x0 < 0 ? 0 : (int)x0;
    int b1 = x1 >= RPT_COLS ? RPT_COLS - 1 : (int)ceil(x1) - 1;
    for (int i = b0; i <= b1; i++) {
        struct eco_report_bin *k = &b[i];
        double at = i == b0 ? (x0 > i ? x0 : i) : i;
        if (!k->used) {
            *k = (struct eco_report_bin){v, v, v, v, at, at, 1};
            continue;
        }
        if (v < k->lo)
            k->lo = v, k->x_lo = at;
        if (v > k->hi)
            k->hi = v, k->x_hi = at;
        k->last = v;
    }
}

int eco_report__load_timeline(struct eco_report_data *r, const char *dir, double t0, double t1,
                              struct eco_error *err)
{
    static const char *const want[] = {"time_s",    "power_w",  "budget_w",
                                       "busy_gpus", "nodes_on", "queued"};
    char path[4200], *line = NULL;
    size_t lcap = 0, ln = 1;
    int cols[6], rc = 0;
    double prev[6] = {0}, scale = RPT_COLS / (t1 > t0 ? t1 - t0 : 1);
    FILE *in = open_csv(dir, "timeline.csv", want, 6, cols, path, sizeof path, &line, &lcap, err);
    if (!in) {
        free(line);
        return -EINVAL;
    }
    while (getline(&line, &lcap, in) >= 0) {
        double v[6];
        ln++;
        if ((rc = parse_row(line, cols, want, 6, v, 0, path, ln, err)))
            goto out;
        if (r->timeline_rows && v[0] < prev[0]) {
            rc = eco_errorf(err, -EINVAL,
                            "%s: line %zu: field 'time_s': %.15g is before the line "
                            "above (%.15g)",
                            path, ln, v[0], prev[0]);
            goto out;
        }
        if (r->timeline_rows)
            for (int s = 0; s < TS_N; s++)
                m4_add(r->ts[s], (prev[0] - t0) * scale, (v[0] - t0) * scale, prev[s + 1]);
        for (int s = 0; s < TS_N; s++)
            r->ts_max[s] = fmax(r->ts_max[s], v[s + 1]);
        memcpy(prev, v, sizeof prev);
        r->timeline_rows++;
    }
    if (ferror(in))
        rc = eco_errorf(err, -EINVAL, "%s: read error", path);
out:
    free(line);
    fclose(in);
    return rc;
}

void eco_report__fini(struct eco_report_data *r)
{
    json_decref(r->summary);
    free(r->jct_s);
    free(r->wait_s);
    memset(r, 0, sizeof *r);
}

/* ---- finding the runs of a directory --------------------------------------------------- */

static int has_summary(const char *dir)
{
    char path[4200];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/summary.json", dir) >= sizeof path)
        return 0;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_run(const void *a, const void *b)
{
    return strcmp(((const struct eco_report_run *)a)->label,
                  ((const struct eco_report_run *)b)->label);
}

void eco_report_runs_free(struct eco_report_run *runs, size_t n)
{
    for (size_t i = 0; runs && i < n; i++) {
        free((char *)runs[i].dir);
        free((char *)runs[i].label);
    }
    free(runs);
}

/* Puts the runs named in DIR/compare.txt first, in its order (the --compare order); the others
 * keep their name order after them. A missing file leaves the name order. */
static int compare_order(struct eco_report_run *runs, size_t n, const char *dir,
                         struct eco_error *err)
{
    char path[4200], line[256];
    size_t at = 0, lineno = 0;
    int rc = 0;
    snprintf(path, sizeof path, "%s/%s", dir, ECO_REPORT_ORDER_FILE);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : eco_errorf(err, -EINVAL, "%s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        for (size_t i = at; i < n && *line; i++) {
            if (strcmp(runs[i].label, line))
                continue;
            struct eco_report_run t = runs[i];
            memmove(&runs[at + 1], &runs[at], (i - at) * sizeof *runs);
            runs[at++] = t;
            break;
        }
    }
    if (ferror(f))
        rc = eco_errorf(err, -EINVAL, "%s: line %zu: %s", path, lineno + 1, strerror(errno));
    fclose(f);
    return rc;
}

int eco_report_save_order(const char *dir, const char *const *names, size_t n,
                          struct eco_error *err)
{
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, ECO_REPORT_ORDER_FILE) >= sizeof path)
        return eco_errorf(err, -EINVAL, "%s: path too long", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return eco_errorf(err, -EINVAL, "cannot write %s: %s", path, strerror(errno));
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", names[i]);
    int bad = ferror(f);
    if (fclose(f) || bad)
        return eco_errorf(err, -EINVAL, "error writing %s", path);
    return 0;
}

static int add_sub(struct eco_report_run *runs, size_t *n, const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *d = malloc(len), *l = strdup(name);
    if (!d || !l) {
        free(d);
        free(l);
        return -ENOMEM;
    }
    snprintf(d, len, "%s/%s", dir, name);
    if (!has_summary(d)) {
        free(d);
        free(l);
        return 0;
    }
    runs[(*n)++] = (struct eco_report_run){d, l};
    return 0;
}

int eco_report_find_runs(const char *dir, struct eco_report_run **out, size_t *n,
                         struct eco_error *err)
{
    struct eco_report_run *runs = calloc(ECO_REPORT_MAX_RUNS + 1, sizeof *runs);
    DIR *d = NULL;
    int rc = 0;
    *out = NULL;
    *n = 0;
    if (!runs)
        return -ENOMEM;
    if (has_summary(dir)) {
        if (!(runs[0].dir = strdup(dir))) {
            rc = -ENOMEM;
            goto out;
        }
        *n = 1;
        goto out;
    }
    if (!(d = opendir(dir))) {
        rc = eco_errorf(err, -errno, "%s: %s", dir, strerror(errno));
        goto out;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == ECO_REPORT_MAX_RUNS + 1 || (rc = add_sub(runs, n, dir, e->d_name)))
            break;
    }
    if (!rc && *n > ECO_REPORT_MAX_RUNS)
        rc = eco_errorf(err, -EINVAL, "%s: more than %d runs; name the ones to report", dir,
                        ECO_REPORT_MAX_RUNS);
    else if (!rc && *n == 0)
        rc = eco_errorf(err, -EINVAL,
                        "%s: no summary.json in it or its subdirectories (not an "
                        "output directory of `ecosched sim --out`)",
                        dir);
    else if (!rc) {
        qsort(runs, *n, sizeof *runs, cmp_run);
        rc = compare_order(runs, *n, dir, err);
    }
out:
    if (d)
        closedir(d);
    if (rc) {
        eco_report_runs_free(runs, *n);
        *n = 0;
    } else {
        *out = runs;
    }
    return rc;
}
