/* SPDX-License-Identifier: MIT */
/* GPU choice on one server: live per-GPU state (utilisation window, hysteresis, claims of
 * just-started jobs) and the strategies exclusive, memory-threshold, live and share-fit
 * (docs/policies/gpu-selection.md). Pure: callers pass the time and the samples. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ecosched/coloc.h"
#include "ecosched/gpusel.h"

struct job_rec {
    uint64_t job;
    uint64_t mem_b;       /* declared memory on this GPU */
    uint64_t base_used_b; /* used memory (last sample + claims in force) when it started */
    double t_start_s;
    uint32_t coloc_ref; /* 1 + co-location workload index; 0: unknown */
    uint8_t share;
    uint8_t settled; /* a sample showed its load: the claim no longer counts */
};

struct gpu_state {
    struct eco_gpu_sample ring[ECO_GPUSEL_RING];
    uint32_t head; /* next slot to write */
    uint32_t n;    /* samples held, <= ECO_GPUSEL_RING */
    double util_avg;
    int busy;
    struct job_rec jobs[ECO_GPUSEL_MAX_JOBS];
    uint32_t n_jobs;
};

struct eco_gpusel {
    const struct eco_gpusel_ops *ops;
    struct eco_gpusel_params p;
    uint32_t n_gpus;
    struct gpu_state g[];
};

/* ---- parameters --------------------------------------------------------------------------- */

void eco_gpusel_params_default(struct eco_gpusel_params *p)
{
    *p = (struct eco_gpusel_params){
        .window_s = ECO_GPUSEL_WINDOW_S,
        .util_hi = ECO_GPUSEL_UTIL_HI,
        .util_lo = ECO_GPUSEL_UTIL_LO,
        .mem_hi = ECO_GPUSEL_MEM_HI,
        .mem_lo = ECO_GPUSEL_MEM_LO,
        .share_util_max = ECO_GPUSEL_SHARE_UTIL,
        .share_margin_b = ECO_GPUSEL_SHARE_MARGIN_B,
        .grace_s = ECO_GPUSEL_GRACE_S,
        .memthr_free = ECO_GPUSEL_MEMTHR_FREE,
        .memthr_wait_s = ECO_GPUSEL_MEMTHR_WAIT_S,
        .share_min_gain = ECO_GPUSEL_SHARE_MIN_GAIN,
        .hold_exclusive = 1,
    };
}

static int unit(double x)
{
    return isfinite(x) && x >= 0.0 && x <= 1.0;
}

int eco_gpusel_params_check(const struct eco_gpusel_params *p, struct eco_error *err)
{
    if (!p)
        return eco_errorf(err, -EINVAL, "gpusel: no parameters");
    if (!isfinite(p->window_s) || p->window_s < 0.0)
        return eco_errorf(err, -EINVAL, "gpusel: window_s %g: must be finite and >= 0",
                          p->window_s);
    if (!unit(p->util_hi) || !unit(p->util_lo) || p->util_lo > p->util_hi)
        return eco_errorf(err, -EINVAL, "gpusel: util_lo %g / util_hi %g: need 0 <= lo <= hi <= 1",
                          p->util_lo, p->util_hi);
    if (!unit(p->mem_hi) || !unit(p->mem_lo) || p->mem_lo > p->mem_hi)
        return eco_errorf(err, -EINVAL, "gpusel: mem_lo %g / mem_hi %g: need 0 <= lo <= hi <= 1",
                          p->mem_lo, p->mem_hi);
    if (!unit(p->share_util_max))
        return eco_errorf(err, -EINVAL, "gpusel: share_util_max %g: must be in 0..1",
                          p->share_util_max);
    if (!isfinite(p->grace_s) || p->grace_s < 0.0)
        return eco_errorf(err, -EINVAL, "gpusel: grace_s %g: must be finite and >= 0", p->grace_s);
    if (!unit(p->memthr_free))
        return eco_errorf(err, -EINVAL, "gpusel: memthr_free %g: must be in 0..1", p->memthr_free);
    if (!isfinite(p->memthr_wait_s) || p->memthr_wait_s < 0.0)
        return eco_errorf(err, -EINVAL, "gpusel: memthr_wait_s %g: must be finite and >= 0",
                          p->memthr_wait_s);
    if (!isfinite(p->share_min_gain) || p->share_min_gain < 0.0)
        return eco_errorf(err, -EINVAL, "gpusel: share_min_gain %g: must be finite and >= 0",
                          p->share_min_gain);
    if (p->share_max_jobs > ECO_GPUSEL_MAX_JOBS)
        return eco_errorf(err, -EINVAL, "gpusel: share_max_jobs %u: must be in 0..%d",
                          p->share_max_jobs, ECO_GPUSEL_MAX_JOBS);
    if (!isfinite(p->share_settle_s) || p->share_settle_s < 0.0)
        return eco_errorf(err, -EINVAL, "gpusel: share_settle_s %g: must be finite and >= 0",
                          p->share_settle_s);
    return 0;
}

