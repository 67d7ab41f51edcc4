/* SPDX-License-Identifier: MIT */
/* The capper family: registry, parameters, and the pieces every capper shares (feedback on
 * measured power, early dithering, level snapping, power admission). docs/policies/powercap.md,
 * "Capper family". A policy is one file (capper_<name>.c) plus one line in cappers.def. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "alloc_internal.h"
#include "capper_internal.h"
#include "ecosched/rng.h"

#define ECO_CAPPER(name) extern const struct eco_capper_ops eco_capper_##name;
#include "cappers.def"
#undef ECO_CAPPER

static const struct eco_capper_ops *const cappers[] = {
#define ECO_CAPPER(name) &eco_capper_##name,
#include "cappers.def"
#undef ECO_CAPPER
    NULL,
};

const struct eco_capper_ops *const *eco_capper_all(void)
{
    return cappers;
}

const struct eco_capper_ops *eco_capper_find(const char *name)
{
    for (size_t i = 0; name && cappers[i]; i++)
        if (!strcasecmp(cappers[i]->name, name))
            return cappers[i];
    return NULL;
}

const struct eco_capper_ops *eco_capper_ops_of(const struct eco_capper *c)
{
    return c ? c->ops : NULL;
}

/* Longest family name accepted before ':' (the registry's are a dozen characters). */
#define NAME_MAX_LEN 64

struct eco_capper *eco_capper_create(const char *spec, struct eco_error *err)
{
    char name[NAME_MAX_LEN];
    const char *colon = spec ? strchr(spec, ':') : NULL;
    size_t len = spec ? (colon ? (size_t)(colon - spec) : strlen(spec)) : 0;
    if (!spec || len >= sizeof name) {
        eco_errorf(err, -EINVAL, "power policy: unknown policy '%s'", spec ? spec : "(null)");
        return NULL;
    }
    memcpy(name, spec, len);
    name[len] = 0;
    const struct eco_capper_ops *ops = eco_capper_find(name);
    if (!ops) {
        char known[256] = "";
        for (size_t i = 0; cappers[i]; i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, cappers[i]->name, sizeof known - strlen(known) - 1);
        }
        eco_errorf(err, -EINVAL, "power policy: unknown policy '%s' (known: %s)", name, known);
        return NULL;
    }
    return ops->create(colon ? colon + 1 : NULL, err);
}

void eco_capper_destroy(struct eco_capper *c)
{
    if (c)
        c->ops->destroy(c);
}

int eco_capper_decide(struct eco_capper *c, const struct eco_capper_view *v, struct eco_rng *rng,
                      double *limits_w)
{
    c->n_split = 0;
    return c->ops->decide(c, v, rng, limits_w);
}

uint64_t eco_capper_steady_decides(const struct eco_capper *c)
{
    return c->n_steady;
}

double eco_capper_split_of(const struct eco_capper *c, size_t i)
{
    return i < c->n_split ? c->lim[i] : NAN;
}

double eco_capper_start_setting(const struct eco_capper *c, double min_setting, double max_setting)
{
    return c && c->ops->start_at_max ? max_setting : min_setting;
}

double eco_capper_feedback_w(const struct eco_capper *c)
{
    return c ? c->integral : 0;
}

/* ---- parameters ---------------------------------------------------------------------------- */

void eco_capper__common_default(struct eco_capper_common *d)
{
    *d = (struct eco_capper_common){
        /* 0.3 of the measured error per period: the simulator's tuned gain (ITP subsets,
         * docs/policies/powercap.md); higher gains ring with the one-period actuation lag. */
        .gain = 0.3,
        /* The models' bias is a few percent; 20% of the budget bounds a wound-up integral. */
        .bound = 0.2,
        /* 0.2% below the budget: the measured noise of a cluster's total is smaller. */
        .margin = 0.002,
        /* After a step down every limit moves where the models are least tested. */
        .guard = 0.03,
        /* +-15% of the range over a job's first 10 samples spans the 0.2 its model needs to
         * become ready (eco_job_model_ready); afterwards the allocation's own moves feed it. */
        .dither = 0.15,
        .early = 10,
        /* A limit rises by at most 10 % of its range per period (two or three grid steps):
         * the learned curves forget the limits a job has not held for a minute, and a large
         * simultaneous raise of several jobs to such limits was where the measured power
         * overshot most (docs/policies/powercap.md, "Slew"); lowering is never bounded. */
        .slew = 0.1,
        .observer = 1,
        /* steady jobs keep their settings where the others' split leaves them standing */
        .steady = 1,
        .admit = ECO_CAPPER_ADMIT_MIN,
        /* No urgent bypass: under lsf most queued deadline jobs are within 2x their time
         * left (the bypass's old default), so admit=deadline let nearly every candidate in
         * and was the min rule (docs/policies/powercap.md, "Admission"). */
        .near = 0.0,
        /* The deadline-aware allocation, on for the cappers that read ALLOC keys (mpc, oracle):
         * a miss costs 10 times the job's weighted duration, the factor of the linear cost it
         * replaces; lost causes release their power; weight by size. The plan over the
         * horizon (plan=1) is off: on ITP cluster 04 (300 jobs, 60%) it missed 0.50 of the
         * deadlines against 0.49 without it, at ten times the run time (the ablation in
         * docs/policies/powercap.md measures each part). */
        .miss = 10.0,
        .sigma = 0.0,
        .lost = 1,
        .weight = ECO_CAPPER_WEIGHT_SIZE,
        .plan = 0,
    };
}

