/* SPDX-License-Identifier: MIT */
/* Job store: round trips with awkward argv/env, bad input refused, guarded transitions,
 * migrations and reopen, non-SQLite files, two handles at once (WAL), pruned jobs' totals, the
 * id file against a lost or cut WAL and a reboot, and SIGKILL mid-write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include <sqlite3.h>
#include "daemon/store.h"
#include "test_util.h"

struct fixture {
    char dir[64];
    char path[96];
};

static const char *const DB_SUFFIXES[] = {"", "-wal", "-shm", "-journal", ".ids"};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/eco-store-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/jobs.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    char p[128];
    for (size_t i = 0; i < sizeof DB_SUFFIXES / sizeof DB_SUFFIXES[0]; i++) {
        snprintf(p, sizeof p, "%s%s", f->path, DB_SUFFIXES[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

static struct eco_store *open_ok(const char *path)
{
    struct eco_store *s = NULL;
    struct eco_error err = {{0}};
    int rc = eco_store_open(path, &s, &err);
    if (rc != 0)
        fprintf(stderr, "open: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_non_null(s);
    return s;
}

static struct eco_store_job sample_job(const char *argv_json, const char *env_json)
{
    struct eco_store_job j = {
        .uid = 1000,
        .gid = 100,
        .name = "train",
        .cwd = "/home/ana/proj",
        .argv_json = argv_json,
        .env_json = env_json,
        .gpus = 2,
        .gpu_mem_gb = 12.5,
        .share = true,
        .power_cap_w = ECO_STORE_CAP_AUTO,
        .deadline_s = 1718003600.0,
        .submit_s = 1718000000.25,
        .stdout_path = "/home/ana/proj/out.log",
        .stderr_path = "/home/ana/proj/err.log",
    };
    return j;
}

static int64_t insert_ok(struct eco_store *s, const struct eco_store_job *j)
{
    struct eco_error err = {{0}};
    int64_t id = 0;
    int rc = eco_store_insert(s, j, &id, &err);
    if (rc != 0)
        fprintf(stderr, "insert: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_true(id > 0);
    return id;
}

static size_t count_jobs(struct eco_store *s, int state)
{
    struct eco_store_job *v = NULL;
    size_t n = 0;
    assert_int_equal(eco_store_list(s, state, 0, 0, &v, &n, NULL), 0);
    eco_store_jobs_free(v, n);
    return n;
}

/* Arguments a shell would mangle: quotes, commas, backslashes, newlines and UTF-8. */
static const char *const AWKWARD_ARGV[] = {
    "python3",
    "-c",
    "print(\"a, b\", 'c')",
    "back\\slash",
    "two\nlines",
    "h\xc3\xa9llo \xe2\x9c\x93",
    "\xe6\x97\xa5\xe6\x9c\xac",
    "",
};

