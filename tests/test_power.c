/* SPDX-License-Identifier: MIT */
/* GPU power and speed model: the generated tables against data/zeus (read here at test time),
 * interpolation, clamping, scaled types, the generic workload and workload mixes. */
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
#include "ecosched/catalog.h"
#include "util/csv.h"
#include "ecosched/power.h"
#include "ecosched/rng.h"
#include "core/power/zeus_tables.h"

#define N_WL 6
#define N_GPU 4
#define MAX_PTS 16
#define REL_TOL 1e-9

/* ---- The Zeus CSVs, read and reduced to one configuration per workload. ---- */

static const char *const gpu_file[N_GPU] = {"v100", "a40", "rtx6000", "p100"};
static const char *const gpu_name[N_GPU] = {"V100", "A40", "RTX6000", "P100"};
static const struct {
    const char *name, *dataset, *network, *optimizer;
    int batch;
} wl[N_WL] = {
    /* The batch sizes and optimizers documented in docs/models/energy.md. */
    {"shufflenet", "cifar100", "shufflenetv2", "adadelta", 2048},
    {"resnet50", "imagenet", "resnet50", "adadelta", 128},
    {"deepspeech2", "librispeech", "deepspeech2", "adamw", 64},
    {"ncf", "movielens-1m", "ncf", "adam", 16384},
    {"bert-sentiment", "sentiment140", "bert_base_uncased", "adamw", 64},
    {"bert-squad", "squad", "bert_base_uncased", "adamw", 24},
};

struct row {
    char dataset[32], network[32], optimizer[16];
    int batch;
    double limit_w, time_s, power_w;
};

struct gpu_rows {
    struct row *rows;
    size_t n;
    double lo_w, hi_w; /* lowest and highest limit in the file */
};

struct curve {
    size_t n;
    double limit_w[MAX_PTS], time_s[MAX_PTS], power_w[MAX_PTS];
};

struct data {
    struct gpu_rows gpu[N_GPU];
    struct curve curve[N_WL][N_GPU];
    char optimizer[N_WL][16];
    int batch[N_WL];
};

static struct data *D; /* loaded once by setup_data */

static void copy_field(char *dst, size_t size, const char *src)
{
    assert_true(strlen(src) < size);
    strcpy(dst, src);
}

static void load_gpu(struct gpu_rows *g, const char *file)
{
    char path[1024], line[512];
    snprintf(path, sizeof path, "%s/data/zeus/summary_power_%s.csv", ECO_SOURCE_DIR, file);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t cap = 0;
    g->lo_w = INFINITY;
    g->hi_w = -INFINITY;
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "dataset,network,batch_size,optimizer,power_limit,time_per_epoch,"
                              "average_power\n");
    while (fgets(line, sizeof line, f)) {
        char *fld[8];
        int64_t batch;
        assert_int_equal(eco_csv_split(line, fld, 8), 7);
        if (g->n == cap) {
            cap = cap ? 2 * cap : 256;
            g->rows = realloc(g->rows, cap * sizeof *g->rows);
            assert_non_null(g->rows);
        }
        struct row *r = &g->rows[g->n++];
        copy_field(r->dataset, sizeof r->dataset, fld[0]);
        copy_field(r->network, sizeof r->network, fld[1]);
        assert_int_equal(eco_parse_int64(fld[2], &batch), 0);
        r->batch = (int)batch;
        copy_field(r->optimizer, sizeof r->optimizer, fld[3]);
        assert_int_equal(eco_parse_double(fld[4], &r->limit_w), 0);
        assert_int_equal(eco_parse_double(fld[5], &r->time_s), 0);
        assert_int_equal(eco_parse_double(fld[6], &r->power_w), 0);
        g->lo_w = fmin(g->lo_w, r->limit_w);
        g->hi_w = fmax(g->hi_w, r->limit_w);
    }
    fclose(f);
}

static int row_is(const struct row *r, int w, const char *opt)
{
    return !strcmp(r->dataset, wl[w].dataset) && !strcmp(r->network, wl[w].network) &&
           (!opt || !strcmp(r->optimizer, opt));
}

