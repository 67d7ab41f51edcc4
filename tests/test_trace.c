/* SPDX-License-Identifier: MIT */
/* Tests for the CSV helpers and the trace readers: each format from a small hand-written file,
 * the real traces under /work/shared/data, gzip, detection, and malformed input of every kind. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>
#include "ecosched/catalog.h"
#include "util/csv.h"
#include "sim/trace.h"

#define DATA ECO_SOURCE_DIR "/tests/data/trace/"
#define SHARED "/work/shared/data/"

/* ---- fixtures ------------------------------------------------------------------------------ */

#define TEST_TMPDIR_NAME "eco_test_trace"
#include "test_tmpdir.h"

/* Writes `text` to tmpdir/name (gzip-compressed when gz); returns the path (static buffer). */
static const char *write_file(const char *name, const char *text, int gz)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, text, (unsigned)strlen(text)), (int)strlen(text));
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
        assert_int_equal(fclose(f), 0);
    }
    return path;
}

static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    assert_true(n > 0);
    fclose(f);
    return buf;
}

/* Loads `path` into a fresh set (returned through *out, even on failure). */
static int load(const char *path, const struct eco_trace_opts *opts, struct eco_jobset **out,
                struct eco_error *err)
{
    *out = eco_jobset_create();
    assert_non_null(*out);
    err->msg[0] = '\0';
    return eco_trace_load(path, opts, *out, err);
}

static const char *id(const struct eco_jobset *s, size_t i)
{
    return eco_jobset_str(s, s->jobs[i].id_off);
}

/* ---- CSV helpers --------------------------------------------------------------------------- */

static void test_csv_split(void **state)
{
    (void)state;
    char *f[8];
    char l1[] = "a,b,,d\r\n";
    assert_int_equal(eco_csv_split(l1, f, 8), 4);
    assert_string_equal(f[0], "a");
    assert_string_equal(f[1], "b");
    assert_string_equal(f[2], "");
    assert_string_equal(f[3], "d");

    char l2[] = "\"x,y\",\"say \"\"hi\"\"\",\"\",z\"q\n";
    assert_int_equal(eco_csv_split(l2, f, 8), 4);
    assert_string_equal(f[0], "x,y");
    assert_string_equal(f[1], "say \"hi\"");
    assert_string_equal(f[2], "");
    assert_string_equal(f[3], "z\"q");

    char l3[] = "";
    assert_int_equal(eco_csv_split(l3, f, 8), 1);
    assert_string_equal(f[0], "");

    char l4[] = "1,2,3,4,5";
    assert_int_equal(eco_csv_split(l4, f, 2), 5); /* total count, two stored */
    assert_string_equal(f[1], "2");

    char l5[] = "a,\"open";
    assert_int_equal(eco_csv_split(l5, f, 8), -EINVAL);
    char l6[] = "\"done\"x,b";
    assert_int_equal(eco_csv_split(l6, f, 8), -EINVAL);
    char l7[] = "a,";
    assert_int_equal(eco_csv_split(l7, f, 8), 2);
    assert_string_equal(f[1], "");
}

static void test_parse_double(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int ok;
        double v;
    } cases[] = {
        {"0", 1, 0},
        {"42", 1, 42},
        {"-7", 1, -7},
        {"+3", 1, 3},
        {"2.5", 1, 2.5},
        {"1e3", 1, 1000},
        {"-1.5E-1", 1, -0.15},
        {".5", 1, 0.5},
        {"123456789012345678", 1, 123456789012345678.0},
        {"", 0, 0},
        {" 1", 0, 0},
        {"1 ", 0, 0},
        {"1x", 0, 0},
        {"nan", 0, 0},
        {"NaN", 0, 0},
        {"inf", 0, 0},
        {"-Infinity", 0, 0},
        {"0x10", 0, 0},
        {"1e999", 0, 0},
        {"-", 0, 0},
        {"1e", 0, 0},
        {"1.2.3", 0, 0},
        {"e5", 0, 0},
        {".", 0, 0},
        {"5.", 1, 5},
        {"0.1", 1, 0.1},
        {"-0.25", 1, -0.25},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v = -99;
        int rc = eco_parse_double(cases[i].s, &v);
        if (cases[i].ok) {
            assert_int_equal(rc, 0);
            assert_true(v == cases[i].v);
        } else {
            assert_int_equal(rc, -EINVAL);
            assert_true(v == -99);
        }
    }
    /* The fast path for short decimals must give exactly what strtod gives. */
    char buf[64];
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        int frac = (int)(x % 16), digits = 1 + (int)((x >> 8) % 15);
        long long m = (long long)((x >> 16) % 1000000000000000ull);
        snprintf(buf, sizeof buf, "%s%0*lld", (x >> 63) ? "-" : "", digits, m);
        size_t len = strlen(buf);
        if (frac > 0 && (size_t)frac < len) {
            memmove(buf + len - frac + 1, buf + len - frac, (size_t)frac + 1);
            buf[len - frac] = '.';
        }
        double v = 0;
        assert_int_equal(eco_parse_double(buf, &v), 0);
        if (v != strtod(buf, NULL))
            fail_msg("'%s': %.17g, strtod %.17g", buf, v, strtod(buf, NULL));
    }
}