static void test_round_trip(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = open_ok(f->path);
    size_t nargs = sizeof AWKWARD_ARGV / sizeof AWKWARD_ARGV[0];
    json_t *arr = json_array(), *env = json_object();
    for (size_t i = 0; i < nargs; i++)
        json_array_append_new(arr, json_string(AWKWARD_ARGV[i]));
    json_object_set_new(env, "A", json_string("x,y"));
    json_object_set_new(env, "Q", json_string("\"quoted\" 'too'"));
    json_object_set_new(env, "U", json_string("\xc3\xbc\x6e\xc3\xaf"));
    char *argv_json = json_dumps(arr, JSON_COMPACT);
    char *env_json = json_dumps(env, JSON_COMPACT | JSON_ENSURE_ASCII);
    struct eco_store_job in = sample_job(argv_json, env_json);
    int64_t id = insert_ok(s, &in);

    struct eco_store_job out;
    assert_int_equal(eco_store_get(s, id, &out, NULL), 0);
    assert_int_equal(out.id, id);
    assert_int_equal(out.state, ECO_STORE_QUEUED);
    assert_int_equal(out.uid, 1000);
    assert_int_equal(out.gid, 100);
    assert_string_equal(out.name, "train");
    assert_string_equal(out.cwd, in.cwd);
    assert_string_equal(out.argv_json, argv_json);
    assert_string_equal(out.env_json, env_json);
    assert_int_equal(out.gpus, 2);
    assert_true(out.gpu_mem_gb == 12.5);
    assert_true(out.share);
    assert_true(out.power_cap_w == ECO_STORE_CAP_AUTO);
    assert_true(out.deadline_s == in.deadline_s);
    assert_true(out.submit_s == in.submit_s);
    assert_string_equal(out.stdout_path, in.stdout_path);
    assert_string_equal(out.stderr_path, in.stderr_path);
    assert_null(out.assigned_gpus);
    assert_null(out.reason);
    assert_int_equal(out.pid, 0);
    assert_int_equal(out.exit_status, -1);
    assert_true(out.start_s == 0 && out.end_s == 0 && out.energy_j == 0);

    /* The stored JSON decodes back to the very strings. */
    json_t *back = json_loads(out.argv_json, 0, NULL);
    assert_non_null(back);
    assert_int_equal(json_array_size(back), nargs);
    for (size_t i = 0; i < nargs; i++)
        assert_string_equal(json_string_value(json_array_get(back, i)), AWKWARD_ARGV[i]);
    json_decref(back);
    back = json_loads(out.env_json, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(back, "Q")), "\"quoted\" 'too'");
    assert_string_equal(json_string_value(json_object_get(back, "U")), "\xc3\xbc\x6e\xc3\xaf");
    json_decref(back);
    eco_store_job_fini(&out);
    eco_store_job_fini(&out); /* zeroed: harmless */

    /* Optional fields left out read back as NULL / defaults; env defaults to {}. */
    struct eco_store_job bare = {.cwd = "/", .argv_json = "[\"true\"]", .submit_s = 1.0};
    int64_t id2 = insert_ok(s, &bare);
    int64_t id3 = insert_ok(s, &bare);
    assert_true(id < id2 && id2 < id3);
    assert_int_equal(eco_store_get(s, id2, &out, NULL), 0);
    assert_null(out.name);
    assert_null(out.stdout_path);
    assert_string_equal(out.env_json, "{}");
    assert_false(out.share);
    assert_true(out.power_cap_w == ECO_STORE_CAP_NONE);
    eco_store_job_fini(&out);

    /* Listing: id order, limit and offset, state filter. */
    struct eco_store_job *v = NULL;
    size_t n = 0;
    assert_int_equal(eco_store_list(s, ECO_STORE_ANY, 0, 0, &v, &n, NULL), 0);
    assert_int_equal(n, 3);
    assert_int_equal(v[0].id, id);
    assert_string_equal(v[0].argv_json, argv_json);
    assert_int_equal(v[2].id, id3);
    eco_store_jobs_free(v, n);
    assert_int_equal(eco_store_list(s, ECO_STORE_QUEUED, 1, 1, &v, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].id, id2);
    eco_store_jobs_free(v, n);
    assert_int_equal(eco_store_list(s, ECO_STORE_RUNNING, 0, 0, &v, &n, NULL), 0);
    assert_int_equal(n, 0);
    assert_null(v);
    assert_int_equal(eco_store_list(s, 42, 0, 0, &v, &n, NULL), -EINVAL);

    struct eco_error err = {{0}};
    assert_int_equal(eco_store_get(s, 9999, &out, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no job 9999"));

    free(argv_json);
    free(env_json);
    json_decref(arr);
    json_decref(env);
    eco_store_close(s);
}

/* Each bad field is refused with a message naming it, and nothing is written. */
static void test_bad_input(void **state)
{
    static const struct {
        const char *cwd, *argv, *env;
        double cap, mem;
        const char *field;
    } cases[] = {
        {"/", "not json", NULL, 0, 0, "'argv'"},
        {"/", "{\"a\":\"b\"}", NULL, 0, 0, "'argv'"},
        {"/", "[]", NULL, 0, 0, "'argv'"},
        {"/", "[\"ls\", 3]", NULL, 0, 0, "'argv'"},
        {"/", "[\"ls\"", NULL, 0, 0, "'argv'"},
        {"/", NULL, NULL, 0, 0, "'argv'"},
        {"/", "[\"ls\"]", "[1]", 0, 0, "'env'"},
        {"/", "[\"ls\"]", "{\"A\": 1}", 0, 0, "'env'"},
        {"/", "[\"ls\"]", "{oops}", 0, 0, "'env'"},
        {NULL, "[\"ls\"]", NULL, 0, 0, "'cwd'"},
        {"", "[\"ls\"]", NULL, 0, 0, "'cwd'"},
        {"/", "[\"ls\"]", NULL, -5, 0, "'power_cap_w'"},
        {"/", "[\"ls\"]", NULL, 0, -1, "'gpu_mem_gb'"},
    };
    struct fixture *f = *state;
    struct eco_store *s = open_ok(f->path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct eco_store_job j = {.cwd = cases[i].cwd,
                                  .argv_json = cases[i].argv,
                                  .env_json = cases[i].env,
                                  .power_cap_w = cases[i].cap,
                                  .gpu_mem_gb = cases[i].mem};
        struct eco_error err = {{0}};
        int64_t id = -7;
        assert_int_equal(eco_store_insert(s, &j, &id, &err), -EINVAL);
        assert_int_equal(id, -7);
        if (!strstr(err.msg, cases[i].field))
            fail_msg("case %zu: '%s' does not name %s", i, err.msg, cases[i].field);
        assert_non_null(strstr(err.msg, f->path));
    }
    assert_int_equal(count_jobs(s, ECO_STORE_ANY), 0);
    /* The store still works afterwards (no transaction left open). */
    struct eco_store_job ok = {.cwd = "/", .argv_json = "[\"ls\"]", .power_cap_w = 250};
    insert_ok(s, &ok);
    assert_int_equal(count_jobs(s, ECO_STORE_ANY), 1);
    eco_store_close(s);
}

static void expect_stale(int rc, const struct eco_error *err, const char *state_name)
{
    assert_int_equal(rc, -ESTALE);
    if (!strstr(err->msg, state_name))
        fail_msg("'%s' does not say the job is %s", err->msg, state_name);
}

static void test_transitions(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = open_ok(f->path);
    struct eco_store_job j = sample_job("[\"sleep\",\"1\"]", NULL), out;
    struct eco_error err = {{0}};
    enum eco_store_state prev = ECO_STORE_LOST;
    int64_t a = insert_ok(s, &j), b = insert_ok(s, &j), c = insert_ok(s, &j);

    /* queued -> running, once. */
    assert_int_equal(eco_store_start(s, a, 4242, 4242, "0,2", 100.0, &err), 0);
    expect_stale(eco_store_start(s, a, 4343, 4343, "1", 101.0, &err), &err, "running");
    assert_int_equal(eco_store_get(s, a, &out, NULL), 0);
    assert_int_equal(out.state, ECO_STORE_RUNNING);
    assert_int_equal(out.pid, 4242); /* the second start changed nothing */
    assert_int_equal(out.pgid, 4242);
    assert_string_equal(out.assigned_gpus, "0,2");
    assert_true(out.start_s == 100.0);
    eco_store_job_fini(&out);

    /* Only running jobs finish or get lost. */
    expect_stale(eco_store_finish(s, b, ECO_STORE_DONE, 0, 1, 1, &err), &err, "queued");
    expect_stale(eco_store_lose(s, b, 1, "gone", &err), &err, "queued");
    assert_int_equal(eco_store_finish(s, a, ECO_STORE_QUEUED, 0, 1, 1, &err), -EINVAL);

    struct eco_store_job *v = NULL;
    size_t n = 0;
    assert_int_equal(eco_store_running(s, &v, &n, NULL), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0].id, a);
    assert_int_equal(v[0].pid, 4242);
    eco_store_jobs_free(v, n);

    assert_int_equal(eco_store_set_energy(s, a, 1234.5, &err), 0);
    assert_int_equal(eco_store_finish(s, a, ECO_STORE_FAILED, 137, 200.0, 5678.5, &err), 0);
    expect_stale(eco_store_finish(s, a, ECO_STORE_DONE, 0, 201, 1, &err), &err, "failed");
    expect_stale(eco_store_cancel(s, a, 202, "late", NULL, &err), &err, "failed");
    expect_stale(eco_store_start(s, a, 1, 1, "0", 203, &err), &err, "failed");
    assert_int_equal(eco_store_get(s, a, &out, NULL), 0);
    assert_int_equal(out.state, ECO_STORE_FAILED);
    assert_int_equal(out.exit_status, 137);
    assert_true(out.end_s == 200.0 && out.energy_j == 5678.5);
    eco_store_job_fini(&out);
    assert_int_equal(eco_store_set_energy(s, a, 6000.0, &err), 0); /* allowed after the end */

    /* Cancel: queued or running, and tells which. */
    assert_int_equal(eco_store_cancel(s, b, 300.0, "user", &prev, &err), 0);
    assert_int_equal(prev, ECO_STORE_QUEUED);
    expect_stale(eco_store_cancel(s, b, 301.0, "again", &prev, &err), &err, "cancelled");
    expect_stale(eco_store_start(s, b, 1, 1, "0", 302, &err), &err, "cancelled");
    assert_int_equal(eco_store_start(s, c, 77, 77, "1", 310.0, &err), 0);
    assert_int_equal(eco_store_cancel(s, c, 320.0, NULL, &prev, &err), 0);
    assert_int_equal(prev, ECO_STORE_RUNNING);
    assert_int_equal(eco_store_get(s, b, &out, NULL), 0);
    assert_string_equal(out.reason, "user");
    assert_true(out.end_s == 300.0);
    eco_store_job_fini(&out);

    /* running -> lost, with the reason. */
    int64_t d = insert_ok(s, &j);
    assert_int_equal(eco_store_start(s, d, 88, 88, NULL, 400.0, &err), 0);
    assert_int_equal(eco_store_lose(s, d, 410.0, "process gone after restart", &err), 0);
    expect_stale(eco_store_lose(s, d, 411.0, "x", &err), &err, "lost");
    assert_int_equal(eco_store_get(s, d, &out, NULL), 0);
    assert_int_equal(out.state, ECO_STORE_LOST);
    assert_null(out.assigned_gpus);
    assert_string_equal(out.reason, "process gone after restart");
    eco_store_job_fini(&out);

    /* Unknown ids. */
    assert_int_equal(eco_store_start(s, 999, 1, 1, "0", 1, &err), -ENOENT);
    assert_int_equal(eco_store_cancel(s, 999, 1, NULL, NULL, &err), -ENOENT);
    assert_int_equal(eco_store_set_energy(s, 999, 1, &err), -ENOENT);
    assert_int_equal(count_jobs(s, ECO_STORE_ANY), 4);
    assert_int_equal(count_jobs(s, ECO_STORE_CANCELLED), 2);

    /* State names round trip. */
    for (int i = 0; i < ECO_STORE_NSTATES; i++) {
        enum eco_store_state p;
        assert_int_equal(eco_store_state_parse(eco_store_state_name(i), &p), 0);
        assert_int_equal(p, i);
    }
    assert_int_equal(eco_store_state_parse("zombie", &prev), -EINVAL);
    eco_store_close(s);
}

