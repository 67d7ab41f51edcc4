/* SPDX-License-Identifier: MIT */
/* Container consolidation policies (docs/policies/consolidation.md, docs/policies/dgddep.md):
 * overload detection (THR, MAD, IQR, LR on GPU utilisation; dual GPU-utilisation and
 * GPU-memory thresholds), source selection (MMT; dual: until back under), destination (PABFD;
 * DGDDEP minimum energy), and evacuation of underloaded hosts, in one pass per period. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/consol.h"
#include "ecosched/catalog.h"

/* CloudSim's parameters (Beloglazov and Buyya, CCPE 2012, and the PlanetLab runner of
 * CloudSim 3/4): safety parameters of MAD 2.5, IQR 1.5 and LR 1.2; static threshold 0.8; the
 * static threshold 0.7 that MAD, IQR and LR fall back to while a host's history is shorter than
 * 12 (MAD, IQR) or 10 (LR) samples. */
#define THR_UPPER 0.8
#define FALLBACK_UPPER 0.7
#define MAD_SAFETY 2.5
#define IQR_SAFETY 1.5
#define LR_SAFETY 1.2
#define MAD_MIN_HIST 12
#define LR_WINDOW 10

#define NONE UINT32_MAX
#define SQRT_2PI 2.5066282746310002 /* the normal density's sqrt(2 pi) */

/* ---- thresholds ------------------------------------------------------------------------- */

void eco_consol_thresholds_default(struct eco_consol_thresholds *t)
{
    *t = (struct eco_consol_thresholds){.lo_util = ECO_CONSOL_LO_UTIL,
                                        .hi_util = ECO_CONSOL_HI_UTIL,
                                        .lo_mem = ECO_CONSOL_LO_MEM,
                                        .hi_mem = ECO_CONSOL_HI_MEM};
}

static const char *const thr_names[4] = {"LO_UTIL", "HI_UTIL", "LO_MEM", "HI_MEM"};

int eco_consol_thresholds_check(const struct eco_consol_thresholds *t, struct eco_error *err)
{
    const double v[4] = {t->lo_util, t->hi_util, t->lo_mem, t->hi_mem};
    for (int i = 0; i < 4; i++)
        if (!(v[i] >= 0 && v[i] <= 1))
            return eco_errorf(err, -EINVAL, "thresholds: %s = %g is outside 0-1", thr_names[i],
                              v[i]);
    if (!(t->lo_util < t->hi_util))
        return eco_errorf(err, -EINVAL, "thresholds: LO_UTIL %g must be below HI_UTIL %g",
                          t->lo_util, t->hi_util);
    if (!(t->lo_mem < t->hi_mem))
        return eco_errorf(err, -EINVAL, "thresholds: LO_MEM %g must be below HI_MEM %g", t->lo_mem,
                          t->hi_mem);
    /* Knobs: 0 is the policy's default. A safety parameter above 10 leaves no host ever
     * overloaded (MAD, IQR: 1 - 10 x spread) or every one (LR: 10 x forecast). */
    static const struct {
        const char *name;
        size_t off;
        double hi;
    } knobs[] = {
        {"thr", offsetof(struct eco_consol_thresholds, thr_upper), 1},
        {"mad-safety", offsetof(struct eco_consol_thresholds, mad_safety), 10},
        {"iqr-safety", offsetof(struct eco_consol_thresholds, iqr_safety), 10},
        {"lr-safety", offsetof(struct eco_consol_thresholds, lr_safety), 10},
    };
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        double k = *(const double *)((const char *)t + knobs[i].off);
        if (!(k >= 0 && k <= knobs[i].hi))
            return eco_errorf(err, -EINVAL, "knobs: %s = %g is outside 0-%g (0: the default)",
                              knobs[i].name, k, knobs[i].hi);
    }
    if (!(t->coloc_gate >= 0 && t->coloc_gate < 1))
        return eco_errorf(err, -EINVAL,
                          "knobs: coloc-gate = %g is outside 0-1 (a slowdown share below 1; 0: "
                          "no gate)",
                          t->coloc_gate);
    if (!(t->underload_horizon_s <= 366 * 86400.0)) /* a year: beyond any run, and not NaN */
        return eco_errorf(err, -EINVAL, "knobs: underload-horizon = %g s is above a year",
                          t->underload_horizon_s);
    return 0;
}

int eco_consol_thresholds_parse(const char *s, struct eco_consol_thresholds *t,
                                struct eco_error *err)
{
    double v[4];
    const char *p = s ? s : "";
    static const char form[] = "expected LO_UTIL,HI_UTIL,LO_MEM,HI_MEM: four numbers in 0-1, "
                               "e.g. 0.3,0.8,0.3,0.8";
    for (int i = 0; i < 4; i++) {
        char *end;
        if (i > 0 && p[-1] != ',')
            return eco_errorf(err, -EINVAL, "thresholds: %s is missing in '%s' (%s)", thr_names[i],
                              s, form);
        v[i] = strtod(p, &end);
        if (end == p || (*end && *end != ','))
            return eco_errorf(err, -EINVAL, "thresholds: %s is not a number in '%s' (%s)",
                              thr_names[i], s ? s : "", form);
        if (i == 3 && *end)
            return eco_errorf(err, -EINVAL, "thresholds: unexpected text after HI_MEM in '%s' (%s)",
                              s, form);
        p = *end ? end + 1 : end;
    }
    struct eco_consol_thresholds n = *t;
    n.lo_util = v[0];
    n.hi_util = v[1];
    n.lo_mem = v[2];
    n.hi_mem = v[3];
    int rc = eco_consol_thresholds_check(&n, err);
    if (!rc)
        *t = n;
    return rc;
}

