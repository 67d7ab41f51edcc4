/* SPDX-License-Identifier: MIT */
/* Power capping in the simulator: the true power and speed of each running job at its limit
 * (measured curves), noisy measurements every control period, per-job online models, the view
 * handed to the capper family's decide (src/core/powercap/capper.c; its limits are applied one
 * period later, lowered ones at once when a job starts), and the capping metrics.
 * docs/policies/powercap.md. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/clock.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "engine_internal.h"

/* Defaults of the ground truth (docs/policies/powercap.md). */
#define DEFAULT_PERIOD_S 1.0
#define DEFAULT_NOISE_POWER 0.02
#define DEFAULT_NOISE_SPEED 0.01
/* Forgetting factor of the per-job models: a window of about 1 / (1 - 0.98) = 50 samples. */
#define MODEL_LAMBDA 0.98

/* Samples a job's model needs before the loop may count as settled: the family's early
 * dithering span (its parameter early, default 10). A job is held only past them. */
#define SETTLE_SAMPLES 10
/* Ticks a job's setting must stay the same (past its early samples) before it is held: its
 * model has seen that setting that many times more since it was last moved. */
#define HOLD_TICKS 5

/* Distinct GPU types one job can span: the whole catalog (checked in eco_powerctl__init). */
#define TRUTH_TYPES 8

/* A job's true curves: its GPUs grouped by the type of the node each is on. */
struct truth {
    uint16_t workload;
    uint8_t clock; /* the setting is an SM clock (MHz), not a power limit */
    uint8_t n;     /* distinct types */
    uint16_t type[TRUTH_TYPES];
    uint32_t gpus[TRUTH_TYPES];
    uint32_t total;
    double at, at_p, at_speed; /* the last setting measured and the truth there (NaN: none) */
    uint64_t key;              /* which start of which job: the oracle's memo key */
    double full_p;             /* the truth's power per GPU at the range's top (metrics) */
    double lo, hi;             /* the knob's range over its types (range_of, made once) */
    /* the clock knob's floor (cap_range) for the model as it is; NaN: to be made again (each
     * sample moves the model) */
    double floor;
};

struct powerctl {
    struct eco_capper *capper; /* the policy: "family[:PARAMS]" of --power-policy */
    int clock;                 /* --power-knob clock */
    double period_s, noise_p, noise_s;
    struct eco_rng rng;
    struct eco_job_model *models; /* per job */
    struct truth *truth;          /* per job */
    double *pending;              /* per job: limit decided, applied at the next tick */
    double *meas_w, *meas_speed;  /* per job: last period's noisy samples (NaN before one) */
    size_t bi;                    /* budget step in force */
    double budget_w;
    int tick_pending;
    double pass_s;          /* time of the scheduling pass in progress (admission's clock) */
    uint64_t pass_n;        /* passes so far: the admission view's epoch */
    double last_measured_w; /* the last tick's measured total (NaN before one) */
    /* The view of one decide (and of admission). */
    struct eco_capper_job *vj;
    double *lim;
    size_t cap;
    /* Metrics: the open period [open_t, next tick) with the cluster energy at its start, the
     * budget in force, its largest full-power demand and whether it is settling. */
    struct eco_cap_metrics met;
    int open, open_settle;
    double open_t, open_j, open_budget, open_demand;
    uint8_t *waited; /* per job: was deferred by admission */
    /* Per-job holding (docs/policies/powercap.md, "Per-job holding"): per job the ticks its
     * setting has stayed the same (up to HOLD_TICKS), and whether it is held: not measured
     * one by one nor learning until its setting changes. Off with --control-skip off. */
    uint8_t *same, *held;
    int hold;
    uint64_t starts; /* job starts so far: each start's truth its own key */
    /* Per (type, workload): eco_powerctl__min_gpu_w, computed once (on the clock knob it is a
     * bisection, and admission sums it over every running job for each candidate). */
    double *min_gpu_w;
    size_t n_workloads;
};

int eco_powerctl__check(const char *spec, struct eco_error *err)
{
    if (!spec || !strcmp(spec, "none"))
        return 0;
    struct eco_capper *c = eco_capper_create(spec, err);
    if (!c)
        return -EINVAL;
    eco_capper_destroy(c);
    return 0;
}

/* Two independent standard normal draws from one Box-Muller pair. */
static void gauss2(struct eco_rng *r, double *z1, double *z2)
{
    double u1 = eco_rng_uniform(r), u2 = eco_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    double rad = sqrt(-2.0 * log(u1)), a = 2.0 * 3.14159265358979323846 * u2;
    *z1 = rad * cos(a);
    *z2 = rad * sin(a);
}

/* The knob's range on a GPU type: its power-limit range, or its clock range. 0, or
 * eco_clock_range's error (the limit range stays in *lo, *hi). */
int eco_powerctl__knob_range(int clock, int type, double *lo, double *hi)
{
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    *lo = t->min_limit_w;
    *hi = t->max_limit_w;
    return clock ? eco_clock_range(type, lo, hi) : 0;
}

