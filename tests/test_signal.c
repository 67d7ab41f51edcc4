/* SPDX-License-Identifier: MIT */
/* Grid signals: the exact integrals on hand-computed cases (ecosched/signal.h), ISO 8601 UTC
 * times, and the signal file reader's errors, each naming file, line and column, with its
 * bounds on values (a table at and past each bound), on text (a gzip bomb) and on file types
 * (a FIFO is refused without waiting for a writer) (util/grid_signal.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "ecosched/signal.h"
#include "util/grid_signal.h"
#include "test_util.h"

/* 2022-01-01T00:00:00Z */
#define T2022 1640995200.0

static void test_constant_signal(void **state)
{
    (void)state;
    struct eco_signal s;
    double t[] = {T2022, T2022 + 3600, T2022 + 7200}, v[] = {400, 400};
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_CARBON, t, v, 2, NULL), 0);
    /* 1 kW for 1.5 h = 1.5 kWh at 400 g/kWh = 0.6 kg, whatever the piece boundaries. */
    assert_near(eco_signal_carbon_kg(&s, 1000, T2022 + 1800, T2022 + 7200), 0.6, 1e-12);
    /* Energy x intensity inside one piece: exact. */
    double w = 2377.25, a = T2022 + 10.5, b = T2022 + 3599.25;
    assert_true(eco_signal_carbon_kg(&s, w, a, b) == w * (b - a) * 400 / 3.6e6 / 1000);
    assert_true(eco_signal_integral(&s, a, a) == 0.0);
    assert_near(eco_signal_integral(&s, b, a), -400 * (b - a), 1e-6);
    eco_signal_free(&s);
}

static void test_step_signal(void **state)
{
    (void)state;
    struct eco_signal s;
    double t[] = {T2022, T2022 + 3600, T2022 + 7200}, v[] = {100, 300};
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_CARBON, t, v, 2, NULL), 0);
    /* 1 kW from 00:30 to 01:30: 0.5 kWh at 100 + 0.5 kWh at 300 = 200 g. */
    assert_near(eco_signal_carbon_kg(&s, 1000, T2022 + 1800, T2022 + 5400), 0.2, 1e-12);
    /* Exactly on the step: each side alone. */
    assert_near(eco_signal_carbon_kg(&s, 1000, T2022, T2022 + 3600), 0.1, 1e-12);
    assert_near(eco_signal_carbon_kg(&s, 1000, T2022 + 3600, T2022 + 7200), 0.3, 1e-12);
    assert_true(eco_signal_value(&s, T2022 + 3599.999) == 100);
    assert_true(eco_signal_value(&s, T2022 + 3600) == 300);
    assert_true(eco_signal_value(&s, T2022 + 7200) == 300); /* the end: the last piece */
    assert_true(eco_signal_covers(&s, T2022, T2022 + 7200));
    assert_false(eco_signal_covers(&s, T2022 - 1, T2022 + 10));
    assert_false(eco_signal_covers(&s, T2022, T2022 + 7201));
    eco_signal_free(&s);

    /* A price per MWh: 2 MW for 30 min at 50 then 30 min at -10 (negative prices happen). */
    double p[] = {50, -10};
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_PRICE, t, p, 2, NULL), 0);
    assert_near(eco_signal_cost(&s, 2e6, T2022 + 1800, T2022 + 5400), 50 - 10, 1e-9);
    eco_signal_free(&s);
}

static void test_build_errors(void **state)
{
    (void)state;
    struct eco_signal s;
    struct eco_error err;
    double t[] = {T2022, T2022, T2022 + 7200}, v[] = {1, 2};
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_CARBON, t, v, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "time 1"));
    double t2[] = {T2022, T2022 + 1, T2022 + 2}, v2[] = {1, NAN};
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_CARBON, t2, v2, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "value 1"));
    assert_int_equal(eco_signal_build(&s, ECO_SIGNAL_CARBON, t2, v2, 0, &err), -EINVAL);
}