enum key_kind { K_DOUBLE, K_U32, K_ADMIT, K_WEIGHT };

struct key {
    const char *name;
    enum key_kind kind;
    unsigned group; /* 0: every capper */
    double lo, hi;
    size_t off; /* offset in struct eco_capper */
};

#define CM(f) offsetof(struct eco_capper, cm.f)
static const struct key keys[] = {
    {"gain", K_DOUBLE, 0, 0, 2, CM(gain)},
    {"bound", K_DOUBLE, 0, 0, 1, CM(bound)},
    {"margin", K_DOUBLE, 0, 0, 0.5, CM(margin)},
    {"guard", K_DOUBLE, 0, 0, 0.5, CM(guard)},
    {"dither", K_DOUBLE, 0, 0, 0.5, CM(dither)},
    {"early", K_U32, 0, 0, 1e6, CM(early)},
    {"slew", K_DOUBLE, 0, 0, 1, CM(slew)},
    {"observer", K_U32, 0, 0, 1, CM(observer)},
    {"admit", K_ADMIT, 0, 0, 0, CM(admit)},
    {"near", K_DOUBLE, 0, 0, 100, CM(near)},
    {"grid", K_U32, ECO_CAPPER_KEYS_ALLOC, 2, ECO_CAP_GRID_MAX,
     offsetof(struct eco_capper, cap.grid)},
    {"penalty", K_DOUBLE, ECO_CAPPER_KEYS_ALLOC, 0, 1e6,
     offsetof(struct eco_capper, cap.deadline_penalty)},
    {"horizon", K_U32, ECO_CAPPER_KEYS_ALLOC, 0, 1e6, offsetof(struct eco_capper, cap.horizon)},
    {"reuse", K_DOUBLE, ECO_CAPPER_KEYS_ALLOC, 0, 1, offsetof(struct eco_capper, cap.reuse_tol)},
    {"miss", K_DOUBLE, ECO_CAPPER_KEYS_ALLOC, 0, 1e6, CM(miss)},
    {"sigma", K_DOUBLE, ECO_CAPPER_KEYS_ALLOC, 0, 1, CM(sigma)},
    {"lost", K_U32, ECO_CAPPER_KEYS_ALLOC, 0, 1, CM(lost)},
    {"weight", K_WEIGHT, ECO_CAPPER_KEYS_ALLOC, 0, 0, CM(weight)},
    {"plan", K_U32, ECO_CAPPER_KEYS_ALLOC, 0, 1, CM(plan)},
    {"grid_floor", K_U32, ECO_CAPPER_KEYS_ALLOC, 0, 1, CM(grid_floor)},
    {"value", K_DOUBLE, ECO_CAPPER_KEYS_ALLOC, 0, 1e9, CM(value)},
    {"carbon_price", K_DOUBLE, ECO_CAPPER_KEYS_ALLOC, 0, 1e6, CM(carbon_price)},
    {"steady", K_U32, ECO_CAPPER_KEYS_ALLOC, 0, 1, CM(steady)},
    {"rebalance", K_DOUBLE, ECO_CAPPER_KEYS_THRESHOLD, 0, 1e6,
     offsetof(struct eco_capper, thr.rebalance_s)},
    {"high", K_DOUBLE, ECO_CAPPER_KEYS_THRESHOLD, 0.01, 2,
     offsetof(struct eco_capper, thr.high_frac)},
    {"low", K_DOUBLE, ECO_CAPPER_KEYS_THRESHOLD, 0.01, 2,
     offsetof(struct eco_capper, thr.low_frac)},
    {"step", K_DOUBLE, ECO_CAPPER_KEYS_THRESHOLD, 0.001, 1,
     offsetof(struct eco_capper, thr.step_frac)},
};
#undef CM

