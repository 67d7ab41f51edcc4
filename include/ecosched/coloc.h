/* SPDX-License-Identifier: MIT */
/* GPU co-location model: measured training workloads (Gavel OSDI '20 on K80/P100/V100, Lucid
 * ASPLOS '23) and the speed of two jobs sharing one GPU, measured where a pair was measured and
 * estimated from GPU utilisation otherwise (docs/models/colocation.md). Pure: compiled-in
 * tables, no I/O, no globals that change. */
#ifndef ECOSCHED_COLOC_H
#define ECOSCHED_COLOC_H

#include <stddef.h>

/* Fallback for pairs not measured (docs/models/colocation.md): each job of a pair whose GPU
 * utilisations alone are u_a and u_b runs at max(1, u_a + u_b)^-ECO_COLOC_FALLBACK_EXP of its
 * alone speed. 0.5 is fitted on Lucid's 1,388 measured pairs: mean absolute error 0.070 in
 * speed factor, against 0.081 for proportional sharing (exponent 1) and 0.097 for "no
 * slowdown". A workload whose utilisation is unknown (Gavel) counts as a full GPU, and a pair
 * with an unknown side is treated as time-slicing: 0.5 each, no gain from sharing. */
#define ECO_COLOC_FALLBACK_EXP 0.5
#define ECO_COLOC_TIMESLICE 0.5

/* Where a workload was measured. */
enum eco_coloc_source { ECO_COLOC_GAVEL = 0, ECO_COLOC_LUCID = 1 };

/* One measured workload alone on one GPU. Gavel workloads exist once per GPU type ("k80",
 * "p100", "v100"); Lucid's GPU model is not stated in its data, its type is "unstated". */
struct eco_coloc_workload {
    const char *name;     /* Gavel: "ResNet-50 (batch size 64)"; Lucid: "ResNet18 CIFAR-10 bs32",
                           * " amp" appended for mixed precision */
    const char *gpu_type; /* "k80", "p100", "v100" or "unstated" */
    enum eco_coloc_source source;
    double alone_speed; /* throughput alone: Gavel steps/s, Lucid the workload's own units */
    double gpu_util;    /* GPU utilisation alone, 0..1; < 0: not measured (Gavel) */
    double gmem_mb;     /* GPU memory used alone, MiB; 0: not measured (Gavel) */
    int label;          /* Lucid packing class 0 (shares well) .. 2 (heavy interference);
                         * -1 for Gavel */
};

/* Number of workloads (Gavel 26 job types x 3 GPU types, then Lucid's 66). */
size_t eco_coloc_n_workloads(void);
/* Workload i (< eco_coloc_n_workloads()), or NULL. Static storage: never freed. */
const struct eco_coloc_workload *eco_coloc_workload(size_t i);
/* Index of the workload named `name` (exact) measured on `gpu_type` (case-insensitive; NULL:
 * the first workload of that name on any type), or -ENOENT (-EINVAL for a NULL name). */
int eco_coloc_find(const char *name, const char *gpu_type);

/* How a pair's figures were obtained. */
enum eco_coloc_kind {
    ECO_COLOC_MEASURED = 0,   /* a measured row of Gavel or Lucid */
    ECO_COLOC_FALLBACK = 1,   /* utilisation rule, both utilisations known */
    ECO_COLOC_TIMESLICED = 2, /* a side without utilisation: time-slicing, 0.5 each */
};

/* Two jobs sharing one GPU. */
struct eco_coloc_pair {
    double speed_a, speed_b; /* co-located speed / alone speed of a and of b; 0 if infeasible */
    int feasible;            /* 0: measured as unable to share (Gavel's 0,0 rows: out of memory) */
    enum eco_coloc_kind kind;
    double gpu_util; /* utilisation of the shared GPU, 0..1: measured (Lucid), else
                      * min(1, u_a + u_b) when both are known, else -1 */
    double gmem_mb;  /* memory of the pair, MiB: measured (Lucid), else the sum when both are
                      * known, else 0 */
};

/* Speed factors of workloads a and b sharing one GPU (a == b: two copies of one workload).
 * 0 and *out filled, -EINVAL (index out of range, NULL out, or two Gavel workloads of
 * different GPU types, which cannot share a GPU). A Lucid workload with a Gavel one is never
 * measured: the fallback applies (time-slicing, as Gavel has no utilisation). */
int eco_coloc_pair(size_t a, size_t b, struct eco_coloc_pair *out);

/* The same rule for workloads outside the tables: factors of a job of utilisation u_a sharing
 * with one of u_b (each 0..1, or < 0 when unknown), written to *speed_a and *speed_b. Returns
 * the kind (ECO_COLOC_FALLBACK or ECO_COLOC_TIMESLICED). */
enum eco_coloc_kind eco_coloc_estimate(double u_a, double u_b, double *speed_a, double *speed_b);

/* Gavel's measurement of the same kind of workload as Lucid's workload `lucid` (for a judge
 * held out from Lucid's pairs; docs/models/colocation.md, "Lucid to Gavel"): the Lucid model
 * names a Gavel job family by a fixed table (ResNet18 and CIFAR-10 convnets: ResNet-18;
 * ResNet50 and ImageNet convnets: ResNet-50; LSTM: LM; Transformer and BERT: Transformer;
 * NeuMF: Recommendation; PPO and TD3: A3C; DCGAN: CycleGAN), then the member of that family
 * nearest in batch size (by |log2 ratio|, ties to the smaller batch; mixed precision is
 * ignored, Gavel measured none), measured on `gpu_type` ("k80", "p100" or "v100",
 * case-insensitive; any other type or NULL: "v100", the newest Gavel measured). A Gavel
 * workload maps to the workload of its name on that type. Index, or -EINVAL (out of range),
 * -ENOENT (a Lucid model the table does not name). */
int eco_coloc_gavel_match(size_t lucid, const char *gpu_type);

/* Number of measured pair rows (Gavel 1-GPU pairs on one server, each order once, then
 * Lucid's pairs, one order each); for tests and documentation. */
size_t eco_coloc_n_measured(void);

#endif
