/* SPDX-License-Identifier: MIT */
/* Placement instances and state: free CPU, memory and per-GPU shares of every node, the
 * fit test, GPU choice inside a node, and the replay check of a whole assignment. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/place.h"

void eco_pl_instance_fini(struct eco_pl_instance *in)
{
    if (!in)
        return;
    free(in->nodes);
    free(in->items);
    in->nodes = NULL;
    in->items = NULL;
    in->n_nodes = in->n_items = 0;
}

int eco_pl_model_index(struct eco_pl_instance *in, const char *name)
{
    for (uint16_t i = 0; i < in->n_models; i++)
        if (!strcmp(in->models[i], name))
            return i;
    if (in->n_models >= ECO_PL_MAX_MODELS)
        return -1;
    snprintf(in->models[in->n_models], ECO_PL_NAME_MAX, "%s", name);
    return in->n_models++;
}

int eco_pl_instance_check(const struct eco_pl_instance *in, struct eco_error *err)
{
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        const struct eco_pl_node *nd = &in->nodes[n];
        if (nd->cpu_milli < 0 || nd->mem_mib < 0)
            return eco_errorf(err, -EINVAL, "node %u (%s): negative capacity", n, nd->name);
        if (nd->gpus > ECO_PL_MAX_GPUS)
            return eco_errorf(err, -EINVAL, "node %u (%s): %u GPUs, at most %d", n, nd->name,
                              nd->gpus, ECO_PL_MAX_GPUS);
        if (nd->model >= (int)in->n_models)
            return eco_errorf(err, -EINVAL, "node %u (%s): bad model index", n, nd->name);
    }
    for (uint32_t i = 0; i < in->n_items; i++) {
        const struct eco_pl_item *it = &in->items[i];
        if (it->cpu_milli < 0 || it->mem_mib < 0)
            return eco_errorf(err, -EINVAL, "item %u (%s): negative request", i, it->name);
        if (it->gpus > ECO_PL_MAX_GPUS)
            return eco_errorf(err, -EINVAL, "item %u (%s): %u GPUs, at most %d", i, it->name,
                              it->gpus, ECO_PL_MAX_GPUS);
        if (it->gpus == 0 && it->gpu_milli != 0)
            return eco_errorf(err, -EINVAL, "item %u (%s): GPU share without GPUs", i, it->name);
        if (it->gpus > 0 && (it->gpu_milli == 0 || it->gpu_milli > ECO_PL_GPU_MILLI))
            return eco_errorf(err, -EINVAL, "item %u (%s): GPU share must be 1..1000 milli", i,
                              it->name);
        if (it->gpus > 1 && it->gpu_milli != ECO_PL_GPU_MILLI)
            return eco_errorf(err, -EINVAL, "item %u (%s): a share below one GPU needs gpus = 1", i,
                              it->name);
    }
    return 0;
}

int eco_pl_state_init(struct eco_pl_state *s, const struct eco_pl_instance *in)
{
    memset(s, 0, sizeof *s);
    s->in = in;
    size_t nn = in->n_nodes ? in->n_nodes : 1;
    uint64_t ng = 0;
    s->gpu_off = malloc((nn + 1) * sizeof *s->gpu_off);
    if (!s->gpu_off)
        goto fail;
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        s->gpu_off[n] = (uint32_t)ng;
        ng += in->nodes[n].gpus;
    }
    s->gpu_off[in->n_nodes] = (uint32_t)ng;
    s->cpu_free = malloc(nn * sizeof *s->cpu_free);
    s->mem_free = malloc(nn * sizeof *s->mem_free);
    s->n_on = malloc(nn * sizeof *s->n_on);
    s->gpu_free = malloc((ng ? ng : 1) * sizeof *s->gpu_free);
    if (!s->cpu_free || !s->mem_free || !s->n_on || !s->gpu_free)
        goto fail;
    eco_pl_state_reset(s);
    return 0;
fail:
    eco_pl_state_fini(s);
    return -ENOMEM;
}

void eco_pl_state_fini(struct eco_pl_state *s)
{
    free(s->cpu_free);
    free(s->mem_free);
    free(s->gpu_free);
    free(s->gpu_off);
    free(s->n_on);
    memset(s, 0, sizeof *s);
}

void eco_pl_state_reset(struct eco_pl_state *s)
{
    const struct eco_pl_instance *in = s->in;
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        s->cpu_free[n] = in->nodes[n].cpu_milli;
        s->mem_free[n] = in->nodes[n].mem_mib;
        s->n_on[n] = 0;
    }
    for (uint32_t g = 0; g < s->gpu_off[in->n_nodes]; g++)
        s->gpu_free[g] = ECO_PL_GPU_MILLI;
}

void eco_pl_state_copy(struct eco_pl_state *dst, const struct eco_pl_state *src)
{
    uint32_t nn = src->in->n_nodes;
    memcpy(dst->cpu_free, src->cpu_free, nn * sizeof *dst->cpu_free);
    memcpy(dst->mem_free, src->mem_free, nn * sizeof *dst->mem_free);
    memcpy(dst->n_on, src->n_on, nn * sizeof *dst->n_on);
    memcpy(dst->gpu_free, src->gpu_free, src->gpu_off[nn] * sizeof *dst->gpu_free);
}

static int model_ok(const struct eco_pl_instance *in, const struct eco_pl_item *it, uint32_t node)
{
    if (it->gpus == 0 || it->models == 0)
        return 1;
    int m = in->nodes[node].model;
    return m >= 0 && ((it->models >> m) & 1u);
}

int eco_pl_compatible(const struct eco_pl_instance *in, uint32_t item, uint32_t node)
{
    const struct eco_pl_item *it = &in->items[item];
    const struct eco_pl_node *nd = &in->nodes[node];
    return model_ok(in, it, node) && it->cpu_milli <= nd->cpu_milli && it->mem_mib <= nd->mem_mib &&
           it->gpus <= nd->gpus;
}

uint64_t eco_pl_pick_gpus(const struct eco_pl_state *s, uint32_t item, uint32_t node, int prefer)
{
    const struct eco_pl_item *it = &s->in->items[item];
    const uint16_t *f = s->gpu_free + s->gpu_off[node];
    uint32_t ng = s->in->nodes[node].gpus;
    if (it->gpus == 0 || it->gpus > ng)
        return 0;
    if (it->gpu_milli < ECO_PL_GPU_MILLI) {
        if (prefer >= 0 && (uint32_t)prefer < ng && f[prefer] >= it->gpu_milli)
            return 1ull << prefer;
        int best = -1;
        for (uint32_t g = 0; g < ng; g++)
            if (f[g] >= it->gpu_milli && (best < 0 || f[g] < f[best]))
                best = (int)g;
        return best < 0 ? 0 : 1ull << best;
    }
    uint64_t mask = 0;
    uint32_t got = 0;
    for (uint32_t g = 0; g < ng && got < it->gpus; g++)
        if (f[g] == ECO_PL_GPU_MILLI) {
            mask |= 1ull << g;
            got++;
        }
    return got == it->gpus ? mask : 0;
}

int eco_pl_fits(const struct eco_pl_state *s, uint32_t item, uint32_t node)
{
    const struct eco_pl_item *it = &s->in->items[item];
    if (!model_ok(s->in, it, node) || it->cpu_milli > s->cpu_free[node] ||
        it->mem_mib > s->mem_free[node])
        return 0;
    return it->gpus == 0 || eco_pl_pick_gpus(s, item, node, -1) != 0;
}

void eco_pl_take(struct eco_pl_state *s, uint32_t item, const struct eco_pl_slot *slot)
{
    const struct eco_pl_item *it = &s->in->items[item];
    uint32_t n = (uint32_t)slot->node;
    s->cpu_free[n] -= it->cpu_milli;
    s->mem_free[n] -= it->mem_mib;
    s->n_on[n]++;
    uint16_t *f = s->gpu_free + s->gpu_off[n];
    for (uint64_t m = slot->gpus; m; m &= m - 1)
        f[__builtin_ctzll(m)] -= it->gpu_milli;
}

void eco_pl_give(struct eco_pl_state *s, uint32_t item, const struct eco_pl_slot *slot)
{
    const struct eco_pl_item *it = &s->in->items[item];
    uint32_t n = (uint32_t)slot->node;
    s->cpu_free[n] += it->cpu_milli;
    s->mem_free[n] += it->mem_mib;
    s->n_on[n]--;
    uint16_t *f = s->gpu_free + s->gpu_off[n];
    for (uint64_t m = slot->gpus; m; m &= m - 1)
        f[__builtin_ctzll(m)] += it->gpu_milli;
}

int eco_pl_verify(const struct eco_pl_instance *in, const struct eco_pl_slot *slots,
                  struct eco_error *err)
{
    struct eco_pl_state s;
    if (eco_pl_state_init(&s, in))
        return -ENOMEM;
    int rc = 0;
    for (uint32_t i = 0; i < in->n_items && !rc; i++) {
        const struct eco_pl_item *it = &in->items[i];
        const struct eco_pl_slot *sl = &slots[i];
        if (sl->node < 0) {
            if (sl->gpus)
                rc = eco_errorf(err, -EINVAL, "item %u: GPUs given but no node", i);
            continue;
        }
        if ((uint32_t)sl->node >= in->n_nodes) {
            rc = eco_errorf(err, -EINVAL, "item %u: node %d out of range", i, sl->node);
            break;
        }
        uint32_t n = (uint32_t)sl->node, ng = in->nodes[n].gpus;
        if (!model_ok(in, it, n))
            rc = eco_errorf(err, -EINVAL, "item %u: GPU model of node %u not allowed", i, n);
        else if (__builtin_popcountll(sl->gpus) != it->gpus || (ng < 64 && (sl->gpus >> ng) != 0))
            rc = eco_errorf(err, -EINVAL, "item %u: %d GPUs given on node %u, %u requested", i,
                            __builtin_popcountll(sl->gpus), n, it->gpus);
        if (rc)
            break;
        eco_pl_take(&s, i, sl);
        if (s.cpu_free[n] < 0 || s.mem_free[n] < 0)
            rc = eco_errorf(err, -EINVAL, "item %u: node %u over its CPU or memory", i, n);
        for (uint64_t m = sl->gpus; m && !rc; m &= m - 1)
            if (s.gpu_free[s.gpu_off[n] + __builtin_ctzll(m)] > ECO_PL_GPU_MILLI)
                rc = eco_errorf(err, -EINVAL, "item %u: GPU %d of node %u over its capacity", i,
                                __builtin_ctzll(m), n);
    }
    eco_pl_state_fini(&s);
    return rc;
}