/* Longest "key=value" item. */
#define ITEM_MAX 128

static int set_key(struct eco_capper *c, const char *item, unsigned groups, struct eco_error *err)
{
    const char *name = c->ops->name;
    const char *eq = strchr(item, '=');
    if (!eq)
        return eco_errorf(err, -EINVAL, "power policy %s: parameter '%s' is not key=value", name,
                          item);
    size_t klen = (size_t)(eq - item);
    const struct key *k = NULL;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].name) == klen && !strncmp(keys[i].name, item, klen) &&
            (!keys[i].group || (keys[i].group & groups)))
            k = &keys[i];
    if (!k)
        return eco_errorf(err, -EINVAL, "power policy %s: unknown parameter '%.*s' (known: %s)",
                          name, (int)klen, item, c->ops->params_help);
    const char *val = eq + 1;
    char *p = (char *)c + k->off;
    if (k->kind == K_ADMIT) {
        if (!strcmp(val, "min"))
            *(int *)p = ECO_CAPPER_ADMIT_MIN;
        else if (!strcmp(val, "deadline"))
            *(int *)p = ECO_CAPPER_ADMIT_DEADLINE;
        else
            return eco_errorf(err, -EINVAL,
                              "power policy %s: parameter admit: '%s' is not min or deadline", name,
                              val);
        return 0;
    }
    if (k->kind == K_WEIGHT) {
        if (!strcmp(val, "one"))
            *(int *)p = ECO_CAPPER_WEIGHT_ONE;
        else if (!strcmp(val, "size"))
            *(int *)p = ECO_CAPPER_WEIGHT_SIZE;
        else
            return eco_errorf(err, -EINVAL,
                              "power policy %s: parameter weight: '%s' is not one or size", name,
                              val);
        return 0;
    }
    char *end;
    double v = strtod(val, &end);
    if (!*val || *end || !isfinite(v) || v < k->lo || v > k->hi ||
        (k->kind == K_U32 && v != floor(v)))
        return eco_errorf(err, -EINVAL, "power policy %s: parameter %s: '%s' is not %s in [%g, %g]",
                          name, k->name, val, k->kind == K_U32 ? "an integer" : "a number", k->lo,
                          k->hi);
    if (k->kind == K_U32)
        *(uint32_t *)p = (uint32_t)v;
    else
        *(double *)p = v;
    return 0;
}

static int parse_params(struct eco_capper *c, const char *params, unsigned groups,
                        struct eco_error *err)
{
    const char *s = params ? params : "";
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char item[ITEM_MAX];
        if (len == 0 || len >= sizeof item)
            return eco_errorf(err, -EINVAL, "power policy %s: bad parameter list '%s'",
                              c->ops->name, params);
        memcpy(item, s, len);
        item[len] = 0;
        int rc = set_key(c, item, groups, err);
        if (rc)
            return rc;
        s += len + (comma ? 1 : 0);
        if (comma && !*s)
            return eco_errorf(err, -EINVAL, "power policy %s: bad parameter list '%s'",
                              c->ops->name, params);
    }
    if (c->thr.low_frac > c->thr.high_frac)
        return eco_errorf(err, -EINVAL, "power policy %s: parameter low (%g) is above high (%g)",
                          c->ops->name, c->thr.low_frac, c->thr.high_frac);
    return 0;
}

struct eco_capper *eco_capper__create_common(const struct eco_capper_ops *ops, const char *params,
                                             const struct eco_capper_common *d, unsigned keys_in,
                                             eco_capper_split_fn split, int use_truth,
                                             struct eco_error *err)
{
    struct eco_capper *c = calloc(1, sizeof *c);
    if (!c) {
        eco_errorf(err, -ENOMEM, "power policy %s: %s", ops->name, strerror(ENOMEM));
        return NULL;
    }
    c->ops = ops;
    c->cm = *d;
    c->split = split;
    c->use_truth = use_truth;
    c->use_memo = (keys_in & ECO_CAPPER_KEYS_ALLOC) != 0;
    eco_cap_params_default(&c->cap);
    eco_threshold_init(&c->thr);
    if (parse_params(c, params, keys_in, err)) {
        free(c);
        return NULL;
    }
    if (c->cm.grid_floor && !(c->cm.value > 0)) {
        eco_errorf(err, -EINVAL,
                   "power policy %s: grid_floor=1 needs value=V > 0 (what an hour of a job's "
                   "weighted completion time is worth, in the price signal's currency)",
                   ops->name);
        free(c);
        return NULL;
    }
    return c;
}