/* ---- decisions -------------------------------------------------------------------------- */

static int push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        uint32_t *p = realloc(*a, c * sizeof *p);
        if (!p)
            return -ENOMEM;
        *a = p;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

static int push_move(struct eco_consol_decisions *d, uint32_t ctr, uint32_t to)
{
    if (d->n_moves == d->cap_moves) {
        size_t c = d->cap_moves ? d->cap_moves * 2 : 16;
        struct eco_consol_move *p = realloc(d->moves, c * sizeof *p);
        if (!p)
            return -ENOMEM;
        d->moves = p;
        d->cap_moves = c;
    }
    d->moves[d->n_moves++] = (struct eco_consol_move){ctr, to};
    return 0;
}

void eco_consol_decisions_reset(struct eco_consol_decisions *d)
{
    d->n_moves = d->n_off = d->n_wake = 0;
}

void eco_consol_decisions_fini(struct eco_consol_decisions *d)
{
    free(d->moves);
    free(d->off);
    free(d->wake);
    *d = (struct eco_consol_decisions){0};
}

/* ---- models and detectors --------------------------------------------------------------- */

/* One GPU holding a context at utilisation u (0..1): the shape of eco_node_group_gpu_power_w. */
static double gpu_held_w(const struct eco_consol_host *h, double u)
{
    double hi = h->gpu_busy_w > h->gpu_low_w ? h->gpu_busy_w : h->gpu_low_w;
    if (u <= ECO_LOW_UTIL)
        return h->gpu_ctx_w + (h->gpu_low_w - h->gpu_ctx_w) * u / ECO_LOW_UTIL;
    return h->gpu_low_w + (hi - h->gpu_low_w) * (u - ECO_LOW_UTIL) / (1 - ECO_LOW_UTIL);
}

double eco_consol_host_power_held_w(const struct eco_consol_host *h, double util_gpus,
                                    double held_gpus)
{
    double u = util_gpus < 0 ? 0 : util_gpus > h->gpus ? h->gpus : util_gpus;
    if (!(h->gpu_ctx_w > 0) && !(h->gpu_low_w > 0))
        return h->base_w + h->gpus * h->gpu_idle_w + u * (h->gpu_busy_w - h->gpu_idle_w);
    double k = held_gpus < 0 ? 0 : held_gpus > h->gpus ? h->gpus : held_gpus;
    if (u > k) /* demand needs at least this many GPUs */
        k = ceil(u - 1e-9);
    if (!(k > 0))
        return h->base_w + h->gpus * h->gpu_idle_w;
    return h->base_w + (h->gpus - k) * h->gpu_idle_w + k * gpu_held_w(h, u / k);
}

