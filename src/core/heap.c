/* SPDX-License-Identifier: MIT */
/* Binary min-heap of events keyed by (time, insertion sequence). */
#include <errno.h>
#include <stdlib.h>
#include "ecosched/heap.h"

static int before(const struct eco_event *a, const struct eco_event *b)
{
    if (a->t_s != b->t_s)
        return a->t_s < b->t_s;
    return a->seq < b->seq;
}

void eco_heap_init(struct eco_heap *h)
{
    h->ev = NULL;
    h->n = h->cap = 0;
    h->next_seq = 0;
}

void eco_heap_fini(struct eco_heap *h)
{
    free(h->ev);
    eco_heap_init(h);
}

int eco_heap_push(struct eco_heap *h, double t_s, uint32_t kind, uint32_t job, uint32_t gen)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        struct eco_event *ev = realloc(h->ev, cap * sizeof *ev);
        if (!ev)
            return -ENOMEM;
        h->ev = ev;
        h->cap = cap;
    }
    struct eco_event e = {.t_s = t_s, .seq = h->next_seq++, .kind = kind, .job = job, .gen = gen};
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &h->ev[parent]))
            break;
        h->ev[i] = h->ev[parent];
        i = parent;
    }
    h->ev[i] = e;
    return 0;
}

const struct eco_event *eco_heap_peek(const struct eco_heap *h)
{
    return h->n ? &h->ev[0] : NULL;
}

/* Moves h->ev[i] down to its place below i (pop, and Floyd's heap construction). */
static void sift_down(struct eco_heap *h, size_t i)
{
    struct eco_event x = h->ev[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct eco_event *cand = &x;
        if (l < h->n && before(&h->ev[l], cand)) {
            m = l;
            cand = &h->ev[l];
        }
        if (r < h->n && before(&h->ev[r], cand))
            m = r;
        if (m == i)
            break;
        h->ev[i] = h->ev[m];
        i = m;
    }
    h->ev[i] = x;
}

int eco_heap_pop(struct eco_heap *h, struct eco_event *out)
{
    if (!h->n)
        return -ENOENT;
    *out = h->ev[0];
    h->ev[0] = h->ev[--h->n];
    if (h->n)
        sift_down(h, 0);
    return 0;
}

size_t eco_heap_prune(struct eco_heap *h, int (*keep)(void *ctx, const struct eco_event *ev),
                      void *ctx)
{
    size_t k = 0;
    for (size_t i = 0; i < h->n; i++)
        if (keep(ctx, &h->ev[i]))
            h->ev[k++] = h->ev[i];
    size_t removed = h->n - k;
    h->n = k;
    for (size_t i = k / 2; i-- > 0;)
        sift_down(h, i);
    return removed;
}
