/* SPDX-License-Identifier: MIT */
/* Container workloads for the consolidation simulator: GPU requests from openb pods, a Lucid
 * workload's measured utilisation and memory, and activity over time shaped by Acme's Seren
 * distributions (docs/models/container-workloads.md). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "consol_internal.h"
#include "ecosched/coloc.h"
#include "sim/consol_sim.h"

/* Slack allowed between a pod's GPU share and its workload's utilisation alone: a pod asking
 * for 0.46 GPU may run a workload that uses up to 0.56 of a GPU alone (openb's shares are set
 * by hand in steps of 0.01-0.1; without the slack no Lucid workload fits the smallest shares). */
#define SHARE_SLACK 0.1

int eco_consol_workload_build(const struct eco_jobset *pods, size_t n, uint64_t seed, double corr_s,
                              struct eco_consol_workload *w, struct eco_error *err)
{
    *w = (struct eco_consol_workload){0};
    if (!pods || pods->n == 0)
        return eco_errorf(err, -EINVAL, "containers: the pod list holds no GPU pods");
    if (n == 0)
        return eco_errorf(err, -EINVAL, "containers: need at least one container");
    if (!(corr_s > 0))
        return eco_errorf(err, -EINVAL, "correlation time must be > 0 s");
    size_t nw = eco_coloc_n_workloads();
    size_t *lucid = malloc(nw * sizeof *lucid), *elig = malloc(nw * sizeof *elig);
    size_t *idx = malloc(pods->n * sizeof *idx);
    struct eco_consol_container *c = calloc(n, sizeof *c);
    int rc = 0;
    if (!lucid || !elig || !idx || !c) {
        rc = -ENOMEM;
        goto out;
    }
    size_t nl = 0, lowest = 0;
    for (size_t i = 0; i < nw; i++) {
        const struct eco_coloc_workload *cw = eco_coloc_workload(i);
        if (cw->source != ECO_COLOC_LUCID || cw->gpu_util < 0 || cw->gmem_mb <= 0)
            continue;
        if (nl == 0 || cw->gpu_util < eco_coloc_workload(lucid[lowest])->gpu_util)
            lowest = nl;
        lucid[nl++] = i;
    }
    if (nl == 0) {
        rc = eco_errorf(err, -EINVAL, "no Lucid workloads in the co-location tables");
        goto out;
    }
    struct eco_rng rng;
    eco_rng_init(&rng, seed ^ 0xc0501da7e5ULL);
    for (size_t i = 0; i < pods->n; i++)
        idx[i] = i;
    for (size_t k = 0; k < n; k++) {
        size_t pick;
        if (n <= pods->n) { /* partial Fisher-Yates: without replacement */
            size_t j = k + (size_t)(eco_rng_uniform(&rng) * (double)(pods->n - k));
            size_t t = idx[k];
            idx[k] = idx[j];
            idx[j] = t;
            pick = idx[k];
        } else {
            pick = (size_t)(eco_rng_uniform(&rng) * (double)pods->n);
        }
        const struct eco_job *p = &pods->jobs[pick];
        double share = p->gpu_milli ? p->gpu_milli / 1000.0 : 1.0;
        size_t ne = 0;
        for (size_t i = 0; i < nl; i++)
            if (eco_coloc_workload(lucid[i])->gpu_util <= share + SHARE_SLACK)
                elig[ne++] = lucid[i];
        size_t wi = ne ? elig[(size_t)(eco_rng_uniform(&rng) * (double)ne)] : lucid[lowest];
        const struct eco_coloc_workload *cw = eco_coloc_workload(wi);
        c[k] = (struct eco_consol_container){
            .pod_line = p->line,
            .gpus = (uint16_t)(p->gpus ? p->gpus : 1),
            .request = (p->gpus ? p->gpus : 1) * share,
            .workload = (uint32_t)wi,
            .util_alone = cw->gpu_util,
            .gmem_mb = cw->gmem_mb,
            .host_mem_mb = (p->gpus ? p->gpus : 1) * share * ECO_CONSOL_HOST_MEM_MIB_PER_GPU,
            .seed = eco_rng_next(&rng),
        };
    }
    w->c = c;
    w->n = n;
    w->corr_s = corr_s;
    c = NULL;
out:
    if (rc == -ENOMEM)
        rc = eco_errorf(err, -ENOMEM, "out of memory");
    free(lucid);
    free(elig);
    free(idx);
    free(c);
    return rc;
}

void eco_consol_workload_fini(struct eco_consol_workload *w)
{
    if (!w)
        return;
    free(w->c);
    *w = (struct eco_consol_workload){0};
}

/* Quantile at CDF level pct (0..100), linear between the table's rows. */
static double quantile(const double *q, double pct)
{
    double step = eco_acme_cdf_pct[ECO_ACME_N - 1] / (ECO_ACME_N - 1);
    double r = pct / step;
    if (!(r > 0))
        return q[0];
    size_t i = (size_t)r;
    if (i >= ECO_ACME_N - 1)
        return q[ECO_ACME_N - 1];
    return q[i] + (r - (double)i) * (q[i + 1] - q[i]);
}

void eco_consol_series_init(struct eco_consol_series *s, const struct eco_consol_container *c)
{
    eco_rng_init(&s->rng, c->seed);
    s->z = 0;
    s->started = 0;
}

static double gaussian(struct eco_rng *r)
{
    double u1 = eco_rng_uniform(r), u2 = eco_rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

void eco_consol_series_next(struct eco_consol_series *s, const struct eco_consol_container *c,
                            double rho, double gpu_mem_mb, double *util_gpus, double *mem_mb)
{
    double e = gaussian(&s->rng);
    s->z = s->started ? rho * s->z + sqrt(1 - rho * rho) * e : e;
    s->started = 1;
    double pct = 50.0 * erfc(-s->z * 0.7071067811865476); /* Phi(z) in percent */
    double au = quantile(eco_acme_util_pct, pct) / eco_acme_util_active_mean;
    double am = quantile(eco_acme_mem_pct, pct) / eco_acme_mem_active_mean;
    double u = c->util_alone * au, m = c->gmem_mb * am;
    *util_gpus = c->gpus * (u > 1 ? 1 : u);
    *mem_mb = c->gpus * (m > gpu_mem_mb ? gpu_mem_mb : m);
}
