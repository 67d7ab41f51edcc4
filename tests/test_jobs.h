/* SPDX-License-Identifier: MIT */
/* Shared by the simulator tests: appends a job named "j<index>" with trace line index + 2. */
#ifndef ECOSCHED_TEST_JOBS_H
#define ECOSCHED_TEST_JOBS_H

#include <stdio.h>
#include <string.h>
#include "ecosched/job.h"

/* The new job (borrowed until the next add), or NULL on ENOMEM. */
static inline struct eco_job *eco_test_add_job(struct eco_jobset *set, double submit_s,
                                               double duration_s, uint32_t gpus)
{
    size_t i = set->n;
    struct eco_job *j = eco_jobset_add(set);
    if (!j)
        return NULL;
    char id[32];
    snprintf(id, sizeof id, "j%zu", i);
    j->id_off = eco_jobset_intern(set, id, strlen(id));
    j->submit_s = submit_s;
    j->duration_s = duration_s;
    j->gpus = gpus;
    j->line = (uint32_t)i + 2;
    return j;
}

#endif
