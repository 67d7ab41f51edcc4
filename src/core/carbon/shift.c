/* SPDX-License-Identifier: MIT */
/* ecosched's temporal shifting: a deferrable job starts at the candidate that minimises its
 * forecast carbon plus a price on the delay,
 *
 *     est_kg(s) + LAMBDA x (s - now) / 1 h,
 *     est_kg(s) = gpus x run_h x NOMINAL_GPU_KW x mean forecast intensity over [s, s + run) / 1000,
 *
 * so that waiting is spent where it buys the most carbon: a large long job may wait hours for
 * a cleaner window, a small short one does not wait for a few grams. This is the Lagrangian
 * relaxation of "least carbon at a given mean delay": each job's choice is independent given
 * the price LAMBDA (kg CO2eq per hour of delay), which sets the trade between carbon and mean
 * JCT; LAMBDA 0 is Let's Wait Awhile's choice. By default the price is relative (rate=R):
 * LAMBDA = R x the mean, over the jobs seen so far, of a job's forecast carbon per hour of its
 * run (each as if started on arrival), so that the trade is in units of the cluster's own
 * typical job and grid: it carries across clusters, job mixes and regions, and a job larger
 * than the mean still waits longer for the same cleaner hours, as the Lagrangian wants.
 * rel=R prices by the mean job's whole carbon, own=R each job by its own. Optionally
 * (util=U) every arriving job books its GPUs over the hours it is expected to run and a deferred
 * job only takes starts where the booked GPUs plus its own stay within U of the cluster. With
 * interrupt=1 the job may instead run in the lowest-forecast pieces of its window
 * (eco_carbon_lowest_runs, suspended in the dirty hours between them) when that plan's carbon, its
 * suspensions' time at the job's draw included, plus LAMBDA x the delay of its end is lower.
 * docs/policies/carbon.md. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/carbon.h"

#define MAX_CANDIDATES 169
/* Hours of booking per job looked at: a week (a longer run books its first week only). */
#define MAX_BOOK_H 168
#define HOUR_S 3600.0
/* Power per GPU the carbon estimate assumes, kW: a V100 training at its default limit draws
 * about 0.18 kW (docs/models/energy.md, the generic workload) and its share of an 8-GPU host's
 * 941 W base is 0.118 kW. Only a scale: LAMBDA is tuned against it. */
#define NOMINAL_GPU_KW 0.3
/* Default price of delay, relative (rate=R): each hour a job waits costs R times the mean, over
 * the jobs seen so far, of a job's forecast carbon per hour of its run. Tuned on the tuning set
 * of docs/results/carbon.md (the most jobs' carbon saved at <= 1 h mean added delay, the rule
 * every policy is tuned by there). */
#define DEFAULT_RATE 0.3

/* What the price of an hour of delay is: lambda kg, or rel x a job's carbon: the mean job's
 * whole carbon so far (rel=), the job's own (own=), the mean job's carbon per hour of its run
 * so far (rate=). */
enum price_basis { PRICE_LAMBDA, PRICE_REL, PRICE_OWN, PRICE_RATE };

struct eco_carbon {
    enum price_basis basis;
    double lambda;    /* kg per hour of delay (PRICE_LAMBDA) */
    double rel;       /* the share of a job's carbon an hour of delay costs (the others) */
    double sum_kg;    /* forecast carbon (started on arrival) of the jobs seen so far */
    double seen;      /* their count */
    double util;      /* booking cap, share of the GPUs; 0: no booking */
    int interrupt;    /* 1: an interrupting plan may be chosen */
    double base_hour; /* calendar hour of book[0]; NAN before the first job */
    double *book;     /* GPUs booked per hour */
    size_t n, cap;
};

