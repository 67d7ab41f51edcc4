/* SPDX-License-Identifier: MIT */
/* `ecosched report --accounting FILE`: an operator's table of GPU energy, carbon (where known)
 * and GPU hours per user and per account, from `sacct --json` output and the AdminComment the
 * SPANK plugin writes, or per user from an ecoschedd's jobs (`daemon:[SOCKET|URL]`, its
 * GET /v1/jobs pages; docs/report.md "Accounting report", docs/slurm/accounting.md). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "report_acct.h"
#include "util/http_client.h"

/* What starts ecosched's text in an AdminComment (src/slurm/acct_comment_internal.h: the CLI
 * may not include the Slurm module's headers, so the tag is repeated here and the test
 * tests/slurm/sacct.sh reads back what the plugin wrote). */
#define ACCT_TAG "ecosched gpu_energy_j="
/* Seconds in a GPU hour and joules in a kWh. */
#define S_PER_H 3600.0
#define J_PER_KWH 3.6e6
/* What names an ecoschedd instead of a file, and its socket without one (the CLI clients'
 * default, src/cli/cmd_client.c; ECOSCHED_SOCKET overrides it as it does for them). */
#define DAEMON_PREFIX "daemon:"
#define DAEMON_SOCKET "/run/ecosched/ecoschedd.sock"
/* GET /v1/jobs pages: the daemon's largest page (LIST_MAX in src/daemon/api.c), a 10 s wait
 * per page (a page of 1000 jobs is read from SQLite in milliseconds), and 10^4 pages (ten
 * million jobs) at most, so a daemon that never ends its listing cannot hold the report. */
#define DAEMON_PAGE 1000
#define DAEMON_TIMEOUT_MS 10000
#define DAEMON_MAX_PAGES 10000
/* Listings tried again when the daemon pruned jobs while the pages were read (a pruned job's
 * figures move from its row to the totals of the first page, so it might count twice or not
 * at all): pruning runs once a minute at most (PRUNE_EVERY_S in src/daemon/sched.c), so a
 * second try almost always reads a quiet store; three, then the report fails. */
#define DAEMON_TRIES 3

struct row {
    char kind[8]; /* "user" or "account" */
    char *name;
    size_t jobs, measured, with_carbon;
    double energy_j, carbon_g, gpu_h;
};

struct table {
    struct row *v;
    size_t n, cap;
    /* an ecoschedd's pruned jobs (its first page's "pruned"; docs/http-api.md), counted in
     * the user rows and named below the table */
    size_t pruned_jobs;
    double pruned_energy_j, pruned_last_end_s;
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

/* Largest energy (J) or carbon (g) read from an AdminComment, excluded: the plugin's bound on
 * what it writes (PART_MAX in src/slurm/acct_comment.c), a petajoule, 30 MW for a year. */
#define COMMENT_MAX 1e15

/* A figure at s as the plugin prints it ("%.1f", "%.2f"): digits, optionally a point and
 * digits, below COMMENT_MAX; *end after it. strtod alone takes inf, nan, 1e999 (as HUGE_VAL),
 * hexadecimal and signs. */
static bool decimal(const char *s, char **end, double *v)
{
    size_t n = strspn(s, "0123456789"), f;
    if (n && s[n] == '.' && (f = strspn(s + n + 1, "0123456789")))
        n += 1 + f;
    else if (!n || s[n] == '.')
        return false;
    *v = strtod(s, end);
    return *end == s + n && *v < COMMENT_MAX;
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
    if (!decimal(s + strlen(ACCT_TAG), &end, e) || (*end && *end != ' '))
        return eco_errorf(err, -EINVAL,
                          "%s: jobs[%zu].comment.administrator: '%.80s': gpu_energy_j is not a "
                          "number of joules",
                          path, i, s);
    if ((cg = strstr(end, " carbon_g="))) {
        if (!decimal(cg + 10, &end, g) || (*end && *end != ' '))
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

/* A uid's user name, or the number when the passwd database has none. */
static void user_of(uid_t uid, char *buf, size_t cap)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res && res->pw_name[0])
        snprintf(buf, cap, "%s", res->pw_name);
    else
        snprintf(buf, cap, "%u", (unsigned)uid);
}

/* A job of the daemon's GET /v1/jobs (docs/http-api.md) into its user's row: energy_j (the
 * daemon's measured share of its GPUs' counters), carbon_kg where the daemon had a signal, and
 * GPU hours from start_s to end_s (to now while running). A job that never started counts but
 * is not measured. The daemon has no accounts: user rows only. */
static int add_daemon_job(struct table *t, const json_t *job, const char *src, size_t i,
                          double now_s, struct eco_error *err)
{
    const json_t *uid = json_object_get(job, "uid"), *e = json_object_get(job, "energy_j");
    const json_t *gpus = json_object_get(job, "gpus"), *st = json_object_get(job, "start_s");
    const json_t *en = json_object_get(job, "end_s"), *c = json_object_get(job, "carbon_kg");
    char user[256];
    if (!json_is_object(job))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu]: not an object", src, i);
    if (!json_is_integer(uid) || json_integer_value(uid) < 0)
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].uid: missing or not a user id", src, i);
    if (!json_is_number(e) || !(json_number_value(e) >= 0))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].energy_j: missing or not joules", src, i);
    if (!json_is_integer(gpus) || json_integer_value(gpus) < 0)
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].gpus: missing or not a GPU count", src, i);
    if ((st && !json_is_null(st) && !json_is_number(st)) ||
        (en && !json_is_null(en) && !json_is_number(en)))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].start_s/end_s: not seconds", src, i);
    if (c && !json_is_null(c) && (!json_is_number(c) || !(json_number_value(c) >= 0)))
        return eco_errorf(err, -EINVAL, "%s: jobs[%zu].carbon_kg: not kilograms", src, i);
    user_of((uid_t)json_integer_value(uid), user, sizeof user);
    struct row *r = find(t, "user", user);
    if (!r)
        return -ENOMEM;
    r->jobs++;
    if (!json_is_number(st))
        return 0;
    double end = json_is_number(en) ? json_number_value(en) : now_s;
    r->gpu_h += (double)json_integer_value(gpus) * fmax(0, end - json_number_value(st)) / S_PER_H;
    r->measured++;
    r->energy_j += json_number_value(e);
    if (json_is_number(c)) {
        r->with_carbon++;
        r->carbon_g += json_number_value(c) * 1000.0;
    }
    return 0;
}

