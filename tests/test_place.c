/* SPDX-License-Identifier: MIT */
/* Placement optimisers: FGD fragmentation and choices computed by hand, metrics and power by
 * hand, feasibility of every algorithm on 1,000 seeded random instances, ilp against brute
 * force on tiny instances, and the node/item readers' errors. */
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
#include <unistd.h>
#include "ecosched/freemap.h"
#include "place/place_io.h"
#include "ecosched/policy.h"
#include "ecosched/rng.h"
#include "test_util.h"

static void add_node(struct eco_pl_instance *in, int64_t cpu, int64_t mem, uint16_t gpus,
                     const char *model)
{
    in->nodes = realloc(in->nodes, (in->n_nodes + 1) * sizeof *in->nodes);
    assert_non_null(in->nodes);
    struct eco_pl_node *nd = &in->nodes[in->n_nodes++];
    *nd = (struct eco_pl_node){.cpu_milli = cpu, .mem_mib = mem, .gpus = gpus, .model = -1};
    snprintf(nd->name, sizeof nd->name, "n%u", in->n_nodes - 1);
    if (model)
        nd->model = (int16_t)eco_pl_model_index(in, model);
    if (gpus > in->max_gpus)
        in->max_gpus = gpus;
}

static void add_item(struct eco_pl_instance *in, int64_t cpu, int64_t mem, uint16_t gpus,
                     uint16_t milli)
{
    in->items = realloc(in->items, (in->n_items + 1) * sizeof *in->items);
    assert_non_null(in->items);
    struct eco_pl_item *it = &in->items[in->n_items++];
    *it = (struct eco_pl_item){
        .cpu_milli = cpu, .mem_mib = mem, .gpus = gpus, .gpu_milli = gpus ? milli : 0};
    snprintf(it->name, sizeof it->name, "i%u", in->n_items - 1);
}

/* Node of 2 GPUs with free shares 1000 and 300; workload: 1 whole GPU (share 0.5), 500 milli
 * (0.25), 2 whole GPUs (0.25). Whole GPU: fits, GPU 1 (0.3 free) is below 1 -> 0.3. 500 milli:
 * fits on GPU 0, GPU 1 below 0.5 -> 0.3. 2 GPUs: does not fit -> all 1.3 free. F = 0.5 x 0.3 +
 * 0.25 x 0.3 + 0.25 x 1.3 = 0.55 GPUs. */
static void test_fgd_frag_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 64000, 262144, 2, "G2");
    struct eco_pl_state s;
    assert_int_equal(eco_pl_state_init(&s, &in), 0);
    s.gpu_free[1] = 300;
    struct eco_pl_task_type t[3] = {
        {.gpus = 1, .gpu_milli = 1000, .share = 0.5},
        {.gpus = 1, .gpu_milli = 500, .share = 0.25},
        {.gpus = 2, .gpu_milli = 1000, .share = 0.25},
    };
    struct eco_pl_workload w = {t, 3};
    assert_near(eco_pl_node_frag(&s, &w, 0, NULL), 0.55, 1e-12);
    /* a type wanting more CPU than is free cannot run: all 1.3 free GPUs count for it */
    t[1].cpu_milli = 65000;
    assert_near(eco_pl_node_frag(&s, &w, 0, NULL), 0.5 * 0.3 + 0.25 * 1.3 + 0.25 * 1.3, 1e-12);
    /* CPU-only tasks leave nothing unusable */
    struct eco_pl_task_type cpu_only = {.share = 1};
    struct eco_pl_workload w2 = {&cpu_only, 1};
    assert_near(eco_pl_node_frag(&s, &w2, 0, NULL), 0, 0);
    eco_pl_state_fini(&s);
    eco_pl_instance_fini(&in);
}

/* Typical pods as the reference builds them, by hand: 20 items; A (8 cores, 1 GPU) x 10,
 * B (4 cores, 1 GPU) x 6, C (4 cores, 2 GPUs) x 2, E (3 cores, 500 milli) x 1, D (1 core, no
 * GPU) x 1. Exact requests are the key, so A and B stay apart (the old rule merged them into
 * one 1-GPU type of share 0.8). By count: A 10, B 6, C 2, then E and D tie at 1 and the larger
 * request (E, 3 cores) goes first. Cover 95 % of 20 = 19: A + B + C + E = 19, so D is left
 * out and the shares are 10/19, 6/19, 2/19, 1/19. Memory is not part of a type. */
static void test_typical_pods_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_item(&in, 1000, 512, 0, 0); /* D first in the list: order must not matter */
    for (int i = 0; i < 10; i++)
        add_item(&in, 8000, 1024 * (i + 1), 1, 1000);
    for (int i = 0; i < 6; i++)
        add_item(&in, 4000, 2048, 1, 1000);
    add_item(&in, 4000, 4096, 2, 1000);
    add_item(&in, 3000, 1024, 1, 500);
    add_item(&in, 4000, 8192, 2, 1000);
    struct eco_pl_workload w;
    assert_int_equal(eco_pl_workload_from_items(&in, &w), 0);
    assert_int_equal(w.n, 4);
    static const struct {
        int64_t cpu;
        uint16_t gpus, milli;
        double share;
    } want[4] = {{8000, 1, 1000, 10.0 / 19},
                 {4000, 1, 1000, 6.0 / 19},
                 {4000, 2, 1000, 2.0 / 19},
                 {3000, 1, 500, 1.0 / 19}};
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(w.types[k].cpu_milli, want[k].cpu);
        assert_int_equal(w.types[k].gpus, want[k].gpus);
        assert_int_equal(w.types[k].gpu_milli, want[k].milli);
        assert_int_equal(w.types[k].mem_mib, 0);
        assert_near(w.types[k].share, want[k].share, 1e-12);
    }
    eco_pl_workload_fini(&w);
    eco_pl_instance_fini(&in);
}

/* --shuffle: the same seed gives the same order, another seed another, and the multiset of
 * items is kept (each of 64 distinct items appears once). */
static void test_shuffle_seeded(void **state)
{
    (void)state;
    struct eco_pl_instance a = {0}, b = {0}, c = {0};
    for (int i = 0; i < 64; i++) {
        add_item(&a, 1000 * (i + 1), 1024, 1, 1000);
        add_item(&b, 1000 * (i + 1), 1024, 1, 1000);
        add_item(&c, 1000 * (i + 1), 1024, 1, 1000);
    }
    eco_pl_shuffle(&a, 1);
    eco_pl_shuffle(&b, 1);
    eco_pl_shuffle(&c, 2);
    int moved = 0, differ = 0, seen[64] = {0};
    for (uint32_t i = 0; i < 64; i++) {
        assert_string_equal(a.items[i].name, b.items[i].name);
        assert_int_equal(a.items[i].cpu_milli, b.items[i].cpu_milli);
        moved += a.items[i].cpu_milli != 1000 * (int64_t)(i + 1);
        differ += a.items[i].cpu_milli != c.items[i].cpu_milli;
        int64_t k = a.items[i].cpu_milli / 1000 - 1;
        assert_true(k >= 0 && k < 64);
        seen[k]++;
    }
    for (int k = 0; k < 64; k++)
        assert_int_equal(seen[k], 1);
    assert_true(moved > 32);
    assert_true(differ > 32);
    eco_pl_instance_fini(&a);
    eco_pl_instance_fini(&b);
    eco_pl_instance_fini(&c);
}

/* fgd by hand: two empty nodes of 2 GPUs; items 600, 500, 500 milli, so the workload is 600
 * (share 1/3) and 500 (2/3). An empty node has no fragmentation.
 * Item 0 (600): [400, 1000] on either node: 0.4 (GPU 0 below both requests); tie -> node 0.
 * Item 1 (500): node 0 GPU 1 -> [400, 500]: 600 fits nowhere (0.9 / 3) and 0.4 is below 500
 * (0.4 x 2/3): 0.5667, growth 0.1667; node 1 GPU 0 -> [500, 1000]: 0.5 below 600 (0.5 / 3):
 * growth 0.1667 too; tie -> node 0, GPU 1.
 * Item 2 (500): node 0 GPU 1 -> [400, 0]: neither fits, 0.4: growth -0.1667; node 1: +0.1667
 * -> node 0, GPU 1 (best fit would pick the same node but for the wrong reason, first fit
 * too: the assertions pin fgd's own arithmetic, the two ties included). */
