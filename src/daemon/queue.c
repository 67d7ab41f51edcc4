/* SPDX-License-Identifier: MIT */
/* ecoschedd's queue: the queued jobs kept in memory in the order of the configured core
 * queue policy (fifo, greedy or edf: the same ops tables as the simulator's), and the pass
 * that lets the policy's decide call pick the jobs to start, with the live-status GPU
 * selector answering whether each one fits now (docs/daemon/README.md, "Queue order"). */
#define _GNU_SOURCE /* qsort_r (glibc's, the context last) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ecosched/cluster.h"
#include "ecosched/freemap.h"
#include "queue.h"
#include "ecod.h"

/* Queue policies the daemon runs: by the registry's capability flags, those that need neither
 * run-time estimates (a command has none) nor preemption (a running process is never stopped
 * to run another): fifo, greedy and edf today. */
#define DAEMON_POLICY_EXCLUDES (ECO_POLICY_NEEDS_DURATION | ECO_POLICY_PREEMPTS)

const struct eco_policy_ops *ecod__queue_policy_find(const char *name)
{
    const struct eco_policy_ops *p = eco_policy_find(name);
    return p && !(p->caps & DAEMON_POLICY_EXCLUDES) ? p : NULL;
}

const char *ecod__queue_policy_names(char *buf, size_t size)
{
    const char *names[32];
    size_t n = 0;
    for (const struct eco_policy_ops *const *p = eco_policy_all(); *p && n < 32; p++)
        if (!((*p)->caps & DAEMON_POLICY_EXCLUDES))
            names[n++] = (*p)->name;
    return ecod__join_names(buf, size, names, n);
}

/* Requests that did not fit in this pass: a request at least as large (same sharing) cannot
 * fit either, since nothing is freed during a pass. */
#define N_MEMO 4

struct ecod_queue {
    const struct eco_policy_ops *ops;
    struct eco_policy *policy;
    struct eco_cluster *model; /* one node with the server's GPUs (the decision list's frame) */
    struct eco_freemap *fm;
    struct eco_decisions dec;
    struct eco_job *jobs; /* per queued job: what the policy reads */
    struct ecod_qjob *q;  /* per queued job: what the selector needs */
    uint32_t *order;      /* 0..n-1: the view's queue (filled up to n_order) */
    size_t n, cap, n_order;
    bool sorted;
    /* during a pass */
    struct ecod *d;
    double mono;
    struct eco_gpu_request memo[N_MEMO];
    size_t n_memo;
    size_t n_never;                     /* jobs place() found can never fit */
    uint32_t gpus[ECO_GPUSEL_MAX_GPUS]; /* the last choice of place() */
};

static int cmp_index(const struct ecod_queue *qu, size_t a, size_t b)
{
    double ka = qu->ops->order_key(&qu->jobs[a]), kb = qu->ops->order_key(&qu->jobs[b]);
    if (ka != kb)
        return ka < kb ? -1 : 1;
    if (qu->q[a].id != qu->q[b].id)
        return qu->q[a].id < qu->q[b].id ? -1 : 1;
    return 0;
}

