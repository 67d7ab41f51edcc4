/* SPDX-License-Identifier: MIT */
/* Discrete-event engine. At one instant: completions first, then arrivals in trace order,
 * then one policy pass. Events are ordered by (time, insertion sequence), so identical input
 * gives identical output. docs/simulator.md describes the semantics. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "engine_internal.h"
#include "util/clock.h"
#include "util/grid_signal.h"

/* Control-period skipping (docs/policies/powercap.md, "Skipping settled periods"): once
 * SKIP_QUIET_TICKS ticks have run since a job last started or ended, the budget or the
 * nodes' power states last changed, at the first tick at which the running jobs' next limits
 * move on average (weighted by GPUs) by at most SKIP_TOL of their ranges (and powerctl.c's
 * test on the measured power passes), the limits are held and the next tick comes
 * SKIP_FIRST periods later, doubling while the allocation stays put, up to SKIP_MAX periods (a
 * re-check: the deadlines' slack moves while nothing else does). Any change re-arms the tick
 * at the next period. SKIP_TOL is about the feedback's response to measurement noise (gain
 * 0.3 on a summed draw with 2 % noise moves the price, and jobs step by one 4 % grid point of
 * their range): on ITP cluster02, 300 jobs at 60 kW, it cuts ticks 89x against the 1 s loop
 * with avg JCT, energy and misses unchanged (docs); a per-job bound of 1 % never settled. */
#define SKIP_QUIET_TICKS 5
/* Ticks since the last change are counted up to this (powerctl.c's settling test reads how
 * long ago the change was, up to 30). */
#define SKIP_QUIET_MAX 64
#define SKIP_TOL 0.05
/* A change whose jobs' full-power demand is at most this share of the budget is small
 * (control_changed; docs/policies/powercap.md, "Small changes"). */
#define SMALL_CHANGE 0.01
#define SKIP_FIRST 8.0
#define SKIP_MAX 512.0
/* Skipping while the budget has slack (docs/policies/powercap.md, "Slack"): when every running
 * GPU at the top of its range, plus 4 standard deviations of the measured total's noise, would
 * draw at most 1 - SLACK_MARGIN of the budget, no split can bind, so the next tick comes
 * SLACK_MAX periods later; a change that leaves the slack (an end, a start whose jobs take
 * their own choices at once, a budget step, a node's power state) brings no tick, one that
 * ends it the tick at the next period. 3 %: the family's margins (margin 0.2 %, the guard 3 %
 * after a step down) beside the noise term, so that the feedback cannot start capping inside
 * the skip. */
#define SLACK_MARGIN 0.03
#define SLACK_MAX 3600.0

/* Arrival order: submit time, then trace order. */
struct arr_key {
    double submit_s;
    uint32_t idx;
};

static int cmp_arr_key(const void *a, const void *b)
{
    const struct arr_key *x = a, *y = b;
    if (x->submit_s != y->submit_s)
        return x->submit_s < y->submit_s ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Queue order: policy key, then submit time, then trace order. */
static int q_before(const struct engine *e, uint32_t a, uint32_t b)
{
    double ka = e->cfg->policy->order_key(&e->jobs[a]), kb = e->cfg->policy->order_key(&e->jobs[b]);
    if (ka != kb)
        return ka < kb;
    if (e->jobs[a].submit_s != e->jobs[b].submit_s)
        return e->jobs[a].submit_s < e->jobs[b].submit_s;
    return a < b;
}

/* Inserts job j (now ECO_JOB_QUEUED) at its place in queue order. */
static int q_insert(struct engine *e, uint32_t j)
{
    if (e->qn == e->qcap) {
        if (e->qhead > 0) {
            memmove(e->q, e->q + e->qhead, (e->qn - e->qhead) * sizeof *e->q);
            e->qn -= e->qhead;
            e->qhead = 0;
        } else {
            size_t cap = e->qcap ? e->qcap * 2 : 1024;
            uint32_t *q = realloc(e->q, cap * sizeof *q);
            if (!q)
                return -ENOMEM;
            e->q = q;
            e->qcap = cap;
        }
    }
    if (e->qn == e->qhead || q_before(e, e->q[e->qn - 1], j)) {
        e->q[e->qn++] = j;
        return 0;
    }
    size_t lo = e->qhead, hi = e->qn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q_before(e, e->q[mid], j))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < e->qn && e->q[lo] == j) {
        /* The job's own entry, left behind when it started (keys never change): revive it, so
         * the queue never holds a job twice. */
        e->qdead--;
        return 0;
    }
    if (lo == e->qhead && e->qhead > 0) {
        e->q[--e->qhead] = j;
        return 0;
    }
    memmove(e->q + lo + 1, e->q + lo, (e->qn - lo) * sizeof *e->q);
    e->q[lo] = j;
    e->qn++;
    return 0;
}

static void q_tidy(struct engine *e)
{
    while (e->qhead < e->qn && e->jobs[e->q[e->qhead]].state != ECO_JOB_QUEUED) {
        e->qhead++;
        e->qdead--;
    }
    size_t live = e->qn - e->qhead - e->qdead;
    if (e->qdead > 64 && e->qdead > live) {
        size_t w = 0;
        for (size_t i = e->qhead; i < e->qn; i++)
            if (e->jobs[e->q[i]].state == ECO_JOB_QUEUED)
                e->q[w++] = e->q[i];
        e->qhead = 0;
        e->qn = w;
        e->qdead = 0;
    }
}

static void run_add(struct engine *e, uint32_t j)
{
    e->run_pos[j] = (uint32_t)e->nrun;
    e->run[e->nrun++] = j;
}

static void run_remove(struct engine *e, uint32_t j)
{
    uint32_t pos = e->run_pos[j], last = e->run[--e->nrun];
    e->run[pos] = last;
    e->run_pos[last] = pos;
}

/* Stops the current run segment of job j at time t. */
static void account_segment(struct engine *e, struct eco_job *job, double t)
{
    double ran = t - job->last_start_s;
    job->remaining_s -= ran * job->speed;
    if (job->remaining_s < 0)
        job->remaining_s = 0;
    job->attained_gpu_s += (double)job->gpus * ran;
    job->energy_j += job->power_w * ran;
    if (e->job_c) {
        size_t j = (size_t)(job - e->jobs);
        eco_nodes__grid(e, job->power_w, job->last_start_s, t, &e->job_c[j], &e->job_cost[j]);
    }
    e->busy_gpu_s += (double)job->gpus * ran;
}

/* Takes job j's GPU power off (sign -1) or puts it on (+1) its nodes, and refreshes them. */
static void nodes_busy(struct engine *e, const struct eco_job *job, double sign, double t)
{
    for (uint32_t i = 0; i < job->alloc_n; i++) {
        const struct eco_alloc *a = &e->pool[job->alloc_off + i];
        double speed, pw;
        if (job->uniform_gpus)
            pw = job->power_w / job->gpus;
        else
            eco_nodes__job_power(e, job, a->node, &speed, &pw);
        e->busy_w[a->node] += sign * pw * a->gpus;
        if (sign < 0 && e->busy_w[a->node] < 1e-9)
            e->busy_w[a->node] = 0; /* no rounding residue on an empty node */
        double end_s = job->last_start_s + job->remaining_s / job->speed;
        if (sign > 0 && end_s > eco_freemap_busy_until(e->fm, a->node))
            eco_freemap_set_busy_until(e->fm, a->node, end_s);
        else if (sign < 0 && eco_freemap_free(e->fm, a->node) == e->c->nodes[a->node].gpus)
            eco_freemap_set_busy_until(e->fm, a->node, 0);
        eco_nodes__refresh(e, a->node, t);
    }
}

