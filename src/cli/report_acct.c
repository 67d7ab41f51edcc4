/* SPDX-License-Identifier: MIT */
/* `ecosched report --accounting FILE`: an operator's table of GPU energy, carbon (where known)
 * and GPU hours per user and per account, from `sacct --json` output and the AdminComment the
 * SPANK plugin writes (docs/report.md "Accounting report", docs/slurm/accounting.md). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "report_acct.h"

/* What starts ecosched's text in an AdminComment (src/slurm/acct_comment_internal.h: the CLI
 * may not include the Slurm module's headers, so the tag is repeated here and the test
 * tests/slurm/sacct.sh reads back what the plugin wrote). */
#define ACCT_TAG "ecosched gpu_energy_j="
/* Seconds in a GPU hour and joules in a kWh. */
#define S_PER_H 3600.0
#define J_PER_KWH 3.6e6

struct row {
    char kind[8]; /* "user" or "account" */
    char *name;
    size_t jobs, measured, with_carbon;
    double energy_j, carbon_g, gpu_h;
};

struct table {
    struct row *v;
    size_t n, cap;
};

static struct row *find(struct table *t, const char *kind, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->v[i].kind, kind) && !strcmp(t->v[i].name, name))
            return &t->v[i];
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct row *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v, t->cap = cap;
    }
    struct row *r = &t->v[t->n];
    memset(r, 0, sizeof *r);
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    if (!(r->name = strdup(name)))
        return NULL;
    t->n++;
    return r;
}

/* The job's GPUs: the count of its allocated TRES of type "gres", name "gpu" (0 without). */
static int gpus_of(const json_t *job, const char *path, size_t i, double *gpus,
                   struct eco_error *err)
{
    const json_t *alloc = json_object_get(json_object_get(job, "tres"), "allocated"), *t;
    size_t k;
    *gpus = 0;
    if (alloc && !json_is_array(alloc))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].tres.allocated: not an array", path, i);
    json_array_foreach(alloc, k, t)
    {
        const char *type = json_string_value(json_object_get(t, "type"));
        const char *name = json_string_value(json_object_get(t, "name"));
        const json_t *count = json_object_get(t, "count");
        if (type && name && !strcmp(type, "gres") && !strcmp(name, "gpu")) {
            if (!json_is_number(count) || json_number_value(count) < 0)
                return eco_errorf(err, -EINVAL,
                                  "%s: jobs[%zu].tres.allocated[%zu].count: not a GPU count", path,
                                  i, k);
            *gpus = json_number_value(count);
        }
    }
    return 0;
}

/* ecosched's figures in an AdminComment: energy (< 0: none) and carbon (< 0: unknown). */
static int comment_of(const char *c, const char *path, size_t i, double *e, double *g,
                      struct eco_error *err)
{
    const char *s = c ? strstr(c, ACCT_TAG) : NULL, *cg;
    char *end;
    *e = *g = -1;
    if (!s)
        return 0;
    *e = strtod(s + strlen(ACCT_TAG), &end);
    if (end == s + strlen(ACCT_TAG) || (*end && *end != ' ') || !(*e >= 0))
        return eco_errorf(err, -EINVAL,
                          "%s: jobs[%zu].comment.administrator: '%.80s': gpu_energy_j is not a "
                          "number of joules",
                          path, i, s);
    if ((cg = strstr(end, " carbon_g="))) {
        *g = strtod(cg + 10, &end);
        if (end == cg + 10 || (*end && *end != ' ') || !(*g >= 0))
            return eco_errorf(err, -EINVAL,
                              "%s: jobs[%zu].comment.administrator: carbon_g is not a number of "
                              "grams",
                              path, i);
    }
    return 0;
}

static int add_job(struct table *t, const json_t *job, const char *path, size_t i,
                   struct eco_error *err)
{
    const json_t *user = json_object_get(job, "user"), *acct = json_object_get(job, "account");
    const json_t *el = json_object_get(json_object_get(job, "time"), "elapsed");
    const json_t *adm = json_object_get(json_object_get(job, "comment"), "administrator");
    double gpus, e, g;
    int rc;
    if (!json_is_object(job))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu]: not an object", path, i);
    if (!json_is_string(user) || !*json_string_value(user))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].user: missing or not a name", path, i);
    if (acct && !json_is_null(acct) && !json_is_string(acct))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].account: not a string", path, i);
    if (!json_is_number(el) || json_number_value(el) < 0)
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].time.elapsed: missing or not seconds", path,
                          i);
    if (adm && !json_is_null(adm) && !json_is_string(adm))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].comment.administrator: not a string", path,
                          i);
    if ((rc = gpus_of(job, path, i, &gpus, err)) < 0 ||
        (rc = comment_of(json_string_value(adm), path, i, &e, &g, err)) < 0)
        return rc;
    const char *a = json_string_value(acct);
    const char *names[2] = {json_string_value(user), a && *a ? a : "-"};
    static const char *const kinds[2] = {"user", "account"};
    for (int k = 0; k < 2; k++) {
        struct row *r = find(t, kinds[k], names[k]);
        if (!r)
            return -ENOMEM;
        r->jobs++;
        r->gpu_h += gpus * json_number_value(el) / S_PER_H;
        if (e >= 0) {
            r->measured++;
            r->energy_j += e;
        }
        if (g >= 0) {
            r->with_carbon++;
            r->carbon_g += g;
        }
    }
    return 0;
}

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int k = strcmp(y->kind, x->kind); /* "user" before "account" */
    return k ? k : strcmp(x->name, y->name);
}