/* qsort_r's comparison (glibc's argument order: the context comes last). */
static int cmp_sort(const void *a, const void *b, void *qu)
{
    return cmp_index(qu, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* Sorts jobs[] and q[] together by queue order. */
static int sort_queue(struct ecod_queue *qu)
{
    if (qu->sorted || qu->n < 2)
        return qu->sorted = true, 0;
    uint32_t *idx = malloc(qu->n * sizeof *idx);
    struct eco_job *j2 = malloc(qu->n * sizeof *j2);
    struct ecod_qjob *q2 = malloc(qu->n * sizeof *q2);
    if (!idx || !j2 || !q2) {
        free(idx), free(j2), free(q2);
        return -ENOMEM;
    }
    for (size_t i = 0; i < qu->n; i++)
        idx[i] = (uint32_t)i;
    qsort_r(idx, qu->n, sizeof *idx, cmp_sort, qu);
    for (size_t i = 0; i < qu->n; i++) {
        j2[i] = qu->jobs[idx[i]];
        q2[i] = qu->q[idx[i]];
    }
    free(qu->jobs);
    free(qu->q);
    free(idx);
    qu->jobs = j2;
    qu->q = q2;
    qu->sorted = true;
    return 0;
}

static bool covered_by_memo(const struct ecod_queue *qu, const struct eco_gpu_request *r)
{
    for (size_t i = 0; i < qu->n_memo; i++) {
        const struct eco_gpu_request *m = &qu->memo[i];
        if (m->share == r->share && r->n_gpus >= m->n_gpus && r->mem_b >= m->mem_b)
            return true;
    }
    return false;
}

/* The placement the daemon's decision list uses: the live selector chooses the GPUs (kept
 * for launch), and the one-node model only counts whole GPUs taken by jobs that do not share
 * (a shared job takes none of them). */
static int place_live(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                      struct eco_alloc *out, size_t cap)
{
    struct ecod_queue *qu = ctx; /* eco_decisions.place_ctx: the queue of this pass */
    size_t i = (size_t)(job - qu->jobs);
    const struct ecod_qjob *qj = &qu->q[i];
    (void)fm;
    if (cap < 1)
        return -ENOSPC;
    if (qj->req.n_gpus > 0) {
        if (qj->req.n_gpus > qu->d->n_gpus) {
            qu->q[i].never = true;
            qu->n_never++;
            return -EAGAIN;
        }
        if (covered_by_memo(qu, &qj->req))
            return -EAGAIN;
        int rc = eco_gpusel_choose(qu->d->sel, qu->mono, &qj->req, qu->gpus);
        if (rc == -EOVERFLOW) {
            qu->q[i].never = true;
            qu->n_never++;
        }
        if (rc < 0) {
            if (rc == -EAGAIN && qu->n_memo < N_MEMO)
                qu->memo[qu->n_memo++] = qj->req;
            return -EAGAIN;
        }
    }
    out[0] = (struct eco_alloc){.node = 0, .gpus = qj->req.share ? 0 : (uint16_t)qj->req.n_gpus};
    return 1;
}

static const struct eco_placement_ops place_ops = {
    .name = "live",
    .summary = "the daemon's live-status GPU selector",
    .place = place_live,
};

/* After place(): claims the chosen GPUs at once, so later choices of this pass see them. */
static int admit_live(void *ctx, uint32_t job, const struct eco_alloc *a, size_t n)
{
    struct ecod_queue *qu = ctx;
    const struct ecod_qjob *qj = &qu->q[job];
    (void)a, (void)n;
    if (qj->req.n_gpus == 0)
        return qu->q[job].started = true, 1;
    int rc = eco_gpusel_reserve(qu->d->sel, qu->mono, qu->gpus, qj->req.n_gpus, &qj->req);
    if (rc < 0)
        return 0;
    memcpy(qu->q[job].chosen, qu->gpus, qj->req.n_gpus * sizeof *qu->gpus);
    qu->q[job].started = true;
    return 1;
}

int ecod__queue_create(struct ecod *d, const char *policy, struct eco_error *err)
{
    struct ecod_queue *qu = calloc(1, sizeof *qu);
    int rc = -ENOMEM;
    if (!qu)
        return eco_errorf(err, -ENOMEM, "out of memory");
    qu->ops = ecod__queue_policy_find(policy ? policy : "fifo");
    if (!qu->ops) {
        char names[ECOD_NAMES_MAX];
        rc = eco_errorf(err, -EINVAL, "queue policy '%s': the daemon runs %s", policy,
                        ecod__queue_policy_names(names, sizeof names));
        goto fail;
    }
    qu->model = eco_cluster_create();
    uint32_t g = d->n_gpus ? d->n_gpus : 1;
    if (!qu->model || eco_cluster_add_nodes(qu->model, 1, g, 0, err) < 0)
        goto fail;
    if (!(qu->fm = eco_freemap_create(qu->model)) ||
        eco_decisions_init(&qu->dec, qu->fm, &place_ops) < 0)
        goto fail;
    qu->dec.admit = admit_live;
    qu->dec.admit_ctx = qu;
    qu->dec.place_ctx = qu;
    if (!(qu->policy = qu->ops->create(qu->model, NULL, err))) {
        rc = -EINVAL;
        goto fail;
    }
    qu->sorted = true;
    d->queue = qu;
    return 0;
fail:
    if (rc == -ENOMEM && !err->msg[0])
        eco_errorf(err, rc, "queue: out of memory");
    d->queue = qu;
    ecod__queue_destroy(d);
    return rc;
}

void ecod__queue_destroy(struct ecod *d)
{
    struct ecod_queue *qu = d->queue;
    if (!qu)
        return;
    if (qu->policy)
        qu->ops->destroy(qu->policy);
    eco_decisions_fini(&qu->dec);
    eco_freemap_destroy(qu->fm);
    eco_cluster_destroy(qu->model);
    free(qu->jobs);
    free(qu->q);
    free(qu->order);
    free(qu);
    d->queue = NULL;
}

const char *ecod__queue_policy_name(const struct ecod *d)
{
    return d->queue ? d->queue->ops->name : "fifo";
}

size_t ecod__queue_len(const struct ecod *d)
{
    return d->queue ? d->queue->n : 0;
}

int ecod__queue_add(struct ecod *d, const struct eco_store_job *j)
{
    struct ecod_queue *qu = d->queue;
    if (qu->n == qu->cap) {
        size_t cap = qu->cap ? 2 * qu->cap : 256;
        struct eco_job *jobs = realloc(qu->jobs, cap * sizeof *jobs);
        if (jobs)
            qu->jobs = jobs;
        struct ecod_qjob *q = realloc(qu->q, cap * sizeof *q);
        if (q)
            qu->q = q;
        uint32_t *o = realloc(qu->order, cap * sizeof *o);
        if (o)
            qu->order = o;
        if (!jobs || !q || !o)
            return -ENOMEM;
        qu->cap = cap;
    }
    struct eco_job *ej = &qu->jobs[qu->n];
    memset(ej, 0, sizeof *ej);
    ej->submit_s = j->submit_s;
    ej->deadline_s = j->deadline_s > 0 ? j->deadline_s : ECO_NO_DEADLINE;
    ej->gpus = j->gpus;
    ej->gpu_milli = 1000;
    ej->gpu_type = -1;
    ej->gpu_mem_gb = j->gpu_mem_gb;
    ej->duration_s = 0; /* unknown: the daemon's policies do not use it */
    ej->state = ECO_JOB_QUEUED;
    struct ecod_qjob *qj = &qu->q[qu->n];
    memset(qj, 0, sizeof *qj);
    qj->id = j->id;
    qj->req = (struct eco_gpu_request){.job_id = (uint64_t)j->id,
                                       .n_gpus = j->gpus,
                                       .mem_b = (uint64_t)(j->gpu_mem_gb * (double)(1ull << 30)),
                                       .share = j->share};
    if (qu->n > 0 && qu->sorted && cmp_index(qu, qu->n - 1, qu->n) > 0)
        qu->sorted = false;
    qu->n++;
    return 0;
}

void ecod__queue_remove(struct ecod *d, int64_t id)
{
    struct ecod_queue *qu = d->queue;
    for (size_t i = 0; qu && i < qu->n; i++)
        if (qu->q[i].id == id) {
            memmove(&qu->q[i], &qu->q[i + 1], (qu->n - i - 1) * sizeof *qu->q);
            memmove(&qu->jobs[i], &qu->jobs[i + 1], (qu->n - i - 1) * sizeof *qu->jobs);
            qu->n--;
            if (qu->n_order > qu->n)
                qu->n_order = qu->n;
            return;
        }
}

int ecod__queue_pass(struct ecod *d, double now, double mono, struct ecod_start **starts,
                     size_t *n_starts, struct eco_error *err)
{
    struct ecod_queue *qu = d->queue;
    *starts = NULL;
    *n_starts = 0;
    if (qu->n == 0)
        return 0;
    if (sort_queue(qu) < 0)
        return eco_errorf(err, -ENOMEM, "queue: out of memory");
    for (; qu->n_order < qu->n; qu->n_order++)
        qu->order[qu->n_order] = (uint32_t)qu->n_order;
    eco_freemap_reset(qu->fm);
    eco_decisions_reset(&qu->dec, qu->jobs, NULL);
    qu->d = d;
    qu->mono = mono;
    qu->n_memo = 0;
    qu->n_never = 0;
    struct eco_sched_view v = {.now_s = now,
                               .cluster = qu->model,
                               .jobs = qu->jobs,
                               .queue = qu->order,
                               .queue_len = qu->n};
    int rc = qu->ops->decide(qu->policy, &v, &qu->dec);
    if (rc < 0)
        return eco_errorf(err, rc, "queue policy %s: %s", qu->ops->name, strerror(-rc));
    size_t n_out = qu->dec.n_starts + qu->n_never;
    if (n_out == 0)
        return 0;
    struct ecod_start *s = malloc(n_out * sizeof *s);
    if (!s)
        return eco_errorf(err, -ENOMEM, "queue: out of memory");
    size_t k = 0;
    for (size_t m = 0; m < qu->dec.n_starts; m++) {
        const struct ecod_qjob *qj = &qu->q[qu->dec.starts[m]];
        s[k] = (struct ecod_start){.id = qj->id, .n_gpus = qj->req.n_gpus};
        memcpy(s[k].gpus, qj->chosen, qj->req.n_gpus * sizeof *qj->chosen);
        k++;
        /* launch() records the job with the selector again once it runs */
        if (qj->req.n_gpus > 0)
            eco_gpusel_release(d->sel, (uint64_t)qj->id);
    }
    /* the started jobs and the ones that can never fit leave the queue, kept in order */
    size_t w = 0;
    for (size_t i = 0; i < qu->n; i++) {
        if (qu->q[i].never)
            s[k++] = (struct ecod_start){
                .id = qu->q[i].id, .never = true, .n_gpus = qu->q[i].req.n_gpus};
        if (qu->q[i].started || qu->q[i].never)
            continue;
        qu->q[w] = qu->q[i];
        qu->jobs[w] = qu->jobs[i];
        w++;
    }
    qu->n = w;
    if (qu->n_order > w)
        qu->n_order = w;
    *starts = s;
    *n_starts = k;
    return 0;
}
