/* SPDX-License-Identifier: MIT */
/* GPU choice on one GPU server by live status: per-GPU state fed by sensor
 * samples (averaged utilisation, memory, hysteresis, in-flight reservations) and the
 * strategies that pick GPUs from it (docs/policies/gpu-selection.md). Pure: time is passed
 * in, no clocks, no I/O, no globals; shared by the daemon and the simulator. */
#ifndef ECOSCHED_GPUSEL_H
#define ECOSCHED_GPUSEL_H

#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"

/* Sizes of the fixed per-GPU tables. 64 GPUs: the most the fake NVML offers and more than any
 * single server ships (16 in an HGX-2). 64 samples per GPU: a 10 s window sampled at up to
 * 6.4 Hz (NVML's own utilisation period is 1/6 s to 1 s); older samples are overwritten, so a
 * longer window averages the newest 64 only. 16 jobs per GPU: a sharing limit no measured
 * co-location goes near (pairs in Gavel and Lucid). */
#define ECO_GPUSEL_MAX_GPUS 64
#define ECO_GPUSEL_RING 64
#define ECO_GPUSEL_MAX_JOBS 16

/* Defaults (the page gives the reasoning at length). */
#define ECO_GPUSEL_WINDOW_S 10.0  /* smooths per-step dips and input-pipeline stalls */
#define ECO_GPUSEL_UTIL_HI 0.5    /* averaged utilisation above this: busy */
#define ECO_GPUSEL_UTIL_LO 0.2    /* ... and free again only below this */
#define ECO_GPUSEL_MEM_HI 0.2     /* used memory fraction above this (free < 80%): busy */
#define ECO_GPUSEL_MEM_LO 0.1     /* free again only at or below (free >= 90%: task-spooler) */
#define ECO_GPUSEL_SHARE_UTIL 0.7 /* a sharing job joins a GPU only under this utilisation */
#define ECO_GPUSEL_SHARE_MARGIN_B (512ull << 20) /* CUDA context and allocator slack */
#define ECO_GPUSEL_GRACE_S 30.0    /* a just-started job's claim: framework start-up time */
#define ECO_GPUSEL_MEMTHR_FREE 0.9 /* memory-threshold strategy: task-spooler's 90% free */
/* memory-threshold: task-spooler's wait between two GPU job starts (ts --set_gpu_wait) */
#define ECO_GPUSEL_MEMTHR_WAIT_S 30.0
/* live, known workloads: least summed speed factor of a pair (gpu-selection.md) */
#define ECO_GPUSEL_SHARE_MIN_GAIN 1.1

/* One sensor reading of one GPU at time t_s: utilisation in 0..1 over the driver's last
 * sample period, memory in bytes (used <= total, total > 0). */
struct eco_gpu_sample {
    double t_s;
    double util;
    uint64_t mem_used_b;
    uint64_t mem_total_b;
};

/* What a job asks for. mem_b is the memory it declares per GPU (0: not declared). */
struct eco_gpu_request {
    uint64_t job_id; /* the caller's id; reserve/release key on it */
    uint32_t n_gpus; /* 1..number of GPUs */
    uint64_t mem_b;
    int share;          /* nonzero: may share a GPU with other sharing jobs */
    uint32_t coloc_ref; /* 1 + the job's workload index in the co-location model
                         * (ecosched/coloc.h); 0: workload not known */
    uint32_t queued;    /* jobs waiting to start, this one included (0: not known) */
};

struct eco_gpusel_params {
    double window_s;         /* utilisation averaging window, >= 0 (0: last sample only) */
    double util_hi, util_lo; /* 0 <= lo <= hi <= 1 */
    double mem_hi, mem_lo;   /* used-memory fractions, 0 <= lo <= hi <= 1 */
    double share_util_max;   /* 0..1 */
    uint64_t share_margin_b;
    double grace_s;           /* >= 0 */
    double memthr_free;       /* 0..1, memory-threshold strategy only */
    double memthr_wait_s;     /* >= 0, memory-threshold only: no start until this long after
                               * the previous one (task-spooler's gpu_wait) */
    double share_min_gain;    /* >= 0, live only: least summed speed factor of a measured
                               * pair for the job to join a GPU (both workloads known) */
    int hold_exclusive;       /* nonzero (default): a job that does not share keeps its GPUs to
                               * itself until released; 0: only for its claim (grace period or
                               * until its load shows), then live status alone decides */
    uint32_t share_max_jobs;  /* live: a GPU holding this many recorded jobs takes no more
                               * (0, the default: ECO_GPUSEL_MAX_JOBS) */
    double share_settle_s;    /* live, jobs of unknown workload: a GPU whose newest recorded
                               * job started less than this long ago takes no job beside it
                               * (its readings do not show that job yet); >= 0, default 0 */
    uint32_t share_min_queue; /* live, jobs of unknown workload: a job joins a GPU beside
                               * others only while at least this many jobs wait, itself
                               * included (req->queued); 0, the default: always */
};

