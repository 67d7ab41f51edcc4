/* SPDX-License-Identifier: MIT */
/* One multi-GPU server simulated in fixed time steps: a series of jobs of measured workloads
 * (ecosched/coloc.h) that declare GPU memory, show utilisation on sampled GPUs, may share a
 * GPU and then slow each other as measured; GPUs chosen by a static assignment or by one of
 * the GPU-selection strategies (ecosched/gpusel.h). docs/simulator-server.md. */
#ifndef ECOSCHED_SERVER_H
#define ECOSCHED_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "ecosched/error.h"
#include "ecosched/gpusel.h"

#define ECO_SRV_MAX_JOB_GPUS 8

/* One job of a series. */
struct eco_srv_job {
    uint32_t id;       /* 1.., the submission order */
    uint32_t wl;       /* workload: index in the co-location model */
    uint32_t n_gpus;   /* 1..ECO_SRV_MAX_JOB_GPUS */
    double work_s;     /* run time alone after start-up, s */
    double submit_s;   /* >= 0, non-decreasing with id */
    double gpu_mem_mb; /* memory it allocates (and declares) per GPU, MiB */
};

/* How a series is drawn (eco_srv_series). */
struct eco_srv_series_spec {
    uint32_t n_jobs;
    double work_min_s, work_max_s; /* work_s log-uniform in [min, max] */
    double two_gpu_frac;           /* share of 2-GPU jobs, 0..1 */
    double submit_every_s;         /* gap between submissions (0: all at t = 0); with
                                    * poisson, the mean gap */
    int poisson;       /* nonzero: gaps exponential with mean submit_every_s (a Poisson process),
                        * drawn from a stream of their own so the jobs are those of the even series */
    double gpu_mem_mb; /* only workloads that fit this memory are drawn */
};

/* Draws a series with `seed` into out[0..spec->n_jobs) (caller-owned): workloads uniformly
 * from Lucid's measured ones that fit, then GPU count and work; the first job is submitted at
 * 0, the others submit_every_s apart or, with poisson, after exponential gaps of that mean.
 * 0 or -EINVAL (err says). */
int eco_srv_series(uint64_t seed, const struct eco_srv_series_spec *spec, struct eco_srv_job *out,
                   struct eco_error *err);

/* Reads a series CSV (header `id,workload,gpus,work_s,submit_s`; workload by its name in the
 * co-location model, memory from the model). *out is malloc'd (free()), *n set. 0 or -EINVAL
 * with err naming file, line and field; -ENOMEM. */
int eco_srv_series_read(const char *path, struct eco_srv_job **out, size_t *n,
                        struct eco_error *err);
/* Writes the same format (with a gpu_mem_mb column, ignored when read). 0 or -errno. */
int eco_srv_series_write(FILE *f, const struct eco_srv_job *jobs, size_t n);

/* A set of measured pairs: Lucid's own, or Gavel's, each Lucid workload mapped to its nearest
 * Gavel workload on the server's GPU type (eco_coloc_gavel_match). Used twice, independently:
 * as the judge (the slowdown the simulator applies to jobs sharing a GPU, the "truth") and as
 * what `live` decides with when it knows the jobs' workloads (--decide); a run whose two
 * differ is judged by a model held out from its decisions. */
enum eco_srv_judge { ECO_SRV_JUDGE_LUCID = 0, ECO_SRV_JUDGE_GAVEL = 1 };

/* "lucid" or "gavel" (case-insensitive) into *out: 0 or -EINVAL. */
int eco_srv_judge_parse(const char *name, enum eco_srv_judge *out);
/* "lucid" or "gavel"; static storage. */
const char *eco_srv_judge_name(enum eco_srv_judge j);

/* The server and the model parameters. */
struct eco_srv_params {
    uint32_t n_gpus;     /* 1..ECO_GPUSEL_MAX_GPUS */
    int gpu_type;        /* catalog index: idle power, memory, busy power */
    double dt_s;         /* time step and GPU sampling period, > 0 */
    double startup_s;    /* a job's start-up before it allocates memory and computes, >= 0 */
    double noise;        /* sampled utilisation x (1 + noise x U(-1, 1)), 0..1 */
    uint64_t seed;       /* of the sampling noise */
    uint32_t ts_slots;   /* memory-threshold: most jobs running at once (0: n_gpus) */
    int share;           /* live: jobs may share a GPU */
    int known_workloads; /* live: the selector knows each job's workload (measured pairs) */
    int judge;           /* enum eco_srv_judge: pairs applied as the jobs' slowdown */
    int decide;          /* enum eco_srv_judge: pairs live looks up (known workloads only) */
    struct eco_gpusel_params sel;
};

/* Defaults: 8 GPUs of V100, dt 1 s, start-up 20 s, noise 0.05, seed 1, share and known
 * workloads on, deciding and judged with Lucid's pairs, the selector's defaults. */
void eco_srv_params_default(struct eco_srv_params *p);

/* What happened to one job. */
struct eco_srv_job_out {
    double start_s, end_s; /* last start; end */
    uint32_t gpus[ECO_SRV_MAX_JOB_GPUS];
    uint32_t restarts; /* out-of-memory failures at allocation, each followed by a retry */
    double shared_s;   /* time it computed next to another job on one of its GPUs */
};

struct eco_srv_result {
    double makespan_s;   /* last end - first submission */
    double avg_jct_s;    /* mean of end - submit */
    double gpu_util;     /* mean utilisation over GPUs and [0, makespan] */
    double energy_j;     /* server (host base + GPUs) over [0, makespan] */
    double gpu_energy_j; /* GPUs only */
    uint32_t oom_restarts;
    double shared_gpu_s;  /* GPU-seconds with two or more jobs computing */
    double shared3_gpu_s; /* GPU-seconds with three or more (pair factors multiplied) */
    double lossy_gpu_s;   /* GPU-seconds shared with the jobs' summed speed factors (the
                           * judge's) under 1: less work done than one after the other */
    size_t n_jobs;
};

/* Strategy names: "static" and every eco_gpusel_all() name. */
int eco_srv_strategy_known(const char *name);

/* Runs `jobs` (n, ids 1..n in order) under `strategy` (0 or -EINVAL: unknown name, bad
 * parameters, a job that can never fit; err says). out_jobs (optional, n entries) gets each
 * job's outcome. Deterministic for equal inputs. */
int eco_srv_run(const struct eco_srv_params *p, const char *strategy,
                const struct eco_srv_job *jobs, size_t n, struct eco_srv_job_out *out_jobs,
                struct eco_srv_result *res, struct eco_error *err);

#endif
