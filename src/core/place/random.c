/* SPDX-License-Identifier: MIT */
/* Seeded random placement instances for property tests, the gap to the exact optimum and the
 * benchmarks: a mix shaped like openb's pods (whole GPUs, GPU shares, CPU-only pods, some
 * bound to a GPU model) on nodes of two GPU models. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/place.h"
#include "ecosched/rng.h"

static uint32_t draw(struct eco_rng *r, uint32_t lo, uint32_t hi)
{
    uint32_t v = lo + (uint32_t)(eco_rng_uniform(r) * (hi - lo + 1));
    return v > hi ? hi : v;
}

int eco_pl_random_instance(uint64_t seed, uint32_t min_items, uint32_t max_items,
                           uint16_t gpus_per_node, struct eco_pl_instance *in)
{
    struct eco_rng r;
    eco_rng_init(&r, seed);
    memset(in, 0, sizeof *in);
    eco_pl_model_index(in, "A");
    eco_pl_model_index(in, "B");
    uint32_t ni = draw(&r, min_items, max_items);
    in->items = calloc(ni ? ni : 1, sizeof *in->items);
    if (!in->items)
        return -ENOMEM;
    in->n_items = ni;
    /* GPU shares as openb's most common ones (0.25, 0.5, 0.81 ~ 250, 500, 810 milli) */
    static const uint16_t shares[] = {250, 500, 810};
    double gpu_sum = 0, cpu_sum = 0;
    for (uint32_t i = 0; i < ni; i++) {
        struct eco_pl_item *it = &in->items[i];
        snprintf(it->name, sizeof it->name, "item%u", i);
        double u = eco_rng_uniform(&r);
        if (u < 0.1) {
            it->gpus = 0; /* CPU-only */
        } else if (u < 0.45) {
            it->gpus = 1;
            it->gpu_milli = shares[draw(&r, 0, 2)];
        } else {
            it->gpus = u < 0.75  ? 1
                       : u < 0.9 ? 2
                                 : (uint16_t)(gpus_per_node < 4 ? gpus_per_node : 4);
            if (it->gpus > gpus_per_node)
                it->gpus = gpus_per_node;
            it->gpu_milli = 1000;
        }
        it->cpu_milli = 1000 * (int64_t)draw(&r, 1, 12);
        it->mem_mib = 1024 * (int64_t)draw(&r, 2, 48);
        if (it->gpus && eco_rng_uniform(&r) < 0.2)
            it->models = 1ull << draw(&r, 0, 1);
        gpu_sum += it->gpus * it->gpu_milli / 1000.0;
        cpu_sum += it->cpu_milli / 1000.0;
    }
    /* nodes: 8 cores and 64 GiB per GPU; of each model as many as the whole demand needs
     * (GPUs or CPU, whichever is more) plus 2, so that every item fits and the question is
     * how few hosts hold them */
    double need = gpu_sum / gpus_per_node;
    double need_cpu = cpu_sum / (8.0 * gpus_per_node);
    if (need_cpu > need)
        need = need_cpu;
    uint32_t per_model = (uint32_t)need + 2;
    in->n_nodes = 2 * per_model;
    in->nodes = calloc(in->n_nodes, sizeof *in->nodes);
    if (!in->nodes) {
        eco_pl_instance_fini(in);
        return -ENOMEM;
    }
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        struct eco_pl_node *nd = &in->nodes[n];
        snprintf(nd->name, sizeof nd->name, "node%u", n);
        nd->gpus = gpus_per_node;
        nd->model = (int16_t)(n / per_model);
        nd->cpu_milli = 8000 * (int64_t)gpus_per_node;
        nd->mem_mib = 65536 * (int64_t)gpus_per_node;
    }
    in->max_gpus = gpus_per_node;
    return 0;
}

int eco_pl_inflate(struct eco_pl_instance *in, double pct, uint64_t seed)
{
    double cap = 0, req = 0;
    for (uint32_t n = 0; n < in->n_nodes; n++)
        cap += in->nodes[n].gpus;
    uint32_t base = in->n_items;
    for (uint32_t i = 0; i < base; i++)
        req += in->items[i].gpus * in->items[i].gpu_milli / 1000.0;
    if (base == 0 || req <= 0)
        return 0;
    struct eco_rng rng;
    eco_rng_init(&rng, seed);
    size_t capn = base;
    while (req < cap * pct / 100) {
        if (in->n_items == capn) {
            capn *= 2;
            void *p = realloc(in->items, capn * sizeof *in->items);
            if (!p)
                return -ENOMEM;
            in->items = p;
        }
        uint32_t k = (uint32_t)(eco_rng_uniform(&rng) * base);
        in->items[in->n_items] = in->items[k < base ? k : base - 1];
        const struct eco_pl_item *it = &in->items[in->n_items++];
        req += it->gpus * it->gpu_milli / 1000.0;
    }
    return 0;
}
