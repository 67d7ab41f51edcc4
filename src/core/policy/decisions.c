/* SPDX-License-Identifier: MIT */
/* The decision list a queue policy writes: starts (placed at once on the tentative free
 * state) and preemptions (their GPUs returned to it). */
#include <errno.h>
#include <stdlib.h>
#include "ecosched/policy.h"

int eco_decisions_init(struct eco_decisions *d, struct eco_freemap *fm,
                       const struct eco_placement_ops *placement)
{
    *d = (struct eco_decisions){.fm = fm, .placement = placement};
    const struct eco_cluster *c = eco_freemap_cluster(fm);
    d->cap_scratch = c->n_nodes ? c->n_nodes : 1;
    d->scratch = malloc(d->cap_scratch * sizeof *d->scratch);
    return d->scratch ? 0 : -ENOMEM;
}

void eco_decisions_fini(struct eco_decisions *d)
{
    if (d->placement && d->placement->plan_free)
        d->placement->plan_free(d->plan_state);
    free(d->starts);
    free(d->start_allocs);
    free(d->start_alloc_off);
    free(d->preempts);
    free(d->scratch);
    *d = (struct eco_decisions){0};
}

void eco_decisions_reset(struct eco_decisions *d, const struct eco_job *jobs,
                         const struct eco_alloc *alloc_pool)
{
    d->jobs = jobs;
    d->alloc_pool = alloc_pool;
    d->n_starts = d->n_start_allocs = d->n_preempts = 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

/* The placement's plan when it made one for this pass, else its one-job rule. */
static int place_job(struct eco_decisions *d, uint32_t job)
{
    if (d->plan_state && d->placement->place_planned)
        return d->placement->place_planned(d->plan_state, d->fm, d->jobs, job, d->scratch,
                                           d->cap_scratch);
    return d->placement->place(d->place_ctx, d->fm, &d->jobs[job], d->scratch, d->cap_scratch);
}

int eco_decisions_fits(struct eco_decisions *d, uint32_t job)
{
    int n = place_job(d, job);
    if (n == -EAGAIN)
        return 0;
    return n < 0 ? n : 1;
}

int eco_decisions_start(struct eco_decisions *d, uint32_t job)
{
    int n = place_job(d, job);
    if (n < 0)
        return n;
    if (d->admit && !d->admit(d->admit_ctx, job, d->scratch, (size_t)n))
        return -EAGAIN;
    size_t cap_off = d->cap_starts;
    if (grow((void **)&d->starts, &d->cap_starts, d->n_starts + 1, sizeof *d->starts))
        return -ENOMEM;
    if (d->cap_starts != cap_off || !d->start_alloc_off) {
        uint32_t *o = realloc(d->start_alloc_off, d->cap_starts * sizeof *o);
        if (!o)
            return -ENOMEM;
        d->start_alloc_off = o;
    }
    if (grow((void **)&d->start_allocs, &d->cap_start_allocs, d->n_start_allocs + (size_t)n,
             sizeof *d->start_allocs))
        return -ENOMEM;
    d->start_alloc_off[d->n_starts] = (uint32_t)d->n_start_allocs;
    d->starts[d->n_starts++] = job;
    for (int i = 0; i < n; i++) {
        d->start_allocs[d->n_start_allocs++] = d->scratch[i];
        eco_freemap_take(d->fm, d->scratch[i].node, d->scratch[i].gpus);
    }
    return 0;
}

int eco_decisions_preempt(struct eco_decisions *d, uint32_t job)
{
    if (grow((void **)&d->preempts, &d->cap_preempts, d->n_preempts + 1, sizeof *d->preempts))
        return -ENOMEM;
    d->preempts[d->n_preempts++] = job;
    const struct eco_job *j = &d->jobs[job];
    for (uint32_t i = 0; i < j->alloc_n; i++) {
        const struct eco_alloc *a = &d->alloc_pool[j->alloc_off + i];
        eco_freemap_give(d->fm, a->node, a->gpus);
    }
    return 0;
}