static void test_parse_int(void **state)
{
    (void)state;
    int64_t v = 5;
    assert_int_equal(eco_parse_int64("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(eco_parse_int64("-12", &v), 0);
    assert_int_equal(v, -12);
    assert_int_equal(eco_parse_int64("+8", &v), 0);
    assert_int_equal(v, 8);
    assert_int_equal(eco_parse_int64("9223372036854775807", &v), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(eco_parse_int64("-9223372036854775808", &v), 0);
    assert_true(v == INT64_MIN);
    v = 5;
    assert_int_equal(eco_parse_int64("9223372036854775808", &v), -ERANGE);
    assert_int_equal(eco_parse_int64("-9223372036854775809", &v), -ERANGE);
    assert_int_equal(eco_parse_int64("", &v), -EINVAL);
    assert_int_equal(eco_parse_int64("-", &v), -EINVAL);
    assert_int_equal(eco_parse_int64("2.5", &v), -EINVAL);
    assert_int_equal(eco_parse_int64("1e3", &v), -EINVAL);
    assert_int_equal(eco_parse_int64(" 1", &v), -EINVAL);
    assert_int_equal(eco_parse_int64("1 ", &v), -EINVAL);
    assert_int_equal(v, 5);
}

/* ---- names and detection -------------------------------------------------------------------- */

static void test_format_names(void **state)
{
    (void)state;
    static const char *const names[] = {"auto", "canonical", "itp", "philly", "openb"};
    for (int f = 0; f < 5; f++) {
        assert_string_equal(eco_trace_format_name((enum eco_trace_format)f), names[f]);
        assert_int_equal(eco_trace_format_parse(names[f]), f);
    }
    assert_int_equal(eco_trace_format_parse("csv"), -1);
    assert_int_equal(eco_trace_format_parse(""), -1);
    assert_int_equal(eco_trace_format_parse(NULL), -1);
    assert_string_equal(eco_trace_format_name((enum eco_trace_format)99), "unknown");
}

static void test_detect(void **state)
{
    (void)state;
    static const struct {
        const char *header;
        enum eco_trace_format f;
    } cases[] = {
        {"job_id,submit_s,duration_s,gpus", ECO_TRACE_CANONICAL},
        {"gpus,duration_s,user,submit_s,job_id", ECO_TRACE_CANONICAL},
        {"\xEF\xBB\xBFjob_id,submit_s,duration_s,gpus", ECO_TRACE_CANONICAL},
        {"\"job_id\",\"submit_s\",\"duration_s\",\"gpus\"", ECO_TRACE_CANONICAL},
        {"job_id,submission_time,duration,num_gpu", ECO_TRACE_ITP},
        {"job_id,num_gpus,submitted_time,first_start_time,last_end_time,submit_s,queue_s,run_s,"
         "span_s,n_attempts,upstream_runtime_min,attempts_s",
         ECO_TRACE_PHILLY},
        {"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
         "deletion_time,scheduled_time",
         ECO_TRACE_OPENB},
        {"name,cpu_milli,memory_mib,num_gpu,gpu_milli", ECO_TRACE_OPENB},
        {"job_id,submit_s,duration_s", ECO_TRACE_AUTO},
        {"a,b,c", ECO_TRACE_AUTO},
        {"", ECO_TRACE_AUTO},
        {"\"job_id,submit_s", ECO_TRACE_AUTO},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(eco_trace_detect(cases[i].header), cases[i].f);
    assert_int_equal(eco_trace_detect(NULL), ECO_TRACE_AUTO);
}

/* ---- each format from a hand-written file ---------------------------------------------------- */

static void test_canonical(void **state)
{
    (void)state;
    struct eco_jobset *s;
    struct eco_error err;
    struct warnings w = {0};
    struct eco_trace_opts o = {.warn = record_warning, .warn_ctx = &w};
    assert_int_equal(load(DATA "canonical.csv", &o, &s, &err), 0);
    assert_int_equal(w.count, 0);
    assert_int_equal(s->n, 3);
    assert_int_equal(s->unknown_columns, 0);

    const struct eco_job *j = s->jobs;
    assert_string_equal(id(s, 0), "j1");
    assert_int_equal(j[0].line, 2);
    assert_true(j[0].submit_s == 0 && j[0].duration_s == 3600);
    assert_int_equal(j[0].gpus, 1);
    assert_int_equal(j[0].gpu_type, -1);
    assert_int_equal(j[0].gpu_milli, 1000);
    assert_true(j[0].gpu_mem_gb == 0);
    assert_true(j[0].deadline_s == ECO_NO_DEADLINE);
    assert_string_equal(eco_jobset_str(s, j[0].workload_off), "resnet50");
    assert_string_equal(eco_jobset_str(s, j[0].user_off), "alice");

    assert_string_equal(id(s, 1), "j2");
    assert_int_equal(j[1].line, 3);
    assert_true(j[1].submit_s == 10.5 && j[1].duration_s == 120);
    assert_int_equal(j[1].gpus, 8);
    assert_int_equal(j[1].gpu_type, eco_catalog_find("V100"));
    assert_true(j[1].gpu_type >= 0);
    assert_true(j[1].gpu_mem_gb == 16);
    assert_true(j[1].deadline_s == 5000);
    assert_string_equal(eco_jobset_str(s, j[1].workload_off), "bert");
    assert_string_equal(eco_jobset_str(s, j[1].user_off), "bob");

    assert_string_equal(id(s, 2), "j3");
    assert_int_equal(j[2].line, 5); /* line 4 is blank */
    assert_true(j[2].submit_s == 20 && j[2].duration_s == 0);
    assert_int_equal(j[2].gpus, 4);
    assert_int_equal(j[2].gpu_type, eco_catalog_find("A100-SXM"));
    assert_true(j[2].gpu_type >= 0);
    assert_int_equal(j[2].workload_off, 0);
    assert_int_equal(j[2].user_off, 0);
    assert_int_equal(j[2].state, ECO_JOB_PENDING);
    assert_true(j[2].start_s == -1);
    eco_jobset_destroy(s);
}

/* Columns in another order, quoted fields, CRLF line ends, a fractional share, no final
 * newline. */
static void test_canonical_quoted_crlf(void **state)
{
    (void)state;
    const char *text = "\"gpus\",user,job_id,duration_s,submit_s,gpu_milli\r\n"
                       "2,\"Smith, J.\",\"job \"\"a\"\"\",60,1,\r\n"
                       "\r\n"
                       "\"1\",,b,30,2,250\r\n"
                       "3,x,\"c,d\",5,3,1000";
    const char *path = write_file("quoted.csv", text, 0);
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, NULL, &s, &err), 0);
    assert_int_equal(s->n, 3);
    assert_string_equal(id(s, 0), "job \"a\"");
    assert_string_equal(eco_jobset_str(s, s->jobs[0].user_off), "Smith, J.");
    assert_int_equal(s->jobs[0].gpus, 2);
    assert_true(s->jobs[0].duration_s == 60 && s->jobs[0].submit_s == 1);
    assert_int_equal(s->jobs[0].gpu_milli, 1000);
    assert_string_equal(id(s, 1), "b");
    assert_int_equal(s->jobs[1].line, 4);
    assert_int_equal(s->jobs[1].user_off, 0);
    assert_int_equal(s->jobs[1].gpu_milli, 250);
    assert_string_equal(id(s, 2), "c,d");
    assert_int_equal(s->jobs[2].line, 5);
    assert_true(s->jobs[2].submit_s == 3);
    assert_int_equal(s->fractional, 1);
    eco_jobset_destroy(s);
}

static void test_itp(void **state)
{
    (void)state;
    struct eco_jobset *s;
    struct eco_error err;
    struct eco_trace_opts o = {.format = ECO_TRACE_ITP};
    assert_int_equal(load(DATA "itp.csv", &o, &s, &err), 0);
    assert_int_equal(s->n, 3);
    assert_string_equal(id(s, 0), "965d744f-0445-c1a8-12af-97e4c536c66e");
    assert_true(s->jobs[0].submit_s == 1932025 && s->jobs[0].duration_s == 2429);
    assert_int_equal(s->jobs[0].gpus, 64);
    assert_string_equal(id(s, 2), "9e11d2cd-0930-aef6-8a80-068ddf547e50");
    assert_true(s->jobs[2].submit_s == 2013937 && s->jobs[2].duration_s == 1539);
    assert_int_equal(s->jobs[2].gpus, 2);
    assert_int_equal(s->jobs[2].line, 4);
    assert_int_equal(s->jobs[2].gpu_type, -1);
    eco_jobset_destroy(s);
}

static void test_philly(void **state)
{
    (void)state;
    struct eco_jobset *s;
    struct eco_error err;
    struct warnings w = {0};
    struct eco_trace_opts o = {.warn = record_warning, .warn_ctx = &w};
    assert_int_equal(load(DATA "philly.csv", &o, &s, &err), 0);
    assert_int_equal(w.count, 0); /* the columns it does not use are known, not unknown */
    assert_int_equal(s->n, 2);
    assert_string_equal(id(s, 0), "application_1504131676014_2141");
    assert_true(s->jobs[0].submit_s == 0 && s->jobs[0].duration_s == 2240194);
    assert_int_equal(s->jobs[0].gpus, 8);
    assert_string_equal(id(s, 1), "application_1513627406021_2548");
    assert_true(s->jobs[1].submit_s == 9396823 && s->jobs[1].duration_s == 618);
    assert_int_equal(s->jobs[1].gpus, 2);
    assert_int_equal(s->jobs[1].line, 3);
    eco_jobset_destroy(s);
}

static void test_openb(void **state)
{
    (void)state;
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(DATA "openb.csv", NULL, &s, &err), 0);
    static const struct {
        const char *name;
        unsigned line;
        double submit, duration;
        unsigned gpus, milli;
        const char *type; /* NULL: any */
    } want[] = {
        {"openb-pod-0000", 2, 0, 12537496, 1, 1000, NULL},
        {"openb-pod-0001", 3, 427061, 12902960 - 427061, 1, 460, NULL},
        {"openb-pod-0004", 6, 700000, 3590, 8, 1000, "V100"},
        {"openb-pod-0005", 7, 800000, 58, 1, 1000, NULL},
        {"openb-pod-0006", 8, 900000, 500, 2, 1000, "P100"},
        {"openb-pod-0007", 9, 950000, 12902960 - 950004, 1, 810, NULL},
    };
    assert_int_equal(s->n, 6);
    for (size_t i = 0; i < 6; i++) {
        const struct eco_job *j = &s->jobs[i];
        assert_string_equal(id(s, i), want[i].name);
        assert_int_equal(j->line, want[i].line);
        assert_true(j->submit_s == want[i].submit);
        assert_true(j->duration_s == want[i].duration);
        assert_int_equal(j->gpus, want[i].gpus);
        assert_int_equal(j->gpu_milli, want[i].milli);
        assert_int_equal(j->gpu_type, want[i].type ? eco_catalog_find(want[i].type) : -1);
    }
    assert_true(s->jobs[2].gpu_type >= 0);
    assert_int_equal(s->skipped_non_gpu, 1);
    assert_int_equal(s->skipped_unfinished, 1);
    assert_int_equal(s->fractional, 2);
    assert_int_equal(s->skipped_rows, 0);
    eco_jobset_destroy(s);
}

/* gzip and plain copies of the same file give the same jobs. */
static void test_gzip(void **state)
{
    (void)state;
    char *text = read_whole(DATA "canonical.csv");
    const char *p = write_file("canonical.csv.gz", text, 1);
    char gzpath[256];
    snprintf(gzpath, sizeof gzpath, "%s", p);
    struct eco_jobset *a, *b;
    struct eco_error err;
    assert_int_equal(load(DATA "canonical.csv", NULL, &a, &err), 0);
    assert_int_equal(load(gzpath, NULL, &b, &err), 0);
    assert_int_equal(a->n, 3);
    assert_int_equal(b->n, a->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_string_equal(id(a, i), id(b, i));
        assert_int_equal(a->jobs[i].line, b->jobs[i].line);
        assert_true(a->jobs[i].submit_s == b->jobs[i].submit_s);
        assert_true(a->jobs[i].duration_s == b->jobs[i].duration_s);
        assert_int_equal(a->jobs[i].gpus, b->jobs[i].gpus);
        assert_int_equal(a->jobs[i].gpu_type, b->jobs[i].gpu_type);
    }
    eco_jobset_destroy(a);
    eco_jobset_destroy(b);

    /* A gzip file cut short is a read error, not a shorter trace. */
    char big[200000];
    size_t n = 0;
    n += (size_t)snprintf(big, sizeof big, "job_id,submit_s,duration_s,gpus\n");
    for (int i = 0; n < sizeof big - 64; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "job%d,%d,%d,1\n", i, i, i * 7 % 1000);
    p = write_file("cut.csv.gz", big, 1);
    snprintf(gzpath, sizeof gzpath, "%s", p);
    FILE *f = fopen(gzpath, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(truncate(gzpath, size / 2), 0);
    int rc = load(gzpath, NULL, &a, &err);
    if (rc != -EIO)
        fail_msg("rc %d: %s", rc, err.msg);
    assert_non_null(strstr(err.msg, gzpath));
    assert_int_equal(a->n, 0);
    eco_jobset_destroy(a);
    free(text);
}

/* ---- the real traces --------------------------------------------------------------------- */

static int shared_missing(const char *path)
{
    if (access(path, R_OK) == 0)
        return 0;
    print_message("skipped: %s is not readable here\n", path);
    return 1;
}

static void test_real_itp(void **state)
{
    (void)state;
    const char *path = SHARED "microsoft_itp_elasticflow/cluster01.csv.gz";
    if (shared_missing(path))
        skip();
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, NULL, &s, &err), 0);
    assert_int_equal(s->n, 1595);
    assert_string_equal(id(s, 0), "965d744f-0445-c1a8-12af-97e4c536c66e");
    assert_true(s->jobs[0].submit_s == 1932025 && s->jobs[0].gpus == 64);
    /* The last line has no newline. */
    assert_string_equal(id(s, 1594), "c05db774-132a-5e58-2a57-e880de9205ea");
    assert_true(s->jobs[1594].submit_s == 4848400 && s->jobs[1594].duration_s == 1032);
    assert_int_equal(s->jobs[1594].line, 1596);
    for (size_t i = 1; i < s->n; i++)
        assert_true(s->jobs[i].submit_s >= s->jobs[i - 1].submit_s);
    eco_jobset_destroy(s);
}