/* Job j started (1) or stopped running (0, after run_remove): the running jobs' committed
 * minimum draw follows, and the controller is told how much changed (control_changed). */
static void control_job(struct engine *e, uint32_t j, int started)
{
    if (!e->pc)
        return;
    if (started)
        e->committed_min_w += eco_powerctl__job_min_w(e, j);
    else
        e->committed_min_w = e->nrun ? e->committed_min_w - eco_powerctl__job_min_w(e, j) : 0;
    e->changed = 1;
    e->changed_w += eco_powerctl__job_full_w(e, j);
}

static void complete(struct engine *e, uint32_t j, double t)
{
    struct eco_job *job = &e->jobs[j];
    account_segment(e, job, t);
    job->remaining_s = 0;
    job->state = ECO_JOB_DONE;
    job->end_s = t;
    run_remove(e, j);
    control_job(e, j, 0);
    e->n_done++;
    e->busy_gpus -= job->gpus;
    for (uint32_t i = 0; i < job->alloc_n; i++)
        eco_freemap_give(e->fm, e->pool[job->alloc_off + i].node, e->pool[job->alloc_off + i].gpus);
    nodes_busy(e, job, -1, t);
}

/* Speed and GPU power of a job on its allocation at its limit. Synchronous training runs at
 * the pace of its slowest GPU; every GPU draws its own power. */
static void set_rate(const struct engine *e, struct eco_job *job)
{
    job->speed = 0;
    job->power_w = 0;
    job->uniform_gpus = 1;
    uint16_t group = 0;
    double speed = 1, pw = 0;
    for (uint32_t i = 0; i < job->alloc_n; i++) {
        uint32_t node = e->pool[job->alloc_off + i].node;
        /* Nodes of one group give the same figures: evaluate once per group change. */
        if (i == 0 || e->c->nodes[node].group != group) {
            if (i > 0)
                job->uniform_gpus = 0;
            group = e->c->nodes[node].group;
            eco_nodes__job_power(e, job, node, &speed, &pw);
        }
        if (i == 0 || speed < job->speed)
            job->speed = speed;
        job->power_w += pw * e->pool[job->alloc_off + i].gpus;
    }
    if (!(job->speed > 0))
        job->speed = 1;
}

static int set_limit(struct engine *e, uint32_t j, double limit_w, double t);

/* Schedules the next control tick at the first period of the grid (from the first
 * submission) after t; a tick scheduled before for later becomes stale. */
static int arm_tick(struct engine *e, double t)
{
    double period = eco_powerctl__period(e);
    double next = e->t0 + (floor((t - e->t0) / period) + 1) * period;
    e->tick_pending = 1;
    e->tick_at = next;
    return eco_heap_push(&e->heap, next, EV_TICK, 0, ++e->tick_gen);
}

/* A control tick at t (the metrics count periods skipped since the last one, powerctl.c's
 * metrics_close): the controller runs and the next tick is scheduled, further on when it has
 * settled. */
static int control_tick(struct engine *e, double t)
{
    double period = eco_powerctl__period(e);
    e->tick_pending = 0;
    if (!e->nrun) {
        e->tick_last_s = -1;
        e->tick_slack = 0;
        return 0;
    }
    int rc = eco_powerctl__tick(e, t, set_limit);
    if (rc)
        return rc;
    e->tick_last_s = t;
    double step = 1;
    int slack = e->cfg->control_skip_off ? 0 : eco_powerctl__slack(e, SLACK_MARGIN, t, set_limit);
    if (slack < 0)
        return slack;
    int settled = !slack && !e->cfg->control_skip_off && eco_powerctl__settled(e, SKIP_TOL, 0);
    /* the ticks since the last change count whether settled or not: only a change restarts
     * them (control_changed) */
    if (e->tick_quiet < SKIP_QUIET_MAX)
        e->tick_quiet++;
    e->tick_slack = slack;
    if (slack) {
        step = SLACK_MAX;
        e->tick_skip = 0;
    } else if (settled) {
        if (e->tick_quiet >= SKIP_QUIET_TICKS) {
            e->tick_skip = e->tick_skip > 0 ? 2 * e->tick_skip : SKIP_FIRST;
            if (e->tick_skip > SKIP_MAX)
                e->tick_skip = SKIP_MAX;
            step = e->tick_skip;
            eco_powerctl__settled(e, SKIP_TOL, 1); /* hold the limits over the skip */
        }
    } else {
        e->tick_skip = 0;
    }
    e->tick_pending = 1;
    e->tick_at = t + step * period;
    return eco_heap_push(&e->heap, e->tick_at, EV_TICK, 0, e->tick_gen);
}

/* After an instant at t: a change the controller reads ends a skip (the tick comes at the
 * next period) and restarts the count of quiet ticks. */
static int control_changed(struct engine *e, double t)
{
    if (!e->pc || !e->changed)
        return 0;
    /* a small change (jobs whose full-power demand is at most SMALL_CHANGE of the budget,
     * under a capper without an integral, which takes periods to absorb any change) keeps the quiet
     * ticks already run, up to SKIP_QUIET_TICKS, so that the tick it arms may settle at once;
     * the settling test then wants the measured total closer to the budget (powerctl.c) */
    int small = !e->changed_big && e->changed_w <= SMALL_CHANGE * eco_powerctl__budget(e) &&
                !eco_powerctl__integral(e);
    e->changed = e->changed_big = 0;
    e->changed_w = 0;
    e->changed_small = small && (e->tick_quiet >= SKIP_QUIET_TICKS || e->changed_small);
    if (!small || e->tick_quiet > SKIP_QUIET_TICKS)
        e->tick_quiet = small ? SKIP_QUIET_TICKS : 0;
    e->tick_skip = 0;
    double period = eco_powerctl__period(e);
    if (e->tick_pending && e->tick_at > t + period * (1 + 1e-9)) {
        /* a change while the budget has slack that leaves it slack: the slack test's own
         * work (a job still learning takes its samples now) instead of a tick, and the far
         * tick stands (docs/policies/powercap.md, "Slack") */
        if (e->tick_slack) {
            int slack = eco_powerctl__slack(e, SLACK_MARGIN, t, set_limit);
            if (slack)
                return slack < 0 ? slack : 0;
            e->tick_slack = 0;
        }
        return arm_tick(e, t);
    }
    return 0;
}

/* An interrupting plan's next suspension of job j, started at t: at the end of the first of
 * its runs from the one in force that ends after t, unless that is its last run. */
static int arm_suspend(struct engine *e, uint32_t j, double t)
{
    if (!e->segs || e->seg_n[j] < 2)
        return 0;
    const struct eco_carbon_seg *sg = e->segs + e->seg_off[j];
    uint32_t k = e->seg_k[j];
    while (k + 1 < e->seg_n[j] && sg[k].end_s <= t)
        k++;
    e->seg_k[j] = k;
    e->run_gen[j]++;
    if (k + 1 >= e->seg_n[j])
        return 0;
    return eco_heap_push(&e->heap, sg[k].end_s, EV_SUSPEND, j, e->run_gen[j]);
}