/* Raw view of the file, through SQLite directly. */
static int raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int v = -1;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void test_migration_and_reopen(void **state)
{
    struct fixture *f = *state;
    FILE *fp = fopen(f->path, "w"); /* an empty file is a new database */
    assert_non_null(fp);
    fclose(fp);
    struct eco_store *s = open_ok(f->path);
    assert_int_equal(eco_store_schema_version(s), ECO_STORE_SCHEMA_VERSION);
    struct eco_store_job j = sample_job("[\"x\"]", NULL);
    int64_t id = insert_ok(s, &j);
    eco_store_close(s);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"), ECO_STORE_SCHEMA_VERSION);

    /* Reopen: no migration runs again, the job is there, ids keep growing. */
    s = open_ok(f->path);
    assert_int_equal(eco_store_schema_version(s), ECO_STORE_SCHEMA_VERSION);
    struct eco_store_job out;
    assert_int_equal(eco_store_get(s, id, &out, NULL), 0);
    eco_store_job_fini(&out);
    assert_true(insert_ok(s, &j) > id);
    eco_store_close(s);
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"), ECO_STORE_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 2);
    assert_int_equal(raw_int(f->path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);

    /* A file from a newer ecoschedd is refused, and left as it was. */
    raw_int(f->path, "PRAGMA user_version = 99");
    struct eco_error err = {{0}};
    assert_int_equal(eco_store_open(f->path, &s, &err), -ENOTSUP);
    assert_null(s);
    assert_non_null(strstr(err.msg, f->path));
    assert_non_null(strstr(err.msg, "99"));
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM jobs"), 2);

    /* SYNC_FULL opens the same file type. */
    raw_int(f->path, "PRAGMA user_version = 1");
    assert_int_equal(eco_store_open_ex(f->path, ECO_STORE_SYNC_FULL, &s, &err), 0);
    assert_true(insert_ok(s, &j) > id);
    eco_store_close(s);
}

static void test_not_a_database(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = NULL;
    struct eco_error err = {{0}};
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 200; i++)
        fputs("this is a job list, not an SQLite database\n", fp);
    fclose(fp);
    assert_int_equal(eco_store_open(f->path, &s, &err), -EBADMSG);
    assert_null(s);
    assert_non_null(strstr(err.msg, f->path));
    assert_non_null(strstr(err.msg, "not a database"));

    /* A directory that does not exist. */
    char missing[160];
    snprintf(missing, sizeof missing, "%s/no/such/dir/jobs.db", f->dir);
    assert_true(eco_store_open(missing, &s, &err) < 0);
    assert_null(s);
    assert_non_null(strstr(err.msg, missing));
    assert_int_equal(eco_store_open("", &s, &err), -EINVAL);
    eco_store_close(NULL);
}