static void test_real_philly(void **state)
{
    (void)state;
    const char *path = SHARED "philly/philly_multigpu_pass_jobs.csv.gz";
    if (shared_missing(path))
        skip();
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, NULL, &s, &err), 0);
    assert_int_equal(s->n, 3034);
    assert_string_equal(id(s, 3033), "application_1513627406021_2548");
    assert_true(s->jobs[3033].submit_s == 9396823 && s->jobs[3033].duration_s == 618);
    assert_int_equal(s->jobs[3033].gpus, 8);
    eco_jobset_destroy(s);
}

static void test_real_openb(void **state)
{
    (void)state;
    const char *path = SHARED "alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz";
    if (shared_missing(path))
        skip();
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, NULL, &s, &err), 0);
    /* 8152 pods = 6203 jobs + 1088 CPU-only + 861 pending GPU pods (counted with Python). */
    assert_int_equal(s->n, 6203);
    assert_int_equal(s->skipped_non_gpu, 1088);
    assert_int_equal(s->skipped_unfinished, 861);
    assert_int_equal(s->fractional, 2573);
    assert_int_equal(s->skipped_rows, 0);
    size_t gpus = 0;
    for (size_t i = 0; i < s->n; i++)
        gpus += s->jobs[i].gpus;
    assert_int_equal(gpus, 6571);
    assert_string_equal(id(s, 6202), "openb-pod-8151");
    assert_true(s->jobs[6202].submit_s == 12901761 && s->jobs[6202].duration_s == 30);
    assert_int_equal(s->jobs[6202].gpu_milli, 590);
    eco_jobset_destroy(s);

    path = SHARED "alibaba_gpu_v2023_openb/openb_pod_list_multigpu20.csv.gz";
    if (shared_missing(path))
        return;
    assert_int_equal(load(path, NULL, &s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "no times"));
    assert_int_equal(s->n, 0);
    eco_jobset_destroy(s);
}

