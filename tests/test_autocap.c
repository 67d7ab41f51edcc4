/* SPDX-License-Identifier: MIT */
/* The pure parts the daemon's scheduling pass used to hold: matching an NVML model name to a
 * catalog type (eco_catalog_match) and the power_cap "auto" search (eco_power_auto_cap),
 * as tables of inputs and expected outputs, and the search against exhaustive evaluation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"

static void test_catalog_match(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        const char *type; /* NULL: no catalog type */
    } cases[] = {
        {"Tesla V100-PCIE-32GB", "V100"},
        {"Tesla V100-SXM2-16GB", "V100"},
        {"tesla v100", "V100"},
        {"Tesla P100-PCIE-16GB", "P100"},
        {"NVIDIA A40", "A40"},
        {"NVIDIA RTX A4000", NULL}, /* "A40" only as a whole word */
        {"Quadro RTX 6000", "RTX6000"},
        {"Quadro RTX6000", "RTX6000"},
        {"NVIDIA RTX 6000 Ada Generation", NULL},
        {"NVIDIA A100-SXM4-40GB", "A100-SXM"},
        {"NVIDIA A100-PCIE-40GB", "A100-PCIE"},
        {"NVIDIA A100 80GB PCIe", "A100-PCIE"},
        {"NVIDIA A100", NULL}, /* neither SXM nor PCIe: which one is unknown */
        {"NVIDIA H100 NVL", "H100-NVL"},
        {"NVIDIA H100 80GB HBM3", "H100-SXM"},
        {"NVIDIA H100-SXM5-80GB", "H100-SXM"},
        {"NVIDIA H100 PCIe", NULL},
        {"NVIDIA GeForce RTX 4090", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int want = cases[i].type ? eco_catalog_find(cases[i].type) : -1;
        if (cases[i].type)
            assert_true(want >= 0);
        int got = eco_catalog_match(cases[i].model);
        if (got != want)
            fail_msg("'%s': type %d, want %d (%s)", cases[i].model, got, want,
                     cases[i].type ? cases[i].type : "none");
    }
    assert_int_equal(eco_catalog_match(NULL), -1);
}

/* The limits the daemon chose before the search moved into the core (sched.c's auto_cap),
 * over the whole range of each type. */
static void test_auto_cap_table(void **state)
{
    (void)state;
    static const struct {
        const char *type;
        double min_w, max_w, slowdown, want_w;
    } cases[] = {
        {"V100", 0, 1e4, 0.00, 250},
        {"V100", 0, 1e4, 0.05, 195},
        {"V100", 0, 1e4, 0.10, 170},
        {"V100", 0, 1e4, 0.25, 135},
        {"V100", 0, 1e4, 1.00, 100},
        {"A100-SXM", 0, 1e4, 0.10, 235},
        {"H100-SXM", 0, 1e4, 0.10, 420},
        {"A40", 0, 1e4, 0.10, 200},
        {"A40", 0, 1e4, 1.00, 175},
        {"P100", 0, 1e4, 0.10, 135},
        /* the GPU's own range narrows the search, and the bound is relative to the GPU's
         * highest limit: V100 accepting 150..200 W (10% slower than at 200 W: from 150 W),
         * and 180..250 W (the least energy per work in reach: its lowest, 180 W) */
        {"V100", 150, 200, 0.10, 150},
        {"V100", 180, 250, 0.10, 180},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double cap = -1;
        int t = eco_catalog_find(cases[i].type);
        assert_true(t >= 0);
        assert_int_equal(
            eco_power_auto_cap(t, cases[i].min_w, cases[i].max_w, cases[i].slowdown, &cap), 0);
        if (fabs(cap - cases[i].want_w) > 1e-9)
            fail_msg("%s %g..%g W, slowdown %g: %g W, want %g W", cases[i].type, cases[i].min_w,
                     cases[i].max_w, cases[i].slowdown, cap, cases[i].want_w);
    }
}

/* Against exhaustive evaluation on a 1 W grid of every type: the chosen limit meets the
 * slowdown bound, and no limit on the 5 W grid that meets it uses less energy per work. */
static void test_auto_cap_optimal(void **state)
{
    (void)state;
    for (size_t t = 0; t < eco_catalog_count(); t++) {
        const struct eco_gpu_type *g = eco_catalog_get(t);
        double cap = -1, s_max = 0, s = 0, p = 0;
        assert_int_equal(eco_power_auto_cap((int)t, 0, 1e4, 0.10, &cap), 0);
        assert_true(cap >= g->min_limit_w - 1e-9 && cap <= g->max_limit_w + 1e-9);
        assert_int_equal(eco_power_eval((int)t, ECO_WORKLOAD_GENERIC, g->max_limit_w, &s_max, NULL),
                         0);
        assert_int_equal(eco_power_eval((int)t, ECO_WORKLOAD_GENERIC, cap, &s, &p), 0);
        assert_true(s_max / s - 1 <= 0.10 + 1e-9);
        double best = p / s;
        for (double w = g->min_limit_w; w <= g->max_limit_w + 1e-9;
             w += ECO_POWER_AUTO_CAP_STEP_W) {
            double sw = 0, pw = 0;
            assert_int_equal(eco_power_eval((int)t, ECO_WORKLOAD_GENERIC, w, &sw, &pw), 0);
            if (s_max / sw - 1 <= 0.10 + 1e-9 && pw / sw < best - 1e-12)
                fail_msg("%s: %g W uses less energy per work than the chosen %g W", g->name, w,
                         cap);
        }
    }
}

static void test_auto_cap_errors(void **state)
{
    (void)state;
    double cap = 123;
    int v100 = eco_catalog_find("V100");
    assert_int_equal(eco_power_auto_cap(-1, 0, 1e4, 0.1, &cap), -EINVAL);
    assert_int_equal(eco_power_auto_cap((int)eco_catalog_count(), 0, 1e4, 0.1, &cap), -EINVAL);
    /* a GPU whose range misses the model's (V100 model: 100..250 W) */
    assert_int_equal(eco_power_auto_cap(v100, 300, 400, 0.1, &cap), -ERANGE);
    assert_int_equal(eco_power_auto_cap(v100, 50, 80, 0.1, &cap), -ERANGE);
    assert_int_equal(eco_power_auto_cap(v100, NAN, NAN, 0.1, &cap), -ERANGE);
    assert_true(cap == 123); /* untouched on error */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_match),
        cmocka_unit_test(test_auto_cap_table),
        cmocka_unit_test(test_auto_cap_optimal),
        cmocka_unit_test(test_auto_cap_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
