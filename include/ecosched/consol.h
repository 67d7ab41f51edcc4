/* SPDX-License-Identifier: MIT */
/* Container consolidation policies: every period they see the hosts and the containers' GPU
 * utilisation and GPU memory, and decide which containers migrate where and which hosts power
 * down. CloudSim's single-resource policies (THR, MAD, IQR, LR overload detection with MMT
 * selection and PABFD placement) on GPU utilisation, and dual GPU-utilisation / GPU-memory
 * thresholds with PABFD or with minimum-energy re-allocation (DGDDEP).
 * docs/policies/consolidation.md and docs/policies/dgddep.md. Pure: no clocks, files or I/O. */
#ifndef ECOSCHED_CONSOL_H
#define ECOSCHED_CONSOL_H

#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"

/* Dual thresholds on a host's GPU utilisation (share of its GPUs busy) and GPU memory (share of
 * its GPU memory used), each in [0, 1]. Defaults: upper 0.8 is CloudSim's static threshold
 * (THR) default, used for memory too; lower 0.3 is a choice with no published source, the
 * lowest of docs/results/consolidation.md's sweep, which shows what higher values trade
 * (docs/policies/dgddep.md). */
#define ECO_CONSOL_LO_UTIL 0.3
#define ECO_CONSOL_HI_UTIL 0.8
#define ECO_CONSOL_LO_MEM 0.3
#define ECO_CONSOL_HI_MEM 0.8

/* Hours over which DGDDEP weighs emptying a host (docs/policies/dgddep.md, "Underload"): one
 * hour, the correlation time of container activity (docs/models/container-workloads.md),
 * beyond which today's demand says little about whether the host will be needed again. An
 * assumption; the Pareto sweep varies it (0.25-4 h). s. */
#define ECO_CONSOL_UNDERLOAD_HORIZON_S 3600.0

/* The dual thresholds and every policy's own knob. A knob left 0 takes the policy's default:
 * thr_upper CloudSim's THR 0.8; mad_safety 2.5, iqr_safety 1.5, lr_safety 1.2 (CloudSim's
 * PlanetLab runner); underload_horizon_s ECO_CONSOL_UNDERLOAD_HORIZON_S for DGDDEP and no energy
 * rule for the others. A negative underload_horizon_s turns the energy rule off. */
struct eco_consol_thresholds {
    double lo_util, hi_util, lo_mem, hi_mem;
    double thr_upper;                         /* THR: overloaded above it, (0, 1] */
    double mad_safety, iqr_safety, lr_safety; /* (0, 10] */
    double underload_horizon_s;               /* energy rule's horizon, s */
    /* Co-location gate, every policy (docs/policies/consolidation.md, "Co-location gate"): a
     * host that is on is refused as a container's destination when the decide model's
     * interference (eco_consol_view.coloc_worst) predicts a slowdown (1 - speed factor) above
     * coloc_gate for the container or for any container already there. 0: no gate; [0, 1). */
    double coloc_gate;
};

/* The defaults above. */
void eco_consol_thresholds_default(struct eco_consol_thresholds *t);
/* Parses "LO_UTIL,HI_UTIL,LO_MEM,HI_MEM". Each must be a number in [0, 1] and each lower
 * threshold below its upper one. 0 or -EINVAL with err naming the field; *t unchanged on
 * error; the knobs are kept. */
int eco_consol_thresholds_parse(const char *s, struct eco_consol_thresholds *t,
                                struct eco_error *err);
/* The same checks on a filled struct, and the knobs' bounds. 0 or -EINVAL (err names the
 * field). */
int eco_consol_thresholds_check(const struct eco_consol_thresholds *t, struct eco_error *err);

/* How many past utilisation samples a host's history keeps (CloudSim's
 * PowerVm.HISTORY_LENGTH). */
#define ECO_CONSOL_HISTORY 30

/* A host as a policy sees it (borrowed for one decide call). */
struct eco_consol_host {
    uint16_t gpus;
    uint8_t on;        /* 1: on (may hold containers); 0: off */
    double mem_cap_mb; /* GPU memory of all its GPUs, MiB */
    double base_w;     /* host without GPUs while on, W */
    double gpu_idle_w; /* one idle GPU, W */
    double gpu_busy_w; /* one GPU at full utilisation, W */
    /* GPU power states (docs/models/energy.md, "GPU power states"): an idle GPU holding a
     * context, and one at ECO_LOW_UTIL. Both 0: not given, the linear model between
     * gpu_idle_w and gpu_busy_w (hand-built hosts in tests). */
    double gpu_ctx_w; /* one idle GPU holding a CUDA context, W */
    double gpu_low_w; /* one GPU at ECO_LOW_UTIL utilisation, W */
    double off_w;     /* host while off, W */
    double boot_s;    /* power-on to accepting containers, s */
};

