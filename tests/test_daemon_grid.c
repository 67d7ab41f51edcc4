/* SPDX-License-Identifier: MIT */
/* ecoschedd's grid signals (src/daemon/grid.c) alone: which *_url values are refused (table),
 * carbon and cost of an accounting piece on hand-computed cases (a constant signal gives energy
 * x intensity; a step inside the piece splits at the step; outside the cover: partial, only
 * the covered part counted), the forecast's name, a release time from a carbon policy, and the
 * reader thread: a rewritten file reaches the loop through ecod__grid_fd and ecod__grid_refresh,
 * and a file replaced by a FIFO never blocks the caller (the old series is kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "daemon/grid.h"
#include "util/clock.h"

static void test_url_table(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        const char *why; /* a word of the refusal; NULL: accepted */
    } rows[] = {
        {"http://127.0.0.1:8080/carbon.csv", NULL},
        {"http://127.3.4.5:1/x", NULL},
        {"http://localhost:9000/a/b.csv", NULL},
        {"http://[::1]:9000/c.csv", NULL},
        {"http://localhost/c.csv", NULL},
        {"https://127.0.0.1:8443/c.csv", "http://"},
        {"http://192.0.2.1:80/c.csv", "loopback"},
        {"http://api.electricitymaps.com/v3", "loopback"},
        {"http://128.0.0.1:80/c", "loopback"},
        {"http://127.0.0.1:0/c", "port"},
        {"http://127.0.0.1:99999/c", "port"},
        {"http://127.0.0.1:80", "path"},
        {"ftp://127.0.0.1/c", "http://"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *why = ecod__grid_check_url(rows[i].url);
        if (!rows[i].why) {
            if (why)
                fail_msg("%s refused: %s", rows[i].url, why);
        } else {
            assert_non_null(why);
            if (!strstr(why, rows[i].why))
                fail_msg("%s: '%s' lacks '%s'", rows[i].url, why, rows[i].why);
        }
    }
}

/* A grid with a carbon series of pieces [t[i], t[i+1]) = v[i] and a price series at 100/MWh. */
static void setup(struct ecod_grid *g, const double *t, const double *v, size_t n)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(eco_signal_build(&g->carbon.s, ECO_SIGNAL_CARBON, t, v, n, NULL), 0);
    g->carbon.loaded = true;
    double pt[2] = {t[0], t[n]}, pv[1] = {100};
    assert_int_equal(eco_signal_build(&g->price.s, ECO_SIGNAL_PRICE, pt, pv, 1, NULL), 0);
    snprintf(g->price.s.currency, sizeof g->price.s.currency, "AUD");
    g->price.loaded = true;
}

static void test_account_hand(void **state)
{
    (void)state;
    struct ecod_grid g;
    const double h = 3600, t0 = 1699999200; /* an hour boundary */
    double t[3] = {t0, t0 + h, t0 + 2 * h}, v[2] = {400, 100};
    setup(&g, t, v, 2);
    /* 3.6e6 J (1 kWh) inside the first hour: 0.4 kg; cost 1e-3 MWh x 100 = 0.1 */
    struct ecod_grid_acc a = {0};
    ecod__grid_account(&g, 3.6e6, t0 + 10, t0 + 70, &a);
    assert_true(a.has_carbon && a.has_cost && !a.carbon_partial && !a.cost_partial);
    assert_true(fabs(a.carbon_kg - 0.4) < 1e-12);
    assert_true(fabs(a.cost - 0.1) < 1e-12);
    /* 1 kWh spread evenly over [t0 + h - 900, t0 + h + 2700]: a quarter at 400, three
     * quarters at 100: 0.25 x 0.4 + 0.75 x 0.1 = 0.175 kg */
    struct ecod_grid_acc b = {0};
    ecod__grid_account(&g, 3.6e6, t0 + h - 900, t0 + h + 2700, &b);
    assert_true(fabs(b.carbon_kg - 0.175) < 1e-12);
    assert_false(b.carbon_partial);
    /* half the piece after the cover: only the covered half counts (0.5 kWh x 100 g), partial */
    struct ecod_grid_acc c = {0};
    ecod__grid_account(&g, 3.6e6, t0 + 2 * h - 600, t0 + 2 * h + 600, &c);
    assert_true(c.carbon_partial && c.cost_partial);
    assert_true(fabs(c.carbon_kg - 0.05) < 1e-12);
    /* wholly outside: nothing invented */
    struct ecod_grid_acc d = {0};
    ecod__grid_account(&g, 3.6e6, t0 - 100, t0 - 40, &d);
    assert_true(d.carbon_partial && d.carbon_kg == 0 && d.cost == 0);
    assert_string_equal(ecod__grid_currency(&g), "AUD");
    ecod__grid_fini(&g);
}