/* The truth at a setting of the knob in use (a power limit, W, or a locked clock, MHz): per
 * GPU the setting clamped into its own type's range, as the engine applies it (nodes.c); the
 * power is the mean over the job's GPUs, the speed the slowest type's (synchronous training
 * runs at the pace of its slowest GPU, as engine.c's set_rate). */
static void truth_predict(const void *ctx, double limit_w, double *power_w, double *speed)
{
    const struct truth *t = ctx;
    double sum = 0, slow = 0;
    for (uint8_t k = 0; k < t->n; k++) {
        double lo, hi, s, p;
        eco_powerctl__knob_range(t->clock, t->type[k], &lo, &hi);
        double x = limit_w < lo ? lo : limit_w > hi ? hi : limit_w;
        int rc = t->clock ? eco_clock_eval(t->type[k], t->workload, x, &s, &p)
                          : eco_power_eval(t->type[k], t->workload, x, &s, &p);
        if (rc) {
            s = 1;
            p = t->clock ? 0 : x;
        }
        sum += p * t->gpus[k];
        if (k == 0 || s < slow)
            slow = s;
    }
    *power_w = t->total ? sum / t->total : 0;
    *speed = t->n ? slow : 1;
}

static void range_of(const struct truth *t, double *lo, double *hi);

/* Job j's GPUs grouped by the type of the node each is on (allocation a[0..n)). */
static struct truth truth_of(const struct engine *e, const struct eco_job *j, int clock,
                             const struct eco_alloc *a, size_t n)
{
    struct truth t = {.workload = j->workload, .clock = (uint8_t)clock, .at = NAN, .floor = NAN};
    for (size_t i = 0; i < n; i++) {
        uint16_t type = (uint16_t)e->c->nodes[a[i].node].type;
        uint8_t k = 0;
        while (k < t.n && t.type[k] != type)
            k++;
        if (k == t.n) /* k < TRUTH_TYPES: the catalog has no more types */
            t.type[t.n++] = type;
        t.gpus[k] += a[i].gpus;
        t.total += a[i].gpus;
    }
    range_of(&t, &t.lo, &t.hi);
    return t;
}

/* The job's knob range: from the lowest of its types' minimums to the highest maximum (each
 * GPU gets the setting clamped into its own type's range). */
static void range_of(const struct truth *t, double *lo, double *hi)
{
    *lo = *hi = 0;
    for (uint8_t k = 0; k < t->n; k++) {
        double l, h;
        eco_powerctl__knob_range(t->clock, t->type[k], &l, &h);
        if (k == 0 || l < *lo)
            *lo = l;
        if (k == 0 || h > *hi)
            *hi = h;
    }
}

/* The range range_of gave at the job's start. */
static void truth_range(const struct truth *t, double *lo, double *hi)
{
    *lo = t->lo;
    *hi = t->hi;
}

/* The mean minimum power limit of the job's GPUs (W per GPU). */
static double truth_min_limit_w(const struct truth *t)
{
    double w = 0;
    for (uint8_t k = 0; k < t->n; k++)
        w += eco_catalog_get(t->type[k])->min_limit_w * t->gpus[k] / t->total;
    return w;
}

/* The job's setting on the knob in use. */
static double setting_of(const struct powerctl *pc, const struct eco_job *j)
{
    return pc->clock ? j->clock_mhz : j->limit_w;
}

void eco_powerctl__apply(struct engine *e, struct eco_job *job, double setting)
{
    if (e->pc) { /* a new setting: measured and learning again */
        size_t j = (size_t)(job - e->jobs);
        e->pc->same[j] = e->pc->held[j] = 0;
    }
    if (e->pc && e->pc->clock)
        job->clock_mhz = setting;
    else
        job->limit_w = setting;
}

double eco_powerctl__budget(const struct engine *e)
{
    return e->pc ? e->pc->budget_w : 0;
}

int eco_powerctl__init(struct engine *e)
{
    const struct eco_sim_config *cfg = e->cfg;
    if (!cfg->power_policy || !strcmp(cfg->power_policy, "none"))
        return 0;
    if (eco_catalog_count() > TRUTH_TYPES)
        return -EINVAL; /* TRUTH_TYPES must cover the catalog */
    struct powerctl *pc = calloc(1, sizeof *pc);
    if (!pc)
        return -ENOMEM;
    e->pc = pc;
    pc->last_measured_w = NAN;
    if (!(pc->capper = eco_capper_create(cfg->power_policy, NULL)))
        return -EINVAL; /* engine.c checked the name and parameters before */
    pc->clock = cfg->power_knob == ECO_POWER_KNOB_CLOCK;
    pc->period_s = cfg->control_period_s > 0 ? cfg->control_period_s : DEFAULT_PERIOD_S;
    pc->noise_p = cfg->noise_set ? cfg->noise_power : DEFAULT_NOISE_POWER;
    pc->noise_s = cfg->noise_set ? cfg->noise_speed : DEFAULT_NOISE_SPEED;
    eco_rng_init(&pc->rng, cfg->seed ^ 0x5eedc0deULL);
    size_t nj = e->n_jobs ? e->n_jobs : 1;
    pc->models = calloc(nj, sizeof *pc->models);
    pc->truth = calloc(nj, sizeof *pc->truth);
    pc->pending = calloc(nj, sizeof *pc->pending);
    pc->waited = calloc(nj, 1);
    pc->same = calloc(nj, 1);
    pc->held = calloc(nj, 1);
    /* a capper that reads each job's samples gets them every period, as in the 1 s loop */
    pc->hold = !cfg->control_skip_off && !eco_capper_reads_job_samples(pc->capper);
    pc->meas_w = malloc(nj * sizeof *pc->meas_w);
    pc->meas_speed = malloc(nj * sizeof *pc->meas_speed);
    pc->n_workloads = eco_workload_count();
    pc->min_gpu_w = calloc(eco_catalog_count() * pc->n_workloads, sizeof *pc->min_gpu_w);
    if (!pc->models || !pc->truth || !pc->pending || !pc->waited || !pc->same || !pc->held ||
        !pc->meas_w || !pc->meas_speed || !pc->min_gpu_w)
        return -ENOMEM;
    for (size_t j = 0; j < nj; j++)
        pc->meas_w[j] = pc->meas_speed[j] = NAN;
    for (size_t t = 0; t < eco_catalog_count(); t++)
        for (size_t w = 0; w < pc->n_workloads; w++)
            pc->min_gpu_w[t * pc->n_workloads + w] =
                eco_powerctl__min_gpu_w((int)t, (uint16_t)w, cfg->power_knob);
    pc->budget_w = cfg->n_budget ? cfg->budget[0].watts : 1e300;
    eco_cap_metrics_init(&pc->met);
    return 0;
}

