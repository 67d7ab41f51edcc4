/* SPDX-License-Identifier: MIT */
/* Energy model and power-down: a hand-computed scenario with a shutdown and a boot, energy
 * balance on real traces, power-down decisions on small timelines, job speed on other GPU
 * types, the timeline writer and bad power figures. */
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
#include "sim/sim.h"
#include "test_util.h"
#include "sim/trace.h"

#define assert_rel(a, b, tol) assert_rel_at((a), (b), (tol), #a, __LINE__)
static void assert_rel_at(double a, double b, double tol, const char *what, int line)
{
    double scale = fabs(b) > 1 ? fabs(b) : 1;
    if (!(fabs(a - b) <= tol * scale))
        print_error("line %d: %s = %.17g, want %.17g\n", line, what, a, b);
    assert_true(fabs(a - b) <= tol * scale);
}

/* Two nodes of 2 V100 GPUs with round power figures. */
static struct eco_cluster *two_nodes(void)
{
    struct eco_cluster *c = eco_cluster_create();
    struct eco_node_group g;
    struct eco_error err;
    eco_node_group_defaults(&g, eco_catalog_find("V100"), 2);
    g.count = 2;
    g.base_w = 100;
    g.off_w = 10;
    g.boot_s = 50;
    g.shutdown_s = 20;
    g.gpu_idle_w = 20;
    g.limit_w = 250;
    g.cycle_j = 0; /* break-even (140 x 70 - 10 x 20) / 130 = 73.8 s (eco_node_group_breakeven_s) */
    assert_int_equal(eco_cluster_add_group(c, &g, &err), 0);
    return c;
}

struct rows {
    struct eco_timeline_row r[64];
    size_t n;
};

static void collect(void *ctx, const struct eco_timeline_row *row)
{
    struct rows *rows = ctx;
    if (rows->n < 64)
        rows->r[rows->n++] = *row;
}

static void test_hand_computed(void **state)
{
    (void)state;
    /* j0 (2 GPUs, 100 s) on node 0 and j1 (2 GPUs, 40 s) on node 1 at t=0. Under idle:75
     * (above the nodes' 73.8 s break-even) node 1 idles from 40, shuts down 115..135, is off
     * from 135; node 0 idles from 100, shuts down 175..195, is off from 195. j2 (2 GPUs, 50 s)
     * arrives at 200, wakes node 0 (boot 200..250) and runs 250..300. */
    struct eco_cluster *c = two_nodes();
    static const struct eco_test_jspec js[] = {{0, 100, 2}, {0, 40, 2}, {200, 50, 2}};
    struct eco_jobset *set = eco_test_make_jobs(js, 3);
    const char *params;
    struct rows rows = {.n = 0};
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"),
        .placement = eco_placement_find("pack"),
        .power_down = eco_powerdown_find("idle:75", &params),
        .seed = 1,
        .timeline = collect,
        .timeline_ctx = &rows,
    };
    cfg.power_down_params = params;
    struct eco_sim_result res;
    struct eco_error err;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    double speed, p;
    assert_int_equal(
        eco_power_eval(eco_catalog_find("V100"), ECO_WORKLOAD_GENERIC, 250, &speed, &p), 0);
    assert_rel(speed, 1.0, 1e-12);
    const struct eco_energy *en = &res.summary.energy_j;
    const double idle = 2 * 20.0 * (75 + 75);               /* node 1 40..115, node 0 100..175 */
    const double base = 100.0 * ((175 + 50) + 115);         /* on: node 0 0..175, 250..300 */
    const double trans = (100 + 2 * 20.0) * (20 + 20 + 50); /* two shutdowns, one boot */
    const double off = 10.0 * ((300 - 135) + (200 - 195));
    assert_rel(en->gpu_busy, 2 * p * (100 + 40 + 50), 1e-9);
    assert_rel(en->gpu_idle, idle, 1e-9);
    assert_rel(en->node_base, base, 1e-9);
    assert_rel(en->transitions, trans, 1e-9);
    assert_rel(en->off, off, 1e-9);
    assert_rel(en->total, 2 * p * 190 + idle + base + trans + off, 1e-9);
    assert_rel(res.summary.avg_power_w, en->total / 300, 1e-9);
    assert_rel(res.summary.peak_power_w, 2 * (100 + 2 * p), 1e-9);
    assert_int_equal(res.summary.node_boots, 1);
    assert_int_equal(res.summary.node_shutdowns, 2);
    assert_int_equal(res.summary.power_cycles, 2);
    assert_rel(res.summary.cycle_cost_j, 0, 1e-12);
    /* Per job and per node. */
    assert_rel(set->jobs[0].energy_j, 2 * p * 100, 1e-9);
    assert_rel(set->jobs[1].energy_j, 2 * p * 40, 1e-9);
    assert_rel(set->jobs[2].energy_j, 2 * p * 50, 1e-9);
    assert_rel(res.node_energy_j[0],
               2 * p * 150 + 2 * 20.0 * 75 + 100.0 * 225 + 140.0 * 70 + 10.0 * 5, 1e-9);
    assert_rel(res.node_energy_j[1],
               2 * p * 40 + 2 * 20.0 * 75 + 100.0 * 115 + 140.0 * 20 + 10.0 * 165, 1e-9);
    assert_int_equal(res.node_boots[0], 1);
    assert_int_equal(res.node_boots[1], 0);
    /* j2 waited for the boot. */
    assert_true(set->jobs[2].start_s == 250 && set->jobs[2].end_s == 300);
    assert_rel(set->jobs[2].wait_s, 50, 1e-12);
    assert_int_equal(res.summary.boot_delayed_starts, 1);
    /* The timeline: at 200 one node powered (booting) and j2 queued; at 250 j2 runs. */
    int seen_boot = 0;
    for (size_t i = 0; i < rows.n; i++)
        if (rows.r[i].t_s == 200) {
            seen_boot = 1;
            assert_int_equal(rows.r[i].nodes_on, 1);
            assert_int_equal(rows.r[i].queued, 1);
            assert_rel(rows.r[i].power_w, 140 + 10, 1e-12);
        }
    assert_true(seen_boot);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

