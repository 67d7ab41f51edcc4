/* SPDX-License-Identifier: MIT */
/* GPU co-location model (src/core/coloc.c): every measured row of the shipped CSVs
 * (data/gpu_colocation) read back through the lookup, the workloads alone, the fallback rule
 * on pairs not measured, and bad lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "ecosched/coloc.h"
#include "ecosched/csv.h"
#include "test_util.h"

#define DATA ECO_SOURCE_DIR "/data/gpu_colocation/"

static double num(const char *s)
{
    double v = 0;
    assert_int_equal(eco_parse_double(s, &v), 0);
    return v;
}

static int lucid(char **f, int off)
{
    char name[160];
    snprintf(name, sizeof name, "%s %s bs%d%s", f[off], f[off + 1], atoi(f[off + 3]),
             atoi(f[off + 4]) == 1 ? " amp" : "");
    int i = eco_coloc_find(name, "unstated");
    if (i < 0)
        fail_msg("Lucid workload %s not found", name);
    return i;
}

/* Isolated Gavel throughputs (1 GPU, consolidated) and Lucid's single-job rows. */
static void test_workloads_alone(void **state)
{
    (void)state;
    char line[512], *f[16];
    int n = 0;
    FILE *fp = fopen(DATA "gavel_isolated_throughput.csv", "r");
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp));
    while (fgets(line, sizeof line, fp)) {
        assert_int_equal(eco_csv_split(line, f, 16), 5);
        if (strcmp(f[1], "1") != 0 || strcmp(f[3], "1") != 0)
            continue;
        int i = eco_coloc_find(f[2], f[0]);
        assert_true(i >= 0);
        const struct eco_coloc_workload *w = eco_coloc_workload((size_t)i);
        assert_string_equal(w->gpu_type, f[0]);
        assert_int_equal(w->source, ECO_COLOC_GAVEL);
        assert_near(w->alone_speed, num(f[4]), 1e-12);
        assert_true(w->gpu_util < 0.0);
        n++;
    }
    fclose(fp);
    assert_int_equal(n, 78);

    fp = fopen(DATA "lucid_single_data.csv", "r");
    assert_non_null(fp);
    assert_non_null(fgets(line, sizeof line, fp));
    n = 0;
    while (fgets(line, sizeof line, fp)) {
        assert_int_equal(eco_csv_split(line, f, 16), 9);
        char name[160];
        snprintf(name, sizeof name, "%s %s bs%d%s", f[0], f[1], atoi(f[2]),
                 atoi(f[3]) == 1 ? " amp" : "");
        int i = eco_coloc_find(name, NULL);
        assert_true(i >= 0);
        const struct eco_coloc_workload *w = eco_coloc_workload((size_t)i);
        assert_int_equal(w->source, ECO_COLOC_LUCID);
        assert_near(w->alone_speed, num(f[4]), 1e-9);
        assert_near(w->gpu_util, num(f[5]) / 100.0, 1e-12);
        assert_near(w->gmem_mb, num(f[7]), 1e-9);
        assert_int_equal(w->label, atoi(f[8]));
        n++;
    }
    fclose(fp);
    assert_int_equal(n, 66);
    assert_int_equal(eco_coloc_n_workloads(), 78 + 66);
}

/* Every 1-GPU Gavel pair: co-located steps/s = factor x isolated steps/s, both orders. */
static void test_gavel_pairs(void **state)
{
    (void)state;
    gzFile gz = gzopen(DATA "gavel_colocated_pairs.csv.gz", "rb");
    assert_non_null(gz);
    char line[512], *f[16];
    assert_non_null(gzgets(gz, line, sizeof line));
    int n = 0, infeasible = 0;
    while (gzgets(gz, line, sizeof line)) {
        assert_int_equal(eco_csv_split(line, f, 16), 9);
        if (strcmp(f[1], "1") != 0 || strcmp(f[4], "1") != 0)
            continue;
        int a = eco_coloc_find(f[2], f[0]), b = eco_coloc_find(f[3], f[0]);
        assert_true(a >= 0 && b >= 0);
        struct eco_coloc_pair p;
        assert_int_equal(eco_coloc_pair((size_t)a, (size_t)b, &p), 0);
        assert_int_equal(p.kind, ECO_COLOC_MEASURED);
        double sa = num(f[5]), sb = num(f[6]);
        const struct eco_coloc_workload *wa = eco_coloc_workload((size_t)a);
        const struct eco_coloc_workload *wb = eco_coloc_workload((size_t)b);
        assert_near(p.speed_a * wa->alone_speed, sa, 1e-9 * (1 + sa));
        assert_near(p.speed_b * wb->alone_speed, sb, 1e-9 * (1 + sb));
        /* The CSV's 4-decimal normalised columns agree too. */
        assert_near(p.speed_a, num(f[7]), 6e-5);
        assert_near(p.speed_b, num(f[8]), 6e-5);
        assert_int_equal(p.feasible, sa > 0.0 || sb > 0.0);
        infeasible += !p.feasible;
        n++;
    }
    gzclose(gz);
    assert_int_equal(n, 2028);
    /* 87 + 20 + 40 infeasible (README statistics). */
    assert_int_equal(infeasible, 147);
}