void eco_capper__destroy_common(struct eco_capper *c)
{
    if (!c)
        return;
    for (size_t k = 0; k < c->n_live; k++)
        eco_cap_memo_free(c->memo[c->memo_live[k]]);
    free(c->memo);
    free(c->memo_gen);
    free(c->memo_live);
    free(c->cj);
    free(c->lim);
    free(c->aux);
    free(c->scratch);
    free(c->sub);
    free(c->sub_lim);
    free(c->sub_idx);
    free(c->sub_iv);
    free(c);
}

/* Job id's memo, made on first use; NULL when out of memory (the allocator then computes the
 * job's row afresh, the same result). */
static struct eco_cap_memo *memo_for(struct eco_capper *c, uint32_t id)
{
    if (id >= c->n_memo) {
        size_t n = c->n_memo ? c->n_memo : 256;
        while (n <= id)
            n *= 2;
        struct eco_cap_memo **m = realloc(c->memo, n * sizeof *m);
        if (!m)
            return NULL;
        c->memo = m;
        uint32_t *g = realloc(c->memo_gen, n * sizeof *g);
        if (!g)
            return NULL;
        c->memo_gen = g;
        memset(c->memo + c->n_memo, 0, (n - c->n_memo) * sizeof *m);
        memset(c->memo_gen + c->n_memo, 0, (n - c->n_memo) * sizeof *g);
        c->n_memo = n;
    }
    c->memo_gen[id] = c->gen;
    if (!c->memo[id]) {
        if (c->n_live == c->cap_live) {
            size_t n = c->cap_live ? 2 * c->cap_live : 256;
            uint32_t *l = realloc(c->memo_live, n * sizeof *l);
            if (!l)
                return NULL;
            c->memo_live = l;
            c->cap_live = n;
        }
        if (!(c->memo[id] = eco_cap_memo_new(c->cap.grid)))
            return NULL;
        c->memo_live[c->n_live++] = id;
    }
    return c->memo[id];
}

/* Frees the memos of jobs this decide's view did not hold (ended, or another job's id). */
static void memo_sweep(struct eco_capper *c)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n_live; i++) {
        uint32_t id = c->memo_live[i];
        if (c->memo_gen[id] == c->gen) {
            c->memo_live[k++] = id;
        } else {
            eco_cap_memo_free(c->memo[id]);
            c->memo[id] = NULL;
        }
    }
    c->n_live = k;
}

/* ---- decide -------------------------------------------------------------------------------- */

static int grow(struct eco_capper *c, size_t n)
{
    if (n <= c->n_cap)
        return 0;
    size_t cap = c->n_cap ? c->n_cap : 64;
    while (cap < n)
        cap *= 2;
    free(c->cj);
    free(c->lim);
    free(c->aux);
    free(c->scratch);
    free(c->sub);
    free(c->sub_lim);
    free(c->sub_idx);
    free(c->sub_iv);
    c->cj = malloc(cap * sizeof *c->cj);
    c->lim = malloc(cap * sizeof *c->lim);
    c->aux = malloc(cap * sizeof *c->aux);
    c->scratch = malloc(eco_cap_scratch_len(cap, &c->cap) * sizeof *c->scratch);
    c->sub = malloc(cap * sizeof *c->sub);
    c->sub_lim = malloc(cap * sizeof *c->sub_lim);
    c->sub_idx = malloc(cap * sizeof *c->sub_idx);
    c->sub_iv = malloc(2 * cap * sizeof *c->sub_iv);
    if (!c->cj || !c->lim || !c->aux || !c->scratch || !c->sub || !c->sub_lim || !c->sub_idx ||
        !c->sub_iv) {
        c->n_cap = 0;
        return -ENOMEM;
    }
    c->n_cap = cap;
    return 0;
}

/* The disturbance observer's estimate of the bias, measured total minus what the models
 * predict at the settings in force, smoothed. A model that changes (a new job learning its
 * curve, a dithered setting) moves its prediction and the estimate together, so nothing
 * winds up. */
