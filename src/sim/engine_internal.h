/* SPDX-License-Identifier: MIT */
/* The simulator engine's state, shared by engine.c (events, queue, jobs) and nodes.c (node
 * power states and energy integration). Private to src/sim. */
#ifndef ECOSCHED_ENGINE_INTERNAL_H
#define ECOSCHED_ENGINE_INTERNAL_H

#include "ecosched/carbon.h"
#include "ecosched/heap.h"
#include "ecosched/rng.h"
#include "sim/sim.h"

enum {
    EV_COMPLETE = 1,
    EV_WAKEUP,
    EV_NODE_UP,
    EV_NODE_DOWN,
    EV_PD_WAKEUP,
    EV_TICK,
    EV_BUDGET,
    EV_RELEASE, /* a job deferred by the carbon policy enters the queue (gen 1: resumes) */
    EV_SUSPEND, /* an interrupting carbon plan suspends a running job (gen: its run_gen) */
};

struct powerctl;

/* Power of one node split by energy category. */
struct contrib {
    double busy, idle, base, off, trans;
};

struct engine {
    const struct eco_cluster *c;
    struct eco_job *jobs;
    size_t n_jobs;
    const struct eco_sim_config *cfg;
    struct eco_policy *pol;
    struct eco_powerdown *pd;
    struct eco_freemap *fm;
    struct eco_heap heap;
    struct eco_decisions dec;
    struct eco_pd_decisions pdd;
    uint32_t *arrivals; /* non-rejected jobs by (submit, trace order) */
    size_t n_arrivals, next_arrival;
    uint32_t *q; /* queue in policy order, with lazily removed entries */
    size_t qhead, qn, qcap, qdead;
    uint64_t n_queued;
    uint32_t *run; /* running jobs */
    uint32_t *run_pos;
    size_t nrun;
    size_t n_done;
    struct eco_alloc *pool;
    size_t npool, cap_pool;
    double wake_s, pd_wake_s;
    uint64_t events;
    double busy_gpu_s;
    uint64_t busy_gpus;
    size_t preemptions;
    /* Arrival counters for power-down forecasts. */
    uint64_t arrived;
    double arrived_gpus;
    uint32_t instant_max_gpus;

    /* Nodes (nodes.c). */
    uint8_t *state;
    double *idle_since;
    double *busy_w; /* GPU power of the jobs running on the node */
    double *node_e; /* energy so far */
    double *node_t; /* time node_e was last brought up to date */
    /* Grid signals (NULL without): carbon and cost of each node and job so far, over the
     * same pieces as node_e and the jobs' energy_j; the cluster's in carbon_kg, cost. */
    double *node_c, *node_cost, *job_c, *job_cost;
    double carbon_kg, cost;
    /* Carbon policy (NULL: none): its state, the forecast it sees, which jobs may be
     * deferred, and what it did. */
    struct eco_carbon *cpol;
    struct eco_forecast forecast;
    int have_forecast;
    struct eco_rng defer_rng;
    size_t deferred;
    double deferred_s;
    /* Interrupting plans (NULL without): each job's runs in segs[seg_off[j] ..
     * seg_off[j] + seg_n[j]), the one in force seg_k[j], and the start count run_gen[j] an
     * EV_SUSPEND must match; suspensions so far and their checkpoint time, s. */
    struct eco_carbon_seg *segs;
    size_t nsegs, cap_segs;
    uint32_t *seg_off, *seg_n, *seg_k, *run_gen;
    size_t suspensions;
    double suspend_total_s;
    struct contrib *cur; /* current contribution of each node to the category powers */
    uint32_t *boots;
    double *up_s; /* when each node last came up from a boot (-1: never) */
    uint32_t *idle_nodes;
    double *idle_times;
    size_t idle_head, idle_n, idle_cap;
    uint64_t booting_gpus;
    uint32_t nodes_powered;
    uint64_t node_boots, node_shutdowns;
    uint64_t boot_delayed_starts; /* starts of waiting jobs on a node that came up then */
    double cycle_j; /* wear of the power cycles so far (cycle_j of each shutdown node), J */
    /* Power capping (powerctl.c); NULL when no power policy. */
    struct powerctl *pc;
    size_t admission_waits;
    struct eco_rng deadline_rng;
    double overshoot_s;
    int tick_pending;
    /* Control ticks (engine.c): a tick event counts only if its gen is tick_gen (a change
     * re-arms the tick earlier); tick_at is when the pending one fires, tick_last_s when the
     * last one ran (-1: none since jobs last ran); quiet ticks and the skip in periods. */
    uint32_t tick_gen, tick_quiet;
    size_t heap_stale; /* completions made stale by limit changes since the heap was pruned */
    double tick_at, tick_last_s, tick_skip;
    int tick_slack; /* the last tick found slack (engine.c, control_tick; never with skip off) */
    int changed;    /* something the controller reads changed at this instant */
    /* ... and how much: the full-power demand of the jobs that started or stopped, and
     * whether anything else (the budget, a node's power state) changed (control_changed);
     * changed_small: the last change was small (the settling test's power is then closer) */
    double changed_w;
    int changed_big, changed_small;
    /* Minimum draw of the running jobs (kept at start, end and preemption), and of the jobs
     * started so far in the current pass (the first pass_min_k of its starts). */
    double committed_min_w, pass_min_w;
    size_t pass_min_k;