/* boot_delayed_starts counts the starts that waited for a node's boot, not every wait nor a
 * start on a node that was booted earlier. */
static void test_boot_delayed_starts(void **state)
{
    (void)state;
    /* j0 (0 s, 2 GPUs, 100 s) on node 0, j1 (0 s, 2 GPUs, 40 s) on node 1; j2 (10 s, 2 GPUs,
     * 30 s) waits for j1's end and starts at 40 on node 1 (a wait, no boot). Under idle:75
     * node 1 idles from 70 (off 165), node 0 from 100 (off 195). j3 (200 s, 2 GPUs, 100 s)
     * boots node 0 and starts at 250 (boot-delayed); j4 (260 s, 2 GPUs, 10 s) finds no free
     * GPU, boots node 1 (260..310) and starts at 310 (boot-delayed). With none, j2 still
     * waits and nothing is boot-delayed. */
    static const struct eco_test_jspec js[] = {
        {0, 100, 2}, {0, 40, 2}, {10, 30, 2}, {200, 100, 2}, {260, 10, 2}};
    for (int pd = 0; pd < 2; pd++) {
        struct eco_cluster *c = two_nodes();
        struct eco_jobset *set = eco_test_make_jobs(js, 5);
        const char *params;
        struct eco_sim_config cfg = {
            .policy = eco_policy_find("fifo"),
            .placement = eco_placement_find("pack"),
            .power_down = eco_powerdown_find(pd ? "idle:75" : "none", &params),
            .seed = 1,
        };
        cfg.power_down_params = params;
        struct eco_sim_result res;
        struct eco_error err;
        assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
        assert_rel(set->jobs[2].start_s, 40, 1e-12);
        if (pd) {
            assert_rel(set->jobs[3].start_s, 250, 1e-12);
            assert_rel(set->jobs[4].start_s, 310, 1e-12);
            assert_int_equal(res.summary.node_boots, 2);
            assert_int_equal(res.summary.boot_delayed_starts, 2);
        } else {
            assert_int_equal(res.summary.node_boots, 0);
            assert_int_equal(res.summary.boot_delayed_starts, 0);
        }
        eco_sim_result_fini(&res);
        eco_jobset_destroy(set);
        eco_cluster_destroy(c);
    }
}