/* ---- life cycle --------------------------------------------------------------------------- */

struct eco_gpusel *eco_gpusel_create(uint32_t n_gpus, const struct eco_gpusel_ops *ops,
                                     const struct eco_gpusel_params *p)
{
    struct eco_gpusel_params def;
    struct eco_gpusel *s = NULL;

    eco_gpusel_params_default(&def);
    if (!p)
        p = &def;
    if (n_gpus == 0 || n_gpus > ECO_GPUSEL_MAX_GPUS || eco_gpusel_params_check(p, NULL)) {
        errno = EINVAL;
        return NULL;
    }
    s = calloc(1, sizeof *s + (size_t)n_gpus * sizeof s->g[0]);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    s->ops = ops ? ops : eco_gpusel_find("live");
    s->p = *p;
    s->n_gpus = n_gpus;
    return s;
}

void eco_gpusel_destroy(struct eco_gpusel *s)
{
    free(s);
}

uint32_t eco_gpusel_n_gpus(const struct eco_gpusel *s)
{
    return s->n_gpus;
}

const struct eco_gpusel_ops *eco_gpusel_strategy(const struct eco_gpusel *s)
{
    return s->ops;
}

const struct eco_gpusel_params *eco_gpusel_params(const struct eco_gpusel *s)
{
    return &s->p;
}

/* ---- samples ------------------------------------------------------------------------------ */

static const struct eco_gpu_sample *last_sample(const struct gpu_state *g)
{
    return g->n ? &g->ring[(g->head + ECO_GPUSEL_RING - 1) % ECO_GPUSEL_RING] : NULL;
}

/* Plain mean of the held samples taken in (t_last - window, t_last]. NVML reports each
 * reading over its own fixed period, so samples carry equal weight. */
static double window_mean(const struct gpu_state *g, double window_s)
{
    double t_last = last_sample(g)->t_s, sum = 0.0;
    uint32_t k = 0;

    for (uint32_t i = 0; i < g->n; i++) {
        const struct eco_gpu_sample *x =
            &g->ring[(g->head + ECO_GPUSEL_RING - 1 - i) % ECO_GPUSEL_RING];
        if (i > 0 && x->t_s <= t_last - window_s)
            break; /* newest first: the rest are older still */
        sum += x->util;
        k++;
    }
    return sum / k;
}

static double used_frac(const struct eco_gpu_sample *x)
{
    return (double)x->mem_used_b / (double)x->mem_total_b;
}

/* Hysteresis: busy above hi, free again only below lo (memory: at or below mem_lo). A GPU's
 * first sample is judged by the "free again" test, so a GPU found between the thresholds
 * starts busy: the safe side. */
static int next_busy(const struct eco_gpusel_params *p, int was_busy, int first, double util,
                     double mem)
{
    if (!first && !was_busy)
        return util > p->util_hi || mem > p->mem_hi;
    return !(util < p->util_lo && mem <= p->mem_lo);
}

static int claim_in_force(const struct job_rec *r, double now_s, double grace_s)
{
    return !r->settled && now_s < r->t_start_s + grace_s;
}

/* A claim is settled by a later sample that shows the job's declared memory on top of what
 * the GPU held when it started and, for a job that does not share, a busy GPU. A sharing job
 * that declared no memory cannot be told apart from its neighbours: only grace ends it. */
static void settle(struct gpu_state *g, const struct eco_gpu_sample *x)
{
    for (uint32_t j = 0; j < g->n_jobs; j++) {
        struct job_rec *r = &g->jobs[j];
        if (r->settled || x->t_s <= r->t_start_s)
            continue;
        if (r->share && r->mem_b == 0)
            continue;
        if (x->mem_used_b >= r->base_used_b + r->mem_b && (r->share || g->busy))
            r->settled = 1;
    }
}