static void test_fgd_choice(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 64000, 262144, 2, "G2");
    add_node(&in, 64000, 262144, 2, "G2");
    add_item(&in, 1000, 1024, 1, 600);
    add_item(&in, 1000, 1024, 1, 500);
    add_item(&in, 1000, 1024, 1, 500);
    struct eco_pl_slot slots[3];
    struct eco_error err = {{0}};
    const struct eco_pl_algo *fgd = eco_pl_algo_find("fgd");
    struct eco_pl_params p = {0};
    assert_int_equal(fgd->solve(&in, &p, slots, NULL, &err), 0);
    assert_int_equal(slots[0].node, 0);
    assert_int_equal(slots[0].gpus, 1);
    assert_int_equal(slots[1].node, 0);
    assert_int_equal(slots[1].gpus, 2);
    /* item 2 (500): node 0 GPU 1 (0.5 left -> 0): frag of node 0 goes from 0.4 + 0.5/3 to
     * 0.4 (GPU 0 at 0.4 stays fragmented, GPU 1 is full): -0.5/3, the only decrease. */
    assert_int_equal(slots[2].node, 0);
    assert_int_equal(slots[2].gpus, 2);
    assert_int_equal(eco_pl_verify(&in, slots, &err), 0);
    eco_pl_instance_fini(&in);
}

/* fgd's score as the reference computes it: int64(sigmoid(-growth) x 100) (growth of the
 * fragmentation in GPUs), the first node and the first GPU of the highest score. Two nodes of 8
 * cores and 2 GPUs; items 300, 500 and 700 milli (1, 1, 2 cores), so three types of share 1/3.
 * Item 0 (300): no growth anywhere, 50 everywhere -> node 0, GPU 0: [700, 1000].
 * Item 1 (500): node 0 GPU 0 -> [200, 1000]: 0.2 below each request, growth 0.2 -> 45.02 ->
 *   45; node 0 GPU 1 -> [700, 500]: 0.5 below 700 (1/3), growth 0.1667 -> 45.84 -> 45; node 1
 *   GPU 0 -> [500, 1000]: 0.1667 too -> 45. All tie: node 0, GPU 0 (the old rule took GPU 1,
 *   the smaller growth).
 * Item 2 (700): node 0 only GPU 1 -> [200, 300]: from 0.2 to (0.2 + 0.5 + 0.5) / 3 = 0.4,
 *   growth 0.2 -> 45; node 1 -> [300, 1000]: 0.3 below 500 and 700: 0.2 -> 45: node 0, GPU 1. */
static void test_fgd_reference_score(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 8000, 262144, 2, "G2");
    add_node(&in, 8000, 262144, 2, "G2");
    add_item(&in, 1000, 1024, 1, 300);
    add_item(&in, 1000, 1024, 1, 500);
    add_item(&in, 2000, 1024, 1, 700);
    struct eco_pl_slot slots[3];
    struct eco_error err = {{0}};
    struct eco_pl_params p = {0};
    assert_int_equal(eco_pl_algo_find("fgd")->solve(&in, &p, slots, NULL, &err), 0);
    static const struct eco_pl_slot want[3] = {{0, 1}, {0, 1}, {0, 2}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(slots[i].node, want[i].node);
        assert_int_equal(slots[i].gpus, want[i].gpus);
    }
    /* fgd-fine compares the growth itself: item 1 takes GPU 1 (0.1667 < 0.2); item 2 (700)
     * then fits only GPU 0 of node 0: [0, 500], F from 0.5 / 3 (700 does not fit GPU 1) to
     * 0.5 / 3 (700 fits nowhere), growth 0, against 0.2 on node 1 -> node 0, GPU 0. */
    assert_int_equal(eco_pl_algo_find("fgd-fine")->solve(&in, &p, slots, NULL, &err), 0);
    static const struct eco_pl_slot fine[3] = {{0, 1}, {0, 2}, {0, 1}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(slots[i].node, fine[i].node);
        assert_int_equal(slots[i].gpus, fine[i].gpus);
    }
    eco_pl_instance_fini(&in);
}

/* The reference counts all free GPU share of a node as fragmentation for a CPU-only type, so
 * placing m milli lowers F by share x m on every node, which moves the truncated score. Items
 * 300 milli (2 cores), 500 milli, CPU-only, 700 milli: four types of share 1/4.
 * Item 0 (300): growth 0 - 0.25 x 0.3 everywhere -> 51 -> node 0, GPU 0: [700, 1000].
 * Item 1 (500): GPU 0 -> [200, 1000]: 0.2 below 300, 500, 700 (x 0.25): 0.15 - 0.125 = 0.025
 *   -> 49.4 -> 49; GPU 1 -> [700, 500]: 0.5 below 700: 0.125 - 0.125 = 0 -> 50: GPU 1. Without
 *   the CPU-only part both are 46 (46.3, 46.9) and GPU 0 would win the tie. */
static void test_fgd_reference_cpu_only(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 8000, 262144, 2, "G2");
    add_node(&in, 8000, 262144, 2, "G2");
    add_item(&in, 2000, 1024, 1, 300);
    add_item(&in, 1000, 1024, 1, 500);
    add_item(&in, 1000, 1024, 0, 0);
    add_item(&in, 1000, 1024, 1, 700);
    struct eco_pl_slot slots[4];
    struct eco_error err = {{0}};
    struct eco_pl_params p = {0};
    assert_int_equal(eco_pl_algo_find("fgd")->solve(&in, &p, slots, NULL, &err), 0);
    assert_int_equal(slots[0].node, 0);
    assert_int_equal(slots[0].gpus, 1);
    assert_int_equal(slots[1].node, 0);
    assert_int_equal(slots[1].gpus, 2);
    eco_pl_instance_fini(&in);
}

/* Metrics by hand: node 0 (2 P100, 64 cores, 256 GiB) gets a whole GPU and a 500-milli share;
 * node 1 stays idle; item 2 (3 GPUs) fits nowhere. Power of node 0: host 522 + 2 x 52.375
 * = 626.75 W, GPU 0 at 250 W (full), GPU 1 at 25 + 0.5 x (250 - 25) = 137.5 W. */
static void test_metrics_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 64000, 262144, 2, "P100");
    add_node(&in, 32000, 131072, 2, "P100");
    add_item(&in, 16000, 65536, 1, 1000);
    add_item(&in, 16000, 65536, 1, 500);
    add_item(&in, 1000, 1024, 3, 1000);
    struct eco_pl_slot slots[3] = {{0, 1}, {0, 2}, {-1, 0}};
    struct eco_error err = {{0}};
    assert_int_equal(eco_pl_verify(&in, slots, &err), 0);
    struct eco_pl_workload w;
    assert_int_equal(eco_pl_workload_from_items(&in, &w), 0);
    assert_int_equal(w.n, 3);
    struct eco_pl_metrics m;
    assert_int_equal(eco_pl_metrics_compute(&in, &w, slots, 10, &m), 0);
    assert_int_equal(m.placed, 2);
    assert_int_equal(m.first_failed, 2);
    assert_int_equal(m.active_hosts, 1);
    assert_near(m.gpus_before_fail, 1.5, 1e-12);
    assert_near(m.cpu_util, 0.5, 1e-12);
    assert_near(m.mem_util, 0.5, 1e-12);
    assert_near(m.gpu_util, 0.75, 1e-12);
    assert_near(m.gpu_alloc_ratio, 1.5 / 4, 1e-12);
    /* Host of 2 V100 slots: the DGX-1 class, (522 + 2 x 52.375) / 3 W (catalog.c). */
    const double host_w = (522 + 2 * 52.375) / 3;
    assert_near(m.power_w, host_w + 250 + 137.5, 1e-9);
    assert_near(m.energy_j, 10 * (host_w + 250 + 137.5), 1e-6);
    /* a slot over capacity is refused */
    slots[2] = (struct eco_pl_slot){0, 3};
    assert_int_equal(eco_pl_verify(&in, slots, &err), -EINVAL);
    slots[2] = (struct eco_pl_slot){-1, 0};
    slots[1] = (struct eco_pl_slot){0, 1}; /* 500 milli on the full GPU 0 */
    assert_int_equal(eco_pl_verify(&in, slots, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "GPU 0 of node 0"));
    eco_pl_workload_fini(&w);
    eco_pl_instance_fini(&in);
}

