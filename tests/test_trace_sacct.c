/* SPDX-License-Identifier: MIT */
/* Tests for the sacct trace format (src/sim/trace_fmt_sacct.c) and Slurm's GRES, TRES and time
 * strings (src/sim/slurm_gres.c): the exports of a real Slurm 22.05 (tests/data/trace_sacct/,
 * made by make_fixtures.sh) as -P with and without steps and as --json give the same jobs;
 * hand-written rows for what that run could not show; every malformed field names file, line
 * and column (or the JSON job and field). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "sim/slurm_gres.h"
#include "sim/trace.h"

#define DATA ECO_SOURCE_DIR "/tests/data/trace_sacct/"
#define MAP "a100=A100-SXM,tesla=V100"

#define TEST_TMPDIR_NAME "eco_test_sacct"
#include "test_tmpdir.h"

static struct warnings warned;

static struct eco_trace_opts opts_map(const char *map)
{
    memset(&warned, 0, sizeof warned);
    return (struct eco_trace_opts){.format = ECO_TRACE_AUTO,
                                   .gpu_type_map = map,
                                   .tz = "UTC",
                                   .warn = record_warning,
                                   .warn_ctx = &warned};
}

static int load(const char *path, const struct eco_trace_opts *o, struct eco_jobset **out,
                struct eco_error *err)
{
    *out = eco_jobset_create();
    assert_non_null(*out);
    err->msg[0] = '\0';
    return eco_trace_load(path, o, *out, err);
}

static const char *str(const struct eco_jobset *s, uint32_t off)
{
    return eco_jobset_str(s, off);
}

static double speed_of(const char *type)
{
    int t = eco_catalog_find(type);
    double speed;
    assert_true(t >= 0);
    assert_int_equal(eco_power_eval(t, ECO_WORKLOAD_GENERIC,
                                    eco_catalog_get((size_t)t)->default_limit_w, &speed, NULL),
                     0);
    return speed;
}

/* ---- the real exports ------------------------------------------------------------------------ */

/* Jobs of make_fixtures.sh's run, in the reader's order (submit, id, task). */
static const struct {
    const char *id;
    double elapsed;
    uint32_t gpus;
    const char *ran;   /* the type it got */
    const char *asked; /* the type it asked for (pinned), NULL: any */
    double limit_s;
    const char *account, *state;
} want[] = {
    {"1", 3, 1, "A100-SXM", "A100-SXM", 300, "proj-a", "COMPLETED"},
    {"2", 4, 2, "V100", "V100", 3600, "proj-b", "COMPLETED"},
    {"3", 2, 1, "A100-SXM", NULL, INFINITY, "proj-a", "COMPLETED"},
    {"4_0", 2, 1, "A100-SXM", NULL, 600, "proj-a", "COMPLETED"},
    {"4_1", 2, 1, "A100-SXM", NULL, 600, "proj-a", "COMPLETED"},
    {"4_2", 2, 1, "V100", NULL, 600, "proj-a", "COMPLETED"},
    {"5", 2, 2, "A100-SXM", NULL, 600, "proj-b", "COMPLETED"}, /* het: a100 + tesla */
    {"8", 1, 2, "A100-SXM", "A100-SXM", 120, "proj-b", "FAILED"},
};
#define NWANT (sizeof want / sizeof want[0])