int eco_cli__acct_load(const char *path, struct eco_acct_table **out, struct eco_error *err)
{
    json_error_t je;
    json_t *root = NULL;
    struct table *t = calloc(1, sizeof *t);
    int rc = 0;
    size_t i;
    const json_t *job;
    *out = NULL;
    if (!t)
        return -ENOMEM;
    root = !strcmp(path, "-") ? json_loadf(stdin, 0, &je) : json_load_file(path, 0, &je);
    if (!root) {
        rc = eco_errorf(err, -EINVAL, "%s:%d: not JSON (sacct --json output): %s", path, je.line,
                        je.text);
        goto done;
    }
    const json_t *jobs = json_object_get(root, "jobs");
    if (!json_is_array(jobs)) {
        rc = eco_errorf(err, -EINVAL,
                        "%s: field 'jobs': missing or not an array (sacct --json "
                        "output has one)",
                        path);
        goto done;
    }
    json_array_foreach(jobs, i, job)
    {
        if ((rc = add_job(t, job, path, i, err)) < 0)
            goto done;
    }
    qsort(t->v, t->n, sizeof *t->v, cmp_row);
    *out = (struct eco_acct_table *)t;
    t = NULL;
done:
    json_decref(root);
    eco_cli__acct_free((struct eco_acct_table *)t);
    return rc;
}

void eco_cli__acct_free(struct eco_acct_table *at)
{
    struct table *t = (struct table *)at;
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].name);
    free(t->v);
    free(t);
}

void eco_cli__acct_print(FILE *f, const struct eco_acct_table *at)
{
    const struct table *t = (const struct table *)at;
    fprintf(f, "%-8s %-16s %6s %14s %12s %10s %9s %12s %11s\n", "KIND", "NAME", "JOBS", "ENERGY_J",
            "ENERGY_KWH", "GPU_HOURS", "MEASURED", "CARBON_G", "CARBON_FOR");
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->v[i];
        char carbon[32] = "-", measured[48], cfor[48];
        if (r->with_carbon)
            snprintf(carbon, sizeof carbon, "%.2f", r->carbon_g);
        snprintf(measured, sizeof measured, "%zu/%zu", r->measured, r->jobs);
        snprintf(cfor, sizeof cfor, "%zu/%zu", r->with_carbon, r->jobs);
        fprintf(f, "%-8s %-16s %6zu %14.1f %12.4f %10.3f %9s %12s %11s\n", r->kind, r->name,
                r->jobs, r->energy_j, r->energy_j / J_PER_KWH, r->gpu_h, measured, carbon, cfor);
    }
}

/* Text with &, <, > and " escaped. */
static void html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
}

int eco_cli__acct_html(FILE *f, const struct eco_acct_table *at, const char *title,
                       const char *source)
{
    const struct table *t = (const struct table *)at;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", f);
    html_text(f, title);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
          "collapse}th,td{border:1px solid #ccc;padding:.2em .6em;text-align:right}"
          "th:first-child,td:first-child{text-align:left}</style></head><body>\n<h1>",
          f);
    html_text(f, title);
    fputs("</h1>\n<p>GPU energy measured by ecosched on each node (the jobs' AdminComment), "
          "carbon where the node knew the grid's signal, and GPU hours (allocated GPUs times "
          "elapsed time), from <code>",
          f);
    html_text(f, source);
    fputs("</code>.</p>\n", f);
    static const char *const kinds[2] = {"user", "account"};
    for (int k = 0; k < 2; k++) {
        fprintf(f,
                "<h2>Per %s</h2>\n<table><tr><th>%s</th><th>jobs</th><th>energy (kWh)</th>"
                "<th>energy (J)</th><th>carbon (g CO2e)</th><th>GPU hours</th>"
                "<th>jobs measured</th></tr>\n",
                kinds[k], kinds[k]);
        for (size_t i = 0; i < t->n; i++) {
            const struct row *r = &t->v[i];
            if (strcmp(r->kind, kinds[k]))
                continue;
            fputs("<tr><td>", f);
            html_text(f, r->name);
            fprintf(f,
                    "</td><td>%zu</td><td>%.4f</td><td>%.1f</td><td>%.3f</td><td>%zu of %zu"
                    "</td><td>",
                    r->jobs, r->energy_j / J_PER_KWH, r->energy_j, r->gpu_h, r->measured, r->jobs);
            if (r->with_carbon)
                fprintf(f, "%.2f", r->carbon_g);
            else
                fputs("&ndash;", f);
            fprintf(f, "</td><td>%zu of %zu</td></tr>\n", r->with_carbon, r->jobs);
        }
        fputs("</table>\n", f);
    }
    fputs("</body></html>\n", f);
    return ferror(f) ? -EIO : 0;
}
