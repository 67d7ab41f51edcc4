/* SPDX-License-Identifier: MIT */
/* Power capping in the simulator: the true power and speed of each running job at its limit
 * (measured curves), noisy measurements every control period, per-job online models, the
 * allocator or a baseline choosing next period's limits (applied one period later), budget
 * admission, and the capping metrics. docs/policies/powercap.md. */
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
/* Limit dithering (fraction of the range) that makes a job's first samples span enough of
 * its range for its model to become ready; afterwards none (DITHER): the allocation's own
 * moves as jobs come and go keep the models fed, and steady dithering only adds power noise. */
#define DITHER 0.0
#define DITHER_EARLY 0.15
#define EARLY_SAMPLES 10
/* Feedback on the measured cluster power: the allocation's budget is corrected by an integral
 * of the measured error (gain per period, and a bound as a share of the budget), which removes
 * the bias of the learned models. */
#define FEEDBACK_GAIN 0.3
#define FEEDBACK_BOUND 0.2
/* The feedback aims below the budget by SETPOINT_MARGIN of it plus this many standard
 * deviations of the measured cluster power (from the per-job power noise). Measured on ITP
 * subsets, any sigma margin costs more mean error than it saves overshoot, so it is 0; the
 * code keeps the term for clusters whose measurements are noisier. */
#define SETPOINT_SIGMAS 0.0
/* After a step down of the budget the allocation starts this share below it. */
#define STEP_GUARD 0.03
#define SETPOINT_MARGIN 0.002

enum pc_kind { PC_MPC, PC_ORACLE, PC_UNIFORM, PC_PROPORTIONAL, PC_THRESHOLD };

static const struct {
    const char *name;
    enum pc_kind kind;
} pc_names[] = {
    {"mpc", PC_MPC},
    {"oracle", PC_ORACLE},
    {"uniform", PC_UNIFORM},
    {"proportional", PC_PROPORTIONAL},
    {"threshold", PC_THRESHOLD},
};

/* Distinct GPU types one job can span: the whole catalog (checked in eco_powerctl_init). */
#define TRUTH_TYPES 8

/* A job's true curves: its GPUs grouped by the type of the node each is on. */
struct truth {
    uint16_t workload;
    uint8_t clock; /* the setting is an SM clock (MHz), not a power limit */
    uint8_t n;     /* distinct types */
    uint16_t type[TRUTH_TYPES];
    uint32_t gpus[TRUTH_TYPES];
    uint32_t total;
};

struct powerctl {
    enum pc_kind kind;
    int clock; /* --power-knob clock */
    double period_s, noise_p, noise_s;
    struct eco_rng rng;
    struct eco_cap_params params;
    struct eco_job_model *models; /* per job */
    struct truth *truth;          /* per job */
    double *pending;              /* per job: limit decided, applied at the next tick */
    size_t bi;                    /* budget step in force */
    double budget_w;
    int tick_pending;
    /* Scratch for one allocation. */
    struct eco_cap_job *cj;
    uint32_t *cj_job;
    double *lim, *scratch;
    size_t cap;
    struct eco_threshold_ctl thr;
    /* Metrics. */
    double mae_sum, max_over;
    uint64_t capped;
    double integral; /* feedback correction of the budget, W */
    uint8_t *waited; /* per job: was deferred by admission */
    /* Per (type, workload): eco_powerctl_min_gpu_w, computed once (on the clock knob it is a
     * bisection, and admission sums it over every running job for each candidate). */
    double *min_gpu_w;
    size_t n_workloads;
};

int eco_powerctl_known(const char *name)
{
    if (!name || !strcmp(name, "none"))
        return 1;
    for (size_t i = 0; i < sizeof pc_names / sizeof pc_names[0]; i++)
        if (!strcmp(name, pc_names[i].name))
            return 1;
    return 0;
}