/* Does GPU g have workload w with this optimizer and batch size at limit_w? */
static int has_point(const struct gpu_rows *g, int w, const char *opt, int batch, double limit_w)
{
    for (size_t i = 0; i < g->n; i++)
        if (row_is(&g->rows[i], w, opt) && g->rows[i].batch == batch &&
            g->rows[i].limit_w == limit_w)
            return 1;
    return 0;
}

/* Is workload w measured with optimizer opt on GPU g at all? */
static int has_optimizer(const struct gpu_rows *g, int w, const char *opt)
{
    for (size_t i = 0; i < g->n; i++)
        if (row_is(&g->rows[i], w, opt))
            return 1;
    return 0;
}

/* The configuration rule, implemented again from the data: the one optimizer measured on all
 * four GPUs; the largest batch size whose limits span each GPU's whole range on all four. */
static void choose(struct data *d, int w)
{
    const struct gpu_rows *v = &d->gpu[0];
    const char *opt = NULL;
    for (size_t i = 0; i < v->n; i++) {
        const struct row *r = &v->rows[i];
        int on_all = row_is(r, w, NULL);
        for (int g = 1; g < N_GPU && on_all; g++)
            on_all = has_optimizer(&d->gpu[g], w, r->optimizer);
        if (on_all && opt)
            assert_string_equal(r->optimizer, opt); /* exactly one */
        if (on_all)
            opt = r->optimizer;
    }
    assert_non_null(opt);
    strcpy(d->optimizer[w], opt);
    d->batch[w] = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct row *r = &v->rows[i];
        int full = row_is(r, w, opt);
        for (int g = 0; g < N_GPU && full; g++)
            full = has_point(&d->gpu[g], w, opt, r->batch, d->gpu[g].lo_w) &&
                   has_point(&d->gpu[g], w, opt, r->batch, d->gpu[g].hi_w);
        if (full && r->batch > d->batch[w])
            d->batch[w] = r->batch;
    }
    assert_true(d->batch[w] > 0);
}

static void build_curve(struct curve *c, const struct gpu_rows *g, int w, const char *opt,
                        int batch)
{
    c->n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const struct row *r = &g->rows[i];
        if (!row_is(r, w, opt) || r->batch != batch)
            continue;
        assert_true(c->n < MAX_PTS);
        size_t j = c->n++;
        /* insertion sort by limit */
        for (; j > 0 && c->limit_w[j - 1] > r->limit_w; j--) {
            c->limit_w[j] = c->limit_w[j - 1];
            c->time_s[j] = c->time_s[j - 1];
            c->power_w[j] = c->power_w[j - 1];
        }
        c->limit_w[j] = r->limit_w;
        c->time_s[j] = r->time_s;
        c->power_w[j] = r->power_w;
    }
    for (size_t j = 1; j < c->n; j++)
        assert_true(c->limit_w[j] > c->limit_w[j - 1]); /* no duplicate limits */
}

static int setup_data(void **state)
{
    (void)state;
    D = calloc(1, sizeof *D);
    if (!D)
        return -1;
    for (int g = 0; g < N_GPU; g++)
        load_gpu(&D->gpu[g], gpu_file[g]);
    for (int w = 0; w < N_WL; w++) {
        choose(D, w);
        for (int g = 0; g < N_GPU; g++)
            build_curve(&D->curve[w][g], &D->gpu[g], w, D->optimizer[w], D->batch[w]);
    }
    return 0;
}

static int teardown_data(void **state)
{
    (void)state;
    for (int g = 0; D && g < N_GPU; g++)
        free(D->gpu[g].rows);
    free(D);
    D = NULL;
    return 0;
}

/* ---- Helpers. ---- */

static int type_of(const char *name)
{
    int t = eco_catalog_find(name);
    assert_true(t >= 0);
    return t;
}

static void assert_rel(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fmax(fabs(want), 1e-300))) {
        fail_msg("got %.17g, want %.17g (relative tolerance %g)", got, want, tol);
    }
}

static void eval_ok(int type, size_t w, double limit_w, double *speed, double *power_w)
{
    assert_int_equal(eco_power_eval(type, w, limit_w, speed, power_w), 0);
}

/* Reference time: V100 at its maximum limit, 250 W, from the CSV. */
static double ref_time(int w)
{
    const struct curve *v = &D->curve[w][0];
    assert_true(v->limit_w[v->n - 1] == 250);
    return v->time_s[v->n - 1];
}

/* ---- Tests. ---- */

