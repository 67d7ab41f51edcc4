/* SPDX-License-Identifier: MIT */
/* Built-in GPU catalog: memory, idle power and power-limit range of each GPU type. */
#ifndef ECOSCHED_CATALOG_H
#define ECOSCHED_CATALOG_H

#include <stddef.h>

struct eco_gpu_type {
    const char *name;         /* canonical name, e.g. "A100-SXM" */
    const char *model;        /* the model string as the source names it */
    double mem_gb;            /* device memory, GB */
    double idle_w;            /* power of an idle GPU holding no CUDA context, W */
    double idle_ctx_w;        /* power of an idle GPU holding a CUDA context (a job or a
                               * container has it but runs no kernel), W */
    double low_util_w;        /* power at low utilisation (ECO_LOW_UTIL of the GPU busy), W */
    double min_limit_w;       /* lowest settable power limit, W */
    double max_limit_w;       /* highest settable power limit, W */
    double default_limit_w;   /* default power limit (board TDP), W */
    double max_train_power_w; /* highest measured training power, W; 0 when not measured */
    const char *source;       /* where the figures come from */
    /* The host a node of this GPU type comes in: its power while on without its GPUs is
     * host_base_w + host_per_gpu_w x GPUs (CPUs, memory, fans, NICs, PCIe switches). */
    double host_base_w;      /* W */
    double host_per_gpu_w;   /* W per GPU slot */
    double boot_s;           /* power-on to accepting jobs, s */
    double shutdown_s;       /* shutdown to off, s */
    double cycle_j;          /* wear of one power cycle, as an energy equivalent, J */
    const char *host_source; /* where the host figures come from */
};

/* The utilisation (DCGM SM activity, 0..1) at which low_util_w is given: in the Acme A100
 * fleet (utilization_power_cdfs.csv) the sample quantile whose power is the low-utilisation
 * median (p35.5, 77.7 W) has 15.0 % SM activity (quantiles matched: the data hold marginal
 * distributions only). Zeus gives power, not utilisation: its ncf figures are taken at the
 * same 15 % (assumption). */
#define ECO_LOW_UTIL 0.15

/* Number of types in the catalog. */
size_t eco_catalog_count(void);
/* Type at index i (0 <= i < count); a pointer into static storage. */
const struct eco_gpu_type *eco_catalog_get(size_t i);
/* Index of the type named `name` (case-insensitive, '_' and '-' alike), or -1. */
int eco_catalog_find(const char *name);
/* Catalog type of a platform's model string (NVML names such as "Tesla V100-PCIE-32GB",
 * "NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"; case-insensitive, a type's name only as a
 * whole word: "A40" is not in "RTX A4000"), or -1 when the catalog has none (or model NULL). */
int eco_catalog_match(const char *model);

#endif
