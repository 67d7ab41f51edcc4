/* SPDX-License-Identifier: MIT */
/* ecoschedd's node power budget: each tick the running jobs' GPUs get their power limits from
 * the capper family's shared decide (the same as `ecosched sim` and `ecosched powerd`), and the
 * capping metrics are accumulated with the simulator's definitions (docs/daemon/README.md,
 * "Node power budget"). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nodecap.h"
#include "runs.h"
#include "ecod.h"
#include "ecosched/rng.h"

/* Work left for a job whose time limit the daemon does not know (its jobs have none): an hour,
 * a typical training run's remainder; only the ratios between jobs matter to the capper, so
 * equal defaults weigh the jobs alike. */
#define DEFAULT_REMAINING_S 3600.0
/* Dithering seed: fixed, so that a run is reproducible from its log. */
#define RNG_SEED 0x6563c0deULL

/* One job's online model, kept across ticks while the job runs. */
struct njob {
    int64_t id;
    struct eco_job_model model;
    double ref_rate;  /* util x SM clock at the highest limit seen (the progress reference) */
    double ref_limit; /* that limit */
    bool seen;        /* in this tick's view */
};

struct ecod_nodecap {
    double budget_w;
    char policy[128];
    struct eco_capper *capper;
    struct eco_rng rng;
    struct njob *jobs;
    size_t n_jobs, cap_jobs;
    double last_budget_w; /* budget of the last decide (its step sign) */
    double last_mono;     /* the last tick (< 0 before the first) */
    bool settle;          /* the next period follows a budget change or a job's start */
    bool settle_prev;     /* the period in progress does (set at its start) */
    double measured_w, demand_w;
    size_t view_jobs;
    struct eco_cap_metrics met;
};

int ecod__nodecap_check(const char *spec, struct eco_error *err)
{
    struct eco_error cerr = {{0}};
    struct eco_capper *c = eco_capper_create(spec, &cerr);
    if (c) {
        eco_capper_destroy(c);
        return 0;
    }
    return eco_errorf(err, -EINVAL, "%s", cerr.msg[0] ? cerr.msg : "not a capper");
}

int ecod__nodecap_init(struct ecod *d, struct eco_error *err)
{
    struct ecod_nodecap *n = calloc(1, sizeof *n);
    int rc = -ENOMEM;
    if (!n) {
        eco_errorf(err, rc, "node power budget: out of memory");
        goto fail;
    }
    snprintf(n->policy, sizeof n->policy, "%s", d->power_policy);
    if (!(n->capper = eco_capper_create(n->policy, err))) {
        rc = -EINVAL;
        goto fail;
    }
    eco_rng_init(&n->rng, RNG_SEED);
    eco_cap_metrics_init(&n->met);
    n->budget_w = d->power_budget_w;
    n->last_budget_w = n->budget_w;
    n->last_mono = -1;
    n->measured_w = n->demand_w = NAN;
    d->nodecap = n;
    return 0;
fail:
    if (n)
        eco_capper_destroy(n->capper);
    free(n);
    return rc;
}

void ecod__nodecap_fini(struct ecod *d)
{
    if (!d->nodecap)
        return;
    eco_capper_destroy(d->nodecap->capper);
    free(d->nodecap->jobs);
    free(d->nodecap);
    d->nodecap = NULL;
}

/* Gives GPU g back the limit its jobs' own caps ask for, or the default. */
static void restore_gpu(struct ecod *d, uint32_t g)
{
    struct eco_error err = {{0}};
    double w = ecod__caps_gpu(d, g);
    if (ecod__caps_set_limit(d, g, &w, &err) < 0)
        ECO_LOG(ECO_LOG_WARN, "power", "GPU %u: power limit: %s", g, err.msg);
}

static struct njob *njob_of(struct ecod_nodecap *n, int64_t id, double lo, double hi)
{
    for (size_t i = 0; i < n->n_jobs; i++)
        if (n->jobs[i].id == id)
            return &n->jobs[i];
    if (n->n_jobs == n->cap_jobs) {
        size_t c = n->cap_jobs ? 2 * n->cap_jobs : 8;
        struct njob *p = realloc(n->jobs, c * sizeof *p);
        if (!p)
            return NULL;
        n->jobs = p;
        n->cap_jobs = c;
    }
    struct njob *j = &n->jobs[n->n_jobs++];
    memset(j, 0, sizeof *j);
    j->id = id;
    eco_job_model_init(&j->model, lo, hi, ECO_RLS_LAMBDA_DEFAULT);
    n->settle = true; /* a job started: the next period is settling */
    return j;
}

/* Measured progress (reference s per s): the GPUs' utilisation x SM clock over its value at
 * the highest limit seen so far, the proxy powerd uses; NaN until there is a reference. */