static void test_workload_names(void **state)
{
    (void)state;
    assert_int_equal(eco_workload_count(), N_WL + 1);
    assert_string_equal(eco_workload_name(ECO_WORKLOAD_GENERIC), "generic");
    for (int w = 0; w < N_WL; w++) {
        assert_string_equal(eco_workload_name((size_t)w + 1), wl[w].name);
        assert_int_equal(eco_workload_find(wl[w].name), w + 1);
    }
    assert_null(eco_workload_name(N_WL + 1));
    assert_int_equal(eco_workload_find("ResNet50"), 2);
    assert_int_equal(eco_workload_find("GENERIC"), 0);
    assert_int_equal(eco_workload_find("resnet"), -1);
    assert_int_equal(eco_workload_find(""), -1);
    assert_int_equal(eco_workload_find(NULL), -1);
}

/* The rule applied to the CSVs gives the documented configurations, and so does the generator. */
static void test_configuration(void **state)
{
    (void)state;
    for (int w = 0; w < N_WL; w++) {
        assert_int_equal(D->batch[w], wl[w].batch);
        assert_string_equal(D->optimizer[w], wl[w].optimizer);
        const struct eco_zeus_workload *z = &eco_zeus_workloads[w];
        assert_string_equal(z->name, wl[w].name);
        assert_string_equal(z->dataset, wl[w].dataset);
        assert_string_equal(z->network, wl[w].network);
        assert_string_equal(z->optimizer, wl[w].optimizer);
        assert_int_equal(z->batch_size, wl[w].batch);
        for (int g = 0; g < N_GPU; g++) {
            assert_string_equal(eco_zeus_gpus[g], gpu_name[g]);
            assert_int_equal(eco_zeus_curves[w][g].n, D->curve[w][g].n);
            /* The measured range is the catalog's range, so clamping to either is the same. */
            const struct eco_gpu_type *t = eco_catalog_get((size_t)type_of(gpu_name[g]));
            assert_true(D->curve[w][g].limit_w[0] == t->min_limit_w);
            assert_true(D->curve[w][g].limit_w[D->curve[w][g].n - 1] == t->max_limit_w);
        }
    }
}

/* At every measured point: the measured power and the speed implied by the measured times. */
static void test_measured_points(void **state)
{
    (void)state;
    for (int g = 0; g < N_GPU; g++) {
        int t = type_of(gpu_name[g]);
        for (int w = 0; w < N_WL; w++) {
            const struct curve *c = &D->curve[w][g];
            for (size_t i = 0; i < c->n; i++) {
                double s, p;
                eval_ok(t, (size_t)w + 1, c->limit_w[i], &s, &p);
                assert_rel(p, c->power_w[i], REL_TOL);
                assert_rel(s, ref_time(w) / c->time_s[i], REL_TOL);
            }
        }
    }
}

/* Between two measured limits, time and power are the linear interpolation. */
static void test_interpolation(void **state)
{
    (void)state;
    const double fracs[] = {0.5, 0.25, 0.9};
    for (int g = 0; g < N_GPU; g++) {
        int t = type_of(gpu_name[g]);
        for (int w = 0; w < N_WL; w++) {
            const struct curve *c = &D->curve[w][g];
            for (size_t i = 0; i + 1 < c->n; i++) {
                for (size_t k = 0; k < sizeof fracs / sizeof fracs[0]; k++) {
                    double f = fracs[k], s, p;
                    double l = c->limit_w[i] + f * (c->limit_w[i + 1] - c->limit_w[i]);
                    double tm = c->time_s[i] + f * (c->time_s[i + 1] - c->time_s[i]);
                    double pw = c->power_w[i] + f * (c->power_w[i + 1] - c->power_w[i]);
                    eval_ok(t, (size_t)w + 1, l, &s, &p);
                    assert_rel(p, pw, REL_TOL);
                    assert_rel(s, ref_time(w) / tm, REL_TOL);
                }
            }
        }
    }
}

static void test_reference_speed(void **state)
{
    (void)state;
    int v100 = type_of("V100");
    for (size_t w = 0; w < eco_workload_count(); w++) {
        double s;
        eval_ok(v100, w, 250, &s, NULL);
        assert_true(s == 1.0);
    }
}

