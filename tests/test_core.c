/* SPDX-License-Identifier: MIT */
/* Core model: GPU catalog, cluster specs, event heap order, RNG, free map and placements. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/heap.h"
#include "ecosched/rng.h"
#include "sim/sim.h"

static void test_catalog(void **state)
{
    (void)state;
    const char *need[] = {"V100",      "P100",     "A40",      "RTX6000",
                          "A100-PCIE", "A100-SXM", "H100-SXM", "H100-NVL"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        int t = eco_catalog_find(need[i]);
        assert_true(t >= 0);
        const struct eco_gpu_type *g = eco_catalog_get((size_t)t);
        assert_true(g->idle_w > 0 && g->idle_w < g->min_limit_w);
        assert_true(g->min_limit_w < g->max_limit_w);
        assert_true(g->default_limit_w >= g->min_limit_w && g->default_limit_w <= g->max_limit_w);
        assert_true(g->mem_gb > 0);
        assert_non_null(g->source);
    }
    assert_int_equal(eco_catalog_find("a100_sxm"), eco_catalog_find("A100-SXM"));
    assert_int_equal(eco_catalog_find("K80"), -1);
    /* Figures from data/gpu_power_specs. */
    const struct eco_gpu_type *v = eco_catalog_get((size_t)eco_catalog_find("V100"));
    assert_true(v->idle_w == 23 && v->min_limit_w == 100 && v->max_limit_w == 250);
    const struct eco_gpu_type *h = eco_catalog_get((size_t)eco_catalog_find("H100-SXM"));
    assert_true(h->min_limit_w == 200 && h->max_limit_w == 700);
}

static void test_cluster_spec(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("30x8:V100,4x8:A100-SXM,2x4", &c, &err), 0);
    assert_int_equal(c->n_nodes, 36);
    assert_int_equal(c->total_gpus, 30 * 8 + 4 * 8 + 2 * 4);
    assert_int_equal(c->nodes[0].type, eco_catalog_find("V100"));
    assert_int_equal(c->nodes[30].type, eco_catalog_find("A100-SXM"));
    assert_int_equal(c->nodes[35].type, eco_catalog_find("V100"));
    assert_int_equal(c->nodes[35].gpus, 4);
    assert_int_equal(eco_cluster_gpus_of_type(c, eco_catalog_find("A100-SXM")), 32);
    eco_cluster_destroy(c);

    static const struct {
        const char *spec, *needle;
    } bad[] = {
        {"", "empty"},
        {"8", "COUNTxGPUS"},
        {"0x8", "node count"},
        {"2x0", "GPUs per node"},
        {"2x8:K80", "unknown GPU type 'K80'"},
        {"2x8,", "empty part"},
        {"ax8", "node count"},
        {"2x999", "GPUs per node"},
        {"2x8:", "unknown GPU type"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c = (struct eco_cluster *)1;
        err.msg[0] = '\0';
        assert_int_equal(eco_cluster_parse_spec(bad[i].spec, &c, &err), -EINVAL);
        assert_null(c);
        if (!strstr(err.msg, bad[i].needle))
            print_error("spec '%s': message '%s' lacks '%s'\n", bad[i].spec, err.msg,
                        bad[i].needle);
        assert_non_null(strstr(err.msg, bad[i].needle));
    }
}