/* Two handles on one file: both open a new file, each sees the other's writes, and the guard
 * holds across handles. */
static void test_two_handles(void **state)
{
    struct fixture *f = *state;
    struct eco_store *a = open_ok(f->path), *b = open_ok(f->path);
    struct eco_store_job j = sample_job("[\"x\"]", NULL), out;
    struct eco_error err = {{0}};
    int64_t id = insert_ok(a, &j);
    assert_int_equal(eco_store_get(b, id, &out, NULL), 0);
    eco_store_job_fini(&out);
    int64_t id2 = insert_ok(b, &j);
    assert_true(id2 > id);
    assert_int_equal(count_jobs(a, ECO_STORE_QUEUED), 2);
    assert_int_equal(eco_store_start(b, id, 10, 10, "0", 1.0, &err), 0);
    expect_stale(eco_store_start(a, id, 11, 11, "1", 2.0, &err), &err, "running");
    assert_int_equal(eco_store_get(a, id, &out, NULL), 0);
    assert_int_equal(out.pid, 10);
    eco_store_job_fini(&out);
    eco_store_close(a);
    assert_int_equal(count_jobs(b, ECO_STORE_ANY), 2);
    eco_store_close(b);
}

/* A read-only handle (the daemon's listing worker): sees the writer's commits, pages like the
 * writer, refuses writes with -EROFS, and needs the writer's schema (a missing file fails). */
