/* SPDX-License-Identifier: MIT */
/* Discrete-event engine. At one instant: completions first, then arrivals in trace order,
 * then one policy pass. Events are ordered by (time, insertion sequence), so identical input
 * gives identical output. docs/simulator.md describes the semantics. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ecosched/heap.h"
#include "ecosched/sim.h"

enum { EV_COMPLETE = 1, EV_WAKEUP = 2 };

struct engine {
    const struct eco_cluster *c;
    struct eco_job *jobs;
    size_t n_jobs;
    const struct eco_sim_config *cfg;
    struct eco_policy *pol;
    struct eco_freemap *fm;
    struct eco_heap heap;
    struct eco_decisions dec;
    uint32_t *arrivals; /* non-rejected jobs by (submit, trace order) */
    size_t n_arrivals, next_arrival;
    uint32_t *q;        /* queue in policy order, with lazily removed entries */
    size_t qhead, qn, qcap, qdead;
    uint32_t *run;      /* running jobs */
    uint32_t *run_pos;  /* per job: index in run[] */
    size_t nrun;
    struct eco_alloc *pool;
    size_t npool, cap_pool;
    double wake_s;
    uint64_t events;
    double busy_gpu_s;
    size_t preemptions;
};


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
    job->remaining_s -= ran;
    if (job->remaining_s < 0)
        job->remaining_s = 0;
    job->attained_gpu_s += (double)job->gpus * ran;
    e->busy_gpu_s += (double)job->gpus * ran;
}

static void complete(struct engine *e, uint32_t j, double t)
{
    struct eco_job *job = &e->jobs[j];
    account_segment(e, job, t);
    job->remaining_s = 0;
    job->state = ECO_JOB_DONE;
    job->end_s = t;
    run_remove(e, j);
    for (uint32_t i = 0; i < job->alloc_n; i++)
        eco_freemap_give(e->fm, e->pool[job->alloc_off + i].node, e->pool[job->alloc_off + i].gpus);
}

static int apply_start(struct engine *e, size_t k, double t)
{
    uint32_t j = e->dec.starts[k];
    struct eco_job *job = &e->jobs[j];
    size_t off = e->dec.start_alloc_off[k];
    size_t cnt = (k + 1 < e->dec.n_starts ? e->dec.start_alloc_off[k + 1] : e->dec.n_start_allocs) -
                 off;
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
    job->state = ECO_JOB_RUNNING;
    if (job->start_s < 0)
        job->start_s = t;
    job->wait_s += t - job->enqueue_s;
    job->last_start_s = t;
    e->qdead++;
    run_add(e, j);
    return eco_heap_push(&e->heap, t + job->remaining_s, EV_COMPLETE, j, job->gen);
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
    run_remove(e, j);
    return q_insert(e, j);
}

static int pass(struct engine *e, double t)
{
    q_tidy(e);
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
    int rc = e->cfg->policy->decide(e->pol, &v, &e->dec);
    if (rc)
        return rc;
    for (size_t k = 0; k < e->dec.n_preempts; k++)
        if ((rc = apply_preempt(e, e->dec.preempts[k], t)))
            return rc;
    for (size_t k = 0; k < e->dec.n_starts; k++)
        if ((rc = apply_start(e, k, t)))
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
}

static int loop(struct engine *e)
{
    int rc;
    for (;;) {
        const struct eco_event *top = eco_heap_peek(&e->heap);
        int have_arr = e->next_arrival < e->n_arrivals;
        if (!top && !have_arr)
            return 0;
        double t;
        if (have_arr) {
            double ta = e->jobs[e->arrivals[e->next_arrival]].submit_s;
            t = (top && top->t_s < ta) ? top->t_s : ta;
        } else {
            t = top->t_s;
        }
        while ((top = eco_heap_peek(&e->heap)) && top->t_s == t) {
            struct eco_event ev;
            eco_heap_pop(&e->heap, &ev);
            if (ev.kind == EV_COMPLETE) {
                struct eco_job *job = &e->jobs[ev.job];
                if (job->state != ECO_JOB_RUNNING || job->gen != ev.gen)
                    continue; /* stale: the job was preempted since */
                complete(e, ev.job, t);
                e->events++;
            } else if (ev.kind == EV_WAKEUP && t == e->wake_s) {
                e->wake_s = -1;
                e->events++;
            }
        }
        while (e->next_arrival < e->n_arrivals &&
               e->jobs[e->arrivals[e->next_arrival]].submit_s == t) {
            uint32_t j = e->arrivals[e->next_arrival++];
            enqueue_arrival(e, j, t);
            if ((rc = q_insert(e, j)))
                return rc;
            e->events++;
        }
        if ((rc = pass(e, t)))
            return rc;
    }
}

