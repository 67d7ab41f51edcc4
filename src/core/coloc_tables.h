/* SPDX-License-Identifier: MIT */
/* Internal: the measured co-location tables that scripts/gen_coloc_tables.py writes into
 * coloc_tables.c; read only by the co-location model (coloc.c). */
#ifndef ECOSCHED_COLOC_TABLES_H
#define ECOSCHED_COLOC_TABLES_H

#include "ecosched/coloc.h"

#define ECO_COLOC_N_WORKLOADS 144 /* Gavel 26 x 3 GPU types, Lucid 66 */
#define ECO_COLOC_N_PAIRS 3416    /* Gavel 2028 ordered 1-GPU pairs, Lucid 1388 */

/* One measured pair: workloads a and b (indices into eco_coloc_workloads) on one GPU. */
struct eco_coloc_row {
    unsigned short a, b;
    double speed_a, speed_b; /* 0, 0: infeasible */
    double gpu_util;         /* shared GPU, 0..1; -1: not measured */
    double gmem_mb;          /* 0: not measured */
};

extern const struct eco_coloc_workload eco_coloc_workloads[ECO_COLOC_N_WORKLOADS];
extern const struct eco_coloc_row eco_coloc_rows[ECO_COLOC_N_PAIRS];

#endif