/* ---- malformed input --------------------------------------------------------------------- */

#define CANON_H "job_id,submit_s,duration_s,gpus,gpu_type\n"
#define ITP_H "job_id,submission_time,duration,num_gpu\n"
#define PHILLY_H                                                                                   \
    "job_id,num_gpus,submitted_time,first_start_time,last_end_time,submit_s,queue_s,run_s,"        \
    "span_s,n_attempts,upstream_runtime_min,attempts_s\n"
#define PHILLY_OK "app_1,8,x,x,x,0,12,100,112,1,1.6,12-112\n"
#define OPENB_H                                                                                    \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"            \
    "deletion_time,scheduled_time\n"
#define OPENB_OK "p0,1000,1024,1,1000,,LS,Running,0,100,0\n"

/* Each case: a file whose bad row is on line 3, and what the message must name. */
static const struct bad_case {
    const char *text;
    const char *column; /* NULL: the message names no column */
    const char *value;  /* NULL: no value to quote */
} bad_cases[] = {
    /* canonical */
    {CANON_H "a,0,10,1,\nb,5,10\n", "column 'gpus'", NULL},
    {CANON_H "a,0,10,1,\nb,x5,10,1,\n", "column 'submit_s'", "'x5'"},
    {CANON_H "a,0,10,1,\nb,5,10,0,\n", "column 'gpus'", "'0'"},
    {CANON_H "a,0,10,1,\nb,5,10,-2,\n", "column 'gpus'", "'-2' is not a positive integer"},
    {CANON_H "a,0,10,1,\nb,5,10,1.5,\n", "column 'gpus'", "'1.5'"},
    {CANON_H "a,0,10,1,\nb,5,-10,1,\n", "column 'duration_s'", "'-10'"},
    {CANON_H "a,0,10,1,\nb,-5,10,1,\n", "column 'submit_s'", "'-5'"},
    {CANON_H "a,0,10,1,\nb,5,nan,1,\n", "column 'duration_s'", "'nan'"},
    {CANON_H "a,0,10,1,\n,5,10,1,\n", "column 'job_id'", NULL},
    {CANON_H "a,0,10,1,\nb,5,10,1,TPU9\n", "column 'gpu_type'", "'TPU9'"},
    {CANON_H "a,0,10,1,\nb,5,10,1,,extra\n", NULL, NULL},
    {CANON_H "a,0,10,1,\n\"b,5,10,1,\n", NULL, NULL},
    {"job_id,submit_s,duration_s,gpus,deadline_s\na,0,10,1,\nb,5,10,1,4\n", "column 'deadline_s'",
     "'4'"},
    {"job_id,submit_s,duration_s,gpus,gpu_milli\na,0,10,1,\nb,5,10,2,500\n", "column 'gpu_milli'",
     "'500'"},
    /* ITP */
    {ITP_H "a,0,10,1\nb,5,10\n", "column 'num_gpu'", NULL},
    {ITP_H "a,0,10,1\nb,5,ten,1\n", "column 'duration'", "'ten'"},
    {ITP_H "a,0,10,1\nb,5,10,0\n", "column 'num_gpu'", "'0'"},
    {ITP_H "a,0,10,1\nb,5,-1,4\n", "column 'duration'", "'-1'"},
    /* Philly */
    {PHILLY_H PHILLY_OK "app_2,4,x,x,x,50\n", "column 'run_s'", NULL},
    {PHILLY_H PHILLY_OK "app_2,four,x,x,x,50,1,10,11,1,1,1-2\n", "column 'num_gpus'", "'four'"},
    {PHILLY_H PHILLY_OK "app_2,-4,x,x,x,50,1,10,11,1,1,1-2\n", "column 'num_gpus'", "'-4'"},
    {PHILLY_H PHILLY_OK "app_2,4,x,x,x,50,1,-10,11,1,1,1-2\n", "column 'run_s'", "'-10'"},
    /* openb */
    {OPENB_H OPENB_OK "p1,1000,1024,1,1000,,LS,Running,5,100\n", "column 'scheduled_time'", NULL},
    {OPENB_H OPENB_OK "p1,1000,1024,one,1000,,LS,Running,5,100,6\n", "column 'num_gpu'", "'one'"},
    {OPENB_H OPENB_OK "p1,1000,1024,-1,1000,,LS,Running,5,100,6\n", "column 'num_gpu'", "'-1'"},
    {OPENB_H OPENB_OK "p1,1000,1024,1,1000,,LS,Running,5,4,6\n", "column 'deletion_time'", "'4'"},
    {OPENB_H OPENB_OK "p1,1000,1024,1,0,,LS,Running,5,100,6\n", "column 'gpu_milli'", "'0'"},
    {OPENB_H OPENB_OK "p1,1000,1024,2,500,,LS,Running,5,100,6\n", "column 'gpu_milli'", "'500'"},
    {OPENB_H OPENB_OK "p1,1000,1024,1,1000,,LS,Running,-5,100,6\n", "column 'creation_time'",
     "'-5'"},
    /* values outside the documented ranges (src/sim/trace.h) */
    {CANON_H "a,0,10,1,\nb,5,1e308,1,\n", "column 'duration_s'", "'1e308' is outside 0..1e9 s"},
    {CANON_H "a,0,10,1,\nb,5,1000000001,1,\n", "column 'duration_s'", "is outside 0..1e9 s"},
    {CANON_H "a,0,10,1,\nb,9223372036854775808,3600,1,\n", "column 'submit_s'",
     "'9223372036854775808' is outside 0..1e10 s"},
    {CANON_H "a,0,10,1,\nb,5,10,2000000,\n", "column 'gpus'", "is outside 1..1048576 GPUs"},
    {"job_id,submit_s,duration_s,gpus,deadline_s\na,0,10,1,\nb,5,10,1,1e11\n",
     "column 'deadline_s'", "'1e11' is outside 0..1e10 s"},
    {"job_id,submit_s,duration_s,gpus,gpu_mem_gb\na,0,10,1,\nb,5,10,1,1e5\n", "column 'gpu_mem_gb'",
     "'1e5' is outside 0..1e4 GB"},
    {ITP_H "a,0,10,1\nb,5,1e10,1\n", "column 'duration'", "'1e10' is outside 0..1e9 s"},
    {PHILLY_H PHILLY_OK "app_2,4,x,x,x,1e12,1,10,11,1,1,1-2\n", "column 'submit_s'",
     "is outside 0..1e10 s"},
    {OPENB_H OPENB_OK "p1,1000,1024,1,1000,,LS,Running,5,100,1e11\n", "column 'scheduled_time'",
     "is outside 0..1e10 s"},
    {OPENB_H OPENB_OK "p1,1000,1024,1,1000,,LS,Running,5,2000000000,6\n", "column 'deletion_time'",
     "more than 1e9 s"},
    /* a job id given twice */
    {CANON_H "a,0,10,1,\na,5,10,1,\n", "column 'job_id'", "'a' repeats the job id of line 2"},
    {OPENB_H OPENB_OK "p0,1000,1024,1,1000,,LS,Running,5,100,6\n", "column 'name'",
     "'p0' repeats the job id of line 2"},
};