static double progress(struct njob *j, double rate, double limit_w)
{
    if (!(rate > 0))
        return NAN;
    if (limit_w >= j->ref_limit || !(j->ref_rate > 0)) {
        j->ref_limit = limit_w;
        j->ref_rate = rate;
    }
    return fmin(1.0, rate / j->ref_rate);
}

struct gpu_read {
    double power_w, limit_w, rate;
    bool ok, taken;
};

/* Builds the view of the running jobs that hold GPUs. A GPU shared by several jobs is counted
 * with the first of them; a job with a GPU already taken (or unreadable) stays out of the view
 * and its GPUs' power counts as fixed. Returns the number of jobs in vj. */
static size_t build_view(struct ecod *d, struct ecod_nodecap *n, struct gpu_read *gr,
                         struct eco_capper_job *vj, size_t *map)
{
    size_t m = 0;
    for (size_t i = 0; i < d->n_runs; i++) {
        const struct ecod_run *r = &d->runs[i];
        if (!r->n_gpus || r->end_unrecorded || d->power_knob_clock)
            continue;
        double lo = 0, hi = INFINITY, psum = 0, lsum = 0, rsum = 0;
        bool ok = true;
        for (uint32_t k = 0; k < r->n_gpus && ok; k++) {
            uint32_t g = r->gpus[k];
            struct eco_power_range pr;
            ok = g < d->n_gpus && gr[g].ok && !gr[g].taken &&
                 eco_platform_power_range(d->platform, g, &pr, NULL) == 0;
            if (!ok)
                break;
            lo = fmax(lo, pr.min_w);
            hi = fmin(hi, pr.max_w);
            psum += gr[g].power_w;
            lsum += gr[g].limit_w;
            rsum += gr[g].rate;
        }
        double ceil_w = r->slurm_job > 0 ? r->slurm_cap_w : r->cap_w;
        if (ceil_w > 0)
            hi = fmin(hi, ceil_w);
        if (!ok || !(hi >= lo))
            continue;
        struct njob *j = njob_of(n, r->id, lo, hi);
        if (!j)
            continue;
        j->seen = true;
        for (uint32_t k = 0; k < r->n_gpus; k++)
            gr[r->gpus[k]].taken = true;
        double cur = fmin(hi, fmax(lo, lsum / r->n_gpus));
        double speed = progress(j, rsum / r->n_gpus, cur);
        /* without a progress reading the speed follows the model's prior */
        eco_job_model_observe(&j->model, cur, psum / r->n_gpus,
                              isfinite(speed) ? speed : cbrt(cur / hi));
        vj[m] = (struct eco_capper_job){
            .cap = {.gpus = r->n_gpus,
                    .min_limit_w = lo,
                    .max_limit_w = hi,
                    .remaining_s = DEFAULT_REMAINING_S,
                    .weight = 1,
                    .slack_s = -1,
                    .predict = eco_cap_predict_model,
                    .ctx = &j->model},
            .id = (uint32_t)i,
            .limit_w = cur,
            .measured_w = psum / r->n_gpus,
            .measured_speed = speed,
            .deadline_s = -1,
            .samples = j->model.power.n,
        };
        map[m++] = i;
    }
    return m;
}

/* Forgets the models of jobs no longer running. */
static void drop_unseen(struct ecod_nodecap *n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n->n_jobs; i++)
        if (n->jobs[i].seen) {
            n->jobs[kept] = n->jobs[i];
            n->jobs[kept++].seen = false;
        }
    n->n_jobs = kept;
}