static void observe_bias(struct eco_capper *c, const struct eco_capper_view *v)
{
    double pred = v->fixed_w;
    for (size_t i = 0; i < v->n; i++) {
        const struct eco_cap_job *j = &c->cj[i];
        double x = fmax(j->min_limit_w, fmin(j->max_limit_w, v->jobs[i].limit_w));
        double p = x, sp = 1;
        if (v->jobs[i].samples < c->cm.early && isfinite(v->jobs[i].measured_w))
            p = v->jobs[i].measured_w; /* its prior, far off, is about to be replaced */
        else
            j->predict(j->ctx, x, &p, &sp);
        pred += (isfinite(p) && p > 0 ? p : 0) * j->gpus;
    }
    double bias = v->measured_w - pred;
    c->bias = c->bias_n ? c->bias + c->cm.gain * (bias - c->bias) : bias;
    c->bias_n = 1;
    double bound = c->cm.bound * v->budget_w;
    c->bias = fmax(-bound, fmin(bound, c->bias));
}

static void feedback(struct eco_capper *c, const struct eco_capper_view *v)
{
    if (!(c->cm.gain > 0)) {
        c->integral = 0;
        return;
    }
    if (c->cm.observer) { /* the jobs get the budget less the bias and the margin */
        if (isfinite(v->measured_w))
            observe_bias(c, v);
        c->integral = -c->bias - c->cm.margin * v->budget_w;
    } else if (isfinite(v->measured_w)) {
        double target = v->budget_w * (1 - c->cm.margin);
        c->integral += c->cm.gain * (target - v->measured_w);
        double bound = c->cm.bound * v->budget_w;
        c->integral = fmax(-bound, fmin(bound, c->integral));
    }
    if (v->budget_step < 0 && c->integral > -c->cm.guard * v->budget_w)
        c->integral = -c->cm.guard * v->budget_w;
}

/* Anti-windup of the integral while the split does not bind (every job at its maximum): reset
 * to 0, except for a split of limits (limit_split: uniform), where it is kept at most at the
 * point where that split stops binding (the jobs' maxima over their GPUs, less the jobs' budget
 * without correction), and at least 0. A reset made such a split ring between binding and not:
 * the integral wound up while the GPUs drew less than their limits, the split let go, the reset
 * bound it again (uniform on the bench's 30,000 jobs: 17,000 of 61,000 decides let go, 38 % of
 * them by a reset; docs/policies/powercap.md, "Feedback"). A split of draws (proportional)
 * lets go where the draws fit, well below that edge: held there, a rebind started from a stale
 * correction (its largest excess on the bench's 100,000 jobs 2.2 -> 5.0 %), so it resets. */
static void unwind(struct eco_capper *c, const struct eco_capper_view *v)
{
    if (!c->limit_split) {
        c->integral = 0;
        return;
    }
    double top = 0;
    for (size_t i = 0; i < v->n; i++)
        top += c->cj[i].max_limit_w * c->cj[i].gpus;
    double edge = top - (v->budget_w - v->fixed_w);
    c->integral = fmin(c->integral, fmax(0, edge));
}

int eco_capper_has_integral(const struct eco_capper *c)
{
    return c && !c->cm.observer && c->cm.gain > 0;
}

int eco_capper_feedback_at_bound(const struct eco_capper *c, double budget_w)
{
    return eco_capper_has_integral(c) && c->integral >= c->cm.bound * budget_w * (1 - 1e-9);
}

int eco_capper__binds(const struct eco_cap_job *jobs, size_t n, const double *limits_w)
{
    for (size_t i = 0; i < n; i++)
        if (limits_w[i] < jobs[i].max_limit_w)
            return 1;
    return 0;
}

/* A split's limit for job j as decide hands it out: dithered while the job has fewer than
 * `early` samples, `fallback` for a NaN, kept in the range and snapped to the levels. */
static double explore(const struct eco_capper *c, const struct eco_cap_job *j, uint32_t samples,
                      double lim, double fallback, struct eco_rng *rng)
{
    if (c->cm.dither > 0) { /* one draw per job, so the stream does not depend on samples */
        /* Downward only, over twice the width: the same span of samples for the model, and a
         * dithered job never draws more than its share (a large job dithered upwards was the
         * largest overshoot; docs/policies/powercap.md, "Exploration"). */
        double d = samples < c->cm.early ? c->cm.dither : 0;
        lim -= eco_rng_uniform(rng) * 2 * d * (j->max_limit_w - j->min_limit_w);
    }
    if (!(lim == lim))
        lim = fallback;
    lim = fmax(j->min_limit_w, fmin(j->max_limit_w, lim));
    if (j->levels && j->n_levels)
        lim = eco_cap__snap_level(j, lim); /* the nearest level in range, ties to the lower */
    return lim;
}

