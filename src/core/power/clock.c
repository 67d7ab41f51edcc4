/* SPDX-License-Identifier: MIT */
/* SM-clock model: power = static + dynamic (f / f_max)^gamma, speed = s_top / ((1 - m) f_max / f
 * + m), fitted per measured curve (clock_tables.c); scaled types reuse the V100 fit; Slurm
 * --gpu-freq resolution (docs/models/clock.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/clock.h"
#include "ecosched/power.h"
#include "clock_tables.h"

/* The V100's maximum limit: the scaled types' static power is the V100's times max / this, as
 * their power curves are (docs/models/energy.md). */
#define V100_MAX_LIMIT_W 250.0
/* Bisection steps for the equivalent clock: 60 halvings of a < 2 GHz interval is far below a
 * millihertz. */
#define BISECT_STEPS 60

static int same(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static const struct eco_clock_type_table *table_of(int type)
{
    const struct eco_gpu_type *t = type >= 0 ? eco_catalog_get((size_t)type) : NULL;
    for (size_t i = 0; t && i < ECO_CLOCK_N_TYPES; i++)
        if (same(t->name, eco_clock_types[i].name))
            return &eco_clock_types[i];
    return NULL;
}

/* Index of the type among the measured GPUs, or -1 (scaled type). */
static int measured_of(int type)
{
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    for (size_t g = 0; g < ECO_ZEUS_N_GPUS; g++)
        if (same(t->name, eco_zeus_gpus[g]))
            return (int)g;
    return -1;
}

const double *eco_clock_levels(int type, size_t *n)
{
    const struct eco_clock_type_table *c = table_of(type);
    *n = c ? c->n_levels : 0;
    return c ? c->levels_mhz : NULL;
}

int eco_clock_range(int type, double *min_mhz, double *max_mhz)
{
    const struct eco_clock_type_table *c = table_of(type);
    if (!c)
        return -EINVAL;
    if (min_mhz)
        *min_mhz = c->floor_mhz;
    if (max_mhz)
        *max_mhz = c->levels_mhz[c->n_levels - 1];
    return 0;
}

double eco_clock_snap(int type, double mhz)
{
    const struct eco_clock_type_table *c = table_of(type);
    if (!c)
        return 0;
    const double *l = c->levels_mhz;
    size_t n = c->n_levels;
    if (!(mhz == mhz) || mhz >= l[n - 1])
        return l[n - 1];
    if (mhz <= l[0])
        return l[0];
    size_t lo = 0, hi = n - 1; /* l[lo] < mhz < l[hi] after the checks above, or equal */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (l[mid] <= mhz)
            lo = mid;
        else
            hi = mid;
    }
    return mhz - l[lo] <= l[hi] - mhz ? l[lo] : l[hi];
}

/* One measured workload z (0-based) on `type` at clock f (already clamped). */
static void eval_one(int type, const struct eco_gpu_type *t, double fmax, size_t z, double f,
                     double *speed, double *power_w)
{
    int g = measured_of(type);
    const struct eco_clock_fit *fit = &eco_clock_fits[z][g >= 0 ? g : ECO_ZEUS_GPU_V100];
    double s_top = 0, p_top = 0;
    if (g >= 0) { /* the measured top point, as eco_power_eval gives it at the maximum limit */
        const struct eco_zeus_curve *c = &eco_zeus_curves[z][g];
        const struct eco_zeus_curve *ref = &eco_zeus_curves[z][ECO_ZEUS_GPU_V100];
        s_top = ref->time_s[ref->n - 1] / c->time_s[c->n - 1];
        p_top = c->power_w[c->n - 1];
    } else {
        eco_power_eval(type, z + 1, t->max_limit_w, &s_top, &p_top);
    }
    double ps = fit->static_w * (g >= 0 ? 1.0 : t->max_limit_w / V100_MAX_LIMIT_W);
    if (ps > p_top)
        ps = p_top;
    double x = f / fmax;
    *power_w = ps + (p_top - ps) * pow(x, fit->gamma);
    /* A busy GPU draws at least what an idle one does: the fits of ncf, which barely loads a
     * GPU, put no static power under its ~35 W, so at low clocks they would draw less. */
    if (*power_w < t->idle_w)
        *power_w = t->idle_w;
    *speed = s_top / ((1.0 - fit->mem_share) / x + fit->mem_share);
}

int eco_clock_eval(int type, size_t w, double clock_mhz, double *speed, double *power_w)
{
    const struct eco_clock_type_table *c = table_of(type);
    if (!c || w >= eco_workload_count() || !isfinite(clock_mhz))
        return -EINVAL;
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    double fmax = c->levels_mhz[c->n_levels - 1];
    double f = clock_mhz < c->levels_mhz[0] ? c->levels_mhz[0]
               : clock_mhz > fmax           ? fmax
                                            : clock_mhz;
    double s = 0, p = 0;
    if (w == ECO_WORKLOAD_GENERIC) {
        /* the mean of the six workloads, as for the power-limit curves */
        for (size_t z = 0; z < ECO_ZEUS_N_WORKLOADS; z++) {
            double sz, pz;
            eval_one(type, t, fmax, z, f, &sz, &pz);
            s += sz;
            p += pz;
        }
        s /= ECO_ZEUS_N_WORKLOADS;
        p /= ECO_ZEUS_N_WORKLOADS;
    } else {
        eval_one(type, t, fmax, w - 1, f, &s, &p);
    }
    if (speed)
        *speed = s;
    if (power_w)
        *power_w = p;
    return 0;
}

