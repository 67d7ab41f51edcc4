/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s allocation step: the running jobs' online models (power and progress per
 * limit) and the capper family's decide over them (include/ecosched/powercap.h). No I/O: the
 * readings are in struct powerd, the decisions go back into it (powerd_nodes.c sends them). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "powerd.h"
#include "util/log.h"

/* Power per GPU: the learned model, never above the limit (a limit caps the draw). */
static void predict(const void *ctx, double limit_w, double *power_w, double *speed)
{
    eco_cap_predict_model(ctx, limit_w, power_w, speed);
    if (*power_w > limit_w)
        *power_w = limit_w;
}

/* Measured progress of job j at its setting cur (hi: its maximum): the mean over its GPUs
 * of util x SM clock, relative to that at its maximum; NaN when a GPU has no reading or the
 * job has not run at its maximum yet (docs/slurm/powerd.md). */
static double progress(struct powerd *pd, struct pjob *j, double cur, double hi)
{
    double rate = 0;
    for (unsigned g = 0; g < j->n; g++) {
        const struct pgpu *pg = &pd->nodes[j->node[g]].gpu[j->gpu[g]];
        if (!isfinite(pg->util) || !isfinite(pg->sm_mhz))
            return NAN;
        rate += pg->util * pg->sm_mhz / j->n;
    }
    if (cur >= hi - 1.0 && rate > 0) /* at its maximum: the reference */
        j->ref_rate = j->ref_rate > 0 ? (1 - REF_ALPHA) * j->ref_rate + REF_ALPHA * rate : rate;
    return j->ref_rate > 0 ? rate / j->ref_rate : NAN;
}

double eco_powerd__reserve_w(const struct powerd *pd, const struct pnode *nd)
{
    if (nd->seen)
        return nd->max_power_w;
    double gpu_max = 0; /* the largest GPU maximum heard: no GPU of a node is above it */
    for (size_t i = 0; i < pd->n_nodes; i++)
        for (unsigned g = 0; pd->nodes[i].seen && g < pd->nodes[i].n_gpus; g++)
            gpu_max = fmax(gpu_max, pd->nodes[i].gpu[g].max_w);
    return nd->gres_gpus * gpu_max;
}

/* Smallest share sent: fallback_w 0 would mean "no lease"; 1 W makes a node's fallback hold
 * its jobs at their minimum limits. */
#define SHARE_MIN_W 1.0

void eco_powerd__shares(struct powerd *pd, double budget)
{
    double avail = budget, sum_a = 0, sum_max = 0;
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        nd->share_w = 0;
        if (!nd->up) {
            avail -= nd->held_w > 0 ? nd->held_w : eco_powerd__reserve_w(pd, nd);
            continue;
        }
        double a = 0;
        for (unsigned g = 0; g < nd->n_gpus; g++)
            a += nd->gpu[g].alloc_w;
        nd->share_w = a; /* the allocation, scaled below */
        sum_a += a;
        sum_max += nd->max_power_w;
    }
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        if (!nd->up)
            continue;
        double s = sum_a > 0     ? avail * nd->share_w / sum_a
                   : sum_max > 0 ? avail * nd->max_power_w / sum_max
                                 : 0;
        if (nd->max_power_w > 0)
            s = fmin(s, nd->max_power_w); /* more than it can draw holds nothing */
        nd->share_w = fmax(SHARE_MIN_W, s);
    }
}

/* Each answering GPU's allocation before the decide: its measured power (a decided job's
 * limit replaces it after). */
static void alloc_start(struct powerd *pd)
{
    for (size_t i = 0; i < pd->n_nodes; i++)
        for (unsigned g = 0; g < pd->nodes[i].n_gpus; g++)
            pd->nodes[i].gpu[g].alloc_w = pd->nodes[i].gpu[g].power_w;
}