void eco_powerctl__fini(struct engine *e)
{
    struct powerctl *pc = e->pc;
    if (!pc)
        return;
    free(pc->models);
    free(pc->truth);
    free(pc->pending);
    free(pc->waited);
    free(pc->same);
    free(pc->held);
    free(pc->meas_w);
    free(pc->meas_speed);
    free(pc->vj);
    free(pc->min_gpu_w);
    free(pc->lim);
    eco_capper_destroy(pc->capper);
    free(pc);
    e->pc = NULL;
}

/* Power of everything but the running jobs' GPUs: hosts, idle GPUs, nodes off or changing. */
static double fixed_power(const struct engine *e)
{
    return e->p.idle + e->p.base + e->p.off + e->p.trans;
}

/* The job's minimum draw per GPU (at the knob's lowest setting), for admission. */
double eco_powerctl__min_gpu_w(int type, uint16_t workload, int knob)
{
    double lo, hi, speed, p;
    struct truth t = {.workload = workload,
                      .clock = knob == ECO_POWER_KNOB_CLOCK,
                      .n = 1,
                      .type = {(uint16_t)type},
                      .gpus = {1},
                      .total = 1};
    eco_powerctl__knob_range(t.clock, type, &lo, &hi);
    /* the clock knob's floor: the clock at the minimum limit, as the allocator's (clock.md) */
    if (t.clock &&
        eco_clock_equivalent(type, workload, eco_catalog_get((size_t)type)->min_limit_w, &lo))
        eco_powerctl__knob_range(t.clock, type, &lo, &hi);
    truth_predict(&t, lo, &p, &speed);
    return p;
}

/* The job's minimum draw on allocation a[0..n): each GPU at its own type's minimum. */
static double min_draw(const struct engine *e, const struct eco_job *j, const struct eco_alloc *a,
                       size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++)
        w += e->pc->min_gpu_w[(size_t)e->c->nodes[a[i].node].type * e->pc->n_workloads +
                              j->workload] *
             a[i].gpus;
    return w;
}

static int build_view(struct engine *e, double t, double measured_w, int step,
                      struct eco_capper_view *v);

double eco_powerctl__job_min_w(const struct engine *e, uint32_t job)
{
    const struct eco_job *j = &e->jobs[job];
    return min_draw(e, j, &e->pool[j->alloc_off], j->alloc_n);
}

double eco_powerctl__job_full_w(const struct engine *e, uint32_t job)
{
    return e->pc->truth[job].full_p * e->jobs[job].gpus;
}

int eco_powerctl__integral(const struct engine *e)
{
    return eco_capper_has_integral(e->pc->capper);
}