/* Resets run state; marks jobs that can never fit as rejected; builds the arrival order. */
static int prepare(struct engine *e, size_t *rejected)
{
    struct arr_key *keys = malloc((e->n_jobs ? e->n_jobs : 1) * sizeof *keys);
    if (!keys)
        return -ENOMEM;
    size_t n = 0;
    *rejected = 0;
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
        if (job->gpus > eco_cluster_gpus_of_type(e->c, job->gpu_type)) {
            job->state = ECO_JOB_REJECTED;
            (*rejected)++;
            continue;
        }
        keys[n++] = (struct arr_key){job->submit_s, (uint32_t)i};
    }
    qsort(keys, n, sizeof *keys, cmp_arr_key);
    for (size_t i = 0; i < n; i++)
        e->arrivals[i] = keys[i].idx;
    e->n_arrivals = n;
    free(keys);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
        jct[n] = job->end_s - job->submit_s;
        wait[n] = job->wait_s;
        sum_jct += jct[n];
        sum_wait += wait[n];
        n++;
    }
    qsort(jct, n, sizeof *jct, cmp_double);
    qsort(wait, n, sizeof *wait, cmp_double);
    s->completed = n;
    s->unfinished = e->n_jobs - n - s->rejected;
    s->avg_jct_s = n ? sum_jct / (double)n : 0;
    s->p50_jct_s = eco_percentile_sorted(jct, n, 50);
    s->p95_jct_s = eco_percentile_sorted(jct, n, 95);
    s->p99_jct_s = eco_percentile_sorted(jct, n, 99);
    s->avg_wait_s = n ? sum_wait / (double)n : 0;
    s->p95_wait_s = eco_percentile_sorted(wait, n, 95);
    s->makespan_s = n ? last - first : 0;
    s->busy_gpu_s = e->busy_gpu_s;
    s->gpu_util = (s->makespan_s > 0 && e->c->total_gpus)
                      ? e->busy_gpu_s / ((double)e->c->total_gpus * s->makespan_s)
                      : 0;
    s->events = e->events;
    s->preemptions = e->preemptions;
done:
    free(jct);
    free(wait);
    return rc;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int eco_sim_run(const struct eco_cluster *c, struct eco_jobset *set,
                const struct eco_sim_config *cfg, struct eco_sim_result *res,
                struct eco_error *err)
{
    struct engine e = {.c = c, .jobs = set->jobs, .n_jobs = set->n, .cfg = cfg, .wake_s = -1};
    int rc = 0;
    memset(res, 0, sizeof *res);
    eco_heap_init(&e.heap);
    if (!cfg->policy || !cfg->placement) {
        rc = eco_error_set(err, "no policy or placement given");
        goto done;
    }
    if (c->n_nodes == 0) {
        rc = eco_error_set(err, "the cluster has no nodes");
        goto done;
    }
    if (set->n > UINT32_MAX - 1) {
        rc = eco_error_set(err, "too many jobs (%zu)", set->n);
        goto done;
    }
    double t0 = wall_now();
    e.pol = cfg->policy->create(c, cfg->policy_params, err);
    e.fm = eco_freemap_create(c);
    size_t nj = set->n ? set->n : 1;
    e.arrivals = malloc(nj * sizeof *e.arrivals);
    e.run = malloc(nj * sizeof *e.run);
    e.run_pos = malloc(nj * sizeof *e.run_pos);
    if (!e.pol) {
        rc = -EINVAL;
        goto done;
    }
    if (!e.fm || !e.arrivals || !e.run || !e.run_pos ||
        eco_decisions_init(&e.dec, e.fm, cfg->placement)) {
        rc = -ENOMEM;
        goto done;
    }
    struct eco_sim_summary *s = &res->summary;
    if ((rc = prepare(&e, &s->rejected)))
        goto done;
    if ((rc = loop(&e)))
        goto done;
    s->policy = cfg->policy->name;
    s->placement = cfg->placement->name;
    s->seed = cfg->seed;
    s->jobs = set->n;
    s->skipped_rows = set->skipped_rows;
    s->cluster_gpus = c->total_gpus;
    s->cluster_nodes = c->n_nodes;
    if ((rc = summarize(&e, s)))
        goto done;
    s->sim_wall_s = wall_now() - t0;
    res->alloc_pool = e.pool;
    res->n_alloc = e.npool;
    e.pool = NULL;
done:
    if (e.pol)
        cfg->policy->destroy(e.pol);
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
    res->alloc_pool = NULL;
    res->n_alloc = 0;
}
