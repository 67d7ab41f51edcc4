/* SPDX-License-Identifier: MIT */
/* Scheduling policies: queue policies decide which jobs start (or stop) now; placements decide
 * which GPUs a starting job gets. Both are const ops tables found by name in a registry. */
#ifndef ECOSCHED_POLICY_H
#define ECOSCHED_POLICY_H

#include <stdint.h>
#include <stddef.h>
#include "ecosched/cluster.h"
#include "ecosched/error.h"
#include "ecosched/freemap.h"
#include "ecosched/job.h"

/* GPUs of one node given to a job. */
struct eco_alloc {
    uint32_t node;
    uint16_t gpus;
};

/* ---- placement ---------------------------------------------------------------------------- */

struct eco_placement_ops {
    const char *name;
    const char *summary;
    /* Chooses GPUs for `job` from the free state `fm` without changing it. Writes up to `cap`
     * entries into `out` and returns how many, -EAGAIN when the job does not fit now, or
     * -ENOSPC when `cap` is too small. ctx: the caller's (eco_decisions.place_ctx; NULL in
     * the simulator), for a placement outside the core (the daemon's live selector) that
     * needs its pass's state; the core's placements ignore it. */
    int (*place)(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                 struct eco_alloc *out, size_t cap);
    /* Optional batch planning (pso, pso-basic, ilp); NULL for the one-job rules. The simulator
     * calls plan once per scheduling pass, before the queue policy decides, with the queue
     * (job indices in queue order; entries not ECO_JOB_QUEUED are skipped) and the free state;
     * it assigns the queued jobs to nodes as a batch and keeps the plan in *state (created on
     * the first call; seed is the run's --seed, each call derives its own stream from it).
     * Then place_planned places job index `job`: on its planned node when it still fits there
     * on fm, else by `place`. plan_free frees the state (NULL-safe). 0 or -ENOMEM. */
    int (*plan)(void **state, const struct eco_freemap *fm, const struct eco_job *jobs,
                const uint32_t *queue, size_t n, uint64_t seed);
    int (*place_planned)(const void *state, const struct eco_freemap *fm,
                         const struct eco_job *jobs, uint32_t job, struct eco_alloc *out,
                         size_t cap);
    void (*plan_free)(void *state);
};

/* The batch planner behind pso, pso-basic and ilp: builds a static placement instance
 * (include/ecosched/place.h) of the first ECO_PLAN_MAX_JOBS queued single-node jobs and the
 * nodes with free GPUs, and solves it with `algo` (time_limit_s: its limit, 0: none). A
 * placement at the edge (ilp, which needs GLPK) is built from these three functions. */
#define ECO_PLAN_MAX_JOBS 64
struct eco_pl_algo;
int eco_placement_batch_plan(void **state, const struct eco_freemap *fm, const struct eco_job *jobs,
                             const uint32_t *queue, size_t n, uint64_t seed,
                             const struct eco_pl_algo *algo, double time_limit_s);
int eco_placement_batch_place(const void *state, const struct eco_freemap *fm,
                              const struct eco_job *jobs, uint32_t job, struct eco_alloc *out,
                              size_t cap);
void eco_placement_batch_free(void *state);
/* Counters of a batch plan state: passes seen, jobs given a plan, solves that failed (e.g. an
 * instance too large for the ILP; `place` decided that pass). */
struct eco_plan_stats {
    uint64_t passes, planned, solve_errors;
};
void eco_placement_batch_stats(const void *state, struct eco_plan_stats *st);

const struct eco_placement_ops *eco_placement_find(const char *name);
/* NULL-terminated list of all placements. */
const struct eco_placement_ops *const *eco_placement_all(void);

/* ---- queue policies ----------------------------------------------------------------------- */