static double gauss(struct eco_rng *r)
{
    double u1 = eco_rng_uniform(r), u2 = eco_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

/* The knob's range on a GPU type: its power-limit range, or its clock range. */
static void knob_range(int clock, int type, double *lo, double *hi)
{
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    *lo = t->min_limit_w;
    *hi = t->max_limit_w;
    if (clock)
        eco_clock_range(type, lo, hi);
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
        knob_range(t->clock, t->type[k], &lo, &hi);
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

/* Job j's GPUs grouped by the type of the node each is on (allocation a[0..n)). */
static struct truth truth_of(const struct engine *e, const struct eco_job *j, int clock,
                             const struct eco_alloc *a, size_t n)
{
    struct truth t = {.workload = j->workload, .clock = (uint8_t)clock};
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
    return t;
}

/* The job's knob range: from the lowest of its types' minimums to the highest maximum (each
 * GPU gets the setting clamped into its own type's range). */
static void truth_range(const struct truth *t, double *lo, double *hi)
{
    *lo = *hi = 0;
    for (uint8_t k = 0; k < t->n; k++) {
        double l, h;
        knob_range(t->clock, t->type[k], &l, &h);
        if (k == 0 || l < *lo)
            *lo = l;
        if (k == 0 || h > *hi)
            *hi = h;
    }
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

void eco_powerctl_apply(struct engine *e, struct eco_job *job, double setting)
{
    if (e->pc && e->pc->clock)
        job->clock_mhz = setting;
    else
        job->limit_w = setting;
}

double eco_powerctl_budget(const struct engine *e)
{
    return e->pc ? e->pc->budget_w : 0;
}

int eco_powerctl_init(struct engine *e)
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
    for (size_t i = 0; i < sizeof pc_names / sizeof pc_names[0]; i++)
        if (!strcmp(cfg->power_policy, pc_names[i].name))
            pc->kind = pc_names[i].kind;
    pc->clock = cfg->power_knob == ECO_POWER_KNOB_CLOCK;
    pc->period_s = cfg->control_period_s > 0 ? cfg->control_period_s : DEFAULT_PERIOD_S;
    pc->noise_p = cfg->noise_set ? cfg->noise_power : DEFAULT_NOISE_POWER;
    pc->noise_s = cfg->noise_set ? cfg->noise_speed : DEFAULT_NOISE_SPEED;
    eco_rng_init(&pc->rng, cfg->seed ^ 0x5eedc0deULL);
    eco_cap_params_default(&pc->params);
    pc->params.period_s = pc->period_s;
    size_t nj = e->n_jobs ? e->n_jobs : 1;
    pc->models = calloc(nj, sizeof *pc->models);
    pc->truth = calloc(nj, sizeof *pc->truth);
    pc->pending = calloc(nj, sizeof *pc->pending);
    pc->waited = calloc(nj, 1);
    pc->n_workloads = eco_workload_count();
    pc->min_gpu_w = calloc(eco_catalog_count() * pc->n_workloads, sizeof *pc->min_gpu_w);
    if (!pc->models || !pc->truth || !pc->pending || !pc->waited || !pc->min_gpu_w)
        return -ENOMEM;
    for (size_t t = 0; t < eco_catalog_count(); t++)
        for (size_t w = 0; w < pc->n_workloads; w++)
            pc->min_gpu_w[t * pc->n_workloads + w] =
                eco_powerctl_min_gpu_w((int)t, (uint16_t)w, cfg->power_knob);
    pc->budget_w = cfg->n_budget ? cfg->budget[0].watts : 1e300;
    eco_threshold_init(&pc->thr);
    return 0;
}

void eco_powerctl_fini(struct engine *e)
{
    struct powerctl *pc = e->pc;
    if (!pc)
        return;
    free(pc->models);
    free(pc->truth);
    free(pc->pending);
    free(pc->waited);
    free(pc->min_gpu_w);
    free(pc->cj);
    free(pc->cj_job);
    free(pc->lim);
    free(pc->scratch);
    free(pc);
    e->pc = NULL;
}

/* Power of everything but the running jobs' GPUs: hosts, idle GPUs, nodes off or changing. */
static double fixed_power(const struct engine *e)
{
    return e->p.idle + e->p.base + e->p.off + e->p.trans;
}

/* The job's minimum draw per GPU (at the knob's lowest setting), for admission. */
double eco_powerctl_min_gpu_w(int type, uint16_t workload, int knob)
{
    double lo, hi, speed, p;
    struct truth t = {.workload = workload,
                      .clock = knob == ECO_POWER_KNOB_CLOCK,
                      .n = 1,
                      .type = {(uint16_t)type},
                      .gpus = {1},
                      .total = 1};
    knob_range(t.clock, type, &lo, &hi);
    /* the clock knob's floor: the clock at the minimum limit, as the allocator's (clock.md) */
    if (t.clock &&
        eco_clock_equivalent(type, workload, eco_catalog_get((size_t)type)->min_limit_w, &lo))
        knob_range(t.clock, type, &lo, &hi);
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

int eco_powerctl_admit(struct engine *e, uint32_t job, const struct eco_alloc *a, size_t n)
{
    struct powerctl *pc = e->pc;
    if (!pc || !n)
        return 1;
    double committed = fixed_power(e);
    for (size_t i = 0; i < e->nrun; i++) {
        const struct eco_job *r = &e->jobs[e->run[i]];
        committed += min_draw(e, r, &e->pool[r->alloc_off], r->alloc_n);
    }
    /* Jobs already started in this pass. */
    for (size_t k = 0; k < e->dec.n_starts; k++) {
        const struct eco_job *s = &e->jobs[e->dec.starts[k]];
        size_t off = e->dec.start_alloc_off[k];
        size_t end =
            k + 1 < e->dec.n_starts ? e->dec.start_alloc_off[k + 1] : e->dec.n_start_allocs;
        committed += min_draw(e, s, &e->dec.start_allocs[off], end - off);
    }
    /* Its node's host and idle GPUs are already in fixed_power (the node is on). */
    double need = min_draw(e, &e->jobs[job], a, n);
    if (committed + need <= pc->budget_w)
        return 1;
    if (!pc->waited[job]) {
        pc->waited[job] = 1;
        e->admission_waits++;
    }
    return 0;
}

/* A job starts: its model starts empty, its GPUs at the minimum limit until the next
 * allocation. */
double eco_powerctl_start_limit(struct engine *e, uint32_t job)
{
    struct powerctl *pc = e->pc;
    struct eco_job *j = &e->jobs[job];
    struct truth *tr = &pc->truth[job];
    double lo, hi, max_w = 0;
    *tr = truth_of(e, j, pc->clock, &e->pool[j->alloc_off], j->alloc_n);
    truth_range(tr, &lo, &hi);
    for (uint8_t k = 0; k < tr->n; k++) /* the GPUs' mean maximum limit */
        max_w += eco_catalog_get(tr->type[k])->max_limit_w * tr->gpus[k] / tr->total;
    if (pc->clock)
        eco_job_model_init_clock(&pc->models[job], lo, hi, max_w, MODEL_LAMBDA);
    else
        eco_job_model_init(&pc->models[job], lo, hi, MODEL_LAMBDA);
    double lim = pc->kind == PC_THRESHOLD ? hi : lo;
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
    free(pc->cj);
    free(pc->cj_job);
    free(pc->lim);
    free(pc->scratch);
    pc->cj = malloc(cap * sizeof *pc->cj);
    pc->cj_job = malloc(cap * sizeof *pc->cj_job);
    pc->lim = malloc(cap * sizeof *pc->lim);
    pc->scratch = malloc(eco_cap_scratch_len(cap, &pc->params) * sizeof *pc->scratch);
    pc->cap = cap;
    return (pc->cj && pc->cj_job && pc->lim && pc->scratch) ? 0 : -ENOMEM;
}

/* The level of type's clock range [j->min, j->max] (both levels) nearest to x. */
static double level_in(int type, const struct eco_cap_job *j, double x)
{
    double l = eco_clock_snap(type, x);
    return l < j->min_limit_w ? j->min_limit_w : l > j->max_limit_w ? j->max_limit_w : l;
}

/* Chooses next period's limits for every running job at time t. */
static int allocate(struct engine *e, double t, double measured_w)
{
    struct powerctl *pc = e->pc;
    size_t n = e->nrun;
    if (!n)
        return 0;
    int rc = grow(pc, n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        uint32_t j = e->run[i];
        const struct eco_job *job = &e->jobs[j];
        const struct truth *tr = &pc->truth[j];
        double lo, hi;
        size_t nl = 0;
        /* A job on GPUs of several types has no common level list: its clock is continuous. */
        const double *levels = pc->clock && tr->n == 1 ? eco_clock_levels(tr->type[0], &nl) : NULL;
        truth_range(tr, &lo, &hi);
        if (pc->clock) /* no clock below where its power reaches the minimum limit (clock.md) */
            lo = eco_job_model_clock_floor(&pc->models[j], truth_min_limit_w(tr), levels,
                                           (uint32_t)nl);
        double slack = job->deadline_s >= 0 ? job->deadline_s - t : -1;
        if (job->deadline_s >= 0 && slack < 0)
            slack = 0;
        pc->cj_job[i] = j;
        pc->cj[i] = (struct eco_cap_job){
            .gpus = job->gpus,
            .min_limit_w = lo,
            .max_limit_w = hi,
            .remaining_s = job->remaining_s,
            .weight = 1,
            .slack_s = slack,
            .predict = pc->kind == PC_ORACLE ? truth_predict : eco_cap_predict_model,
            .ctx = pc->kind == PC_ORACLE ? (const void *)&pc->truth[j]
                                         : (const void *)&pc->models[j],
            .levels = levels,
            .n_levels = (uint32_t)nl,
        };
        pc->lim[i] = setting_of(pc, job);
    }
    double gpu_budget = pc->budget_w - fixed_power(e);
    if (pc->kind == PC_MPC)
        gpu_budget += pc->integral;
    switch (pc->kind) {
    case PC_MPC:
    case PC_ORACLE:
        /* Anti-windup: while the budget does not bind (price 0) there is nothing to correct. */
        if (eco_cap_allocate(pc->cj, n, gpu_budget, &pc->params, pc->lim, pc->scratch) <= 0)
            pc->integral = 0;
        break;
    case PC_UNIFORM:
        if (pc->clock)
            eco_cap_uniform_levels(pc->cj, n, gpu_budget, pc->lim);
        else
            eco_cap_uniform(pc->cj, n, gpu_budget, pc->lim);
        break;
    case PC_PROPORTIONAL:
        eco_cap_proportional(pc->cj, n, gpu_budget, pc->lim);
        break;
    case PC_THRESHOLD:
        eco_threshold_step(&pc->thr, t, measured_w - fixed_power(e), gpu_budget, pc->cj, n,
                           pc->lim);
        break;
    }
    for (size_t i = 0; i < n; i++) {
        double lim = pc->lim[i];
        if (pc->kind == PC_MPC) {
            /* Dither so that the models keep seeing different limits. */
            double range = pc->cj[i].max_limit_w - pc->cj[i].min_limit_w;
            double d = pc->models[pc->cj_job[i]].power.n < EARLY_SAMPLES ? DITHER_EARLY : DITHER;
            lim += (eco_rng_uniform(&pc->rng) * 2 - 1) * d * range;
            if (lim > pc->cj[i].max_limit_w)
                lim = pc->cj[i].max_limit_w;
            if (lim < pc->cj[i].min_limit_w)
                lim = pc->cj[i].min_limit_w;
        }
        const struct truth *tr = &pc->truth[pc->cj_job[i]];
        if (pc->clock && tr->n == 1) /* dithered and threshold settings onto a level */
            lim = level_in(tr->type[0], &pc->cj[i], lim);
        pc->pending[pc->cj_job[i]] = lim;
    }
    return 0;
}

/* Demand if every running GPU drew its full-power figure. */
static double full_demand(const struct engine *e)
{
    double d = fixed_power(e);
    for (size_t i = 0; i < e->nrun; i++) {
        const struct eco_job *j = &e->jobs[e->run[i]];
        double speed, p, lo, hi;
        truth_range(&e->pc->truth[e->run[i]], &lo, &hi);
        truth_predict(&e->pc->truth[e->run[i]], hi, &p, &speed);
        d += p * j->gpus;
    }
    return d;
}

int eco_powerctl_tick(struct engine *e, double t, int (*set_limit)(struct engine *, uint32_t,
                                                                    double, double))
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
    /* 2. Metrics for the period starting now. */
    double power = eco_nodes_power_w(e);
    if (full_demand(e) > pc->budget_w) {
        pc->capped++;
        pc->mae_sum += fabs(power - pc->budget_w) / pc->budget_w;
    }
    double over = (power - pc->budget_w) / pc->budget_w;
    if (over > pc->max_over)
        pc->max_over = over;
    /* 3. Measurements: noisy power and progress of every running job at its limit. */
    double measured = fixed_power(e), var = 0;
    for (size_t i = 0; i < e->nrun; i++) {
        uint32_t j = e->run[i];
        const struct eco_job *job = &e->jobs[j];
        double speed, p;
        truth_predict(&pc->truth[j], setting_of(pc, job), &p, &speed);
        double mp = p * (1 + pc->noise_p * gauss(&pc->rng));
        double ms = speed * (1 + pc->noise_s * gauss(&pc->rng));
        measured += mp * job->gpus;
        var += (pc->noise_p * mp * job->gpus) * (pc->noise_p * mp * job->gpus);
        eco_job_model_observe(&pc->models[j], setting_of(pc, job), mp, ms);
    }
    /* 4. Feedback on the measured power, then next period's limits. */
    if (e->nrun) {
        double target = pc->budget_w * (1 - SETPOINT_MARGIN) - SETPOINT_SIGMAS * sqrt(var);
        pc->integral += FEEDBACK_GAIN * (target - measured);
        double bound = FEEDBACK_BOUND * pc->budget_w;
        if (pc->integral > bound)
            pc->integral = bound;
        if (pc->integral < -bound)
            pc->integral = -bound;
    }
    return allocate(e, t, measured);
}

/* The budget changes: the allocation reacts at once (limits take effect at the next tick). */
int eco_powerctl_budget_step(struct engine *e, double t)
{
    struct powerctl *pc = e->pc;
    while (pc->bi + 1 < e->cfg->n_budget && e->cfg->budget[pc->bi + 1].t_s <= t)
        pc->bi++;
    double old = pc->budget_w;
    pc->budget_w = e->cfg->budget[pc->bi].watts;
    /* A step down moves every limit to where the models are least tested: start the feedback
     * from a guard below the new budget and let it climb back. */
    if (pc->budget_w < old && pc->integral > -STEP_GUARD * pc->budget_w)
        pc->integral = -STEP_GUARD * pc->budget_w;
    return allocate(e, t, eco_nodes_power_w(e));
}

/* Jobs started at t: the others make room at the next tick (one period, not two). */
int eco_powerctl_started(struct engine *e, double t)
{
    return allocate(e, t, eco_nodes_power_w(e));
}

double eco_powerctl_period(const struct engine *e)
{
    return e->pc->period_s;
}

void eco_powerctl_summary(const struct engine *e, struct eco_sim_summary *s)
{
    const struct powerctl *pc = e->pc;
    if (!pc)
        return;
    s->capped_periods = pc->capped;
    s->power_cap_mae_pct = pc->capped ? 100.0 * pc->mae_sum / (double)pc->capped : 0;
    s->power_cap_max_overshoot_pct = 100.0 * pc->max_over;
}
