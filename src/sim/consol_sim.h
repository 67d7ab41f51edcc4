/* SPDX-License-Identifier: MIT */
/* Container consolidation simulator: containers whose GPU utilisation and GPU memory change
 * every period (built from openb pods, Lucid workloads and Acme distributions), on hosts that
 * a consolidation policy (ecosched/consol.h) packs, wakes and powers down. A model apart from
 * job-trace replay (docs/models/container-workloads.md, docs/policies/consolidation.md). */
#ifndef ECOSCHED_CONSOL_SIM_H
#define ECOSCHED_CONSOL_SIM_H

#include <stdint.h>
#include <stdio.h>
#include "ecosched/cluster.h"
#include "ecosched/consol.h"
#include "ecosched/error.h"
#include "ecosched/job.h"
#include "ecosched/rng.h"

/* Defaults (docs/models/container-workloads.md gives the reasons). */
#define ECO_CONSOL_PERIOD_S 300.0    /* CloudSim's and PlanetLab's 5-minute interval */
#define ECO_CONSOL_HORIZON_S 86400.0 /* one day, as Beloglazov and Buyya's PlanetLab runs */
#define ECO_CONSOL_CORR_S 3600.0     /* correlation time of a container's activity */
/* Checkpoint and restore bandwidth of GPU memory, MiB/s: half of a 10 Gb/s link (the other
 * half left to the containers, as Beloglazov and Buyya's migration model), 596 MiB/s. */
#define ECO_CONSOL_MIG_BW_MIBS (10e9 / 8 / 2 / 1048576.0)

/* Migration of a GPU container by checkpoint and restore: CRIU with NVIDIA's cuda-checkpoint
 * (docs/models/energy.md, "Migration", gives the sources and ranges). cuda-checkpoint copies
 * the device memory into the process's host memory, CRIU dumps that and the process's own host
 * memory, the image crosses the network, and the destination reverses the two steps. */
/* Fixed part of a checkpoint: cuda-checkpoint's lock (waits for running kernels) and context
 * teardown, CRIU's freeze and dump of the process tree apart from its memory. Assumption, 1-5 s
 * (cuda-checkpoint's README and NVIDIA's CRIU post name no figure; CRIUgpu, Stoyanov et al.
 * 2025, report seconds for small models). */
#define ECO_CONSOL_CKPT_FIXED_S 2.0
/* Fixed part of a restore: CRIU's restore of the process tree and the re-creation of the CUDA
 * context on the new GPU (a CUDA context alone takes 0.1-1 s to create; libraries re-load).
 * Assumption, 1-10 s. */
#define ECO_CONSOL_RESTORE_FIXED_S 3.0
/* Device-to-host (checkpoint) and host-to-device (restore) copy of GPU memory, MiB/s: 12 GB/s,
 * the practical rate of a PCIe 3.0 x16 link (15.75 GB/s raw; NVIDIA's bandwidthTest measures
 * 11-13 GB/s pinned on V100 PCIe hosts). */
#define ECO_CONSOL_PCIE_MIBS (12e9 / 1048576.0)
/* Host memory of a container besides its GPU memory (the training process's resident set:
 * framework, data loader workers, pinned buffers), MiB per GPU requested. Assumption, 2-16 GiB
 * per GPU; openb's memory_mib request (a reservation, not a resident set) is not read by the
 * pod-list loader. */
#define ECO_CONSOL_HOST_MEM_MIB_PER_GPU 4096.0
/* Power each of the source and destination hosts draws above its state while a migration copies
 * (CRIU's dump or restore on a few CPU cores, the NIC at line rate), W. Assumption, 30-150 W: a
 * 10 GbE NIC draws 5-15 W, and a dual-socket host's package power rises 20-40 W per few busy
 * cores (SPECpower results of 2018-2020 Xeon servers). */
#define ECO_CONSOL_MIG_HOST_W 60.0

struct eco_consol_mig {
    double bw_mibs;         /* network share for the image, MiB/s (> 0) */
    double pcie_mibs;       /* device-host copy, MiB/s; 0: no copy stage */
    double ckpt_fixed_s;    /* fixed checkpoint time, s */
    double restore_fixed_s; /* fixed restore time, s */
    double host_w;          /* extra power of each of the two hosts while it lasts, W */
};

