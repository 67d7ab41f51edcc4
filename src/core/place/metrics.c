/* SPDX-License-Identifier: MIT */
/* Placement metrics: FGD fragmentation of a node for a target workload (Weng et al., USENIX
 * ATC '23, section 3), power of active hosts, utilisation, and the objectives. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ecosched/catalog.h"
#include "ecosched/cluster.h"
#include "ecosched/place.h"
#include "place_internal.h"

static const char *const objective_names[] = {"hosts", "frag", "energy", "balance"};

int eco_pl_objective_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, objective_names[i]))
            return i;
    return -1;
}

const char *eco_pl_objective_name(int obj)
{
    return obj >= 0 && obj < 4 ? objective_names[obj] : "?";
}

/* ---- workload ----------------------------------------------------------------------------- */

/* The reference simulator's typical pods (hkust-adsl/kubernetes-scheduler-simulator,
 * pkg/utils/frag.go GetTypicalPods with the configuration its experiments write,
 * scripts/generate_config_and_run.py): pods grouped by their exact request (CPU, GPU share, GPU
 * count, GPU model; memory is not part of the key, pkg/type/resource.go PodResource), CPU-only
 * pods included, types sorted by decreasing count (ties: larger request first, as sort.Reverse
 * of PodResource.Less), then the most popular types are kept one at a time
 * (podIncreaseStep 1) until they cover TYPICAL_COVER_PCT % of the pods, and their shares are
 * renormalised to sum to 1. */
/* podPopularityThreshold 95 %: the value the reference's experiment scripts write (its Go
 * fallback, DefaultTypicalPodPopularityThreshold = 60, applies only when the config has 0). */
#define TYPICAL_COVER_PCT 95

static int type_key_cmp(const struct eco_pl_task_type *a, const struct eco_pl_task_type *b)
{
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli < b->cpu_milli ? -1 : 1;
    if (a->gpu_milli != b->gpu_milli)
        return a->gpu_milli < b->gpu_milli ? -1 : 1;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->models != b->models)
        return a->models < b->models ? -1 : 1;
    return 0;
}

static int by_key(const void *a, const void *b)
{
    return type_key_cmp(a, b);
}

/* decreasing count, then decreasing request */
static int by_popularity(const void *pa, const void *pb)
{
    const struct eco_pl_task_type *a = pa, *b = pb;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    return -type_key_cmp(a, b);
}

int eco_pl_workload_from_items(const struct eco_pl_instance *in, struct eco_pl_workload *w)
{
    w->types = NULL;
    w->n = 0;
    if (in->n_items == 0)
        return 0;
    struct eco_pl_task_type *t = malloc(in->n_items * sizeof *t);
    if (!t)
        return -ENOMEM;
    for (uint32_t i = 0; i < in->n_items; i++) {
        const struct eco_pl_item *it = &in->items[i];
        t[i] = (struct eco_pl_task_type){.cpu_milli = it->cpu_milli,
                                         .gpus = it->gpus,
                                         .gpu_milli = it->gpu_milli,
                                         .models = it->models,
                                         .share = 1};
    }
    qsort(t, in->n_items, sizeof *t, by_key);
    size_t n = 0;
    for (uint32_t i = 0; i < in->n_items; i++) {
        if (n && !type_key_cmp(&t[n - 1], &t[i]))
            t[n - 1].share += 1;
        else
            t[n++] = t[i];
    }
    qsort(t, n, sizeof *t, by_popularity);
    /* as the reference computes it, PCT x total / 100, exact for whole counts */
    double cover = 0, want = TYPICAL_COVER_PCT * (double)in->n_items / 100.0;
    size_t keep = 0;
    while (keep < n && cover < want)
        cover += t[keep++].share;
    for (size_t k = 0; k < keep; k++)
        t[k].share /= cover;
    void *shrunk = realloc(t, keep * sizeof *t);
    w->types = shrunk ? shrunk : t;
    w->n = keep;
    return 0;
}

void eco_pl_workload_fini(struct eco_pl_workload *w)
{
    free(w->types);
    w->types = NULL;
    w->n = 0;
}

/* ---- fragmentation ------------------------------------------------------------------------ */

double eco_pl_node_frag(const struct eco_pl_state *s, const struct eco_pl_workload *w,
                        uint32_t node, const uint16_t *gpu_free)
{
    return eco_place__frag_raw(s->in, w, node, s->cpu_free[node], s->mem_free[node],
                               gpu_free ? gpu_free : s->gpu_free + s->gpu_off[node]);
}

double eco_place__frag_raw(const struct eco_pl_instance *in, const struct eco_pl_workload *w,
                           uint32_t node, int64_t cpu_free, int64_t mem_free, const uint16_t *f)
{
    const struct eco_pl_node *nd = &in->nodes[node];
    uint32_t ng = nd->gpus;
    if (ng == 0 || !w)
        return 0;
    uint32_t total = 0, whole = 0, maxf = 0;
    for (uint32_t g = 0; g < ng; g++) {
        total += f[g];
        whole += f[g] == ECO_PL_GPU_MILLI;
        if (f[g] > maxf)
            maxf = f[g];
    }
    if (total == 0)
        return 0;
    double frag = 0;
    for (size_t k = 0; k < w->n; k++) {
        const struct eco_pl_task_type *t = &w->types[k];
        if (t->gpus == 0)
            continue; /* a CPU-only task leaves no GPU unusable (F = 0) */
        int fits = t->cpu_milli <= cpu_free && t->mem_mib <= mem_free &&
                   (t->models == 0 || (nd->model >= 0 && ((t->models >> nd->model) & 1u)));
        if (fits)
            fits = t->gpu_milli < ECO_PL_GPU_MILLI ? maxf >= t->gpu_milli : whole >= t->gpus;
        uint32_t unusable = 0;
        if (!fits) {
            unusable = total;
        } else {
            for (uint32_t g = 0; g < ng; g++)
                if (f[g] < t->gpu_milli)
                    unusable += f[g];
        }
        frag += t->share * unusable;
    }
    return frag / ECO_PL_GPU_MILLI;
}

