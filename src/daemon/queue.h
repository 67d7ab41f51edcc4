/* SPDX-License-Identifier: MIT */
/* queue.c: ecoschedd's in-memory queue in the order of a core queue policy. */
#ifndef ECOD_QUEUE_H
#define ECOD_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ecosched/error.h"
#include "ecosched/gpusel.h"
#include "ecosched/policy.h"
#include "daemon/store.h"
#include "config.h"
#include "ecod.h"

/* A queued job as the queue keeps it (queue.c). */
struct ecod_qjob {
    int64_t id;
    struct eco_gpu_request req;
    uint32_t chosen[ECO_GPUSEL_MAX_GPUS]; /* during a pass: the GPUs chosen for it */
    bool started;                         /* during a pass: the policy started it */
    bool never;                           /* during a pass: it can never fit this server */
};

/* What a queue pass decided for one job: start it on `gpus`, or (never) refuse it. */
struct ecod_start {
    int64_t id;
    bool never;
    uint32_t n_gpus;
    uint32_t gpus[ECO_GPUSEL_MAX_GPUS];
};

/* The daemon's queue policies: fifo, greedy, edf (NULL for other names). */
const struct eco_policy_ops *ecod__queue_policy_find(const char *name);
/* Their names as a sentence, from the registry's capability flags ("fifo, greedy or edf"
 * today), written into buf (size > 0 bytes, truncated to fit; ECOD_NAMES_MAX is room enough);
 * returns buf. */
const char *ecod__queue_policy_names(char *buf, size_t size);
int ecod__queue_create(struct ecod *d, const char *policy, struct eco_error *err);
void ecod__queue_destroy(struct ecod *d);
const char *ecod__queue_policy_name(const struct ecod *d);
size_t ecod__queue_len(const struct ecod *d);
/* Adds a queued job (borrowed fields copied). 0 or -ENOMEM. */
int ecod__queue_add(struct ecod *d, const struct eco_store_job *j);
void ecod__queue_remove(struct ecod *d, int64_t id);
/* Runs the queue policy: *starts (caller frees) lists the jobs to start now with their GPUs
 * (already released from the selector: launch records them) and the ones that can never fit;
 * all of them have left the queue. now, mono: the pass's wall and monotonic clocks (s).
 * 0 or < 0 and err. */
int ecod__queue_pass(struct ecod *d, double now, double mono, struct ecod_start **starts,
                     size_t *n_starts, struct eco_error *err);

#endif