int eco_gpusel_sample(struct eco_gpusel *s, uint32_t gpu, const struct eco_gpu_sample *smp)
{
    if (!s || gpu >= s->n_gpus)
        return -ENODEV;
    if (!smp || !isfinite(smp->t_s) || !unit(smp->util) || smp->mem_total_b == 0 ||
        smp->mem_used_b > smp->mem_total_b)
        return -EINVAL;

    struct gpu_state *g = &s->g[gpu];
    const struct eco_gpu_sample *prev = last_sample(g);
    int first = prev == NULL;
    if (prev && smp->t_s < prev->t_s)
        return -EINVAL;

    g->ring[g->head] = *smp;
    g->head = (g->head + 1) % ECO_GPUSEL_RING;
    if (g->n < ECO_GPUSEL_RING)
        g->n++;
    g->util_avg = window_mean(g, s->p.window_s);
    g->busy = next_busy(&s->p, g->busy, first, g->util_avg, used_frac(smp));
    settle(g, smp);
    return 0;
}

/* ---- status ------------------------------------------------------------------------------- */

/* Fills out for one GPU at now_s; never fails. */
static void view(const struct eco_gpusel *s, const struct gpu_state *g, double now_s,
                 struct eco_gpusel_gpu *out)
{
    const struct eco_gpu_sample *x = last_sample(g);
    *out = (struct eco_gpusel_gpu){
        .has_sample = x != NULL,
        .busy = g->busy,
        .util_avg = g->util_avg,
        .n_jobs = g->n_jobs,
    };
    if (x)
        out->last = *x;
    for (uint32_t j = 0; j < g->n_jobs; j++) {
        const struct job_rec *r = &g->jobs[j];
        if (!r->share)
            out->exclusive_held = 1;
        if (!claim_in_force(r, now_s, s->p.grace_s))
            continue;
        out->n_claims++;
        out->reserved_b += r->mem_b;
        if (!r->share)
            out->whole_claimed = 1;
    }
}

int eco_gpusel_gpu_status(const struct eco_gpusel *s, uint32_t gpu, double now_s,
                          struct eco_gpusel_gpu *out)
{
    if (!s || !out || gpu >= s->n_gpus)
        return -ENODEV;
    view(s, &s->g[gpu], now_s, out);
    return 0;
}

/* ---- choice ------------------------------------------------------------------------------- */

/* Checks shared by every strategy: -EINVAL for a malformed request, -EOVERFLOW when fewer
 * than n GPUs could ever hold the declared memory (a GPU not yet sampled might), else 0. */
static int check_request(const struct eco_gpusel *s, const struct eco_gpu_request *req,
                         const uint32_t *out_gpus)
{
    if (!s || !req || !out_gpus || req->n_gpus == 0 || req->n_gpus > s->n_gpus)
        return -EINVAL;

    uint32_t could = 0;
    for (uint32_t i = 0; i < s->n_gpus; i++) {
        const struct eco_gpu_sample *x = last_sample(&s->g[i]);
        if (!x || x->mem_total_b >= req->mem_b)
            could++;
    }
    return could < req->n_gpus ? -EOVERFLOW : 0;
}

struct cand {
    uint32_t gpu;
    uint32_t claims;
    double gain; /* summed speed factors: 2 alone (or workloads unknown), else the pair's */
    double util;
};

/* Lower is better: fewer claims in force, higher gain, lower averaged utilisation, lower
 * index. */
static int cand_before(const struct cand *a, const struct cand *b)
{
    if (a->claims != b->claims)
        return a->claims < b->claims;
    if (a->gain != b->gain)
        return a->gain > b->gain;
    if (a->util != b->util)
        return a->util < b->util;
    return a->gpu < b->gpu;
}

/* Writes the first n candidates in preference order (stable insertion sort: n <= 64) as GPU
 * indices in increasing order. */
static void emit(struct cand *c, uint32_t nc, uint32_t n, uint32_t *out)
{
    for (uint32_t i = 1; i < nc; i++)
        for (uint32_t j = i; j > 0 && cand_before(&c[j], &c[j - 1]); j--) {
            struct cand t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i, v = c[i].gpu;
        for (; j > 0 && out[j - 1] > v; j--)
            out[j] = out[j - 1];
        out[j] = v;
    }
}