/* field F of o as a count >= 0 into *v; false when missing or not one. */
static bool get_count(const json_t *o, const char *f, size_t *v)
{
    const json_t *x = json_object_get(o, f);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return false;
    *v = (size_t)json_integer_value(x);
    return true;
}

/* field F of o as a number >= 0 into *v; false when missing or not one. */
static bool get_amount(const json_t *o, const char *f, double *v)
{
    const json_t *x = json_object_get(o, f);
    if (!json_is_number(x) || !(json_number_value(x) >= 0) || !isfinite(json_number_value(x)))
        return false;
    *v = json_number_value(x);
    return true;
}

/* A first page's "pruned" (the daemon's totals of the jobs it deleted after keep_finished_s,
 * per user) into t: each user's into their row, the count and the latest end into t. */
static int add_pruned(struct table *t, const json_t *p, const char *src, struct eco_error *err)
{
    const json_t *users = json_object_get(p, "users"), *u;
    const json_t *last = json_object_get(p, "last_end_s");
    size_t jobs = 0, i;
    double e = 0;
    if (!json_is_object(p) || !get_count(p, "jobs", &jobs) || !get_amount(p, "energy_j", &e) ||
        !json_is_array(users) || (!json_is_null(last) && !json_is_number(last)))
        return eco_errorf(err, -EINVAL,
                          "%s: field 'pruned': not the daemon's pruned totals (jobs, energy_j, "
                          "last_end_s, users)",
                          src);
    json_array_foreach(users, i, u)
    {
        size_t n = 0, started = 0, with_carbon = 0;
        double ej = 0, gpu_s = 0, kg = 0;
        const json_t *uid = json_object_get(u, "uid");
        char user[256];
        if (!json_is_integer(uid) || json_integer_value(uid) < 0 || !get_count(u, "jobs", &n) ||
            !get_count(u, "started", &started) || !get_count(u, "with_carbon", &with_carbon) ||
            !get_amount(u, "energy_j", &ej) || !get_amount(u, "gpu_s", &gpu_s) ||
            !get_amount(u, "carbon_kg", &kg))
            return eco_errorf(err, -EINVAL,
                              "%s: pruned.users[%zu]: not a user's pruned totals (uid, jobs, "
                              "started, with_carbon, energy_j, gpu_s, carbon_kg)",
                              src, i);
        user_of((uid_t)json_integer_value(uid), user, sizeof user);
        struct row *r = find(t, "user", user);
        if (!r)
            return -ENOMEM;
        r->jobs += n;
        r->measured += started;
        r->energy_j += ej;
        r->gpu_h += gpu_s / S_PER_H;
        r->with_carbon += with_carbon;
        r->carbon_g += kg * 1000.0;
    }
    t->pruned_jobs += jobs;
    t->pruned_energy_j += e;
    if (json_is_number(last) && json_number_value(last) > t->pruned_last_end_s)
        t->pruned_last_end_s = json_number_value(last);
    return 0;
}