static void test_bad_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        char name[32];
        snprintf(name, sizeof name, "bad%zu.csv", i);
        const char *path = write_file(name, c->text, 0);
        char where[300];
        snprintf(where, sizeof where, "%s:3: ", path);

        struct eco_jobset *s;
        struct eco_error err;
        int rc = load(path, NULL, &s, &err);
        if (rc != -EINVAL || !strstr(err.msg, where) ||
            (c->column && !strstr(err.msg, c->column)) || (c->value && !strstr(err.msg, c->value)))
            fail_msg("case %zu: rc %d, message '%s'", i, rc, err.msg);
        assert_int_equal(s->n, 0); /* all or nothing */
        eco_jobset_destroy(s);

        /* With skip_bad_rows the good row 2 loads and row 3 is counted. */
        struct warnings w = {0};
        struct eco_trace_opts o = {.skip_bad_rows = true, .warn = record_warning, .warn_ctx = &w};
        rc = load(path, &o, &s, &err);
        if (rc != 0 || s->n != 1 || s->skipped_rows != 1 || s->jobs[0].line != 2)
            fail_msg("case %zu skipped: rc %d, n %zu, message '%s'", i, rc, s->n, err.msg);
        assert_int_equal(w.count, 1);
        assert_non_null(strstr(w.last, where));
        eco_jobset_destroy(s);
    }
}

