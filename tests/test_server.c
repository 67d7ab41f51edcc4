/* SPDX-License-Identifier: MIT */
/* One-server simulator (src/sim/server.c): the static assignment on hand-built series,
 * memory-threshold's double start ending out of memory (and live's claims avoiding it), the
 * energy of a hand-computed run, share-fit stacking three jobs on one GPU, the Gavel judge and
 * its Lucid-to-Gavel mapping, live deciding with Gavel's pairs (--decide), the decision model
 * reaching no strategy under unknown workloads, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/cluster.h"
#include "ecosched/coloc.h"
#include "ecosched/power.h"
#include "sim/server.h"

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static struct eco_srv_job job(uint32_t id, const char *wl, uint32_t g, double work)
{
    int w = eco_coloc_find(wl, NULL);
    assert_true(w >= 0);
    return (struct eco_srv_job){.id = id,
                                .wl = (uint32_t)w,
                                .n_gpus = g,
                                .work_s = work,
                                .gpu_mem_mb = eco_coloc_workload((size_t)w)->gmem_mb};
}

static struct eco_srv_params params(uint32_t gpus)
{
    struct eco_srv_params p;
    eco_srv_params_default(&p);
    p.n_gpus = gpus;
    p.startup_s = 0;
    p.noise = 0;
    return p;
}

/* 4 GPUs, jobs of 1, 2, 1, 1, 2 GPUs: sets {0}, {2,3} (aligned), {0}, {1}, {2,3}. */
static void test_static_sets(void **state)
{
    (void)state;
    const char *r = "ResNet18 CIFAR-10 bs32";
    struct eco_srv_job j[] = {job(1, r, 1, 100), job(2, r, 2, 30), job(3, r, 1, 10),
                              job(4, r, 1, 10), job(5, r, 2, 10)};
    struct eco_srv_params p = params(4);
    struct eco_srv_job_out o[5];
    struct eco_srv_result res;
    assert_int_equal(eco_srv_run(&p, "static", j, 5, o, &res, NULL), 0);
    static const uint32_t g0[] = {0, 2, 0, 1, 2};
    static const double start[] = {0, 0, 100, 0, 30}, end[] = {100, 30, 110, 10, 40};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(o[i].gpus[0], g0[i]);
        near(o[i].start_s, start[i], 1e-9);
        near(o[i].end_s, end[i], 1e-9);
    }
    assert_int_equal(o[1].gpus[1], 3);
    near(res.makespan_s, 110, 1e-9);
    near(res.avg_jct_s, (100 + 30 + 110 + 10 + 40) / 5.0, 1e-9);
    near(res.shared_gpu_s, 0, 0);
}

/* Two BERT jobs (20,162 MiB each) on one 32 GiB V100 with 10 s start-up. memory-threshold
 * without its wait and 2 slots starts both at t = 0 (nothing allocated yet); at t = 10 the
 * second does not fit and fails, then waits for the first to end (t = 110) and runs
 * 110..220. live reserves the first job's memory (claim) and never starts the second early. */
static void test_double_start_oom(void **state)
{
    (void)state;
    const char *b = "BERT SQuAD bs32";
    struct eco_srv_job j[] = {job(1, b, 1, 100), job(2, b, 1, 100)};
    struct eco_srv_params p = params(1);
    p.startup_s = 10;
    p.ts_slots = 2;
    p.sel.memthr_wait_s = 0;
    struct eco_srv_job_out o[2];
    struct eco_srv_result res;
    assert_int_equal(eco_srv_run(&p, "memory-threshold", j, 2, o, &res, NULL), 0);
    assert_int_equal(o[1].restarts, 1);
    assert_int_equal(res.oom_restarts, 1);
    near(o[0].end_s, 110, 1e-9);
    near(o[1].start_s, 110, 1e-9);
    near(o[1].end_s, 220, 1e-9);

    /* live: the first job's claim, then its memory, leave 12,606 MiB: no start. After it
     * ends at 110 the 10 s utilisation window still averages 0.997 x 9/10, 8/10 at t = 110,
     * 111; at t = 112, 7/10 = 0.698 < 0.7 lets the (sharing) job in: 112 + 10 + 100. */
    assert_int_equal(eco_srv_run(&p, "live", j, 2, o, &res, NULL), 0);
    assert_int_equal(res.oom_restarts, 0);
    near(o[1].start_s, 112, 1e-9);
    near(o[1].end_s, 222, 1e-9);
}