int eco_powerctl__admit(struct engine *e, uint32_t job, const struct eco_alloc *a, size_t n)
{
    struct powerctl *pc = e->pc;
    if (!pc || !n)
        return 1;
    /* Jobs already started in this pass: summed once each, as the pass goes on. */
    for (size_t k = e->pass_min_k; k < e->dec.n_starts; k++) {
        const struct eco_job *s = &e->jobs[e->dec.starts[k]];
        size_t off = e->dec.start_alloc_off[k];
        size_t end =
            k + 1 < e->dec.n_starts ? e->dec.start_alloc_off[k + 1] : e->dec.n_start_allocs;
        e->pass_min_w += min_draw(e, s, &e->dec.start_allocs[off], end - off);
    }
    e->pass_min_k = e->dec.n_starts;
    /* The running jobs' minimum draws are kept by the engine (committed_min_w). */
    double committed = e->committed_min_w + e->pass_min_w;
    /* Its node's host and idle GPUs are already in fixed_power (the node is on). */
    const struct eco_job *cj = &e->jobs[job];
    struct eco_capper_view v = {.now_s = pc->pass_s,
                                .period_s = pc->period_s,
                                .budget_w = pc->budget_w,
                                .fixed_w = fixed_power(e),
                                .measured_w = NAN,
                                .clock = pc->clock};
    int rc = 0;
    /* The running jobs' view only for an admission that reads it (O(running jobs)), and once
     * per pass: within a pass the running jobs do not change (its starts are applied after
     * it), and the epoch tells the capper so. */
    if (eco_capper_admit_reads_jobs(pc->capper) &&
        !eco_capper_admit_cached(pc->capper, pc->pass_n) &&
        (rc = build_view(e, pc->pass_s, NAN, 0, &v)))
        return rc;
    v.epoch = pc->pass_n;
    struct eco_capper_candidate cand = {
        .cap = {.gpus = cj->gpus,
                .remaining_s = cj->remaining_s,
                .weight = 1,
                .slack_s = -1,
                .miss_ref_s = cj->duration_s},
        .min_w = min_draw(e, cj, a, n),
        .deadline_s = cj->deadline_s >= 0 ? cj->deadline_s : -1,
    };
    rc = eco_capper_admit(pc->capper, &v, committed, &cand);
    if (rc != 0)
        return rc;
    if (!pc->waited[job]) {
        pc->waited[job] = 1;
        e->admission_waits++;
    }
    return 0;
}

/* A job starts: its model starts empty, its GPUs at the minimum limit until the next
 * allocation. */
double eco_powerctl__start_limit(struct engine *e, uint32_t job)
{
    struct powerctl *pc = e->pc;
    struct eco_job *j = &e->jobs[job];
    struct truth *tr = &pc->truth[job];
    double lo, hi, max_w = 0;
    *tr = truth_of(e, j, pc->clock, &e->pool[j->alloc_off], j->alloc_n);
    tr->key = ++pc->starts;
    pc->same[job] = pc->held[job] = 0;
    truth_range(tr, &lo, &hi);
    double full_speed;
    truth_predict(tr, hi, &tr->full_p, &full_speed);
    for (uint8_t k = 0; k < tr->n; k++) /* the GPUs' mean maximum limit */
        max_w += eco_catalog_get(tr->type[k])->max_limit_w * tr->gpus[k] / tr->total;
    if (pc->clock)
        eco_job_model_init_clock(&pc->models[job], lo, hi, max_w, MODEL_LAMBDA);
    else
        eco_job_model_init(&pc->models[job], lo, hi, MODEL_LAMBDA);
    double lim = eco_capper_start_setting(pc->capper, lo, hi);
    pc->pending[job] = lim;
    if (!pc->clock)
        return lim;
    j->clock_mhz = lim; /* the GPUs keep their group's power limit */
    return 0;
}

static int grow(struct powerctl *pc, size_t n)
{
    if (n <= pc->cap)
        return 0;
    size_t cap = pc->cap ? pc->cap : 256;
    while (cap < n)
        cap *= 2;
    free(pc->vj);
    free(pc->lim);
    pc->vj = malloc(cap * sizeof *pc->vj);
    pc->lim = malloc(cap * sizeof *pc->lim);
    if (!pc->vj || !pc->lim) {
        pc->cap = 0;
        return -ENOMEM;
    }
    pc->cap = cap;
    return 0;
}

/* Job j's knob range as the capper sees it and its levels (NULL: continuous). */
static const double *cap_range(struct powerctl *pc, uint32_t j, double *lo, double *hi, size_t *nl)
{
    struct truth *tr = &pc->truth[j];
    *nl = 0;
    /* A job on GPUs of several types has no common level list: its clock is continuous. */
    const double *levels = pc->clock && tr->n == 1 ? eco_clock_levels(tr->type[0], nl) : NULL;
    truth_range(tr, lo, hi);
    if (pc->clock) { /* no clock below where its power reaches the minimum limit (clock.md) */
        if (tr->floor != tr->floor) /* made once per sample: decides outnumber samples */
            tr->floor = eco_job_model_clock_floor(&pc->models[j], truth_min_limit_w(tr), levels,
                                                  (uint32_t)*nl);
        *lo = tr->floor;
    }
    return levels;
}

/* Running job j as the capper sees it at t (build_view). */
static void view_job(struct engine *e, double t, uint32_t j, struct eco_capper_job *vj)
{
    struct powerctl *pc = e->pc;
    const struct eco_job *job = &e->jobs[j];
    const struct truth *tr = &pc->truth[j];
    double lo, hi;
    size_t nl = 0;
    const double *levels = cap_range(pc, j, &lo, &hi, &nl);
    double slack = job->deadline_s >= 0 ? job->deadline_s - t : -1;
    if (job->deadline_s >= 0 && slack < 0)
        slack = 0;
    double left = job->remaining_s - (t - job->last_start_s) * job->speed;
    *vj = (struct eco_capper_job){
        .cap = {.gpus = job->gpus,
                .min_limit_w = lo,
                .max_limit_w = hi,
                .remaining_s = left > 0 ? left : 0,
                .weight = 1,
                .miss_ref_s = job->duration_s,
                .slack_s = slack,
                .predict = eco_cap_predict_model,
                .ctx = &pc->models[j],
                .levels = levels,
                .n_levels = (uint32_t)nl},
        .id = j,
        .steady = pc->held[j], /* held: no sample and the same setting since it was held */
        .limit_w = setting_of(pc, job),
        .measured_w = pc->meas_w[j],
        .measured_speed = pc->meas_speed[j],
        .deadline_s = job->deadline_s >= 0 ? job->deadline_s : -1,
        .samples = pc->models[j].power.n,
        .truth = truth_predict,
        .truth_ctx = tr,
        .truth_key = tr->key,
    };
}