/* Every algorithm's output is feasible on 1,000 seeded random instances (GPU models, shares,
 * CPU and memory), and pso never places fewer items before the first failure than fgd. */
static void test_feasible_random(void **state)
{
    (void)state;
    const struct eco_pl_algo *const *all = eco_pl_algo_all();
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        struct eco_pl_instance in;
        assert_int_equal(eco_pl_random_instance(seed, 5, 30, seed % 2 ? 4 : 2, &in), 0);
        /* every fifth instance is too small for its items, so that failures are exercised */
        if (seed % 5 == 0)
            in.n_nodes = in.n_nodes / 3 + 1;
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        struct eco_pl_metrics fgd_m = {0};
        struct eco_pl_workload w;
        assert_int_equal(eco_pl_workload_from_items(&in, &w), 0);
        for (size_t a = 0; all[a]; a++) {
            struct eco_error err = {{0}};
            struct eco_pl_params p = {
                .seed = seed, .objective = (int)(seed % 4), .swarm = 6, .iterations = 10};
            struct eco_pl_outcome o = {0};
            assert_int_equal(all[a]->solve(&in, &p, slots, &o, &err), 0);
            if (eco_pl_verify(&in, slots, &err))
                print_error("seed %llu, %s: %s\n", (unsigned long long)seed, all[a]->name, err.msg);
            assert_int_equal(eco_pl_verify(&in, slots, &err), 0);
            struct eco_pl_metrics m;
            assert_int_equal(eco_pl_metrics_compute(&in, &w, slots, 1, &m), 0);
            assert_int_equal(m.placed + m.failed, in.n_items);
            if (!strcmp(all[a]->name, "fgd"))
                fgd_m = m;
            if (!strcmp(all[a]->name, "pso")) {
                int64_t pf = m.first_failed < 0 ? in.n_items : m.first_failed;
                int64_t ff = fgd_m.first_failed < 0 ? in.n_items : fgd_m.first_failed;
                assert_true(pf >= ff);
            }
        }
        eco_pl_workload_fini(&w);
        free(slots);
        eco_pl_instance_fini(&in);
    }
}

/* ilp's output is feasible too, on 1,000 small seeded instances (2-6 items, 4 nodes). */
static void test_ilp_feasible_random(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        struct eco_pl_instance in;
        assert_int_equal(eco_pl_random_instance(seed + 5000, 2, 6, seed % 2 ? 4 : 2, &in), 0);
        if (in.n_nodes > 4)
            in.n_nodes = 4;
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        struct eco_pl_params p = {.objective = ECO_PL_OBJ_HOSTS, .time_limit_s = 5};
        struct eco_pl_outcome o = {0};
        struct eco_error err = {{0}};
        assert_int_equal(eco_pl_algo_ilp.solve(&in, &p, slots, &o, &err), 0);
        if (eco_pl_verify(&in, slots, &err))
            print_error("seed %llu: %s\n", (unsigned long long)seed, err.msg);
        assert_int_equal(eco_pl_verify(&in, slots, &err), 0);
        assert_true(o.gap >= 0 && o.gap <= 1);
        free(slots);
        eco_pl_instance_fini(&in);
    }
}

/* ---- brute force ---------------------------------------------------------------------------- */

struct brute {
    const struct eco_pl_instance *in;
    struct eco_pl_state s;
    uint32_t best_placed, best_hosts;
};

static uint32_t hosts_of(const struct eco_pl_state *s)
{
    uint32_t h = 0;
    for (uint32_t n = 0; n < s->in->n_nodes; n++)
        h += s->n_on[n] > 0;
    return h;
}

static void brute_rec(struct brute *b, uint32_t i, uint32_t placed)
{
    const struct eco_pl_instance *in = b->in;
    if (i == in->n_items) {
        uint32_t h = hosts_of(&b->s);
        if (placed > b->best_placed || (placed == b->best_placed && h < b->best_hosts)) {
            b->best_placed = placed;
            b->best_hosts = h;
        }
        return;
    }
    brute_rec(b, i + 1, placed); /* not placed */
    const struct eco_pl_item *it = &in->items[i];
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        uint32_t ng = in->nodes[n].gpus;
        for (uint64_t mask = 0; mask < (1ull << ng); mask++) {
            if ((uint32_t)__builtin_popcountll(mask) != it->gpus)
                continue;
            if (it->models && it->gpus && !((it->models >> in->nodes[n].model) & 1u))
                continue;
            struct eco_pl_slot sl = {(int32_t)n, mask};
            eco_pl_take(&b->s, i, &sl);
            int ok = b->s.cpu_free[n] >= 0 && b->s.mem_free[n] >= 0;
            for (uint32_t g = 0; g < ng; g++)
                ok &= b->s.gpu_free[b->s.gpu_off[n] + g] <= ECO_PL_GPU_MILLI;
            if (ok)
                brute_rec(b, i + 1, placed + 1);
            eco_pl_give(&b->s, i, &sl);
        }
    }
}

/* ilp equals brute force (most items, then fewest hosts) on 40 tiny instances. */
static void test_ilp_brute_force(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct eco_pl_instance in;
        assert_int_equal(eco_pl_random_instance(seed, 3, 5, 2, &in), 0);
        if (in.n_nodes > 4)
            in.n_nodes = 4;
        if (seed % 3 == 0)
            in.n_nodes = 2; /* too small: not every item fits */
        /* tight CPU on every other instance so that CPU, not GPUs, limits some */
        for (uint32_t n = 0; n < in.n_nodes && seed % 2; n++)
            in.nodes[n].cpu_milli = 12000;
        struct brute b = {.in = &in, .best_hosts = UINT32_MAX};
        assert_int_equal(eco_pl_state_init(&b.s, &in), 0);
        brute_rec(&b, 0, 0);
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        struct eco_pl_params p = {.objective = ECO_PL_OBJ_HOSTS, .time_limit_s = 30};
        struct eco_pl_outcome o = {0};
        struct eco_error err = {{0}};
        assert_int_equal(eco_pl_algo_ilp.solve(&in, &p, slots, &o, &err), 0);
        assert_int_equal(eco_pl_verify(&in, slots, &err), 0);
        struct eco_pl_metrics m;
        assert_int_equal(eco_pl_metrics_compute(&in, NULL, slots, 1, &m), 0);
        if (m.placed != b.best_placed || m.active_hosts != b.best_hosts)
            print_error("seed %llu: ilp %u placed on %u hosts, brute force %u on %u\n",
                        (unsigned long long)seed, m.placed, m.active_hosts, b.best_placed,
                        b.best_hosts);
        assert_int_equal(m.placed, b.best_placed);
        assert_int_equal(m.active_hosts, b.best_hosts);
        assert_true(o.optimal);
        assert_near(o.gap, 0, 1e-12);
        eco_pl_state_fini(&b.s);
        free(slots);
        eco_pl_instance_fini(&in);
    }
}

/* ---- simulator placements ------------------------------------------------------------------ */

static int sim_place(const char *name, const struct eco_freemap *fm, uint32_t gpus,
                     struct eco_alloc *out)
{
    struct eco_job job = {.gpus = gpus, .gpu_type = -1, .gpu_milli = 1000};
    return eco_placement_find(name)->place(NULL, fm, &job, out, 16);
}