/* The jobs of one /v1/jobs page (root, named src in errors) into t; *next the page's "next"
 * (-1 on the last page). */
static int add_daemon_page(struct table *t, const json_t *root, const char *src, size_t *base,
                           json_int_t *next, struct eco_error *err)
{
    const json_t *jobs = json_object_get(root, "jobs"), *job, *nx = json_object_get(root, "next");
    size_t i;
    int rc;
    double now_s = (double)time(NULL);
    if (!json_is_array(jobs))
        return eco_errorf(err, -EINVAL, "%s: field 'jobs': missing or not an array", src);
    if (!json_is_null(nx) && (!json_is_integer(nx) || json_integer_value(nx) <= 0))
        return eco_errorf(err, -EINVAL, "%s: field 'next': not a job id or null", src);
    if (json_object_get(root, "pruned") &&
        (rc = add_pruned(t, json_object_get(root, "pruned"), src, err)) < 0)
        return rc;
    json_array_foreach(jobs, i, job)
    {
        if ((rc = add_daemon_job(t, job, src, *base + i, now_s, err)) < 0)
            return rc;
    }
    *base += json_array_size(jobs);
    *next = json_is_integer(nx) ? json_integer_value(nx) : -1;
    return 0;
}

/* GET path of the ecoschedd at endpoint into *out (the caller's), or an error naming both. */
static int get_page(const char *endpoint, const char *path, json_t **out, struct eco_error *err)
{
    long status = 0;
    struct eco_error he = {{0}};
    int rc = 0;
    json_t *o = eco_http_json(endpoint, path, NULL, DAEMON_TIMEOUT_MS, &status, &he);
    *out = NULL;
    if (!o || status != 200) {
        const char *why = o ? json_string_value(json_object_get(o, "error")) : NULL;
        if (!o) /* he.msg names the endpoint */
            rc = eco_errorf(err, -EIO, "%s (GET %s)", he.msg, path);
        else
            rc = eco_errorf(err, -EIO, "%s: GET %s: HTTP %ld: %s", endpoint, path, status,
                            why ? why : "not a job listing");
        json_decref(o);
        return rc;
    }
    *out = o;
    return 0;
}

/* The daemon's count of pruned jobs now (its first page's), into *n. */
static int pruned_now(const char *endpoint, size_t *n, struct eco_error *err)
{
    json_t *o = NULL;
    int rc = get_page(endpoint, "/v1/jobs?limit=1", &o, err);
    *n = 0;
    if (rc == 0 && !get_count(json_object_get(o, "pruned"), "jobs", n))
        *n = 0; /* a daemon that does not prune says nothing */
    json_decref(o);
    return rc;
}

/* Empties t for another try. */
static void table_clear(struct table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].name);
    t->n = 0;
    t->pruned_jobs = 0;
    t->pruned_energy_j = t->pruned_last_end_s = 0;
}

/* Every job of the ecoschedd at endpoint (a socket path or an http(s) URL), page by page. */
static int load_daemon_once(struct table *t, const char *endpoint, struct eco_error *err)
{
    json_int_t after = 0;
    size_t base = 0;
    int rc = 0;
    for (unsigned page = 0; after >= 0; page++) {
        char path[96];
        json_t *o = NULL;
        if (page >= DAEMON_MAX_PAGES)
            return eco_errorf(err, -EIO, "%s: GET /v1/jobs: more than %d pages", endpoint,
                              DAEMON_MAX_PAGES);
        snprintf(path, sizeof path, "/v1/jobs?limit=%d&after=%" JSON_INTEGER_FORMAT, DAEMON_PAGE,
                 after);
        if ((rc = get_page(endpoint, path, &o, err)) < 0)
            return rc;
        json_int_t next = -1;
        rc = add_daemon_page(t, o, endpoint, &base, &next, err);
        json_decref(o);
        if (rc < 0)
            return rc;
        if (next >= 0 && next <= after)
            return eco_errorf(err, -EIO,
                              "%s: GET %s: 'next' %" JSON_INTEGER_FORMAT " does not advance",
                              endpoint, path, next);
        after = next;
    }
    return 0;
}