/* What a policy sees: all borrowed from the engine for the duration of one decide call. */
struct eco_sched_view {
    double now_s;
    const struct eco_cluster *cluster;
    const struct eco_job *jobs;
    const uint32_t *queue;   /* queued jobs in queue order; entries whose job is no longer */
    size_t queue_len;        /* ECO_JOB_QUEUED must be skipped (lazy removal) */
    const uint32_t *running; /* running jobs, in no particular order */
    size_t n_running;
    const struct eco_alloc *alloc_pool; /* job->alloc_off/alloc_n index into this */
};

/* The caller-owned decision list. Starting a job places it on the tentative free state at
 * once, so later decisions in the same pass see the GPUs it took. */
struct eco_decisions {
    struct eco_freemap *fm; /* tentative free state (engine's) */
    const struct eco_placement_ops *placement;
    const struct eco_job *jobs;
    const struct eco_alloc *alloc_pool;
    uint32_t *starts; /* job indices started, in order */
    size_t n_starts, cap_starts;
    struct eco_alloc *start_allocs; /* their GPUs, concatenated */
    size_t n_start_allocs, cap_start_allocs;
    uint32_t *start_alloc_off; /* per start: offset into start_allocs */
    uint32_t *preempts;        /* job indices stopped, in order */
    size_t n_preempts, cap_preempts;
    struct eco_alloc *scratch; /* one entry per node of the cluster */
    size_t cap_scratch;
    /* Optional admission check after placement (e.g. a power budget): 0 refuses the start,
     * which then reads as -EAGAIN. */
    int (*admit)(void *ctx, uint32_t job, const struct eco_alloc *a, size_t n);
    void *admit_ctx;
    /* Passed to placement->place as its ctx (NULL: none). */
    void *place_ctx;
    /* The placement's batch plan (placement->plan), owned; NULL when it has none. */
    void *plan_state;
};

/* 0 or -ENOMEM. */
int eco_decisions_init(struct eco_decisions *d, struct eco_freemap *fm,
                       const struct eco_placement_ops *placement);
void eco_decisions_fini(struct eco_decisions *d);
/* Clears the list for a new pass over `jobs` (borrowed). */
void eco_decisions_reset(struct eco_decisions *d, const struct eco_job *jobs,
                         const struct eco_alloc *alloc_pool);
/* Would `job` fit now (on the tentative state)? 1, 0, or negative error. */
int eco_decisions_fits(struct eco_decisions *d, uint32_t job);
/* Places and records a start. 0, -EAGAIN (does not fit now) or -ENOMEM. On success the GPUs
 * are taken from the tentative state. */
int eco_decisions_start(struct eco_decisions *d, uint32_t job);
/* Records a preemption of a running job and returns its GPUs to the tentative state. */
int eco_decisions_preempt(struct eco_decisions *d, uint32_t job);

struct eco_policy;

/* What a queue policy needs or does (eco_policy_ops.caps), so that a host picks the policies it
 * can run by capability, not by name: ecoschedd knows no run times and never stops a job. */
enum eco_policy_caps {
    ECO_POLICY_NEEDS_DURATION = 1u << 0, /* reads job->duration_s (a run-time estimate) */
    ECO_POLICY_PREEMPTS = 1u << 1,       /* may stop running jobs (eco_decisions_preempt) */
    ECO_POLICY_NEEDS_DEADLINE = 1u << 2, /* orders by job->deadline_s (none: submit order) */
};

struct eco_policy_ops {
    const char *name;
    const char *summary;
    /* What follows "NAME:" in a --policy value, for --help ("THRESHOLDS: ..."); NULL: the
     * policy takes no parameters (create refuses any). */
    const char *params_help;
    unsigned caps; /* enum eco_policy_caps, or-ed */
    /* Queue order key (lower first; ties by submit time, then trace order). */
    double (*order_key)(const struct eco_job *job);
    /* Creates an instance (scratch memory, parameters); NULL on ENOMEM. `params` may be NULL. */
    struct eco_policy *(*create)(const struct eco_cluster *c, const char *params,
                                 struct eco_error *err);
    void (*destroy)(struct eco_policy *p);
    /* One scheduling pass at view->now_s. 0 or -ENOMEM. */
    int (*decide)(struct eco_policy *p, const struct eco_sched_view *view,
                  struct eco_decisions *out);
    /* Optional: the next time, after now, at which the policy wants a pass even if no job
     * arrives or ends (e.g. a running job crossing a priority threshold); < 0: none. */
    double (*next_wakeup)(struct eco_policy *p, const struct eco_sched_view *view);
};