/* The capper's view of the running jobs at time t: fresh remaining work (the stored
 * remaining_s is booked only when a job's rate changes), slack, last period's noisy samples,
 * the learned model, and the truth (read by the oracle alone). measured_w: the measured total
 * (NaN when the call has no fresh measurement); step: the budget's move (-1, 0, +1). */
static int build_view(struct engine *e, double t, double measured_w, int step,
                      struct eco_capper_view *v)
{
    struct powerctl *pc = e->pc;
    size_t n = e->nrun;
    int rc = grow(pc, n ? n : 1);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        view_job(e, t, e->run[i], &pc->vj[i]);
    *v = (struct eco_capper_view){.now_s = t,
                                  .period_s = pc->period_s,
                                  .budget_w = pc->budget_w,
                                  .fixed_w = fixed_power(e),
                                  .measured_w = measured_w,
                                  .budget_step = step,
                                  .clock = pc->clock,
                                  .jobs = pc->vj,
                                  .n = n};
    const struct eco_sim_config *cfg = e->cfg;
    if (cfg->price) /* the present is measured: the grid floor reads the signal itself */
        v->grid_price_per_mwh = eco_signal_value(cfg->price, cfg->epoch0_s + t);
    if (cfg->carbon)
        v->grid_carbon_g_per_kwh = eco_signal_value(cfg->carbon, cfg->epoch0_s + t);
    return 0;
}

/* Chooses next period's limits for every running job at time t. */
static int allocate(struct engine *e, double t, double measured_w, int step)
{
    struct powerctl *pc = e->pc;
    struct eco_capper_view v;
    if (!e->nrun)
        return 0;
    int rc = build_view(e, t, measured_w, step, &v);
    if (rc)
        return rc;
    if ((rc = eco_capper_decide(pc->capper, &v, &pc->rng, pc->lim)))
        return rc;
    for (size_t i = 0; i < v.n; i++)
        pc->pending[v.jobs[i].id] = pc->lim[i];
    return 0;
}

/* Demand if every running GPU drew its full-power figure, and with var the variance of the
 * measured total at that power: each job's draw is one Gaussian of sd noise_p x its power (all
 * its GPUs together), independent between jobs. */
static double full_demand_var(const struct engine *e, double *var)
{
    double d = fixed_power(e), v = 0;
    for (size_t i = 0; i < e->nrun; i++) { /* each job's figure made at its start */
        double p = e->pc->truth[e->run[i]].full_p * e->jobs[e->run[i]].gpus;
        d += p;
        v += (p * e->pc->noise_p) * (p * e->pc->noise_p);
    }
    if (var)
        *var = v;
    return d;
}

/* full_demand_var without the variance. */
static double full_demand(const struct engine *e)
{
    return full_demand_var(e, NULL);
}

/* Cluster energy so far (the engine integrates it exactly at every event up to now). */
static double energy_now(const struct engine *e)
{
    return e->en.busy + e->en.idle + e->en.base + e->en.off + e->en.trans;
}

/* Adds the open period with its mean power over [open_t, t) and closes it; a period opened
 * at t itself stays open (metrics_open at the same t then only merges into it). */
static void metrics_close(struct engine *e, double t)
{
    struct powerctl *pc = e->pc;
    double dt = t - pc->open_t;
    if (!pc->open || !(dt > 0))
        return;
    /* A span over skipped control periods (the engine's skipping of settled periods) counts
     * as that many periods of its mean power, the first one carrying the settling flag. */
    double n = floor(dt / pc->period_s + 0.5), w = (energy_now(e) - pc->open_j) / dt;
    if (n < 1)
        n = 1;
    for (double k = 0; k < n; k++)
        eco_cap_metrics_add(&pc->met, dt / n, w, pc->open_budget, pc->open_demand,
                            k == 0 && pc->open_settle);
    pc->open = 0;
}

/* Opens a period at t, or, when one opened at t already, merges into it: the settling flag,
 * the budget now in force, the larger demand. */
static void metrics_open(struct engine *e, double t, int settle)
{
    struct powerctl *pc = e->pc;
    if (pc->open && pc->open_t == t) {
        pc->open_settle |= settle;
        pc->open_budget = pc->budget_w;
        pc->open_demand = fmax(pc->open_demand, full_demand(e));
        return;
    }
    pc->open = 1;
    pc->open_settle = settle;
    pc->open_t = t;
    pc->open_j = energy_now(e);
    pc->open_budget = pc->budget_w;
    pc->open_demand = full_demand(e);
}