/* Writes `len` bytes (NULs included) to tmpdir/name; returns the path (static buffer). */
static const char *write_bytes(const char *name, const char *bytes, size_t len, int gz)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, bytes, (unsigned)len), (int)len);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(bytes, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
    }
    return path;
}

/* A NUL byte anywhere is refused with file, line and column: a line-based reader would cut
 * the line there and merge it with the next ("j1\0,..." then "j2,..." read as job "j1j2"). */
static void test_nul_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
        const char *where; /* ":LINE: NUL byte at column COL" */
    } cases[] = {
#define B(s) s, sizeof(s) - 1
        {B("job_id,submit_s,duration_s,gpus\nj1\0,0,10,1\nj2,0,10,1\n"),
         ":2: NUL byte at column 3"},
        {B("job_id,submit_s,duration_s,gpus\nj1,0,10,1\nj2,0,10,1\0\n"),
         ":3: NUL byte at column 10"},
        {B("job_id,sub\0mit_s,duration_s,gpus\nj1,0,10,1\n"), ":1: NUL byte at column 11"},
        {B("job_id,submit_s,duration_s,gpus\nj1,0,10,1\n\0"), ":3: NUL byte at column 1"},
#undef B
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int gz = 0; gz < 2; gz++) {
            char name[32];
            snprintf(name, sizeof name, "nul%zu.csv%s", i, gz ? ".gz" : "");
            const char *path = write_bytes(name, cases[i].bytes, cases[i].len, gz);
            char want[300];
            snprintf(want, sizeof want, "%s%s", path, cases[i].where);
            struct eco_jobset *s;
            struct eco_error err;
            int rc = load(path, NULL, &s, &err);
            if (rc != -EINVAL || !strstr(err.msg, want))
                fail_msg("case %zu gz %d: rc %d, message '%s', want '%s'", i, gz, rc, err.msg,
                         want);
            assert_int_equal(s->n, 0);
            eco_jobset_destroy(s);
        }
}

/* A file that gives no job says so, and why. */
/* Case i of a table: text written to PREFIXi.csv must be refused (-EINVAL) with a message
 * that names the file and holds want. */
static void expect_refused(const char *prefix, size_t i, const char *text,
                           const struct eco_trace_opts *o, const char *want)
{
    char name[32];
    snprintf(name, sizeof name, "%s%zu.csv", prefix, i);
    const char *path = write_file(name, text, 0);
    struct eco_jobset *s;
    struct eco_error err;
    int rc = load(path, o, &s, &err);
    if (rc != -EINVAL || !strstr(err.msg, path) || !strstr(err.msg, want))
        fail_msg("case %zu: rc %d, message '%s'", i, rc, err.msg);
    eco_jobset_destroy(s);
}