/* exclusive: the lowest-index GPUs with no recorded job; no sensor is read. */
static int choose_exclusive(const struct eco_gpusel *s, double now_s,
                            const struct eco_gpu_request *req, uint32_t *out_gpus)
{
    (void)now_s;
    int rc = check_request(s, req, out_gpus);
    if (rc)
        return rc;

    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n_gpus && k < req->n_gpus; i++)
        if (s->g[i].n_jobs == 0)
            out_gpus[k++] = i;
    return k == req->n_gpus ? 0 : -EAGAIN;
}

/* True while a job recorded on any GPU started less than `wait_s` before now_s. */
static int started_within(const struct eco_gpusel *s, double now_s, double wait_s)
{
    for (uint32_t i = 0; i < s->n_gpus; i++)
        for (uint32_t j = 0; j < s->g[i].n_jobs; j++)
            if (now_s < s->g[i].jobs[j].t_start_s + wait_s)
                return 1;
    return 0;
}

/* memory-threshold (task-spooler): the lowest-index GPUs whose last sample shows at least
 * memthr_free of their memory free, and no start in the last memthr_wait_s (task-spooler's
 * gpu_wait, its only guard against double starts); no utilisation, no hysteresis, no
 * claims. */
static int choose_memthr(const struct eco_gpusel *s, double now_s,
                         const struct eco_gpu_request *req, uint32_t *out_gpus)
{
    int rc = check_request(s, req, out_gpus);
    if (rc)
        return rc;
    if (s->p.memthr_wait_s > 0.0 && started_within(s, now_s, s->p.memthr_wait_s))
        return -EAGAIN;

    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n_gpus && k < req->n_gpus; i++) {
        const struct eco_gpu_sample *x = last_sample(&s->g[i]);
        if (x &&
            (double)(x->mem_total_b - x->mem_used_b) >= s->p.memthr_free * (double)x->mem_total_b)
            out_gpus[k++] = i;
    }
    return k == req->n_gpus ? 0 : -EAGAIN;
}

/* Speed factor of workload a next to workload b on one GPU (co-location model): 0 when the
 * pair cannot share, the mean of the two measured figures for two copies of one workload. */
static double pair_factor(uint32_t a, uint32_t b)
{
    struct eco_coloc_pair p;
    if (eco_coloc_pair(a, b, &p) < 0 || !p.feasible)
        return 0.0;
    return a == b ? 0.5 * (p.speed_a + p.speed_b) : p.speed_a;
}

/* Summed speed factors of k jobs of workloads wl[] on one GPU, each slowed by the product of
 * its pair factors with the others (docs/policies/gpu-selection.md). */
static double summed_speed(const uint32_t *wl, uint32_t k)
{
    double sum = 0.0;
    for (uint32_t j = 0; j < k; j++) {
        double f = 1.0;
        for (uint32_t i = 0; i < k; i++)
            if (i != j)
                f *= pair_factor(wl[j], wl[i]);
        sum += f;
    }
    return sum;
}

/* live, when the job and every job recorded on GPU g have a known workload: 1 if adding the
 * job raises the GPU's summed speed factors by more than share_min_gain - 1 (for one job
 * already there: the pair's two factors add up to more than share_min_gain), 0 if not, -1
 * when the rule does not apply (unknown workloads, or no job recorded). *gain gets 1 + that
 * rise (2 when the rule does not apply: the job alone at full speed). */
static int pair_pays_off(const struct eco_gpusel *s, const struct gpu_state *g,
                         const struct eco_gpu_request *req, double *gain)
{
    uint32_t wl[ECO_GPUSEL_MAX_JOBS + 1];
    *gain = 2.0;
    if (!req->coloc_ref || g->n_jobs == 0 || g->n_jobs >= ECO_GPUSEL_MAX_JOBS)
        return -1;
    for (uint32_t j = 0; j < g->n_jobs; j++) {
        if (!g->jobs[j].coloc_ref)
            return -1;
        wl[j] = g->jobs[j].coloc_ref - 1;
    }
    double before = summed_speed(wl, g->n_jobs);
    wl[g->n_jobs] = req->coloc_ref - 1;
    *gain = 1.0 + summed_speed(wl, g->n_jobs + 1) - before;
    return *gain > s->p.share_min_gain;
}

/* live: 1 when GPU g holds a job started less than share_settle_s before now_s, so that its
 * readings (utilisation averaged over the window, hysteresis) may not show that job yet. */
