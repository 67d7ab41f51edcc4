/* SPDX-License-Identifier: MIT */
/* Head-of-line queue policies: fifo (submission order) and sjf (shortest duration first):
 * jobs start in queue order until the first that does not fit; nothing passes it. And the
 * scanning ones: greedy (submission order) and edf (earliest deadline first), which start
 * every job that fits now, and lsf (least slack first), which scans the same way. */
#include <math.h>
#include <errno.h>
#include <stddef.h>
#include "ecosched/policy.h"

static double key_submit(const struct eco_job *job)
{
    return job->submit_s;
}

static double key_duration(const struct eco_job *job)
{
    return job->duration_s;
}

/* Stateless: a non-NULL token stands for the instance. */
static struct eco_policy *create_stateless(const struct eco_cluster *c, const char *params,
                                           struct eco_error *err)
{
    static char token;
    (void)c;
    if (params && *params) {
        eco_errorf(err, -EINVAL, "this policy takes no parameters (got '%s')", params);
        return NULL;
    }
    return (struct eco_policy *)&token;
}

static void destroy_stateless(struct eco_policy *p)
{
    (void)p;
}

static int decide_head_of_line(struct eco_policy *p, const struct eco_sched_view *v,
                               struct eco_decisions *out)
{
    (void)p;
    for (size_t i = 0; i < v->queue_len; i++) {
        uint32_t j = v->queue[i];
        if (v->jobs[j].state != ECO_JOB_QUEUED)
            continue;
        int rc = eco_decisions_start(out, j);
        if (rc == -EAGAIN)
            return 0;
        if (rc)
            return rc;
    }
    return 0;
}

const struct eco_policy_ops eco_policy_fifo = {
    .name = "fifo",
    .summary = "submission order, head-of-line blocking, no preemption",
    .order_key = key_submit,
    .create = create_stateless,
    .destroy = destroy_stateless,
    .decide = decide_head_of_line,
};

const struct eco_policy_ops eco_policy_sjf = {
    .name = "sjf",
    .summary = "shortest duration first, head-of-line blocking, no preemption",
    .caps = ECO_POLICY_NEEDS_DURATION,
    .order_key = key_duration,
    .create = create_stateless,
    .destroy = destroy_stateless,
    .decide = decide_head_of_line,
};

static int decide_greedy(struct eco_policy *p, const struct eco_sched_view *v,
                         struct eco_decisions *out)
{
    (void)p;
    for (size_t i = 0; i < v->queue_len; i++) {
        if (eco_freemap_total_free(out->fm, -1) == 0)
            break;
        uint32_t j = v->queue[i];
        if (v->jobs[j].state != ECO_JOB_QUEUED)
            continue;
        int rc = eco_decisions_start(out, j);
        if (rc && rc != -EAGAIN)
            return rc;
    }
    return 0;
}

const struct eco_policy_ops eco_policy_greedy = {
    .name = "greedy",
    .summary = "scan the queue in submission order and start every job that fits now",
    .order_key = key_submit,
    .create = create_stateless,
    .destroy = destroy_stateless,
    .decide = decide_greedy,
};

/* Earliest deadline first; jobs without a deadline after all that have one. */
static double key_deadline(const struct eco_job *job)
{
    return job->deadline_s >= 0 ? job->deadline_s : HUGE_VAL;
}

const struct eco_policy_ops eco_policy_edf = {
    .name = "edf",
    .summary = "earliest deadline first (then submission order), start every job that fits now",
    .caps = ECO_POLICY_NEEDS_DEADLINE,
    .order_key = key_deadline,
    .create = create_stateless,
    .destroy = destroy_stateless,
    .decide = decide_greedy,
};

/* Least slack first: by latest start time (deadline - duration at full speed), the urgency
 * order that power-capped runs want (docs/policies/powercap.md, "Queue order"); jobs without
 * a deadline after all that have one, in submission order (the stable queue sort keeps it). */
static double key_slack(const struct eco_job *job)
{
    return job->deadline_s >= 0 ? job->deadline_s - job->duration_s : HUGE_VAL;
}

const struct eco_policy_ops eco_policy_lsf = {
    .name = "lsf",
    .summary = "least slack first (deadline - duration, then submission order), start every job "
               "that fits now",
    .caps = ECO_POLICY_NEEDS_DURATION | ECO_POLICY_NEEDS_DEADLINE,
    .order_key = key_slack,
    .create = create_stateless,
    .destroy = destroy_stateless,
    .decide = decide_greedy,
};