/* One ResNet18 job of 100 s on one V100: energy = (host + idle + (busy - idle) x util) x 100. */
static void test_energy(void **state)
{
    (void)state;
    struct eco_srv_job j[] = {job(1, "ResNet18 CIFAR-10 bs32", 1, 100)};
    struct eco_srv_params p = params(1);
    struct eco_srv_result res;
    assert_int_equal(eco_srv_run(&p, "exclusive", j, 1, NULL, &res, NULL), 0);
    int t = eco_catalog_find("V100");
    double busy;
    assert_int_equal(eco_power_eval(t, ECO_WORKLOAD_GENERIC, 250, NULL, &busy), 0);
    struct eco_node_group g;
    eco_node_group_defaults(&g, t, 1);
    double u = 0.58667, gpu_w = 23 + (busy - 23) * u;
    near(res.gpu_util, u, 1e-12);
    near(res.gpu_energy_j, gpu_w * 100, 1e-6);
    near(res.energy_j, (g.base_w + gpu_w) * 100, 1e-6);
    near(res.makespan_s, 100, 1e-9);
}

/* Three ResNet18 CIFAR-10 bs32 jobs (2,360 MiB each) of 100 s on one V100 under share-fit:
 * all start at t = 0 on GPU 0 (no gain gate, no cap at two). Each is slowed by the product of
 * its pair factors with the two others; two copies of the workload get the mean of Lucid's
 * row 740, (0.949 + 0.972) / 2 = 0.9605, so each runs at 0.9605^2 = 0.92256 and all end at
 * 100 / 0.92256 = 108.394 s. Utilisation: min(1, 3 x 0.58667) = 1 over steps 0..108. */
static void test_three_per_gpu(void **state)
{
    (void)state;
    const char *r = "ResNet18 CIFAR-10 bs32";
    struct eco_srv_job j[] = {job(1, r, 1, 100), job(2, r, 1, 100), job(3, r, 1, 100)};
    struct eco_srv_params p = params(1);
    struct eco_srv_job_out o[3];
    struct eco_srv_result res;
    assert_int_equal(eco_srv_run(&p, "share-fit", j, 3, o, &res, NULL), 0);
    for (int i = 0; i < 3; i++) {
        near(o[i].start_s, 0, 0);
        near(o[i].end_s, 100 / (0.9605 * 0.9605), 1e-9);
        near(o[i].shared_s, 109, 1e-9);
    }
    near(res.gpu_util, 1.0, 1e-12);
    near(res.shared_gpu_s, 109, 1e-9);
    near(res.shared3_gpu_s, 109, 1e-9); /* three jobs computing in each of the 109 steps */
    /* two of them: shared, never three */
    assert_int_equal(eco_srv_run(&p, "share-fit", j, 2, o, &res, NULL), 0);
    assert_true(res.shared_gpu_s > 100);
    near(res.shared3_gpu_s, 0, 0);
    /* exclusive on the same GPU: one after the other */
    assert_int_equal(eco_srv_run(&p, "exclusive", j, 3, o, &res, NULL), 0);
    near(res.makespan_s, 300, 1e-9);
    near(res.shared3_gpu_s, 0, 0);
}

/* Lucid to Gavel (docs/models/colocation.md): the model's family, the nearest batch size, the
 * server's GPU type (v100 for a type Gavel did not measure). */