/* Cluster 2x8,1x4 with 3 GPUs taken on node 0 (5 free), node 1 free (8), 1 taken on node 2
 * (3 free). fgd's target mix: P(size > 1) = 0.010617, P(> 2) = P(> 3) = 0.008352,
 * P(> 4..7) = 0.006229 (openb: 1 GPU 6,989, 2: 16, 4: 15, 8: 44 of 7,064); F(f) = f P(> f).
 * 1 GPU: node 0 F(4) - F(5) = -0.006229, node 1 F(7) - F(8) = +0.0436, node 2 F(2) - F(3) =
 *   -0.008352 -> node 2. dot: -(1/8)(5/8), -(1/8)(8/8), -(1/4)(3/4) -> node 2.
 * 4 GPUs: fgd node 0 F(1) - F(5) = -0.0205, node 1 F(4) - F(8) = +0.0249 -> node 0;
 *   dot -(4/8)(5/8) = -0.3125 against -(4/8)(8/8) = -0.5 -> node 1 (pack: node 0).
 * 10 GPUs: whole free node 1, then 2 on the best of nodes 0 and 2: fgd F(3) - F(5) = -0.0061
 *   against F(1) - F(3) = -0.0144 -> node 2; dot -(2/8)(5/8) against -(2/4)(3/4) -> node 2. */
static void test_sim_placements(void **state)
{
    (void)state;
    struct eco_cluster *c = NULL;
    struct eco_error err = {{0}};
    assert_int_equal(eco_cluster_parse_spec("2x8,1x4", &c, &err), 0);
    struct eco_freemap *fm = eco_freemap_create(c);
    assert_non_null(fm);
    eco_freemap_take(fm, 0, 3);
    eco_freemap_take(fm, 2, 1);
    struct eco_alloc a[16];
    static const struct {
        const char *name;
        uint32_t gpus;
        int n;
        uint32_t node[2];
        uint16_t take[2];
    } cases[] = {
        {"fgd", 1, 1, {2}, {1}},
        {"dot-product", 1, 1, {2}, {1}},
        {"fgd", 4, 1, {0}, {4}},
        {"dot-product", 4, 1, {1}, {4}},
        {"pack", 4, 1, {0}, {4}},
        {"bfd", 4, 1, {0}, {4}},
        {"ffd", 4, 1, {0}, {4}},
        {"fgd", 10, 2, {1, 2}, {8, 2}},
        {"dot-product", 10, 2, {1, 2}, {8, 2}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int n = sim_place(cases[k].name, fm, cases[k].gpus, a);
        if (n != cases[k].n || a[0].node != cases[k].node[0])
            print_error("case %zu (%s, %u GPUs): %d entries, first node %u\n", k, cases[k].name,
                        cases[k].gpus, n, n > 0 ? a[0].node : 0);
        assert_int_equal(n, cases[k].n);
        for (int i = 0; i < n; i++) {
            assert_int_equal(a[i].node, cases[k].node[i]);
            assert_int_equal(a[i].gpus, cases[k].take[i]);
        }
    }
    assert_int_equal(sim_place("fgd", fm, 17, a), -EAGAIN);
    eco_freemap_destroy(fm);
    eco_cluster_destroy(c);
}

/* ---- readers -------------------------------------------------------------------------------- */

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/ecosched-place-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static int read_pair(const char *nodes, const char *items, struct eco_pl_instance *in,
                     struct eco_error *err, char **np, char **ip)
{
    *np = write_tmp(nodes);
    *ip = write_tmp(items);
    memset(in, 0, sizeof *in);
    int rc = eco_pl_read_nodes(*np, in, err);
    if (!rc)
        rc = eco_pl_read_items(*ip, in, err);
    return rc;
}

static void test_readers(void **state)
{
    (void)state;
    struct eco_pl_instance in;
    struct eco_error err = {{0}};
    char *np, *ip;
    /* ecosched's own format: cores, GiB, GPUs as a count or a share, allowed models */
    assert_int_equal(read_pair("name,cpu_cores,memory_gib,gpus,gpu_model\n"
                               "a,32,256,4,A100\nb,16,64,0,\n",
                               "name,cpu_cores,memory_gib,gpus,gpu_model\n"
                               "x,2.5,8,0.25,A100|V100\ny,4,16,2,\nz,1,0.5,0,\n",
                               &in, &err, &np, &ip),
                     0);
    assert_int_equal(in.n_nodes, 2);
    assert_int_equal(in.nodes[0].cpu_milli, 32000);
    assert_int_equal(in.nodes[0].mem_mib, 262144);
    assert_int_equal(in.nodes[1].model, -1);
    assert_int_equal(in.n_items, 3);
    assert_int_equal(in.items[0].cpu_milli, 2500);
    assert_int_equal(in.items[0].gpus, 1);
    assert_int_equal(in.items[0].gpu_milli, 250);
    assert_int_equal(in.items[0].models, 3); /* A100 (0) and V100 (1) */
    assert_int_equal(in.items[1].gpu_milli, 1000);
    assert_int_equal(in.items[2].mem_mib, 512);
    assert_int_equal(eco_pl_instance_check(&in, &err), 0);
    unlink(np), unlink(ip), free(np), free(ip);
    eco_pl_instance_fini(&in);

    static const struct {
        const char *nodes, *items, *want;
    } bad[] = {
        {"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,2,T4\nn1,abc,1024,2,T4\n", "",
         ":3: column 'cpu_milli': 'abc' is not a number"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,-5,2,T4\n", "",
         ":2: column 'memory_mib': '-5' must be >= 0"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,5,1.5,T4\n", "",
         ":2: column 'gpu': '1.5' must be a whole number"},
        {"sn,cpu_milli,gpu,model\nn0,1000,2,T4\n", "",
         ":1: missing column 'memory_mib' or 'memory_gib'"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,5,2\n", "",
         ":2: 4 fields, but the header has 5 columns"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,5,2,\n", "",
         ":2: column 'model': '' is empty, but the node has GPUs"},
        {"name,cpu_cores,memory_gib,gpus\nn,1,1,1\n",
         "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,0\n",
         ":2: column 'gpu_milli': '0' must be 1..1000"},
        {"name,cpu_cores,memory_gib,gpus\nn,1,1,1\n",
         "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,2,500\n",
         ":2: column 'gpu_milli': '500' must be 1000 when more"},
        {"name,cpu_cores,memory_gib,gpus\nn,1,1,1\n", "name,cpu_cores,memory_gib,gpus\nx,1,1,1.5\n",
         ":2: column 'gpus': '1.5' must be a share below 1"},
        {"name,cpu_cores,memory_gib,gpus\nn,1,1,1\n",
         "name,cpu_cores,memory_gib,gpus\nx,1,1,0.0005\n",
         ":2: column 'gpus': '0.0005' is a GPU share finer"},
        {"name,cpu_cores,memory_gib,gpus\nn,1,1,1\n", "name,cpu_cores,memory_gib,gpus\nx,1,1,65\n",
         ":2: column 'gpus': '65' must be a GPU count"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,2,T4\nn1,1000,1024,2,T4\nn0,1000,1024,2,"
         "T4\n",
         "", ":4: column 'sn': 'n0' names a node a second time"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err.msg[0] = '\0';
        assert_int_equal(read_pair(bad[k].nodes, bad[k].items, &in, &err, &np, &ip), -EINVAL);
        const char *file = *bad[k].items ? ip : np;
        if (!strstr(err.msg, bad[k].want) || strncmp(err.msg, file, strlen(file)))
            print_error("case %zu: got '%s', want '%s%s'\n", k, err.msg, file, bad[k].want);
        assert_non_null(strstr(err.msg, bad[k].want));
        assert_int_equal(strncmp(err.msg, file, strlen(file)), 0);
        unlink(np), unlink(ip), free(np), free(ip);
        eco_pl_instance_fini(&in);
    }
}

/* NUL bytes in node and item lists are refused with file, line and column; before, the reader
 * cut the line at the NUL and read the rest of the line as a node of its own. */
static void test_read_nul(void **state)
{
    (void)state;
    static const char nodes[] = "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,2,T4\0"
                                "n9,1000,1024,8,T4\nn1,1000,1024,2,T4\n";
    static const char items[] = "name,cpu_cores,memory_gib,gpus\nx,1,1,1\ny\0,1,1,1\n";
    static const struct {
        const char *bytes;
        size_t len;
        int items;
        const char *want;
    } cases[] = {
        {nodes, sizeof nodes - 1, 0, ":2: NUL byte at column 18"},
        {items, sizeof items - 1, 1, ":3: NUL byte at column 2"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *path = strdup("/tmp/ecosched-place-XXXXXX");
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, cases[k].bytes, cases[k].len), (ssize_t)cases[k].len);
        close(fd);
        struct eco_pl_instance in = {0};
        struct eco_error err = {{0}};
        int rc = cases[k].items ? eco_pl_read_items(path, &in, &err)
                                : eco_pl_read_nodes(path, &in, &err);
        if (rc != -EINVAL || strncmp(err.msg, path, strlen(path)) ||
            !strstr(err.msg, cases[k].want))
            print_error("case %zu: rc %d, got '%s', want '%s%s'\n", k, rc, err.msg, path,
                        cases[k].want);
        assert_int_equal(rc, -EINVAL);
        assert_non_null(strstr(err.msg, cases[k].want));
        assert_int_equal(strncmp(err.msg, path, strlen(path)), 0);
        unlink(path);
        free(path);
        eco_pl_instance_fini(&in);
    }
}

/* The openb node and pod lists read as they are (the bundled copy). */
static void test_read_openb(void **state)
{
    (void)state;
    const char *src = getenv("ECO_SOURCE_DIR");
    char np[4096], ip[4096];
    snprintf(np, sizeof np, "%s/data/alibaba_gpu_v2023_openb/openb_node_list_gpu_node.csv.gz",
             src ? src : ECO_SOURCE_DIR);
    snprintf(ip, sizeof ip, "%s/data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz",
             src ? src : ECO_SOURCE_DIR);
    struct eco_pl_instance in = {0};
    struct eco_error err = {{0}};
    assert_int_equal(eco_pl_read_nodes(np, &in, &err), 0);
    assert_int_equal(eco_pl_read_items(ip, &in, &err), 0);
    assert_int_equal(in.n_nodes, 1213);
    assert_int_equal(in.n_items, 8152);
    uint64_t gpus = 0;
    double req = 0;
    for (uint32_t n = 0; n < in.n_nodes; n++)
        gpus += in.nodes[n].gpus;
    for (uint32_t i = 0; i < in.n_items; i++)
        req += in.items[i].gpus * in.items[i].gpu_milli / 1000.0;
    assert_int_equal(gpus, 6212);   /* data/alibaba_gpu_v2023_openb/README.md */
    assert_near(req, 6086.8, 0.05); /* "sum of GPU requests over all pods" */
    assert_int_equal(eco_pl_instance_check(&in, &err), 0);
    eco_pl_instance_fini(&in);
}

/* Runs algorithm `name` on `in` and checks that its answer is feasible. */
static void run_algo(const char *name, const struct eco_pl_instance *in, uint64_t seed,
                     struct eco_pl_slot *slots)
{
    const struct eco_pl_algo *a = eco_pl_algo_find(name);
    assert_non_null(a);
    struct eco_pl_params p = {.seed = seed};
    struct eco_error err = {{0}};
    assert_int_equal(a->solve(in, &p, slots, NULL, &err), 0);
    assert_int_equal(eco_pl_verify(in, slots, &err), 0);
}

static void expect_slots(const struct eco_pl_slot *slots, const int32_t *node, const uint64_t *gpus,
                         uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (slots[i].node != node[i] || slots[i].gpus != gpus[i])
            print_error("item %u: node %d gpus %llx, expected node %d gpus %llx\n", i,
                        slots[i].node, (unsigned long long)slots[i].gpus, node[i],
                        (unsigned long long)gpus[i]);
        assert_int_equal(slots[i].node, node[i]);
        assert_int_equal(slots[i].gpus, gpus[i]);
    }
}