double eco_consol_host_power_w(const struct eco_consol_host *h, double util_gpus)
{
    return eco_consol_host_power_held_w(h, util_gpus, util_gpus > 0 ? ceil(util_gpus - 1e-9) : 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile with linear interpolation between closest ranks, over sorted v. */
static double pct_sorted(const double *v, size_t n, double p)
{
    double r = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)r;
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (r - (double)lo) * (v[lo + 1] - v[lo]);
}

double eco_consol_mad_threshold(const double *hist, size_t n, double safety)
{
    double v[ECO_CONSOL_HISTORY], dev[ECO_CONSOL_HISTORY];
    if (n < MAD_MIN_HIST)
        return -1;
    if (n > ECO_CONSOL_HISTORY) {
        hist += n - ECO_CONSOL_HISTORY;
        n = ECO_CONSOL_HISTORY;
    }
    memcpy(v, hist, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    double med = pct_sorted(v, n, 50);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(hist[i] - med);
    qsort(dev, n, sizeof *dev, cmp_double);
    return 1.0 - safety * pct_sorted(dev, n, 50);
}

double eco_consol_iqr_threshold(const double *hist, size_t n, double safety)
{
    double v[ECO_CONSOL_HISTORY];
    if (n < MAD_MIN_HIST)
        return -1;
    if (n > ECO_CONSOL_HISTORY) {
        hist += n - ECO_CONSOL_HISTORY;
        n = ECO_CONSOL_HISTORY;
    }
    memcpy(v, hist, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    return 1.0 - safety * (pct_sorted(v, n, 75) - pct_sorted(v, n, 25));
}

double eco_consol_lr_predict(const double *hist, size_t n, double ahead)
{
    if (n < LR_WINDOW)
        return -1;
    const double *y = hist + (n - LR_WINDOW);
    /* Tricube weights (Cleveland, JASA 1979) on the distance from the newest sample, so the
     * recent samples count most: w_i = (1 - (d_i / span)^3)^3, d_i = (n - 1 - i), span = n. */
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < LR_WINDOW; i++) {
        double d = (double)(LR_WINDOW - 1 - i) / LR_WINDOW;
        double w = pow(1 - d * d * d, 3);
        double x = i + 1;
        sw += w;
        sx += w * x;
        sy += w * y[i];
        sxx += w * x * x;
        sxy += w * x * y[i];
    }
    double den = sw * sxx - sx * sx;
    double b = den != 0 ? (sw * sxy - sx * sy) / den : 0;
    double a = (sy - b * sx) / sw;
    return a + b * (LR_WINDOW + ahead);
}

/* ---- the pass ----------------------------------------------------------------------------- */

enum detector { DET_NONE, DET_THR, DET_MAD, DET_IQR, DET_LR, DET_DUAL };
enum dest { DEST_PABFD, DEST_DGDDEP, DEST_FF };

struct eco_consol {
    enum detector det;
    enum dest dest;
    struct eco_consol_thresholds t;
    double thr, mad_safety, iqr_safety, lr_safety; /* the knobs, defaults applied */
    double horizon_s;                              /* underload energy rule; 0: off */
    /* Scratch, grown to the view's size. */
    uint32_t cap_h, cap_c;
    double *util, *mem; /* per host: demand in GPUs and MiB */
    double *held;       /* per host: GPUs its containers span (GPUs holding a context, uncapped) */
    double *hist;       /* per host: ECO_CONSOL_HISTORY summed samples (GPUs), end-aligned */
    uint32_t *head, *next, *prev, *cur; /* per-host container lists; cur: host of each container */
    uint8_t *over, *touched, *tried, *evac, *on;
    uint32_t *order, *list, *undo, *cand;
    double *key;
    uint32_t n_hist;
    /* The co-location gate's answers within a pass, per container and host: the host's version
     * (ver: bumped whenever a container joins or leaves it) when asked, and the answer. */
    uint64_t *ver, clock;
    uint64_t *gate_at;
    uint8_t *gate_ok;
    size_t cap_gate;
};

static void *grow(void *p, size_t n, size_t sz, int *fail)
{
    void *q = realloc(p, (n * sz) != 0 ? n * sz : 1);
    if (!q)
        *fail = 1;
    return q ? q : p;
}

static int ensure(struct eco_consol *p, uint32_t nh, uint32_t nc)
{
    int fail = 0;
    if (nh > p->cap_h) {
        p->util = grow(p->util, nh, sizeof(double), &fail);
        p->mem = grow(p->mem, nh, sizeof(double), &fail);
        p->held = grow(p->held, nh, sizeof(double), &fail);
        p->hist = grow(p->hist, (size_t)nh * ECO_CONSOL_HISTORY, sizeof(double), &fail);
        p->head = grow(p->head, nh, sizeof(uint32_t), &fail);
        p->over = grow(p->over, nh, 1, &fail);
        p->touched = grow(p->touched, nh, 1, &fail);
        p->tried = grow(p->tried, nh, 1, &fail);
        p->evac = grow(p->evac, nh, 1, &fail);
        p->on = grow(p->on, nh, 1, &fail);
        p->ver = grow(p->ver, nh, sizeof(uint64_t), &fail);
        if (!fail)
            p->cap_h = nh;
    }
    if (nc > p->cap_c) {
        p->next = grow(p->next, nc, sizeof(uint32_t), &fail);
        p->prev = grow(p->prev, nc, sizeof(uint32_t), &fail);
        p->cur = grow(p->cur, nc, sizeof(uint32_t), &fail);
        p->order = grow(p->order, nc, sizeof(uint32_t), &fail);
        p->list = grow(p->list, nc, sizeof(uint32_t), &fail);
        p->undo = grow(p->undo, nc, sizeof(uint32_t), &fail);
        p->cand = grow(p->cand, nc, sizeof(uint32_t), &fail);
        p->key = grow(p->key, nc, sizeof(double), &fail);
        if (!fail)
            p->cap_c = nc;
    }
    if (p->t.coloc_gate > 0 && (size_t)nh * nc > p->cap_gate) {
        p->gate_at = grow(p->gate_at, (size_t)nh * nc, sizeof(uint64_t), &fail);
        p->gate_ok = grow(p->gate_ok, (size_t)nh * nc, 1, &fail);
        if (!fail) {
            memset(p->gate_at, 0, (size_t)nh * nc * sizeof(uint64_t));
            p->cap_gate = (size_t)nh * nc;
        }
    }
    if (!p->util || !p->next)
        fail = 1;
    return fail ? -ENOMEM : 0;
}

/* Adds (sign +1) or removes (-1) container c's demand and history on host h. */
static void account(struct eco_consol *p, const struct eco_consol_view *v, uint32_t c, uint32_t h,
                    double sign)
{
    const struct eco_consol_ctr *x = &v->ctrs[c];
    p->ver[h] = ++p->clock;
    p->util[h] += sign * x->util_gpus;
    p->mem[h] += sign * x->mem_mb;
    p->held[h] += sign * x->gpus;
    double *hh = p->hist + (size_t)h * ECO_CONSOL_HISTORY;
    for (uint32_t k = 0; k < x->n_hist && k < ECO_CONSOL_HISTORY; k++)
        hh[ECO_CONSOL_HISTORY - 1 - k] += sign * x->hist[x->n_hist - 1 - k];
}

static void attach(struct eco_consol *p, const struct eco_consol_view *v, uint32_t c, uint32_t h)
{
    p->cur[c] = h;
    p->prev[c] = NONE;
    p->next[c] = p->head[h];
    if (p->head[h] != NONE)
        p->prev[p->head[h]] = c;
    p->head[h] = c;
    account(p, v, c, h, +1);
}

static void detach(struct eco_consol *p, const struct eco_consol_view *v, uint32_t c)
{
    uint32_t h = p->cur[c];
    if (p->prev[c] != NONE)
        p->next[p->prev[c]] = p->next[c];
    else
        p->head[h] = p->next[c];
    if (p->next[c] != NONE)
        p->prev[p->next[c]] = p->prev[c];
    p->cur[c] = NONE;
    account(p, v, c, h, -1);
}

/* Is host h overloaded with extra demand (du GPUs, dm MiB, history of container `extra` if not
 * NONE) added? */
static int is_over(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t h,
                   uint32_t extra)
{
    const struct eco_consol_host *H = &v->hosts[h];
    double du = 0, dm = 0;
    const struct eco_consol_ctr *x = extra != NONE ? &v->ctrs[extra] : NULL;
    if (x) {
        du = x->util_gpus;
        dm = x->mem_mb;
    }
    double u = (p->util[h] + du) / H->gpus;
    double m = H->mem_cap_mb > 0 ? (p->mem[h] + dm) / H->mem_cap_mb : 0;
    if (p->det == DET_DUAL)
        return u > p->t.hi_util + 1e-12 || m > p->t.hi_mem + 1e-12;
    if (p->det == DET_THR)
        return u > p->thr + 1e-12;
    /* History-based detectors: the host's summed history as shares of its GPUs. */
    double hs[ECO_CONSOL_HISTORY];
    uint32_t n = p->n_hist;
    const double *hh = p->hist + (size_t)h * ECO_CONSOL_HISTORY + (ECO_CONSOL_HISTORY - n);
    for (uint32_t k = 0; k < n; k++) {
        double add = 0;
        if (x && k + x->n_hist >= n)
            add = x->hist[k + x->n_hist - n];
        hs[k] = (hh[k] + add) / H->gpus;
    }
    if (p->det == DET_LR) {
        double mig = 0;
        for (uint32_t c = p->head[h]; c != NONE; c = p->next[c])
            if (v->ctrs[c].mig_s > mig)
                mig = v->ctrs[c].mig_s;
        if (x && x->mig_s > mig)
            mig = x->mig_s;
        double pred = eco_consol_lr_predict(hs, n, ceil(mig / v->period_s));
        if (pred < 0)
            return u > FALLBACK_UPPER + 1e-12;
        return pred * p->lr_safety >= 1.0;
    }
    double thr = p->det == DET_MAD ? eco_consol_mad_threshold(hs, n, p->mad_safety)
                                   : eco_consol_iqr_threshold(hs, n, p->iqr_safety);
    if (thr < 0)
        thr = FALLBACK_UPPER;
    return u > thr + 1e-12;
}

static int is_under(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t h)
{
    const struct eco_consol_host *H = &v->hosts[h];
    double m = H->mem_cap_mb > 0 ? p->mem[h] / H->mem_cap_mb : 0;
    return p->util[h] / H->gpus < p->t.lo_util && m < p->t.lo_mem;
}

/* Does container c fit host h's capacity (GPU count, utilisation and memory at most 100%)? */
static int fits(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t c, uint32_t h)
{
    const struct eco_consol_host *H = &v->hosts[h];
    const struct eco_consol_ctr *x = &v->ctrs[c];
    return x->gpus <= H->gpus && p->util[h] + x->util_gpus <= H->gpus + 1e-9 &&
           p->mem[h] + x->mem_mb <= H->mem_cap_mb + 1e-6;
}

/* The rise of host h's power if container c joined it (from off_w for a host that is off),
 * with the GPU power states: a container that needs GPUs no other one holds adds their
 * context power, one that shares held GPUs adds only its utilisation's. W. */
static double power_rise_w(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t c,
                           uint32_t h)
{
    const struct eco_consol_host *H = &v->hosts[h];
    const struct eco_consol_ctr *x = &v->ctrs[c];
    double after = eco_consol_host_power_held_w(H, p->util[h] + x->util_gpus, p->held[h] + x->gpus);
    return after - (p->on[h] ? eco_consol_host_power_held_w(H, p->util[h], p->held[h]) : H->off_w);
}

/* Energy DGDDEP charges for putting container c on host h for the next period: the rise of the
 * host's power over the period, plus the container's share of the host's idle power (base and
 * idle GPUs, paid while the host stays on) in proportion to its dominant share of the host's
 * load with it there, both stretched by the interference slowdown the container would suffer
 * there (the same work takes 1/speed as long); an off host adds its boot. The idle share makes
 * a fuller host cheaper than an emptier one the rise alone would favour (on the convex GPU
 * power curve a lightly loaded GPU takes load at less power), so that emptier hosts drain
 * (docs/policies/dgddep.md, "Re-allocation cost"). */
static double dgddep_cost(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t c,
                          uint32_t h)
{
    const struct eco_consol_host *H = &v->hosts[h];
    const struct eco_consol_ctr *x = &v->ctrs[c];
    double cost = power_rise_w(p, v, c, h) * v->period_s;
    if (!p->on[h])
        return cost + eco_consol_host_power_w(H, 0) * H->boot_s;
    double mem = H->mem_cap_mb > 0 ? H->mem_cap_mb : 1;
    double own = fmax(x->util_gpus / H->gpus, x->mem_mb / mem);
    double all = fmax((p->util[h] + x->util_gpus) / H->gpus, (p->mem[h] + x->mem_mb) / mem);
    if (all > 0)
        cost += eco_consol_host_power_w(H, 0) * v->period_s * own / all;
    if (v->interference) {
        size_t n = 0;
        for (uint32_t o = p->head[h]; o != NONE; o = p->next[o])
            p->list[n++] = o;
        double s = v->interference(v->interference_ctx, c, h, p->list, n);
        if (s > 0 && s < 1)
            cost /= s;
    }
    return cost;
}

/* The co-location gate (docs/policies/consolidation.md, "Co-location gate"): may container c
 * join host h? Refused when the decide model predicts a slowdown above the gate for c or for a
 * container already on h. An off or empty host, no gate or no model: yes. */
static int gate_ok(struct eco_consol *p, const struct eco_consol_view *v, uint32_t c, uint32_t h)
{
    if (!(p->t.coloc_gate > 0) || !v->coloc_worst || !p->on[h] || p->head[h] == NONE)
        return 1;
    size_t at = (size_t)c * v->n_hosts + h;
    if (p->gate_at[at] == p->ver[h]) /* asked since h last changed */
        return p->gate_ok[at];
    size_t n = 0;
    for (uint32_t o = p->head[h]; o != NONE; o = p->next[o])
        p->list[n++] = o;
    int ok = v->coloc_worst(v->interference_ctx, c, h, p->list, n) >= 1 - p->t.coloc_gate - 1e-12;
    p->gate_at[at] = p->ver[h];
    p->gate_ok[at] = (uint8_t)ok;
    return ok;
}

/* The destination for container c, or NONE. `allow_off`: may wake an off host. `src`: its
 * source (excluded). Hosts flagged over, tried or evacuated are excluded. */
static uint32_t find_dest(struct eco_consol *p, const struct eco_consol_view *v, uint32_t c,
                          uint32_t src, int allow_off)
{
    uint32_t best = NONE;
    double best_cost = INFINITY;
    for (int pass = 0; pass < 2 && best == NONE; pass++) {
        /* DGDDEP looks at hosts that are on first and wakes one only when none fits; PABFD
         * weighs all hosts by power increase in one pass. */
        int want_on = pass == 0;
        if (p->dest != DEST_DGDDEP && pass == 1)
            break;
        for (uint32_t h = 0; h < v->n_hosts; h++) {
            if (h == src || p->over[h] || p->tried[h] || p->evac[h])
                continue;
            if (!p->on[h] && !allow_off)
                continue;
            if (p->dest == DEST_DGDDEP && (p->on[h] != 0) != want_on)
                continue;
            if (!fits(p, v, c, h))
                continue;
            /* CloudSim skips the after-allocation check on an empty host; the dual thresholds
             * never let a container push any host over them. */
            if ((p->det == DET_DUAL || p->util[h] > 0) && is_over(p, v, h, c))
                continue;
            double cost;
            if (p->dest == DEST_DGDDEP)
                cost = dgddep_cost(p, v, c, h);
            else if (p->dest == DEST_FF) /* the first host that fits, hosts that are on first */
                cost = (double)h + (p->on[h] ? 0 : v->n_hosts);
            else
                cost = power_rise_w(p, v, c, h);
            /* The gate only where it could change the choice (the result is the cheapest host
             * that passes it). */
            if (cost < best_cost && gate_ok(p, v, c, h)) {
                best_cost = cost;
                best = h;
            }
        }
    }
    return best;
}

/* Size by which containers are ordered for placement, largest first: PABFD by utilisation
 * (CloudSim sorts VMs by CPU utilisation), DGDDEP by the dominant share of a host's GPUs or
 * GPU memory. */
static double size_key(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t c)
{
    const struct eco_consol_ctr *x = &v->ctrs[c];
    if (p->dest != DEST_DGDDEP)
        return x->util_gpus;
    const struct eco_consol_host *H = &v->hosts[x->host];
    double u = x->util_gpus / H->gpus, m = H->mem_cap_mb > 0 ? x->mem_mb / H->mem_cap_mb : 0;
    return u > m ? u : m;
}

/* Sorts idx[0..n) by p->key descending, ties by index (deterministic). Insertion sort: the
 * lists are a host's containers or one period's migrations, tens to hundreds long. */
static void sort_desc(struct eco_consol *p, uint32_t *idx, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = idx[i];
        size_t j = i;
        while (j > 0) {
            uint32_t y = idx[j - 1];
            if (p->key[y] > p->key[x] || (p->key[y] == p->key[x] && y < x))
                break;
            idx[j] = y;
            j--;
        }
        idx[j] = x;
    }
}

/* Picks the containers to move off overloaded host h into to[] (detached); returns how many.
 * MMT: the one with the shortest migration until the host is no longer overloaded. Dual: one
 * container that alone brings the host back under, the quickest to migrate; else the one that
 * relieves the overloaded resource(s) most, and again. */
static size_t select_from(struct eco_consol *p, const struct eco_consol_view *v, uint32_t h,
                          uint32_t *to)
{
    size_t n = 0;
    while (is_over(p, v, h, NONE)) {
        uint32_t pick = NONE;
        double best = INFINITY;
        if (p->det == DET_DUAL) {
            size_t k = 0;
            for (uint32_t c = p->head[h]; c != NONE; c = p->next[c])
                p->cand[k++] = c;
            for (size_t i = 0; i < k; i++) {
                uint32_t c = p->cand[i];
                if (v->ctrs[c].pinned || v->ctrs[c].mig_s > best ||
                    (v->ctrs[c].mig_s == best && c > pick))
                    continue;
                detach(p, v, c);
                int ok = !is_over(p, v, h, NONE);
                attach(p, v, c, h);
                if (ok) {
                    best = v->ctrs[c].mig_s;
                    pick = c;
                }
            }
            if (pick == NONE) {
                const struct eco_consol_host *H = &v->hosts[h];
                int ou = p->util[h] / H->gpus > p->t.hi_util;
                int om = H->mem_cap_mb > 0 && p->mem[h] / H->mem_cap_mb > p->t.hi_mem;
                double top = -1;
                for (uint32_t c = p->head[h]; c != NONE; c = p->next[c]) {
                    if (v->ctrs[c].pinned)
                        continue;
                    double s = (ou ? v->ctrs[c].util_gpus / H->gpus : 0) +
                               (om ? v->ctrs[c].mem_mb / H->mem_cap_mb : 0);
                    if (s > top || (s == top && c < pick)) {
                        top = s;
                        pick = c;
                    }
                }
            }
        } else {
            for (uint32_t c = p->head[h]; c != NONE; c = p->next[c]) {
                const struct eco_consol_ctr *x = &v->ctrs[c];
                if (x->pinned)
                    continue;
                if (x->mig_s < best || (x->mig_s == best && c < pick)) {
                    best = x->mig_s;
                    pick = c;
                }
            }
        }
        if (pick == NONE)
            break;
        detach(p, v, pick);
        to[n++] = pick;
    }
    return n;
}

static int note_wake(struct eco_consol *p, struct eco_consol_decisions *out, uint32_t h)
{
    if (p->on[h])
        return 0;
    p->on[h] = 1;
    return push_u32(&out->wake, &out->n_wake, &out->cap_wake, h);
}

/* Places the detached containers of list[0..n) (ordered largest first); those without a
 * destination go back to their source. */
static int place_all(struct eco_consol *p, const struct eco_consol_view *v, uint32_t *list,
                     size_t n, struct eco_consol_decisions *out)
{
    for (size_t i = 0; i < n; i++)
        p->key[list[i]] = size_key(p, v, list[i]);
    sort_desc(p, list, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t c = list[i], src = v->ctrs[c].host;
        uint32_t h = find_dest(p, v, c, src, 1);
        if (h == NONE) {
            attach(p, v, c, src);
            continue;
        }
        if (note_wake(p, out, h) || push_move(out, c, h))
            return -ENOMEM;
        attach(p, v, c, h);
        p->touched[h] = 1;
    }
    return 0;
}

/* Spread of host h's summed utilisation history (GPUs): the root-mean-square change from one
 * period to the next (a random-walk forecast one period ahead). */
static double history_spread(const struct eco_consol *p, uint32_t h)
{
    const double *hh = p->hist + (size_t)h * ECO_CONSOL_HISTORY + (ECO_CONSOL_HISTORY - p->n_hist);
    double ss = 0;
    for (uint32_t k = 1; k < p->n_hist; k++)
        ss += (hh[k] - hh[k - 1]) * (hh[k] - hh[k - 1]);
    return p->n_hist > 1 ? sqrt(ss / (p->n_hist - 1)) : 0;
}

/* Demand of mean mu and spread sd against `cap` GPUs: the chance it exceeds cap (*p_over) and
 * the expected excess E[(X - cap)+], GPUs, X normal. */
static double overflow(double mu, double sd, double cap, double *p_over)
{
    if (!(sd > 0)) {
        *p_over = mu > cap + 1e-9;
        return mu > cap ? mu - cap : 0;
    }
    double z = (cap - mu) / sd, q = 0.5 * erfc(z / sqrt(2.0));
    *p_over = q;
    return sd * exp(-0.5 * z * z) / SQRT_2PI - (cap - mu) * q;
}

/* Power of host h with the containers l[0..n) on it (detached now), W. */
static double source_w(const struct eco_consol_view *v, uint32_t h, const uint32_t *l, size_t n)
{
    double u = 0, g = 0;
    for (size_t i = 0; i < n; i++) {
        u += v->ctrs[l[i]].util_gpus;
        g += v->ctrs[l[i]].gpus;
    }
    return eco_consol_host_power_held_w(&v->hosts[h], u, g);
}

/* How much more the destinations draw with the containers l[0..n) tentatively on dest[0..n)
 * than without them, each destination once, W. */
static double dest_rise_w(const struct eco_consol *p, const struct eco_consol_view *v,
                          const uint32_t *l, const uint32_t *dest, size_t n)
{
    double rise = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < i && dest[j] != dest[i])
            j++;
        if (j < i)
            continue; /* counted with its first container */
        double du = 0, dg = 0;
        for (size_t k = i; k < n; k++)
            if (dest[k] == dest[i]) {
                du += v->ctrs[l[k]].util_gpus;
                dg += v->ctrs[l[k]].gpus;
            }
        const struct eco_consol_host *D = &v->hosts[dest[i]];
        uint32_t d = dest[i];
        rise += eco_consol_host_power_held_w(D, p->util[d], p->held[d]) -
                eco_consol_host_power_held_w(D, p->util[d] - du, p->held[d] - dg);
    }
    return rise;
}