/* The truth at a setting, evaluated once while the setting stays. */
static void truth_at(struct truth *tr, double setting)
{
    if (!(tr->at == setting)) {
        truth_predict(tr, setting, &tr->at_p, &tr->at_speed);
        tr->at = setting;
    }
}

/* One noisy sample of job j's power per GPU and progress at `setting`, which its model
 * observes; returns the power sample. */
static double sample(struct powerctl *pc, uint32_t j, double setting)
{
    struct truth *tr = &pc->truth[j];
    double z1, z2;
    truth_at(tr, setting);
    gauss2(&pc->rng, &z1, &z2);
    double mp = tr->at_p * (1 + pc->noise_p * z1);
    double ms = tr->at_speed * (1 + pc->noise_s * z2);
    pc->meas_w[j] = mp;
    pc->meas_speed[j] = ms;
    eco_job_model_observe(&pc->models[j], setting, mp, ms);
    tr->floor = NAN;
    return mp;
}

int eco_powerctl__tick(struct engine *e, double t,
                       int (*set_limit)(struct engine *, uint32_t, double, double))
{
    struct powerctl *pc = e->pc;
    int rc;
    /* 1. Last period's decisions take effect. */
    for (size_t i = 0; i < e->nrun; i++) {
        uint32_t j = e->run[i];
        if (pc->pending[j] != setting_of(pc, &e->jobs[j]) &&
            (rc = set_limit(e, j, pc->pending[j], t)))
            return rc;
    }
    /* 2. Metrics: the period that ends now is added, the next one opens. */
    metrics_close(e, t);
    metrics_open(e, t, 0);
    /* 3. Measurements: noisy power and progress of every running job at its limit; a held
     * job's power noise is drawn for all of them together (one Gaussian whose variance is the
     * sum of theirs: the measured total has the same distribution). */
    double measured = fixed_power(e), held_var = 0;
    for (size_t i = 0; i < e->nrun; i++) {
        uint32_t j = e->run[i];
        const struct eco_job *job = &e->jobs[j];
        struct truth *tr = &pc->truth[j];
        double setting = setting_of(pc, job);
        if (pc->held[j]) {
            truth_at(tr, setting);
            double p = tr->at_p, sd = p * job->gpus * pc->noise_p;
            measured += p * job->gpus;
            held_var += sd * sd;
            continue;
        }
        measured += sample(pc, j, setting) * job->gpus;
        if (pc->hold && pc->same[j] < HOLD_TICKS)
            pc->same[j]++;
        if (pc->same[j] >= HOLD_TICKS && pc->models[j].power.n >= SETTLE_SAMPLES)
            pc->held[j] = 1;
    }
    if (held_var > 0) {
        double z1, z2;
        gauss2(&pc->rng, &z1, &z2);
        measured += sqrt(held_var) * z1;
    }
    pc->last_measured_w = measured;
    /* 4. Next period's limits (the family's feedback reads the measured total). */
    return allocate(e, t, measured, 0);
}

/* The budget changes: the allocation reacts at once (limits take effect at the next tick). */
int eco_powerctl__budget_step(struct engine *e, double t)
{
    struct powerctl *pc = e->pc;
    while (pc->bi + 1 < e->cfg->n_budget && e->cfg->budget[pc->bi + 1].t_s <= t)
        pc->bi++;
    double old = pc->budget_w;
    pc->budget_w = e->cfg->budget[pc->bi].watts;
    /* The period in progress ends under the old budget; the rest of it, under the new one,
     * is the first period after the change (settling). */
    if (pc->open && pc->budget_w != old) {
        metrics_close(e, t);
        metrics_open(e, t, 1);
    }
    /* A step down: the family starts its feedback from a guard below the new budget. */
    return allocate(e, t, NAN, pc->budget_w < old ? -1 : pc->budget_w > old ? 1 : 0);
}

/* Standard deviations of the measured total kept between the full-power demand and the budget
 * less the margin by the slack test (docs/policies/powercap.md, "Slack"). */
#define SLACK_SDS 4.0

/* The slack test (eco_powerctl__slack) without its work: the full-power demand and noise
 * under the budget less the margin, and every job past its dithering at its setting. */
static int slack_holds(struct engine *e, double margin)
{
    struct powerctl *pc = e->pc;
    double var, demand = full_demand_var(e, &var);
    if (!(demand + SLACK_SDS * sqrt(var) <= (1 - margin) * pc->budget_w))
        return 0;
    for (size_t i = 0; i < e->nrun; i++) {
        uint32_t j = e->run[i];
        if (pc->models[j].power.n >= SETTLE_SAMPLES &&
            pc->pending[j] != setting_of(pc, &e->jobs[j]))
            return 0; /* a learned job on its way somewhere: the next ticks move it */
    }
    return 1;
}

/* Job j, still learning (at a start, or while the budget has slack), takes the rest of its
 * early samples now,
 * at the settings decide would give it around `split`, the split's own choice for it (the top,
 * or below where its model sees no gain; NaN: the top), undithered, which it runs at; then,
 * held or not, HOLD_TICKS samples there: what the 1 s loop's next ticks would measure (docs,
 * "Slack"). */