/* The defaults above, with bandwidth `bw_mibs` (ECO_CONSOL_MIG_BW_MIBS when 0). */
void eco_consol_mig_default(struct eco_consol_mig *m, double bw_mibs);
/* Time a container with `gpu_mb` MiB of GPU memory and `host_mb` of host memory is paused by a
 * migration: ckpt_fixed + gpu/pcie + (gpu + host)/bw + gpu/pcie + restore_fixed. s. */
double eco_consol_mig_time_s(const struct eco_consol_mig *m, double gpu_mb, double host_mb);
/* Energy of a migration of `t_s` seconds above the hosts' own power: both hosts' copy power. J.
 * (The paused container's GPUs draw idle power on the source meanwhile, in the host's power.) */
double eco_consol_mig_energy_j(const struct eco_consol_mig *m, double t_s);

/* One container: its request (from an openb pod) and its workload (a Lucid measurement). */
struct eco_consol_container {
    uint32_t pod_line;  /* trace line of the pod it came from */
    uint16_t gpus;      /* GPUs it spans (the pod's num_gpu) */
    double request;     /* GPUs requested: num_gpu x gpu_milli / 1000 */
    uint32_t workload;  /* co-location model workload index (ecosched/coloc.h, a Lucid one) */
    double util_alone;  /* the workload's GPU utilisation alone, 0..1 */
    double gmem_mb;     /* its GPU memory alone, MiB per GPU */
    double host_mem_mb; /* its host memory, MiB (dumped by a checkpoint with its GPU memory) */
    uint64_t seed;      /* of its activity series */
};

struct eco_consol_workload {
    struct eco_consol_container *c;
    size_t n;
    double corr_s; /* activity correlation time, s */
};

/* Builds `n` containers from the pods of `pods` (an openb pod list read by eco_trace_load):
 * a seeded sample of pods without replacement (with replacement when n exceeds the pods), each
 * given a Lucid workload whose utilisation alone fits its GPU share. 0, -EINVAL (no pods, n 0;
 * err says why) or -ENOMEM. Free with eco_consol_workload_fini. */
int eco_consol_workload_build(const struct eco_jobset *pods, size_t n, uint64_t seed, double corr_s,
                              struct eco_consol_workload *w, struct eco_error *err);
void eco_consol_workload_fini(struct eco_consol_workload *w);

/* A container's activity series: its state, advanced one period at a time. */
struct eco_consol_series {
    struct eco_rng rng;
    double z; /* latent Gaussian activity */
    int started;
};
void eco_consol_series_init(struct eco_consol_series *s, const struct eco_consol_container *c);
/* Advances to the next period (rho: correlation between consecutive periods) and writes the
 * container's GPU utilisation demand (GPUs) and GPU memory (MiB), memory capped at
 * `gpu_mem_mb` per GPU. */
void eco_consol_series_next(struct eco_consol_series *s, const struct eco_consol_container *c,
                            double rho, double gpu_mem_mb, double *util_gpus, double *mem_mb);

/* One period of the timeline. */
struct eco_consol_tl_row {
    double t_s;
    double power_w; /* average over the period */
    uint32_t hosts_on;
    uint32_t migrations; /* decided at t_s */
    uint32_t sla_hosts;  /* hosts whose demand exceeded their GPUs or GPU memory */
    double util;         /* GPU utilisation demand over the GPUs of hosts that are on */
    double mem;          /* GPU memory used over the memory of hosts that are on */
};

struct eco_consol_sim_config {
    const struct eco_consol_ops *policy;
    struct eco_consol_thresholds thresholds; /* read by the dual-threshold policies; also the
                                              * reference of over_threshold_share */
    double period_s;                         /* default ECO_CONSOL_PERIOD_S when 0 */
    double horizon_s;                        /* default ECO_CONSOL_HORIZON_S when 0 */
    double mig_bw_mibs;                      /* default ECO_CONSOL_MIG_BW_MIBS when 0 */
    const struct eco_consol_mig *mig;        /* NULL: eco_consol_mig_default(mig_bw_mibs) */
    /* Co-location pairs: `judge` those applied as the containers' slowdown, `decide` those
     * DGDDEP's interference estimate reads (enum eco_consol_pairs; 0: Lucid's, both). */
    int judge, decide;
    void (*timeline)(void *ctx, const struct eco_consol_tl_row *row); /* may be NULL */
    void *timeline_ctx;
    /* Optional: given demand instead of the workload's activity series (measured series, hand
     * computed tests): container `ctr`'s GPU utilisation (GPUs) and memory (MiB) in period
     * `step`. */
    void (*demand)(void *ctx, uint32_t ctr, size_t step, double *util_gpus, double *mem_mb);
    void *demand_ctx;
};