static void test_gavel_match(void **state)
{
    (void)state;
    static const struct {
        const char *lucid, *type, *gavel, *gavel_type;
    } cases[] = {
        {"ResNet18 CIFAR-10 bs32 amp", "V100", "ResNet-18 (batch size 32)", "v100"},
        {"VGG CIFAR-10 bs128", "V100", "ResNet-18 (batch size 128)", "v100"},
        {"ResNet50 ImageNet bs64", "V100", "ResNet-50 (batch size 64)", "v100"},
        {"MobileNetV3 ImageNet bs128", "V100", "ResNet-50 (batch size 128)", "v100"},
        /* LM has 5..80: |log2(64/80)| = 0.32 < |log2(64/40)| = 0.68; 128 is past the largest */
        {"LSTM Wikitext2 bs64", "V100", "LM (batch size 80)", "v100"},
        {"LSTM Wikitext2 bs128 amp", "V100", "LM (batch size 80)", "v100"},
        {"NeuMF MovieLens bs64", "V100", "Recommendation (batch size 512)", "v100"},
        {"BERT SQuAD bs32", "V100", "Transformer (batch size 32)", "v100"},
        {"Transformer Multi30k bs64", "V100", "Transformer (batch size 64)", "v100"},
        {"PPO LunarLander bs128", "V100", "A3C", "v100"},
        {"TD3 BipedalWalker bs32", "V100", "A3C", "v100"},
        {"DCGAN LSUN bs64 amp", "V100", "CycleGAN", "v100"},
        {"PointNet ShapeNet bs32", "V100", "ResNet-18 (batch size 32)", "v100"},
        {"ResNet18 CIFAR-10 bs64", "K80", "ResNet-18 (batch size 64)", "k80"},
        {"ResNet18 CIFAR-10 bs64", "P100", "ResNet-18 (batch size 64)", "p100"},
        {"ResNet18 CIFAR-10 bs64", "A100-SXM", "ResNet-18 (batch size 64)", "v100"},
        {"ResNet18 CIFAR-10 bs64", NULL, "ResNet-18 (batch size 64)", "v100"},
        {"ResNet-50 (batch size 16)", "p100", "ResNet-50 (batch size 16)", "p100"}, /* Gavel */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int l = eco_coloc_find(cases[c].lucid, NULL);
        assert_true(l >= 0);
        int g = eco_coloc_gavel_match((size_t)l, cases[c].type);
        if (g < 0 || strcmp(eco_coloc_workload((size_t)g)->name, cases[c].gavel) != 0 ||
            strcmp(eco_coloc_workload((size_t)g)->gpu_type, cases[c].gavel_type) != 0)
            fail_msg("%s on %s: got %s, expected %s on %s", cases[c].lucid,
                     cases[c].type ? cases[c].type : "(null)",
                     g < 0 ? "none" : eco_coloc_workload((size_t)g)->name, cases[c].gavel,
                     cases[c].gavel_type);
    }
    /* every Lucid workload has a counterpart */
    for (size_t i = 0; i < eco_coloc_n_workloads(); i++) {
        int g = eco_coloc_gavel_match(i, "V100");
        assert_true(g >= 0);
        assert_int_equal(eco_coloc_workload((size_t)g)->source, ECO_COLOC_GAVEL);
    }
    assert_int_equal(eco_coloc_gavel_match(eco_coloc_n_workloads(), "V100"), -EINVAL);
}

/* Two ResNet50 ImageNet bs32 jobs of 100 s on one V100. Lucid did not measure the pair: its
 * utilisation rule gives 2^-0.5 = 0.70711 each (1.41 summed), so live (deciding with Lucid)
 * and share-fit both share. Judged by Lucid both end at 100 / 0.70711 = 141.42 s; judged by
 * Gavel (ResNet-50 (batch size 32) with itself on V100: 0.366248 each) at 100 / 0.366248 =
 * 273.04 s, later than one after the other (200 s): sharing loses. exclusive is unchanged. */
static void test_judge_gavel(void **state)
{
    (void)state;
    const char *r = "ResNet50 ImageNet bs32";
    struct eco_srv_job j[] = {job(1, r, 1, 100), job(2, r, 1, 100)};
    struct eco_srv_params p = params(1);
    struct eco_srv_job_out o[2];
    struct eco_srv_result res;
    static const char *const sharing[] = {"live", "share-fit"};
    for (int s = 0; s < 2; s++) {
        p.judge = ECO_SRV_JUDGE_LUCID;
        assert_int_equal(eco_srv_run(&p, sharing[s], j, 2, o, &res, NULL), 0);
        near(o[1].start_s, 0, 0);
        near(res.makespan_s, 100 / sqrt(0.5), 1e-6);
        p.judge = ECO_SRV_JUDGE_GAVEL;
        assert_int_equal(eco_srv_run(&p, sharing[s], j, 2, o, &res, NULL), 0);
        near(o[1].start_s, 0, 0);
        near(o[0].end_s, 100 / 0.366248, 1e-3);
        near(res.makespan_s, 100 / 0.366248, 1e-3);
    }
    /* lossy sharing: Gavel's pair sums to 0.73 < 1 for the whole shared time, Lucid's to
     * 1.414: none */
    near(res.lossy_gpu_s, res.shared_gpu_s, 0);
    assert_true(res.lossy_gpu_s > 270);
    p.judge = ECO_SRV_JUDGE_LUCID;
    assert_int_equal(eco_srv_run(&p, "share-fit", j, 2, o, &res, NULL), 0);
    assert_true(res.shared_gpu_s > 140);
    near(res.lossy_gpu_s, 0, 0);
    p.judge = ECO_SRV_JUDGE_GAVEL;
    assert_int_equal(eco_srv_run(&p, "exclusive", j, 2, o, &res, NULL), 0);
    near(res.makespan_s, 200, 1e-9);
    near(res.lossy_gpu_s, 0, 0);

    enum eco_srv_judge jd;
    assert_int_equal(eco_srv_judge_parse("Gavel", &jd), 0);
    assert_int_equal(jd, ECO_SRV_JUDGE_GAVEL);
    assert_int_equal(eco_srv_judge_parse("lucid", &jd), 0);
    assert_int_equal(jd, ECO_SRV_JUDGE_LUCID);
    assert_int_equal(eco_srv_judge_parse("truth", &jd), -EINVAL);
    assert_int_equal(eco_srv_judge_parse(NULL, &jd), -EINVAL);
    struct eco_error err = {{0}};
    p.judge = 7;
    assert_int_equal(eco_srv_run(&p, "live", j, 2, o, &res, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "judge"));
}

