/* SPDX-License-Identifier: MIT */
/* Internal: the measured Zeus curves (epoch time and average power at each power limit) that
 * scripts/gen_power_tables.py writes into zeus_tables.c; read only by the power model. */
#ifndef ECOSCHED_ZEUS_TABLES_H
#define ECOSCHED_ZEUS_TABLES_H

#include <stddef.h>

#define ECO_ZEUS_N_WORKLOADS 6
#define ECO_ZEUS_N_GPUS 4
/* Index of the reference GPU in eco_zeus_gpus (the generator checks its order). */
#define ECO_ZEUS_GPU_V100 0

/* One measured workload configuration (the same on every GPU). */
struct eco_zeus_workload {
    const char *name;      /* short name used by --workload-mix, e.g. "resnet50" */
    const char *dataset;   /* Zeus dataset column, e.g. "imagenet" */
    const char *network;   /* Zeus network column, e.g. "resnet50" */
    const char *optimizer; /* Zeus optimizer column */
    int batch_size;        /* Zeus batch_size column */
};

/* One (workload, GPU) curve: n points sorted by strictly increasing limit. */
struct eco_zeus_curve {
    size_t n;
    const double *limit_w; /* power limit, W */
    const double *time_s;  /* time per epoch, s */
    const double *power_w; /* average GPU power over the epoch, W */
};

/* Static storage, never written. */
extern const struct eco_zeus_workload eco_zeus_workloads[ECO_ZEUS_N_WORKLOADS];
/* Catalog names of the measured GPUs ("V100", "A40", "RTX6000", "P100"). */
extern const char *const eco_zeus_gpus[ECO_ZEUS_N_GPUS];
extern const struct eco_zeus_curve eco_zeus_curves[ECO_ZEUS_N_WORKLOADS][ECO_ZEUS_N_GPUS];

#endif