static int learn_now(struct engine *e, uint32_t j, double split, double t,
                     int (*set_limit)(struct engine *, uint32_t, double, double))
{
    struct powerctl *pc = e->pc;
    uint32_t early = eco_capper_early(pc->capper);
    double lo, hi;
    size_t nl;
    const double *levels = cap_range(pc, j, &lo, &hi, &nl);
    struct eco_cap_job cj = {.gpus = e->jobs[j].gpus,
                             .min_limit_w = lo,
                             .max_limit_w = hi,
                             .levels = levels,
                             .n_levels = (uint32_t)nl};
    if (!(split == split))
        split = hi;
    double at = eco_capper_explore(pc->capper, &cj, early, split, &pc->rng);
    if (setting_of(pc, &e->jobs[j]) != at) {
        int rc = set_limit(e, j, at, t);
        if (rc)
            return rc;
    }
    pc->pending[j] = at;
    while (pc->models[j].power.n < early) {
        levels = cap_range(pc, j, &lo, &hi, &nl);
        cj.min_limit_w = lo;
        cj.max_limit_w = hi;
        sample(pc, j, eco_capper_explore(pc->capper, &cj, pc->models[j].power.n, split, &pc->rng));
    }
    for (pc->same[j] = 0; pc->hold && pc->same[j] < HOLD_TICKS; pc->same[j]++)
        sample(pc, j, at);
    pc->held[j] = pc->hold && pc->models[j].power.n >= SETTLE_SAMPLES;
    return 0;
}

/* Jobs started[0..n) at t while the budget has slack that they leave slack: each takes its
 * split's own choice, where that is its alone (eco_capper_slack_choice), and its early samples
 * now (learn_now), and no decide runs; 1 when so, 0 when a decide must (docs, "Slack"). */
static int slack_start(struct engine *e, double margin, double t, const uint32_t *started, size_t n,
                       int (*set_limit)(struct engine *, uint32_t, double, double))
{
    struct powerctl *pc = e->pc;
    if (!slack_holds(e, margin))
        return 0;
    uint32_t early = eco_capper_early(pc->capper);
    struct eco_capper_view v = {.now_s = t, .period_s = pc->period_s, .budget_w = pc->budget_w};
    /* every choice first: after a refusal the decide writes every pending limit again */
    for (size_t k = 0; k < n; k++) {
        uint32_t j = started[k];
        struct eco_capper_job vj;
        view_job(e, t, j, &vj);
        if (pc->models[j].power.n >= early || pc->held[j] ||
            !eco_capper_slack_choice(pc->capper, &v, &vj, &pc->pending[j]))
            return 0;
    }
    for (size_t k = 0; k < n; k++) {
        int rc = learn_now(e, started[k], pc->pending[started[k]], t, set_limit);
        if (rc)
            return rc;
    }
    return 1;
}

/* Jobs started at t: the capper decides at once, and the limits it lowers take effect now,
 * with the start (the node daemon lowers the others before the new job's GPUs draw), so a
 * start does not overshoot for a period; raised limits wait for the next tick as usual. While
 * the budget has slack that the new jobs leave slack, slack_start takes the decide's place. */
int eco_powerctl__started(struct engine *e, double t, double slack_margin, const uint32_t *started,
                          size_t n_started,
                          int (*set_limit)(struct engine *, uint32_t, double, double))
{
    /* The rest of the period in progress (or, on an idle cluster, the time until the first
     * tick) follows an admission: settling, with the new jobs in its full-power demand. */
    struct powerctl *pc = e->pc;
    if (pc->open && pc->open_t < t) {
        /* a start inside a held span: the span ends under the demand it had (its mean power
         * and binding state stay those of the jobs before the start), a settling period opens */
        metrics_close(e, t);
        metrics_open(e, t, 1);
    } else if (pc->open) {
        pc->open_settle = 1;
        pc->open_demand = fmax(pc->open_demand, full_demand(e));
    } else {
        metrics_open(e, t, 1);
    }
    int rc = slack_margin >= 0 ? slack_start(e, slack_margin, t, started, n_started, set_limit) : 0;
    if (rc)
        return rc < 0 ? rc : 0;
    rc = allocate(e, t, NAN, 0);
    for (size_t i = 0; !rc && i < e->nrun; i++) {
        uint32_t j = e->run[i];
        if (pc->pending[j] < setting_of(pc, &e->jobs[j]))
            rc = set_limit(e, j, pc->pending[j], t);
    }
    /* with skipping on, binding or not, each new job takes its early samples now around the
     * decide's split choice for it, which it runs at (docs/policies/powercap.md, "Learning at
     * a start"), instead of one tick each */
    for (size_t k = 0; !rc && !e->cfg->control_skip_off && k < n_started; k++) {
        uint32_t j = started[k];
        if (pc->held[j] || pc->models[j].power.n >= eco_capper_early(pc->capper))
            continue;
        for (size_t i = 0; i < e->nrun; i++)
            if (e->run[i] == j) {
                rc = learn_now(e, j, eco_capper_split_of(pc->capper, i), t, set_limit);
                break;
            }
    }
    return rc;
}

void eco_powerctl__pass(struct engine *e, double t)
{
    e->pc->pass_s = t;
    e->pc->pass_n++;
}