    struct contrib p;  /* cluster power by category, W */
    struct contrib en; /* cluster energy by category, J */
    double t0, t_prev, peak_w;
};

int eco_nodes__init(struct engine *e, double t0);
void eco_nodes__fini(struct engine *e);
/* Brings the cluster's energy up to time t (power was constant since the last call). */
void eco_nodes__advance(struct engine *e, double t);
/* Re-reads node n's state (free GPUs, jobs' power, power state) after a change at time t. */
void eco_nodes__refresh(struct engine *e, uint32_t n, double t);
/* GPU power and speed of job j on node n's GPUs. */
void eco_nodes__job_power(const struct engine *e, const struct eco_job *j, uint32_t n,
                          double *speed, double *power_per_gpu_w);
/* Power-down pass at time t, after the queue policy's pass. */
int eco_nodes__powerdown_pass(struct engine *e, double t);
/* A node event (EV_NODE_UP / EV_NODE_DOWN) at time t. */
void eco_nodes__event(struct engine *e, uint32_t kind, uint32_t n, double t);
double eco_nodes__power_w(const struct engine *e);
/* Adds the carbon (kg) and cost of constant power w over simulated [a, b] to *kg and *cost,
 * under the run's grid signals (nothing for a signal not given). */
void eco_nodes__grid(const struct engine *e, double w, double a, double b, double *kg,
                     double *cost);

/* Power capping (powerctl.c). */
/* 0 when spec ("none", or "family[:PARAMS]" of the capper family) is valid, else -EINVAL
 * with err naming the unknown family or the bad parameter. */
int eco_powerctl__check(const char *spec, struct eco_error *err);
/* A scheduling pass at time t starts (the clock admission sees). */
void eco_powerctl__pass(struct engine *e, double t);
int eco_powerctl__init(struct engine *e);
void eco_powerctl__fini(struct engine *e);
double eco_powerctl__budget(const struct engine *e);
/* Power of one GPU of catalog type `type` running `workload` at the type's minimum limit. */
double eco_powerctl__min_gpu_w(int type, uint16_t workload, int knob);
/* The knob's range on a GPU type (limit, W, or clock, MHz); 0 or eco_clock_range's error. */
int eco_powerctl__knob_range(int clock, int type, double *lo, double *hi);
/* The cluster's draw with every node on and every GPU idle: hosts and idle GPUs, W. */
double eco_sim__idle_w(const struct eco_cluster *c);
/* Sets a running job's setting on the knob in use (its limit or its clock). */
void eco_powerctl__apply(struct engine *e, struct eco_job *job, double setting);
double eco_powerctl__period(const struct engine *e);
/* 1 when job may start on allocation a[0..n) without the budget being exceeded even at
 * minimum limits. */
int eco_powerctl__admit(struct engine *e, uint32_t job, const struct eco_alloc *a, size_t n);
/* The limit a starting job gets (and its model is reset). */
double eco_powerctl__start_limit(struct engine *e, uint32_t job);
/* A control period at t: applies last period's limits through set_limit, measures, and
 * decides the next ones. */
int eco_powerctl__tick(struct engine *e, double t,
                       int (*set_limit)(struct engine *, uint32_t, double, double));
int eco_powerctl__budget_step(struct engine *e, double t);
/* Jobs started[0..n_started) at t: a decide at once; lowered limits are applied now through
 * set_limit. With slack_margin >= 0 (the budget had slack before), when the budget keeps slack
 * at that margin and each new job's choice is its alone, the new jobs take their choices and
 * early samples at once instead (docs/policies/powercap.md, "Slack"). */
int eco_powerctl__started(struct engine *e, double t, double slack_margin, const uint32_t *started,
                          size_t n_started,
                          int (*set_limit)(struct engine *, uint32_t, double, double));
/* A control tick at t with no job running: the metrics close the period in progress. */
void eco_powerctl__idle(struct engine *e, double t);
/* Minimum draw of running job `job` on its allocation (each GPU at its type's minimum). */
double eco_powerctl__job_min_w(const struct engine *e, uint32_t job);
/* Job `job`'s draw with every GPU at the top of its range (the truth's, made at its start). */
double eco_powerctl__job_full_w(const struct engine *e, uint32_t job);
/* eco_capper_has_integral of the capper: its feedback takes periods to absorb any change. */
int eco_powerctl__integral(const struct engine *e);
/* 1 when every running job's model is past its dithering and the jobs' next limits are on
 * average (weighted by GPUs) within tol of their ranges from their current ones; with hold,
 * the current limits are then kept. */
int eco_powerctl__settled(struct engine *e, double tol, int hold);
/* 1 when the budget has slack: every running GPU at the top of its range (the measured curves),
 * plus 4 standard deviations of the measured total's noise there, draws at most (1 - margin) of
 * the budget, and every job past its dithering keeps its setting. With set_limit, a job still
 * dithering takes its early samples now and runs at the split's choice for it (powerctl.c,
 * learn_now). A negative errno on failure. */
int eco_powerctl__slack(struct engine *e, double margin, double t,
                        int (*set_limit)(struct engine *, uint32_t, double, double));
void eco_powerctl__summary(const struct engine *e, struct eco_sim_summary *s);

/* missbound.c: the bound on deadline misses over e's prepared jobs (eco_sim_miss_bound). */
int eco_sim__miss_bound(struct engine *e, double slot_s, struct eco_miss_bound *out,
                        struct eco_error *err);

#endif