int eco_clock_equivalent(int type, size_t w, double limit_w, double *clock_mhz)
{
    const struct eco_clock_type_table *c = table_of(type);
    double target;
    if (!c || eco_power_eval(type, w, limit_w, NULL, &target) < 0)
        return -EINVAL;
    double lo = c->levels_mhz[0], hi = c->levels_mhz[c->n_levels - 1], p;
    /* power rises with the clock: bisection for power(f) = target */
    eco_clock_eval(type, w, hi, NULL, &p);
    if (p <= target) {
        *clock_mhz = hi;
        return 0;
    }
    eco_clock_eval(type, w, lo, NULL, &p);
    if (p >= target) {
        *clock_mhz = lo;
        return 0;
    }
    for (int k = 0; k < BISECT_STEPS; k++) {
        double mid = 0.5 * (lo + hi);
        eco_clock_eval(type, w, mid, NULL, &p);
        if (p < target)
            lo = mid;
        else
            hi = mid;
    }
    *clock_mhz = 0.5 * (lo + hi);
    return 0;
}

int eco_clock_for_power(int type, size_t w, double power_w, double *clock_mhz)
{
    const struct eco_clock_type_table *c = table_of(type);
    if (!c || w >= eco_workload_count() || isnan(power_w))
        return -EINVAL;
    double best = c->floor_mhz;
    for (size_t i = 0; i < c->n_levels; i++) {
        double f = c->levels_mhz[i], p;
        if (f < c->floor_mhz)
            continue;
        eco_clock_eval(type, w, f, NULL, &p);
        if (p <= power_w)
            best = f;
    }
    *clock_mhz = best;
    return 0;
}

/* ---- Slurm --gpu-freq ------------------------------------------------------------------- */

/* A value: keyword or positive number of MHz (as Slurm, which reads an unsigned integer; a
 * decimal fraction is accepted and rounded up with the levels). 0 or -EINVAL. */
static int freq_value(const char *v, const double *levels, size_t n, double *mhz, int *keyword)
{
    *keyword = 1;
    if (!strcmp(v, "low"))
        *mhz = levels[0];
    else if (!strcmp(v, "medium"))
        *mhz = levels[n - 1 - (n - 1) / 2];
    else if (!strcmp(v, "high"))
        *mhz = levels[n - 1];
    else if (!strcmp(v, "highm1"))
        *mhz = levels[n > 1 ? n - 2 : 0];
    else {
        char *end;
        *keyword = 0;
        if (!isdigit((unsigned char)v[0]))
            return -EINVAL;
        double x = strtod(v, &end);
        if (*end || !isfinite(x) || x <= 0)
            return -EINVAL;
        *mhz = x;
    }
    return 0;
}

/* A number resolved on the levels: clamped to the ends, else the lowest level >= it. */
static double round_up(double x, const double *levels, size_t n)
{
    if (x >= levels[n - 1])
        return levels[n - 1];
    for (size_t i = 0; i < n; i++)
        if (levels[i] >= x)
            return levels[i];
    return levels[n - 1];
}

int eco_gpu_freq_parse(const char *spec, const double *levels, size_t n, struct eco_gpu_freq *out,
                       struct eco_error *err)
{
    char buf[256];
    struct eco_gpu_freq r = {0};
    if (!spec || !*spec)
        return eco_errorf(err, -EINVAL, "--gpu-freq: empty value");
    if (!levels || n == 0)
        return eco_errorf(err, -EINVAL, "--gpu-freq: no supported clock levels for this GPU");
    if (strlen(spec) >= sizeof buf)
        return eco_errorf(err, -EINVAL, "--gpu-freq: value longer than %zu bytes", sizeof buf - 1);
    strcpy(buf, spec);
    int have_gfx = 0, have_mem = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "verbose")) {
            r.verbose = 1;
            continue;
        }
        char *eq = strchr(tok, '=');
        const char *kind = "graphics", *val = tok;
        if (eq) {
            *eq = '\0';
            kind = tok;
            val = eq + 1;
        }
        int is_mem = !strcmp(kind, "memory");
        if (!is_mem && strcmp(kind, "graphics"))
            return eco_errorf(err, -EINVAL,
                              "--gpu-freq: unknown type '%s' (expected memory or graphics)", kind);
        if (is_mem ? have_mem : have_gfx)
            return eco_errorf(err, -EINVAL, "--gpu-freq: %s given twice", kind);
        double mhz;
        int keyword;
        if (freq_value(val, levels, n, &mhz, &keyword) < 0)
            return eco_errorf(err, -EINVAL,
                              "--gpu-freq: %s: bad value '%s' (expected low, medium, high, "
                              "highm1 or a clock in MHz)",
                              kind, val);
        if (is_mem) {
            have_mem = 1;
            r.memory_mhz = keyword ? 0 : mhz;
        } else {
            have_gfx = 1;
            r.graphics_mhz = keyword ? mhz : round_up(mhz, levels, n);
        }
    }
    if (!have_gfx && !have_mem)
        return eco_errorf(err, -EINVAL, "--gpu-freq: no frequency given in '%s'", spec);
    *out = r;
    return 0;
}