/* Fills p with the defaults above. */
void eco_gpusel_params_default(struct eco_gpusel_params *p);
/* 0, or -EINVAL with a message naming the field in err (optional). */
int eco_gpusel_params_check(const struct eco_gpusel_params *p, struct eco_error *err);

struct eco_gpusel;

struct eco_gpusel_ops {
    const char *name;
    const char *summary;
    /* Chooses req->n_gpus GPUs at now_s without changing s; writes them in increasing index
     * order to out_gpus (caller-owned, at least req->n_gpus entries). 0, -EAGAIN (not enough
     * GPUs free now), -EOVERFLOW (never: fewer than n GPUs have req->mem_b of memory in
     * total), -EINVAL (NULL argument, 0 GPUs, more GPUs than the server has). */
    int (*choose)(const struct eco_gpusel *s, double now_s, const struct eco_gpu_request *req,
                  uint32_t *out_gpus);
};

/* Registry: "exclusive", "memory-threshold", "live", "share-fit" (case-insensitive); NULL if
 * unknown. */
const struct eco_gpusel_ops *eco_gpusel_find(const char *name);
/* NULL-terminated list of all strategies. */
const struct eco_gpusel_ops *const *eco_gpusel_all(void);

/* A selector for n_gpus GPUs (1..ECO_GPUSEL_MAX_GPUS) choosing with `ops` (NULL: live) under
 * `p` (NULL: defaults; copied). NULL with errno EINVAL (bad count or parameters) or ENOMEM.
 * Free with eco_gpusel_destroy (accepts NULL). */
struct eco_gpusel *eco_gpusel_create(uint32_t n_gpus, const struct eco_gpusel_ops *ops,
                                     const struct eco_gpusel_params *p);
void eco_gpusel_destroy(struct eco_gpusel *s);

uint32_t eco_gpusel_n_gpus(const struct eco_gpusel *s);
/* Borrowed; valid while s lives. */
const struct eco_gpusel_ops *eco_gpusel_strategy(const struct eco_gpusel *s);
const struct eco_gpusel_params *eco_gpusel_params(const struct eco_gpusel *s);

/* Feeds one sample of GPU `gpu`: updates its averaged utilisation and busy/free state and
 * settles the claims of jobs whose load it shows. 0, -ENODEV (gpu out of range), -EINVAL
 * (non-finite time, utilisation outside 0..1, total 0, used > total, or a time earlier than
 * the GPU's previous sample; the state is left unchanged). */
int eco_gpusel_sample(struct eco_gpusel *s, uint32_t gpu, const struct eco_gpu_sample *smp);

/* Chooses with the selector's strategy (see eco_gpusel_ops.choose). */
int eco_gpusel_choose(const struct eco_gpusel *s, double now_s, const struct eco_gpu_request *req,
                      uint32_t *out_gpus);

/* Records that job req->job_id started at now_s on the n GPUs `gpus` (borrowed): each GPU
 * gets a claim of req->mem_b (and the whole GPU when !req->share) until the GPU's samples
 * show it or grace_s passes, and a job record until eco_gpusel_release. 0, -EINVAL (NULL,
 * n 0, a GPU out of range or listed twice, non-finite time), -EEXIST (job already recorded),
 * -ENOSPC (a GPU already holds ECO_GPUSEL_MAX_JOBS jobs; nothing is recorded). */
int eco_gpusel_reserve(struct eco_gpusel *s, double now_s, const uint32_t *gpus, uint32_t n,
                       const struct eco_gpu_request *req);
/* Forgets job `job_id` on every GPU (the job ended). 0 or -ENOENT. */
int eco_gpusel_release(struct eco_gpusel *s, uint64_t job_id);

/* One GPU as the strategies see it at now_s (for `ecosched gpus`, metrics and tests). */
struct eco_gpusel_gpu {
    int has_sample;  /* 0 until the first sample: no live strategy offers the GPU */
    int busy;        /* hysteresis state */
    double util_avg; /* over the window ending at the last sample */
    struct eco_gpu_sample last;
    uint32_t n_jobs;     /* recorded jobs */
    uint32_t n_claims;   /* claims still in force at now_s */
    int whole_claimed;   /* a claim of a job that does not share is in force */
    int exclusive_held;  /* a recorded job does not share */
    uint64_t reserved_b; /* memory of the claims in force */
};

/* 0 or -ENODEV. */
int eco_gpusel_gpu_status(const struct eco_gpusel *s, uint32_t gpu, double now_s,
                          struct eco_gpusel_gpu *out);

#endif