static int parse_params(const char *params, double *lambda, double *rel, enum price_basis *basis,
                        double *util, int *interrupt, struct eco_error *err)
{
    int have_lambda = 0, have_rel = 0;
    char buf[128];
    if (strlen(params) >= sizeof buf)
        return eco_errorf(err, -EINVAL, "shift: parameters too long");
    strcpy(buf, params);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return eco_errorf(err, -EINVAL,
                              "shift: '%s' is not KEY=VALUE (keys: rate, rel, own, lambda, util, "
                              "interrupt)",
                              kv);
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end)
            return eco_errorf(err, -EINVAL, "shift: %s: '%s' is not a number", kv, eq + 1);
        if (!strcmp(kv, "lambda")) {
            if (!(v >= 0 && v < 1e9))
                return eco_errorf(err, -EINVAL,
                                  "shift: lambda: %g is not a price >= 0 (kg CO2eq per hour of "
                                  "delay)",
                                  v);
            *lambda = v;
            have_lambda = 1;
        } else if (!strcmp(kv, "rel") || !strcmp(kv, "own") || !strcmp(kv, "rate")) {
            if (!(v >= 0 && v <= 100))
                return eco_errorf(err, -EINVAL,
                                  "shift: %s: %g is not a share in [0, 100] of a job's forecast "
                                  "carbon per hour of delay (0.01: 1 %% per hour)",
                                  kv, v);
            if (have_rel)
                return eco_errorf(err, -EINVAL, "shift: give one of rate=, rel= and own=, not two");
            *rel = v;
            *basis = !strcmp(kv, "own") ? PRICE_OWN : !strcmp(kv, "rate") ? PRICE_RATE : PRICE_REL;
            have_rel = 1;
        } else if (!strcmp(kv, "util")) {
            if (!(v > 0 && v <= 1))
                return eco_errorf(err, -EINVAL,
                                  "shift: util: %g is not a share of the GPUs in "
                                  "(0, 1]",
                                  v);
            *util = v;
        } else if (!strcmp(kv, "interrupt")) {
            if (v != 0 && v != 1)
                return eco_errorf(err, -EINVAL, "shift: interrupt: %g is not 0 or 1", v);
            *interrupt = (int)v;
        } else {
            return eco_errorf(err, -EINVAL,
                              "shift: unknown key '%s' (keys: rate, rel, own, lambda, util, "
                              "interrupt)",
                              kv);
        }
    }
    if (have_lambda && have_rel)
        return eco_errorf(err, -EINVAL,
                          "shift: give either rate=, rel= or own= (a share of a job's carbon "
                          "per hour) or lambda= (kg per hour), not both");
    if (have_lambda)
        *basis = PRICE_LAMBDA;
    return 0;
}