static void test_none_keeps_nodes_on(void **state)
{
    (void)state;
    struct eco_cluster *c = two_nodes();
    static const struct eco_test_jspec js[] = {{0, 100, 2}, {0, 40, 2}, {200, 50, 2}};
    struct eco_jobset *set = eco_test_make_jobs(js, 3);
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"), .placement = eco_placement_find("pack"), .seed = 1};
    struct eco_sim_result res;
    struct eco_error err;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    double speed, p;
    eco_power_eval(eco_catalog_find("V100"), ECO_WORKLOAD_GENERIC, 250, &speed, &p);
    const struct eco_energy *en = &res.summary.energy_j;
    /* j2 runs 200..250 at once: both hosts on for 250 s; idle GPU-seconds = 4 x 250 - busy
     * 2 x 190. */
    assert_rel(en->node_base, 2 * 100.0 * 250, 1e-9);
    assert_rel(en->gpu_idle, 20.0 * (4 * 250 - 2 * 190), 1e-9);
    assert_rel(en->gpu_busy, 2 * p * 190, 1e-9);
    assert_true(en->off == 0 && en->transitions == 0);
    assert_int_equal(res.summary.node_boots, 0);
    assert_true(set->jobs[2].start_s == 200);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void check_balance(const struct eco_jobset *set, const struct eco_sim_result *res)
{
    const struct eco_energy *en = &res->summary.energy_j;
    double jobs = 0, nodes = 0;
    for (size_t i = 0; i < set->n; i++)
        jobs += set->jobs[i].energy_j;
    for (uint32_t n = 0; n < res->n_nodes; n++)
        nodes += res->node_energy_j[n];
    assert_rel(en->gpu_busy + en->gpu_idle + en->node_base + en->off + en->transitions, en->total,
               1e-9);
    assert_rel(jobs, en->gpu_busy, 1e-9);
    assert_rel(nodes, en->total, 1e-9);
    assert_true(en->gpu_busy > 0 && en->node_base > 0);
}

static void test_balance_real_traces(void **state)
{
    (void)state;
    const char *files[] = {"cluster05.csv.gz", "cluster10.csv.gz"};
    const char *pds[] = {"none", "idle:600", "idle:1800", "forecast"};
    const char *pls[] = {"pack", "energy", "spread"};
    for (size_t f = 0; f < 2; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/data/itp/%s", ECO_SOURCE_DIR, files[f]);
        struct eco_jobset *set = eco_jobset_create();
        struct eco_trace_opts opts = {.format = ECO_TRACE_AUTO};
        struct eco_error err;
        assert_int_equal(eco_trace_load(path, &opts, set, &err), 0);
        struct eco_cluster *c = NULL;
        assert_int_equal(eco_cluster_auto("peak", set, &c, &err), 0);
        for (size_t i = 0; i < 4; i++)
            for (size_t k = 0; k < 3; k++) {
                const char *params;
                struct eco_sim_config cfg = {
                    .policy = eco_policy_find(k == 2 ? "las" : "easy"),
                    .placement = eco_placement_find(pls[k]),
                    .power_down = eco_powerdown_find(pds[i], &params),
                    .workload_mix = k == 1 ? "default" : NULL,
                    .seed = 3,
                };
                cfg.power_down_params = params;
                struct eco_sim_result res;
                assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
                assert_int_equal(res.summary.completed, set->n);
                check_balance(set, &res);
                if (i > 0)
                    assert_true(res.summary.energy_j.off > 0);
                eco_sim_result_fini(&res);
            }
        eco_cluster_destroy(c);
        eco_jobset_destroy(set);
    }
}

/* A view over `n` nodes of 4 GPUs for calling power-down policies directly. */
struct pdv {
    struct eco_cluster *c;
    uint8_t state[8];
    double idle_since[8];
    uint32_t idle_nodes[8];
    double idle_times[8];
    struct eco_job jobs[4];
    uint32_t queue[4];
    struct eco_pd_view v;
};

static void pdv_init(struct pdv *p, uint32_t n)
{
    struct eco_error err;
    char spec[16];
    snprintf(spec, sizeof spec, "%ux4", n);
    memset(p, 0, sizeof *p);
    assert_int_equal(eco_cluster_parse_spec(spec, &p->c, &err), 0);
    p->v = (struct eco_pd_view){.cluster = p->c,
                                .jobs = p->jobs,
                                .queue = p->queue,
                                .node_state = p->state,
                                .idle_since = p->idle_since,
                                .idle_nodes = p->idle_nodes,
                                .idle_times = p->idle_times};
    for (uint32_t i = 0; i < n; i++) {
        p->state[i] = ECO_NODE_ON;
        p->idle_since[i] = -1;
    }
    /* No cycle cost unless a test sets one: the 4-GPU V100 node's break-even is then
     * (335.83 x 330 - 15 x 30) / 320.83 = 344.0 s, below the waits tested. */
    p->c->groups[0].cycle_j = 0;
}

/* Node i idle since t (appended to the idle list). */
static void pdv_idle(struct pdv *p, uint32_t i, double t)
{
    p->idle_since[i] = t;
    p->idle_nodes[p->v.n_idle_nodes] = i;
    p->idle_times[p->v.n_idle_nodes++] = t;
    p->v.free_on_gpus += 4;
}

static void test_idle_policy_decisions(void **state)
{
    (void)state;
    struct pdv p;
    pdv_init(&p, 3);
    pdv_idle(&p, 1, 100);
    pdv_idle(&p, 2, 200);
    const char *params;
    const struct eco_powerdown_ops *ops = eco_powerdown_find("idle:600", &params);
    struct eco_error err;
    struct eco_powerdown *pd = ops->create(p.c, params, &err);
    assert_non_null(pd);
    struct eco_pd_decisions d = {0};
    /* At 699 nothing is due; the next pass is wanted at 700. */
    p.v.now_s = 699;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown + d.n_boot, 0);
    assert_true(ops->next_wakeup(pd, &p.v) == 700);
    /* At 700 node 1 goes, node 2 (idle since 200) stays until 800. */
    p.v.now_s = 700;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown, 1);
    assert_int_equal(d.shutdown[0], 1);
    /* A waiting 8-GPU job with node 2 idle (4 GPUs) and nodes 0, 1 off: one boot, and no
     * shutdown while it waits. */
    p.state[0] = p.state[1] = ECO_NODE_OFF;
    p.idle_since[1] = -1;
    p.jobs[0] = (struct eco_job){.gpus = 8, .gpu_type = -1, .state = ECO_JOB_QUEUED};
    p.queue[0] = 0;
    p.v.queue_len = 1;
    p.v.now_s = 900;
    d.n_shutdown = d.n_boot = 0;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_boot, 1);
    assert_int_equal(d.boot[0], 0);
    assert_int_equal(d.n_shutdown, 0);
    eco_pd_decisions_fini(&d);
    ops->destroy(pd);
    eco_cluster_destroy(p.c);
}