/* best-fit by hand (best_fit_score.go): score 0.5 (CPU free - request) / 128 cores + 0.5 (GPU
 * free - request) / 8 GPUs, reported as int((1 - score) x 100), min-max normalised.
 * Item 0 (8 cores, 1 GPU): n0 (32 cores, 2 GPUs) 0.09375 + 0.0625 -> 84.375 -> 84; n1 (31
 * cores, 2 GPUs) 0.08984 + 0.0625 -> 84.77 -> 84; n2 (64 cores, 8 GPUs) 0.21875 + 0.4375 -> 34;
 * n3 (96 cores, 4 GPUs) 0.34375 + 0.1875 -> 46. n0 and n1 tie at 84 (n1 is tighter before
 * truncation) -> n0, GPU 0.
 * Item 1 (24 cores, 1 GPU): n0 is left with nothing -> 100; n1 0.02734 + 0.0625 -> 91 -> n0,
 * GPU 1. Item 2 (1 core, 200 milli): n0 has no CPU left; n1 0.11719 + 0.1125 -> 77, n2 26, n3
 * 39 -> n1, GPU 0 (best fit among equal GPUs: the lowest index). */
static void test_best_fit_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 32000, 262144, 2, "G");
    add_node(&in, 31000, 262144, 2, "G");
    add_node(&in, 64000, 262144, 8, "G");
    add_node(&in, 96000, 262144, 4, "G");
    add_item(&in, 8000, 1024, 1, 1000);
    add_item(&in, 24000, 1024, 1, 1000);
    add_item(&in, 1000, 1024, 1, 200);
    struct eco_pl_slot slots[3];
    run_algo("best-fit", &in, 1, slots);
    expect_slots(slots, (const int32_t[]){0, 0, 1}, (const uint64_t[]){1, 2, 1}, 3);
    eco_pl_instance_fini(&in);
}

/* gpu-packing by hand (gpu_packing_score.go): an idle node scores max(33 - free GPUs, free
 * GPUs): n0 (8 GPUs) 25, n1 (4) 29, n2 (2) 31.
 * 0: 500 milli -> n2 (31), GPU 0: n2 [500, 1000].
 * 1: 1 GPU: n2 must use 1 wholly free GPU: max(50 - 1, 33) = 49 -> n2, GPU 1: [500, 0].
 * 2: 200 milli: n2 uses the shared GPU at 50% free: max(100 - 50 / 10, 50) = 95 -> n2, GPU 0.
 * 3: 400 milli: fits on no GPU of n2 (300 left); n1 29 > n0 25 -> n1, GPU 0: [600, 1000 x3].
 * 4: 2 GPUs: n1 uses 2 wholly free GPUs: 48 > n0 25 -> n1, GPUs 1 and 2.
 * 5: CPU only: 0 everywhere -> n0. */
static void test_gpu_packing_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 96000, 262144, 8, "G");
    add_node(&in, 96000, 262144, 4, "G");
    add_node(&in, 96000, 262144, 2, "G");
    add_item(&in, 1000, 1024, 1, 500);
    add_item(&in, 1000, 1024, 1, 1000);
    add_item(&in, 1000, 1024, 1, 200);
    add_item(&in, 1000, 1024, 1, 400);
    add_item(&in, 1000, 1024, 2, 1000);
    add_item(&in, 1000, 1024, 0, 0);
    struct eco_pl_slot slots[6];
    run_algo("gpu-packing", &in, 1, slots);
    expect_slots(slots, (const int32_t[]){2, 2, 2, 1, 1, 0}, (const uint64_t[]){1, 2, 1, 1, 6, 0},
                 6);
    eco_pl_instance_fini(&in);
}

/* gpu-clustering by hand (gpu_clustering_score.go): 25 x (8000 - free milli-GPUs) / 8000 in
 * integers, plus 75 on a node whose only affinity is the item's, 50 when it is among others, 25
 * on a node without GPU items, 0 otherwise. Three nodes of 4 GPUs (an idle one scores 25 + 12).
 * 0: 1 GPU -> all 37 -> n0, GPU 0.
 * 1: 500 milli: n0 {1-gpu} 15; n1, n2 37 -> n1, GPU 0.
 * 2: 1 GPU: n0 {1-gpu} 75 + 15 = 90 -> n0, GPU 1.
 * 3: 300 milli: n1 {share} 75 + 14 = 89 -> n1, GPU 0 (the GPU with 500 left).
 * 4: 2 GPUs: n0 18, n1 15, n2 idle 37 -> n2, GPUs 0 and 1.
 * 5: 1 GPU: n0 75 + 18 = 93 -> n0, GPU 2. 6: CPU only: 0 everywhere -> n0.
 * Then a node holding two affinities: n0 (4 GPUs) and n1 (4 GPUs, 2 cores). 1 GPU -> n0; a
 * 500-milli item with 4 cores fits only on n0 (GPU 1); 1 GPU: n0 {1-gpu, share} 50 + 17 = 67
 * beats the idle n1's 37 -> n0, GPU 2. */
