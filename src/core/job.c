/* SPDX-License-Identifier: MIT */
/* Job sets: a growable array of jobs and a string arena for their names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/job.h"

struct eco_jobset *eco_jobset_create(void)
{
    struct eco_jobset *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->str_cap = 4096;
    s->strings = malloc(s->str_cap);
    if (!s->strings) {
        free(s);
        return NULL;
    }
    s->strings[0] = '\0';
    s->str_len = 1;
    return s;
}

void eco_jobset_destroy(struct eco_jobset *s)
{
    if (!s)
        return;
    free(s->jobs);
    free(s->strings);
    free(s);
}

struct eco_job *eco_jobset_add(struct eco_jobset *s)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct eco_job *j = realloc(s->jobs, cap * sizeof *j);
        if (!j)
            return NULL;
        s->jobs = j;
        s->cap = cap;
    }
    struct eco_job *job = &s->jobs[s->n++];
    memset(job, 0, sizeof *job);
    job->deadline_s = ECO_NO_DEADLINE;
    job->gpu_milli = 1000;
    job->gpu_type = -1;
    job->start_s = -1;
    job->end_s = -1;
    return job;
}

uint32_t eco_jobset_intern(struct eco_jobset *s, const char *str, size_t len)
{
    if (len == 0)
        return 0;
    if (s->str_len + len + 1 > UINT32_MAX)
        return 0;
    if (s->str_len + len + 1 > s->str_cap) {
        size_t cap = s->str_cap * 2;
        while (cap < s->str_len + len + 1)
            cap *= 2;
        char *p = realloc(s->strings, cap);
        if (!p)
            return 0;
        s->strings = p;
        s->str_cap = cap;
    }
    uint32_t off = (uint32_t)s->str_len;
    memcpy(s->strings + off, str, len);
    s->strings[off + len] = '\0';
    s->str_len += len + 1;
    return off;
}
