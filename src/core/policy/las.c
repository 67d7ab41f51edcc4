/* SPDX-License-Identifier: MIT */
/* Two-dimensional least-attained-service (Tiresias-style, discretized): attained service is
 * GPUs x time run; jobs sit in priority queues by attained service thresholds, FIFO inside a
 * queue; at each pass the highest-priority jobs that fit by GPU count run, others are
 * preempted and resume later where they stopped. docs/policies/las.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/policy.h"

#define LAS_MAX_QUEUES 16

/* Default thresholds, GPU-seconds: one GPU-hour and ten GPU-hours. The bundled ITP traces'
 * shortest jobs run 600 s, so a one-GPU job of median length (~10,500 s) is demoted once and a
 * multi-GPU job of the same length twice. Configurable with --policy las:T1,T2,... (or
 * --las-thresholds T1,T2,...). */
static const double default_thresholds[] = {3600.0, 36000.0};

struct cand {
    uint32_t job;
    uint32_t level;
    double submit_s;
    uint8_t run; /* chosen to keep running in this pass */
};

struct las {
    double thr[LAS_MAX_QUEUES];
    size_t n_thr;
    struct cand *c;
    size_t cap;
    uint32_t *start; /* queued jobs chosen in this pass */
    size_t cap_start;
    uint64_t *type_gpus; /* cluster GPUs per catalog type */
    uint64_t *type_left;
};

static double key_submit(const struct eco_job *job)
{
    return job->submit_s;
}

static void las_destroy(struct eco_policy *p)
{
    struct las *l = (struct las *)p;
    if (!l)
        return;
    free(l->c);
    free(l->start);
    free(l->type_gpus);
    free(l->type_left);
    free(l);
}

static int parse_thresholds(struct las *l, const char *params, struct eco_error *err)
{
    const char *p = params;
    if (!strncmp(p, "thresholds=", 11))
        p += 11;
    l->n_thr = 0;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v > 0) || v > 1e15 || (*end && *end != ','))
            return eco_errorf(err, -EINVAL,
                              "las thresholds: '%s' is not a comma-separated list of "
                              "positive GPU-seconds",
                              params);
        if (l->n_thr && v <= l->thr[l->n_thr - 1])
            return eco_errorf(err, -EINVAL, "las thresholds: '%s' must increase", params);
        if (l->n_thr == LAS_MAX_QUEUES)
            return eco_errorf(err, -EINVAL, "las thresholds: at most %d", LAS_MAX_QUEUES);
        l->thr[l->n_thr++] = v;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p)
            return eco_errorf(err, -EINVAL, "las thresholds: '%s' ends with a comma", params);
    }
    if (!l->n_thr)
        return eco_errorf(err, -EINVAL, "las thresholds: empty list");
    return 0;
}

static struct eco_policy *las_create(const struct eco_cluster *c, const char *params,
                                     struct eco_error *err)
{
    struct las *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    size_t nt = eco_catalog_count();
    l->type_gpus = calloc(nt, sizeof *l->type_gpus);
    l->type_left = calloc(nt, sizeof *l->type_left);
    if (!l->type_gpus || !l->type_left)
        goto fail;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        l->type_gpus[c->nodes[i].type] += c->nodes[i].gpus;
    if (params && *params) {
        if (parse_thresholds(l, params, err))
            goto fail;
    } else {
        l->n_thr = sizeof default_thresholds / sizeof default_thresholds[0];
        memcpy(l->thr, default_thresholds, sizeof default_thresholds);
    }
    return (struct eco_policy *)l;
fail:
    las_destroy((struct eco_policy *)l);
    return NULL;
}

static double attained(const struct eco_job *j, double now_s)
{
    double a = j->attained_gpu_s;
    if (j->state == ECO_JOB_RUNNING)
        a += (double)j->gpus * (now_s - j->last_start_s);
    return a;
}

static uint32_t level_of(const struct las *l, double a)
{
    uint32_t k = 0;
    /* A relative tolerance so that a wakeup computed for a crossing lands on the new level
     * despite rounding. */
    while (k < l->n_thr && a >= l->thr[k] * (1.0 - 1e-12))
        k++;
    return k;
}

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->level != y->level)
        return x->level < y->level ? -1 : 1;
    if (x->submit_s != y->submit_s)
        return x->submit_s < y->submit_s ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

/* Running jobs with their levels, sorted by (level, submit, index). */
static int gather_running(struct las *l, const struct eco_sched_view *v)
{
    if (v->n_running > l->cap) {
        struct cand *c = realloc(l->c, v->n_running * sizeof *c);
        if (!c)
            return -ENOMEM;
        l->c = c;
        l->cap = v->n_running;
    }
    for (size_t i = 0; i < v->n_running; i++) {
        const struct eco_job *j = &v->jobs[v->running[i]];
        l->c[i] = (struct cand){v->running[i], level_of(l, attained(j, v->now_s)), j->submit_s, 0};
    }
    if (v->n_running > 1)
        qsort(l->c, v->n_running, sizeof *l->c, cmp_cand);
    return 0;
}

