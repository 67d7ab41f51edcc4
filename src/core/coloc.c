/* SPDX-License-Identifier: MIT */
/* GPU co-location model: lookups in the measured Gavel and Lucid tables (coloc_tables.c) and the
 * utilisation fallback for pairs not measured (docs/models/colocation.md). */
#include "ecosched/coloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coloc_tables.h"

size_t eco_coloc_n_workloads(void)
{
    return ECO_COLOC_N_WORKLOADS;
}

size_t eco_coloc_n_measured(void)
{
    return ECO_COLOC_N_PAIRS;
}

const struct eco_coloc_workload *eco_coloc_workload(size_t i)
{
    return i < ECO_COLOC_N_WORKLOADS ? &eco_coloc_workloads[i] : NULL;
}

int eco_coloc_find(const char *name, const char *gpu_type)
{
    if (!name)
        return -EINVAL;
    for (size_t i = 0; i < ECO_COLOC_N_WORKLOADS; i++) {
        const struct eco_coloc_workload *w = &eco_coloc_workloads[i];
        if (strcmp(w->name, name) == 0 && (!gpu_type || strcasecmp(w->gpu_type, gpu_type) == 0))
            return (int)i;
    }
    return -ENOENT;
}

enum eco_coloc_kind eco_coloc_estimate(double u_a, double u_b, double *speed_a, double *speed_b)
{
    double f = ECO_COLOC_TIMESLICE;
    enum eco_coloc_kind kind = ECO_COLOC_TIMESLICED;
    if (u_a >= 0.0 && u_b >= 0.0) {
        double u = u_a + u_b;
        f = u > 1.0 ? pow(u, -ECO_COLOC_FALLBACK_EXP) : 1.0;
        kind = ECO_COLOC_FALLBACK;
    }
    if (speed_a)
        *speed_a = f;
    if (speed_b)
        *speed_b = f;
    return kind;
}

/* The measured row for the ordered pair (a, b), or NULL: binary search on (a, b). */
static const struct eco_coloc_row *find_row(size_t a, size_t b)
{
    size_t lo = 0, hi = ECO_COLOC_N_PAIRS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct eco_coloc_row *r = &eco_coloc_rows[mid];
        if (r->a == a && r->b == b)
            return r;
        if (r->a < a || (r->a == a && r->b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int eco_coloc_pair(size_t a, size_t b, struct eco_coloc_pair *out)
{
    if (!out || a >= ECO_COLOC_N_WORKLOADS || b >= ECO_COLOC_N_WORKLOADS)
        return -EINVAL;
    const struct eco_coloc_workload *wa = &eco_coloc_workloads[a], *wb = &eco_coloc_workloads[b];
    if (wa->source == ECO_COLOC_GAVEL && wb->source == ECO_COLOC_GAVEL &&
        strcmp(wa->gpu_type, wb->gpu_type) != 0)
        return -EINVAL;

    const struct eco_coloc_row *r = find_row(a, b);
    int swapped = 0;
    if (!r) {
        r = find_row(b, a);
        swapped = 1;
    }
    if (r) {
        out->speed_a = swapped ? r->speed_b : r->speed_a;
        out->speed_b = swapped ? r->speed_a : r->speed_b;
        out->feasible = out->speed_a > 0.0 || out->speed_b > 0.0;
        out->kind = ECO_COLOC_MEASURED;
        out->gpu_util = r->gpu_util;
        out->gmem_mb = r->gmem_mb;
        return 0;
    }
    out->kind = eco_coloc_estimate(wa->gpu_util, wb->gpu_util, &out->speed_a, &out->speed_b);
    out->feasible = 1;
    int known = wa->gpu_util >= 0.0 && wb->gpu_util >= 0.0;
    out->gpu_util = known ? fmin(1.0, wa->gpu_util + wb->gpu_util) : -1.0;
    out->gmem_mb = wa->gmem_mb > 0.0 && wb->gmem_mb > 0.0 ? wa->gmem_mb + wb->gmem_mb : 0.0;
    return 0;
}

/* Lucid model (the first word of its name) -> Gavel job family (the name up to " (batch"):
 * the same model where Gavel measured it, else the Gavel job of the same task and input (image
 * classification on CIFAR-10 or ImageNet, language modelling, recommendation, reinforcement
 * learning, generative adversarial). PointNet (point-cloud classification) has no Gavel
 * counterpart of its task; it goes with the small convnets, its nearest in size. */
static const struct {
    const char *lucid, *gavel;
} gavel_family[] = {
    {"ResNet18", "ResNet-18"},
    {"VGG", "ResNet-18"},
    {"EfficientNet", "ResNet-18"},
    {"MobileNetV2", "ResNet-18"},
    {"PointNet", "ResNet-18"},
    {"ResNet50", "ResNet-50"},
    {"MobileNetV3", "ResNet-50"},
    {"LSTM", "LM"},
    {"Transformer", "Transformer"},
    {"BERT", "Transformer"},
    {"NeuMF", "Recommendation"},
    {"PPO", "A3C"},
    {"TD3", "A3C"},
    {"DCGAN", "CycleGAN"},
};

/* Batch size in a workload name: Lucid "... bs64", Gavel "... (batch size 64)"; 0 if none. */
static double batch_of(const char *name)
{
    const char *p = strstr(name, "(batch size ");
    if (p)
        return strtod(p + 12, NULL);
    p = strstr(name, " bs");
    return p ? strtod(p + 3, NULL) : 0.0;
}

static const char *gavel_type(const char *gpu_type)
{
    static const char *const types[] = {"k80", "p100", "v100"};
    for (size_t i = 0; gpu_type && i < 3; i++)
        if (!strcasecmp(gpu_type, types[i]))
            return types[i];
    return "v100";
}

/* Nearest member of Gavel family `fam` on `type` to batch size b (b 0: the first member). */
static int nearest_in_family(const char *fam, const char *type, double b)
{
    int best = -ENOENT;
    double best_d = INFINITY, best_b = 0.0;
    size_t len = strlen(fam);
    for (size_t i = 0; i < ECO_COLOC_N_WORKLOADS; i++) {
        const struct eco_coloc_workload *w = &eco_coloc_workloads[i];
        if (w->source != ECO_COLOC_GAVEL || strcmp(w->gpu_type, type) != 0 ||
            strncmp(w->name, fam, len) != 0 || (w->name[len] != '\0' && w->name[len] != ' '))
            continue;
        double wb = batch_of(w->name);
        double d = b > 0.0 && wb > 0.0 ? fabs(log2(wb / b)) : 0.0;
        if (d < best_d - 1e-12 || (fabs(d - best_d) <= 1e-12 && wb < best_b)) {
            best = (int)i;
            best_d = d;
            best_b = wb;
        }
    }
    return best;
}

int eco_coloc_gavel_match(size_t lucid, const char *gpu_type)
{
    if (lucid >= ECO_COLOC_N_WORKLOADS)
        return -EINVAL;
    const struct eco_coloc_workload *w = &eco_coloc_workloads[lucid];
    const char *type = gavel_type(gpu_type);
    if (w->source == ECO_COLOC_GAVEL)
        return eco_coloc_find(w->name, type);
    size_t word = strcspn(w->name, " ");
    for (size_t i = 0; i < sizeof gavel_family / sizeof gavel_family[0]; i++)
        if (strlen(gavel_family[i].lucid) == word &&
            strncmp(w->name, gavel_family[i].lucid, word) == 0)
            return nearest_in_family(gavel_family[i].gavel, type, batch_of(w->name));
    return -ENOENT;
}