/* The underload energy rule (docs/policies/dgddep.md, "Underload"): with host h's containers
 * l[0..n) tentatively on dest[0..n), is emptying h worth it? Gain: h's power with its containers
 * (GPU power states: their contexts, their load) above off, less what the destinations draw
 * more with them, over the horizon, less one boot back. Cost: the migrations' energy and the paused
 * work redone at the source's busy GPU power. Risk, for each container: the chance its destination
 * overflows next period times the cost of moving it again, plus the overflow it adds there
 * (expected excess GPUs with it less without, for a period) at a full destination's energy per GPU.
 * Always 1 when the rule is off. */
static int worth_emptying(const struct eco_consol *p, const struct eco_consol_view *v, uint32_t h,
                          const uint32_t *l, const uint32_t *dest, size_t n)
{
    if (!(p->horizon_s > 0))
        return 1;
    const struct eco_consol_host *H = &v->hosts[h];
    double idle = eco_consol_host_power_w(H, 0);
    double gain = (source_w(v, h, l, n) - H->off_w - dest_rise_w(p, v, l, dest, n)) * p->horizon_s -
                  idle * H->boot_s;
    double cost = 0, risk = 0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_consol_ctr *x = &v->ctrs[l[i]];
        const struct eco_consol_host *D = &v->hosts[dest[i]];
        double move = x->mig_j + x->mig_s * x->util_gpus * H->gpu_busy_w;
        double sd = history_spread(p, dest[i]), q, q0;
        double with = overflow(p->util[dest[i]], sd, D->gpus, &q);
        double without = overflow(p->util[dest[i]] - x->util_gpus, sd, D->gpus, &q0);
        double per_gpu_w = eco_consol_host_power_w(D, D->gpus) / D->gpus;
        cost += move;
        risk += q * move + (with - without) * v->period_s * per_gpu_w;
    }
    return gain > cost + risk;
}

