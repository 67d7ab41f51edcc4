/* SPDX-License-Identifier: MIT */
/* Prints the estimation-error table of docs/models/rls.md: per-job RLS models fitted to the
 * measured curves (eco_power_eval) with Gaussian noise, error of the prior and after 5..100
 * samples. Build:
 *   cc -std=c11 -O2 -Iinclude scripts/rls_error_table.c build/libeco_core.a -lm -o
 * build/rls_error_table Optional arguments: forgetting factor and p0 (defaults
 * ECO_RLS_LAMBDA_DEFAULT and ECO_RLS_P0_DEFAULT), to compare settings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"

#define SEEDS 200        /* independent runs averaged per cell */
#define EVAL_POINTS 26   /* limits the error is measured at, evenly spaced over the range */
#define NOISE_POWER 0.02 /* relative standard deviation of a power sample */
#define NOISE_SPEED 0.01 /* relative standard deviation of a speed sample */

static const struct {
    const char *type, *workload;
} curves[] = {{"V100", "resnet50"}, {"A40", "bert-squad"}, {"A100-SXM", "generic"}};
static const int checkpoints[] = {0, 5, 10, 20, 50, 100}; /* 0: the prior alone */
#define N_CURVES (sizeof curves / sizeof curves[0])
#define N_CHECK (sizeof checkpoints / sizeof checkpoints[0])

static double gauss(struct eco_rng *r)
{
    double u1 = eco_rng_uniform(r), u2 = eco_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

/* Mean and max relative error of power and speed over EVAL_POINTS limits. */
static void errors(const struct eco_job_model *m, int type, size_t w, double out[4])
{
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    out[0] = out[1] = out[2] = out[3] = 0.0;
    for (int k = 0; k < EVAL_POINTS; k++) {
        double L = t->min_limit_w + (t->max_limit_w - t->min_limit_w) * k / (EVAL_POINTS - 1);
        double ts, tp, ps, pp;
        eco_power_eval(type, w, L, &ts, &tp);
        eco_job_model_predict(m, L, &pp, &ps);
        double ep = fabs(pp - tp) / tp, es = fabs(ps - ts) / ts;
        out[0] += ep / EVAL_POINTS;
        out[1] = ep > out[1] ? ep : out[1];
        out[2] += es / EVAL_POINTS;
        out[3] = es > out[3] ? es : out[3];
    }
}

int main(int argc, char **argv)
{
    double lambda = argc > 1 ? atof(argv[1]) : ECO_RLS_LAMBDA_DEFAULT;
    double p0 = argc > 2 ? atof(argv[2]) : ECO_RLS_P0_DEFAULT;
    printf("| GPU | workload | samples | power error mean %% | power error max %% | "
           "speed error mean %% | speed error max %% |\n|---|---|---:|---:|---:|---:|---:|\n");
    for (size_t c = 0; c < N_CURVES; c++) {
        int type = eco_catalog_find(curves[c].type);
        size_t w = (size_t)eco_workload_find(curves[c].workload);
        const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
        double acc[N_CHECK][4] = {{0}};
        for (int s = 0; s < SEEDS; s++) {
            struct eco_rng rng;
            eco_rng_init(&rng, 1000 + (uint64_t)s);
            struct eco_job_model m;
            eco_job_model_init(&m, t->min_limit_w, t->max_limit_w, lambda);
            eco_rls_init(&m.power, lambda, p0); /* same prior mean, this p0 */
            eco_rls_init(&m.speed, lambda, p0);
            struct eco_job_model fresh;
            eco_job_model_init(&fresh, t->min_limit_w, t->max_limit_w, lambda);
            for (int i = 0; i < ECO_RLS_DIM; i++) {
                m.power.theta[i] = fresh.power.theta[i];
                m.speed.theta[i] = fresh.speed.theta[i];
            }
            size_t next = 0;
            for (int i = 0; i <= checkpoints[N_CHECK - 1]; i++) {
                if (i == checkpoints[next]) {
                    double e[4];
                    errors(&m, type, w, e);
                    for (int k = 0; k < 4; k++)
                        acc[next][k] += e[k] / SEEDS;
                    next++;
                }
                if (i == checkpoints[N_CHECK - 1])
                    break;
                /* limits drawn uniformly over the range: a dithered sweep */
                double L =
                    t->min_limit_w + (t->max_limit_w - t->min_limit_w) * eco_rng_uniform(&rng);
                double sp, pw;
                eco_power_eval(type, w, L, &sp, &pw);
                pw *= 1.0 + NOISE_POWER * gauss(&rng);
                sp *= 1.0 + NOISE_SPEED * gauss(&rng);
                eco_job_model_observe(&m, L, pw, sp);
            }
        }
        for (size_t k = 0; k < N_CHECK; k++)
            printf("| %s | %s | %d | %.2f | %.2f | %.2f | %.2f |\n", curves[c].type,
                   curves[c].workload, checkpoints[k], 100 * acc[k][0], 100 * acc[k][1],
                   100 * acc[k][2], 100 * acc[k][3]);
    }
    return 0;
}
