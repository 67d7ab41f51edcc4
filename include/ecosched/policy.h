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
     * -ENOSPC when `cap` is too small. */
    int (*place)(const struct eco_freemap *fm, const struct eco_job *job, struct eco_alloc *out,
                 size_t cap);
};

const struct eco_placement_ops *eco_placement_find(const char *name);
/* NULL-terminated list of all placements. */
const struct eco_placement_ops *const *eco_placement_all(void);

/* ---- queue policies ----------------------------------------------------------------------- */

/* What a policy sees: all borrowed from the engine for the duration of one decide call. */
struct eco_sched_view {
    double now_s;
    const struct eco_cluster *cluster;
    const struct eco_job *jobs;
    const uint32_t *queue;    /* queued jobs in queue order; entries whose job is no longer */
    size_t queue_len;         /* ECO_JOB_QUEUED must be skipped (lazy removal) */
    const uint32_t *running;  /* running jobs, in no particular order */
    size_t n_running;
    const struct eco_alloc *alloc_pool; /* job->alloc_off/alloc_n index into this */
};

/* The caller-owned decision list. Starting a job places it on the tentative free state at
 * once, so later decisions in the same pass see the GPUs it took. */
struct eco_decisions {
    struct eco_freemap *fm;                   /* tentative free state (engine's) */
    const struct eco_placement_ops *placement;
    const struct eco_job *jobs;
    const struct eco_alloc *alloc_pool;
    uint32_t *starts;                         /* job indices started, in order */
    size_t n_starts, cap_starts;
    struct eco_alloc *start_allocs;           /* their GPUs, concatenated */
    size_t n_start_allocs, cap_start_allocs;
    uint32_t *start_alloc_off;                /* per start: offset into start_allocs */
    uint32_t *preempts;                       /* job indices stopped, in order */
    size_t n_preempts, cap_preempts;
    struct eco_alloc *scratch;                /* one entry per node of the cluster */
    size_t cap_scratch;
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

struct eco_policy_ops {
    const char *name;
    const char *summary;
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
const struct eco_policy_ops *const *eco_policy_all(void);

#endif