/* Tries to move every container off host h to hosts that are on; all or nothing (and, with the
 * energy rule, only when it saves energy). */
static int evacuate(struct eco_consol *p, const struct eco_consol_view *v, uint32_t h,
                    struct eco_consol_decisions *out)
{
    size_t n = 0;
    for (uint32_t c = p->head[h]; c != NONE; c = p->next[c]) {
        if (v->ctrs[c].pinned)
            return 0;
        p->list[n++] = c;
    }
    if (!n)
        return 0;
    uint32_t *l = p->order;
    memcpy(l, p->list, n * sizeof *l);
    for (size_t i = 0; i < n; i++) {
        p->key[l[i]] = size_key(p, v, l[i]);
        detach(p, v, l[i]);
    }
    sort_desc(p, l, n);
    p->evac[h] = 1;
    size_t placed = 0;
    for (; placed < n; placed++) {
        uint32_t c = l[placed];
        uint32_t d = find_dest(p, v, c, h, 0);
        if (d == NONE)
            break;
        attach(p, v, c, d);
        p->undo[placed] = d;
    }
    if (placed < n || !worth_emptying(p, v, h, l, p->undo, n)) { /* roll back */
        for (size_t i = 0; i < placed; i++) {
            detach(p, v, l[i]);
            attach(p, v, l[i], h);
        }
        for (size_t i = placed; i < n; i++)
            attach(p, v, l[i], h);
        p->evac[h] = 0;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (push_move(out, l[i], p->undo[i]))
            return -ENOMEM;
        p->touched[p->undo[i]] = 1;
    }
    return 0;
}