static void test_gpu_clustering_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    for (int n = 0; n < 3; n++)
        add_node(&in, 96000, 262144, 4, "G");
    static const uint16_t gpus[] = {1, 1, 1, 1, 2, 1, 0},
                          milli[] = {1000, 500, 1000, 300, 1000, 1000, 0};
    for (int i = 0; i < 7; i++)
        add_item(&in, 1000, 1024, gpus[i], milli[i]);
    struct eco_pl_slot slots[7];
    run_algo("gpu-clustering", &in, 1, slots);
    expect_slots(slots, (const int32_t[]){0, 1, 0, 1, 2, 0, 0},
                 (const uint64_t[]){1, 1, 2, 1, 3, 4, 0}, 7);
    eco_pl_instance_fini(&in);

    struct eco_pl_instance mixed = {0};
    add_node(&mixed, 96000, 262144, 4, "G");
    add_node(&mixed, 2000, 262144, 4, "G");
    add_item(&mixed, 1000, 1024, 1, 1000);
    add_item(&mixed, 4000, 1024, 1, 500);
    add_item(&mixed, 1000, 1024, 1, 1000);
    run_algo("gpu-clustering", &mixed, 1, slots);
    expect_slots(slots, (const int32_t[]){0, 0, 0}, (const uint64_t[]){1, 2, 4}, 3);
    eco_pl_instance_fini(&mixed);
}

/* random (random_score.go): the node is drawn uniformly among those that fit (n0 is too small
 * for the item), then the shared GPU uniformly among the GPUs that hold it: with the seed's
 * first two uniforms u1, u2, node 1 + int(3 u1) and GPU int(4 u2). The same seed gives the
 * same answer; over 64 seeds every node that fits is drawn. */
static void test_random_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 1000, 262144, 4, "G");
    for (int n = 0; n < 3; n++)
        add_node(&in, 96000, 262144, 4, "G");
    add_item(&in, 8000, 1024, 1, 500);
    unsigned seen = 0;
    for (uint64_t seed = 1; seed <= 64; seed++) {
        struct eco_rng r;
        eco_rng_init(&r, seed);
        int32_t node = 1 + (int32_t)(eco_rng_uniform(&r) * 3);
        uint64_t gpu = 1ull << (int)(eco_rng_uniform(&r) * 4);
        struct eco_pl_slot slots[1], again[1];
        run_algo("random", &in, seed, slots);
        expect_slots(slots, &node, &gpu, 1);
        run_algo("random", &in, seed, again);
        expect_slots(again, &node, &gpu, 1);
        seen |= 1u << node;
    }
    assert_int_equal(seen, 0xe);
    eco_pl_instance_fini(&in);
}

/* dot-product-ref by hand (dot_product_score.go, merge / max): int(100 (1 - (CPU free x CPU
 * request / 128 cores^2 + GPU free x GPU request / 8 GPUs^2) / 2)), the highest wins. Two nodes
 * of 64 cores and 8 GPUs.
 * 0: 6 GPUs, 8 cores: equal -> n0, GPUs 0-5.
 * 1: 1 GPU, 4 cores: n0 (56 cores, 2 GPUs free) 0.4375 x 0.03125 + 0.25 x 0.125 = 0.04492 ->
 * 97.75 -> 97; n1 0.5 x 0.03125 + 1 x 0.125 = 0.14063 -> 92.97 -> 92 -> n0, GPU 6 (the node
 * with the smallest dot product; ecosched's dot-product, Tetris' largest, takes n1).
 * 2: CPU only, 4 cores: n0 52/128 x 0.03125 / 2 -> 99.37, n1 99.22: both 99 -> n0. */
static void test_dot_product_ref_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 64000, 262144, 8, "G");
    add_node(&in, 64000, 262144, 8, "G");
    add_item(&in, 8000, 1024, 6, 1000);
    add_item(&in, 4000, 1024, 1, 1000);
    add_item(&in, 4000, 1024, 0, 0);
    struct eco_pl_slot slots[3];
    run_algo("dot-product-ref", &in, 1, slots);
    expect_slots(slots, (const int32_t[]){0, 0, 0}, (const uint64_t[]){0x3f, 0x40, 0}, 3);
    run_algo("dot-product", &in, 1, slots);
    assert_int_equal(slots[1].node, 1);
    eco_pl_instance_fini(&in);
}

/* Every online baseline places openb's default pods, inflated to 130% of the GPUs as in the
 * FGD paper, feasibly, and allocates most of the GPUs (docs/policies/placement.md quotes
 * their shares: 87-92%). */
static void test_online_openb(void **state)
{
    (void)state;
    const char *src = getenv("ECO_SOURCE_DIR");
    char np[4096], ip[4096];
    snprintf(np, sizeof np, "%s/data/alibaba_gpu_v2023_openb/openb_node_list_gpu_node.csv.gz",
             src ? src : ECO_SOURCE_DIR);
    snprintf(ip, sizeof ip, "%s/data/alibaba_gpu_v2023_openb/openb_pod_list_default.csv.gz",
             src ? src : ECO_SOURCE_DIR);
    struct eco_pl_instance in = {0};
    struct eco_error err = {{0}};
    assert_int_equal(eco_pl_read_nodes(np, &in, &err), 0);
    assert_int_equal(eco_pl_read_items(ip, &in, &err), 0);
    assert_int_equal(eco_pl_inflate(&in, 130, 1), 0);
    struct eco_pl_workload w;
    assert_int_equal(eco_pl_workload_from_items(&in, &w), 0);
    struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
    assert_non_null(slots);
    static const char *const names[] = {"random", "gpu-clustering", "gpu-packing", "best-fit",
                                        "dot-product-ref"};
    for (size_t a = 0; a < sizeof names / sizeof *names; a++) {
        run_algo(names[a], &in, 1, slots);
        struct eco_pl_metrics m;
        assert_int_equal(eco_pl_metrics_compute(&in, &w, slots, 1, &m), 0);
        assert_true(m.gpu_alloc_ratio > 0.85 && m.gpu_alloc_ratio < 0.96);
    }
    free(slots);
    eco_pl_workload_fini(&w);
    eco_pl_instance_fini(&in);
}

/* pso with p's settings on in, checked feasible; the outcome in *o. */
static void run_pso_with(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                         struct eco_pl_slot *slots, struct eco_pl_outcome *o)
{
    struct eco_error err = {{0}};
    *o = (struct eco_pl_outcome){0};
    assert_int_equal(eco_pl_algo_find("pso")->solve(in, p, slots, o, &err), 0);
    assert_int_equal(eco_pl_verify(in, slots, &err), 0);
}

/* Online pso by hand. n0 has 2 GPUs, n1 one (32 cores each); i0 asks 1 GPU, i1 2 GPUs, then
 * 40 items of 1 GPU and 64 cores that fit nowhere. Typical pods: the 64-core type alone
 * covers 40/42 > 95 %, and it fits no node, so every free GPU is fragmented: i0 on n0 or n1
 * lowers fragmentation by the same 40/42 GPU, the tie goes to n0, and i1 finds no 2 free
 * GPUs. fgd does that, and so does pso one item at a time (--window 1): i0 is placed before
 * i1 arrives and stays put (the local search may not move it). A window of 2 sees both:
 * i1 on n0 (GPUs 0, 1), i0 on n1 (GPU 0), 3 GPUs placed instead of 1. Windows are placed in
 * arrival order: the first window's answer is the same without the items after it. */