/* A limit outside the measured range is clamped to it. */
static void test_clamping(void **state)
{
    (void)state;
    for (size_t t = 0; t < eco_catalog_count(); t++) {
        const struct eco_gpu_type *g = eco_catalog_get(t);
        for (size_t w = 0; w < eco_workload_count(); w++) {
            double s_lo, p_lo, s_hi, p_hi, s, p;
            eval_ok((int)t, w, g->min_limit_w, &s_lo, &p_lo);
            eval_ok((int)t, w, g->max_limit_w, &s_hi, &p_hi);
            const double below[] = {g->min_limit_w - 1, g->min_limit_w / 2, 0, -1e9};
            const double above[] = {g->max_limit_w + 1, 2 * g->max_limit_w, 1e9};
            for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
                eval_ok((int)t, w, below[i], &s, &p);
                assert_true(s == s_lo && p == p_lo);
            }
            for (size_t i = 0; i < sizeof above / sizeof above[0]; i++) {
                eval_ok((int)t, w, above[i], &s, &p);
                assert_true(s == s_hi && p == p_hi);
            }
            assert_true(s_lo > 0 && s_hi > 0 && p_lo > 0 && p_hi > 0);
        }
    }
}

static void test_invalid(void **state)
{
    (void)state;
    double s = -7, p = -7;
    int v100 = type_of("V100");
    assert_int_equal(eco_power_eval(-1, 1, 200, &s, &p), -EINVAL);
    assert_int_equal(eco_power_eval((int)eco_catalog_count(), 1, 200, &s, &p), -EINVAL);
    assert_int_equal(eco_power_eval(v100, eco_workload_count(), 200, &s, &p), -EINVAL);
    assert_int_equal(eco_power_eval(v100, (size_t)-1, 200, &s, &p), -EINVAL);
    assert_int_equal(eco_power_eval(v100, 1, NAN, &s, &p), -EINVAL);
    assert_int_equal(eco_power_eval(v100, 1, INFINITY, &s, &p), -EINVAL);
    assert_int_equal(eco_power_eval(v100, 1, -INFINITY, &s, &p), -EINVAL);
    assert_true(s == -7 && p == -7); /* untouched on error */
    assert_int_equal(eco_power_eval(v100, 1, 200, NULL, NULL), 0);
}

/* Unmeasured types: the V100 curve at the mapped limit; power x max/250 capped at the limit,
 * speed x the type's factor. */
static const struct {
    const char *name;
    double factor;
} scaled[] = {
    {"A100-PCIE", 1.4 * 0.9},
    {"A100-SXM", 1.4},
    {"H100-SXM", 1.4 * 1.4},
    {"H100-NVL", 1.4 * 1.4 * 1513.0 / 1979.0},
};

static void test_scaled_types(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof scaled / sizeof scaled[0]; k++) {
        int t = type_of(scaled[k].name);
        const struct eco_gpu_type *g = eco_catalog_get((size_t)t);
        double f = scaled[k].factor, scale = g->max_limit_w / 250;
        for (int w = 0; w < N_WL; w++) {
            const struct curve *v = &D->curve[w][0];
            double s, p;
            /* min -> V100 at 100 W */
            eval_ok(t, (size_t)w + 1, g->min_limit_w, &s, &p);
            assert_rel(s, ref_time(w) / v->time_s[0] * f, REL_TOL);
            assert_rel(p, fmin(v->power_w[0] * scale, g->min_limit_w), REL_TOL);
            /* max -> V100 at 250 W: speed is the factor itself */
            eval_ok(t, (size_t)w + 1, g->max_limit_w, &s, &p);
            assert_rel(s, f, REL_TOL);
            assert_rel(p, fmin(v->power_w[v->n - 1] * scale, g->max_limit_w), REL_TOL);
            /* the middle of the range -> V100 at 175 W, a measured point */
            double mid = (g->min_limit_w + g->max_limit_w) / 2;
            assert_true(v->limit_w[3] == 175);
            eval_ok(t, (size_t)w + 1, mid, &s, &p);
            assert_rel(s, ref_time(w) / v->time_s[3] * f, REL_TOL);
            assert_rel(p, fmin(v->power_w[3] * scale, mid), REL_TOL);
        }
    }
    /* The cap binds where the formula exceeds the limit: H100-SXM at 200 W. */
    double p;
    eval_ok(type_of("H100-SXM"), 2, 200, NULL, &p);
    assert_true(p == 200);
}

