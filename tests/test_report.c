/* SPDX-License-Identifier: MIT */
/* Tests for the HTML report's reading side and writer: M4 bins of a hand-made timeline against
 * values worked out by hand, sorted JCTs and waits, run discovery (and the --compare order),
 * the summary tables (one unit per figure, headline figures first), the over-time plots,
 * byte determinism, and malformed files named by file, line and field. */
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
#include "sim/report_internal.h"

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/eco_test_report.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[128];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *sub, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    mkdir(path, 0777);
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* 9 scalar figures, 6 of them energy parts: the table must have 12 rows (3 + 6 + 3). */
static const char SUMMARY[] =
    "{\"policy\": \"fifo\", \"cluster_nodes\": 2, \"cluster_gpus\": 16,\n"
    " \"energy_j\": {\"total\": 7.2e6, \"gpu_busy\": 3.6e6, \"gpu_idle\": 0, \"node_base\": "
    "3.6e6,\n"
    "   \"off\": 0, \"transitions\": 0},\n"
    " \"avg_jct_s\": 5.0, \"window_start_s\": 0.0, \"window_end_s\": 800.0}\n";

/* Power 100 W on [0, 0.5), 300 on [0.5, 0.75), 50 on [0.75, 1), 200 on [1, 3.5); with 800 s
 * over 800 bins each bin is one second. */
static const char TIMELINE[] = "time_s,power_w,budget_w,busy_gpus,nodes_on,queued\n"
                               "0,100,0,1,2,0\n"
                               "0.5,300,0,3,2,1\n"
                               "0.75,50,0,0,2,0\n"
                               "1,200,0,2,2,4\n"
                               "3.5,0,0,0,2,0\n";

static const char JOBS[] = "job_id,submit_s,start_s,end_s,gpus,nodes,wait_s,jct_s,preemptions,"
                           "energy_j,workload\n"
                           "a,0,0,9,1,0,0,9,0,1,generic\n"
                           "\"b,2\",0,,,1,,,,0,0,generic\n"
                           "c,0,1,2,1,0,1,2,0,1,generic\n";

static void write_run(const char *sub)
{
    put(sub, "summary.json", SUMMARY);
    put(sub, "timeline.csv", TIMELINE);
    put(sub, "jobs.csv", JOBS);
}

static void test_m4_bins(void **state)
{
    (void)state;
    write_run("r");
    char d[128];
    snprintf(d, sizeof d, "%s/r", dir);
    struct eco_report_run in = {d, NULL};
    struct eco_error err = {{0}};
    static struct eco_report_data r;
    assert_int_equal(eco_report__load(&r, &in, &err), 0);
    assert_string_equal(r.label, "fifo");
    assert_true(r.energy_j == 7.2e6 && r.avg_jct_s == 5.0 && r.gpus == 16 && r.nodes == 2);
    assert_int_equal(r.n_done, 2); /* b never completed */
    assert_true(r.jct_s[0] == 2 && r.jct_s[1] == 9);
    assert_true(r.wait_s[0] == 0 && r.wait_s[1] == 1);
    assert_int_equal(eco_report__load_timeline(&r, d, 0, 800, &err), 0);
    assert_int_equal(r.timeline_rows, 5);
    const struct eco_report_bin *b = r.ts[TS_POWER];
    /* bin 0: first 100, lowest 50 at 0.75, highest 300 at 0.5, last 50 */
    assert_true(b[0].used && b[0].first == 100 && b[0].lo == 50 && b[0].hi == 300 &&
                b[0].last == 50);
    assert_true(b[0].x_lo == 0.75 && b[0].x_hi == 0.5);
    for (int i = 1; i <= 3; i++) /* 200 W from 1 s to 3.5 s */
        assert_true(b[i].used && b[i].first == 200 && b[i].lo == 200 && b[i].hi == 200);
    assert_false(b[4].used); /* nothing after the last row */
    assert_true(r.ts_max[TS_POWER] == 300 && r.ts_max[TS_QUEUED] == 4 && r.ts_max[TS_BUSY] == 3);
    assert_true(r.ts[TS_QUEUED][0].hi == 1 && r.ts[TS_QUEUED][2].first == 4);
    eco_report__fini(&r);
}

/* noinline: inlined, GCC 12 takes the memstream buffer for the local `buf` (a false
 * -Wdangling-pointer). */