/* Every Lucid pair, in its own order and swapped. */
static void test_lucid_pairs(void **state)
{
    (void)state;
    FILE *fp = fopen(DATA "lucid_colocate_info.csv", "r");
    assert_non_null(fp);
    char line[512], *f[20];
    assert_non_null(fgets(line, sizeof line, fp));
    int n = 0;
    while (fgets(line, sizeof line, fp)) {
        assert_int_equal(eco_csv_split(line, f, 20), 16);
        int a = lucid(f, 1), b = lucid(f, 7);
        struct eco_coloc_pair p, q;
        assert_int_equal(eco_coloc_pair((size_t)a, (size_t)b, &p), 0);
        assert_int_equal(eco_coloc_pair((size_t)b, (size_t)a, &q), 0);
        assert_int_equal(p.kind, ECO_COLOC_MEASURED);
        assert_true(p.feasible);
        assert_near(p.speed_a, num(f[6]), 1e-12);
        assert_near(p.speed_b, num(f[12]), 1e-12);
        if (a != b) { /* two copies of one workload: one row, first job first */
            assert_near(q.speed_a, num(f[12]), 1e-12);
            assert_near(q.speed_b, num(f[6]), 1e-12);
        }
        assert_near(p.gpu_util, num(f[13]) / 100.0, 1e-12);
        assert_near(p.gmem_mb, num(f[15]), 1e-9);
        n++;
    }
    fclose(fp);
    assert_int_equal(n, 1388);
    assert_int_equal(eco_coloc_n_measured(), 2028 + 1388);
}

/* Pairs not measured: the utilisation rule, hand-computed. */
static void test_fallback(void **state)
{
    (void)state;
    /* BERT is in Lucid's single-job data but in no measured pair. */
    int bert = eco_coloc_find("BERT SQuAD bs32", NULL);
    int dcgan = eco_coloc_find("DCGAN LSUN bs32 amp", NULL);
    assert_true(bert >= 0 && dcgan >= 0);
    const struct eco_coloc_workload *wb = eco_coloc_workload((size_t)bert);
    const struct eco_coloc_workload *wd = eco_coloc_workload((size_t)dcgan);
    assert_near(wb->gpu_util, 0.99689, 1e-12);
    assert_near(wd->gpu_util, 0.349, 1e-12);
    struct eco_coloc_pair p;
    assert_int_equal(eco_coloc_pair((size_t)bert, (size_t)dcgan, &p), 0);
    assert_int_equal(p.kind, ECO_COLOC_FALLBACK);
    double want = 1.0 / sqrt(0.99689 + 0.349);
    assert_near(p.speed_a, want, 1e-12);
    assert_near(p.speed_b, want, 1e-12);
    assert_near(p.gpu_util, 1.0, 0);
    assert_near(p.gmem_mb, 20162.0 + 2730.0, 1e-9);

    /* Under a full GPU together: no slowdown. */
    double sa, sb;
    assert_int_equal(eco_coloc_estimate(0.3, 0.5, &sa, &sb), ECO_COLOC_FALLBACK);
    assert_near(sa, 1.0, 0);
    assert_near(sb, 1.0, 0);
    assert_int_equal(eco_coloc_estimate(1.0, 1.0, &sa, &sb), ECO_COLOC_FALLBACK);
    assert_near(sa, 1.0 / sqrt(2.0), 1e-12);
    /* Unknown utilisation: time-slicing. */
    assert_int_equal(eco_coloc_estimate(-1.0, 0.3, &sa, &sb), ECO_COLOC_TIMESLICED);
    assert_near(sa, 0.5, 0);
    assert_near(sb, 0.5, 0);

    /* A Gavel V100 workload with a Lucid one: time-slicing, memory unknown. */
    int r50 = eco_coloc_find("ResNet-50 (batch size 64)", "V100");
    assert_true(r50 >= 0);
    assert_int_equal(eco_coloc_pair((size_t)r50, (size_t)dcgan, &p), 0);
    assert_int_equal(p.kind, ECO_COLOC_TIMESLICED);
    assert_near(p.speed_a, 0.5, 0);
    assert_near(p.gpu_util, -1.0, 0);
    assert_near(p.gmem_mb, 0.0, 0);
}

static void test_bad_lookups(void **state)
{
    (void)state;
    struct eco_coloc_pair p;
    int k80 = eco_coloc_find("A3C", "k80"), v100 = eco_coloc_find("A3C", "v100");
    assert_true(k80 >= 0 && v100 >= 0 && k80 != v100);
    assert_int_equal(eco_coloc_pair((size_t)k80, (size_t)v100, &p), -EINVAL);
    assert_int_equal(eco_coloc_pair(0, eco_coloc_n_workloads(), &p), -EINVAL);
    assert_int_equal(eco_coloc_pair(0, 0, NULL), -EINVAL);
    assert_int_equal(eco_coloc_find("no such model", NULL), -ENOENT);
    assert_int_equal(eco_coloc_find("A3C", "a100"), -ENOENT);
    assert_int_equal(eco_coloc_find(NULL, NULL), -EINVAL);
    assert_null(eco_coloc_workload(eco_coloc_n_workloads()));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workloads_alone), cmocka_unit_test(test_gavel_pairs),
        cmocka_unit_test(test_lucid_pairs),     cmocka_unit_test(test_fallback),
        cmocka_unit_test(test_bad_lookups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