static int decide(struct eco_consol *p, const struct eco_consol_view *v,
                  struct eco_consol_decisions *out)
{
    uint32_t nh = v->n_hosts, nc = v->n_ctrs;
    eco_consol_decisions_reset(out);
    if (ensure(p, nh, nc))
        return -ENOMEM;
    memset(p->util, 0, nh * sizeof *p->util);
    memset(p->mem, 0, nh * sizeof *p->mem);
    memset(p->held, 0, nh * sizeof *p->held);
    memset(p->hist, 0, (size_t)nh * ECO_CONSOL_HISTORY * sizeof *p->hist);
    memset(p->over, 0, nh);
    memset(p->touched, 0, nh);
    memset(p->tried, 0, nh);
    memset(p->evac, 0, nh);
    p->n_hist = 0;
    for (uint32_t h = 0; h < nh; h++) {
        p->head[h] = NONE;
        p->ver[h] = ++p->clock;
        p->on[h] = v->hosts[h].on;
    }
    for (uint32_t c = 0; c < nc; c++) {
        if (v->ctrs[c].n_hist > p->n_hist)
            p->n_hist =
                v->ctrs[c].n_hist > ECO_CONSOL_HISTORY ? ECO_CONSOL_HISTORY : v->ctrs[c].n_hist;
        attach(p, v, c, v->ctrs[c].host);
    }
    if (p->det != DET_NONE) {
        /* 1. Overloaded hosts and the containers that leave them. */
        for (uint32_t h = 0; h < nh; h++)
            p->over[h] = p->on[h] && p->head[h] != NONE && is_over(p, v, h, NONE);
        size_t n = 0;
        for (uint32_t h = 0; h < nh; h++)
            if (p->over[h])
                n += select_from(p, v, h, p->order + n);
        memcpy(p->undo, p->order, n * sizeof *p->undo);
        if (place_all(p, v, p->undo, n, out))
            return -ENOMEM;
        /* 2. Underloaded hosts, least utilised first: evacuate all or nothing. CloudSim tries
         * every host in turn; the dual thresholds only hosts under both lower ones. */
        for (;;) {
            uint32_t pick = NONE;
            for (uint32_t h = 0; h < nh; h++) {
                if (!p->on[h] || p->over[h] || p->tried[h] || p->touched[h] || p->head[h] == NONE)
                    continue;
                if (p->det == DET_DUAL && !is_under(p, v, h))
                    continue;
                double u = p->util[h] / v->hosts[h].gpus;
                if (pick == NONE || u < p->util[pick] / v->hosts[pick].gpus)
                    pick = h;
            }
            if (pick == NONE)
                break;
            p->tried[pick] = 1;
            if (evacuate(p, v, pick, out))
                return -ENOMEM;
        }
    }
    /* 3. Hosts left without containers power down. */
    for (uint32_t h = 0; h < nh; h++)
        if (p->on[h] && p->head[h] == NONE && push_u32(&out->off, &out->n_off, &out->cap_off, h))
            return -ENOMEM;
    return 0;
}

