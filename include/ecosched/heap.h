/* SPDX-License-Identifier: MIT */
/* Event heap ordered by (time, insertion sequence): ties keep insertion order. */
#ifndef ECOSCHED_HEAP_H
#define ECOSCHED_HEAP_H

#include <stdint.h>
#include <stddef.h>

struct eco_event {
    double t_s;
    uint64_t seq;
    uint32_t kind;
    uint32_t job;
    uint32_t gen;
};

struct eco_heap {
    struct eco_event *ev;
    size_t n, cap;
    uint64_t next_seq;
};

void eco_heap_init(struct eco_heap *h);
void eco_heap_fini(struct eco_heap *h);
/* Pushes an event; its seq is assigned here. 0 or -ENOMEM. */
int eco_heap_push(struct eco_heap *h, double t_s, uint32_t kind, uint32_t job, uint32_t gen);
/* Earliest event, or NULL when empty (borrowed until the next push/pop). */
const struct eco_event *eco_heap_peek(const struct eco_heap *h);
/* Removes the earliest event into *out; 0, or -ENOENT when empty. */
int eco_heap_pop(struct eco_heap *h, struct eco_event *out);
/* Removes every event for which keep(ctx, event) is 0, in O(n): the rest pop in the same order
 * as before (the key is time and insertion sequence). Returns the events removed. */
size_t eco_heap_prune(struct eco_heap *h, int (*keep)(void *ctx, const struct eco_event *ev),
                      void *ctx);

#endif