__attribute__((noinline)) static char *report_of(const struct eco_report_run *runs, size_t n,
                                                 int *rc, struct eco_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rc = eco_report_write(f, runs, n, NULL, err);
    fclose(f);
    return buf;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_write(void **state)
{
    (void)state;
    write_run("w1");
    write_run("w2");
    char d1[128], d2[128];
    snprintf(d1, sizeof d1, "%s/w1", dir);
    snprintf(d2, sizeof d2, "%s/w2", dir);
    struct eco_report_run one[] = {{d1, NULL}}, two[] = {{d1, "x<y"}, {d2, "b"}};
    struct eco_error err = {{0}};
    int rc;
    char *a = report_of(one, 1, &rc, &err);
    assert_int_equal(rc, 0);
    char *again = report_of(one, 1, &rc, &err);
    assert_string_equal(a, again); /* deterministic */
    assert_int_equal(count(a, "<tr data-key="), 12);
    assert_non_null(strstr(a, "<tr data-key=\"energy_j.node_base\">"));
    assert_null(strstr(a, "id=\"energy-jct\"")); /* one run: no scatter */
    assert_non_null(strstr(a, "id=\"jct-cdf\""));
    assert_non_null(strstr(a, "id=\"timeline-power\""));
    assert_non_null(strstr(a, ">2 kWh</text>")); /* 7.2 MJ: the bar's total */
    assert_non_null(strstr(a, "<td class=\"u\">kWh</td><td data-v=\"7200000\" "
                              "title=\"7200000\">2.00</td>"));
    assert_non_null(strstr(a, "<td class=\"u\">s</td><td data-v=\"5\" title=\"5\">5.00</td>"));
    assert_null(strstr(a, "<script"));
    char *b = report_of(two, 2, &rc, &err);
    assert_int_equal(rc, 0);
    assert_int_equal(count(b, "<g class=\"point\""), 2);
    assert_non_null(strstr(b, "data-run=\"x&lt;y\"")); /* names are escaped */
    assert_null(strstr(b, "x<y"));
    free(a);
    free(again);
    free(b);
}

/* A run's summary.json with the given average JCT and energy. */
static void put_summary(const char *sub, double jct_s, double energy_j)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"policy\": \"fifo\", \"cluster_nodes\": 2, \"cluster_gpus\": 16,\n"
             " \"energy_j\": {\"total\": %.17g, \"gpu_busy\": 0, \"gpu_idle\": 0,\n"
             "   \"node_base\": 0, \"off\": 0, \"transitions\": 0},\n"
             " \"jobs\": 3, \"avg_wait_s\": 30.0, \"avg_jct_s\": %.17g, \"window_start_s\": 0.0,"
             " \"window_end_s\": 800.0}\n",
             energy_j, jct_s);
    put(sub, "summary.json", text);
}

/* The figures of several runs: one unit per figure, the headline figures first, and the
 * over-time plots one per measure with a line per run. */
static void test_units_and_order(void **state)
{
    (void)state;
    write_run("u1");
    write_run("u2");
    write_run("u3");
    put_summary("u1", 141840, 3.6e9); /* 39.40 h, 1 MWh */
    put_summary("u2", 241920, 9e8);   /* 2.80 d, 250 kWh */
    put_summary("u3", 90, 7.2e6);     /* 1.5 min, 2 kWh */
    char d[3][128];
    for (int i = 0; i < 3; i++)
        snprintf(d[i], sizeof d[i], "%s/u%d", dir, i + 1);
    struct eco_report_run runs[] = {{d[0], "a"}, {d[1], "b"}, {d[2], "c"}};
    struct eco_error err = {{0}};
    int rc;
    char *h = report_of(runs, 3, &rc, &err);
    assert_int_equal(rc, 0);
    /* avg_jct_s: all in days (the largest is 2.80 d), none in hours, minutes or seconds */
    const char *row = strstr(h, "<tr data-key=\"avg_jct_s\">");
    assert_non_null(row);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row, "\n"), row);
    assert_non_null(strstr(line, "<td class=\"u\">d</td>"));
    assert_non_null(strstr(line, ">1.642</td>")); /* 3 decimals: 1.5 min is 0.001 d */
    assert_non_null(strstr(line, ">2.800</td>"));
    assert_non_null(strstr(line, ">0.001</td>"));
    assert_null(strstr(line, " h<"));
    assert_null(strstr(line, " min<"));
    /* energy_j.total: all in MWh (the largest is 1 MWh) */
    row = strstr(h, "<tr data-key=\"energy_j.total\">");
    assert_non_null(row);
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row, "\n"), row);
    assert_non_null(strstr(line, "<td class=\"u\">MWh</td>"));
    assert_non_null(strstr(line, ">1.000</td>"));
    assert_non_null(strstr(line, ">0.250</td>"));
    assert_non_null(strstr(line, ">0.002</td>"));
    /* the headline figures first: the headline table, then the full table's first rows */
    const char *head = strstr(h, "id=\"headline-table\"");
    assert_non_null(head);
    assert_true(head < strstr(h, "id=\"energy-jct\""));
    assert_non_null(strstr(head, "data-key=\"avg_jct_s\">mean JCT <span class=\"d\">(d)</span>"));
    const char *first = strstr(h, "<tr data-key=");
    assert_true(first && !strncmp(first, "<tr data-key=\"avg_jct_s\">", 25));
    assert_true(strstr(h, "<tr data-key=\"avg_wait_s\">") < strstr(h, "<tr data-key=\"policy\">"));
    /* runs in the order given: headline rows a, b, c */
    const char *ra = strstr(h, "<tr data-run=\"a\">"), *rb = strstr(h, "<tr data-run=\"b\">"),
               *rc3 = strstr(h, "<tr data-run=\"c\">");
    assert_true(ra && rb && rc3 && ra < rb && rb < rc3);
    /* over time: 4 figures, each with a line per run */
    assert_int_equal(count(h, "<figure class=\"timeline\""), 4);
    assert_int_equal(count(h, "class=\"ts\""), 12);
    assert_int_equal(count(h, "<g class=\"run\" data-run=\"b\">"), 4);
    free(h);
}