/* --decide: the same ResNet50 ImageNet bs32 pair, live deciding with Gavel's pairs (0.366248
 * each, 0.73 summed, under share_min_gain 1.1) does not share: job 2 waits for job 1 (ends at
 * 100 s), whichever model judges. share-fit never looks a pair up: unchanged. Deciding with
 * Lucid is the default. */
static void test_decide_gavel(void **state)
{
    (void)state;
    const char *r = "ResNet50 ImageNet bs32";
    struct eco_srv_job j[] = {job(1, r, 1, 100), job(2, r, 1, 100)};
    struct eco_srv_params p = params(1);
    struct eco_srv_job_out o[2];
    struct eco_srv_result res;
    assert_int_equal(p.decide, ECO_SRV_JUDGE_LUCID);
    p.decide = ECO_SRV_JUDGE_GAVEL;
    for (int judge = ECO_SRV_JUDGE_LUCID; judge <= ECO_SRV_JUDGE_GAVEL; judge++) {
        p.judge = judge;
        assert_int_equal(eco_srv_run(&p, "live", j, 2, o, &res, NULL), 0);
        near(o[0].end_s, 100, 1e-9);
        assert_true(o[1].start_s >= 100);
        near(res.shared_gpu_s, 0, 0);
        assert_true(res.makespan_s >= 200 && res.makespan_s < 100 / 0.366248);
    }
    p.judge = ECO_SRV_JUDGE_LUCID;
    assert_int_equal(eco_srv_run(&p, "share-fit", j, 2, o, &res, NULL), 0);
    near(res.makespan_s, 100 / sqrt(0.5), 1e-6);

    struct eco_error err = {{0}};
    p.decide = 5;
    assert_int_equal(eco_srv_run(&p, "live", j, 2, o, &res, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "decide"));
}

/* What the daemon knows (--unknown-workloads): no strategy may look a pair up, so the decision
 * model cannot change any strategy's run; with known workloads only live's may change. A drawn
 * series of 40 jobs on 8 V100s, judged by Lucid and by Gavel. */
static void test_unknown_knowledge(void **state)
{
    (void)state;
    struct eco_srv_series_spec spec = {.n_jobs = 40,
                                       .work_min_s = 600,
                                       .work_max_s = 3600,
                                       .two_gpu_frac = 0.2,
                                       .gpu_mem_mb = 32768};
    struct eco_srv_job jobs[40];
    struct eco_srv_job_out oa[40], ob[40];
    struct eco_srv_result ra, rb;
    assert_int_equal(eco_srv_series(3, &spec, jobs, NULL), 0);
    static const char *const strat[] = {"static", "exclusive", "memory-threshold", "live",
                                        "share-fit"};
    int live_differs = 0;
    for (int known = 0; known <= 1; known++)
        for (int judge = ECO_SRV_JUDGE_LUCID; judge <= ECO_SRV_JUDGE_GAVEL; judge++)
            for (size_t s = 0; s < sizeof strat / sizeof strat[0]; s++) {
                struct eco_srv_params p;
                eco_srv_params_default(&p);
                p.known_workloads = known;
                p.judge = judge;
                p.decide = ECO_SRV_JUDGE_LUCID;
                assert_int_equal(eco_srv_run(&p, strat[s], jobs, 40, oa, &ra, NULL), 0);
                p.decide = ECO_SRV_JUDGE_GAVEL;
                assert_int_equal(eco_srv_run(&p, strat[s], jobs, 40, ob, &rb, NULL), 0);
                int same = memcmp(&ra, &rb, sizeof ra) == 0 && memcmp(oa, ob, sizeof oa) == 0;
                if (!known || strcmp(strat[s], "live") != 0) {
                    if (!same)
                        fail_msg("%s (known %d, judge %d): the decision model changed the run",
                                 strat[s], known, judge);
                } else {
                    live_differs += !same;
                }
            }
    assert_int_equal(live_differs, 2); /* known workloads: live decides with the model */
}