int eco_capper__decide_family(struct eco_capper *c, const struct eco_capper_view *v,
                              struct eco_rng *rng, double *limits_w)
{
    return eco_capper__decide_common(c, v, rng, limits_w, c->split, c->use_truth);
}

/* The allocator's parameters for a decide over view v: the view's period and the family's
 * deadline-cost keys, over the instance's own (c->cap). */
static void split_params(const struct eco_capper *c, const struct eco_capper_view *v,
                         struct eco_cap_params *p)
{
    p->period_s = v->period_s > 0 ? v->period_s : 1;
    p->miss_cost = c->cm.miss;
    p->miss_sigma = c->cm.sigma;
    p->lost_release = (int)c->cm.lost;
}

/* View job j as the split gets it (without a memo): the weight rule, the truth for a policy
 * that reads it (use_truth), the trust region's bound above its setting (slew). */
static void split_job(const struct eco_capper *c, const struct eco_capper_job *j, int use_truth,
                      struct eco_cap_job *out)
{
    *out = j->cap;
    out->memo = NULL;
    out->fixed_curve = 0;
    if (c->cm.weight == ECO_CAPPER_WEIGHT_SIZE) {
        double ref = j->cap.miss_ref_s > 0 ? j->cap.miss_ref_s : j->cap.remaining_s;
        out->weight = ref > 0 ? j->cap.gpus / ref : 1;
    }
    if (use_truth && j->truth) { /* the measured curves: the same for the job's life */
        out->predict = j->truth;
        out->ctx = j->truth_ctx;
        out->fixed_curve = 1;
        out->curve_key = j->truth_key;
    }
    out->upper_w = 0;
    if (c->cm.slew > 0 && j->samples >= c->cm.early && isfinite(j->limit_w) &&
        j->limit_w >= j->cap.min_limit_w)
        out->upper_w = j->limit_w + c->cm.slew * (j->cap.max_limit_w - j->cap.min_limit_w);
}

/* The steady split (docs/policies/powercap.md, "Steady jobs"): the jobs the caller marks
 * steady whose last answer was their price solution's vertex keep their settings, and the
 * others are split over what those leave of gpu_budget_w. A kept job stands while the split's
 * price is one at which it would choose what it holds (its memo's interval, scaled by the
 * work done since); those it is not for join the split, which runs again, up to
 * STEADY_ROUNDS times while the split holds at most half the jobs (and stops once more join
 * than it held). After a split that did not stand the next 1, 2, 4 ... 64 decides do not try
 * (a busy period whose price moves every decide). 1 or 0 (binds or not)
 * when the answer stands, STEADY_NO when it does not (the full split then decides), or a
 * negative errno. Only for mpc and the oracle on one allocation (no plan, no grid floor), at
 * no budget step, and with more jobs than the exchange pass takes. */
#define STEADY_MIN_JOBS 17
#define STEADY_ROUNDS 4
#define STEADY_NO 2
#define STEADY_NA 3
#define STEADY_WAIT_MAX 64