static void test_find_runs(void **state)
{
    (void)state;
    char top[128];
    snprintf(top, sizeof top, "%s/cmp", dir);
    mkdir(top, 0777);
    write_run("cmp/sjf");
    write_run("cmp/easy");
    put("cmp/not-a-run", "notes.txt", "x\n");
    struct eco_report_run *runs = NULL;
    size_t n = 0;
    struct eco_error err = {{0}};
    assert_int_equal(eco_report_find_runs(top, &runs, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(runs[0].label, "easy");
    assert_string_equal(runs[1].label, "sjf");
    eco_report_runs_free(runs, n);
    /* the --compare order written by sim: sjf first; a run it does not name comes last */
    write_run("cmp/las");
    const char *order[] = {"sjf", "gone", "easy"};
    assert_int_equal(eco_report_save_order(top, order, 3, &err), 0);
    assert_int_equal(eco_report_find_runs(top, &runs, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(runs[0].label, "sjf");
    assert_string_equal(runs[1].label, "easy");
    assert_string_equal(runs[2].label, "las");
    eco_report_runs_free(runs, n);
    char one[160];
    snprintf(one, sizeof one, "%s/sjf", top);
    assert_int_equal(eco_report_find_runs(one, &runs, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_null(runs[0].label); /* named by its policy later */
    eco_report_runs_free(runs, n);
    snprintf(one, sizeof one, "%s/not-a-run", top);
    assert_int_equal(eco_report_find_runs(one, &runs, &n, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no summary.json"));
}

/* Each bad file and the words its message must hold. */
static const struct {
    const char *file, *text, *msg;
} bad[] = {
    {"summary.json", "{\"policy\": \"x\",\n \"avg_jct_s\": }", "summary.json: line 2:"},
    {"summary.json", "[1, 2]", "summary.json: line 1: not a JSON object"},
    {"summary.json",
     "{\"policy\": \"x\", \"energy_j\": {}, \"avg_jct_s\": 1, \"cluster_gpus\": 1,"
     " \"cluster_nodes\": 1, \"window_start_s\": 0, \"window_end_s\": 1}",
     "field 'energy_j.total' is missing or not a number"},
    {"summary.json", "{\"policy\": \"x\", \"energy_j\": {\"total\": 1}}",
     "field 'avg_jct_s' is missing or not a number"},
    {"jobs.csv", "job_id,wait_s\n", "jobs.csv: line 1: no column 'jct_s'"},
    {"jobs.csv", "jct_s,wait_s\n1,2\n-4,1\n",
     "jobs.csv: line 3: field 'jct_s': '-4' is not a number"},
    {"jobs.csv", "jct_s,wait_s\n1,\n",
     "jobs.csv: line 2: field 'wait_s' is empty but 'jct_s' is not"},
    {"jobs.csv", "", "jobs.csv: line 1: empty file"},
    {"timeline.csv",
     "time_s,power_w,budget_w,busy_gpus,nodes_on,queued\n5,1,0,0,0,0\n4,1,0,0,0,0\n",
     "timeline.csv: line 3: field 'time_s': 4 is before the line above (5)"},
    {"timeline.csv", "time_s,power_w,budget_w,busy_gpus,nodes_on,queued\n5,1,0,0,0\n",
     "timeline.csv: line 2: field 'queued' is missing"},
    {"timeline.csv", "time_s,power_w,budget_w,busy_gpus,nodes_on,queued\n5,nan,0,0,0,0\n",
     "timeline.csv: line 2: field 'power_w': 'nan' is not a number"},
};

static void test_bad_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char sub[32], d[128];
        snprintf(sub, sizeof sub, "bad%zu", i);
        write_run(sub);
        put(sub, bad[i].file, bad[i].text);
        snprintf(d, sizeof d, "%s/%s", dir, sub);
        struct eco_report_run in = {d, NULL};
        struct eco_error err = {{0}};
        int rc;
        char *html = report_of(&in, 1, &rc, &err);
        if (rc != -EINVAL || !strstr(err.msg, bad[i].msg) || !strstr(err.msg, d))
            fail_msg("case %zu: rc %d, message '%s', want '%s'", i, rc, err.msg, bad[i].msg);
        assert_true(!html || !*html); /* nothing written */
        free(html);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_m4_bins),         cmocka_unit_test(test_write),
        cmocka_unit_test(test_units_and_order), cmocka_unit_test(test_find_runs),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