static int unsettled(const struct eco_gpusel *s, const struct gpu_state *g, double now_s)
{
    for (uint32_t j = 0; j < g->n_jobs; j++)
        if (now_s - g->jobs[j].t_start_s < s->p.share_settle_s)
            return 1;
    return 0;
}

/* live: may GPU `i` take the job now? Fills its preference key when it may. */
static int live_eligible(const struct eco_gpusel *s, uint32_t i, double now_s,
                         const struct eco_gpu_request *req, struct cand *c)
{
    struct eco_gpusel_gpu st;
    view(s, &s->g[i], now_s, &st);
    if (!st.has_sample || st.whole_claimed || (s->p.hold_exclusive && st.exclusive_held))
        return 0;
    if (s->p.share_max_jobs && st.n_jobs >= s->p.share_max_jobs)
        return 0;

    uint64_t free_b = st.last.mem_total_b - st.last.mem_used_b;
    uint64_t avail_b = free_b > st.reserved_b ? free_b - st.reserved_b : 0;
    int fits = avail_b >= req->mem_b && avail_b - req->mem_b >= s->p.share_margin_b;
    double gain;
    int pays = pair_pays_off(s, &s->g[i], req, &gain);
    /* the utilisation rule reads a GPU's samples: none beside a job they may not show yet,
     * and none while the queue is shorter than share_min_queue */
    if (pays < 0 && st.n_jobs > 0 &&
        (unsettled(s, &s->g[i], now_s) || req->queued < s->p.share_min_queue))
        return 0;
    int alone = pays < 0 && !st.busy && st.n_claims == 0 && free_b >= req->mem_b;
    int shared = req->share && fits && (pays < 0 ? st.util_avg < s->p.share_util_max : pays > 0);
    if (!alone && !shared)
        return 0;
    *c = (struct cand){.gpu = i, .claims = st.n_claims, .gain = gain, .util = st.util_avg};
    return 1;
}

typedef int (*eligible_fn)(const struct eco_gpusel *s, uint32_t i, double now_s,
                           const struct eco_gpu_request *req, struct cand *c);

/* The request's GPUs among those `eligible` offers, best keys first (live, share-fit). */
static int choose_among(const struct eco_gpusel *s, double now_s, const struct eco_gpu_request *req,
                        uint32_t *out_gpus, eligible_fn eligible)
{
    struct cand c[ECO_GPUSEL_MAX_GPUS];
    int rc = check_request(s, req, out_gpus);
    if (rc)
        return rc;

    uint32_t nc = 0;
    for (uint32_t i = 0; i < s->n_gpus; i++)
        nc += (uint32_t)eligible(s, i, now_s, req, &c[nc]);
    if (nc < req->n_gpus)
        return -EAGAIN;
    emit(c, nc, req->n_gpus, out_gpus);
    return 0;
}

static int choose_live(const struct eco_gpusel *s, double now_s, const struct eco_gpu_request *req,
                       uint32_t *out_gpus)
{
    return choose_among(s, now_s, req, out_gpus, live_eligible);
}

/* share-fit: may GPU `i` take the job now? Its free memory (last sample, less the claims in
 * force) must hold the job's declared memory; a job that does not share also needs a GPU with
 * no recorded job. No utilisation test, no gain gate, no slot cap, no wait. A GPU whose
 * selector table is full (ECO_GPUSEL_MAX_JOBS) or held by a job that does not share is not
 * offered. The key: fewest recorded jobs first, then lower index (cand_before's other keys
 * are left equal). */
static int sharefit_eligible(const struct eco_gpusel *s, uint32_t i, double now_s,
                             const struct eco_gpu_request *req, struct cand *c)
{
    struct eco_gpusel_gpu st;
    view(s, &s->g[i], now_s, &st);
    if (!st.has_sample || st.exclusive_held || st.n_jobs >= ECO_GPUSEL_MAX_JOBS)
        return 0;
    if (!req->share && st.n_jobs > 0)
        return 0;
    uint64_t free_b = st.last.mem_total_b - st.last.mem_used_b;
    if (free_b < st.reserved_b || free_b - st.reserved_b < req->mem_b)
        return 0;
    *c = (struct cand){.gpu = i, .claims = st.n_jobs};
    return 1;
}

static int choose_sharefit(const struct eco_gpusel *s, double now_s,
                           const struct eco_gpu_request *req, uint32_t *out_gpus)
{
    return choose_among(s, now_s, req, out_gpus, sharefit_eligible);
}