/* Generic = the mean of the six workloads' speeds and powers at the same limit. */
static void test_generic(void **state)
{
    (void)state;
    for (size_t t = 0; t < eco_catalog_count(); t++) {
        const struct eco_gpu_type *g = eco_catalog_get(t);
        const double limits[] = {g->min_limit_w, g->default_limit_w, g->max_limit_w,
                                 (g->min_limit_w + g->max_limit_w) / 2, g->min_limit_w + 10};
        for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
            double s, p, sum_s = 0, sum_p = 0;
            for (size_t w = 1; w <= N_WL; w++) {
                eval_ok((int)t, w, limits[i], &s, &p);
                sum_s += s;
                sum_p += p;
            }
            eval_ok((int)t, ECO_WORKLOAD_GENERIC, limits[i], &s, &p);
            assert_rel(s, sum_s / N_WL, 1e-12);
            assert_rel(p, sum_p / N_WL, 1e-12);
        }
    }
}

/* ---- Workload mixes. ---- */

static void assert_cum(const struct eco_workload_mix *m, const double *want)
{
    assert_int_equal(m->n, N_WL + 1);
    for (size_t w = 0; w <= N_WL; w++)
        assert_rel(m->cum[w] + 1, want[w] + 1, 1e-15);
}

static void test_mix_parse_good(void **state)
{
    (void)state;
    struct eco_workload_mix m;
    struct eco_error err;
    assert_int_equal(eco_workload_mix_parse("default", &m, &err), 0);
    const double eq[] = {0, 1 / 6.0, 2 / 6.0, 3 / 6.0, 4 / 6.0, 5 / 6.0, 1};
    assert_cum(&m, eq);
    assert_int_equal(eco_workload_mix_parse("resnet50:1,ncf:3", &m, &err), 0);
    const double two[] = {0, 0, 0.25, 0.25, 1, 1, 1};
    assert_cum(&m, two);
    assert_int_equal(eco_workload_mix_parse("NCF:2.5", &m, &err), 0);
    const double one[] = {0, 0, 0, 0, 1, 1, 1};
    assert_cum(&m, one);
    assert_int_equal(eco_workload_mix_parse("bert-squad:1e-3,shufflenet:0.004", &m, &err), 0);
    const double sm[] = {0, 0.8, 0.8, 0.8, 0.8, 0.8, 1};
    assert_cum(&m, sm);
}

static void test_mix_parse_bad(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *needle;
    } bad[] = {
        {"", "--workload-mix: empty spec"},
        {"foo:1", "--workload-mix: unknown workload 'foo' (known: shufflenet, resnet50, "
                  "deepspeech2, ncf, bert-sentiment, bert-squad)"},
        {":1", "unknown workload ''"},
        {"resnet50:-1", "--workload-mix: weight of 'resnet50' must be a positive number, got '-1'"},
        {"resnet50:0", "weight of 'resnet50' must be a positive number, got '0'"},
        {"resnet50:", "weight of 'resnet50' must be a positive number, got ''"},
        {"resnet50:abc", "got 'abc'"},
        {"resnet50:nan", "got 'nan'"},
        {"resnet50:inf", "got 'inf'"},
        {"resnet50:1e999", "got '1e999'"},
        {"resnet50:0x10", "got '0x10'"},
        {"resnet50: 1", "got ' 1'"},
        {"resnet50:1:2", "got '1:2'"},
        {"resnet50", "entry 'resnet50' is not NAME:WEIGHT"},
        {"resnet50:1,resnet50:2", "workload 'resnet50' is given twice"},
        {"ncf:1,NCF:1", "workload 'ncf' is given twice"},
        {"generic:1", "'generic' is not allowed in a mix"},
        {"resnet50:1,", "empty entry"},
        {",resnet50:1", "empty entry"},
        {"resnet50:1,,ncf:1", "empty entry"},
        {"resnet50:1e308,ncf:1e308", "too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct eco_workload_mix m, before;
        struct eco_error err = {{0}};
        memset(&m, 0x5a, sizeof m);
        before = m;
        assert_int_equal(eco_workload_mix_parse(bad[i].spec, &m, &err), -EINVAL);
        if (!strstr(err.msg, bad[i].needle))
            fail_msg("spec '%s': message '%s' lacks '%s'", bad[i].spec, err.msg, bad[i].needle);
        assert_memory_equal(&m, &before, sizeof m); /* untouched on error */
    }
    struct eco_workload_mix m;
    struct eco_error err = {{0}};
    assert_int_equal(eco_workload_mix_parse(NULL, &m, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "empty spec"));
    assert_int_equal(eco_workload_mix_parse("default", NULL, NULL), -EINVAL);
    assert_int_equal(eco_workload_mix_parse("foo:1", &m, NULL), -EINVAL); /* err optional */
}