const struct eco_policy_ops *eco_policy_find(const char *name);
/* Finds the policy of a --policy value "NAME[:PARAMS]" (e.g. "las:3600,36000") and returns its
 * params part in *params (NULL when none; borrowed from value). NULL when the name is unknown. */
const struct eco_policy_ops *eco_policy_find_spec(const char *value, const char **params);
const struct eco_policy_ops *const *eco_policy_all(void);

/* ---- node power-down policies ------------------------------------------------------------- */

enum eco_node_state {
    ECO_NODE_ON = 0,
    ECO_NODE_OFF,
    ECO_NODE_BOOTING,
    ECO_NODE_SHUTTING_DOWN,
};

/* What a power-down policy sees after the queue policy's pass at now_s (borrowed). */
struct eco_pd_view {
    double now_s;
    const struct eco_cluster *cluster;
    const struct eco_job *jobs;
    const uint32_t *queue; /* as in eco_sched_view: skip entries not ECO_JOB_QUEUED */
    size_t queue_len;
    const uint8_t *node_state;  /* enum eco_node_state per node */
    const double *idle_since;   /* per node: when it last became idle (ON, no job), or -1 */
    const uint32_t *idle_nodes; /* nodes in order of idle_since; entries whose node is not */
    size_t n_idle_nodes;        /* idle any more, or idle since another time, are stale */
    const double *idle_times;   /* idle_since recorded with each idle_nodes entry */
    uint64_t free_on_gpus;      /* free GPUs on ON nodes */
    uint64_t booting_gpus;      /* GPUs of BOOTING nodes */
    uint64_t busy_gpus;
    uint64_t arrivals;          /* jobs arrived so far (cumulative) */
    double arrived_gpus;        /* GPUs requested by jobs arrived so far (cumulative) */
    uint32_t last_arrival_gpus; /* GPUs of the largest job that arrived at now_s, or 0 */
};

/* The caller-owned list of nodes to boot and to shut down. Only OFF nodes may be booted and
 * only idle ON nodes shut down; the engine ignores other requests. */
struct eco_pd_decisions {
    uint32_t *boot;
    size_t n_boot, cap_boot;
    uint32_t *shutdown;
    size_t n_shutdown, cap_shutdown;
};

void eco_pd_decisions_fini(struct eco_pd_decisions *d);
int eco_pd_boot(struct eco_pd_decisions *d, uint32_t node);
int eco_pd_shutdown(struct eco_pd_decisions *d, uint32_t node);

struct eco_powerdown;

struct eco_powerdown_ops {
    const char *name;
    const char *summary;
    /* How a --power-down value of this policy is written when it needs parameters, for --help
     * and "known: ..." messages ("idle:SECONDS"); NULL: the bare name. */
    const char *usage;
    /* `params` is what follows "NAME:" in the --power-down value, or NULL. */
    struct eco_powerdown *(*create)(const struct eco_cluster *c, const char *params,
                                    struct eco_error *err);
    void (*destroy)(struct eco_powerdown *p);
    int (*decide)(struct eco_powerdown *p, const struct eco_pd_view *v,
                  struct eco_pd_decisions *out);
    /* Next time after now it wants a pass although nothing else happens; < 0: none. */
    double (*next_wakeup)(struct eco_powerdown *p, const struct eco_pd_view *v);
};

/* Finds the policy of a --power-down value "NAME[:PARAMS]" and returns its params part in
 * *params (NULL when none). NULL when the name is unknown. */
const struct eco_powerdown_ops *eco_powerdown_find(const char *value, const char **params);
const struct eco_powerdown_ops *const *eco_powerdown_all(void);

#endif