int eco_powerd__allocate(struct powerd *pd, double budget, double now, json_t *st)
{
    double cold = 0, measured = 0;
    int rc = 0;
    for (size_t i = 0; i < pd->n_nodes; i++) {
        struct pnode *nd = &pd->nodes[i];
        if (!nd->up)
            cold += eco_powerd__reserve_w(pd, nd);
        else
            measured += nd->power_w;
    }
    alloc_start(pd);
    size_t cap = pd->n_jobs ? pd->n_jobs : 1;
    struct eco_capper_job *vj = calloc(cap, sizeof *vj);
    double *lim = calloc(cap, sizeof *lim);
    size_t *map = calloc(cap, sizeof *map);
    size_t m = 0;
    double managed_power = 0;
    if (!vj || !lim || !map) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < pd->n_jobs; k++)
        pd->jobs[k].decided = false;
    for (size_t k = 0; k < pd->n_jobs; k++) {
        struct pjob *j = &pd->jobs[k];
        double lo = 0, hi = INFINITY, lsum = 0, psum = 0;
        j->managed = j->n > 0;
        for (unsigned g = 0; g < j->n; g++) {
            struct pnode *nd = &pd->nodes[j->node[g]];
            if (!nd->up || j->gpu[g] >= nd->n_gpus) {
                j->managed = false;
                break;
            }
            const struct pgpu *pg = &nd->gpu[j->gpu[g]];
            lo = fmax(lo, pg->min_w);
            hi = fmin(hi, pg->job_cap_w > 0 ? fmax(pg->min_w, pg->job_cap_w) : pg->max_w);
            lsum += pg->limit_w;
            psum += pg->power_w;
        }
        if (!j->managed || !(lo <= hi) || !isfinite(hi))
            continue;
        if (!j->model_init) {
            eco_job_model_init(&j->model, lo, hi, ECO_RLS_LAMBDA_DEFAULT);
            j->model_init = true;
        }
        double cur = lsum / j->n;
        j->speed = progress(pd, j, cur, hi);
        /* without a progress reading the speed follows the models' prior */
        eco_job_model_observe(&j->model, cur, psum / j->n,
                              isfinite(j->speed) ? j->speed : cbrt(cur / hi));
        managed_power += psum;
        double slack = j->deadline_s >= 0 ? fmax(0, j->deadline_s - now) : -1;
        vj[m] = (struct eco_capper_job){
            .cap = {.gpus = j->n,
                    .min_limit_w = lo,
                    .max_limit_w = hi,
                    .remaining_s = j->remaining_s,
                    .weight = 1,
                    .slack_s = slack,
                    .predict = predict,
                    .ctx = &j->model},
            .id = (uint32_t)k,
            .limit_w = fmin(hi, fmax(lo, cur)),
            .measured_w = psum / j->n,
            .measured_speed = j->speed,
            .deadline_s = j->deadline_s,
            .samples = j->model.power.n,
        };
        map[m++] = k;
    }
    double other = measured - managed_power;
    int step = budget < pd->last_budget_w ? -1 : budget > pd->last_budget_w ? 1 : 0;
    pd->last_budget_w = budget;
    struct eco_capper_view v = {.now_s = now,
                                .period_s = pd->period_s,
                                .budget_w = budget,
                                .fixed_w = cold + other,
                                .measured_w = measured + cold,
                                .budget_step = step,
                                .jobs = vj,
                                .n = m};
    rc = m ? eco_capper_decide(pd->capper, &v, &pd->rng, lim) : 0;
    if (rc) {
        ECO_LOG(ECO_LOG_ERR, NULL, "allocation failed: %s", strerror(-rc));
        goto out;
    }
    for (size_t q = 0; q < m; q++) {
        struct pjob *j = &pd->jobs[map[q]];
        j->limit_w = lim[q];
        j->decided = true;
        for (unsigned g = 0; g < j->n; g++)
            pd->nodes[j->node[g]].gpu[j->gpu[g]].alloc_w = lim[q];
    }
    json_object_set_new(st, "capper", json_string(eco_capper_ops_of(pd->capper)->name));
    json_object_set_new(st, "policy", json_string(pd->policy));
    json_object_set_new(st, "measured_w", json_real(measured));
    json_object_set_new(st, "set_aside_w", json_real(cold));
    json_object_set_new(st, "for_jobs_w", json_real(budget - cold - other));
    json_object_set_new(st, "feedback_w", json_real(eco_capper_feedback_w(pd->capper)));
out:
    free(vj);
    free(lim);
    free(map);
    return rc;
}
