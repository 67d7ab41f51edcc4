/* SPDX-License-Identifier: MIT */
/* Error reports: eco_errorf sets the message and returns the code in one call, and the loaders
 * return the code their header names with a message that names file, line and field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/cluster.h"
#include "ecosched/csv.h"
#include "ecosched/error.h"
#include "ecosched/report.h"
#include "ecosched/sim.h"

#define DATA ECO_SOURCE_DIR "/tests/data/"

static void test_errorf_returns_code(void **state)
{
    (void)state;
    static const int codes[] = {-EINVAL, -ENOENT, -ENOMEM, -EIO, -EOVERFLOW};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        struct eco_error err = {{0}};
        assert_int_equal(eco_errorf(&err, codes[i], "%s:%d: column '%s'", "f.csv", 3, "gpus"),
                         codes[i]);
        assert_string_equal(err.msg, "f.csv:3: column 'gpus'");
        assert_int_equal(eco_errorf(NULL, codes[i], "no report wanted"), codes[i]);
    }
}

static void test_errorf_truncates(void **state)
{
    (void)state;
    char big[2 * ECO_ERROR_MSG_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    struct eco_error err;
    assert_int_equal(eco_errorf(&err, -EINVAL, "%s", big), -EINVAL);
    assert_int_equal(strlen(err.msg), ECO_ERROR_MSG_MAX - 1);
}

/* Each loader, fed one bad input: the code its header promises and the words of its message.
 * These were the call sites that set the message and then returned or patched another code. */
static void test_loader_codes(void **state)
{
    (void)state;
    struct eco_error err = {{0}};
    struct eco_csv_file *f = NULL;
    assert_int_equal(eco_csv_open(DATA "no-such-file.csv", 1024, &f, &err), -ENOENT);
    assert_null(f);
    assert_non_null(strstr(err.msg, "no-such-file.csv: cannot open: "));
    assert_int_equal(eco_csv_open(DATA "trace", 1024, &f, &err), -EIO);
    assert_null(f);
    assert_non_null(strstr(err.msg, "(expected a CSV file)"));

    struct eco_cluster *c = NULL;
    assert_int_equal(eco_cluster_parse_spec("0x8", &c, &err), -EINVAL);
    assert_null(c);
    assert_non_null(strstr(err.msg, "node count '0'"));
    assert_int_equal(eco_cluster_load(DATA "cluster/bad_count.json", &c, &err), -EINVAL);
    assert_null(c);
    assert_non_null(strstr(err.msg, "nodes[0].count"));

    struct eco_budget_step *steps = NULL;
    size_t n = 0;
    assert_int_equal(eco_budget_load(DATA "budget/bad_watts.csv", &steps, &n, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "bad_watts.csv:3: column 'watts'"));
    free(steps);

    struct eco_report_run *runs = NULL;
    assert_int_equal(eco_report_find_runs(DATA "no-such-dir", &runs, &n, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "no-such-dir: "));
    eco_report_runs_free(runs, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errorf_returns_code),
        cmocka_unit_test(test_errorf_truncates),
        cmocka_unit_test(test_loader_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