/* load_daemon_once, again while the daemon pruned jobs meanwhile (its count of pruned jobs
 * after the pages is not the first page's). */
static int load_daemon(struct table *t, const char *endpoint, struct eco_error *err)
{
    for (int k = 0; k < DAEMON_TRIES; k++) {
        size_t now = 0;
        int rc;
        table_clear(t);
        if ((rc = load_daemon_once(t, endpoint, err)) < 0 ||
            (rc = pruned_now(endpoint, &now, err)) < 0)
            return rc;
        if (now == t->pruned_jobs)
            return 0;
    }
    return eco_errorf(err, -EAGAIN,
                      "%s: GET /v1/jobs: the daemon pruned jobs while its listing was read, %d "
                      "times; try again",
                      endpoint, DAEMON_TRIES);
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
    if (!strncmp(path, DAEMON_PREFIX, strlen(DAEMON_PREFIX))) {
        const char *ep = path + strlen(DAEMON_PREFIX), *env = getenv("ECOSCHED_SOCKET");
        if (!*ep)
            ep = env && *env ? env : DAEMON_SOCKET;
        if ((rc = load_daemon(t, ep, err)) < 0)
            goto done;
        goto sorted;
    }
    root = !strcmp(path, "-") ? json_loadf(stdin, 0, &je) : json_load_file(path, 0, &je);
    if (!root) {
        rc = eco_errorf(err, -EINVAL, "%s:%d: not JSON (sacct --json output): %s", path, je.line,
                        je.text);
        goto done;
    }
    const json_t *jobs = json_object_get(root, "jobs");
    if (json_object_get(root, "next")) { /* a saved page of an ecoschedd's GET /v1/jobs */
        json_int_t next;
        size_t base = 0;
        if ((rc = add_daemon_page(t, root, path, &base, &next, err)) < 0)
            goto done;
        goto sorted;
    }
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
sorted:
    if (t->n) /* t->v is NULL without a row: qsort's pointer may not be */
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

/* Unix seconds as "YYYY-MM-DD HH:MM:SS UTC" into buf. */
static const char *utc(double t_s, char *buf, size_t cap)
{
    struct tm tm;
    time_t t = (time_t)t_s;
    if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, cap, "@%.0f", t_s);
    return buf;
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
    if (t->pruned_jobs) {
        char when[64];
        fprintf(f,
                "pruned: %zu jobs that ended by %s were deleted from the daemon's store "
                "(keep_finished_s); their %.4f kWh, GPU hours and carbon are in the user rows "
                "above, from the daemon's totals\n",
                t->pruned_jobs, utc(t->pruned_last_end_s, when, sizeof when),
                t->pruned_energy_j / J_PER_KWH);
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
    fprintf(f,
            "</h1>\n<p>GPU energy measured by ecosched on each node (%s), carbon where the "
            "node knew the grid's signal, and GPU hours (allocated GPUs times elapsed time), "
            "from <code>",
            strncmp(source, DAEMON_PREFIX, strlen(DAEMON_PREFIX)) ? "the jobs' AdminComment"
                                                                  : "the daemon's jobs");
    html_text(f, source);
    fputs("</code>.</p>\n", f);
    if (t->pruned_jobs) {
        char when[64];
        fprintf(f,
                "<p>%zu jobs that ended by %s were pruned from the daemon's store "
                "(<code>keep_finished_s</code>); their %.4f kWh, GPU hours and carbon are in the "
                "user rows, from the daemon's totals.</p>\n",
                t->pruned_jobs, utc(t->pruned_last_end_s, when, sizeof when),
                t->pruned_energy_j / J_PER_KWH);
    }
    static const char *const kinds[2] = {"user", "account"};
    for (int k = 0; k < 2; k++) {
        size_t rows = 0;
        for (size_t i = 0; i < t->n; i++)
            rows += !strcmp(t->v[i].kind, kinds[k]);
        if (!rows && k > 0) /* an ecoschedd's jobs have no accounts */
            continue;
        fprintf(f,
                "<h2>Per %s</h2>\n<table><tr><th>%s</th><th>jobs</th><th>energy (kWh)</th>"
                "<th>energy (J)</th><th>GPU hours</th><th>jobs measured</th>"
                "<th>carbon (g CO2e)</th><th>jobs with carbon</th></tr>\n",
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