void ecod__nodecap_tick(struct ecod *d, double mono)
{
    struct ecod_nodecap *n = d->nodecap;
    struct gpu_read gr[ECO_GPUSEL_MAX_GPUS] = {{0}};
    struct eco_capper_job *vj = NULL;
    double *lim = NULL;
    size_t *map = NULL;
    if (!n || n->budget_w <= 0 || !d->n_gpus)
        return;
    double measured = 0;
    for (unsigned g = 0; g < d->n_gpus && g < ECO_GPUSEL_MAX_GPUS; g++) {
        double util = NAN, mhz = NAN;
        gr[g].ok = eco_platform_power(d->platform, g, &gr[g].power_w, NULL) == 0 &&
                   eco_platform_power_limit(d->platform, g, &gr[g].limit_w, NULL) == 0;
        if (!gr[g].ok)
            continue;
        measured += gr[g].power_w;
        if (eco_platform_util(d->platform, g, &util, NULL) == 0 &&
            eco_platform_sm_clock(d->platform, g, &mhz, NULL) == 0)
            gr[g].rate = util * mhz;
    }
    /* The period that ends now, with the previous decide's budget and demand. */
    if (n->last_mono >= 0 && mono > n->last_mono && isfinite(n->demand_w))
        eco_cap_metrics_add(&n->met, mono - n->last_mono, measured, n->budget_w, n->demand_w,
                            n->settle_prev);
    vj = calloc(d->n_runs + 1, sizeof *vj);
    lim = calloc(d->n_runs + 1, sizeof *lim);
    map = calloc(d->n_runs + 1, sizeof *map);
    if (!vj || !lim || !map) {
        ECO_LOG(ECO_LOG_WARN, "power", "out of memory for the node budget's decide");
        goto out;
    }
    size_t m = build_view(d, n, gr, vj, map);
    drop_unseen(n);
    double managed = 0, full = 0;
    for (size_t q = 0; q < m; q++) {
        managed += vj[q].measured_w * vj[q].cap.gpus;
        full += vj[q].cap.max_limit_w * vj[q].cap.gpus;
    }
    int step = n->budget_w < n->last_budget_w ? -1 : n->budget_w > n->last_budget_w ? 1 : 0;
    n->last_budget_w = n->budget_w;
    struct eco_capper_view v = {.now_s = mono,
                                .period_s = n->last_mono >= 0 ? mono - n->last_mono : 1,
                                .budget_w = n->budget_w,
                                .fixed_w = measured - managed,
                                .measured_w = measured,
                                .budget_step = step,
                                .jobs = vj,
                                .n = m};
    int rc = m ? eco_capper_decide(n->capper, &v, &n->rng, lim) : 0;
    if (rc < 0) {
        ECO_LOG(ECO_LOG_WARN, "power", "capper %s: decide failed: %s", n->policy, strerror(-rc));
        goto out;
    }
    for (size_t q = 0; q < m; q++) {
        const struct ecod_run *r = &d->runs[map[q]];
        for (uint32_t k = 0; k < r->n_gpus; k++) {
            uint32_t g = r->gpus[k];
            struct eco_error err = {{0}};
            if (fabs(gr[g].limit_w - lim[q]) >= 0.5 &&
                eco_platform_set_power_limit(d->platform, g, lim[q], &err) < 0)
                ECO_LOG(ECO_LOG_WARN, "power", "job %" PRId64 ": GPU %u: power limit: %s", r->id, g,
                        err.msg);
        }
        ECO_LOG(ECO_LOG_DEBUG, "power", "job %" PRId64 ": limit %.1f W per GPU", r->id, lim[q]);
    }
    n->measured_w = measured;
    n->demand_w = measured - managed + full;
    n->view_jobs = m;
    n->settle_prev = n->settle;
    n->settle = false;
out:
    n->last_mono = mono;
    free(vj);
    free(lim);
    free(map);
}

/* The budget becomes budget_w; going to none, the GPUs get their jobs' caps back (restore)
 * or keep the limits they have (another controller takes them over). */
static void set_budget(struct ecod *d, double budget_w, bool restore)
{
    struct ecod_nodecap *n = d->nodecap;
    if (budget_w != n->budget_w)
        n->settle = n->settle_prev = true;
    if (restore && budget_w <= 0 && n->budget_w > 0)
        for (size_t i = 0; i < d->n_runs; i++)
            for (uint32_t k = 0; k < d->runs[i].n_gpus; k++)
                restore_gpu(d, d->runs[i].gpus[k]);
    if (budget_w <= 0) {
        n->n_jobs = 0;
        n->last_mono = -1;
        n->demand_w = NAN;
    }
    n->budget_w = budget_w;
}

int ecod__nodecap_set(struct ecod *d, double budget_w, const char *policy, struct eco_error *err)
{
    struct ecod_nodecap *n = d->nodecap;
    struct eco_error cerr = {{0}};
    if (!(budget_w >= 0 && budget_w <= 100000))
        return eco_errorf(err, -EINVAL, "budget_w must be 0..100000 W (0: none)");
    if (policy) {
        struct eco_capper *c = eco_capper_create(policy, &cerr);
        if (!c || strlen(policy) >= sizeof n->policy) {
            eco_capper_destroy(c);
            return eco_errorf(err, -EINVAL, "policy: %s", cerr.msg[0] ? cerr.msg : "too long");
        }
        eco_capper_destroy(n->capper);
        n->capper = c;
        snprintf(n->policy, sizeof n->policy, "%s", policy);
    }
    set_budget(d, budget_w, true);
    return 0;
}

void ecod__nodecap_hand_over(struct ecod *d, double budget_w)
{
    if (d->nodecap)
        set_budget(d, budget_w, false);
}

void ecod_nodecap_status(const struct ecod *d, struct ecod_nodecap_status *s)
{
    const struct ecod_nodecap *n = d->nodecap;
    memset(s, 0, sizeof *s);
    s->measured_w = s->demand_w = NAN;
    if (!n)
        return;
    s->budget_w = n->budget_w;
    s->policy = n->policy;
    s->measured_w = n->measured_w;
    s->demand_w = n->demand_w;
    s->feedback_w = eco_capper_feedback_w(n->capper);
    s->jobs = n->view_jobs;
    eco_cap_metrics_report(&n->met, &s->met);
}