static void test_no_jobs(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int skip_bad_rows;
        const char *want;
    } cases[] = {
        {"job_id,submit_s,duration_s,gpus\n", 0, "holds no job (a header line and no rows)"},
        {"job_id,submit_s,duration_s,gpus\n\n\n", 0, "holds no job (a header line"},
        {"job_id,submit_s,duration_s,gpus\na,0,-1,1\n", 1, "holds no job: all 1 rows were bad"},
        {OPENB_H "p0,1000,1024,0,0,,LS,Running,0,100,0\np1,1000,1024,1,1000,,LS,Pending,0,,\n", 0,
         "holds no GPU job: 1 CPU-only and 1 pending pods were skipped"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct eco_trace_opts o = {.skip_bad_rows = cases[i].skip_bad_rows};
        expect_refused("nojobs", i, cases[i].text, &o, cases[i].want);
    }
}

static void test_bad_header(void **state)
{
    (void)state;
    static const struct {
        enum eco_trace_format format;
        const char *text;
        const char *want;
    } cases[] = {
        {ECO_TRACE_CANONICAL, "job_id,submit_s,gpus\na,1,1\n", "'duration_s'"},
        {ECO_TRACE_ITP, "job_id,submission_time,num_gpu\na,1,1\n", "'duration'"},
        {ECO_TRACE_PHILLY, "job_id,submit_s,run_s\na,1,1\n", "'num_gpus'"},
        {ECO_TRACE_OPENB, "name,num_gpu,gpu_milli,creation_time,scheduled_time\n", "no times"},
        {ECO_TRACE_ITP, "job_id,submit_s,duration_s,gpus\na,1,1,1\n", "'submission_time'"},
        {ECO_TRACE_AUTO, "job_id,submit_s,duration_s\na,1,1\n", "matches no known trace format"},
        {ECO_TRACE_AUTO, "", "empty file"},
        {ECO_TRACE_AUTO, "\n\r\n\n", "empty file"},
        {ECO_TRACE_AUTO, "job_id,submit_s,duration_s,gpus,gpus\na,1,1,1,1\n", "twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct eco_trace_opts o = {.format = cases[i].format};
        expect_refused("hdr", i, cases[i].text, &o, cases[i].want);
    }
}

static void test_missing_file(void **state)
{
    (void)state;
    struct eco_jobset *s;
    struct eco_error err;
    const char *path = "/nonexistent/dir/trace.csv";
    assert_int_equal(load(path, NULL, &s, &err), -ENOENT);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, strerror(ENOENT)));
    eco_jobset_destroy(s);
    /* A directory opens but cannot be read. */
    assert_int_equal(load(tmpdir, NULL, &s, &err), -EIO);
    assert_non_null(strstr(err.msg, tmpdir));
    assert_non_null(strstr(err.msg, strerror(EISDIR)));
    assert_null(strstr(err.msg, "<fd:"));
    eco_jobset_destroy(s);
    /* err may be NULL */
    s = eco_jobset_create();
    assert_int_equal(eco_trace_load(path, NULL, s, NULL), -ENOENT);
    eco_jobset_destroy(s);
}

static void test_unknown_columns(void **state)
{
    (void)state;
    const char *path = write_file("unknown.csv",
                                  "job_id,color,submit_s,duration_s,gpus,priority\n"
                                  "a,red,0,10,1,5\nb,blue,1,10,2,6\nc,green,2,10,4,7\n",
                                  0);
    struct warnings w = {0};
    struct eco_trace_opts o = {.warn = record_warning, .warn_ctx = &w};
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, &o, &s, &err), 0);
    assert_int_equal(s->n, 3);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, path));
    assert_non_null(strstr(w.last, "'color'"));
    assert_non_null(strstr(w.last, "'priority'"));
    assert_int_equal(s->unknown_columns, 2);
    assert_int_equal(s->jobs[2].gpus, 4);
    eco_jobset_destroy(s);
}

/* Several bad rows among good ones: the good ones load in order, the bad ones are counted and
 * reported in one warning that quotes the first. */
static void test_skip_bad_rows(void **state)
{
    (void)state;
    const char *path = write_file("skip.csv",
                                  "job_id,submit_s,duration_s,gpus\n"
                                  "a,0,10,1\n"
                                  "b,1,10,0\n"
                                  "c,2,10,2\n"
                                  "d,x,10,1\n"
                                  "\n"
                                  "e,4,-3,1\n"
                                  "f,5,10,8\n",
                                  0);
    struct warnings w = {0};
    struct eco_trace_opts o = {.skip_bad_rows = true, .warn = record_warning, .warn_ctx = &w};
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, &o, &s, &err), 0);
    assert_int_equal(s->n, 3);
    assert_int_equal(s->skipped_rows, 3);
    assert_string_equal(id(s, 0), "a");
    assert_string_equal(id(s, 1), "c");
    assert_string_equal(id(s, 2), "f");
    assert_int_equal(s->jobs[2].line, 8);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "skipped 3 bad rows"));
    assert_non_null(strstr(w.last, ":3: column 'gpus'"));
    /* The strings of skipped rows were taken back: only a, c, f are in the arena. */
    assert_int_equal(s->str_len, 1 + 3 * 2);
    eco_jobset_destroy(s);
}