static void check_real(const char *file, bool measured, bool acct)
{
    char path[512];
    struct eco_jobset *s;
    struct eco_error err;
    snprintf(path, sizeof path, DATA "%s", file);
    struct eco_trace_opts o = opts_map(MAP);
    o.elapsed_as_measured = measured;
    int rc = load(path, &o, &s, &err);
    if (rc)
        fail_msg("%s: %s", file, err.msg);
    assert_int_equal(s->n, NWANT);
    assert_true(s->has_epoch);
    assert_true(s->epoch_s == 1796345729.0); /* 2026-12-04T00:55:29 UTC, the first Submit */
    /* the running job and the CPU-only one, in one line */
    assert_int_equal(warned.count, 1);
    assert_non_null(strstr(warned.last, "skipped 2 jobs: 1 pending or running, 0 that never "
                                        "ran, 1 CPU-only"));
    for (size_t i = 0; i < NWANT; i++) {
        const struct eco_job *j = &s->jobs[i];
        assert_string_equal(str(s, j->id_off), want[i].id);
        assert_true(j->submit_s == 0);
        assert_int_equal(j->gpus, want[i].gpus);
        double speed = measured ? 1 : speed_of(want[i].ran);
        if (!strcmp(want[i].id, "5") && !measured) /* the longer of its components */
            speed = fmax(speed_of("A100-SXM"), speed_of("V100"));
        assert_true(fabs(j->duration_s - want[i].elapsed * speed) < 1e-9);
        assert_int_equal(j->gpu_type, want[i].asked ? eco_catalog_find(want[i].asked) : -1);
        assert_true(j->limit_s == want[i].limit_s);
        assert_string_equal(str(s, j->acct_state_off), want[i].state);
        if (!acct)
            continue;
        assert_string_equal(str(s, j->user_off), "root");
        assert_string_equal(str(s, j->account_off), want[i].account);
        assert_string_equal(str(s, j->partition_off), "gpu");
    }
    eco_jobset_destroy(s);
}

static void test_real_parsable(void **state)
{
    (void)state;
    check_real("jobs-X.sacct", false, true);
}

static void test_real_steps(void **state)
{
    (void)state;
    check_real("jobs-steps.sacct", false, true); /* without -X: steps folded, never counted twice */
}

static void test_real_elapsed(void **state)
{
    (void)state;
    check_real("jobs-elapsed.sacct", false, false); /* Elapsed, no User or Account */
}

static void test_real_json(void **state)
{
    (void)state;
    check_real("jobs.json", false, true);
    check_real("jobs.json", true, true);
    check_real("jobs-X.sacct", true, true);
}

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(eco_trace_detect("JobID|Submit|ElapsedRaw|AllocTRES"), ECO_TRACE_SACCT);
    assert_int_equal(eco_trace_detect("User|JobID|Submit"), ECO_TRACE_SACCT);
    assert_int_equal(eco_trace_detect("{"), ECO_TRACE_SACCT);
    assert_int_equal(eco_trace_detect("JobID,Submit"), ECO_TRACE_AUTO);
    assert_int_equal(eco_trace_detect("job_id,submit_s,duration_s,gpus"), ECO_TRACE_CANONICAL);
    assert_int_equal(eco_trace_format_parse("sacct"), ECO_TRACE_SACCT);
}

/* ---- hand-written rows ------------------------------------------------------------------- */

#define HDR "JobID|State|Submit|Start|End|Elapsed|Timelimit|AllocTRES|ReqTRES|AllocGRES\n"