/* A container as a policy sees it. */
struct eco_consol_ctr {
    uint32_t host;     /* host it runs on */
    uint16_t gpus;     /* GPUs it spans */
    uint8_t pinned;    /* 1: may not move now (a migration still in flight) */
    uint32_t workload; /* opaque to policies; handed back to the interference callback */
    double util_gpus;  /* GPU utilisation demand now, in GPUs (0..gpus) */
    double mem_mb;     /* GPU memory used now, MiB */
    double mig_s;      /* checkpoint and restore time if it moved now, s */
    double mig_j;      /* energy of that migration above the hosts' own power, J */
    /* Utilisation samples of the last periods, oldest first, the current one last (n_hist of
     * them, at most ECO_CONSOL_HISTORY); the host histories CloudSim's detectors read are the
     * sums over the host's containers. */
    const double *hist;
    uint32_t n_hist;
};

struct eco_consol_view {
    double now_s;
    double period_s;
    const struct eco_consol_host *hosts;
    uint32_t n_hosts;
    const struct eco_consol_ctr *ctrs;
    uint32_t n_ctrs;
    /* Optional (may be NULL): the speed factor (0..1] container `ctr` would run at on host
     * `host` beside the containers listed in `on_host` (n of them), from co-location
     * interference. Used by DGDDEP's energy estimate. */
    double (*interference)(void *ctx, uint32_t ctr, uint32_t host, const uint32_t *on_host,
                           size_t n);
    void *interference_ctx;
    /* Optional (may be NULL; same context): the least speed factor (0..1] among container `ctr`
     * and the containers listed in `on_host` if `ctr` joined host `host` beside them. Read by
     * the co-location gate. */
    double (*coloc_worst)(void *ctx, uint32_t ctr, uint32_t host, const uint32_t *on_host,
                          size_t n);
};

struct eco_consol_move {
    uint32_t ctr;
    uint32_t to;
};

/* Caller-owned decision list. `moves` in the order they were decided; `off`: hosts left
 * without containers that power down; `wake`: off hosts that power on for incoming moves. */
struct eco_consol_decisions {
    struct eco_consol_move *moves;
    size_t n_moves, cap_moves;
    uint32_t *off;
    size_t n_off, cap_off;
    uint32_t *wake;
    size_t n_wake, cap_wake;
};

void eco_consol_decisions_reset(struct eco_consol_decisions *d);
void eco_consol_decisions_fini(struct eco_consol_decisions *d);

struct eco_consol;

struct eco_consol_ops {
    const char *name;
    const char *summary;
    /* A new instance with thresholds and knobs `t` (the dual-threshold policies read the four
     * thresholds, each policy its own knob; NULL: defaults). NULL on ENOMEM or bad thresholds
     * or knobs (err says which). */
    struct eco_consol *(*create)(const struct eco_consol_thresholds *t, struct eco_error *err);
    void (*destroy)(struct eco_consol *p);
    /* One consolidation pass. 0 or -ENOMEM. */
    int (*decide)(struct eco_consol *p, const struct eco_consol_view *v,
                  struct eco_consol_decisions *out);
};

const struct eco_consol_ops *eco_consol_find(const char *name);
/* NULL-terminated list of all consolidation policies. */
const struct eco_consol_ops *const *eco_consol_all(void);

/* Power of host `h` on with GPU utilisation demand `util_gpus` spread evenly over `held_gpus`
 * GPUs that hold a context (both capped at its GPU count; the simulator's LPT assignment puts
 * containers on distinct GPUs while there are empty ones): host base, the GPUs without a
 * context at gpu_idle_w, each held GPU piecewise linear through gpu_ctx_w at 0, gpu_low_w at
 * ECO_LOW_UTIL and gpu_busy_w at 1, as the simulator charges (eco_node_group_gpu_power_w).
 * A host without power states (gpu_ctx_w and gpu_low_w 0): every GPU linear between idle and
 * busy power in its utilisation (Fan et al., ISCA '07; CloudSim's PowerModelLinear). W. */
double eco_consol_host_power_held_w(const struct eco_consol_host *h, double util_gpus,
                                    double held_gpus);
/* eco_consol_host_power_held_w with the fewest GPUs that can carry util_gpus held
 * (ceil(util_gpus); none at 0). W. */
double eco_consol_host_power_w(const struct eco_consol_host *h, double util_gpus);

/* CloudSim's detectors, exposed for tests. `hist` holds n host utilisation samples (shares of
 * the host's GPUs), oldest first. Each returns the upper threshold it would apply, or a
 * negative value when the history is too short and the fallback applies. */
double eco_consol_mad_threshold(const double *hist, size_t n, double safety);
double eco_consol_iqr_threshold(const double *hist, size_t n, double safety);
/* Local regression (tricube-weighted least squares over the last 10 samples) predicted
 * utilisation `ahead` samples after the last one; a negative value when n < 10. */
double eco_consol_lr_predict(const double *hist, size_t n, double ahead);

#endif