int eco_gpusel_choose(const struct eco_gpusel *s, double now_s, const struct eco_gpu_request *req,
                      uint32_t *out_gpus)
{
    if (!s)
        return -EINVAL;
    return s->ops->choose(s, now_s, req, out_gpus);
}

/* ---- reservations ------------------------------------------------------------------------- */

static int recorded(const struct gpu_state *g, uint64_t job)
{
    for (uint32_t j = 0; j < g->n_jobs; j++)
        if (g->jobs[j].job == job)
            return 1;
    return 0;
}

static int check_reserve(const struct eco_gpusel *s, double now_s, const uint32_t *gpus, uint32_t n,
                         const struct eco_gpu_request *req)
{
    if (!s || !gpus || !req || n == 0 || n != req->n_gpus || !isfinite(now_s))
        return -EINVAL;
    for (uint32_t i = 0; i < n; i++) {
        if (gpus[i] >= s->n_gpus)
            return -EINVAL;
        for (uint32_t j = 0; j < i; j++)
            if (gpus[j] == gpus[i])
                return -EINVAL;
    }
    for (uint32_t i = 0; i < s->n_gpus; i++)
        if (recorded(&s->g[i], req->job_id))
            return -EEXIST;
    for (uint32_t i = 0; i < n; i++)
        if (s->g[gpus[i]].n_jobs >= ECO_GPUSEL_MAX_JOBS)
            return -ENOSPC;
    return 0;
}

int eco_gpusel_reserve(struct eco_gpusel *s, double now_s, const uint32_t *gpus, uint32_t n,
                       const struct eco_gpu_request *req)
{
    int rc = check_reserve(s, now_s, gpus, n, req);
    if (rc)
        return rc;

    for (uint32_t i = 0; i < n; i++) {
        struct gpu_state *g = &s->g[gpus[i]];
        struct eco_gpusel_gpu st;
        view(s, g, now_s, &st);
        g->jobs[g->n_jobs++] = (struct job_rec){
            .job = req->job_id,
            .mem_b = req->mem_b,
            .base_used_b = st.last.mem_used_b + st.reserved_b,
            .t_start_s = now_s,
            .coloc_ref = req->coloc_ref,
            .share = req->share != 0,
        };
    }
    return 0;
}

int eco_gpusel_release(struct eco_gpusel *s, uint64_t job_id)
{
    int found = 0;
    if (!s)
        return -ENOENT;
    for (uint32_t i = 0; i < s->n_gpus; i++) {
        struct gpu_state *g = &s->g[i];
        for (uint32_t j = 0; j < g->n_jobs; j++) {
            if (g->jobs[j].job != job_id)
                continue;
            memmove(&g->jobs[j], &g->jobs[j + 1], (g->n_jobs - j - 1) * sizeof g->jobs[0]);
            g->n_jobs--;
            found = 1;
            break; /* a job is recorded at most once per GPU */
        }
    }
    return found ? 0 : -ENOENT;
}

/* ---- registry ----------------------------------------------------------------------------- */

static const struct eco_gpusel_ops exclusive_ops = {
    .name = "exclusive",
    .summary = "first GPUs with no job, one job per GPU; ignores live status",
    .choose = choose_exclusive,
};

static const struct eco_gpusel_ops memthr_ops = {
    .name = "memory-threshold",
    .summary = "task-spooler: a GPU is free when at least 90% of its memory is free; one "
               "start per gpu_wait",
    .choose = choose_memthr,
};

static const struct eco_gpusel_ops live_ops = {
    .name = "live",
    .summary = "averaged utilisation and memory with hysteresis, claims of just-started "
               "jobs, sharing when memory fits and the measured pair slowdown pays off",
    .choose = choose_live,
};

static const struct eco_gpusel_ops sharefit_ops = {
    .name = "share-fit",
    .summary = "any GPU whose free memory holds the job, least-loaded first: shares whenever "
               "memory fits, no gain gate, no slot cap, no wait",
    .choose = choose_sharefit,
};

static const struct eco_gpusel_ops *const strategies[] = {&exclusive_ops, &memthr_ops, &live_ops,
                                                          &sharefit_ops, NULL};

const struct eco_gpusel_ops *const *eco_gpusel_all(void)
{
    return strategies;
}

const struct eco_gpusel_ops *eco_gpusel_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; strategies[i]; i++)
        if (!strcasecmp(strategies[i]->name, name))
            return strategies[i];
    return NULL;
}