static struct eco_consol *create(enum detector det, enum dest dest,
                                 const struct eco_consol_thresholds *t, struct eco_error *err)
{
    struct eco_consol_thresholds d;
    eco_consol_thresholds_default(&d);
    if (t) {
        if (eco_consol_thresholds_check(t, err))
            return NULL;
        d = *t;
    }
    struct eco_consol *p = calloc(1, sizeof *p);
    if (!p) {
        eco_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    p->det = det;
    p->dest = dest;
    p->t = d;
    p->thr = d.thr_upper > 0 ? d.thr_upper : THR_UPPER;
    p->mad_safety = d.mad_safety > 0 ? d.mad_safety : MAD_SAFETY;
    p->iqr_safety = d.iqr_safety > 0 ? d.iqr_safety : IQR_SAFETY;
    p->lr_safety = d.lr_safety > 0 ? d.lr_safety : LR_SAFETY;
    if (d.underload_horizon_s > 0)
        p->horizon_s = d.underload_horizon_s;
    else if (d.underload_horizon_s == 0 && dest == DEST_DGDDEP)
        p->horizon_s = ECO_CONSOL_UNDERLOAD_HORIZON_S;
    return p;
}

static void destroy(struct eco_consol *p)
{
    if (!p)
        return;
    free(p->util);
    free(p->mem);
    free(p->held);
    free(p->hist);
    free(p->head);
    free(p->next);
    free(p->prev);
    free(p->cur);
    free(p->over);
    free(p->touched);
    free(p->tried);
    free(p->evac);
    free(p->on);
    free(p->order);
    free(p->list);
    free(p->undo);
    free(p->cand);
    free(p->key);
    free(p->ver);
    free(p->gate_at);
    free(p->gate_ok);
    free(p);
}

#define CONSOL_POLICY(ID, NAME, DET, DEST, SUMMARY)                                                \
    static struct eco_consol *create_##ID(const struct eco_consol_thresholds *t,                   \
                                          struct eco_error *err)                                   \
    {                                                                                              \
        return create(DET, DEST, t, err);                                                          \
    }                                                                                              \
    const struct eco_consol_ops eco_consol_##ID = {.name = NAME,                                   \
                                                   .summary = SUMMARY,                             \
                                                   .create = create_##ID,                          \
                                                   .destroy = destroy,                             \
                                                   .decide = decide}

