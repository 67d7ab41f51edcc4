/* SPDX-License-Identifier: MIT */
/* GPU power and speed model: measured Zeus curves (linear interpolation in the power limit) for
 * V100, A40, RTX 6000 and P100; scaled V100 curves for A100 and H100 (docs/models/energy.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "zeus_tables.h"

/* Speed factors of the unmeasured types: speed at their maximum limit relative to the reference
 * (V100 at 250 W). Each is a product of published generation-to-generation training speedups,
 * taking the low end of what the source reports (conservative on purpose: we assume the Zeus
 * workloads, single-GPU PyTorch jobs, train in FP32, which the data does not record; FP32 gains
 * less from new Tensor Cores than the mixed-precision benchmarks). The reference is a 250 W
 * V100-PCIe while Lambda compares against a 300 W V100-SXM2, another reason to err low. */

/* A100-SXM4 vs V100: ~1.4x for FP32/TF32 deep-learning training (1.2x FP32 matmul x 1.16x TF32).
 * Lambda's estimate in "NVIDIA A100 GPU & DGX A100 Server - Deep Learning Benchmark Estimates"
 * (a later version of the page, "NVIDIA A100 GPU Benchmarks for Deep Learning", quotes 1.95-2.5x
 * for FP16 language models; we keep the FP32 figure),
 * https://lambdalabs.com/blog/nvidia-a100-gpu-deep-learning-benchmarks-and-architectural-overview/
 */
#define A100_SXM_VS_V100 1.4
/* A100-PCIe (250 W) vs A100-SXM4 (400 W): NVIDIA rates the PCIe card at 90 % of the SXM4's
 * real-world performance. Hardware Times, "NVIDIA Launches PCIe Variant of the A100 'Ampere' GPU
 * Accelerator" (table row "Relative Performance (SXM Version)": 90 % / 100 %),
 * https://www.hardwaretimes.com/nvidia-launches-pcie-variant-of-the-a100-ampere-gpu-accelerator/
 */
#define A100_PCIE_VS_A100_SXM 0.9
/* H100-SXM5 vs A100-SXM4: MLPerf Training v3.0 submissions by Dell with matching CPU and GPU
 * counts: ResNet-50 1.8x, 3D U-Net 1.4x, DLRM 2.0x; we take the lowest, 1.4x. Silverton
 * Consulting, "MLperf results show H100 v A100 and v Habana Gaudi2 GPUs" (2023-07-12),
 * https://silvertonconsulting.com/2023/07/12/mlperf-results-show-h100-v-a100-and-v-habana-gaudi2-gpus/
 */
#define H100_SXM_VS_A100_SXM 1.4
/* H100 NVL vs H100-SXM5: no published training comparison found; we use the ratio of the
 * FP16 Tensor Core peaks of the H100 PCIe and the SXM5 (1,513 / 1,979 TFLOPS, both with
 * sparsity), assuming the NVL, a 350-400 W PCIe card against the SXM5's 700 W, is no better
 * placed than the H100 PCIe. HPC Tech, "NVIDIA H100" specification table,
 * https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html */
#define H100_NVL_VS_H100_SXM (1513.0 / 1979.0)

/* The unmeasured types and their speed factors (speed at the type's maximum limit). The
 * measured types are those named in eco_zeus_gpus. */
static const struct scaled_type {
    const char *name; /* catalog name */
    double speed_factor;
} scaled[] = {
    {"A100-PCIE", A100_SXM_VS_V100 *A100_PCIE_VS_A100_SXM},
    {"A100-SXM", A100_SXM_VS_V100},
    {"H100-SXM", A100_SXM_VS_V100 *H100_SXM_VS_A100_SXM},
    {"H100-NVL", A100_SXM_VS_V100 *H100_SXM_VS_A100_SXM *H100_NVL_VS_H100_SXM},
};

#define MIX_SLOTS (sizeof((struct eco_workload_mix *)0)->cum / sizeof(double))
_Static_assert(ECO_ZEUS_N_WORKLOADS + 1 <= MIX_SLOTS, "eco_workload_mix.cum holds every workload");