static struct eco_carbon *shift_create(const struct eco_cluster *c, const char *params,
                                       struct eco_error *err)
{
    (void)c;
    double lambda = 0, rel = DEFAULT_RATE, util = 0;
    enum price_basis basis = PRICE_RATE;
    int interrupt = 0;
    if (params && *params &&
        parse_params(params, &lambda, &rel, &basis, &util, &interrupt, err) < 0)
        return NULL;
    struct eco_carbon *p = calloc(1, sizeof *p);
    if (!p) {
        eco_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    p->lambda = lambda;
    p->rel = rel;
    p->basis = basis;
    p->util = util;
    p->interrupt = interrupt;
    p->base_hour = NAN;
    return p;
}
static void shift_destroy(struct eco_carbon *p)
{
    if (p)
        free(p->book);
    free(p);
}

/* Hours [h0, h1) of the booking, relative to base_hour, grown as needed; -1 out of memory. */
static int ensure(struct eco_carbon *p, size_t h1)
{
    if (h1 <= p->n)
        return 0;
    if (h1 > p->cap) {
        size_t nc = p->cap ? p->cap : 1024;
        while (nc < h1)
            nc *= 2;
        double *b = realloc(p->book, nc * sizeof *b);
        if (!b)
            return -1;
        p->book = b;
        p->cap = nc;
    }
    memset(p->book + p->n, 0, (h1 - p->n) * sizeof *p->book);
    p->n = h1;
    return 0;
}

/* Hours ahead of now the booking covers: a year. The edges accept 31 days of slack at most
 * (ecoschedd's max_delay, powerd's ecosched:max-delay=) and a run books its first week, so a
 * year holds every booking they can make; a start further ahead (a simulation's --max-delay
 * of years, or an unbounded slack) is neither booked nor limited by the booking. It bounds the
 * booking's memory to the hours since the first job plus this horizon (issue 28: a job with
 * 30000000 days of slack took 5.6 GB, and 1e300 days converted inf to size_t). */
#define MAX_AHEAD_H (366.0 * 24)

/* The booking hours a run at calendar a for run_s covers, decided at calendar now: [*h0, *h1),
 * empty when a lies beyond the horizon or is not a number. */
static void hours_of(const struct eco_carbon *p, double now, double a, double run_s, size_t *h0,
                     size_t *h1)
{
    double lim = floor(now / HOUR_S) - p->base_hour + MAX_AHEAD_H;
    double first = floor(a / HOUR_S) - p->base_hour;
    double last = ceil((a + (run_s > 0 ? run_s : 1)) / HOUR_S) - p->base_hour;
    if (!(lim >= 0)) /* the clock went back before the first job by a year */
        lim = 0;
    if (!(first >= 0))
        first = 0;
    if (!(last - first <= MAX_BOOK_H))
        last = first + MAX_BOOK_H;
    if (!(first <= lim)) /* beyond the horizon (inf too) */
        first = lim;
    if (!(last <= lim))
        last = lim;
    if (!(last >= first)) /* NaN */
        last = first;
    *h0 = (size_t)first;
    *h1 = (size_t)last;
}

/* Books the job's GPUs over the hours of a run at calendar a for run_s. */
static void book(struct eco_carbon *p, double now, double a, double run_s, uint32_t gpus)
{
    size_t h0, h1;
    hours_of(p, now, a, run_s, &h0, &h1);
    if (ensure(p, h1) == 0)
        for (size_t h = h0; h < h1; h++)
            p->book[h] += gpus;
}

/* Job j's forecast carbon (kg, or the price signal's unit) if it started at calendar time a. */
static double job_kg(const struct eco_carbon_view *v, const struct eco_carbon_job *j, double a)
{
    double now = v->epoch0_s + v->now_s;
    double kwh = (double)j->gpus * j->run_s / HOUR_S * NOMINAL_GPU_KW;
    return kwh * eco_forecast_mean(v->forecast, now, a, a + j->run_s) / 1000.0;
}

/* Job j's forecast carbon if it started now, kg (its magnitude: a price may be negative). */
static double kg_now(const struct eco_carbon_view *v, const struct eco_carbon_job *j)
{
    return j->run_s > 0 ? fabs(job_kg(v, j, v->epoch0_s + v->now_s)) : 0;
}

/* The price of an hour of delay for job j, kg (or the price signal's unit): lambda; own=R: R x
 * the job's own forecast carbon if it started now; rel=R: R x the mean of that over the jobs
 * seen so far (j included; every arriving job is seen, deferrable or not). */
static double price_per_h(const struct eco_carbon *p, const struct eco_carbon_view *v,
                          const struct eco_carbon_job *j)
{
    if (p->basis == PRICE_LAMBDA)
        return p->lambda;
    if (p->basis == PRICE_OWN)
        return p->rel * kg_now(v, j);
    return p->seen > 0 ? p->rel * p->sum_kg / p->seen : 0;
}

/* Counts job j into the mean job's carbon (rel=), once per arrival. */
static void see(struct eco_carbon *p, const struct eco_carbon_view *v,
                const struct eco_carbon_job *j)
{
    if (p->basis == PRICE_REL || p->basis == PRICE_RATE) {
        double kg = kg_now(v, j);
        p->sum_kg += p->basis == PRICE_RATE && j->run_s > 0 ? kg * HOUR_S / j->run_s : kg;
        p->seen += 1;
    }
}

/* The non-interrupting choice: its start, and its cost (kg) in *cost. */
static double choose(struct eco_carbon *p, const struct eco_carbon_view *v,
                     const struct eco_carbon_job *j, double *cost)
{
    double now = v->epoch0_s + v->now_s;
    int booking = p->util > 0;
    if (isnan(p->base_hour))
        p->base_hour = floor(now / HOUR_S);
    double cand[MAX_CANDIDATES];
    size_t n = eco_carbon_candidates(v, j, cand, MAX_CANDIDATES);
    double limit = p->util * (double)v->cluster_gpus;
    if (limit < j->gpus)
        limit = j->gpus; /* a job larger than the cap may still take hours nothing booked */
    double best = v->now_s, best_c = INFINITY, least = v->now_s, least_peak = INFINITY;
    double price = price_per_h(p, v, j);
    for (size_t i = 0; i < n; i++) {
        double a = v->epoch0_s + cand[i];
        if (booking) {
            size_t h0, h1;
            hours_of(p, now, a, j->run_s, &h0, &h1);
            if (ensure(p, h1) < 0) {
                booking = 0; /* out of memory: decide without the booking */
            } else {
                double peak = 0;
                for (size_t h = h0; h < h1; h++)
                    if (p->book[h] > peak)
                        peak = p->book[h];
                peak += j->gpus;
                if (peak < least_peak) {
                    least_peak = peak;
                    least = cand[i];
                }
                if (peak > limit && n > 1)
                    continue;
            }
        }
        double c = job_kg(v, j, a) + price * (cand[i] - v->now_s) / HOUR_S;
        if (c < best_c) {
            best_c = c;
            best = cand[i];
        }
    }
    *cost = best_c;
    return isinf(best_c) ? least : best;
}

static double shift_release(struct eco_carbon *p, const struct eco_carbon_view *v,
                            const struct eco_carbon_job *j)
{
    see(p, v, j);
    double cost, start = choose(p, v, j, &cost);
    if (p->util > 0)
        book(p, v->epoch0_s + v->now_s, v->epoch0_s + start, j->run_s, j->gpus);
    return start;
}

static size_t shift_plan(struct eco_carbon *p, const struct eco_carbon_view *v,
                         const struct eco_carbon_job *j, struct eco_carbon_seg *out, size_t max)
{
    see(p, v, j);
    double cost, start = choose(p, v, j, &cost);
    size_t n = 0;
    if (p->interrupt && max > 0) {
        double score;
        n = eco_carbon_lowest_runs(v, j, out, max, &score);
        double kg = (double)j->gpus * NOMINAL_GPU_KW * score / HOUR_S / 1000.0;
        double late = out[n - 1].end_s - (v->now_s + j->run_s);
        double c = kg + price_per_h(p, v, j) * (late > 0 ? late : 0) / HOUR_S;
        if (n < 2 || !(c < cost))
            n = 0; /* not worth a suspension */
    }
    if (n == 0) {
        out[0] = (struct eco_carbon_seg){start, start + j->run_s};
        n = 1;
    }
    if (p->util > 0)
        for (size_t k = 0; k < n; k++)
            book(p, v->epoch0_s + v->now_s, v->epoch0_s + out[k].start_s,
                 out[k].end_s - out[k].start_s, j->gpus);
    return n;
}

static int shift_interrupts(const struct eco_carbon *p)
{
    return p->interrupt;
}

const struct eco_carbon_ops eco_carbon_shift = {
    .name = "shift",
    .summary = "ecosched's: the start that minimises the job's forecast carbon plus a\n"
               "price on its delay (rate=R: R x the mean job's carbon per hour of run,\n"
               "default 0.3; rel=R: of its whole carbon; own=R: of the job's own;\n"
               "lambda=KG per hour), optionally within\n"
               "a share of the GPUs every job books (util=U), suspended in dirty hours\n"
               "when that saves more (interrupt=1); keys rate=,rel=,own=,lambda=,util=,interrupt=",
    .create = shift_create,
    .destroy = shift_destroy,
    .release = shift_release,
    .plan = shift_plan,
    .interrupts = shift_interrupts,
};