static void test_cluster_json(void **state)
{
    (void)state;
    char path[512];
    struct eco_cluster *c = NULL;
    struct eco_error err;
    snprintf(path, sizeof path, "%s/tests/data/cluster/hetero.json", ECO_SOURCE_DIR);
    assert_int_equal(eco_cluster_load(path, &c, &err), 0);
    assert_int_equal(c->n_nodes, 3);
    assert_int_equal(c->total_gpus, 2 * 8 + 4);
    assert_int_equal(c->nodes[2].type, eco_catalog_find("H100-SXM"));
    eco_cluster_destroy(c);
    static const struct {
        const char *file, *needle;
    } bad[] = {
        {"bad_type.json", "nodes[1].gpu_type: unknown GPU type 'Z9'"},
        {"bad_count.json", "nodes[0].count: expected a whole number"},
        {"bad_syntax.json", "invalid JSON"},
        {"bad_field.json", "unknown field 'gpu'"},
        {"missing.json", "cannot read"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(path, sizeof path, "%s/tests/data/cluster/%s", ECO_SOURCE_DIR, bad[i].file);
        err.msg[0] = '\0';
        assert_int_not_equal(eco_cluster_load(path, &c, &err), 0);
        assert_null(c);
        if (!strstr(err.msg, bad[i].needle) || !strstr(err.msg, bad[i].file))
            print_error("%s: message '%s'\n", bad[i].file, err.msg);
        assert_non_null(strstr(err.msg, bad[i].needle));
        assert_non_null(strstr(err.msg, bad[i].file));
    }
}

static void test_heap_order(void **state)
{
    (void)state;
    struct eco_heap h;
    eco_heap_init(&h);
    /* Equal times keep insertion order. */
    const double t[] = {5, 1, 5, 3, 1, 5, 0};
    for (uint32_t i = 0; i < 7; i++)
        assert_int_equal(eco_heap_push(&h, t[i], 0, i, 0), 0);
    const uint32_t want[] = {6, 1, 4, 3, 0, 2, 5};
    for (size_t i = 0; i < 7; i++) {
        struct eco_event ev;
        assert_int_equal(eco_heap_pop(&h, &ev), 0);
        assert_int_equal(ev.job, want[i]);
    }
    struct eco_event ev;
    assert_int_equal(eco_heap_pop(&h, &ev), -ENOENT);
    eco_heap_fini(&h);
}

static int keep_even(void *ctx, const struct eco_event *ev)
{
    (void)ctx;
    return ev->job % 2 == 0;
}

/* Pruning drops exactly the events refused and the rest pop in the order they had. */
static void test_heap_prune(void **state)
{
    (void)state;
    struct eco_heap h;
    eco_heap_init(&h);
    uint64_t x = 12345;
    double t[1000];
    for (uint32_t i = 0; i < 1000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t[i] = (double)(x >> 54); /* many equal times: the order then follows insertion */
        assert_int_equal(eco_heap_push(&h, t[i], 0, i, 0), 0);
    }
    for (int k = 0; k < 100; k++) { /* pop some first, so that the heap is not as built */
        struct eco_event ev;
        assert_int_equal(eco_heap_pop(&h, &ev), 0);
    }
    struct eco_event *all = malloc(h.n * sizeof *all);
    assert_non_null(all);
    size_t n = 0;
    struct eco_heap copy = h;
    copy.ev = malloc(h.cap * sizeof *copy.ev);
    assert_non_null(copy.ev);
    memcpy(copy.ev, h.ev, h.n * sizeof *h.ev);
    struct eco_event ev;
    while (eco_heap_pop(&copy, &ev) == 0)
        if (ev.job % 2 == 0)
            all[n++] = ev;
    assert_int_equal(eco_heap_prune(&h, keep_even, NULL), 900 - n);
    assert_int_equal(h.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(eco_heap_pop(&h, &ev), 0);
        assert_int_equal(ev.job, all[i].job);
        assert_int_equal(ev.seq, all[i].seq);
    }
    assert_int_equal(eco_heap_pop(&h, &ev), -ENOENT);
    free(all);
    free(copy.ev);
    eco_heap_fini(&h);
}

static void test_rng(void **state)
{
    (void)state;
    struct eco_rng a, b;
    eco_rng_init(&a, 42);
    eco_rng_init(&b, 42);
    double sum = 0;
    for (int i = 0; i < 10000; i++) {
        double x = eco_rng_uniform(&a);
        assert_true(x >= 0 && x < 1);
        assert_true(x == eco_rng_uniform(&b));
        sum += x;
    }
    assert_true(sum / 10000 > 0.48 && sum / 10000 < 0.52);
    eco_rng_init(&b, 43);
    assert_true(eco_rng_next(&a) != eco_rng_next(&b));
}

/* Three nodes of 4 GPUs with 1, 3 and 4 free. */
static struct eco_freemap *three_nodes(struct eco_cluster **c)
{
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("3x4", c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(*c);
    assert_non_null(fm);
    eco_freemap_take(fm, 0, 3);
    eco_freemap_take(fm, 1, 1);
    return fm;
}

static int place(const char *name, const struct eco_freemap *fm, uint32_t gpus,
                 struct eco_alloc *out)
{
    struct eco_job job = {.gpus = gpus, .gpu_type = -1, .gpu_milli = 1000};
    return eco_placement_find(name)->place(NULL, fm, &job, out, 16);
}

static void expect_alloc(const struct eco_alloc *got, int n, const uint32_t *node,
                         const uint16_t *gpus, int want_n)
{
    assert_int_equal(n, want_n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(got[i].node, node[i]);
        assert_int_equal(got[i].gpus, gpus[i]);
    }
}

static void test_placements(void **state)
{
    (void)state;
    struct eco_cluster *c;
    struct eco_freemap *fm = three_nodes(&c);
    struct eco_alloc a[16];
    assert_int_equal(eco_freemap_total_free(fm, -1), 8);
    /* 1 GPU: pack takes the fullest node that fits, spread the emptiest, first-fit node 0. */
    expect_alloc(a, place("pack", fm, 1, a), (uint32_t[]){0}, (uint16_t[]){1}, 1);
    expect_alloc(a, place("spread", fm, 1, a), (uint32_t[]){2}, (uint16_t[]){1}, 1);
    expect_alloc(a, place("first-fit", fm, 1, a), (uint32_t[]){0}, (uint16_t[]){1}, 1);
    /* 2 GPUs. */
    expect_alloc(a, place("pack", fm, 2, a), (uint32_t[]){1}, (uint16_t[]){2}, 1);
    expect_alloc(a, place("spread", fm, 2, a), (uint32_t[]){2}, (uint16_t[]){2}, 1);
    expect_alloc(a, place("first-fit", fm, 2, a), (uint32_t[]){1}, (uint16_t[]){2}, 1);
    /* 6 GPUs: the whole free node 2, then 2 on the best remaining node (node 1). */
    expect_alloc(a, place("pack", fm, 6, a), (uint32_t[]){2, 1}, (uint16_t[]){4, 2}, 2);
    /* 8 GPUs: whole node 2 then 4 on one node: none -> not now; pool takes them anyway. */
    assert_int_equal(place("pack", fm, 8, a), -EAGAIN);
    assert_int_equal(place("spread", fm, 8, a), -EAGAIN);
    expect_alloc(a, place("pool", fm, 8, a), (uint32_t[]){0, 1, 2}, (uint16_t[]){1, 3, 4}, 3);
    assert_int_equal(place("pool", fm, 9, a), -EAGAIN);
    /* Taking and giving back keeps counts. */
    eco_freemap_take(fm, 2, 4);
    assert_int_equal(eco_freemap_find(fm, 0, 4, 0), -1);
    assert_int_equal(place("pack", fm, 4, a), -EAGAIN);
    eco_freemap_give(fm, 2, 4);
    expect_alloc(a, place("pack", fm, 4, a), (uint32_t[]){2}, (uint16_t[]){4}, 1);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

static void test_placement_types(void **state)
{
    (void)state;
    struct eco_cluster *c;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4:V100,1x8:A100-SXM,1x4:A100-SXM", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    struct eco_alloc a[16];
    struct eco_job job = {.gpus = 4, .gpu_type = (int16_t)eco_catalog_find("A100-SXM")};
    /* Best fit among A100 nodes: node 2 (4 free) rather than node 1 (8 free). */
    int n = eco_placement_find("pack")->place(NULL, fm, &job, a, 16);
    expect_alloc(a, n, (uint32_t[]){2}, (uint16_t[]){4}, 1);
    job.gpus = 12;
    n = eco_placement_find("pack")->place(NULL, fm, &job, a, 16);
    expect_alloc(a, n, (uint32_t[]){1, 2}, (uint16_t[]){8, 4}, 2);
    job.gpus = 13;
    assert_int_equal(eco_placement_find("pack")->place(NULL, fm, &job, a, 16), -EAGAIN);
    /* Untyped 4-GPU job: best fit over all nodes, ties to the lowest index: node 0. */
    job.gpus = 4;
    job.gpu_type = -1;
    n = eco_placement_find("pack")->place(NULL, fm, &job, a, 16);
    expect_alloc(a, n, (uint32_t[]){0}, (uint16_t[]){4}, 1);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

static void test_freemap_many_nodes(void **state)
{
    (void)state;
    /* Enough nodes to use the second bitmap level. */
    struct eco_cluster *c;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("10000x8", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    for (uint32_t i = 0; i < 9999; i++)
        eco_freemap_take(fm, i, 8);
    assert_int_equal(eco_freemap_find(fm, 0, 8, 0), 9999);
    assert_int_equal(eco_freemap_find(fm, 0, 0, 5000), 5000);
    eco_freemap_give(fm, 4097, 3);
    assert_int_equal(eco_freemap_find(fm, 0, 3, 0), 4097);
    assert_int_equal(eco_freemap_find(fm, 0, 3, 4098), -1);
    assert_int_equal(eco_freemap_find_nonempty(fm, 0, 0), 4097);
    assert_int_equal(eco_freemap_find_nonempty(fm, 0, 4098), 9999);
    assert_int_equal(eco_freemap_total_free(fm, -1), 11);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void test_percentile(void **state)
{
    (void)state;
    const double v[] = {1, 2, 3, 4, 10};
    assert_true(eco_percentile_sorted(v, 5, 50) == 3);
    assert_true(eco_percentile_sorted(v, 5, 100) == 10);
    assert_true(eco_percentile_sorted(v, 5, 0) == 1);
    assert_true(fabs(eco_percentile_sorted(v, 5, 95) - 8.8) < 1e-12);
    assert_true(eco_percentile_sorted(v, 0, 50) == 0);
    /* Selection gives the same values as sorting, on data with ties, in any order. */
    struct eco_rng r;
    eco_rng_init(&r, 5);
    for (size_t n = 1; n < 300; n += 37) {
        double a[300], b[300];
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (double)(eco_rng_next(&r) % 50);
        qsort(b, n, sizeof b[0], cmp_d);
        const double ps[] = {0, 1, 50, 95, 99, 100};
        for (size_t k = 0; k < 6; k++) {
            double want = eco_percentile_sorted(b, n, ps[k]);
            assert_true(fabs(eco_percentile_select(a, n, ps[k]) - want) < 1e-9);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog),
        cmocka_unit_test(test_cluster_spec),
        cmocka_unit_test(test_cluster_json),
        cmocka_unit_test(test_heap_order),
        cmocka_unit_test(test_heap_prune),
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_placements),
        cmocka_unit_test(test_placement_types),
        cmocka_unit_test(test_freemap_many_nodes),
        cmocka_unit_test(test_percentile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