struct eco_consol_summary {
    const char *policy;
    struct eco_consol_thresholds thresholds;
    double period_s, horizon_s, mig_bw_mibs;
    uint32_t hosts, gpus;
    size_t containers;
    double requested_gpus;
    double energy_j;           /* all of it: the parts below add up to it */
    double energy_on_j;        /* hosts on: base, idle and busy GPUs */
    double energy_off_j;       /* hosts off */
    double energy_boot_j;      /* hosts booting */
    double energy_migration_j; /* hosts copying checkpoints (eco_consol_mig_energy_j) */
    double avg_hosts_on;       /* host-seconds on / horizon */
    double peak_hosts_on;
    uint64_t migrations;
    uint64_t boots, shutdowns;
    double migrated_mib;
    double sla_violation;  /* share of host-time on with demand above 100% of GPUs or memory */
    double over_threshold; /* share of host-time on above an upper threshold */
    /* Work lost by containers while active (utilisation > 0), as shares of active time. */
    double lost_migration, lost_contention, lost_coloc;
    double slowdown_mean; /* active time / useful time, all containers */
    double slowdown_p95;  /* per container, 95th percentile */
    /* Work in GPU-seconds (utilisation demand x time): demanded while active, and done. */
    double work_demanded_gpu_s, work_useful_gpu_s;
    /* Lost work charged (docs/policies/consolidation.md, "Lost work"): energy per useful
     * GPU-hour, and the energy all the demanded work costs at that rate. */
    double energy_per_work_j; /* J per useful GPU-second */
    double energy_charged_j;  /* energy_j x demanded / useful */
    int judge, decide;
};

/* Co-location pairs a simulation applies or decides with. */
enum eco_consol_pairs { ECO_CONSOL_PAIRS_LUCID = 0, ECO_CONSOL_PAIRS_GAVEL = 1 };
/* "lucid" or "gavel" (case-insensitive). 0 or -EINVAL. */
int eco_consol_pairs_parse(const char *name, int *out);
const char *eco_consol_pairs_name(int pairs);

/* Runs the consolidation simulation of `w` on the hosts of `c` (one host per node). Containers
 * start placed first-fit by request on the hosts in order. 0, -EINVAL (cluster too small, bad
 * thresholds; err says why) or -ENOMEM. */
int eco_consol_sim_run(const struct eco_cluster *c, const struct eco_consol_workload *w,
                       const struct eco_consol_sim_config *cfg, struct eco_consol_summary *s,
                       struct eco_error *err);

/* The co-location bound at a service level (docs/policies/consolidation.md, "A bound at a
 * service level"): the least energy of any consolidation of the same containers' demand whose
 * lost work is at most `level` of the demanded work, judged with cfg->judge's pairs. */
struct eco_consol_bound {
    double level;          /* lost-work share allowed, 0..1 */
    double kwh;            /* the bound: the largest of the ones below and the heavy terms */
    double hosts_only_kwh; /* without the heavy-container term: hosts' capacity alone */
    double theta;          /* the heavy share whose term gave kwh (0: none) */
    double demanded_gpu_h; /* the demand's GPU-hours */
};
/* Samples the demand of `w` as eco_consol_sim_run does (cfg's period, horizon, judge and demand
 * callback; the policy is not read) and solves the bound with GLPK. Hosts of one kind only.
 * 0, -EINVAL (err says why) or -ENOMEM. */
int eco_consol_bound(const struct eco_cluster *c, const struct eco_consol_workload *w,
                     const struct eco_consol_sim_config *cfg, double level,
                     struct eco_consol_bound *out, struct eco_error *err);

/* JSON object of the summary (deterministic: %.15g). Caller frees; NULL on ENOMEM. */
char *eco_consol_summary_json(const struct eco_consol_summary *s);
/* timeline.csv: header, then one row per call. */
/* The simulator's power of an on host of group g: base_w, plus for each GPU q < gpus that
 * holds a context (bit q of `held`) eco_node_group_gpu_power_w at utilisation load[q] (busy_w
 * fully busy), and gpu_idle_w for each GPU without one. W. Exposed for tests. */
double eco_consol_sim__host_power_w(const struct eco_node_group *g, double busy_w, uint32_t gpus,
                                    const double *load, uint64_t held);

int eco_consol_timeline_header(FILE *f);
void eco_consol_timeline_write(void *ctx, const struct eco_consol_tl_row *row);

#endif