static void test_series_and_bad_input(void **state)
{
    (void)state;
    struct eco_srv_series_spec spec = {.n_jobs = 50,
                                       .work_min_s = 60,
                                       .work_max_s = 600,
                                       .two_gpu_frac = 0.5,
                                       .gpu_mem_mb = 16384};
    struct eco_srv_job a[50], b[50];
    assert_int_equal(eco_srv_series(9, &spec, a, NULL), 0);
    assert_int_equal(eco_srv_series(9, &spec, b, NULL), 0);
    int two = 0;
    for (int i = 0; i < 50; i++) {
        assert_true(a[i].id == b[i].id && a[i].wl == b[i].wl && a[i].n_gpus == b[i].n_gpus &&
                    a[i].work_s == b[i].work_s && a[i].submit_s == b[i].submit_s);
        assert_true(a[i].work_s >= 60 && a[i].work_s <= 600);
        assert_true(a[i].gpu_mem_mb > 0 && a[i].gpu_mem_mb <= 16384); /* BERT fp32 excluded */
        assert_int_equal(eco_coloc_workload(a[i].wl)->source, ECO_COLOC_LUCID);
        two += a[i].n_gpus == 2;
    }
    assert_true(two > 10 && two < 40);

    /* Poisson arrivals: the same jobs, the first at 0, exponential gaps of mean 50 s (mean
     * and standard deviation of 49 gaps within 40% of 50 s: 3 standard errors), another
     * stream for another seed */
    spec.submit_every_s = 50;
    spec.poisson = 1;
    assert_int_equal(eco_srv_series(9, &spec, b, NULL), 0);
    double sum = 0, sq = 0;
    for (int i = 0; i < 50; i++) {
        assert_true(a[i].wl == b[i].wl && a[i].n_gpus == b[i].n_gpus && a[i].work_s == b[i].work_s);
        if (i == 0) {
            near(b[i].submit_s, 0, 0);
            continue;
        }
        double g = b[i].submit_s - b[i - 1].submit_s;
        assert_true(g >= 0);
        sum += g;
        sq += g * g;
    }
    double m = sum / 49, sd = sqrt(sq / 49 - m * m);
    assert_true(m > 30 && m < 70 && sd > 30 && sd < 70);
    assert_true(b[49].submit_s != 49 * 50.0); /* not the even spacing */
    struct eco_srv_job c2[50];
    assert_int_equal(eco_srv_series(10, &spec, c2, NULL), 0);
    assert_true(c2[1].submit_s != b[1].submit_s);
    spec.poisson = 0;
    assert_int_equal(eco_srv_series(9, &spec, b, NULL), 0);
    near(b[49].submit_s, 49 * 50.0, 1e-9);
    spec.submit_every_s = 0;

    struct eco_error err = {{0}};
    struct eco_srv_params p = params(2);
    struct eco_srv_result res;
    assert_int_equal(eco_srv_run(&p, "fastest", a, 2, NULL, &res, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown strategy 'fastest'"));
    struct eco_srv_job wide = job(1, "ResNet18 CIFAR-10 bs32", 3, 10);
    assert_int_equal(eco_srv_run(&p, "live", &wide, 1, NULL, &res, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "job 1"));
    p.dt_s = 0;
    assert_int_equal(eco_srv_run(&p, "live", a, 2, NULL, &res, &err), -EINVAL);
    spec.gpu_mem_mb = 100;
    assert_int_equal(eco_srv_series(1, &spec, a, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "fits"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_sets),
        cmocka_unit_test(test_double_start_oom),
        cmocka_unit_test(test_energy),
        cmocka_unit_test(test_three_per_gpu),
        cmocka_unit_test(test_gavel_match),
        cmocka_unit_test(test_judge_gavel),
        cmocka_unit_test(test_decide_gavel),
        cmocka_unit_test(test_unknown_knowledge),
        cmocka_unit_test(test_series_and_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