static void test_reader(void **state)
{
    struct fixture *f = *state;
    struct eco_store *w = open_ok(f->path), *r = NULL;
    struct eco_store_job j = sample_job("[\"x\"]", NULL), *page = NULL;
    struct eco_error err = {{0}};
    char missing[160];
    size_t n = 0;
    int64_t id = 0;
    assert_int_equal(eco_store_open_reader(f->path, &r, &err), 0);
    for (int i = 0; i < 5; i++)
        insert_ok(w, &j);
    assert_int_equal(eco_store_list_after(r, ECO_STORE_ANY, 2, 2, &page, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(page[0].id, 3);
    assert_int_equal(page[1].id, 4);
    eco_store_jobs_free(page, n);
    assert_int_equal(eco_store_insert(r, &j, &id, &err), -EROFS);
    assert_int_equal(eco_store_start(w, 1, 10, 10, "0", 1.0, &err), 0); /* writer unaffected */
    assert_int_equal(count_jobs(r, ECO_STORE_RUNNING), 1);
    eco_store_close(r);
    eco_store_close(w);
    snprintf(missing, sizeof missing, "%s/none.db", f->dir);
    assert_true(eco_store_open_reader(missing, &r, &err) < 0);
    assert_null(r);
    assert_non_null(strstr(err.msg, "none.db"));
}

/* ---- pruned totals ---------------------------------------------------------------------- */

/* A finished job of uid with energy e (J), carbon kg (< 0: none) and cost, run from t to t+d
 * on gpus GPUs. */
static int64_t finished_job(struct eco_store *s, uid_t uid, unsigned gpus, double t, double d,
                            double e, double kg, double cost)
{
    struct eco_store_job j = sample_job("[\"x\"]", NULL);
    struct eco_error err = {{0}};
    j.uid = uid;
    j.gpus = gpus;
    int64_t id = insert_ok(s, &j);
    assert_int_equal(eco_store_start(s, id, 10, 10, "0", t, &err), 0);
    assert_int_equal(eco_store_finish(s, id, ECO_STORE_DONE, 0, t + d, e, &err), 0);
    struct eco_store_grid g = {
        .has_carbon = kg >= 0, .carbon_kg = kg, .has_cost = true, .cost = cost, .currency = "AUD"};
    assert_int_equal(eco_store_set_grid(s, id, &g, &err), 0);
    return id;
}

/* Pruning moves the jobs' figures into their users' totals in the same transaction: the
 * all-jobs sums of eco_store_stats stay where they were, per user too, across batches and a
 * reopen; a job that never started counts as a job, unmeasured. */
static void test_pruned_totals(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = open_ok(f->path);
    struct eco_store_stats before, after;
    struct eco_store_pruned *rows = NULL;
    struct eco_error err = {{0}};
    int64_t ids[8];
    size_t n = 0;
    finished_job(s, 1000, 2, 100, 50, 10.0, 0.5, 1.0);  /* ends at 150 */
    finished_job(s, 1000, 1, 200, 100, 20.0, -1, 2.0);  /* ends at 300 */
    finished_job(s, 2000, 4, 100, 10, 40.0, 0.25, 4.0); /* ends at 110 */
    struct eco_store_job q = sample_job("[\"x\"]", NULL);
    q.uid = 2000;
    int64_t never = insert_ok(s, &q);
    assert_int_equal(eco_store_cancel(s, never, 120, "no", NULL, &err), 0);
    finished_job(s, 3000, 1, 1000, 10, 80.0, 1.0, 8.0); /* ends at 1010: kept */
    assert_int_equal(eco_store_stats(s, &before, &err), 0);
    assert_near(before.energy_j, 150.0, 1e-9);
    assert_int_equal(before.pruned_jobs, 0);
    assert_int_equal(eco_store_pruned(s, &rows, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_null(rows);

    /* two batches: 3 of the 4 that ended before 500, then the last */
    assert_int_equal(eco_store_prune(s, 500, 3, ids, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_int_equal(eco_store_prune(s, 500, 3, ids, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], never);
    assert_int_equal(count_jobs(s, ECO_STORE_ANY), 1);
    assert_int_equal(eco_store_stats(s, &after, &err), 0);
    assert_near(after.energy_j, before.energy_j, 1e-9);
    assert_near(after.carbon_kg, before.carbon_kg, 1e-12);
    assert_near(after.cost, before.cost, 1e-12);
    assert_int_equal(after.pruned_jobs, 4);
    assert_int_equal(after.jobs[ECO_STORE_DONE], 1);
    eco_store_close(s);

    s = open_ok(f->path); /* kept across a reopen */
    assert_int_equal(eco_store_stats(s, &after, &err), 0);
    assert_near(after.energy_j, 150.0, 1e-9);
    assert_int_equal(eco_store_pruned(s, &rows, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].uid, 1000);
    assert_int_equal(rows[0].jobs, 2);
    assert_int_equal(rows[0].started, 2);
    assert_int_equal(rows[0].with_carbon, 1);
    assert_near(rows[0].energy_j, 30.0, 1e-9);
    assert_near(rows[0].gpu_s, 2 * 50 + 1 * 100, 1e-9);
    assert_near(rows[0].carbon_kg, 0.5, 1e-12);
    assert_near(rows[0].cost, 3.0, 1e-12);
    assert_near(rows[0].last_end_s, 300, 1e-9);
    assert_int_equal(rows[1].uid, 2000);
    assert_int_equal(rows[1].jobs, 2); /* the cancelled one too */
    assert_int_equal(rows[1].started, 1);
    assert_near(rows[1].gpu_s, 40, 1e-9);
    assert_near(rows[1].last_end_s, 120, 1e-9);
    free(rows);
    eco_store_close(s);
}

/* A version-3 store (before the totals) migrates: its totals start as the sums of its jobs. */
static void test_pruned_migration(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = open_ok(f->path);
    struct eco_store_stats st;
    finished_job(s, 1000, 1, 100, 10, 7.0, 0.1, 1.0);
    finished_job(s, 1001, 1, 100, 10, 5.0, 0.2, 1.0);
    eco_store_close(s);
    raw_int(f->path, "DROP TABLE pruned");
    raw_int(f->path, "PRAGMA user_version = 3");
    s = open_ok(f->path);
    assert_int_equal(eco_store_schema_version(s), ECO_STORE_SCHEMA_VERSION);
    assert_int_equal(eco_store_stats(s, &st, NULL), 0);
    assert_near(st.energy_j, 12.0, 1e-9);
    assert_near(st.carbon_kg, 0.3, 1e-12);
    int64_t ids[4];
    size_t n = 0;
    assert_int_equal(eco_store_prune(s, 1e9, 4, ids, &n, NULL), 0);
    assert_int_equal(n, 2);
    assert_int_equal(eco_store_stats(s, &st, NULL), 0);
    assert_near(st.energy_j, 12.0, 1e-9);
    assert_int_equal(st.pruned_jobs, 2);
    eco_store_close(s);
}

/* ---- id file ---------------------------------------------------------------------------- */

/* A child opens the store, inserts n jobs and is SIGKILLed (no close: the WAL stays). */
static void insert_and_die(const char *path, int n)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct eco_store *s = NULL;
        struct eco_store_job j = {.cwd = "/tmp", .argv_json = "[\"x\"]", .submit_s = 1};
        int64_t id = 0;
        if (eco_store_open(path, &s, NULL) != 0)
            _exit(3);
        for (int i = 0; i < n; i++)
            if (eco_store_insert(s, &j, &id, NULL) != 0)
                _exit(4);
        raise(SIGKILL);
        _exit(5);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void unlink_suffix(const char *path, const char *suffix)
{
    char p[160];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    unlink(p);
}

/* Opens with flags, expecting -EBADMSG with `want` in the message. */
static void expect_lost(const char *path, const char *want)
{
    struct eco_store *s = NULL;
    struct eco_error err = {{0}};
    assert_int_equal(eco_store_open(path, &s, &err), -EBADMSG);
    assert_null(s);
    if (!strstr(err.msg, want) || !strstr(err.msg, "--accept-lost-jobs"))
        fail_msg("wanted '%s' and --accept-lost-jobs in: %s", want, err.msg);
}

static int64_t next_id(struct eco_store *s)
{
    struct eco_store_job j = sample_job("[\"x\"]", NULL);
    return insert_ok(s, &j);
}

/* The WAL deleted after a crash, then its tail cut: both refused, naming the lost ids; with
 * ECO_STORE_ACCEPT_LOSS the store opens, says which ids were lost, and gives none again. */
static void test_lost_wal(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = NULL;
    struct eco_error err = {{0}};
    int64_t first = 0, last = 0;
    insert_and_die(f->path, 5);
    unlink_suffix(f->path, "-wal");
    unlink_suffix(f->path, "-shm");
    expect_lost(f->path, "jobs 1..5 are missing");
    assert_int_equal(eco_store_open_ex(f->path, ECO_STORE_ACCEPT_LOSS, &s, &err), 0);
    assert_true(eco_store_lost(s, &first, &last));
    assert_int_equal(first, 1);
    assert_int_equal(last, 5);
    assert_int_equal(count_jobs(s, ECO_STORE_ANY), 0);
    assert_int_equal(next_id(s), 6);
    eco_store_close(s);
    s = open_ok(f->path); /* accepted once: a plain open now */
    assert_false(eco_store_lost(s, &first, &last));
    eco_store_close(s);

    /* a torn tail: the last commit (job 9) is gone */
    insert_and_die(f->path, 3);
    char wal[160];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", f->path);
    assert_int_equal(stat(wal, &st), 0);
    assert_int_equal(truncate(wal, st.st_size - 100), 0);
    unlink_suffix(f->path, "-shm");
    expect_lost(f->path, "jobs 9..9 are missing");
    assert_int_equal(eco_store_open_ex(f->path, ECO_STORE_ACCEPT_LOSS, &s, &err), 0);
    assert_int_equal(count_jobs(s, ECO_STORE_ANY), 3); /* 6 (after the first loss), 7, 8 */
    assert_int_equal(next_id(s), 10);
    eco_store_close(s);

    /* a missing database beside the id file: refused before an empty one is created */
    unlink_suffix(f->path, "");
    unlink_suffix(f->path, "-wal");
    unlink_suffix(f->path, "-shm");
    expect_lost(f->path, "jobs 1..10 are missing");
    assert_int_equal(access(f->path, F_OK), -1);
}

/* The id file's record, as store.c writes it (FNV-1a check over the line before " check="). */
static void write_ids(const char *path, long long acked, long long reserved, const char *boot)
{
    char p[160], line[256];
    uint32_t h = 2166136261u;
    int n = snprintf(line, sizeof line, "ecosched-ids 1 acked=%020lld reserved=%020lld boot=%-36s",
                     acked, reserved, boot);
    for (int i = 0; i < n; i++)
        h = (h ^ (unsigned char)line[i]) * 16777619u;
    snprintf(line + n, sizeof line - (size_t)n, " check=%08x\n", h);
    snprintf(p, sizeof p, "%s.ids", path);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs(line, fp);
    fclose(fp);
}

/* After a crash in this boot new ids follow the last one; after a reboot (another boot id in
 * the file) they start above the reserved block; a clean close leaves no reservation; a
 * damaged id file is refused naming it. */
static void test_id_reservation(void **state)
{
    struct fixture *f = *state;
    struct eco_store *s = NULL;
    struct eco_error err = {{0}};
    insert_and_die(f->path, 3);
    s = open_ok(f->path);
    assert_int_equal(next_id(s), 4); /* same boot: no gap */
    eco_store_close(s);
    char p[160], line[256] = "";
    snprintf(p, sizeof p, "%s.ids", f->path);
    FILE *fp = fopen(p, "r");
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp));
    fclose(fp);
    assert_non_null(strstr(line, "acked=00000000000000000004 reserved=00000000000000000004"));

    /* as a power loss would leave it: job 4 acknowledged, ids to 4 + block reserved, written in
     * another boot; the database lost nothing here, yet the reservation is skipped */
    write_ids(f->path, 4, 4 + ECO_STORE_ID_BLOCK - 1, "00000000-0000-0000-0000-000000000000");
    s = open_ok(f->path);
    assert_int_equal(next_id(s), 4 + ECO_STORE_ID_BLOCK);
    eco_store_close(s);

    fp = fopen(p, "r+");
    assert_non_null(fp);
    fputs("ecosched-ids 1 acked=9", fp); /* the check no longer holds */
    fclose(fp);
    assert_int_equal(eco_store_open(f->path, &s, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, ".ids: damaged"));
}

/* ---- crash test ------------------------------------------------------------------------- */

#define CRASH_ROUNDS 12
#define CRASH_JOBS 200
#define MAX_REPORTED (CRASH_ROUNDS * CRASH_JOBS)

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}

static void say(int fd, char what, int64_t id)
{
    char line[32];
    int len = snprintf(line, sizeof line, "%c %lld\n", what, (long long)id);
    if (write(fd, line, (size_t)len) != len)
        _exit(4);
}

/* The child: inserts CRASH_JOBS jobs, starts every third, reports each id after its commit
 * returned, and SIGKILLs itself at `self_kill` (if the parent did not kill it first). */
static void crash_child(const char *path, int fd, int round, int self_kill)
{
    struct eco_store *s = NULL;
    char name[32], argv[64];
    if (eco_store_open(path, &s, NULL) != 0)
        _exit(3);
    for (int i = 0; i < CRASH_JOBS; i++) {
        if (i == self_kill)
            raise(SIGKILL);
        snprintf(name, sizeof name, "r%d-%d", round, i);
        snprintf(argv, sizeof argv, "[\"job\", \"%d\", \"a, \\\"b\\\"\"]", i);
        struct eco_store_job j = {
            .cwd = "/tmp", .name = name, .argv_json = argv, .submit_s = round * 1000.0 + i};
        int64_t id = 0;
        if (eco_store_insert(s, &j, &id, NULL) != 0)
            _exit(5);
        say(fd, 'I', id);
        if (i % 3 == 0) {
            if (eco_store_start(s, id, 1000 + i, 1000 + i, "0", j.submit_s + 1, NULL) != 0)
                _exit(6);
            say(fd, 'R', id);
        }
    }
    raise(SIGKILL); /* never close: the crash is the point */
    _exit(7);
}

struct reported {
    int64_t id;
    bool running;
};

/* Runs one round; appends what the child reported. */
static void crash_round(const char *path, int round, uint64_t *rng, struct reported *rep,
                        size_t *nrep)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int self_kill = (int)(lcg(rng) % (CRASH_JOBS + 20));
    size_t kill_after = lcg(rng) % (CRASH_JOBS * 4 / 3);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        crash_child(path, fds[1], round, self_kill);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    assert_non_null(in);
    char what;
    long long id;
    size_t lines = 0;
    bool killed = false;
    while (fscanf(in, " %c %lld", &what, &id) == 2) {
        if (++lines == kill_after) {
            kill(pid, SIGKILL);
            killed = true;
        }
        if (what == 'I') {
            assert_true(*nrep < MAX_REPORTED);
            rep[(*nrep)++] = (struct reported){.id = id};
        } else {
            assert_int_equal(what, 'R');
            assert_true(*nrep > 0 && rep[*nrep - 1].id == id);
            rep[*nrep - 1].running = true;
        }
    }
    fclose(in);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
        fail_msg("round %d: child ended with status %#x, not SIGKILL (killed by us: %d)", round,
                 status, killed);
}

static int cmp_id(const void *a, const void *b)
{
    const struct reported *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_crash_sigkill(void **state)
{
    struct fixture *f = *state;
    struct reported *rep = calloc(MAX_REPORTED, sizeof *rep);
    uint64_t rng = 20240611; /* fixed seed: the same kill points every run */
    size_t nrep = 0;
    assert_non_null(rep);
    for (int round = 0; round < CRASH_ROUNDS; round++) {
        size_t before = nrep;
        crash_round(f->path, round, &rng, rep, &nrep);

        struct eco_store *s = open_ok(f->path);
        struct eco_store_job *v = NULL;
        size_t n = 0;
        assert_int_equal(eco_store_list(s, ECO_STORE_ANY, 0, 0, &v, &n, NULL), 0);
        /* At most one job per round may have committed without being reported. */
        if (n < nrep || n > nrep + (size_t)round + 1)
            fail_msg("round %d: %zu jobs stored, %zu reported", round, n, nrep);
        /* Every reported job is there once, in the state reported (or one step on). */
        qsort(rep, nrep, sizeof *rep, cmp_id);
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                assert_true(v[i].id > v[i - 1].id);
            assert_true(v[i].state == ECO_STORE_QUEUED || v[i].state == ECO_STORE_RUNNING);
            assert_non_null(v[i].name);
            assert_non_null(v[i].argv_json);
            if (k < nrep && rep[k].id == v[i].id) {
                if (rep[k].running)
                    assert_int_equal(v[i].state, ECO_STORE_RUNNING);
                if (v[i].state == ECO_STORE_RUNNING)
                    assert_true(v[i].pid > 0 && v[i].start_s > 0);
                k++;
            }
        }
        if (k != nrep)
            fail_msg("round %d: %zu of %zu reported jobs found", round, k, nrep);
        /* Names are unique: no job was inserted twice. */
        const char **names = calloc(n ? n : 1, sizeof *names);
        assert_non_null(names);
        for (size_t i = 0; i < n; i++)
            names[i] = v[i].name;
        qsort(names, n, sizeof *names, cmp_name);
        for (size_t i = 1; i < n; i++)
            assert_string_not_equal(names[i - 1], names[i]);
        free(names);
        assert_true(nrep >= before);
        eco_store_jobs_free(v, n);
        eco_store_close(s);
    }
    free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_transitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migration_and_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reader, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pruned_totals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pruned_migration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_id_reservation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash_sigkill, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