static void test_forecast_and_release(void **state)
{
    (void)state;
    struct ecod_grid g;
    const double h = 3600, t0 = 1699999200; /* an hour boundary */
    double t[7], v[6] = {500, 500, 500, 50, 500, 500};
    for (int i = 0; i < 7; i++)
        t[i] = t0 + i * h;
    setup(&g, t, v, 6);
    assert_string_equal(ecod__grid_forecast_name(&g, t0 + 10), "operator");
    assert_string_equal(ecod__grid_forecast_name(&g, t0 + 5.5 * h), "persist");
    /* no policy: released at submission */
    assert_true(ecod__grid_release(&g, t0 + 10, t0 + 10, t0 + 10 + 5 * h, 1, 8) == t0 + 10);
    const char *params = NULL;
    g.policy = eco_carbon_find("lwa", &params);
    assert_non_null(g.policy);
    g.pol = g.policy->create(NULL, params, NULL);
    g.run_s = h;
    /* lwa: the lowest-forecast hour before the slack ends, the low hour at t0 + 3h */
    assert_true(ecod__grid_release(&g, t0 + 10, t0 + 10, t0 + 10 + 5 * h, 1, 8) == t0 + 3 * h);
    /* slack too short to reach it: within the slack */
    double r = ecod__grid_release(&g, t0 + 10, t0 + 10, t0 + 10 + h, 1, 8);
    assert_true(r >= t0 + 10 && r <= t0 + 10 + h);
    ecod__grid_fini(&g);
}

/* Writes a two-row hourly carbon file of value v around now, replacing path (rename). */
static void write_signal(const char *path, double v)
{
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f,
            "time_utc,carbon_gco2eq_per_kwh\n2020-01-01T00:00:00Z,%g\n"
            "2030-01-01T00:00:00Z,%g\n",
            v, v);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0);
}

/* Waits (at most 20 s: a hang guard) for the reader's wake-up, then takes what it read. */
static void wait_refresh(struct ecod_grid *g)
{
    struct pollfd pf = {.fd = ecod__grid_fd(g), .events = POLLIN};
    assert_true(pf.fd >= 0);
    assert_int_equal(poll(&pf, 1, 20000), 1);
    ecod__grid_refresh(g, eco_mono_s());
}

static void test_reader(void **state)
{
    (void)state;
    char dir[] = "/tmp/ecosched-grid-XXXXXX", path[128];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/carbon.csv", dir);
    write_signal(path, 400);
    struct ecod_grid g;
    struct eco_error err = {{0}};
    assert_int_equal(
        ecod__grid_setup(&g, path, NULL, NULL, NULL, "none", 3600, 300, dir, eco_mono_s(), &err),
        0);
    assert_true(g.carbon.loaded);
    assert_true(eco_signal_value(&g.carbon.s, 1.7e9) == 400);
    unsigned gen = g.generation;
    /* a rewrite: read by the thread, taken by the loop's refresh */
    write_signal(path, 250);
    wait_refresh(&g);
    assert_true(eco_signal_value(&g.carbon.s, 1.7e9) == 250);
    assert_true(g.generation == gen + 1);
    /* a FIFO in its place: the reader refuses it, the refresh returns, the series stays */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    wait_refresh(&g);
    assert_true(g.carbon.loaded && eco_signal_value(&g.carbon.s, 1.7e9) == 250);
    assert_true(g.generation == gen + 1);
    /* and a refresh with nothing read returns at once */
    ecod__grid_refresh(&g, eco_mono_s());
    ecod__grid_fini(&g);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_table),
        cmocka_unit_test(test_account_hand),
        cmocka_unit_test(test_forecast_and_release),
        cmocka_unit_test(test_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