static void test_mix_pick(void **state)
{
    (void)state;
    struct eco_workload_mix m;
    assert_int_equal(eco_workload_mix_parse("resnet50:1,ncf:3", &m, NULL), 0);
    assert_int_equal(eco_workload_mix_pick(&m, 0), 2);
    assert_int_equal(eco_workload_mix_pick(&m, nextafter(0.25, 0)), 2);
    assert_int_equal(eco_workload_mix_pick(&m, 0.25), 4);
    assert_int_equal(eco_workload_mix_pick(&m, nextafter(1, 0)), 4);
    /* Outside the contract [0, 1): the first or last workload with a weight. */
    assert_int_equal(eco_workload_mix_pick(&m, 1), 4);
    assert_int_equal(eco_workload_mix_pick(&m, -0.5), 2);
    assert_int_equal(eco_workload_mix_pick(&m, NAN), 4);

    assert_int_equal(eco_workload_mix_parse("default", &m, NULL), 0);
    assert_int_equal(eco_workload_mix_pick(&m, 0), 1);
    for (size_t w = 1; w < N_WL; w++) {
        assert_int_equal(eco_workload_mix_pick(&m, nextafter(m.cum[w], 0)), w);
        assert_int_equal(eco_workload_mix_pick(&m, m.cum[w]), w + 1);
    }
    assert_int_equal(eco_workload_mix_pick(&m, nextafter(1, 0)), N_WL);
    assert_int_equal(eco_workload_mix_pick(NULL, 0.5), ECO_WORKLOAD_GENERIC);
}

static void test_mix_histogram(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        double share[N_WL + 1];
    } cases[] = {
        {"default", {0, 1 / 6.0, 1 / 6.0, 1 / 6.0, 1 / 6.0, 1 / 6.0, 1 / 6.0}},
        {"shufflenet:1,resnet50:2,deepspeech2:3,ncf:4,bert-sentiment:5,bert-squad:5",
         {0, 0.05, 0.10, 0.15, 0.20, 0.25, 0.25}},
        {"bert-squad:9,ncf:1", {0, 0, 0, 0, 0.1, 0, 0.9}},
    };
    enum { DRAWS = 100000 };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct eco_workload_mix m;
        struct eco_rng rng;
        size_t count[N_WL + 1] = {0};
        assert_int_equal(eco_workload_mix_parse(cases[c].spec, &m, NULL), 0);
        eco_rng_init(&rng, 20240601);
        for (int i = 0; i < DRAWS; i++) {
            size_t w = eco_workload_mix_pick(&m, eco_rng_uniform(&rng));
            assert_true(w >= 1 && w <= N_WL);
            count[w]++;
        }
        for (size_t w = 0; w <= N_WL; w++) {
            double got = (double)count[w] / DRAWS;
            if (fabs(got - cases[c].share[w]) > 0.01)
                fail_msg("'%s': workload %zu drawn %.4f, weight %.4f", cases[c].spec, w, got,
                         cases[c].share[w]);
            if (cases[c].share[w] == 0)
                assert_int_equal(count[w], 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_names),  cmocka_unit_test(test_configuration),
        cmocka_unit_test(test_measured_points), cmocka_unit_test(test_interpolation),
        cmocka_unit_test(test_reference_speed), cmocka_unit_test(test_clamping),
        cmocka_unit_test(test_invalid),         cmocka_unit_test(test_scaled_types),
        cmocka_unit_test(test_generic),         cmocka_unit_test(test_mix_parse_good),
        cmocka_unit_test(test_mix_parse_bad),   cmocka_unit_test(test_mix_pick),
        cmocka_unit_test(test_mix_histogram),
    };
    return cmocka_run_group_tests(tests, setup_data, teardown_data);
}