static void test_forecast_decisions(void **state)
{
    (void)state;
    struct pdv p;
    pdv_init(&p, 4);
    for (uint32_t i = 0; i < 4; i++)
        pdv_idle(&p, i, 0);
    const char *params;
    /* margin 0.1 (the default is 0.5) so that the reserve is exactly one node below. */
    const struct eco_powerdown_ops *ops = eco_powerdown_find("forecast:margin=0.1", &params);
    struct eco_error err;
    struct eco_powerdown *pd = ops->create(p.c, params, &err);
    assert_non_null(pd);
    struct eco_pd_decisions d = {0};
    /* No arrivals: no reserve, a quiet cluster: every idle node goes at once. */
    p.v.now_s = 10;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown, 4);
    assert_int_equal(d.n_boot, 0);
    /* Busy: 60 arrivals of 8 GPUs in the last hour -> reserve 0.1 x 8 x 60 / 3600 x 300 =
     * 4 GPUs (one node), and frequent arrivals keep idle nodes for the dwell time. */
    struct pdv q;
    pdv_init(&q, 4);
    struct eco_powerdown *pd2 = ops->create(q.c, params, &err);
    for (int k = 0; k < 60; k++) {
        q.v.now_s = 60.0 * k;
        q.v.arrivals = (uint64_t)k + 1;
        q.v.arrived_gpus = 8.0 * (k + 1);
        q.v.last_arrival_gpus = 8;
        d.n_shutdown = d.n_boot = 0;
        assert_int_equal(ops->decide(pd2, &q.v, &d), 0);
    }
    /* Now nodes 0..3 become idle at 3540; at 3600 (< dwell) none goes. */
    for (uint32_t i = 0; i < 4; i++)
        pdv_idle(&q, i, 3540);
    q.v.now_s = 3600;
    d.n_shutdown = d.n_boot = 0;
    assert_int_equal(ops->decide(pd2, &q.v, &d), 0);
    assert_int_equal(d.n_shutdown, 0);
    /* After the dwell (900 s) three go and one stays as the reserve. */
    q.v.now_s = 3540 + 900;
    q.v.arrivals = 61;
    q.v.arrived_gpus = 8.0 * 61;
    d.n_shutdown = d.n_boot = 0;
    assert_int_equal(ops->decide(pd2, &q.v, &d), 0);
    assert_int_equal(d.n_shutdown, 3);
    /* All off, nothing idle: the reserve wakes one node ahead of need. */
    for (uint32_t i = 0; i < 4; i++)
        q.state[i] = ECO_NODE_OFF;
    q.v.n_idle_nodes = 0;
    q.v.free_on_gpus = 0;
    q.v.now_s += 1;
    d.n_shutdown = d.n_boot = 0;
    assert_int_equal(ops->decide(pd2, &q.v, &d), 0);
    assert_int_equal(d.n_boot, 1);
    eco_pd_decisions_fini(&d);
    ops->destroy(pd);
    ops->destroy(pd2);
    eco_cluster_destroy(p.c);
    eco_cluster_destroy(q.c);
}

static void test_powerdown_bad_values(void **state)
{
    (void)state;
    struct eco_cluster *c;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4", &c, &err), 0);
    static const char *bad[] = {"idle",
                                "idle:",
                                "idle:-5",
                                "idle:abc",
                                "idle:10s",
                                "none:3",
                                "forecast:x=1",
                                "forecast:margin=-1",
                                "forecast:window=0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *params;
        const struct eco_powerdown_ops *ops = eco_powerdown_find(bad[i], &params);
        assert_non_null(ops);
        err.msg[0] = '\0';
        assert_null(ops->create(c, params, &err));
        if (!strstr(err.msg, "--power-down"))
            print_error("'%s': message '%s'\n", bad[i], err.msg);
        assert_non_null(strstr(err.msg, "--power-down"));
    }
    const char *params;
    assert_null(eco_powerdown_find("sleep:5", &params));
    eco_cluster_destroy(c);
}