static void test_rows(void **state)
{
    (void)state;
    const char *path = write_text(
        "rows.sacct",
        HDR "10|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:10|2024-03-02T14:03:14|"
            "1-02:03:04|2-00:00:00|cpu=2,gres/gpu:A100_80G=4,node=1||\n"
            "11|PENDING|2024-03-01T12:00:05|Unknown|Unknown|00:00:00|Partition_Limit||"
            "gres/gpu=2|\n"
            "12|CANCELLED by 1000|2024-03-01T12:00:06|None|2024-03-01T12:30:00|00:00:00|90||"
            "gres/gpu=1|\n"
            "13|RUNNING|2024-03-01T12:00:07|2024-03-01T12:00:08|Unknown|01:00|UNLIMITED|"
            "gres/gpu=1||\n"
            "14|COMPLETED|2024-03-01T12:00:08|2024-03-01T12:00:09|2024-03-01T12:05:15|05:06|"
            "30:00|||gpu:tesla:2(S:0-1)\n"
            "15|COMPLETED|2024-03-01T12:00:09|2024-03-01T12:00:09|2024-03-01T12:00:19|00:00:10|"
            "UNLIMITED||gres/gpu=3|\n"
            "16|COMPLETED|2024-03-01T12:00:10|2024-03-01T12:00:10|2024-03-01T12:00:20|00:00:10|"
            "UNLIMITED|cpu=4|gres/gpu=1|\n"
            "17_[3-5]|PENDING|2024-03-01T12:00:11|Unknown|Unknown|00:00:00|10||gres/gpu=1|\n"
            "10.batch|COMPLETED|2024-03-01T12:00:10|2024-03-01T12:00:10|2024-03-02T14:03:14|"
            "1-02:03:04||cpu=2,gres/gpu:a100_80g=4||\n");
    struct eco_trace_opts o = opts_map("a100_80g=A100-SXM,TESLA=V100");
    o.tz = "Europe/Berlin";
    struct eco_jobset *s;
    struct eco_error err;
    int rc = load(path, &o, &s, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(s->n, 3);
    /* 12:00:00 in Berlin (CET, UTC+1) is 11:00:00 UTC */
    assert_true(s->epoch_s == 1709290800.0);
    assert_string_equal(str(s, s->jobs[0].id_off), "10");
    assert_int_equal(s->jobs[0].gpus, 4);
    assert_int_equal(s->jobs[0].gpu_type, -1); /* it asked for no type */
    assert_true(fabs(s->jobs[0].duration_s - 93784 * speed_of("A100-SXM")) < 1e-6);
    assert_true(s->jobs[0].limit_s == 2 * 86400);
    /* AllocGRES when AllocTRES is empty; MM:SS */
    assert_string_equal(str(s, s->jobs[1].id_off), "14");
    assert_int_equal(s->jobs[1].gpus, 2);
    assert_true(s->jobs[1].duration_s == 306);
    assert_true(s->jobs[1].limit_s == 1800);
    assert_true(s->jobs[1].submit_s == 8);
    /* ReqTRES when both allocations are empty */
    assert_string_equal(str(s, s->jobs[2].id_off), "15");
    assert_int_equal(s->jobs[2].gpus, 3);
    assert_true(isinf(s->jobs[2].limit_s));
    assert_int_equal(warned.count, 1);
    assert_non_null(strstr(warned.last, "skipped 5 jobs: 3 pending or running, 1 that never "
                                        "ran, 1 CPU-only"));
    eco_jobset_destroy(s);
}

/* --parsable (-p): a '|' at the end of every line; Timelimit in minutes (TimelimitRaw). */
static void test_parsable_trailing_bar(void **state)
{
    (void)state;
    const char *path = write_text("p.sacct", "JobIDRaw|Submit|ElapsedRaw|TimelimitRaw|ReqTRES|\n"
                                             "7|1709290800|60|15|gres/gpu=2|\n");
    struct eco_trace_opts o = opts_map(NULL);
    struct eco_jobset *s;
    struct eco_error err;
    int rc = load(path, &o, &s, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(s->n, 1);
    assert_true(s->jobs[0].limit_s == 900);
    assert_true(s->jobs[0].duration_s == 60);
    assert_true(s->epoch_s == 1709290800.0);
    eco_jobset_destroy(s);
}

/* Later schemas: numbers as {"set", "infinite", "number"}, state.current a list; Slurm's
 * NO_VAL as a limit; array tasks and het components named as -P names them. */
static void test_json_later_schema(void **state)
{
    (void)state;
    const char *path = write_text(
        "later.json",
        "{\"jobs\": [\n"
        " {\"job_id\": 21, \"array\": {\"job_id\": 20, \"task_id\": {\"set\": true, "
        "\"infinite\": false, \"number\": 3}},\n"
        "  \"time\": {\"submission\": {\"set\": true, \"infinite\": false, \"number\": "
        "1709290800}, \"start\": {\"set\": true, \"number\": 1709290810}, \"end\": {\"set\": "
        "true, \"number\": 1709290870}, \"elapsed\": 60, \"limit\": {\"set\": true, "
        "\"infinite\": true, \"number\": 0}},\n"
        "  \"state\": {\"current\": [\"COMPLETED\"]}, \"tres\": {\"allocated\": [{\"type\": "
        "\"gres\", \"name\": \"gpu\", \"count\": 2}]}},\n"
        " {\"job_id\": 30, \"het\": {\"job_id\": 30, \"job_offset\": 0}, \"time\": "
        "{\"submission\": 1709290801, \"start\": 1709290900, \"end\": 1709291000, \"elapsed\": "
        "100, \"limit\": 4294967294}, \"tres\": {\"allocated\": [{\"type\": \"gres\", "
        "\"name\": \"gpu\", \"count\": 1}]}},\n"
        " {\"job_id\": 31, \"het\": {\"job_id\": 30, \"job_offset\": 1}, \"time\": "
        "{\"submission\": 1709290801, \"start\": 1709290900, \"end\": 1709291050, \"elapsed\": "
        "150, \"limit\": 5}, \"tres\": {\"allocated\": [{\"type\": \"gres\", \"name\": "
        "\"gpu\", \"count\": 3}]}}\n"
        "]}\n");
    struct eco_trace_opts o = opts_map(NULL);
    struct eco_jobset *s;
    struct eco_error err;
    int rc = load(path, &o, &s, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(s->n, 2);
    assert_string_equal(str(s, s->jobs[0].id_off), "20_3");
    assert_int_equal(s->jobs[0].gpus, 2);
    assert_true(s->jobs[0].duration_s == 60);
    assert_true(isinf(s->jobs[0].limit_s));
    assert_string_equal(str(s, s->jobs[0].acct_state_off), "COMPLETED");
    assert_string_equal(str(s, s->jobs[1].id_off), "30"); /* 30+0 and 30+1: one job */
    assert_int_equal(s->jobs[1].gpus, 4);
    assert_true(s->jobs[1].duration_s == 150);
    assert_true(isinf(s->jobs[1].limit_s));
    assert_true(s->jobs[1].submit_s == 1);
    eco_jobset_destroy(s);
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void expect_error(const char *name, const char *text, const char *map, const char *msg)
{
    const char *path = write_text(name, text);
    struct eco_trace_opts o = opts_map(map);
    struct eco_jobset *s;
    struct eco_error err;
    int rc = load(path, &o, &s, &err);
    if (rc != -EINVAL || !strstr(err.msg, msg) || !strstr(err.msg, name))
        fail_msg("%s: rc %d, message '%s', expected '%s'", name, rc, err.msg, msg);
    assert_int_equal(s->n, 0);
    assert_false(s->has_epoch);
    eco_jobset_destroy(s);
}

#define ROW_OK                                                                                     \
    "1|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|"                     \
    "00:01:00|10|gres/gpu=1|gres/gpu=1|\n"

static void test_errors(void **state)
{
    (void)state;
    const struct {
        const char *row, *msg;
    } bad[] = {
        {"2|COMPLETED|2024-03-01 12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "gres/gpu=1||",
         ":3: column 'Submit': '2024-03-01 12:00:00' is not a time as sacct prints it"},
        {"2|COMPLETED|2024-02-30T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "gres/gpu=1||",
         ":3: column 'Submit': '2024-02-30T12:00:00' is not a valid date and time"},
        {"2|COMPLETED|2024-03-01T12:00:00|soon|2024-03-01T12:01:00|00:01:00|10|gres/gpu=1||",
         ":3: column 'Start': 'soon' is not a time"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T25:01:00|00:01:00|10|"
         "gres/gpu=1||",
         ":3: column 'End': '2024-03-01T25:01:00' is not a valid date and time"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|1:x:00|10|"
         "gres/gpu=1||",
         ":3: column 'Elapsed': '1:x:00' is not a run time"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|"
         "forever|gres/gpu=1||",
         ":3: column 'Timelimit': 'forever' is not a time limit"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "gres/gpu=two||",
         ":3: column 'AllocTRES': 'gres/gpu=two' has a malformed entry 'gres/gpu=two'"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "|cpu|",
         ":3: column 'ReqTRES': 'cpu' has a malformed entry"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "||gpu:a100:x",
         ":3: column 'AllocGRES': 'gpu:a100:x' has a malformed entry"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "gres/gpu:h200x=1,gres/gpu=1||",
         ":3: column 'AllocTRES': 'h200x' is not a GPU type of the catalog (map it: "
         "--gpu-type-map h200x=TYPE"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00",
         ":3: 6 fields, but the header has 10 columns"},
        {"1|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "gres/gpu=1||",
         ":3: column 'JobID': '1' repeats the job id of line 2"},
        {"|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|00:01:00|10|"
         "gres/gpu=1||",
         ":3: column 'JobID': '' is empty, expected a job id"},
        {"2|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:02:00|2024-03-01T12:01:00||10|"
         "gres/gpu=1||",
         ":3: column 'End': '2024-03-01T12:01:00' is before the start"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024], name[32];
        snprintf(text, sizeof text, HDR ROW_OK "%s\n", bad[i].row);
        snprintf(name, sizeof name, "bad%zu.sacct", i);
        expect_error(name, text, NULL, bad[i].msg);
    }
    expect_error("nohdr.sacct", "JobID|Submit|AllocTRES\n1|2024-03-01T12:00:00|gres/gpu=1\n", NULL,
                 "missing required column 'ElapsedRaw', 'Elapsed' or 'Start' and 'End'");
    expect_error("twice.sacct", "JobID|Submit|ElapsedRaw|JobID|ReqTRES\n", NULL,
                 ":1: column 'JobID' appears twice");
    expect_error("map.sacct", HDR ROW_OK, "a100",
                 "--gpu-type-map: part 'a100': expected SITE=TYPE");
    expect_error("map2.sacct", HDR ROW_OK, "a100=Z9", "'Z9' is not a GPU type of the catalog");
    expect_error("cpu.sacct",
                 HDR "1|COMPLETED|2024-03-01T12:00:00|2024-03-01T12:00:00|2024-03-01T12:01:00|"
                     "00:01:00|10|cpu=1|cpu=1|\n",
                 NULL,
                 "holds no GPU job that ran: 0 pending or running, 0 that never ran and 1 "
                 "CPU-only");
    /* JSON */
    expect_error("bad.json", "{\"jobs\": [\n  {\"job_id\": 1,}\n]}\n", NULL,
                 "bad.json:2:16: invalid JSON");
    expect_error("nojobs.json", "{\"meta\": {}}\n", NULL, "an object with an array 'jobs'");
    expect_error("start.json",
                 "{\"jobs\": [{\"job_id\": 7, \"time\": {\"submission\": 1709290800, \"start\": "
                 "\"noon\", \"end\": 1709290900, \"elapsed\": 100}}]}\n",
                 NULL, "jobs[0] (job_id 7): field 'time.start': is not a whole number");
    expect_error("tres.json",
                 "{\"jobs\": [{\"job_id\": 7, \"time\": {\"submission\": 1709290800, \"start\": "
                 "1709290800, \"end\": 1709290900, \"elapsed\": 100}, \"tres\": {\"allocated\": "
                 "[{\"type\": \"gres\", \"name\": \"gpu\", \"count\": -2}]}}]}\n",
                 NULL, "jobs[0] (job_id 7): field 'tres.allocated': 'gpu' has a count");
    expect_error("limit.json",
                 "{\"jobs\": [{\"job_id\": 7, \"time\": {\"submission\": 1709290800, \"start\": "
                 "1709290800, \"end\": 1709290900, \"elapsed\": 100, \"limit\": \"x\"}}]}\n",
                 NULL, "jobs[0] (job_id 7): field 'time.limit'");
    expect_error("type.json",
                 "{\"jobs\": [{\"job_id\": 7, \"time\": {\"submission\": 1709290800, \"start\": "
                 "1709290800, \"end\": 1709290900, \"elapsed\": 100}, \"tres\": {\"allocated\": "
                 "[{\"type\": \"gres\", \"name\": \"gpu:tesla\", \"count\": 1}]}}]}\n",
                 NULL, "field 'tres.allocated': 'tesla' is not a GPU type of the catalog");
}

static void test_bad_tz(void **state)
{
    (void)state;
    const char *path = write_text("tz.sacct", HDR ROW_OK);
    struct eco_trace_opts o = opts_map(NULL);
    o.tz = "Mars/Olympus";
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, &o, &s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "time zone 'Mars/Olympus' is unknown"));
    eco_jobset_destroy(s);
}

/* --skip-bad-rows: the bad row counted, the others loaded. */
static void test_skip_bad(void **state)
{
    (void)state;
    const char *path =
        write_text("skip.sacct", HDR ROW_OK "2|COMPLETED|x|2024-03-01T12:00:00|2024-03-01T12:01:00|"
                                            "00:01:00|10|gres/gpu=1||\n");
    struct eco_trace_opts o = opts_map(NULL);
    o.skip_bad_rows = true;
    struct eco_jobset *s;
    struct eco_error err;
    assert_int_equal(load(path, &o, &s, &err), 0);
    assert_int_equal(s->n, 1);
    assert_int_equal(s->skipped_rows, 1);
    assert_non_null(strstr(warned.last, "column 'Submit': 'x'"));
    eco_jobset_destroy(s);
}

/* ---- Slurm strings ------------------------------------------------------------------------- */

static void test_strings(void **state)
{
    (void)state;
    double v;
    assert_int_equal(eco_slurm_duration("1-02:03:04", &v), 0);
    assert_true(v == 93784);
    assert_int_equal(eco_slurm_duration("05:06", &v), 0);
    assert_true(v == 306);
    assert_int_equal(eco_slurm_duration("90", &v), 0);
    assert_true(v == 5400);
    assert_int_equal(eco_slurm_duration("2-03", &v), 0);
    assert_true(v == 2 * 86400 + 3 * 3600);
    assert_int_equal(eco_slurm_duration("2-03:04", &v), 0);
    assert_true(v == 2 * 86400 + 3 * 3600 + 240);
    assert_int_equal(eco_slurm_duration("", &v), -EINVAL);
    assert_int_equal(eco_slurm_duration("1:2:3:4", &v), -EINVAL);
    assert_int_equal(eco_slurm_duration("-1", &v), -EINVAL);
    assert_int_equal(eco_slurm_duration("1-", &v), -EINVAL);

    struct eco_gres_gpus g;
    assert_int_equal(eco_gres_gres("gpu:a100:4(S:0-1)", &g), 0);
    assert_int_equal(g.count, 4);
    assert_string_equal(g.type, "a100");
    assert_int_equal(eco_gres_gres("gpu:4(S:0,1),mps:100", &g), 0);
    assert_int_equal(g.count, 4);
    assert_string_equal(g.type, "");
    assert_int_equal(eco_gres_gres("gpu:a100:2,gpu:v100:2", &g), 0);
    assert_int_equal(g.count, 4);
    assert_true(g.mixed);
    assert_int_equal(eco_gres_gres("(null)", &g), 0);
    assert_int_equal(g.count, 0);
    assert_int_equal(eco_gres_gres("gpu:a100:4(S:0-1", &g), -EINVAL);
    assert_int_equal(eco_gres_tres("cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=4G", &g), 0);
    assert_int_equal(g.count, 2);
    assert_string_equal(g.type, "a100");
    assert_int_equal(eco_gres_tres("gres/gpu:a100=2,gres/gpu:v100=1", &g), 0);
    assert_int_equal(g.count, 3);
    assert_true(g.mixed);
    assert_int_equal(eco_gres_tres("gres/gpu=9999999", &g), -EINVAL);

    struct eco_gres_map m;
    struct eco_error err;
    assert_int_equal(eco_gres_map_parse("a100_80g=A100-SXM,tesla=v100", &m, &err), 0);
    assert_int_equal(eco_gres_type(&m, "A100_80G"), eco_catalog_find("A100-SXM"));
    assert_int_equal(eco_gres_type(&m, "TESLA"), eco_catalog_find("V100"));
    assert_int_equal(eco_gres_type(&m, "h100-sxm"), eco_catalog_find("H100-SXM"));
    assert_int_equal(eco_gres_type(&m, "a100"), -1);
    assert_int_equal(eco_gres_map_parse("=V100", &m, &err), -EINVAL);
    assert_int_equal(eco_gres_map_parse("x=", &m, &err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_parsable),
        cmocka_unit_test(test_real_steps),
        cmocka_unit_test(test_real_elapsed),
        cmocka_unit_test(test_real_json),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_parsable_trailing_bar),
        cmocka_unit_test(test_json_later_schema),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bad_tz),
        cmocka_unit_test(test_skip_bad),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