static void test_pso_window_by_hand(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    add_node(&in, 32000, 1 << 20, 2, NULL);
    add_node(&in, 32000, 1 << 20, 1, NULL);
    add_item(&in, 1000, 1024, 1, 1000);
    add_item(&in, 1000, 1024, 2, 1000);
    for (int k = 0; k < 40; k++)
        add_item(&in, 64000, 1024, 1, 1000);
    struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
    assert_non_null(slots);
    run_algo("fgd", &in, 1, slots);
    assert_int_equal(slots[0].node, 0);
    assert_int_equal(slots[1].node, -1);
    struct eco_pl_params p = {.seed = 1, .swarm = 6, .iterations = 10, .window = 1};
    struct eco_pl_outcome o;
    run_pso_with(&in, &p, slots, &o);
    assert_int_equal(slots[0].node, 0);
    assert_int_equal(slots[1].node, -1);
    for (uint32_t i = 2; i < in.n_items; i++)
        assert_int_equal(slots[i].node, -1);
    p.window = 2;
    run_pso_with(&in, &p, slots, &o);
    int32_t node[2] = {1, 0};
    uint64_t gpus[2] = {0x1, 0x3};
    expect_slots(slots, node, gpus, 2);
    /* the first window alone: the same answer */
    uint32_t n_all = in.n_items;
    in.n_items = 2;
    struct eco_pl_slot first[2];
    run_pso_with(&in, &p, first, &o);
    expect_slots(first, node, gpus, 2);
    in.n_items = n_all;
    free(slots);
    eco_pl_instance_fini(&in);
}

/* Online pso keeps what earlier windows placed: the answer for the first k windows alone is
 * the one the whole run gives them (a window never moves an earlier item, and later windows
 * are not seen). The items repeat 4 requests in blocks of the window's size, so that every
 * such prefix has the same typical pods (the fragmentation workload is the whole list's, as
 * fgd's); 6 nodes of 4 GPUs are too few, so that items fail. */
static void test_pso_window_fixed(void **state)
{
    (void)state;
    struct eco_pl_instance in = {0};
    for (int n = 0; n < 6; n++)
        add_node(&in, 32000, 1 << 20, 4, NULL);
    static const int64_t cpu[4] = {4000, 8000, 2000, 6000};
    static const uint16_t gpus[4] = {1, 1, 2, 0}, milli[4] = {1000, 500, 1000, 0};
    for (int i = 0; i < 64; i++)
        add_item(&in, cpu[i % 4], 1024, gpus[i % 4], milli[i % 4]);
    struct eco_pl_slot *all = calloc(in.n_items, sizeof *all);
    struct eco_pl_slot *part = calloc(in.n_items, sizeof *part);
    assert_true(all && part);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        struct eco_pl_params p = {.seed = seed, .swarm = 5, .iterations = 5, .window = 4};
        struct eco_pl_outcome o;
        run_pso_with(&in, &p, all, &o);
        uint32_t n_all = in.n_items, failed = 0;
        for (uint32_t i = 0; i < n_all; i++)
            failed += all[i].node < 0;
        assert_true(failed > 0);
        for (uint32_t cut = 4; cut < n_all; cut += 4) {
            in.n_items = cut; /* the first windows only */
            run_pso_with(&in, &p, part, &o);
            for (uint32_t i = 0; i < cut; i++) {
                assert_int_equal(part[i].node, all[i].node);
                assert_int_equal(part[i].gpus, all[i].gpus);
            }
        }
        in.n_items = n_all;
    }
    free(all);
    free(part);
    eco_pl_instance_fini(&in);
}

/* --pso-off swarm returns the greedy seeds and their local search only: with the local search
 * off too, exactly the nodes of one of the seeds (dot-product, fgd, bfd, ffd), no iteration;
 * with it, never worse than that (items before the first failure), and the full swarm never
 * worse than its seeds plus local search (it starts from them). */
static void test_pso_swarm_off(void **state)
{
    (void)state;
    static const char *const seeds[] = {"dot-product", "fgd", "bfd", "ffd"};
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct eco_pl_instance in;
        assert_int_equal(eco_pl_random_instance(seed, 10, 40, seed % 2 ? 4 : 2, &in), 0);
        if (seed % 3 == 0)
            in.n_nodes = in.n_nodes / 3 + 1;
        uint32_t ni = in.n_items;
        struct eco_pl_slot *s = calloc(ni, sizeof *s), *g = calloc(ni, sizeof *g);
        assert_true(s && g);
        struct eco_pl_params p = {.seed = seed,
                                  .swarm = 8,
                                  .iterations = 20,
                                  .pso_off = ECO_PL_PSO_OFF_SWARM | ECO_PL_PSO_OFF_LOCAL_SEARCH};
        struct eco_pl_outcome o;
        run_pso_with(&in, &p, s, &o);
        assert_int_equal(o.iterations, 0);
        assert_int_equal(o.seeds, 4);
        assert_int_equal(o.local_searches, 0);
        struct eco_pl_workload w;
        assert_int_equal(eco_pl_workload_from_items(&in, &w), 0);
        struct eco_pl_metrics m0, m1, m2, mg;
        assert_int_equal(eco_pl_metrics_compute(&in, &w, s, 1, &m0), 0);
#define PREFIX(m) ((m).first_failed < 0 ? (int64_t)ni : (m).first_failed)
        int same = 0, all_fit = 1;
        for (size_t k = 0; k < 4; k++) {
            run_algo(seeds[k], &in, seed, g);
            assert_int_equal(eco_pl_metrics_compute(&in, &w, g, 1, &mg), 0);
            all_fit &= mg.failed == 0;
            int eq = 1;
            for (uint32_t i = 0; i < ni; i++)
                eq &= g[i].node == s[i].node;
            same |= eq;
            /* a decreasing-order seed with failures is decoded in arrival order, which may
             * change it; the arrival-order ones (dot-product, fgd) are kept as they are */
            if (k < 2)
                assert_true(PREFIX(m0) >= PREFIX(mg));
        }
        if (all_fit)
            assert_true(same);
        p.pso_off = ECO_PL_PSO_OFF_SWARM;
        run_pso_with(&in, &p, s, &o);
        assert_int_equal(o.iterations, 0);
        assert_int_equal(eco_pl_metrics_compute(&in, &w, s, 1, &m1), 0);
        p.pso_off = 0;
        run_pso_with(&in, &p, s, &o);
        assert_int_equal(o.iterations, 20);
        assert_int_equal(eco_pl_metrics_compute(&in, &w, s, 1, &m2), 0);
        assert_true(PREFIX(m1) >= PREFIX(m0));
        assert_true(PREFIX(m2) >= PREFIX(m1));
        if (PREFIX(m2) == PREFIX(m1) && m2.placed == m1.placed)
            assert_true(m2.active_hosts <= m1.active_hosts);
#undef PREFIX
        eco_pl_workload_fini(&w);
        free(s);
        free(g);
        eco_pl_instance_fini(&in);
    }
}

/* Each --pso-off switch removes its operator and only it: mutation (no mutation triggered),
 * adaptive (the last iteration's inertia is pso-basic's 0.7298, not 0.4), local-search (none
 * run), seeding (no greedy seed); offline and online. */