static int steady_try(struct eco_capper *c, const struct eco_capper_view *v, double gpu_budget_w,
                      double *limits_w)
{
    size_t n = v->n, k = 0;
    /* kept jobs: aux[i] = their predicted power, sub_iv[2i..2i+1] their interval; aux[i] is
     * NaN for a job in the split */
    double held_w = 0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &c->cj[i];
        double x = limits_w[i], *iv = c->sub_iv + 2 * i;
        c->aux[i] = NAN;
        if (v->jobs[i].steady && j->memo && x >= j->min_limit_w && x <= j->max_limit_w &&
            eco_cap__steady_interval(j, &c->cap, &iv[0], &iv[1])) {
            double p = x, sp = 0;
            j->predict(j->ctx, x, &p, &sp);
            c->aux[i] = (isfinite(p) && p >= 0 ? p : x) * j->gpus;
            held_w += c->aux[i];
        } else {
            k++;
        }
    }
    for (int round = 0; round < STEADY_ROUNDS; round++) {
        if (k == 0 || 2 * k > n)
            return round ? STEADY_NO : STEADY_NA; /* NA: too few jobs steady to try */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (isnan(c->aux[i])) {
                c->sub[m] = c->cj[i];
                c->sub_lim[m] = limits_w[i];
                c->sub_idx[m++] = (uint32_t)i;
            }
        double price = eco_cap__allocate_part(c->sub, m, gpu_budget_w - held_w, &c->cap, c->sub_lim,
                                              c->scratch);
        if (price < 0)
            return price > -4096 ? (int)price : STEADY_NO; /* a negative errno */
        if (!isfinite(price))
            return STEADY_NO; /* not even the lowest powers fit */
        size_t out = 0;
        for (size_t i = 0; i < n; i++) {
            const double *iv = c->sub_iv + 2 * i;
            if (!isnan(c->aux[i]) && !(price >= iv[0] && price < iv[1])) {
                held_w -= c->aux[i]; /* it would move: into the split */
                c->aux[i] = NAN;
                out++;
            }
        }
        if (out) {
            if (round > 0 && out > m)
                return STEADY_NO; /* the price is moving away: the split would not stand */
            k += out;
            continue;
        }
        for (size_t t = 0; t < m; t++)
            limits_w[c->sub_idx[t]] = c->sub_lim[t];
        c->n_steady++;
        return price > 0 || eco_capper__binds(c->cj, n, limits_w);
    }
    return STEADY_NO;
}

static int steady_split(struct eco_capper *c, const struct eco_capper_view *v, double gpu_budget_w,
                        double *limits_w)
{
    size_t n = v->n;
    if (!c->cm.steady || c->split != eco_capper__split_alloc || c->cm.plan || c->cm.grid_floor ||
        n < STEADY_MIN_JOBS || !c->use_memo || v->budget_step)
        return STEADY_NO;
    if (c->steady_wait > 0) { /* backing off after splits that did not stand */
        c->steady_wait--;
        return STEADY_NO;
    }
    int rc = steady_try(c, v, gpu_budget_w, limits_w);
    if (rc == STEADY_NA)
        return STEADY_NO;
    if (rc == STEADY_NO) { /* wait 1, 2, 4 ... up to STEADY_WAIT_MAX decides before the next */
        c->steady_fail = c->steady_fail ? 2 * c->steady_fail : 1;
        if (c->steady_fail > STEADY_WAIT_MAX)
            c->steady_fail = STEADY_WAIT_MAX;
        c->steady_wait = c->steady_fail;
    } else if (rc >= 0) {
        c->steady_fail = 0;
    }
    return rc;
}

int eco_capper__decide_common(struct eco_capper *c, const struct eco_capper_view *v,
                              struct eco_rng *rng, double *limits_w, eco_capper_split_fn split,
                              int use_truth)
{
    size_t n = v->n;
    if (!n)
        return 0;
    int rc = grow(c, n);
    if (rc)
        return rc;
    split_params(c, v, &c->cap);
    c->gen++;
    for (size_t i = 0; i < n; i++) {
        const struct eco_capper_job *j = &v->jobs[i];
        split_job(c, j, use_truth, &c->cj[i]);
        c->cj[i].memo = c->use_memo ? memo_for(c, j->id) : NULL;
        if (!c->cj[i].predict)
            return -EINVAL;
        limits_w[i] = j->limit_w;
    }
    feedback(c, v);
    double gpu_budget = v->budget_w - v->fixed_w + c->integral;
    rc = steady_split(c, v, gpu_budget, limits_w);
    if (rc == STEADY_NO)
        rc = split(c, v, c->cj, gpu_budget, limits_w);
    if (c->use_memo)
        memo_sweep(c);
    if (rc < 0)
        return rc;
    if (rc == 0 && !c->cm.observer)
        unwind(c, v); /* anti-windup: little or nothing to correct while the split lets go */
    for (size_t i = 0; i < n; i++) {
        const struct eco_cap_job *j = &c->cj[i];
        double lim = limits_w[i];
        if (j->upper_w > 0 && j->upper_w < j->max_limit_w && lim > j->upper_w)
            lim = j->upper_w; /* a split without the bound (uniform, proportional) */
        c->lim[i] = lim;
        limits_w[i] = explore(c, j, v->jobs[i].samples, lim, v->jobs[i].limit_w, rng);
    }
    c->n_split = n;
    return 0;
}