static int apply_start(struct engine *e, size_t k, double t)
{
    uint32_t j = e->dec.starts[k];
    struct eco_job *job = &e->jobs[j];
    size_t off = e->dec.start_alloc_off[k];
    size_t cnt =
        (k + 1 < e->dec.n_starts ? e->dec.start_alloc_off[k + 1] : e->dec.n_start_allocs) - off;
    if (e->npool + cnt > e->cap_pool) {
        size_t cap = e->cap_pool ? e->cap_pool * 2 : 4096;
        while (cap < e->npool + cnt)
            cap *= 2;
        struct eco_alloc *p = realloc(e->pool, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        e->pool = p;
        e->cap_pool = cap;
    }
    if (e->npool + cnt > UINT32_MAX)
        return -ENOMEM;
    memcpy(e->pool + e->npool, e->dec.start_allocs + off, cnt * sizeof *e->pool);
    job->alloc_off = (uint32_t)e->npool;
    job->alloc_n = (uint32_t)cnt;
    e->npool += cnt;
    job->limit_w = e->pc ? eco_powerctl__start_limit(e, j) : 0;
    set_rate(e, job);
    job->state = ECO_JOB_RUNNING;
    if (t > job->enqueue_s) /* it waited: did it wait for one of its nodes to boot? */
        for (size_t i = 0; i < cnt; i++)
            if (e->up_s[e->pool[job->alloc_off + i].node] == t) {
                e->boot_delayed_starts++;
                break;
            }
    if (job->start_s < 0)
        job->start_s = t;
    job->wait_s += t - job->enqueue_s;
    job->last_start_s = t;
    e->qdead++;
    e->n_queued--;
    e->busy_gpus += job->gpus;
    run_add(e, j);
    nodes_busy(e, job, +1, t);
    control_job(e, j, 1);
    if (e->pc && !e->tick_pending) {
        int rc = arm_tick(e, t);
        if (rc)
            return rc;
    }
    int rc = arm_suspend(e, j, t);
    if (rc)
        return rc;
    return eco_heap_push(&e->heap, t + job->remaining_s / job->speed, EV_COMPLETE, j, job->gen);
}

/* Stale completions the heap may hold before they are pruned (below it pruning costs more
 * than the heap's few extra levels). */
#define HEAP_PRUNE_MIN 4096

/* Whether an event can still do something: a completion of the job's current run, a tick of
 * the current arming, any other kind. */
static int heap_keep(void *ctx, const struct eco_event *ev)
{
    const struct engine *e = ctx;
    if (ev->kind == EV_COMPLETE)
        return e->jobs[ev->job].state == ECO_JOB_RUNNING && e->jobs[ev->job].gen == ev->gen;
    if (ev->kind == EV_TICK)
        return ev->gen == e->tick_gen;
    return 1;
}

/* Changes a running job's power limit at time t: its progress and energy so far are booked,
 * its speed and power change, and its completion moves. */
static int set_limit(struct engine *e, uint32_t j, double limit_w, double t)
{
    struct eco_job *job = &e->jobs[j];
    account_segment(e, job, t);
    job->last_start_s = t;
    nodes_busy(e, job, -1, t);
    eco_powerctl__apply(e, job, limit_w);
    set_rate(e, job);
    nodes_busy(e, job, +1, t);
    job->gen++;
    /* Each change leaves the job's previous completion in the heap, stale, until its time: a
     * capper that moves every limit every period (uniform, following the noise) would grow
     * the heap by the running jobs each period. Once the stale ones are most of it, they go
     * (the rest pop in the same order). */
    if (++e->heap_stale > HEAP_PRUNE_MIN && e->heap_stale > e->heap.n / 2) {
        eco_heap_prune(&e->heap, heap_keep, e);
        e->heap_stale = 0;
    }
    return eco_heap_push(&e->heap, t + job->remaining_s / job->speed, EV_COMPLETE, j, job->gen);
}

static int apply_preempt(struct engine *e, uint32_t j, double t)
{
    struct eco_job *job = &e->jobs[j];
    account_segment(e, job, t);
    job->state = ECO_JOB_QUEUED;
    job->preemptions++;
    job->gen++;
    job->enqueue_s = t;
    e->preemptions++;
    e->n_queued++;
    e->busy_gpus -= job->gpus;
    run_remove(e, j);
    control_job(e, j, 0);
    nodes_busy(e, job, -1, t); /* the decision list already returned its GPUs */
    return q_insert(e, j);
}

/* Suspends running job j at t by its plan: its GPUs are freed, its remaining work kept (plus
 * the checkpoint and restore, done at its draw when it resumes), and it re-enters the queue
 * at its next run's start. */
static int suspend(struct engine *e, uint32_t j, double t)
{
    struct eco_job *job = &e->jobs[j];
    account_segment(e, job, t);
    job->state = ECO_JOB_PENDING; /* off the queue until its EV_RELEASE */
    job->gen++;
    /* Its dead queue entries go now: one would come alive again when it is queued. */
    size_t w = e->qhead;
    for (size_t i = e->qhead; i < e->qn; i++) {
        if (e->q[i] == j)
            e->qdead--;
        else
            e->q[w++] = e->q[i];
    }
    e->qn = w;
    job->remaining_s += e->cfg->suspend_s;
    e->suspensions++;
    e->suspend_total_s += e->cfg->suspend_s;
    e->busy_gpus -= job->gpus;
    run_remove(e, j);
    control_job(e, j, 0);
    for (uint32_t i = 0; i < job->alloc_n; i++)
        eco_freemap_give(e->fm, e->pool[job->alloc_off + i].node, e->pool[job->alloc_off + i].gpus);
    nodes_busy(e, job, -1, t);
    uint32_t k = ++e->seg_k[j];
    double r = e->segs[e->seg_off[j] + k].start_s;
    return eco_heap_push(&e->heap, r > t ? r : t, EV_RELEASE, j, 1);
}

static int pass(struct engine *e, double t)
{
    q_tidy(e);
    if (e->pc)
        eco_powerctl__pass(e, t); /* admission's clock */
    struct eco_sched_view v = {
        .now_s = t,
        .cluster = e->c,
        .jobs = e->jobs,
        .queue = e->q + e->qhead,
        .queue_len = e->qn - e->qhead,
        .running = e->run,
        .n_running = e->nrun,
        .alloc_pool = e->pool,
    };
    if (v.queue_len == 0 && !e->cfg->policy->next_wakeup)
        return 0;
    eco_decisions_reset(&e->dec, e->jobs, e->pool);
    e->pass_min_w = 0;
    e->pass_min_k = 0;
    eco_freemap_set_now(e->fm, t);
    const struct eco_placement_ops *pl = e->cfg->placement;
    int rc = pl->plan
                 ? pl->plan(&e->dec.plan_state, e->fm, e->jobs, v.queue, v.queue_len, e->cfg->seed)
                 : 0;
    if (rc)
        return rc;
    rc = e->cfg->policy->decide(e->pol, &v, &e->dec);
    if (rc)
        return rc;
    for (size_t k = 0; k < e->dec.n_preempts; k++)
        if ((rc = apply_preempt(e, e->dec.preempts[k], t)))
            return rc;
    for (size_t k = 0; k < e->dec.n_starts; k++)
        if ((rc = apply_start(e, k, t)))
            return rc;
    if (e->pc && e->dec.n_starts &&
        (rc = eco_powerctl__started(e, t, e->tick_slack ? SLACK_MARGIN : -1, e->dec.starts,
                                    e->dec.n_starts, set_limit)))
        return rc;
    if (e->cfg->policy->next_wakeup) {
        q_tidy(e);
        v.queue = e->q + e->qhead;
        v.queue_len = e->qn - e->qhead;
        v.running = e->run;
        v.n_running = e->nrun;
        v.alloc_pool = e->pool;
        double w = e->cfg->policy->next_wakeup(e->pol, &v);
        if (w > t && (e->wake_s < 0 || w < e->wake_s)) {
            e->wake_s = w;
            if ((rc = eco_heap_push(&e->heap, w, EV_WAKEUP, 0, 0)))
                return rc;
        }
    }
    return 0;
}

static void enqueue_arrival(struct engine *e, uint32_t j, double t)
{
    struct eco_job *job = &e->jobs[j];
    job->state = ECO_JOB_QUEUED;
    job->enqueue_s = t;
    e->n_queued++;
    e->arrived++;
    e->arrived_gpus += job->gpus;
    if (job->gpus > e->instant_max_gpus)
        e->instant_max_gpus = job->gpus;
}

/* Keeps job j's interrupting plan sg[0..n). 0 or -ENOMEM. */
static int keep_plan(struct engine *e, uint32_t j, const struct eco_carbon_seg *sg, size_t n)
{
    if (e->nsegs + n > e->cap_segs) {
        size_t cap = e->cap_segs ? e->cap_segs * 2 : 1024;
        while (cap < e->nsegs + n)
            cap *= 2;
        struct eco_carbon_seg *p = realloc(e->segs, cap * sizeof *p);
        if (!p || cap > UINT32_MAX)
            return -ENOMEM;
        e->segs = p;
        e->cap_segs = cap;
    }
    memcpy(e->segs + e->nsegs, sg, n * sizeof *sg);
    e->seg_off[j] = (uint32_t)e->nsegs;
    e->seg_n[j] = (uint32_t)n;
    e->seg_k[j] = 0;
    e->nsegs += n;
    return 0;
}

/* When the carbon policy lets job j, arriving at t, enter the queue (NaN: out of memory). */
static double carbon_release(struct engine *e, uint32_t j, double t)
{
    const struct eco_sim_config *cfg = e->cfg;
    const struct eco_job *job = &e->jobs[j];
    double slack = 0;
    if (job->deadline_s != ECO_NO_DEADLINE)
        slack = job->deadline_s - job->submit_s - job->duration_s;
    else if (cfg->deferrable <= 0 || cfg->deferrable >= 1 ||
             eco_rng_uniform(&e->defer_rng) < cfg->deferrable)
        slack = cfg->max_delay_s;
    if (slack < 0)
        slack = 0;
    const struct eco_signal *sig = cfg->carbon ? cfg->carbon : cfg->price;
    struct eco_carbon_view v = {
        .now_s = t,
        .epoch0_s = cfg->epoch0_s,
        .forecast = &e->forecast,
        .step_s = sig->n ? (sig->t[sig->n] - sig->t[0]) / (double)sig->n : 3600,
        .cluster_gpus = e->c->total_gpus,
    };
    struct eco_carbon_job cj = {
        .submit_s = t,
        .run_s = job->duration_s,
        .latest_start_s = t + slack,
        .gpus = job->gpus,
        .suspend_s = cfg->suspend_s,
    };
    double r;
    if (e->segs) {
        struct eco_carbon_seg sg[ECO_CARBON_MAX_SEGS];
        size_t n = cfg->carbon_policy->plan(e->cpol, &v, &cj, sg, ECO_CARBON_MAX_SEGS);
        r = n ? sg[0].start_s : t;
        if (n > 1 && keep_plan(e, j, sg, n) < 0)
            return NAN; /* out of memory */
    } else {
        r = cfg->carbon_policy->release(e->cpol, &v, &cj);
    }
    return r > cj.latest_start_s ? cj.latest_start_s : (r < t ? t : r);
}

static void emit_timeline(struct engine *e, double t)
{
    if (!e->cfg->timeline)
        return;
    struct eco_timeline_row row = {
        .t_s = t,
        .power_w = eco_nodes__power_w(e),
        .budget_w = e->pc ? eco_powerctl__budget(e) : 0,
        .busy_gpus = e->busy_gpus,
        .nodes_on = e->nodes_powered,
        .queued = e->n_queued,
    };
    const struct eco_sim_config *cfg = e->cfg;
    if (cfg->carbon)
        row.carbon_g_per_kwh = eco_signal_value(cfg->carbon, cfg->epoch0_s + t);
    if (cfg->price)
        row.price_per_mwh = eco_signal_value(cfg->price, cfg->epoch0_s + t);
    if (e->node_c) {
        /* The cluster's carbon and cost up to t (energy is integrated to t_prev <= t). */
        row.carbon_kg = e->carbon_kg;
        row.cost = e->cost;
        eco_nodes__grid(e, eco_nodes__power_w(e), e->t_prev, t, &row.carbon_kg, &row.cost);
    }
    cfg->timeline(cfg->timeline_ctx, &row);
}

/* Pops the events at t; *ticks counts the control ticks among them that counted as events. */
static int pop_instant(struct engine *e, double t, uint64_t *ticks)
{
    const struct eco_event *top;
    while ((top = eco_heap_peek(&e->heap)) && top->t_s == t) {
        struct eco_event ev;
        eco_heap_pop(&e->heap, &ev);
        switch (ev.kind) {
        case EV_COMPLETE: {
            struct eco_job *job = &e->jobs[ev.job];
            if (job->state != ECO_JOB_RUNNING || job->gen != ev.gen)
                break; /* stale: the job was preempted since */
            complete(e, ev.job, t);
            e->events++;
            break;
        }
        case EV_WAKEUP:
            if (t == e->wake_s) {
                e->wake_s = -1;
                e->events++;
            }
            break;
        case EV_PD_WAKEUP:
            if (t == e->pd_wake_s) {
                e->pd_wake_s = -1;
                e->events++;
            }
            break;
        case EV_TICK: {
            if (ev.gen != e->tick_gen)
                break; /* stale: re-armed earlier by a change */
            int rc = control_tick(e, t);
            if (rc)
                return rc;
            if (e->tick_pending) {
                e->events++;
                (*ticks)++;
            } else {
                eco_powerctl__idle(e, t);
            }
            break;
        }
        case EV_RELEASE: {
            if (ev.gen) { /* a suspended job resumes */
                e->jobs[ev.job].state = ECO_JOB_QUEUED;
                e->jobs[ev.job].enqueue_s = t;
                e->n_queued++;
            } else {
                enqueue_arrival(e, ev.job, t);
            }
            int rc = q_insert(e, ev.job);
            if (rc)
                return rc;
            e->events++;
            break;
        }
        case EV_SUSPEND: {
            struct eco_job *job = &e->jobs[ev.job];
            if (job->state != ECO_JOB_RUNNING || e->run_gen[ev.job] != ev.gen)
                break; /* stale: the job stopped since */
            int rc = suspend(e, ev.job, t);
            if (rc)
                return rc;
            e->events++;
            break;
        }
        case EV_BUDGET: {
            int rc = eco_powerctl__budget_step(e, t);
            if (rc)
                return rc;
            e->changed = 1;
            e->changed_big = 1;
            e->events++;
            break;
        }
        default:
            eco_nodes__event(e, ev.kind, ev.job, t);
            e->changed = e->changed_big = 1;
            e->events++;
            break;
        }
    }
    return 0;
}

/* Tells cfg->progress how far the run is (after an instant, and at the end). */
static void progress(const struct engine *e, double t, int finished)
{
    const struct eco_sim_config *cfg = e->cfg;
    if (!cfg->progress)
        return;
    struct eco_sim_progress p = {
        .t_s = t,
        .start_s = e->n_arrivals ? e->jobs[e->arrivals[0]].submit_s : t,
        .done = e->n_done,
        .total = e->n_arrivals,
        .events = e->events,
        .finished = finished,
    };
    cfg->progress(cfg->progress_ctx, &p);
}

static int loop(struct engine *e)
{
    int rc;
    double t = e->n_arrivals ? e->jobs[e->arrivals[0]].submit_s : 0;
    while (e->n_done < e->n_arrivals) {
        const struct eco_event *top = eco_heap_peek(&e->heap);
        int have_arr = e->next_arrival < e->n_arrivals;
        if (!top && !have_arr)
            break; /* nothing can happen any more: jobs left are reported unfinished */
        if (have_arr) {
            double ta = e->jobs[e->arrivals[e->next_arrival]].submit_s;
            t = (top && top->t_s < ta) ? top->t_s : ta;
        } else {
            t = top->t_s;
        }
        eco_nodes__advance(e, t);
        uint64_t events_before = e->events, ticks = 0;
        if ((rc = pop_instant(e, t, &ticks)))
            return rc;
        e->instant_max_gpus = 0;
        while (e->next_arrival < e->n_arrivals &&
               e->jobs[e->arrivals[e->next_arrival]].submit_s == t) {
            uint32_t j = e->arrivals[e->next_arrival++];
            double r = e->cpol ? carbon_release(e, j, t) : t;
            if (isnan(r))
                return -ENOMEM;
            if (r > t) {
                if ((rc = eco_heap_push(&e->heap, r, EV_RELEASE, j, 0)))
                    return rc;
                e->deferred++;
                e->deferred_s += r - t;
            } else {
                enqueue_arrival(e, j, t);
                if ((rc = q_insert(e, j)))
                    return rc;
            }
            e->events++;
        }
        if (e->events == events_before)
            continue; /* only stale events: nothing changed */
        /* A control tick alone changes limits, which no start or power-down decision reads
         * (admission uses minimum draws, the budget and the nodes' power states): no pass. */
        if (e->events - events_before > ticks) {
            if ((rc = pass(e, t)))
                return rc;
            uint32_t powered = e->nodes_powered;
            double fixed = e->p.idle + e->p.base + e->p.off + e->p.trans;
            if (e->n_done < e->n_arrivals && (rc = eco_nodes__powerdown_pass(e, t)))
                return rc;
            if (powered != e->nodes_powered ||
                fixed != e->p.idle + e->p.base + e->p.off + e->p.trans)
                e->changed = e->changed_big = 1;
            if ((rc = control_changed(e, t)))
                return rc;
        }
        emit_timeline(e, t);
        progress(e, t, 0);
    }
    eco_powerctl__idle(e, t); /* the run ends: so does the control period in progress */
    progress(e, t, 1);
    return 0;
}

/* Resolves each job's workload: the trace's name, else a draw from the mix, else generic. */
static int resolve_workloads(struct eco_jobset *set, const struct eco_sim_config *cfg,
                             struct eco_error *err)
{
    struct eco_workload_mix mix;
    struct eco_rng rng;
    int have_mix = cfg->workload_mix != NULL;
    if (have_mix) {
        int rc = eco_workload_mix_parse(cfg->workload_mix, &mix, err);
        if (rc)
            return rc;
    }
    eco_rng_init(&rng, cfg->seed);
    for (size_t i = 0; i < set->n; i++) {
        struct eco_job *job = &set->jobs[i];
        if (job->workload_off) {
            const char *name = eco_jobset_str(set, job->workload_off);
            int w = eco_workload_find(name);
            if (w < 0) {
                char known[512] = "";
                for (size_t k = 0; k < eco_workload_count(); k++) {
                    strncat(known, k ? ", " : "", sizeof known - strlen(known) - 1);
                    strncat(known, eco_workload_name(k), sizeof known - strlen(known) - 1);
                }
                return eco_errorf(err, -EINVAL,
                                  "line %u: column 'workload': unknown workload '%s' "
                                  "(known: %s)",
                                  job->line, name, known);
            }
            job->workload = (uint16_t)w;
        } else if (have_mix) {
            job->workload = (uint16_t)eco_workload_mix_pick(&mix, eco_rng_uniform(&rng));
        } else {
            job->workload = ECO_WORKLOAD_GENERIC;
        }
    }
    return 0;
}

/* Cluster power with every node on and idle but for `job` running alone at its GPUs' minimum
 * limit (on the type of its kind with the lowest such draw): the least the cluster draws while
 * the job runs without powering nodes down. */
double eco_sim__idle_w(const struct eco_cluster *c)
{
    double w = 0;
    for (uint16_t g = 0; g < c->n_groups; g++)
        w += c->groups[g].count *
             (c->groups[g].base_w + c->groups[g].gpus * c->groups[g].gpu_idle_w);
    return w;
}

static double alone_draw(const struct engine *e, const struct eco_job *job)
{
    double idle = eco_sim__idle_w(e->c), best = -1;
    for (uint16_t g = 0; g < e->c->n_groups; g++) {
        const struct eco_node_group *grp = &e->c->groups[g];
        if (job->gpu_type >= 0 && grp->type != job->gpu_type)
            continue;
        double p = eco_powerctl__min_gpu_w(grp->type, job->workload, e->cfg->power_knob);
        double extra = job->gpus * (p - grp->gpu_idle_w);
        if (best < 0 || extra < best)
            best = extra;
    }
    return idle + (best > 0 ? best : 0);
}

/* Resets run state; marks jobs that can never fit as rejected; builds the arrival order. */
static int prepare(struct engine *e, size_t *rejected)
{
    struct arr_key *keys = malloc((e->n_jobs ? e->n_jobs : 1) * sizeof *keys);
    if (!keys)
        return -ENOMEM;
    size_t n = 0;
    *rejected = 0;
    double max_budget = 0;
    for (size_t i = 0; i < e->cfg->n_budget; i++)
        if (e->cfg->budget[i].watts > max_budget)
            max_budget = e->cfg->budget[i].watts;
    for (size_t i = 0; i < e->n_jobs; i++) {
        struct eco_job *job = &e->jobs[i];
        job->state = ECO_JOB_PENDING;
        job->preemptions = 0;
        job->gen = 0;
        job->alloc_off = job->alloc_n = 0;
        job->start_s = job->end_s = -1;
        job->last_start_s = job->enqueue_s = job->wait_s = 0;
        job->remaining_s = job->duration_s;
        job->attained_gpu_s = 0;
        job->speed = 1;
        job->power_w = 0;
        job->limit_w = 0;
        job->clock_mhz = 0;
        job->energy_j = 0;
        if (job->deadline_drawn) {
            job->deadline_s = ECO_NO_DEADLINE;
            job->deadline_drawn = 0;
        }
        if (e->cfg->deadline_hi > 0 && job->deadline_s < 0) {
            double u = eco_rng_uniform(&e->deadline_rng);
            double f = e->cfg->deadline_lo + (e->cfg->deadline_hi - e->cfg->deadline_lo) * u;
            job->deadline_s = job->submit_s + f * job->duration_s;
            job->deadline_drawn = 1;
        }
        job->reject_reason = ECO_REJECT_NONE;
        uint64_t of_type = eco_cluster_gpus_of_type(e->c, job->gpu_type);
        if (job->gpu_type >= 0 && of_type == 0)
            job->reject_reason = ECO_REJECT_GPU_TYPE;
        else if (job->gpus > of_type)
            job->reject_reason = ECO_REJECT_SIZE;
        else if (e->cfg->n_budget && alone_draw(e, job) > max_budget)
            job->reject_reason = ECO_REJECT_POWER;
        if (job->reject_reason) {
            job->state = ECO_JOB_REJECTED;
            (*rejected)++;
            continue;
        }
        keys[n++] = (struct arr_key){job->submit_s, (uint32_t)i};
    }
    if (n > 1)
        qsort(keys, n, sizeof *keys, cmp_arr_key);
    for (size_t i = 0; i < n; i++)
        e->arrivals[i] = keys[i].idx;
    e->n_arrivals = n;
    free(keys);
    return 0;
}

double eco_percentile_sorted(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1)
        return v[n - 1];
    double frac = pos - (double)lo;
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

/* The k-th smallest of v[0..n) (k < n), reordering v: quickselect with a median-of-three
 * pivot, linear on average. */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double a = v[lo], b = v[mid], c = v[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

double eco_percentile_select(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1)
        return select_kth(v, n, n - 1);
    double a = select_kth(v, n, lo);
    double b = v[lo + 1]; /* after the selection everything above lo is >= a: take its min */
    for (size_t i = lo + 2; i < n; i++)
        if (v[i] < b)
            b = v[i];
    return a + (b - a) * (pos - (double)lo);
}

static int summarize(struct engine *e, struct eco_sim_summary *s)
{
    double *jct = malloc((e->n_jobs ? e->n_jobs : 1) * sizeof *jct);
    double *wait = malloc((e->n_jobs ? e->n_jobs : 1) * sizeof *wait);
    int rc = 0;
    if (!jct || !wait) {
        rc = -ENOMEM;
        goto done;
    }
    size_t n = 0;
    double sum_jct = 0, sum_wait = 0, first = 0, last = 0;
    size_t misses = 0;
    s->deadline_jobs = 0;
    int have = 0;
    for (size_t i = 0; i < e->n_jobs; i++) {
        const struct eco_job *job = &e->jobs[i];
        if (job->state == ECO_JOB_REJECTED)
            continue;
        if (!have || job->submit_s < first)
            first = job->submit_s;
        have = 1;
        if (job->state != ECO_JOB_DONE)
            continue;
        if (job->end_s > last)
            last = job->end_s;
        if (job->deadline_s >= 0) {
            s->deadline_jobs++;
            misses += job->end_s > job->deadline_s;
        }
        jct[n] = job->end_s - job->submit_s;
        wait[n] = job->wait_s;
        sum_jct += jct[n];
        sum_wait += wait[n];
        n++;
    }
    s->completed = n;
    s->unfinished = e->n_jobs - n - s->rejected;
    s->avg_jct_s = n ? sum_jct / (double)n : 0;
    s->p50_jct_s = eco_percentile_select(jct, n, 50);
    s->p95_jct_s = eco_percentile_select(jct, n, 95);
    s->p99_jct_s = eco_percentile_select(jct, n, 99);
    s->avg_wait_s = n ? sum_wait / (double)n : 0;
    s->p95_wait_s = eco_percentile_select(wait, n, 95);
    s->makespan_s = n ? last - first : 0;
    s->busy_gpu_s = e->busy_gpu_s;
    s->gpu_util = (s->makespan_s > 0 && e->c->total_gpus)
                      ? e->busy_gpu_s / ((double)e->c->total_gpus * s->makespan_s)
                      : 0;
    s->events = e->events;
    s->preemptions = e->preemptions;
    s->deadline_miss_ratio = s->deadline_jobs ? (double)misses / (double)s->deadline_jobs : 0;
done:
    free(jct);
    free(wait);
    return rc;
}

/* --power-knob clock with a capper that splits power limits only (its table's limits_only):
 * the message names the ones that work on the clock knob, from the registry. */
static int knob_check(const struct eco_sim_config *cfg, struct eco_error *err)
{
    if (cfg->power_knob != ECO_POWER_KNOB_CLOCK || !cfg->power_policy)
        return 0;
    char family[64], ok[256] = "";
    snprintf(family, sizeof family, "%.*s", (int)strcspn(cfg->power_policy, ":"),
             cfg->power_policy); /* with or without PARAMS */
    const struct eco_capper_ops *ops = eco_capper_find(family);
    if (!ops || !ops->limits_only)
        return 0;
    const struct eco_capper_ops *const *all = eco_capper_all();
    size_t n = 0, k = 0;
    for (size_t i = 0; all[i]; i++)
        n += !all[i]->limits_only;
    for (size_t i = 0; all[i]; i++) {
        if (all[i]->limits_only)
            continue;
        size_t len = strlen(ok);
        snprintf(ok + len, sizeof ok - len, "%s%s",
                 k == 0       ? ""
                 : k + 1 == n ? " or "
                              : ", ",
                 all[i]->name);
        k++;
    }
    return eco_errorf(err, -EINVAL,
                      "--power-policy %s splits power limits; with --power-knob clock use %s",
                      ops->name, ok);
}

/* Fills the energy part of the summary and the per-node figures over [t0, t_end]. */
static int energy_summary(struct engine *e, struct eco_sim_result *res)
{
    struct eco_sim_summary *s = &res->summary;
    double t_end = e->t_prev;
    s->energy_j = (struct eco_energy){
        .gpu_busy = e->en.busy,
        .gpu_idle = e->en.idle,
        .node_base = e->en.base,
        .off = e->en.off,
        .transitions = e->en.trans,
    };
    s->energy_j.total = e->en.busy + e->en.idle + e->en.base + e->en.off + e->en.trans;
    s->avg_power_w = t_end > e->t0 ? s->energy_j.total / (t_end - e->t0) : 0;
    s->window_start_s = e->t0;
    s->window_end_s = t_end;
    s->peak_power_w = e->peak_w;
    s->node_boots = e->node_boots;
    s->node_shutdowns = e->node_shutdowns;
    s->boot_delayed_starts = e->boot_delayed_starts;
    s->power_cycles = e->node_shutdowns;
    s->cycle_cost_j = e->cycle_j;
    uint32_t nn = e->c->n_nodes;
    res->node_energy_j = malloc(nn * sizeof *res->node_energy_j);
    res->node_boots = malloc(nn * sizeof *res->node_boots);
    if (!res->node_energy_j || !res->node_boots)
        return -ENOMEM;
    for (uint32_t n = 0; n < nn; n++) {
        const struct contrib *c = &e->cur[n];
        double p = c->busy + c->idle + c->base + c->off + c->trans;
        res->node_energy_j[n] = e->node_e[n] + p * (t_end - e->node_t[n]);
        res->node_boots[n] = e->boots[n];
        if (e->node_c)
            eco_nodes__grid(e, p, e->node_t[n], t_end, &e->node_c[n], &e->node_cost[n]);
    }
    res->n_nodes = nn;
    if (e->node_c) {
        s->have_carbon = e->cfg->carbon != NULL;
        s->have_price = e->cfg->price != NULL;
        s->carbon_kg = e->carbon_kg;
        s->cost = e->cost;
        s->epoch0_s = e->cfg->epoch0_s;
        if (e->cfg->price)
            snprintf(s->cost_currency, sizeof s->cost_currency, "%s", e->cfg->price->currency);
        res->node_carbon_kg = e->node_c;
        res->node_cost = e->node_cost;
        res->job_carbon_kg = e->job_c;
        res->job_cost = e->job_cost;
        e->node_c = e->node_cost = e->job_c = e->job_cost = NULL;
    }
    return 0;
}

/* --carbon-bound: the bound on the jobs' own carbon over the run's completed jobs, their windows
 * drawn as carbon_release draws them (the same seed, in arrival order), their energy as they
 * ran (a job's draw does not depend on when it runs without power capping). */
static int carbon_bound(struct engine *e, struct eco_sim_result *res, struct eco_error *err)
{
    const struct eco_sim_config *cfg = e->cfg;
    struct eco_sim_summary *s = &res->summary;
    if (!cfg->carbon)
        return eco_errorf(err, -EINVAL, "--carbon-bound needs a carbon signal (--carbon FILE)");
    struct eco_carbon_bound_job *bj = malloc((e->n_arrivals ? e->n_arrivals : 1) * sizeof *bj);
    if (!bj)
        return -ENOMEM;
    struct eco_rng rng;
    eco_rng_init(&rng, cfg->seed ^ 0xdefe11edULL);
    size_t n = 0;
    s->jobs_carbon_kg = 0;
    for (size_t i = 0; i < e->n_arrivals; i++) {
        uint32_t j = e->arrivals[i];
        const struct eco_job *job = &e->jobs[j];
        double slack = 0;
        if (job->deadline_s != ECO_NO_DEADLINE)
            slack = job->deadline_s - job->submit_s - job->duration_s;
        else if (cfg->deferrable <= 0 || cfg->deferrable >= 1 ||
                 eco_rng_uniform(&rng) < cfg->deferrable)
            slack = cfg->max_delay_s;
        if (slack < 0)
            slack = 0;
        if (job->state != ECO_JOB_DONE)
            continue;
        if (res->job_carbon_kg)
            s->jobs_carbon_kg += res->job_carbon_kg[j];
        double a = cfg->epoch0_s + job->submit_s;
        bj[n++] = (struct eco_carbon_bound_job){
            .submit_s = a,
            .end_s = a + slack + job->duration_s,
            .run_s = job->duration_s,
            .energy_kwh = job->energy_j / 3.6e6,
            .gpus = job->gpus,
        };
    }
    int rc = eco_carbon_lp_bound(bj, n, (double)e->c->total_gpus, cfg->carbon,
                                 cfg->carbon_bound_slot_s, &s->carbon_bound, err);
    s->have_carbon_bound = rc == 0;
    free(bj);
    return rc;
}

static int admit_cb(void *ctx, uint32_t job, const struct eco_alloc *a, size_t n)
{
    return eco_powerctl__admit(ctx, job, a, n);
}

/* 0 when every grid signal of the run covers simulated [a, b], else -EINVAL naming the
 * signal and the calendar times. */
static int signals_cover(const struct eco_sim_config *cfg, double a, double b,
                         struct eco_error *err)
{
    const struct eco_signal *sig[2] = {cfg->carbon, cfg->price};
    for (int i = 0; i < 2; i++) {
        if (!sig[i] || eco_signal_covers(sig[i], cfg->epoch0_s + a, cfg->epoch0_s + b))
            continue;
        char ra[32], rb[32], sa[32], sb[32], run[96];
        eco_format_utc(cfg->epoch0_s + a, ra, sizeof ra);
        eco_format_utc(cfg->epoch0_s + b, rb, sizeof rb);
        eco_format_utc(eco_signal_start(sig[i]), sa, sizeof sa);
        eco_format_utc(eco_signal_end(sig[i]), sb, sizeof sb);
        if (a == b)
            snprintf(run, sizeof run, "starts at %s", ra);
        else
            snprintf(run, sizeof run, "runs from %s to %s", ra, rb);
        return eco_errorf(err, -EINVAL,
                          "the %s signal covers %s to %s, and the run %s: choose a "
                          "--trace-start that puts the run inside it",
                          i ? "price" : "carbon", sa, sb, run);
    }
    return 0;
}

/* Last submit time of the jobs that will run. */
static double last_submit(const struct engine *e)
{
    return e->n_arrivals ? e->jobs[e->arrivals[e->n_arrivals - 1]].submit_s : 0;
}

/* First submit time of the jobs that will run (the start of the energy window). */
static double first_submit(const struct engine *e)
{
    return e->n_arrivals ? e->jobs[e->arrivals[0]].submit_s : 0;
}

int eco_sim_run(const struct eco_cluster *c, struct eco_jobset *set,
                const struct eco_sim_config *cfg, struct eco_sim_result *res, struct eco_error *err)
{
    struct engine e = {.c = c,
                       .jobs = set->jobs,
                       .n_jobs = set->n,
                       .cfg = cfg,
                       .wake_s = -1,
                       .pd_wake_s = -1,
                       .tick_last_s = -1};
    int rc = 0, nodes_ready = 0;
    memset(res, 0, sizeof *res);
    eco_heap_init(&e.heap);
    if (!cfg->policy || !cfg->placement) {
        rc = eco_errorf(err, -EINVAL, "no policy or placement given");
        goto done;
    }
    if (c->n_nodes == 0) {
        rc = eco_errorf(err, -EINVAL, "the cluster has no nodes");
        goto done;
    }
    if (set->n > UINT32_MAX - 1) {
        rc = eco_errorf(err, -EINVAL, "too many jobs (%zu)", set->n);
        goto done;
    }
    if ((rc = eco_powerctl__check(cfg->power_policy, err)))
        goto done;
    if (cfg->power_policy && strcmp(cfg->power_policy, "none") && !cfg->n_budget) {
        rc = eco_errorf(err, -EINVAL,
                        "--power-policy %s needs a power budget (--power-budget or "
                        "--power-budget-file)",
                        cfg->power_policy);
        goto done;
    }
    if ((rc = knob_check(cfg, err)))
        goto done;
    if ((rc = resolve_workloads(set, cfg, err)))
        goto done;
    eco_rng_init(&e.deadline_rng, cfg->seed ^ 0xdead11e5ULL);
    double t0 = eco_mono_s();
    e.pol = cfg->policy->create(c, cfg->policy_params, err);
    if (!e.pol) {
        rc = -EINVAL;
        goto done;
    }
    if (cfg->power_down) {
        e.pd = cfg->power_down->create(c, cfg->power_down_params, err);
        if (!e.pd) {
            rc = -EINVAL;
            goto done;
        }
    }
    e.fm = eco_freemap_create(c);
    size_t nj = set->n ? set->n : 1;
    e.arrivals = malloc(nj * sizeof *e.arrivals);
    e.run = malloc(nj * sizeof *e.run);
    e.run_pos = malloc(nj * sizeof *e.run_pos);
    if (!e.fm || !e.arrivals || !e.run || !e.run_pos ||
        eco_decisions_init(&e.dec, e.fm, cfg->placement)) {
        rc = -ENOMEM;
        goto done;
    }
    struct eco_sim_summary *s = &res->summary;
    if ((rc = prepare(&e, &s->rejected)))
        goto done;
    nodes_ready = 1;
    /* The run lasts at least from the first to the last submit: a signal that cannot cover
     * that is reported before the run, one that ends before the last completion after it. */
    if ((rc = signals_cover(cfg, first_submit(&e), last_submit(&e), err)))
        goto done;
    if (cfg->carbon_policy) {
        const struct eco_signal *sig = cfg->carbon ? cfg->carbon : cfg->price;
        if (!sig) {
            rc = eco_errorf(err, -EINVAL,
                            "--carbon-policy %s needs a signal to follow: --carbon FILE or "
                            "--price FILE",
                            cfg->carbon_policy->name);
            goto done;
        }
        e.cpol = cfg->carbon_policy->create(c, cfg->carbon_params, err);
        if (!e.cpol) {
            rc = -EINVAL;
            goto done;
        }
        if ((rc = eco_forecast_init(&e.forecast, cfg->forecast, cfg->forecast_sigma, sig, cfg->seed,
                                    err)))
            goto done;
        e.have_forecast = 1;
        eco_rng_init(&e.defer_rng, cfg->seed ^ 0xdefe11edULL);
        if (cfg->carbon_policy->plan) {
            size_t nj = set->n ? set->n : 1;
            e.segs = malloc(16 * sizeof *e.segs);
            e.cap_segs = 16;
            e.seg_off = calloc(nj, sizeof *e.seg_off);
            e.seg_n = calloc(nj, sizeof *e.seg_n);
            e.seg_k = calloc(nj, sizeof *e.seg_k);
            e.run_gen = calloc(nj, sizeof *e.run_gen);
            if (!e.segs || !e.seg_off || !e.seg_n || !e.seg_k || !e.run_gen) {
                rc = -ENOMEM;
                goto done;
            }
        }
    }
    if ((rc = eco_nodes__init(&e, first_submit(&e))) || (rc = eco_powerctl__init(&e)))
        goto done;
    if (e.pc) {
        e.dec.admit = admit_cb;
        e.dec.admit_ctx = &e;
        for (size_t i = 1; i < cfg->n_budget; i++)
            if ((rc = eco_heap_push(&e.heap, cfg->budget[i].t_s, EV_BUDGET, 0, 0)))
                goto done;
    }
    if ((rc = loop(&e)) || (rc = signals_cover(cfg, e.t0, e.t_prev, err)))
        goto done;
    s->policy = cfg->policy->name;
    s->placement = cfg->placement->name;
    if (cfg->power_down && cfg->power_down_params)
        snprintf(s->power_down_buf, sizeof s->power_down_buf, "%s:%s", cfg->power_down->name,
                 cfg->power_down_params);
    else
        snprintf(s->power_down_buf, sizeof s->power_down_buf, "%s",
                 cfg->power_down ? cfg->power_down->name : "none");
    s->power_down = s->power_down_buf;
    s->seed = cfg->seed;
    s->jobs = set->n;
    s->skipped_rows = set->skipped_rows;
    s->cluster_gpus = c->total_gpus;
    s->cluster_nodes = c->n_nodes;
    if ((rc = summarize(&e, s)) || (rc = energy_summary(&e, res)))
        goto done;
    s->power_policy = e.pc ? cfg->power_policy : "none";
    s->carbon_policy = cfg->carbon_policy ? cfg->carbon_policy->name : "none";
    s->deferred = e.deferred;
    s->avg_deferral_s = e.deferred ? e.deferred_s / (double)e.deferred : 0;
    s->interrupting =
        e.segs && (!cfg->carbon_policy->interrupts || cfg->carbon_policy->interrupts(e.cpol));
    s->suspensions = e.suspensions;
    s->checkpoint_s = e.suspend_total_s;
    if (cfg->carbon_bound_slot_s > 0 && (rc = carbon_bound(&e, res, err)))
        goto done;
    s->admission_waits = e.admission_waits;
    s->overshoot_s = e.overshoot_s;
    eco_powerctl__summary(&e, s);
    s->sim_wall_s = eco_mono_s() - t0;
    res->alloc_pool = e.pool;
    res->n_alloc = e.npool;
    e.pool = NULL;
done:
    if (rc)
        eco_sim_result_fini(res);
    if (e.pol)
        cfg->policy->destroy(e.pol);
    if (e.pd)
        cfg->power_down->destroy(e.pd);
    if (e.cpol)
        cfg->carbon_policy->destroy(e.cpol);
    if (e.have_forecast)
        eco_forecast_fini(&e.forecast);
    free(e.segs);
    free(e.seg_off);
    free(e.seg_n);
    free(e.seg_k);
    free(e.run_gen);
    eco_powerctl__fini(&e);
    if (nodes_ready)
        eco_nodes__fini(&e);
    eco_pd_decisions_fini(&e.pdd);
    eco_decisions_fini(&e.dec);
    eco_freemap_destroy(e.fm);
    eco_heap_fini(&e.heap);
    free(e.arrivals);
    free(e.q);
    free(e.run);
    free(e.run_pos);
    free(e.pool);
    return rc;
}

void eco_sim_result_fini(struct eco_sim_result *res)
{
    free(res->alloc_pool);
    free(res->node_energy_j);
    free(res->node_boots);
    free(res->node_carbon_kg);
    free(res->node_cost);
    free(res->job_carbon_kg);
    free(res->job_cost);
    res->node_carbon_kg = res->node_cost = res->job_carbon_kg = res->job_cost = NULL;
    res->alloc_pool = NULL;
    res->node_energy_j = NULL;
    res->node_boots = NULL;
    res->n_alloc = 0;
    res->n_nodes = 0;
}

int eco_sim_miss_bound(const struct eco_cluster *c, struct eco_jobset *set,
                       const struct eco_sim_config *cfg, double slot_s, struct eco_miss_bound *out,
                       struct eco_error *err)
{
    struct engine e = {.c = c, .jobs = set->jobs, .n_jobs = set->n, .cfg = cfg};
    memset(out, 0, sizeof *out);
    if (!cfg->n_budget)
        return eco_errorf(err, -EINVAL,
                          "--miss-bound needs a power budget (--power-budget or "
                          "--power-budget-file)");
    if (!(slot_s >= 1) || !isfinite(slot_s))
        return eco_errorf(err, -EINVAL, "--miss-bound: the slot must be at least 1 s (got %g)",
                          slot_s);
    if (c->n_nodes == 0)
        return eco_errorf(err, -EINVAL, "the cluster has no nodes");
    int rc = knob_check(cfg, err);
    if (rc || (rc = resolve_workloads(set, cfg, err)))
        return rc;
    eco_rng_init(&e.deadline_rng, cfg->seed ^ 0xdead11e5ULL);
    e.arrivals = malloc((set->n ? set->n : 1) * sizeof *e.arrivals);
    if (!e.arrivals)
        return -ENOMEM;
    size_t rejected;
    if (!(rc = prepare(&e, &rejected)))
        rc = eco_sim__miss_bound(&e, slot_s, out, err);
    free(e.arrivals);
    return rc;
}