/* A failed load leaves a set that already holds jobs exactly as it was. */
static void test_all_or_nothing(void **state)
{
    (void)state;
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(DATA "openb.csv", NULL, &s, &err), 0);
    size_t n = s->n, str_len = s->str_len;
    const char *path = write_file("late_bad.csv",
                                  OPENB_H OPENB_OK "p1,1,1,0,0,,LS,Running,1,2,1\n"
                                                   "p2,1,1,1,500,,LS,Running,1,2,1\n"
                                                   "p3,1,1,x,1000,,LS,Running,1,2,1\n",
                                  0);
    assert_int_equal(eco_trace_load(path, NULL, s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, ":5: column 'num_gpu'"));
    assert_int_equal(s->n, n);
    assert_int_equal(s->str_len, str_len);
    assert_int_equal(s->skipped_non_gpu, 1);
    assert_int_equal(s->skipped_unfinished, 1);
    assert_int_equal(s->fractional, 2);
    /* Appending a good file keeps the old jobs first. */
    assert_int_equal(eco_trace_load(DATA "itp.csv", NULL, s, &err), 0);
    assert_int_equal(s->n, n + 3);
    assert_string_equal(id(s, 0), "openb-pod-0000");
    assert_string_equal(id(s, n), "965d744f-0445-c1a8-12af-97e4c536c66e");
    eco_jobset_destroy(s);
}

static void test_max_jobs(void **state)
{
    (void)state;
    struct eco_trace_opts o = {.max_jobs = 2};
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(DATA "openb.csv", &o, &s, &err), 0);
    assert_int_equal(s->n, 2);
    assert_string_equal(id(s, 1), "openb-pod-0001");
    eco_jobset_destroy(s);
    /* A bad row after the limit is never read. */
    const char *path = write_file("limit.csv", ITP_H "a,0,10,1\nb,1,10,1\nc,1,10,zero\n", 0);
    assert_int_equal(load(path, &o, &s, &err), 0);
    assert_int_equal(s->n, 2);
    eco_jobset_destroy(s);
}

/* Lines longer than the reader's first buffer (64 KiB), plain and gzip. */
static void test_long_lines(void **state)
{
    (void)state;
    size_t wl = 300000;
    size_t cap = wl + 256;
    char *text = malloc(cap);
    assert_non_null(text);
    int n = snprintf(text, cap, "job_id,workload,submit_s,duration_s,gpus\nshort,w,0,1,1\nlong,");
    memset(text + n, 'w', wl);
    snprintf(text + n + wl, cap - (size_t)n - wl, ",7,8,2\nlast,x,9,9,1\n");
    for (int gz = 0; gz <= 1; gz++) {
        const char *path = write_file(gz ? "long.csv.gz" : "long.csv", text, gz);
        struct eco_jobset *s;
        struct eco_error err;
        assert_int_equal(load(path, NULL, &s, &err), 0);
        assert_int_equal(s->n, 3);
        assert_string_equal(id(s, 1), "long");
        assert_int_equal(strlen(eco_jobset_str(s, s->jobs[1].workload_off)), wl);
        assert_true(s->jobs[1].submit_s == 7 && s->jobs[1].gpus == 2);
        assert_string_equal(id(s, 2), "last");
        assert_int_equal(s->jobs[2].line, 4);
        eco_jobset_destroy(s);
    }
    free(text);
}

/* The decompressed-text bound (opts->max_bytes; ECO_TRACE_MAX_BYTES, 4 GiB, by default) and
 * the file type: a gzip trace with more text than the bound is refused naming file, line and
 * the limit, all or nothing; one within it is read; a FIFO is refused without waiting. */
static void test_trace_limits(void **state)
{
    (void)state;
    char text[8192] = "job_id,submit_s,duration_s,gpus\n";
    for (int i = 0; i < 200; i++) /* 200 rows of 19-21 bytes: about 4 KiB */
        snprintf(text + strlen(text), sizeof text - strlen(text), "job%03d,%d,3600,1\n", i, i);
    const char *p = write_file("big.csv.gz", text, 1);
    char path[256];
    snprintf(path, sizeof path, "%s", p);
    struct eco_trace_opts o = {.format = ECO_TRACE_AUTO, .max_bytes = 2048};
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, &o, &s, &err), -EFBIG);
    assert_int_equal(s->n, 0);
    if (!strstr(err.msg, path) || !strstr(err.msg, "more than 2 KiB of text (after "
                                                   "decompression): the limit for a trace"))
        fail_msg("'%s'", err.msg);
    eco_jobset_destroy(s);
    o.max_bytes = 8192;
    assert_int_equal(load(path, &o, &s, &err), 0);
    assert_int_equal(s->n, 200);
    eco_jobset_destroy(s);
    assert_int_equal(load(path, NULL, &s, &err), 0); /* the default bound */
    eco_jobset_destroy(s);
    snprintf(path, sizeof path, "%s/fifo.csv", tmpdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(load(path, NULL, &s, &err), -EIO);
    assert_non_null(strstr(err.msg, "a FIFO, not a regular file"));
    eco_jobset_destroy(s);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_split),
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_parse_int),
        cmocka_unit_test(test_format_names),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_canonical_quoted_crlf),
        cmocka_unit_test(test_itp),
        cmocka_unit_test(test_philly),
        cmocka_unit_test(test_openb),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_real_itp),
        cmocka_unit_test(test_real_philly),
        cmocka_unit_test(test_real_openb),
        cmocka_unit_test(test_bad_rows),
        cmocka_unit_test(test_bad_header),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_no_jobs),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_unknown_columns),
        cmocka_unit_test(test_skip_bad_rows),
        cmocka_unit_test(test_all_or_nothing),
        cmocka_unit_test(test_max_jobs),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_trace_limits),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