static int same(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

size_t eco_workload_count(void)
{
    return ECO_ZEUS_N_WORKLOADS + 1;
}

const char *eco_workload_name(size_t w)
{
    if (w == ECO_WORKLOAD_GENERIC)
        return "generic";
    return w < eco_workload_count() ? eco_zeus_workloads[w - 1].name : NULL;
}

int eco_workload_find(const char *name)
{
    if (!name)
        return -1;
    for (size_t w = 0; w < eco_workload_count(); w++)
        if (same(name, eco_workload_name(w)))
            return (int)w;
    return -1;
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* y at x = at on the piecewise-linear curves through (xs[i], ya[i]) and (xs[i], yb[i]), into
 * *a and *b: xs strictly increasing and xs[0] <= at <= xs[n-1]; exactly ya[i], yb[i] at a
 * measured point. The segment is searched once for both. */
static void interp2(const double *xs, const double *ya, const double *yb, size_t n, double at,
                    double *a, double *b)
{
    size_t i = 1;
    if (at <= xs[0]) {
        *a = ya[0];
        *b = yb[0];
        return;
    }
    while (i < n - 1 && at > xs[i])
        i++;
    if (at >= xs[i]) {
        *a = ya[i];
        *b = yb[i];
        return;
    }
    double f = (at - xs[i - 1]) / (xs[i] - xs[i - 1]);
    *a = ya[i - 1] + f * (ya[i] - ya[i - 1]);
    *b = yb[i - 1] + f * (yb[i] - yb[i - 1]);
}

/* Zeus workload z (0-based) on measured GPU g; the limit is clamped to the measured range. */
static void eval_measured(size_t z, size_t g, double limit_w, double *speed, double *power_w)
{
    const struct eco_zeus_curve *c = &eco_zeus_curves[z][g];
    const struct eco_zeus_curve *ref = &eco_zeus_curves[z][ECO_ZEUS_GPU_V100];
    double l = clamp(limit_w, c->limit_w[0], c->limit_w[c->n - 1]), t;
    interp2(c->limit_w, c->time_s, c->power_w, c->n, l, &t, power_w);
    *speed = ref->time_s[ref->n - 1] / t;
}

/* Zeus workload z on an unmeasured type: the V100 curve at the limit mapped linearly from the
 * type's [min, max] onto the V100's [100, 250] W; power scaled by max / 250 W and capped at the
 * limit, speed scaled by the type's factor. */
static void eval_scaled(size_t z, const struct eco_gpu_type *t, double factor, double limit_w,
                        double *speed, double *power_w)
{
    const struct eco_zeus_curve *v = &eco_zeus_curves[z][ECO_ZEUS_GPU_V100];
    double lo = v->limit_w[0], hi = v->limit_w[v->n - 1];
    double l = clamp(limit_w, t->min_limit_w, t->max_limit_w);
    double x = lo + (l - t->min_limit_w) / (t->max_limit_w - t->min_limit_w) * (hi - lo);
    double s, p;
    eval_measured(z, ECO_ZEUS_GPU_V100, x, &s, &p);
    *speed = s * factor;
    p *= t->max_limit_w / hi;
    /* A firmware power cap keeps the average at the limit; without this cap the scaled
     * H100-SXM running resnet50 would draw ~280 W at its 200 W minimum (99.5 W x 700/250). */
    *power_w = p < l ? p : l;
}

/* How a catalog type is modelled: measured (*zeus >= 0) or scaled (*factor set). */
static int find_model(const char *name, int *zeus, double *factor)
{
    *zeus = -1;
    for (size_t g = 0; g < ECO_ZEUS_N_GPUS; g++)
        if (same(name, eco_zeus_gpus[g]))
            *zeus = (int)g;
    for (size_t i = 0; i < sizeof scaled / sizeof scaled[0]; i++)
        if (same(name, scaled[i].name))
            *factor = scaled[i].speed_factor;
    return *zeus >= 0 || *factor > 0 ? 0 : -EINVAL;
}

/* find_model's answers per catalog index, computed once: the lookup compares names without
 * regard to case on every call otherwise (the capping simulator evaluates millions of times).
 * The catalog and the model tables are constant, so every thread computes the same entries;
 * `ready` (release / acquire) publishes them. Catalog indexes from CACHE_TYPES on, which no
 * catalog has yet, fall back to the lookup. */
#define CACHE_TYPES 32
static struct {
    int zeus, ok;
    double factor;
} model_cache[CACHE_TYPES];
static atomic_int model_cache_ready;

static int cached_model(int type, const char *name, int *zeus, double *factor)
{
    if (type >= CACHE_TYPES)
        return find_model(name, zeus, factor);
    if (!atomic_load_explicit(&model_cache_ready, memory_order_acquire)) {
        size_t n = eco_catalog_count() < CACHE_TYPES ? eco_catalog_count() : CACHE_TYPES;
        for (size_t i = 0; i < n; i++) {
            double f = 0;
            int z;
            model_cache[i].ok = find_model(eco_catalog_get(i)->name, &z, &f) == 0;
            model_cache[i].zeus = z;
            model_cache[i].factor = f;
        }
        atomic_store_explicit(&model_cache_ready, 1, memory_order_release);
    }
    *zeus = model_cache[type].zeus;
    *factor = model_cache[type].factor;
    return model_cache[type].ok ? 0 : -EINVAL;
}

static void eval_one(size_t z, int zeus, double factor, const struct eco_gpu_type *t,
                     double limit_w, double *speed, double *power_w)
{
    if (zeus >= 0)
        eval_measured(z, (size_t)zeus, limit_w, speed, power_w);
    else
        eval_scaled(z, t, factor, limit_w, speed, power_w);
}

int eco_power_eval(int type, size_t w, double limit_w, double *speed, double *power_w)
{
    const struct eco_gpu_type *t = type >= 0 ? eco_catalog_get((size_t)type) : NULL;
    int zeus;
    double factor = 0;
    if (!t || w >= eco_workload_count() || !isfinite(limit_w))
        return -EINVAL;
    if (cached_model(type, t->name, &zeus, &factor) < 0)
        return -EINVAL; /* a catalog type without a power model */
    double s = 0, p = 0;
    if (w == ECO_WORKLOAD_GENERIC) {
        /* Mean of the six workloads' speeds and powers at this limit. */
        for (size_t z = 0; z < ECO_ZEUS_N_WORKLOADS; z++) {
            double sz, pz;
            eval_one(z, zeus, factor, t, limit_w, &sz, &pz);
            s += sz;
            p += pz;
        }
        s /= ECO_ZEUS_N_WORKLOADS;
        p /= ECO_ZEUS_N_WORKLOADS;
    } else {
        eval_one(w - 1, zeus, factor, t, limit_w, &s, &p);
    }
    if (speed)
        *speed = s;
    if (power_w)
        *power_w = p;
    return 0;
}
