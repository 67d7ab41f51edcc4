/* SPDX-License-Identifier: MIT */
/* The trace-driven discrete-event simulator: replays a job set on a cluster under a queue
 * policy and a placement, deterministically. */
#ifndef ECOSCHED_SIM_H
#define ECOSCHED_SIM_H

#include <stdint.h>
#include <stdio.h>
#include "ecosched/cluster.h"
#include "ecosched/error.h"
#include "ecosched/job.h"
#include "ecosched/policy.h"

struct eco_sim_config {
    const struct eco_policy_ops *policy;
    const char *policy_params; /* policy-specific, may be NULL */
    const struct eco_placement_ops *placement;
    uint64_t seed;
};

struct eco_sim_summary {
    const char *policy;
    const char *placement;
    uint64_t seed;
    size_t jobs;          /* jobs loaded from the trace */
    size_t completed;
    size_t rejected;      /* can never fit the cluster */
    size_t unfinished;    /* neither completed nor rejected (should be 0) */
    size_t skipped_rows;
    size_t preemptions;
    double avg_jct_s, p50_jct_s, p95_jct_s, p99_jct_s;
    double avg_wait_s, p95_wait_s;
    double makespan_s;    /* last end minus first submit */
    double gpu_util;      /* busy GPU-seconds / (GPUs x makespan) */
    double busy_gpu_s;
    uint64_t events;
    uint64_t cluster_gpus;
    uint32_t cluster_nodes;
    double sim_wall_s;
};

struct eco_sim_result {
    struct eco_sim_summary summary;
    struct eco_alloc *alloc_pool; /* job->alloc_off/alloc_n index into this */
    size_t n_alloc;
};

/* Runs the simulation. The jobs' run state in `set` is reset first and filled in (start,
 * end, wait, preemptions, allocation). `res` receives the summary and the allocation pool
 * (free with eco_sim_result_fini). 0, -EINVAL (bad config; err says why) or -ENOMEM. */
int eco_sim_run(const struct eco_cluster *c, struct eco_jobset *set,
                const struct eco_sim_config *cfg, struct eco_sim_result *res,
                struct eco_error *err);
void eco_sim_result_fini(struct eco_sim_result *res);

/* Percentile with linear interpolation between closest ranks (numpy's default), p in
 * [0, 100], over `v` sorted ascending. 0 for n == 0. */
double eco_percentile_sorted(const double *v, size_t n, double p);

/* Writers. Numbers are printed with %.15g so that identical runs give identical bytes. */
int eco_sim_write_jobs_csv(FILE *f, const struct eco_jobset *set, const struct eco_sim_result *r);
int eco_sim_write_rejected_csv(FILE *f, const struct eco_jobset *set);
/* JSON object of the summary; `with_wall` adds sim_wall_s (not deterministic). Caller frees. */
char *eco_sim_summary_json(const struct eco_sim_summary *s, int with_wall);

/* Builds a cluster from `arg`: a JSON file (docs/formats/cluster.md) when `arg` names an
 * existing file or ends in .json, else an inline spec COUNTxGPUS[:TYPE],... Caller frees the
 * cluster. 0, -EINVAL (err names the file and field), -ENOENT or -ENOMEM. */
int eco_cluster_load(const char *arg, struct eco_cluster **out, struct eco_error *err);

/* Average utilisation the `auto` cluster size aims at: busy enough that policies differ, with
 * headroom for bursts (the ITP clusters' peak demand is 2-10x their average). */
#define ECO_AUTO_TARGET_UTIL 0.7

/* True when `arg` asks for a cluster sized from the trace: auto[xGPUS][:TYPE]. */
int eco_cluster_is_auto(const char *arg);
/* Sizes a cluster for `set`: nodes of GPUS GPUs (default 8) of TYPE (default V100), as few
 * as hold max(largest job, average demand / ECO_AUTO_TARGET_UTIL), where average demand is
 * total GPU-seconds over (last end - first submit) with every job starting on arrival.
 * 0 or -EINVAL (err says why) / -ENOMEM. */
int eco_cluster_auto(const char *arg, const struct eco_jobset *set, struct eco_cluster **out,
                     struct eco_error *err);

#endif