CONSOL_POLICY(none, "none", DET_NONE, DEST_PABFD, "no migrations; empty hosts power down");
CONSOL_POLICY(thr, "thr-mmt", DET_THR, DEST_PABFD,
              "CloudSim THR 0.8 on GPU utilisation, MMT selection, PABFD placement");
CONSOL_POLICY(mad, "mad-mmt", DET_MAD, DEST_PABFD,
              "CloudSim MAD (safety 2.5) on GPU utilisation, MMT, PABFD");
CONSOL_POLICY(iqr, "iqr-mmt", DET_IQR, DEST_PABFD,
              "CloudSim IQR (safety 1.5) on GPU utilisation, MMT, PABFD");
CONSOL_POLICY(lr, "lr-mmt", DET_LR, DEST_PABFD,
              "CloudSim local regression (safety 1.2) on GPU utilisation, MMT, PABFD");
CONSOL_POLICY(dual_pabfd, "dual-pabfd", DET_DUAL, DEST_PABFD,
              "dual GPU-utilisation and GPU-memory thresholds, PABFD placement");
CONSOL_POLICY(dual_ff, "dual-ff", DET_DUAL, DEST_FF,
              "dual GPU-utilisation and GPU-memory thresholds, first-fit placement");
CONSOL_POLICY(dgddep, "dgddep", DET_DUAL, DEST_DGDDEP,
              "dual GPU-utilisation and GPU-memory thresholds, minimum-energy re-allocation");

static const struct eco_consol_ops *const all_policies[] = {
    &eco_consol_none,    &eco_consol_thr,    &eco_consol_mad,
    &eco_consol_iqr,     &eco_consol_lr,     &eco_consol_dual_pabfd,
    &eco_consol_dual_ff, &eco_consol_dgddep, NULL,
};

const struct eco_consol_ops *const *eco_consol_all(void)
{
    return all_policies;
}

const struct eco_consol_ops *eco_consol_find(const char *name)
{
    for (size_t i = 0; all_policies[i]; i++)
        if (name && !strcmp(all_policies[i]->name, name))
            return all_policies[i];
    return NULL;
}