int eco_capper_slack_choice(const struct eco_capper *c, const struct eco_capper_view *v,
                            const struct eco_capper_job *j, double *limit_w)
{
    if (!c || c->split != eco_capper__split_alloc || c->cm.plan || c->cm.grid_floor)
        return 0;
    /* the job as decide_common hands it to the split, and the split's parameters */
    struct eco_cap_params p = c->cap;
    split_params(c, v, &p);
    struct eco_cap_job cj;
    split_job(c, j, c->use_truth, &cj);
    if (!cj.predict)
        return 0;
    double lim = NAN;
    double cost = eco_cap_local_choice(&cj, &p, 0, &lim, NULL);
    if (!(cost == cost)) /* a bad job: decide's -EINVAL is the caller's to meet */
        return 0;
    *limit_w = lim;
    return 1;
}

uint32_t eco_capper_early(const struct eco_capper *c)
{
    return c->cm.early;
}

double eco_capper_explore(const struct eco_capper *c, const struct eco_cap_job *j, uint32_t samples,
                          double limit, struct eco_rng *rng)
{
    return explore(c, j, samples, limit, limit, rng);
}

/* ---- admission ----------------------------------------------------------------------------- */

/* Default grid of the deadline check when the instance has none. */
#define ADMIT_GRID 26

static double power_at(const struct eco_cap_job *j, double x, double *speed)
{
    double p = x, s = 1;
    j->predict(j->ctx, x, &p, &s);
    if (speed)
        *speed = s;
    return (isfinite(p) && p > 0 ? p : 0) * j->gpus;
}

/* Power above its minimum that running job j needs to meet its deadline: its lowest grid
 * setting predicted to finish within the slack; 0 when none does (a lost cause holds only its
 * minimum) or it has no deadline. */
static double deadline_extra(const struct eco_cap_job *j, uint32_t g)
{
    if (!(j->slack_s >= 0) || !j->predict || !(j->remaining_s > 0))
        return 0;
    double pmin = power_at(j, j->min_limit_w, NULL);
    for (uint32_t k = 0; k < g; k++) {
        double x = eco_cap_grid_limit(j->min_limit_w, j->max_limit_w, g, k), s;
        double p = power_at(j, x, &s);
        if (s > 0 && j->remaining_s / s <= j->slack_s)
            return fmax(0, p - pmin);
    }
    return 0;
}

int eco_capper_admit_default(struct eco_capper *c, const struct eco_capper_view *v,
                             double committed_min_w, const struct eco_capper_candidate *cand)
{
    double room = v->budget_w - v->fixed_w - committed_min_w - cand->min_w;
    if (!(room >= 0))
        return 0;
    if (!c || c->cm.admit != ECO_CAPPER_ADMIT_DEADLINE)
        return 1;
    if (cand->deadline_s >= 0) {
        double t = cand->cap.remaining_s, s = 1;
        if (cand->cap.predict)
            power_at(&cand->cap, cand->cap.max_limit_w, &s);
        if (s > 0)
            t /= s;
        if (cand->deadline_s - v->now_s <= c->cm.near * t)
            return 1; /* urgent: refusing it now loses its deadline for certain */
    }
    if (eco_capper_admit_cached(c, v->epoch))
        return c->admit_extra <= room ? 1 : 0;
    uint32_t g = c->cap.grid >= 2 ? c->cap.grid : ADMIT_GRID;
    double extra = 0;
    for (size_t i = 0; i < v->n; i++)
        extra += deadline_extra(&v->jobs[i].cap, g);
    c->admit_epoch = v->epoch;
    c->admit_extra = extra;
    return extra <= room ? 1 : 0;
}

int eco_capper_admit_cached(const struct eco_capper *c, uint64_t epoch)
{
    return c && !c->ops->admit && epoch && c->admit_epoch == epoch;
}

int eco_capper_admit_reads_jobs(const struct eco_capper *c)
{
    return c && (c->ops->admit || c->cm.admit == ECO_CAPPER_ADMIT_DEADLINE);
}

int eco_capper_reads_job_samples(const struct eco_capper *c)
{
    return c && c->ops->reads_job_samples;
}

int eco_capper_admit(struct eco_capper *c, const struct eco_capper_view *v, double committed_min_w,
                     const struct eco_capper_candidate *cand)
{
    if (c && c->ops->admit)
        return c->ops->admit(c, v, committed_min_w, cand);
    return eco_capper_admit_default(c, v, committed_min_w, cand);
}