static void test_parse_utc(void **state)
{
    (void)state;
    double t;
    char buf[32];
    struct eco_error err;
    assert_int_equal(eco_parse_utc("2022-01-01T00:00:00Z", &t, &err), 0);
    assert_true(t == T2022);
    assert_int_equal(eco_parse_utc("2022-01-01", &t, &err), 0);
    assert_true(t == T2022);
    assert_int_equal(eco_parse_utc("1970-01-01T00:00Z", &t, &err), 0);
    assert_true(t == 0);
    assert_int_equal(eco_parse_utc("2024-02-29T12:34:56.5+00:00", &t, &err), 0);
    assert_true(t == 1709210096.5);
    eco_format_utc(t, buf, sizeof buf);
    assert_string_equal(buf, "2024-02-29T12:34:56Z");
    eco_format_utc(T2022 - 1, buf, sizeof buf);
    assert_string_equal(buf, "2021-12-31T23:59:59Z");
    assert_int_equal(eco_parse_utc("2023-02-29T00:00:00Z", &t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no such date"));
    assert_int_equal(eco_parse_utc("2022-01-01T00:00:00+01:00", &t, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "UTC"));
    assert_int_equal(eco_parse_utc("2022-01-01T24:00:00Z", &t, &err), -EINVAL);
    assert_int_equal(eco_parse_utc("22-01-01", &t, &err), -EINVAL);
    assert_int_equal(eco_parse_utc("", &t, &err), -EINVAL);
}

/* Writes text to a temporary file; returns its path (static storage, one at a time). */
static const char *file_with(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ecosched-signal-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Reads text as a signal of kind; returns rc, the message in err. */
static int read_text(const char *text, enum eco_signal_kind kind, const char *column,
                     struct eco_signal *s, struct eco_error *err)
{
    const char *p = file_with(text);
    int rc = eco_grid_signal_read(p, kind, column, s, err);
    unlink(p);
    return rc;
}

static void test_read(void **state)
{
    (void)state;
    struct eco_signal s;
    struct eco_error err;
    assert_int_equal(read_text("time_utc,carbon_lca_gco2eq_per_kwh,quality\n"
                               "2022-01-01T00:00:00Z,100,ok\n"
                               "2022-01-01T01:00:00Z,,missing_input\n"
                               "2022-01-01T02:00:00Z,300,ok\n",
                               ECO_SIGNAL_CARBON, NULL, &s, &err),
                     0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.gaps, 1);
    assert_string_equal(s.column, "carbon_lca_gco2eq_per_kwh");
    assert_true(eco_signal_start(&s) == T2022);
    assert_true(eco_signal_end(&s) == T2022 + 3 * 3600);    /* the last row lasts one step */
    assert_true(eco_signal_value(&s, T2022 + 3600) == 100); /* the gap holds the value before */
    eco_signal_free(&s);

    /* A price per kWh in the second price column named, scaled to per MWh. */
    assert_int_equal(read_text("time_utc,price_eur_per_mwh,price_dkk_per_kwh\n"
                               "2022-01-01T00:00:00Z,50,0.4\n"
                               "2022-01-01T01:00:00Z,60,0.5\n",
                               ECO_SIGNAL_PRICE, "price_dkk_per_kwh", &s, &err),
                     0);
    assert_string_equal(s.currency, "DKK");
    assert_near(eco_signal_value(&s, T2022), 400, 1e-9);
    eco_signal_free(&s);
    assert_int_equal(read_text("time_utc,price_aud_per_mwh\n"
                               "2022-01-01T00:00:00Z,-5\n"
                               "2022-01-01T01:00:00Z,60\n",
                               ECO_SIGNAL_PRICE, NULL, &s, &err),
                     0);
    assert_string_equal(s.currency, "AUD");
    assert_true(eco_signal_value(&s, T2022) == -5);
    eco_signal_free(&s);
}

/* A bad file's message names the file and contains want. */
static void bad(const char *text, enum eco_signal_kind kind, const char *want)
{
    struct eco_signal s;
    struct eco_error err;
    const char *p = file_with(text);
    assert_int_equal(eco_grid_signal_read(p, kind, NULL, &s, &err), -EINVAL);
    if (!strstr(err.msg, want) || !strstr(err.msg, p))
        fail_msg("message '%s' lacks '%s' or the path", err.msg, want);
    unlink(p);
}

static void test_read_errors(void **state)
{
    (void)state;
    bad("", ECO_SIGNAL_CARBON, "empty file");
    bad("time,carbon_gco2eq_per_kwh\n", ECO_SIGNAL_CARBON, ":1: column 1: expected 'time_utc'");
    bad("time_utc,price_eur_per_mwh\n", ECO_SIGNAL_CARBON, ":1: no carbon column");
    bad("time_utc,carbon_gco2eq_per_kwh\n", ECO_SIGNAL_PRICE, ":1: no price column");
    bad("time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,1\n2022-01-01T00:00:00Z,2\n",
        ECO_SIGNAL_CARBON, ":3: column 1 (time_utc): 2022-01-01T00:00:00Z is not after");
    bad("time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,1\n2022-13-01T00:00:00Z,2\n",
        ECO_SIGNAL_CARBON, ":3: column 1 (time_utc): '2022-13-01T00:00:00Z': no such date");
    bad("time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,abc\n", ECO_SIGNAL_CARBON,
        ":2: column 2 (carbon_gco2eq_per_kwh): 'abc' is not a number");
    bad("time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,-1\n", ECO_SIGNAL_CARBON,
        ":2: column 2 (carbon_gco2eq_per_kwh): -1: carbon intensity cannot be negative");
    bad("time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,\n", ECO_SIGNAL_CARBON,
        ":2: column 2 (carbon_gco2eq_per_kwh): the first value is missing");
    bad("time_utc,x,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,1\n", ECO_SIGNAL_CARBON,
        ":2: 2 fields");
    bad("time_utc,carbon_gco2eq_per_kwh\n2022-01-01T00:00:00Z,1\n", ECO_SIGNAL_CARBON,
        "1 data row: a signal needs at least two");
    struct eco_signal s;
    struct eco_error err;
    assert_int_equal(
        eco_grid_signal_read("/nonexistent/sig.csv", ECO_SIGNAL_CARBON, NULL, &s, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/nonexistent/sig.csv"));
    const char *p = file_with("time_utc,carbon_gco2eq_per_kwh\n");
    assert_int_equal(eco_grid_signal_read(p, ECO_SIGNAL_CARBON, "nope", &s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no column named 'nope'"));
    unlink(p);
}

/* Each value at its bound is read, one past it refused with file, line, column and the range
 * in the column's unit; so are values that overflow once scaled (1e306 per kWh). */
static void test_read_bounds(void **state)
{
    (void)state;
    static const struct {
        const char *col, *value;
        const char *want; /* a part of the refusal; NULL: read */
    } rows[] = {
        {"carbon_gco2eq_per_kwh", "0", NULL},
        {"carbon_gco2eq_per_kwh", "5000", NULL},
        {"carbon_gco2eq_per_kwh", "5000.5",
         ":3: column 2 (carbon_gco2eq_per_kwh): 5000.5 is "
         "outside 0..5000"},
        {"carbon_gco2eq_per_kwh", "1e308", "1e+308 is outside 0..5000"},
        {"price_usd_per_mwh", "1e7", NULL},
        {"price_usd_per_mwh", "-1e7", NULL},
        {"price_usd_per_mwh", "-601.7", NULL},
        {"price_usd_per_mwh", "1.0001e7", "1.0001e+07 is outside -1e+07..1e+07"},
        {"price_usd_per_mwh", "1e300", "1e+300 is outside -1e+07..1e+07"},
        {"price_usd_per_mwh", "-1e300", "-1e+300 is outside -1e+07..1e+07"},
        {"price_usd_per_kwh", "10000", NULL},
        {"price_usd_per_kwh", "-10000", NULL},
        {"price_usd_per_kwh", "10001", "(price_usd_per_kwh): 10001 is outside -10000..10000"},
        {"price_usd_per_kwh", "1e306", ":3: column 2 (price_usd_per_kwh): 1e+306 is outside"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "time_utc,%s\n2022-01-01T00:00:00Z,1\n2022-01-01T01:00:00Z,%s\n", rows[i].col,
                 rows[i].value);
        enum eco_signal_kind kind = rows[i].col[0] == 'c' ? ECO_SIGNAL_CARBON : ECO_SIGNAL_PRICE;
        struct eco_signal s;
        struct eco_error err = {{0}};
        const char *p = file_with(text);
        int rc = eco_grid_signal_read(p, kind, NULL, &s, &err);
        if (!rows[i].want) {
            if (rc != 0)
                fail_msg("%s = %s refused: %s", rows[i].col, rows[i].value, err.msg);
            assert_true(isfinite(s.cum[s.n]));
            eco_signal_free(&s);
        } else if (rc != -EINVAL || !strstr(err.msg, rows[i].want) || !strstr(err.msg, p)) {
            fail_msg("%s = %s: rc %d, '%s' lacks '%s' or the path", rows[i].col, rows[i].value, rc,
                     err.msg, rows[i].want);
        }
        unlink(p);
    }
}

/* A FIFO is refused at once (before, open() waited for a writer for ever); a gzip bomb stops
 * at 64 MiB of text, naming the file and the limit; 63 MiB of blank lines are still read. */
static void test_read_limits(void **state)
{
    (void)state;
    char dir[] = "/tmp/ecosched-signal-XXXXXX", path[128];
    struct eco_signal s;
    struct eco_error err = {{0}};
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(eco_grid_signal_read(path, ECO_SIGNAL_CARBON, NULL, &s, &err), -EIO);
    assert_non_null(strstr(err.msg, "a FIFO, not a regular file"));
    assert_non_null(strstr(err.msg, path));
    unlink(path);
    /* 65 MiB of blank lines (the gzip bomb) and 63 MiB of hourly rows padded to 64,000 bytes
     * by an ignored column (within the limit; rows, as a sanitizer build reads 66 million
     * blank lines slowly) */
    static const struct {
        unsigned mib;
        bool blank;
        int rc;
    } sizes[] = {{65, true, -EFBIG}, {63, false, 0}};
    static char fill[64000];
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        snprintf(path, sizeof path, "%s/bomb.csv.gz", dir);
        gzFile gz = gzopen(path, "wb1");
        assert_non_null(gz);
        size_t rows = 0, total = (size_t)sizes[k].mib << 20;
        assert_true(gzputs(gz, "time_utc,carbon_gco2eq_per_kwh,pad\n") > 0);
        if (sizes[k].blank) {
            memset(fill, '\n', sizeof fill);
            assert_true(gzputs(gz, "2022-01-01T00:00:00Z,1,\n") > 0);
            for (size_t w = 0; w < total; w += sizeof fill)
                assert_int_equal(gzwrite(gz, fill, sizeof fill), (int)sizeof fill);
            assert_true(gzputs(gz, "2022-01-01T01:00:00Z,2,\n") > 0);
        } else {
            memset(fill, 'x', sizeof fill);
            for (size_t w = 0; w + sizeof fill <= total; w += sizeof fill, rows++) {
                char t[32];
                eco_format_utc(T2022 + 3600.0 * (double)rows, t, sizeof t);
                int n = gzprintf(gz, "%s,1,", t);
                assert_true(n > 0);
                assert_int_equal(gzwrite(gz, fill, (unsigned)(sizeof fill - (size_t)n - 1)),
                                 (int)(sizeof fill - (size_t)n - 1));
                assert_true(gzputc(gz, '\n') == '\n');
            }
        }
        assert_int_equal(gzclose(gz), Z_OK);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_size < 1024 * 1024); /* far smaller than it inflates */
        int rc = eco_grid_signal_read(path, ECO_SIGNAL_CARBON, NULL, &s, &err);
        if (rc != sizes[k].rc)
            fail_msg("%u MiB: rc %d (%s)", sizes[k].mib, rc, err.msg);
        if (rc == 0) {
            assert_int_equal(s.n, rows);
            eco_signal_free(&s);
        } else {
            assert_non_null(strstr(err.msg, path));
            assert_non_null(strstr(err.msg, "more than 64 MiB of text (after decompression): "
                                            "the limit for a grid-signal file"));
        }
        unlink(path);
    }
    rmdir(dir);
}

/* Every bundled series reads whole (when the repository's data/ is there), with the unit its
 * column names. */
static void test_bundled(void **state)
{
    (void)state;
    static const struct {
        const char *file, *currency;
        enum eco_signal_kind kind;
        size_t min_pieces;
    } files[] = {
        {"us_eia930_2022/eia930_AZPS_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_BPAT_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_CISO_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_ERCO_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_MISO_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_NYIS_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_PJM_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"us_eia930_2022/eia930_SOCO_2022_carbon.csv.gz", "", ECO_SIGNAL_CARBON, 8760},
        {"aemo_nem_2020_2024/aemo_NSW1_2020_2024_hourly.csv.gz", "AUD", ECO_SIGNAL_PRICE, 43800},
        {"aemo_nem_2020_2024/aemo_VIC1_2020_2024_hourly.csv.gz", "AUD", ECO_SIGNAL_PRICE, 43800},
        {"energinet_elspot_dk_se/elspot_DK1_20201231_20240331_hourly.csv.gz", "EUR",
         ECO_SIGNAL_PRICE, 28000},
    };
    const char *src = getenv("ECO_SOURCE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/data/grid_signals/%s", src ? src : ".", files[0].file);
    if (access(path, R_OK) != 0)
        skip();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        struct eco_signal s;
        struct eco_error err;
        snprintf(path, sizeof path, "%s/data/grid_signals/%s", src ? src : ".", files[i].file);
        if (eco_grid_signal_read(path, files[i].kind, NULL, &s, &err) != 0)
            fail_msg("%s", err.msg);
        assert_true(s.n >= files[i].min_pieces);
        assert_string_equal(s.currency, files[i].currency);
        double t;
        assert_int_equal(
            eco_parse_utc(files[i].kind == ECO_SIGNAL_CARBON ? "2022-07-01" : "2023-01-01", &t,
                          NULL),
            0);
        assert_true(eco_signal_covers(&s, t, t + 86400));
        double v = eco_signal_value(&s, t);
        assert_true(v > -1000 && v < 20000);
        eco_signal_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_signal),
        cmocka_unit_test(test_step_signal),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_parse_utc),
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_read_bounds),
        cmocka_unit_test(test_read_limits),
        cmocka_unit_test(test_bundled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