static void test_speed_on_faster_gpu(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x8:A100-SXM", &c, &err), 0);
    static const struct eco_test_jspec js[] = {{0, 1000, 8}};
    struct eco_jobset *set = eco_test_make_jobs(js, 1);
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"), .placement = eco_placement_find("pack"), .seed = 1};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    double speed, p;
    eco_power_eval(eco_catalog_find("A100-SXM"), ECO_WORKLOAD_GENERIC, 400, &speed, &p);
    assert_true(speed > 1);
    assert_rel(set->jobs[0].end_s, 1000 / speed, 1e-12);
    assert_rel(set->jobs[0].energy_j, 8 * p * 1000 / speed, 1e-9);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

static void test_energy_placement_prefers_efficient_type(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    /* P100 first in index order; the A100 node does the work for less energy. */
    assert_int_equal(eco_cluster_parse_spec("1x8:P100,1x8:A100-SXM", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    struct eco_job job = {.gpus = 2, .gpu_type = -1, .workload = 2, .remaining_s = 100};
    struct eco_alloc a[4];
    assert_int_equal(eco_placement_find("energy")->place(NULL, fm, &job, a, 4), 1);
    assert_int_equal(a[0].node, 1);
    assert_int_equal(eco_placement_find("pack")->place(NULL, fm, &job, a, 4), 1);
    assert_int_equal(a[0].node, 0);
    /* A partly used node of the efficient type is filled before an idle one. */
    eco_freemap_take(fm, 1, 6);
    assert_int_equal(eco_placement_find("energy")->place(NULL, fm, &job, a, 4), 1);
    assert_int_equal(a[0].node, 1);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

/* energy's partly used node is the best fit first, end times only among equally full nodes:
 * choosing by end time alone put a 1-GPU job on the emptier node, and the 7-GPU job after it
 * found no node with room though 7 GPUs were free (openb at 0.75x peak with idle:600: average
 * JCT 13.41 h against pack's 9.86 h; with best fit first 9.03 h). */
static void test_energy_placement_best_fit_first(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("4x8:V100", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    const struct eco_placement_ops *energy = eco_placement_find("energy");
    eco_freemap_set_now(fm, 0);
    eco_freemap_take(fm, 0, 7); /* 1 free, its jobs end at 100 */
    eco_freemap_set_busy_until(fm, 0, 100);
    eco_freemap_take(fm, 1, 1); /* 7 free, busy until 1000: covers the new job's end */
    eco_freemap_set_busy_until(fm, 1, 1000);
    struct eco_job one = {.gpus = 1, .gpu_type = -1, .remaining_s = 500};
    struct eco_alloc a[4];
    assert_int_equal(energy->place(NULL, fm, &one, a, 4), 1);
    assert_int_equal(a[0].node, 0);
    eco_freemap_take(fm, a[0].node, 1);
    struct eco_job seven = {.gpus = 7, .gpu_type = -1, .remaining_s = 500};
    assert_int_equal(energy->place(NULL, fm, &seven, a, 4), 1);
    assert_int_equal(a[0].node, 1);
    /* Equally full nodes: the one whose jobs cover the new job's end (node 3, not node 2). */
    eco_freemap_take(fm, 2, 4);
    eco_freemap_set_busy_until(fm, 2, 100);
    eco_freemap_take(fm, 3, 4);
    eco_freemap_set_busy_until(fm, 3, 1000);
    assert_int_equal(energy->place(NULL, fm, &one, a, 4), 1);
    assert_int_equal(a[0].node, 3);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

static void test_timeline_sampling(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct eco_timeline_writer w;
    eco_timeline_writer_init(&w, f, 10);
    struct eco_timeline_row r1 = {.t_s = 0, .power_w = 100, .busy_gpus = 1, .nodes_on = 1};
    struct eco_timeline_row r2 = {.t_s = 15, .power_w = 200, .busy_gpus = 2, .nodes_on = 2};
    struct eco_timeline_row r3 = {.t_s = 20, .power_w = 300, .busy_gpus = 3, .nodes_on = 2};
    eco_timeline_write(&w, &r1);
    eco_timeline_write(&w, &r2);
    eco_timeline_write(&w, &r3);
    assert_int_equal(eco_timeline_writer_finish(&w, 30), 0);
    fclose(f);
    assert_string_equal(buf, "time_s,power_w,budget_w,busy_gpus,nodes_on,queued\n"
                             "0,100,0,1,1,0\n10,100,0,1,1,0\n20,300,0,3,2,0\n30,300,0,3,2,0\n");
    free(buf);
}

static void test_bad_power_figures(void **state)
{
    (void)state;
    struct eco_node_group g;
    struct eco_error err;
    int v100 = eco_catalog_find("V100");
    static const struct {
        const char *field;
        double value;
    } bad[] = {
        {"base_w", -1},          {"off_w", -0.5},        {"boot_s", -10},
        {"shutdown_s", -1},      {"gpu_idle_w", 251},    {"gpu_idle_w", -2},
        {"power_limit_w", 99},   {"power_limit_w", 300}, {"gpu_idle_ctx_w", -1},
        {"gpu_idle_ctx_w", 251}, {"gpu_low_w", -3},      {"gpu_low_w", 1e9},
        {"trans_w", -2},         {"cycle_j", -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        eco_node_group_defaults(&g, v100, 8);
        assert_int_equal(eco_node_group_check(&g, &err), 0);
        double *dst = !strcmp(bad[i].field, "base_w")           ? &g.base_w
                      : !strcmp(bad[i].field, "off_w")          ? &g.off_w
                      : !strcmp(bad[i].field, "boot_s")         ? &g.boot_s
                      : !strcmp(bad[i].field, "shutdown_s")     ? &g.shutdown_s
                      : !strcmp(bad[i].field, "gpu_idle_w")     ? &g.gpu_idle_w
                      : !strcmp(bad[i].field, "gpu_idle_ctx_w") ? &g.gpu_idle_ctx_w
                      : !strcmp(bad[i].field, "gpu_low_w")      ? &g.gpu_low_w
                      : !strcmp(bad[i].field, "trans_w")        ? &g.trans_w
                      : !strcmp(bad[i].field, "cycle_j")        ? &g.cycle_j
                                                                : &g.limit_w;
        *dst = bad[i].value;
        err.msg[0] = '\0';
        assert_int_equal(eco_node_group_check(&g, &err), -EINVAL);
        if (!strstr(err.msg, bad[i].field))
            print_error("%s=%g: message '%s'\n", bad[i].field, bad[i].value, err.msg);
        assert_non_null(strstr(err.msg, bad[i].field));
    }
}

/* The catalog's power states and host classes, each against the figures of its source
 * (catalog.c, docs/models/energy.md "Every constant and its source"). */
static void test_power_state_constants(void **state)
{
    (void)state;
    static const struct {
        const char *type;
        double idle_w, ctx_w, low_w, host8_w;
    } want[] = {
        /* V100: idle snapshot 23 W, Zeus ncf median 37 W at 250 W; DGX-1 host = 941 / 3. */
        {"V100", 23, 23 + 0.27 * 14, 37, 941.0 / 3},
        {"P100", 25, 25 + 0.27 * 9, 34, 941.0 / 3},
        {"A40", 22.5, 22.5 + 0.27 * 64.5, 87, 941},
        {"RTX6000", 20, 20 + 0.27 * 46, 66, 941.0 / 3},
        /* A100-SXM: Acme's steps 63.4 -> 67.3 -> 77.7 W added to the 45 W snapshot. */
        {"A100-PCIE", 32, 32 + 0.27 * 14.3 * 0.625, 32 + 14.3 * 0.625, 941},
        {"A100-SXM", 45, 45 + 0.27 * 14.3, 45 + 14.3, 941},
        {"H100-SXM", 86.5, 86.5 + 0.27 * 14.3 * 1.75, 86.5 + 14.3 * 1.75, 941 * 4600.0 / 3300},
        {"H100-NVL", 61.5, 61.5 + 0.27 * 14.3, 61.5 + 14.3, 941},
    };
    assert_int_equal(sizeof want / sizeof want[0], eco_catalog_count());
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int ty = eco_catalog_find(want[i].type);
        assert_true(ty >= 0);
        const struct eco_gpu_type *t = eco_catalog_get((size_t)ty);
        assert_rel(t->idle_w, want[i].idle_w, 1e-12);
        assert_rel(t->idle_ctx_w, want[i].ctx_w, 1e-12);
        assert_rel(t->low_util_w, want[i].low_w, 1e-12);
        assert_true(t->idle_w < t->idle_ctx_w && t->idle_ctx_w < t->low_util_w &&
                    t->low_util_w < t->min_limit_w);
        assert_non_null(t->host_source);
        struct eco_node_group g;
        eco_node_group_defaults(&g, ty, 8);
        assert_rel(g.base_w, want[i].host8_w, 1e-12);
        assert_rel(g.gpu_idle_ctx_w, t->idle_ctx_w, 1e-12);
        assert_rel(g.gpu_low_w, t->low_util_w, 1e-12);
        assert_rel(g.boot_s, 300, 1e-12);
        assert_rel(g.shutdown_s, 30, 1e-12);
        assert_rel(g.cycle_j, 180e3, 1e-12);
        assert_rel(eco_node_group_trans_w(&g), g.base_w + 8 * t->idle_w, 1e-12);
    }
}

/* A GPU holding a context: piecewise linear through idle-with-context, the low-utilisation
 * point (15 %) and busy power. */
static void test_gpu_power_curve(void **state)
{
    (void)state;
    struct eco_node_group g;
    eco_node_group_defaults(&g, eco_catalog_find("V100"), 8);
    const double ctx = 23 + 0.27 * 14;
    assert_rel(eco_node_group_gpu_power_w(&g, 200, 0), ctx, 1e-12);
    assert_rel(eco_node_group_gpu_power_w(&g, 200, -1), ctx, 1e-12);
    assert_rel(eco_node_group_gpu_power_w(&g, 200, 0.075), (ctx + 37) / 2, 1e-12);
    assert_rel(eco_node_group_gpu_power_w(&g, 200, 0.15), 37, 1e-12);
    assert_rel(eco_node_group_gpu_power_w(&g, 200, 0.575), 37 + 163 * 0.5, 1e-12);
    assert_rel(eco_node_group_gpu_power_w(&g, 200, 2), 200, 1e-12);
    /* A busy figure below the low point (a very low limit): flat at the low point. */
    assert_rel(eco_node_group_gpu_power_w(&g, 30, 1), 37, 1e-12);
}

/* Break-even idle time by hand: idle node 100 + 2 x 20 = 140 W, off 10 W, boot 50 s,
 * shutdown 10 s. */
static void test_breakeven(void **state)
{
    (void)state;
    struct eco_node_group g;
    eco_node_group_defaults(&g, eco_catalog_find("V100"), 2);
    g.base_w = 100;
    g.gpu_idle_w = 20;
    g.off_w = 10;
    g.boot_s = 50;
    g.shutdown_s = 10;
    g.cycle_j = 6000;
    /* (140 x 60 - 10 x 10 + 6000) / 130 = 110 s */
    assert_rel(eco_node_group_breakeven_s(&g), 110, 1e-12);
    g.trans_w = 400; /* (400 x 60 - 100 + 6000) / 130 = 230 s */
    assert_rel(eco_node_group_breakeven_s(&g), 230, 1e-12);
    g.trans_w = 0; /* free transitions and no wear: at least the shutdown time */
    g.cycle_j = 0;
    assert_rel(eco_node_group_breakeven_s(&g), 10, 1e-12);
    g.off_w = 200; /* off draws more than idle: never worth it */
    assert_true(eco_node_group_breakeven_s(&g) > 1e100);
}

/* The power-down policies see the cycle cost: with the default 180 kJ a 4-GPU V100 node
 * (335.83 W idle) breaks even after (335.83 x 330 - 15 x 30 + 180000) / 320.83 = 905.1 s. */
static void test_cycle_cost_in_policies(void **state)
{
    (void)state;
    struct pdv p;
    pdv_init(&p, 2);
    p.c->groups[0].cycle_j = 180e3;
    const struct eco_node_group *g = &p.c->groups[0];
    double idle_w = g->base_w + 4 * 23.0;
    assert_rel(idle_w, (522 + 4 * 52.375) / 3 + 92, 1e-12);
    double be = (idle_w * 330 - 15 * 30 + 180e3) / (idle_w - 15);
    assert_rel(eco_node_group_breakeven_s(g), be, 1e-12);
    assert_true(be > 905 && be < 906);
    pdv_idle(&p, 1, 100);
    const char *params;
    const struct eco_powerdown_ops *ops = eco_powerdown_find("idle:600", &params);
    struct eco_error err;
    struct eco_powerdown *pd = ops->create(p.c, params, &err);
    assert_non_null(pd);
    struct eco_pd_decisions d = {0};
    /* idle:600 is due at 700, but 600 s of expected off time do not pay for the cycle. */
    p.v.now_s = 700;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown, 0);
    assert_rel(ops->next_wakeup(pd, &p.v), 100 + be, 1e-12);
    p.v.now_s = 100 + be;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown, 1);
    assert_int_equal(d.shutdown[0], 1);
    ops->destroy(pd);
    /* forecast, busy (an arrival a minute): after its 900 s dwell the node still waits for
     * its break-even, then goes. */
    ops = eco_powerdown_find("forecast:margin=0", &params);
    pd = ops->create(p.c, params, &err);
    assert_non_null(pd);
    p.v.n_idle_nodes = 0;
    for (int k = 0; k < 60; k++) {
        p.v.now_s = 60.0 * k;
        p.v.arrivals = (uint64_t)k + 1;
        p.v.arrived_gpus = 4.0 * (k + 1);
        p.v.last_arrival_gpus = 4;
        d.n_shutdown = d.n_boot = 0;
        assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    }
    p.idle_since[1] = -1;
    pdv_idle(&p, 1, 3540);
    p.v.now_s = 3540 + 900;
    p.v.arrivals = 61;
    p.v.arrived_gpus = 4.0 * 61;
    d.n_shutdown = d.n_boot = 0;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown, 0);
    assert_rel(ops->next_wakeup(pd, &p.v), 3540 + be, 1e-12);
    p.v.now_s = 3540 + be;
    assert_int_equal(ops->decide(pd, &p.v, &d), 0);
    assert_int_equal(d.n_shutdown, 1);
    eco_pd_decisions_fini(&d);
    ops->destroy(pd);
    eco_cluster_destroy(p.c);
}

/* The engine counts power cycles and their wear: the hand-computed run with 100 J a cycle
 * (break-even 74.6 s, still below idle:75) has the same schedule and 2 x 100 J of wear. */
static void test_cycle_cost_reported(void **state)
{
    (void)state;
    struct eco_cluster *c = two_nodes();
    c->groups[0].cycle_j = 100;
    static const struct eco_test_jspec js[] = {{0, 100, 2}, {0, 40, 2}, {200, 50, 2}};
    struct eco_jobset *set = eco_test_make_jobs(js, 3);
    const char *params;
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"),
        .placement = eco_placement_find("pack"),
        .power_down = eco_powerdown_find("idle:75", &params),
        .seed = 1,
    };
    cfg.power_down_params = params;
    struct eco_sim_result res;
    struct eco_error err;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    assert_int_equal(res.summary.power_cycles, 2);
    assert_rel(res.summary.cycle_cost_j, 200, 1e-12);
    assert_true(set->jobs[2].start_s == 250);
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

/* --node-power: every group set, or none when any setting is bad (named). */
static void test_set_power(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x4:A100-SXM,2x8:V100", &c, &err), 0);
    double b0 = c->groups[0].base_w, b1 = c->groups[1].base_w;
    assert_int_equal(eco_cluster_set_power(c, "base_w=450,cycle_j=-1", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "cycle_j"));
    assert_rel(c->groups[0].base_w, b0, 0);
    assert_rel(c->groups[1].base_w, b1, 0);
    /* 300 W: valid for the A100 group (400 W maximum), not for the V100 one (250 W): neither
     * changes. */
    assert_int_equal(eco_cluster_set_power(c, "gpu_idle_w=300", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "gpu_idle_w"));
    assert_rel(c->groups[0].gpu_idle_w, 45, 0);
    assert_int_equal(eco_cluster_set_power(c, "base_w=450,boot_s=600,gpu_idle_ctx_w=40", &err), 0);
    for (int g = 0; g < 2; g++) {
        assert_rel(c->groups[g].base_w, 450, 0);
        assert_rel(c->groups[g].boot_s, 600, 0);
        assert_rel(c->groups[g].gpu_idle_ctx_w, 40, 0);
    }
    assert_int_equal(eco_cluster_set_power(c, "speed=2", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "speed: unknown key"));
    eco_cluster_destroy(c);
}

static void test_unknown_workload(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err;
    assert_int_equal(eco_cluster_parse_spec("1x8", &c, &err), 0);
    static const struct eco_test_jspec js[] = {{0, 10, 1}, {1, 10, 1}};
    struct eco_jobset *set = eco_test_make_jobs(js, 2);
    set->jobs[1].workload_off = eco_jobset_intern(set, "resnet5O", 8);
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"), .placement = eco_placement_find("pack"), .seed = 1};
    struct eco_sim_result res;
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "line 3"));
    assert_non_null(strstr(err.msg, "'workload'"));
    assert_non_null(strstr(err.msg, "resnet5O"));
    /* A known name is used; the mix never overrides it. */
    set->jobs[1].workload_off = eco_jobset_intern(set, "bert-squad", 10);
    cfg.workload_mix = "resnet50:1";
    assert_int_equal(eco_sim_run(c, set, &cfg, &res, &err), 0);
    assert_int_equal(set->jobs[1].workload, eco_workload_find("bert-squad"));
    assert_int_equal(set->jobs[0].workload, eco_workload_find("resnet50"));
    eco_sim_result_fini(&res);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_boot_delayed_starts),
        cmocka_unit_test(test_none_keeps_nodes_on),
        cmocka_unit_test(test_balance_real_traces),
        cmocka_unit_test(test_idle_policy_decisions),
        cmocka_unit_test(test_forecast_decisions),
        cmocka_unit_test(test_powerdown_bad_values),
        cmocka_unit_test(test_speed_on_faster_gpu),
        cmocka_unit_test(test_energy_placement_prefers_efficient_type),
        cmocka_unit_test(test_energy_placement_best_fit_first),
        cmocka_unit_test(test_timeline_sampling),
        cmocka_unit_test(test_bad_power_figures),
        cmocka_unit_test(test_unknown_workload),
        cmocka_unit_test(test_power_state_constants),
        cmocka_unit_test(test_gpu_power_curve),
        cmocka_unit_test(test_breakeven),
        cmocka_unit_test(test_cycle_cost_in_policies),
        cmocka_unit_test(test_cycle_cost_reported),
        cmocka_unit_test(test_set_power),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