/* ---- power -------------------------------------------------------------------------------- */

/* Per-GPU power figures for models the GPU catalog lacks: T4 70 W and A10 150 W are the
 * datasheet board powers; their idle figures are assumptions (about 15 % of board power, as
 * for the measured V100 and P100 in the catalog). Unknown or undisclosed models (openb's
 * G1-G3) take the V100's figures. */
static void gpu_figures(const char *model, double *idle_w, double *max_w)
{
    if (!strcmp(model, "T4")) {
        *idle_w = 10;
        *max_w = 70;
        return;
    }
    if (!strcmp(model, "A10")) {
        *idle_w = 20;
        *max_w = 150;
        return;
    }
    int t = eco_catalog_find(model);
    if (t < 0 && !strncmp(model, "V100", 4))
        t = eco_catalog_find("V100");
    if (t < 0)
        t = eco_catalog_find("V100");
    const struct eco_gpu_type *g = eco_catalog_get((size_t)t);
    *idle_w = g->idle_w;
    *max_w = g->default_limit_w;
}

double eco_pl_node_power_w(const struct eco_pl_instance *in, uint32_t node,
                           const uint16_t *gpu_free)
{
    const struct eco_pl_node *nd = &in->nodes[node];
    struct eco_node_group grp;
    eco_node_group_defaults(&grp, 0, nd->gpus);
    double p = grp.base_w;
    if (nd->gpus == 0)
        return p;
    double idle_w, max_w;
    gpu_figures(nd->model >= 0 ? in->models[nd->model] : "", &idle_w, &max_w);
    for (uint32_t g = 0; g < nd->gpus; g++) {
        double used = (double)(ECO_PL_GPU_MILLI - gpu_free[g]) / ECO_PL_GPU_MILLI;
        p += idle_w + used * (max_w - idle_w);
    }
    return p;
}

/* ---- metrics ------------------------------------------------------------------------------ */

int eco_pl_metrics_compute(const struct eco_pl_instance *in, const struct eco_pl_workload *w,
                           const struct eco_pl_slot *slots, double hold_s, struct eco_pl_metrics *m)
{
    struct eco_pl_state s;
    if (eco_pl_state_init(&s, in))
        return -ENOMEM;
    memset(m, 0, sizeof *m);
    m->first_failed = -1;
    for (uint32_t i = 0; i < in->n_items; i++) {
        const struct eco_pl_item *it = &in->items[i];
        double g = (double)it->gpus * it->gpu_milli / ECO_PL_GPU_MILLI;
        m->gpus_requested += g;
        if (slots[i].node < 0) {
            m->failed++;
            if (m->first_failed < 0)
                m->first_failed = i;
            continue;
        }
        m->placed++;
        m->gpus_placed += g;
        if (m->first_failed < 0)
            m->gpus_before_fail += g;
        eco_pl_take(&s, i, &slots[i]);
    }
    double cpu_cap = 0, cpu_used = 0, mem_cap = 0, mem_used = 0, gpu_cap = 0, gpu_used = 0;
    double all_gpus = 0, free_gpus = 0, sum_u = 0, sum_u2 = 0;
    for (uint32_t n = 0; n < in->n_nodes; n++) {
        const struct eco_pl_node *nd = &in->nodes[n];
        const uint16_t *f = s.gpu_free + s.gpu_off[n];
        double gfree = 0;
        for (uint32_t g = 0; g < nd->gpus; g++)
            gfree += f[g];
        gfree /= ECO_PL_GPU_MILLI;
        all_gpus += nd->gpus;
        free_gpus += gfree;
        m->frag_gpus += eco_pl_node_frag(&s, w, n, NULL);
        double u =
            nd->gpus
                ? (nd->gpus - gfree) / nd->gpus
                : (nd->cpu_milli ? (double)(nd->cpu_milli - s.cpu_free[n]) / nd->cpu_milli : 0);
        sum_u += u;
        sum_u2 += u * u;
        if (s.n_on[n] == 0)
            continue;
        m->active_hosts++;
        cpu_cap += (double)nd->cpu_milli;
        cpu_used += (double)(nd->cpu_milli - s.cpu_free[n]);
        mem_cap += (double)nd->mem_mib;
        mem_used += (double)(nd->mem_mib - s.mem_free[n]);
        gpu_cap += nd->gpus;
        gpu_used += nd->gpus - gfree;
        m->power_w += eco_pl_node_power_w(in, n, f);
    }
    m->cpu_util = cpu_cap > 0 ? cpu_used / cpu_cap : 0;
    m->mem_util = mem_cap > 0 ? mem_used / mem_cap : 0;
    m->gpu_util = gpu_cap > 0 ? gpu_used / gpu_cap : 0;
    m->gpu_alloc_ratio = all_gpus > 0 ? (all_gpus - free_gpus) / all_gpus : 0;
    m->frag_ratio = free_gpus > 0 ? m->frag_gpus / free_gpus : 0;
    m->energy_j = m->power_w * hold_s;
    if (in->n_nodes) {
        double mean = sum_u / in->n_nodes;
        double var = sum_u2 / in->n_nodes - mean * mean;
        m->balance = var > 0 ? sqrt(var) : 0;
    }
    eco_pl_state_fini(&s);
    return 0;
}
