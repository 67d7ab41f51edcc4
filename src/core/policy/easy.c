/* SPDX-License-Identifier: MIT */
/* EASY backfilling: jobs start in submission order; the first that does not fit gets a
 * reservation at the earliest time enough GPUs free up (from running jobs' end times), and a
 * later job may start now only if it fits now and either ends by then or uses only GPUs the
 * reservation does not need. Durations are the runtime estimates. docs/policies/easy.md. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/policy.h"

struct ending {
    double end_s;
    uint32_t gpus; /* GPUs it frees that the reserved job could use */
};

struct easy {
    struct ending *ends;
    size_t cap;
    bool limits; /* easy:limits: plan with the users' time limits, as Slurm's backfill does */
};

/* The run time a job is planned with from its (re)start: its limit under easy:limits when the
 * trace gives one (INFINITY for an unlimited job), else the work left at reference speed. */
static double planned_s(const struct easy *e, const struct eco_job *j)
{
    return e->limits && j->limit_s > 0 ? j->limit_s : j->remaining_s;
}

/* When a running job is planned to end: its limit after its first start under easy:limits,
 * else where its work left ends at its speed. */
static double planned_end_s(const struct easy *e, const struct eco_job *j)
{
    if (e->limits && j->limit_s > 0)
        return (j->start_s >= 0 ? j->start_s : j->last_start_s) + j->limit_s;
    return j->last_start_s + j->remaining_s / (j->speed > 0 ? j->speed : 1);
}

static double key_submit(const struct eco_job *job)
{
    return job->submit_s;
}

static struct eco_policy *easy_create(const struct eco_cluster *c, const char *params,
                                      struct eco_error *err)
{
    (void)c;
    bool limits = false;
    if (params && *params) {
        if (strcmp(params, "limits") != 0) {
            eco_errorf(err, -EINVAL, "easy: unknown parameter '%s' (known: limits)", params);
            return NULL;
        }
        limits = true;
    }
    struct easy *e = calloc(1, sizeof *e);
    if (e)
        e->limits = limits;
    return (struct eco_policy *)e;
}

static void easy_destroy(struct eco_policy *p)
{
    struct easy *e = (struct easy *)p;
    if (!e)
        return;
    free(e->ends);
    free(e);
}

/* Sifts a[i] down the min-heap a[0..n) ordered by end time. */
static void ends_down(struct ending *a, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && a[l].end_s < a[m].end_s)
            m = l;
        if (r < n && a[r].end_s < a[m].end_s)
            m = r;
        if (m == i)
            return;
        struct ending t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

/* GPUs of allocation a[0..n) on nodes the reserved job may use. */
static uint32_t usable(const struct eco_cluster *c, int type, const struct eco_alloc *a, size_t n)
{
    uint32_t g = 0;
    for (size_t i = 0; i < n; i++)
        if (type < 0 || c->nodes[a[i].node].type == type)
            g += a[i].gpus;
    return g;
}

static int push_end(struct easy *e, size_t *n, double end_s, uint32_t gpus)
{
    if (gpus == 0)
        return 0;
    if (*n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        struct ending *p = realloc(e->ends, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        e->ends = p;
        e->cap = cap;
    }
    e->ends[(*n)++] = (struct ending){end_s, gpus};
    return 0;
}

/* Reservation for `head`: the shadow time at which enough usable GPUs are free, and the
 * extra GPUs free then beyond what it needs. */
static int reserve(struct easy *e, const struct eco_sched_view *v, const struct eco_decisions *d,
                   const struct eco_job *head, double *shadow_s, uint64_t *extra)
{
    const struct eco_cluster *c = v->cluster;
    size_t n = 0;
    for (size_t i = 0; i < v->n_running; i++) {
        const struct eco_job *j = &v->jobs[v->running[i]];
        uint32_t g = usable(c, head->gpu_type, &v->alloc_pool[j->alloc_off], j->alloc_n);
        if (push_end(e, &n, planned_end_s(e, j), g))
            return -ENOMEM;
    }
    for (size_t i = 0; i < d->n_starts; i++) {
        const struct eco_job *j = &v->jobs[d->starts[i]];
        size_t off = d->start_alloc_off[i];
        size_t cnt = (i + 1 < d->n_starts ? d->start_alloc_off[i + 1] : d->n_start_allocs) - off;
        uint32_t g = usable(c, head->gpu_type, &d->start_allocs[off], cnt);
        if (push_end(e, &n, v->now_s + planned_s(e, j), g))
            return -ENOMEM;
    }
    uint64_t avail = eco_freemap_total_free(d->fm, head->gpu_type);
    *shadow_s = v->now_s;
    /* the ends in order of time, from a heap: usually a few of them free enough, and sorting
     * every running job's end at every decide was a tenth of a busy capped run */
    if (avail < head->gpus)
        for (size_t i = n / 2; i-- > 0;)
            ends_down(e->ends, n, i);
    while (n > 0 && avail < head->gpus) {
        double t = e->ends[0].end_s;
        *shadow_s = t;
        /* Jobs ending at the same instant free their GPUs together. */
        while (n > 0 && e->ends[0].end_s == t) {
            avail += e->ends[0].gpus;
            e->ends[0] = e->ends[--n];
            ends_down(e->ends, n, 0);
        }
    }
    *extra = avail >= head->gpus ? avail - head->gpus : 0;
    return 0;
}

static int easy_decide(struct eco_policy *p, const struct eco_sched_view *v,
                       struct eco_decisions *out)
{
    struct easy *e = (struct easy *)p;
    const struct eco_job *head = NULL;
    double shadow_s = 0;
    uint64_t extra = 0;
    for (size_t i = 0; i < v->queue_len; i++) {
        uint32_t j = v->queue[i];
        const struct eco_job *job = &v->jobs[j];
        if (job->state != ECO_JOB_QUEUED)
            continue;
        if (head && eco_freemap_total_free(out->fm, -1) == 0)
            break;
        if (!head) {
            int rc = eco_decisions_start(out, j);
            if (rc == 0)
                continue;
            if (rc != -EAGAIN)
                return rc;
            head = job;
            if ((rc = reserve(e, v, out, head, &shadow_s, &extra)))
                return rc;
            continue;
        }
        bool disjoint =
            head->gpu_type >= 0 && job->gpu_type >= 0 && head->gpu_type != job->gpu_type;
        bool ends_in_time = disjoint || v->now_s + planned_s(e, job) <= shadow_s;
        if (!ends_in_time && job->gpus > extra)
            continue; /* cannot use only spare GPUs, whatever placement gives it */
        size_t first = out->n_start_allocs;
        int rc = eco_decisions_start(out, j);
        if (rc == -EAGAIN)
            continue;
        if (rc)
            return rc;
        if (!ends_in_time) {
            uint32_t g = usable(v->cluster, head->gpu_type, &out->start_allocs[first],
                                out->n_start_allocs - first);
            extra -= g;
        }
    }
    return 0;
}

const struct eco_policy_ops eco_policy_easy = {
    .name = "easy",
    .summary = "EASY backfilling: a reservation for the first blocked job, backfill around it",
    .caps = ECO_POLICY_NEEDS_DURATION,
    .params_help = "limits: plan with the jobs' time limits (sacct's Timelimit) instead of their "
                   "true run times, as Slurm's backfill does",
    .order_key = key_submit,
    .create = easy_create,
    .destroy = easy_destroy,
    .decide = easy_decide,
};