static void test_pso_off_switches(void **state)
{
    (void)state;
    struct eco_pl_instance in;
    /* a tight instance on which the swarm collapses (diversity below 5 %) */
    assert_int_equal(eco_pl_random_instance(3, 10, 40, 4, &in), 0);
    in.n_nodes = in.n_nodes / 3 + 1;
    struct eco_pl_slot *s = calloc(in.n_items, sizeof *s);
    assert_non_null(s);
    for (uint32_t window = 0; window <= 5; window += 5) {
        struct eco_pl_params p = {.seed = 3, .swarm = 8, .iterations = 60, .window = window};
        struct eco_pl_outcome o;
        run_pso_with(&in, &p, s, &o);
        assert_true(o.mutations > 0);
        assert_true(o.local_searches > 0);
        assert_int_equal(o.seeds, window ? 4 * ((in.n_items + window - 1) / window) : 4);
        assert_near(o.inertia, 0.4, 1e-12);
        p.pso_off = ECO_PL_PSO_OFF_MUTATION;
        run_pso_with(&in, &p, s, &o);
        assert_int_equal(o.mutations, 0);
        assert_true(o.local_searches > 0);
        assert_near(o.inertia, 0.4, 1e-12);
        p.pso_off = ECO_PL_PSO_OFF_ADAPTIVE;
        run_pso_with(&in, &p, s, &o);
        assert_near(o.inertia, 0.7298, 1e-12);
        assert_true(o.local_searches > 0);
        p.pso_off = ECO_PL_PSO_OFF_LOCAL_SEARCH;
        run_pso_with(&in, &p, s, &o);
        assert_int_equal(o.local_searches, 0);
        assert_true(o.seeds > 0);
        p.pso_off = ECO_PL_PSO_OFF_SEEDING;
        run_pso_with(&in, &p, s, &o);
        assert_int_equal(o.seeds, 0);
        assert_true(o.local_searches > 0);
    }
    unsigned bits = 0;
    struct eco_error err = {{0}};
    assert_int_equal(eco_pl_pso_off_parse("mutation,local-search", &bits, &err), 0);
    assert_int_equal(bits, ECO_PL_PSO_OFF_MUTATION | ECO_PL_PSO_OFF_LOCAL_SEARCH);
    assert_int_equal(eco_pl_pso_off_parse("mutation,bogus", &bits, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown operator 'bogus'"));
    assert_int_equal(eco_pl_pso_off_parse("", &bits, &err), -EINVAL);
    assert_int_equal(eco_pl_pso_off_parse("seeding,swarm", &bits, &err), -EINVAL);
    free(s);
    eco_pl_instance_fini(&in);
}

/* The LP bound by hand. (a) One node of 1 GPU, three items of 0.6 GPU: the LP relaxation
 * fills the GPU (1.0); two of them never share a GPU, and the first dual feasible function
 * (u^(1): a share above 1/2 counts 1) leaves one, 0.6 GPU, the optimum. The first item alone:
 * 0.6 either way. (b) One node of 2 GPUs and 32 cores, three items of 1 GPU and 20 cores: the
 * LP shares the cores, 32 / 20 = 1.6 GPUs; u^(1) on the cores (20 / 32 > 1/2) leaves one item,
 * 1 GPU. (c) An item bound to a model no node has: 0. */
static void test_lp_bound_by_hand(void **state)
{
    (void)state;
    struct eco_error err = {{0}};
    double g;
    struct eco_pl_instance a = {0};
    add_node(&a, 32000, 262144, 1, "A");
    for (int i = 0; i < 3; i++)
        add_item(&a, 1000, 1024, 1, 600);
    assert_int_equal(eco_pl_lp_bound(&a, 3, 0, &g, &err), 0);
    assert_true(fabs(g - 1.0) < 1e-9);
    assert_int_equal(eco_pl_lp_bound(&a, 3, 1, &g, &err), 0);
    assert_true(fabs(g - 0.6) < 1e-9);
    assert_int_equal(eco_pl_lp_bound(&a, 1, 0, &g, &err), 0);
    assert_true(fabs(g - 0.6) < 1e-9);
    assert_int_equal(eco_pl_lp_bound(&a, 4, 1, &g, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "4 items asked"));
    eco_pl_instance_fini(&a);

    struct eco_pl_instance b = {0};
    add_node(&b, 32000, 262144, 2, "A");
    for (int i = 0; i < 3; i++)
        add_item(&b, 20000, 1024, 1, 1000);
    assert_int_equal(eco_pl_lp_bound(&b, 3, 0, &g, &err), 0);
    assert_true(fabs(g - 1.6) < 1e-9);
    assert_int_equal(eco_pl_lp_bound(&b, 3, 1, &g, &err), 0);
    assert_true(fabs(g - 1.0) < 1e-9);
    /* (c): bound to model B, which no node has */
    eco_pl_model_index(&b, "B");
    b.items[0].models = 1u << 1;
    b.items[1].models = b.items[2].models = 1u << 1;
    assert_int_equal(eco_pl_lp_bound(&b, 3, 1, &g, &err), 0);
    assert_true(fabs(g) < 1e-9);
    eco_pl_instance_fini(&b);
}

/* The LP bound is at least the GPUs that every algorithm (and ilp, on the smaller ones)
 * allocates, on 60 seeded random instances asking for 150 % of their GPUs; with the cuts it is
 * at most the plain LP's, and both are at most the GPUs requested and the cluster's. */
static void test_lp_bound_random(void **state)
{
    (void)state;
    const struct eco_pl_algo *const *all = eco_pl_algo_all();
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct eco_pl_instance in;
        struct eco_error err = {{0}};
        /* every third one small (3-6 listed items), for ilp */
        assert_int_equal(eco_pl_random_instance(seed, seed % 3 ? 5 : 3, seed % 3 ? 30 : 6,
                                                seed % 2 ? 4 : 2, &in),
                         0);
        assert_int_equal(eco_pl_inflate(&in, 150, seed), 0);
        double cap = 0, req = 0, plain, cut;
        for (uint32_t n = 0; n < in.n_nodes; n++)
            cap += in.nodes[n].gpus;
        for (uint32_t i = 0; i < in.n_items; i++)
            req += in.items[i].gpus * in.items[i].gpu_milli / 1000.0;
        assert_int_equal(eco_pl_lp_bound(&in, in.n_items, 0, &plain, &err), 0);
        assert_int_equal(eco_pl_lp_bound(&in, in.n_items, 1, &cut, &err), 0);
        assert_true(cut <= plain + 1e-6);
        assert_true(plain <= cap + 1e-6 && plain <= req + 1e-6);
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        assert_non_null(slots);
        /* the core's algorithms, then ilp on the instances small enough for it */
        for (size_t a = 0;; a++) {
            const struct eco_pl_algo *al = all[a] ? all[a] : &eco_pl_algo_ilp;
            if (!all[a] && in.n_items > 24)
                break;
            struct eco_pl_params p = {
                .seed = seed, .swarm = 6, .iterations = 10, .time_limit_s = 2};
            struct eco_pl_outcome o = {0};
            struct eco_pl_metrics m;
            assert_int_equal(al->solve(&in, &p, slots, &o, &err), 0);
            assert_int_equal(eco_pl_metrics_compute(&in, NULL, slots, 1, &m), 0);
            if (m.gpus_placed > cut + 1e-6)
                print_error("seed %llu, %s: %.3f GPUs placed, bound %.3f\n",
                            (unsigned long long)seed, al->name, m.gpus_placed, cut);
            assert_true(m.gpus_placed <= cut + 1e-6);
            if (!all[a])
                break;
        }
        free(slots);
        eco_pl_instance_fini(&in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fgd_frag_by_hand),
        cmocka_unit_test(test_fgd_choice),
        cmocka_unit_test(test_fgd_reference_score),
        cmocka_unit_test(test_fgd_reference_cpu_only),
        cmocka_unit_test(test_typical_pods_by_hand),
        cmocka_unit_test(test_shuffle_seeded),
        cmocka_unit_test(test_metrics_by_hand),
        cmocka_unit_test(test_feasible_random),
        cmocka_unit_test(test_ilp_brute_force),
        cmocka_unit_test(test_ilp_feasible_random),
        cmocka_unit_test(test_readers),
        cmocka_unit_test(test_sim_placements),
        cmocka_unit_test(test_read_openb),
        cmocka_unit_test(test_read_nul),
        cmocka_unit_test(test_best_fit_by_hand),
        cmocka_unit_test(test_gpu_packing_by_hand),
        cmocka_unit_test(test_gpu_clustering_by_hand),
        cmocka_unit_test(test_random_by_hand),
        cmocka_unit_test(test_dot_product_ref_by_hand),
        cmocka_unit_test(test_online_openb),
        cmocka_unit_test(test_pso_window_by_hand),
        cmocka_unit_test(test_pso_window_fixed),
        cmocka_unit_test(test_pso_swarm_off),
        cmocka_unit_test(test_pso_off_switches),
        cmocka_unit_test(test_lp_bound_by_hand),
        cmocka_unit_test(test_lp_bound_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