/* Counts job j against the GPUs left if it fits; returns 1 when it does. */
static int take(struct las *l, const struct eco_job *j, uint64_t *left)
{
    if (j->gpus > *left || (j->gpu_type >= 0 && j->gpus > l->type_left[j->gpu_type]))
        return 0;
    *left -= j->gpus;
    if (j->gpu_type >= 0)
        l->type_left[j->gpu_type] -= j->gpus;
    return 1;
}

/* Walks jobs in (level, submit) order -- running jobs from the sorted list, queued jobs from
 * the queue (already in submit order), merged level by level -- and marks those that fit by
 * GPU count. Queued jobs chosen are started in that order; running jobs not chosen are
 * preempted. Stops early once no GPU is left. */
static int las_decide(struct eco_policy *p, const struct eco_sched_view *v,
                      struct eco_decisions *out)
{
    struct las *l = (struct las *)p;
    int rc, waiting = 0;
    for (size_t i = 0; i < v->queue_len && !waiting; i++)
        waiting = v->jobs[v->queue[i]].state == ECO_JOB_QUEUED;
    if (!waiting)
        return 0;
    if ((rc = gather_running(l, v)))
        return rc;
    uint64_t left = v->cluster->total_gpus;
    memcpy(l->type_left, l->type_gpus, eco_catalog_count() * sizeof *l->type_left);
    size_t ri = 0, n_start = 0;
    for (uint32_t k = 0; k <= l->n_thr && left > 0; k++) {
        size_t qi = 0;
        for (;;) {
            while (qi < v->queue_len && (v->jobs[v->queue[qi]].state != ECO_JOB_QUEUED ||
                                         level_of(l, v->jobs[v->queue[qi]].attained_gpu_s) != k))
                qi++;
            int have_r = ri < v->n_running && l->c[ri].level == k;
            int have_q = qi < v->queue_len;
            if (!have_r && !have_q)
                break;
            const struct eco_job *qj = have_q ? &v->jobs[v->queue[qi]] : NULL;
            if (have_r && (!have_q || l->c[ri].submit_s < qj->submit_s ||
                           (l->c[ri].submit_s == qj->submit_s && l->c[ri].job < v->queue[qi]))) {
                l->c[ri].run = (uint8_t)take(l, &v->jobs[l->c[ri].job], &left);
                ri++;
            } else {
                if (take(l, qj, &left)) {
                    if (n_start == l->cap_start) {
                        size_t cap = l->cap_start ? l->cap_start * 2 : 64;
                        uint32_t *s = realloc(l->start, cap * sizeof *s);
                        if (!s)
                            return -ENOMEM;
                        l->start = s;
                        l->cap_start = cap;
                    }
                    l->start[n_start++] = v->queue[qi];
                }
                qi++;
            }
            if (left == 0)
                break;
        }
    }
    for (size_t i = 0; i < v->n_running; i++)
        if (!l->c[i].run && (rc = eco_decisions_preempt(out, l->c[i].job)))
            return rc;
    for (size_t i = 0; i < n_start; i++) {
        rc = eco_decisions_start(out, l->start[i]);
        if (rc && rc != -EAGAIN)
            return rc;
    }
    return 0;
}

/* Next time a running job crosses a threshold while others wait. */
static double las_next_wakeup(struct eco_policy *p, const struct eco_sched_view *v)
{
    struct las *l = (struct las *)p;
    int waiting = 0;
    for (size_t i = 0; i < v->queue_len && !waiting; i++)
        waiting = v->jobs[v->queue[i]].state == ECO_JOB_QUEUED;
    if (!waiting)
        return -1;
    double best = -1;
    for (size_t i = 0; i < v->n_running; i++) {
        const struct eco_job *j = &v->jobs[v->running[i]];
        double a = attained(j, v->now_s);
        uint32_t k = level_of(l, a);
        if (k >= l->n_thr || j->gpus == 0)
            continue;
        double t = v->now_s + (l->thr[k] - a) / (double)j->gpus;
        double end = j->last_start_s + j->remaining_s / (j->speed > 0 ? j->speed : 1);
        if (t < end && t > v->now_s && (best < 0 || t < best))
            best = t;
    }
    return best;
}

const struct eco_policy_ops eco_policy_las = {
    .name = "las",
    .summary = "Tiresias-style 2D least-attained-service with preemption",
    .params_help = "THRESHOLD,...: queue thresholds in attained GPU-seconds (default "
                   "3600,36000)",
    .caps = ECO_POLICY_PREEMPTS,
    .order_key = key_submit,
    .create = las_create,
    .destroy = las_destroy,
    .decide = las_decide,
    .next_wakeup = las_next_wakeup,
};
