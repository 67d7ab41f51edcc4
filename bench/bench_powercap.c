/* SPDX-License-Identifier: MIT */
/* Power-cap allocator benchmark: one eco_cap_allocate call for 1,000, 10,000 and 100,000
 * one-GPU jobs with learned models, median wall time (CLOCK_MONOTONIC) of 20 runs and the
 * thread's CPU time (less sensitive to a busy machine); prints Markdown rows. Then the same
 * jobs with memos (eco_cap_job.memo) as a control period sees them: before each call one
 * job's model takes a new sample and every job's remaining work drops by a second. Never
 * pass/fail: the target column says what to compare against. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "util/clock.h"

#define RUNS 20
#define SAMPLES 30 /* noisy observations per job model before the allocation */

static double gauss(struct eco_rng *r)
{
    double u1 = eco_rng_uniform(r), u2 = eco_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n one-GPU jobs: every catalog type and measured workload in turn (drawn at random), each
 * with a model fitted to SAMPLES noisy measurements at random limits, 20 % with deadlines. */
static int bench(size_t n, const struct eco_cap_params *p, int memo)
{
    struct eco_cap_job *jobs = calloc(n, sizeof *jobs);
    struct eco_job_model *models = calloc(n, sizeof *models);
    double *limits = malloc(n * sizeof *limits);
    double *scratch = malloc(eco_cap_scratch_len(n, p) * sizeof *scratch);
    double times[RUNS], cpu[RUNS], lo = 0, hi = 0;
    int rc = 1;
    if (!jobs || !models || !limits || !scratch)
        goto out;
    for (size_t i = 0; memo && i < n; i++)
        if (!(jobs[i].memo = eco_cap_memo_new(p->grid)))
            goto out;
    struct eco_rng rng;
    eco_rng_init(&rng, 42);
    size_t types = eco_catalog_count(), wls = eco_workload_count() - 1;
    for (size_t i = 0; i < n; i++) {
        int type = (int)(eco_rng_uniform(&rng) * (double)types);
        size_t w = 1 + (size_t)(eco_rng_uniform(&rng) * (double)wls);
        const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
        eco_job_model_init(&models[i], t->min_limit_w, t->max_limit_w, ECO_RLS_LAMBDA_DEFAULT);
        for (int s = 0; s < SAMPLES; s++) {
            double L = t->min_limit_w + (t->max_limit_w - t->min_limit_w) * eco_rng_uniform(&rng);
            double sp, pw;
            eco_power_eval(type, w, L, &sp, &pw);
            eco_job_model_observe(&models[i], L, pw * (1 + 0.02 * gauss(&rng)),
                                  sp * (1 + 0.01 * gauss(&rng)));
        }
        jobs[i] = (struct eco_cap_job){
            .gpus = 1,
            .min_limit_w = t->min_limit_w,
            .max_limit_w = t->max_limit_w,
            .remaining_s = 600 * pow(100.0, eco_rng_uniform(&rng)),
            .weight = 1,
            .slack_s = eco_rng_uniform(&rng) < 0.2 ? 36000 * eco_rng_uniform(&rng) : -1,
            .predict = eco_cap_predict_model,
            .ctx = &models[i],
            .memo = jobs[i].memo};
        double a, b;
        eco_job_model_predict(&models[i], t->min_limit_w, &a, NULL);
        eco_job_model_predict(&models[i], t->max_limit_w, &b, NULL);
        lo += a;
        hi += b;
    }
    double budget = lo + 0.5 * (hi - lo);
    eco_cap_allocate(jobs, n, budget, p, limits, scratch); /* warm caches and pages */
    for (int r = 0; r < RUNS; r++) {
        if (memo) { /* a period: one job's model moves, every job's work and slack drop */
            struct eco_job_model *m = &models[(size_t)r * 7919 % n];
            eco_job_model_observe(m, m->max_limit_w, m->max_limit_w * 0.8, 0.95);
            for (size_t i = 0; i < n; i++) {
                jobs[i].remaining_s -= 1;
                if (jobs[i].slack_s >= 1)
                    jobs[i].slack_s -= 1;
            }
        }
        double t0 = eco_clock_s(CLOCK_MONOTONIC), c0 = eco_clock_s(CLOCK_THREAD_CPUTIME_ID);
        eco_cap_allocate(jobs, n, budget, p, limits, scratch);
        times[r] = eco_clock_s(CLOCK_MONOTONIC) - t0;
        cpu[r] = eco_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    }
    qsort(times, RUNS, sizeof times[0], cmp_double);
    qsort(cpu, RUNS, sizeof cpu[0], cmp_double);
    double used = 0.0;
    for (size_t i = 0; i < n; i++) {
        double pw;
        eco_job_model_predict(&models[i], limits[i], &pw, NULL);
        used += pw;
    }
    printf("| %zu | %zu | %u | %.3f | %.3f | %.3f | %.3f | %.6f | %s |\n", n, n, p->grid,
           1e3 * times[RUNS / 2], 1e3 * times[0], 1e3 * times[RUNS - 1], 1e3 * cpu[RUNS / 2],
           used / budget,
           n != 10000 ? "scaling (linear: 10x per 10x jobs)"
           : memo     ? "<= 1 ms when one job changes (one core)"
                      : "<= 5 ms (one core)");
    rc = 0;
out:
    for (size_t i = 0; jobs && i < n; i++)
        eco_cap_memo_free(jobs[i].memo);
    free(jobs);
    free(models);
    free(limits);
    free(scratch);
    return rc;
}

int main(void)
{
    struct eco_cap_params p;
    eco_cap_params_default(&p);
    printf("| jobs | GPUs | grid | median ms (of %d) | min ms | max ms | median CPU ms | "
           "predicted power / budget | target |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
           RUNS);
    static const size_t sizes[] = {1000, 10000, 100000};
    for (int memo = 0; memo <= 1; memo++) {
        if (memo)
            printf("\nWith memos and the warm start (reuse_tol 0, the same limits as without), one "
                   "job's model "
                   "moved and every job's remaining work a second less before each call:\n\n"
                   "| jobs | GPUs | grid | median ms (of %d) | min ms | max ms | median CPU ms "
                   "| predicted power / budget | target |\n"
                   "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
                   RUNS);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            if (bench(sizes[k], &p, memo)) {
                fprintf(stderr, "eco_bench_powercap: out of memory\n");
                return 1;
            }
    }
    return 0;
}