/* A tick finds no job running: the period in progress ends, none opens. */
void eco_powerctl__idle(struct engine *e, double t)
{
    if (e->pc)
        metrics_close(e, t);
}

/* Besides SETTLE_SAMPLES per job, while the budget binds: the measured total within 1 % of
 * the budget, a few times the measured noise of a cluster's total (2 % per job, averaging over
 * the jobs). */
#define SETTLE_POWER_TOL 0.01
/* ... after a small change (engine.c, control_changed): SETTLE_SMALL_SDS standard deviations
 * of the measured total's noise (at the jobs' full power), at least 0.3 % and at most 1 %, so
 * that settling at once after it keeps no larger error than the 5 quiet ticks did (1.5 chosen
 * on the cases of docs/policies/powercap.md, "Small changes": at 3, the README's example's
 * MAE rose from 0.21 to 0.32 %; a flat 0.3 % made clusters of a few dozen jobs, whose noise is
 * near 1 %, tick until the 30th tick after each change). */
#define SETTLE_POWER_TOL_SMALL 0.003
#define SETTLE_SMALL_SDS 1.5
/* ... for the first 30 ticks after a change: a capper whose split cannot reach the budget
 * (uniform limits over jobs that draw less than them) is held anyway after that. */
#define SETTLE_POWER_TICKS 30
/* A next setting within this share of its range below the top counts as at the top (a split
 * that just lets go leaves limits a rounding below their maxima). */
#define SETTLE_TOP_TOL 1e-3

int eco_powerctl__settled(struct engine *e, double tol, int hold)
{
    struct powerctl *pc = e->pc;
    double moved = 0, gpus = 0;
    int top = 1; /* every job's next setting at the top of its range */
    for (size_t i = 0; i < e->nrun; i++) {
        uint32_t j = e->run[i];
        double lo, hi;
        if (pc->models[j].power.n < SETTLE_SAMPLES)
            return 0; /* still dithering: its model is not ready */
        truth_range(&pc->truth[j], &lo, &hi);
        top &= pc->pending[j] >= hi - SETTLE_TOP_TOL * (hi - lo);
        if (hi > lo)
            moved +=
                fabs(pc->pending[j] - setting_of(pc, &e->jobs[j])) / (hi - lo) * e->jobs[j].gpus;
        gpus += e->jobs[j].gpus;
    }
    if (moved > tol * gpus)
        return 0;
    /* while the budget binds, the feedback must have brought the measured power near it:
     * a held period far under (or over) the budget would keep its error for the whole skip;
     * under the budget with every job at its top, or the integral at its bound, nothing the
     * next ticks do raises it (docs/policies/powercap.md, "Skipping settled periods") */
    double meas = pc->last_measured_w;
    double ptol = SETTLE_POWER_TOL;
    if (e->changed_small) { /* SETTLE_SMALL_SDS of the measured total's noise, at least 0.3 % */
        double var;
        full_demand_var(e, &var);
        ptol =
            fmin(ptol, fmax(SETTLE_POWER_TOL_SMALL, SETTLE_SMALL_SDS * sqrt(var) / pc->budget_w));
    }
    if (e->tick_quiet < SETTLE_POWER_TICKS && pc->open_demand > pc->budget_w &&
        !(fabs(meas - pc->budget_w) <= ptol * pc->budget_w) &&
        !(meas < pc->budget_w && (top || eco_capper_feedback_at_bound(pc->capper, pc->budget_w))))
        return 0;
    for (size_t i = 0; hold && i < e->nrun; i++)
        pc->pending[e->run[i]] = setting_of(pc, &e->jobs[e->run[i]]);
    return 1;
}

int eco_powerctl__slack(struct engine *e, double margin, double t,
                        int (*set_limit)(struct engine *, uint32_t, double, double))
{
    struct powerctl *pc = e->pc;
    if (!slack_holds(e, margin))
        return 0;
    if (!set_limit)
        return 1;
    uint32_t early = eco_capper_early(pc->capper);
    for (size_t i = 0; i < e->nrun; i++) {
        uint32_t j = e->run[i];
        if (pc->held[j] || pc->models[j].power.n >= early)
            continue;
        int rc = learn_now(e, j, eco_capper_split_of(pc->capper, i), t, set_limit);
        if (rc)
            return rc;
    }
    return 1;
}

double eco_powerctl__period(const struct engine *e)
{
    return e->pc->period_s;
}

void eco_powerctl__summary(const struct engine *e, struct eco_sim_summary *s)
{
    const struct powerctl *pc = e->pc;
    if (!pc)
        return;
    struct eco_cap_metrics_report r;
    eco_cap_metrics_report(&pc->met, &r);
    s->capped_periods = r.binding_periods;
    s->power_cap_periods = r.periods;
    s->settling_periods = r.settling_periods;
    s->power_cap_mae_pct = r.mae_binding_pct;
    s->power_cap_mae_all_pct = r.mae_all_pct;
    s->power_cap_max_overshoot_pct = r.overshoot_pct;
    s->power_cap_raw_overshoot_pct = r.overshoot_raw_pct;
    s->power_cap_over_s = r.above_s;
    s->power_cap_over_kwh = r.above_kwh;
    s->power_cap_over_share = r.above_share;
}
