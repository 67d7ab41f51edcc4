/* SPDX-License-Identifier: MIT */
/* One multi-GPU server in fixed time steps: jobs of measured workloads start (static
 * assignment or a GPU-selection strategy fed with sampled GPU status), allocate memory after
 * their start-up, compute at the co-location model's speed factors and end; utilisation,
 * energy and out-of-memory restarts are accounted (docs/simulator-server.md). */
#include "sim/server.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ecosched/catalog.h"
#include "ecosched/cluster.h"
#include "ecosched/coloc.h"
#include "util/csv.h"
#include "ecosched/power.h"
#include "ecosched/rng.h"

/* A bound on steps, against a series that cannot end (e.g. work so long at dt so small
 * that the run would take hours of CPU): 50 million steps. */
#define MAX_STEPS 50000000.0
/* Seeds the arrival stream apart from the jobs' stream: 2^64 / golden ratio, an odd constant
 * with well-mixed bits (any fixed constant would do; splitmix64 mixes the seed again). */
#define ARRIVAL_STREAM 0x9e3779b97f4a7c15ull

void eco_srv_params_default(struct eco_srv_params *p)
{
    *p = (struct eco_srv_params){
        .n_gpus = 8,
        .gpu_type = eco_catalog_find("V100"),
        .dt_s = 1.0,
        .startup_s = 20.0,
        .noise = 0.05,
        .seed = 1,
        .ts_slots = 0,
        .share = 1,
        .known_workloads = 1,
    };
    eco_gpusel_params_default(&p->sel);
}

int eco_srv_judge_parse(const char *name, enum eco_srv_judge *out)
{
    if (name && !strcasecmp(name, "lucid"))
        *out = ECO_SRV_JUDGE_LUCID;
    else if (name && !strcasecmp(name, "gavel"))
        *out = ECO_SRV_JUDGE_GAVEL;
    else
        return -EINVAL;
    return 0;
}

const char *eco_srv_judge_name(enum eco_srv_judge j)
{
    return j == ECO_SRV_JUDGE_GAVEL ? "gavel" : "lucid";
}

int eco_srv_strategy_known(const char *name)
{
    return name && (!strcasecmp(name, "static") || eco_gpusel_find(name) != NULL);
}

/* ---- series ------------------------------------------------------------------------------- */

int eco_srv_series(uint64_t seed, const struct eco_srv_series_spec *spec, struct eco_srv_job *out,
                   struct eco_error *err)
{
    uint32_t pool[256], np = 0;
    if (!spec || !out || spec->n_jobs == 0)
        return eco_errorf(err, -EINVAL, "series: no jobs");
    if (!(spec->work_min_s > 0) || !(spec->work_max_s >= spec->work_min_s) ||
        !isfinite(spec->work_max_s))
        return eco_errorf(err, -EINVAL, "series: work range %g..%g s: need 0 < min <= max",
                          spec->work_min_s, spec->work_max_s);
    if (!(spec->two_gpu_frac >= 0 && spec->two_gpu_frac <= 1))
        return eco_errorf(err, -EINVAL, "series: two-GPU share %g: must be in 0..1",
                          spec->two_gpu_frac);
    if (!(spec->submit_every_s >= 0) || !isfinite(spec->submit_every_s))
        return eco_errorf(err, -EINVAL, "series: submission gap %g s: must be >= 0",
                          spec->submit_every_s);
    for (size_t i = 0; i < eco_coloc_n_workloads() && np < 256; i++) {
        const struct eco_coloc_workload *w = eco_coloc_workload(i);
        if (w->source == ECO_COLOC_LUCID && w->gmem_mb > 0 && w->gmem_mb <= spec->gpu_mem_mb)
            pool[np++] = (uint32_t)i;
    }
    if (np == 0)
        return eco_errorf(err, -EINVAL, "series: no measured workload fits %g MiB",
                          spec->gpu_mem_mb);

    struct eco_rng r, ra;
    eco_rng_init(&r, seed);
    /* arrivals: a stream of their own (the seed's bits mixed with a fixed odd constant), so
     * that the jobs drawn from `r` stay those of the even series */
    eco_rng_init(&ra, seed ^ ARRIVAL_STREAM);
    double lmin = log(spec->work_min_s), lmax = log(spec->work_max_s), t = 0;
    for (uint32_t i = 0; i < spec->n_jobs; i++) {
        uint32_t wl = pool[(uint32_t)(eco_rng_uniform(&r) * np) % np];
        double u2 = eco_rng_uniform(&r), uw = eco_rng_uniform(&r);
        if (i > 0)
            t = spec->poisson ? t - spec->submit_every_s * log(1.0 - eco_rng_uniform(&ra))
                              : spec->submit_every_s * i;
        out[i] = (struct eco_srv_job){
            .id = i + 1,
            .wl = wl,
            .n_gpus = u2 < spec->two_gpu_frac ? 2 : 1,
            .work_s = exp(lmin + (lmax - lmin) * uw),
            .submit_s = t,
            .gpu_mem_mb = eco_coloc_workload(wl)->gmem_mb,
        };
    }
    return 0;
}

int eco_srv_series_write(FILE *f, const struct eco_srv_job *jobs, size_t n)
{
    if (fprintf(f, "id,workload,gpus,work_s,submit_s,gpu_mem_mb\n") < 0)
        return -EIO;
    for (size_t i = 0; i < n; i++)
        if (fprintf(f, "%u,%s,%u,%.3f,%.3f,%.0f\n", jobs[i].id,
                    eco_coloc_workload(jobs[i].wl)->name, jobs[i].n_gpus, jobs[i].work_s,
                    jobs[i].submit_s, jobs[i].gpu_mem_mb) < 0)
            return -EIO;
    return 0;
}

/* Parses one data row (fields f, nf of them) into *j. 0 or -EINVAL (err names the field). */
static int parse_row(const char *path, size_t line, char **f, int nf, uint32_t want_id,
                     double prev_submit, struct eco_srv_job *j, struct eco_error *err)
{
    int64_t id = 0, g = 0;
    double work = 0, sub = 0;
    if (nf < 5)
        return eco_errorf(err, -EINVAL, "%s:%zu: %d fields, need id,workload,gpus,work_s,submit_s",
                          path, line, nf);
    if (eco_parse_int64(f[0], &id) || id != want_id)
        return eco_errorf(err, -EINVAL, "%s:%zu: id: '%s', expected %u (ids count 1, 2, ...)", path,
                          line, f[0], want_id);
    int wl = eco_coloc_find(f[1], NULL);
    if (wl < 0)
        return eco_errorf(err, -EINVAL,
                          "%s:%zu: workload: unknown '%s' (names in docs/models/"
                          "colocation.md)",
                          path, line, f[1]);
    if (eco_coloc_workload((size_t)wl)->gmem_mb <= 0)
        return eco_errorf(err, -EINVAL, "%s:%zu: workload: '%s' has no measured memory", path, line,
                          f[1]);
    if (eco_parse_int64(f[2], &g) || g < 1 || g > ECO_SRV_MAX_JOB_GPUS)
        return eco_errorf(err, -EINVAL, "%s:%zu: gpus: '%s' is not 1..%d", path, line, f[2],
                          ECO_SRV_MAX_JOB_GPUS);
    if (eco_parse_double(f[3], &work) || !(work > 0))
        return eco_errorf(err, -EINVAL, "%s:%zu: work_s: '%s' is not a positive number of seconds",
                          path, line, f[3]);
    if (eco_parse_double(f[4], &sub) || !(sub >= prev_submit))
        return eco_errorf(err, -EINVAL,
                          "%s:%zu: submit_s: '%s' is not a time >= the previous row's", path, line,
                          f[4]);
    *j = (struct eco_srv_job){
        .id = want_id,
        .wl = (uint32_t)wl,
        .n_gpus = (uint32_t)g,
        .work_s = work,
        .submit_s = sub,
        .gpu_mem_mb = eco_coloc_workload((size_t)wl)->gmem_mb,
    };
    return 0;
}

int eco_srv_series_read(const char *path, struct eco_srv_job **out, size_t *n,
                        struct eco_error *err)
{
    FILE *fp = NULL;
    struct eco_srv_job *jobs = NULL;
    size_t nj = 0, cap = 0, line = 0;
    char buf[1024], *f[16];
    int rc = 0;

    *out = NULL;
    *n = 0;
    fp = fopen(path, "r");
    if (!fp) {
        rc = eco_errorf(err, -EINVAL, "%s: cannot open: %s", path, strerror(errno));
        goto out;
    }
    while (fgets(buf, sizeof buf, fp)) {
        line++;
        if (line == 1) {
            if (strncmp(buf, "id,workload,gpus,work_s,submit_s", 32) != 0) {
                rc = eco_errorf(err, -EINVAL,
                                "%s:1: header must start id,workload,gpus,work_s,submit_s", path);
                goto out;
            }
            continue;
        }
        if (buf[0] == '\n' || buf[0] == '\0')
            continue;
        int nf = eco_csv_split(buf, f, 16);
        if (nf < 0) {
            rc = eco_errorf(err, -EINVAL, "%s:%zu: bad CSV quoting", path, line);
            goto out;
        }
        if (nj == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct eco_srv_job *nb = realloc(jobs, nc * sizeof *nb);
            if (!nb) {
                rc = -ENOMEM;
                goto out;
            }
            jobs = nb;
            cap = nc;
        }
        rc = parse_row(path, line, f, nf, (uint32_t)nj + 1, nj ? jobs[nj - 1].submit_s : 0.0,
                       &jobs[nj], err);
        if (rc)
            goto out;
        nj++;
    }
    if (nj == 0)
        rc = eco_errorf(err, -EINVAL, "%s: no jobs", path);
out:
    if (fp)
        fclose(fp);
    if (rc) {
        free(jobs);
        return rc;
    }
    *out = jobs;
    *n = nj;
    return 0;
}

/* ---- engine ------------------------------------------------------------------------------- */

enum { QUEUED, STARTING, RUNNING, DONE };

struct jstate {
    int st;
    double t_start, progress;
    uint32_t gpus[ECO_SRV_MAX_JOB_GPUS];
    uint32_t static_gpu0; /* static: first GPU of its fixed set */
};

struct gstate {
    uint32_t jobs[ECO_GPUSEL_MAX_JOBS]; /* residents (starting or running), job indices */
    uint32_t n;
};

struct run {
    const struct eco_srv_params *p;
    const struct eco_srv_job *jobs;
    size_t n;
    struct jstate *js;
    struct eco_srv_job_out *out;
    struct gstate g[ECO_GPUSEL_MAX_GPUS];
    struct eco_gpusel *sel; /* NULL for static */
    int is_live, is_memthr, is_sharefit;
    uint32_t *truth_wl;  /* per job: the workload whose pairs slow it (the judge's) */
    uint32_t *decide_wl; /* per job: the workload live looks up (the decision model's) */
    double mem_total_mb, idle_w, busy_w, base_w;
    uint32_t running;
    struct eco_rng rng;
};

static double wl_util(uint32_t wl)
{
    double u = eco_coloc_workload(wl)->gpu_util;
    return u >= 0 ? u : 1.0; /* not measured: a full GPU */
}

/* Speed factor of job a next to job b on one GPU. Two copies of one workload share one
 * measured row with two figures: both get their mean. */
static double factor(uint32_t wa, uint32_t wb)
{
    struct eco_coloc_pair pr;
    if (eco_coloc_pair(wa, wb, &pr) < 0 || !pr.feasible)
        return ECO_COLOC_TIMESLICE;
    return wa == wb ? 0.5 * (pr.speed_a + pr.speed_b) : pr.speed_a;
}

/* Noise-free utilisation and allocated memory of GPU g from its running residents. */
static void gpu_load(const struct run *r, uint32_t g, double *util, double *mem_mb)
{
    const struct gstate *gs = &r->g[g];
    uint32_t wl[ECO_GPUSEL_MAX_JOBS], k = 0;
    *mem_mb = 0;
    for (uint32_t i = 0; i < gs->n; i++) {
        uint32_t j = gs->jobs[i];
        if (r->js[j].st != RUNNING)
            continue;
        wl[k++] = r->jobs[j].wl;
        *mem_mb += r->jobs[j].gpu_mem_mb;
    }
    if (k == 0) {
        *util = 0;
    } else if (k == 1) {
        *util = wl_util(wl[0]);
    } else {
        struct eco_coloc_pair pr;
        double sum = 0;
        for (uint32_t i = 0; i < k; i++)
            sum += wl_util(wl[i]);
        *util = fmin(1.0, sum);
        if (k == 2 && eco_coloc_pair(wl[0], wl[1], &pr) == 0 && pr.gpu_util >= 0)
            *util = pr.gpu_util;
    }
}

static void gpu_remove(struct gstate *gs, uint32_t j)
{
    for (uint32_t i = 0; i < gs->n; i++)
        if (gs->jobs[i] == j) {
            memmove(&gs->jobs[i], &gs->jobs[i + 1], (gs->n - i - 1) * sizeof gs->jobs[0]);
            gs->n--;
            return;
        }
}

/* Takes job j off its GPUs (end or out-of-memory). */
static void leave(struct run *r, uint32_t j)
{
    for (uint32_t k = 0; k < r->jobs[j].n_gpus; k++)
        gpu_remove(&r->g[r->js[j].gpus[k]], j);
    if (r->sel)
        eco_gpusel_release(r->sel, r->jobs[j].id);
    r->running--;
}

static void start(struct run *r, uint32_t j, const uint32_t *gpus, double t)
{
    struct jstate *s = &r->js[j];
    s->st = STARTING;
    s->t_start = t;
    s->progress = 0;
    for (uint32_t k = 0; k < r->jobs[j].n_gpus; k++) {
        s->gpus[k] = gpus[k];
        struct gstate *gs = &r->g[gpus[k]];
        gs->jobs[gs->n++] = j;
    }
    r->out[j].start_s = t;
    memcpy(r->out[j].gpus, gpus, r->jobs[j].n_gpus * sizeof gpus[0]);
    r->running++;
}

/* Static: job j starts when each GPU of its fixed set is empty and j is the earliest queued
 * job assigned to it (a hand-made per-GPU job list, run in order). */
static void pass_static(struct run *r, double t)
{
    uint32_t next[ECO_GPUSEL_MAX_GPUS];
    for (uint32_t g = 0; g < r->p->n_gpus; g++)
        next[g] = UINT32_MAX;
    for (uint32_t j = (uint32_t)r->n; j-- > 0;) {
        if (r->js[j].st != QUEUED)
            continue;
        for (uint32_t k = 0; k < r->jobs[j].n_gpus; k++)
            next[r->js[j].static_gpu0 + k] = j;
    }
    for (uint32_t j = 0; j < r->n; j++) {
        if (r->js[j].st != QUEUED || r->jobs[j].submit_s > t)
            continue;
        uint32_t gpus[ECO_SRV_MAX_JOB_GPUS], ok = 1;
        for (uint32_t k = 0; k < r->jobs[j].n_gpus; k++) {
            uint32_t g = r->js[j].static_gpu0 + k;
            gpus[k] = g;
            ok &= r->g[g].n == 0 && next[g] == j;
        }
        if (ok)
            start(r, j, gpus, t);
    }
}

/* A selection strategy: submission order, stopping at the first job that does not fit now
 * (fifo, as ecoschedd). 0 or -EINVAL for a job that can never fit. */
static int pass_select(struct run *r, double t, struct eco_error *err)
{
    uint32_t slots = r->p->ts_slots ? r->p->ts_slots : r->p->n_gpus, queued = 0;
    for (uint32_t j = 0; j < r->n; j++)
        queued += r->js[j].st == QUEUED && r->jobs[j].submit_s <= t;
    for (uint32_t j = 0; j < r->n; j++) {
        const struct eco_srv_job *job = &r->jobs[j];
        if (r->js[j].st != QUEUED)
            continue;
        if (job->submit_s > t || (r->is_memthr && r->running >= slots))
            return 0;
        struct eco_gpu_request req = {
            .job_id = job->id,
            .n_gpus = job->n_gpus,
            .mem_b = (uint64_t)(job->gpu_mem_mb * 1048576.0),
            .share = (r->is_live && r->p->share) || r->is_sharefit,
            /* the only workload knowledge a strategy gets: live's pair look-ups, and only
             * when the workloads are known (the daemon never knows them) */
            .coloc_ref = r->is_live && r->p->known_workloads ? r->decide_wl[j] + 1 : 0,
            .queued = queued,
        };
        uint32_t gpus[ECO_GPUSEL_MAX_GPUS];
        int rc = eco_gpusel_choose(r->sel, t, &req, gpus);
        if (rc == -EAGAIN)
            return 0;
        if (rc)
            return eco_errorf(err, -EINVAL,
                              "job %u (%u GPUs, %.0f MiB each) can never run on this "
                              "server",
                              job->id, job->n_gpus, job->gpu_mem_mb);
        if (eco_gpusel_reserve(r->sel, t, gpus, job->n_gpus, &req) < 0)
            return 0; /* a GPU holds the most jobs the selector records: wait */
        start(r, j, gpus, t);
        queued--;
    }
    return 0;
}

/* Jobs whose start-up has ended allocate their memory; one that does not fit fails (out of
 * memory) and is queued again at its place. */
static void allocate(struct run *r, double t)
{
    for (uint32_t j = 0; j < r->n; j++) {
        struct jstate *s = &r->js[j];
        if (s->st != STARTING || t < s->t_start + r->p->startup_s - 1e-9)
            continue;
        int oom = 0;
        for (uint32_t k = 0; k < r->jobs[j].n_gpus; k++) {
            double u, mem;
            gpu_load(r, s->gpus[k], &u, &mem);
            oom |= mem + r->jobs[j].gpu_mem_mb > r->mem_total_mb;
        }
        if (oom) {
            leave(r, j);
            s->st = QUEUED;
            r->out[j].restarts++;
        } else {
            s->st = RUNNING;
        }
    }
}

/* Feeds the selector one sample per GPU at t. */
static void sample(struct run *r, double t)
{
    for (uint32_t g = 0; g < r->p->n_gpus; g++) {
        double u, mem;
        gpu_load(r, g, &u, &mem);
        double x = eco_rng_uniform(&r->rng);
        u = fmin(1.0, fmax(0.0, u * (1.0 + r->p->noise * (2.0 * x - 1.0))));
        if (!r->sel)
            continue;
        struct eco_gpu_sample smp = {
            .t_s = t,
            .util = u,
            .mem_used_b = (uint64_t)(fmin(mem, r->mem_total_mb) * 1048576.0),
            .mem_total_b = (uint64_t)(r->mem_total_mb * 1048576.0),
        };
        eco_gpusel_sample(r->sel, g, &smp);
    }
}

/* Advances running jobs by dt from t; accounts utilisation, energy and sharing. Returns the
 * number of jobs that ended. */
static uint32_t advance(struct run *r, double t, struct eco_srv_result *res, double *util_gpu_s)
{
    const double dt = r->p->dt_s;
    uint32_t ended = 0;
    double power = r->base_w;
    /* per GPU: two or more jobs computing on it, and their speed factors (by the judge's pairs,
     * each job at the product of its factors with the others there) summed: under 1, the GPU
     * does less work than its jobs one after the other would (lossy_gpu_s) */
    int multi[ECO_GPUSEL_MAX_GPUS];
    double speed_sum[ECO_GPUSEL_MAX_GPUS];
    for (uint32_t g = 0; g < r->p->n_gpus; g++) {
        double u, mem;
        gpu_load(r, g, &u, &mem);
        *util_gpu_s += u * dt;
        double w = r->idle_w + (r->busy_w - r->idle_w) * u;
        power += w;
        res->gpu_energy_j += w * dt;
        uint32_t k = 0;
        for (uint32_t i = 0; i < r->g[g].n; i++)
            k += r->js[r->g[g].jobs[i]].st == RUNNING;
        if (k >= 2)
            res->shared_gpu_s += dt;
        if (k >= 3)
            res->shared3_gpu_s += dt;
        multi[g] = k >= 2;
        speed_sum[g] = 0.0;
    }
    res->energy_j += power * dt;

    double f[1024];
    uint32_t idx[1024], m = 0;
    for (uint32_t j = 0; j < r->n && m < 1024; j++) {
        if (r->js[j].st != RUNNING)
            continue;
        double fj = 1.0;
        int shared = 0;
        for (uint32_t k = 0; k < r->jobs[j].n_gpus; k++) {
            const struct gstate *gs = &r->g[r->js[j].gpus[k]];
            double fg = 1.0;
            for (uint32_t i = 0; i < gs->n; i++) {
                uint32_t o = gs->jobs[i];
                if (o == j || r->js[o].st != RUNNING)
                    continue;
                fg *= factor(r->truth_wl[j], r->truth_wl[o]);
                shared = 1;
            }
            speed_sum[r->js[j].gpus[k]] += fg;
            fj = fmin(fj, fg);
        }
        if (shared)
            r->out[j].shared_s += dt;
        f[m] = fj;
        idx[m++] = j;
    }
    for (uint32_t g = 0; g < r->p->n_gpus; g++)
        if (multi[g] && speed_sum[g] < 1.0)
            res->lossy_gpu_s += dt;
    /* factors first, then progress: a job ending in this step still slowed its neighbours */
    for (uint32_t i = 0; i < m; i++) {
        uint32_t j = idx[i];
        struct jstate *s = &r->js[j];
        double left = r->jobs[j].work_s - s->progress;
        if (f[i] * dt >= left - 1e-9) {
            r->out[j].end_s = t + (f[i] > 0 ? left / f[i] : dt);
            s->st = DONE;
            leave(r, j);
            ended++;
        } else {
            s->progress += f[i] * dt;
        }
    }
    return ended;
}

static int check(const struct eco_srv_params *p, const char *strategy,
                 const struct eco_srv_job *jobs, size_t n, struct eco_error *err)
{
    if (!p || !jobs || n == 0 || n > 1024)
        return eco_errorf(err, -EINVAL, "server: 1..1024 jobs");
    if (!eco_srv_strategy_known(strategy))
        return eco_errorf(err, -EINVAL,
                          "server: unknown strategy '%s' (static, exclusive, "
                          "memory-threshold, live, share-fit)",
                          strategy ? strategy : "(null)");
    if (p->n_gpus == 0 || p->n_gpus > ECO_GPUSEL_MAX_GPUS)
        return eco_errorf(err, -EINVAL, "server: %u GPUs: need 1..%d", p->n_gpus,
                          ECO_GPUSEL_MAX_GPUS);
    if (p->gpu_type < 0 || (size_t)p->gpu_type >= eco_catalog_count())
        return eco_errorf(err, -EINVAL, "server: unknown GPU type");
    if (!(p->dt_s > 0) || !isfinite(p->dt_s) || !(p->startup_s >= 0) || !isfinite(p->startup_s))
        return eco_errorf(err, -EINVAL,
                          "server: dt %g s / start-up %g s: need dt > 0, start-up >= 0", p->dt_s,
                          p->startup_s);
    if (!(p->noise >= 0 && p->noise <= 1))
        return eco_errorf(err, -EINVAL, "server: noise %g: must be in 0..1", p->noise);
    if (p->judge != ECO_SRV_JUDGE_LUCID && p->judge != ECO_SRV_JUDGE_GAVEL)
        return eco_errorf(err, -EINVAL, "server: judge %d: must be lucid or gavel", (int)p->judge);
    if (p->decide != ECO_SRV_JUDGE_LUCID && p->decide != ECO_SRV_JUDGE_GAVEL)
        return eco_errorf(err, -EINVAL, "server: decide %d: must be lucid or gavel",
                          (int)p->decide);
    if (eco_gpusel_params_check(&p->sel, err))
        return -EINVAL;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_srv_job *j = &jobs[i];
        if (j->id != i + 1 || j->wl >= eco_coloc_n_workloads() || j->n_gpus == 0 ||
            j->n_gpus > p->n_gpus || j->n_gpus > ECO_SRV_MAX_JOB_GPUS || !(j->work_s > 0) ||
            !(j->submit_s >= 0) || (i && j->submit_s < jobs[i - 1].submit_s) ||
            !(j->gpu_mem_mb >= 0))
            return eco_errorf(err, -EINVAL,
                              "server: job %zu: bad id, workload, GPU count (this "
                              "server has %u), work, submission or memory",
                              i + 1, p->n_gpus);
        sum += j->work_s;
    }
    if (sum / p->dt_s > MAX_STEPS)
        return eco_errorf(err, -EINVAL, "server: %g s of work in %g s steps: too many steps", sum,
                          p->dt_s);
    return 0;
}

/* Static sets: consecutive GPUs round-robin in submission order, multi-GPU sets aligned. */
static void assign_static(struct run *r)
{
    uint32_t cur = 0, ng = r->p->n_gpus;
    for (uint32_t j = 0; j < r->n; j++) {
        uint32_t k = r->jobs[j].n_gpus;
        if (cur % k)
            cur += k - cur % k;
        if (cur + k > ng)
            cur = 0;
        r->js[j].static_gpu0 = cur;
        cur = (cur + k) % ng;
    }
}

/* Each job's workload in the pair set `model` into wl[]: its own (Lucid), or its nearest Gavel
 * workload on the server's GPU type (Gavel). `what` names the use in the error. 0 or -EINVAL
 * (err says) for a workload without one. */
static int map_workloads(const struct run *r, int model, const char *gpu_type, const char *what,
                         uint32_t *wl, struct eco_error *err)
{
    for (size_t i = 0; i < r->n; i++) {
        int g = (int)r->jobs[i].wl;
        if (model == ECO_SRV_JUDGE_GAVEL)
            g = eco_coloc_gavel_match(r->jobs[i].wl, gpu_type);
        if (g < 0)
            return eco_errorf(err, -EINVAL, "job %u: workload '%s' has no Gavel counterpart (%s)",
                              r->jobs[i].id, eco_coloc_workload(r->jobs[i].wl)->name, what);
        wl[i] = (uint32_t)g;
    }
    return 0;
}

int eco_srv_run(const struct eco_srv_params *p, const char *strategy,
                const struct eco_srv_job *jobs, size_t n, struct eco_srv_job_out *out_jobs,
                struct eco_srv_result *res, struct eco_error *err)
{
    struct run r = {.p = p, .jobs = jobs, .n = n};
    struct eco_srv_job_out *own_out = NULL;
    int rc = check(p, strategy, jobs, n, err);
    if (rc)
        return rc;

    *res = (struct eco_srv_result){.n_jobs = n};
    r.js = calloc(n, sizeof *r.js);
    r.truth_wl = calloc(n, sizeof *r.truth_wl);
    r.decide_wl = calloc(n, sizeof *r.decide_wl);
    r.out = out_jobs ? out_jobs : (own_out = calloc(n, sizeof *own_out));
    if (!r.js || !r.out || !r.truth_wl || !r.decide_wl) {
        rc = -ENOMEM;
        goto out;
    }
    memset(r.out, 0, n * sizeof *r.out);
    const struct eco_gpu_type *type = eco_catalog_get((size_t)p->gpu_type);
    struct eco_node_group grp;
    eco_node_group_defaults(&grp, p->gpu_type, p->n_gpus);
    r.mem_total_mb = type->mem_gb * 1024.0;
    r.idle_w = type->idle_w;
    r.base_w = grp.base_w;
    if (eco_power_eval(p->gpu_type, ECO_WORKLOAD_GENERIC, type->default_limit_w, NULL, &r.busy_w))
        r.busy_w = type->default_limit_w;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].gpu_mem_mb > r.mem_total_mb) {
            rc = eco_errorf(err, -EINVAL, "job %u needs %.0f MiB per GPU; a %s has %.0f MiB",
                            jobs[i].id, jobs[i].gpu_mem_mb, type->name, r.mem_total_mb);
            goto out;
        }
    if ((rc = map_workloads(&r, p->judge, type->name, "judge", r.truth_wl, err)) ||
        (rc = map_workloads(&r, p->decide, type->name, "decide", r.decide_wl, err)))
        goto out;
    eco_rng_init(&r.rng, p->seed);
    if (!strcasecmp(strategy, "static")) {
        assign_static(&r);
    } else {
        r.sel = eco_gpusel_create(p->n_gpus, eco_gpusel_find(strategy), &p->sel);
        if (!r.sel) {
            rc = -errno;
            goto out;
        }
        r.is_live = !strcasecmp(strategy, "live");
        r.is_memthr = !strcasecmp(strategy, "memory-threshold");
        r.is_sharefit = !strcasecmp(strategy, "share-fit");
    }

    double t = jobs[0].submit_s, util_gpu_s = 0, t0 = t;
    size_t done = 0;
    for (uint64_t step = 0; done < n; step++) {
        t = t0 + (double)step * p->dt_s;
        sample(&r, t);
        if (r.sel)
            rc = pass_select(&r, t, err);
        else
            pass_static(&r, t);
        if (rc)
            goto out;
        allocate(&r, t);
        done += advance(&r, t, res, &util_gpu_s);
    }
    double t_end = t + p->dt_s, jct = 0;
    for (size_t i = 0; i < n; i++) {
        res->makespan_s = fmax(res->makespan_s, r.out[i].end_s - t0);
        jct += r.out[i].end_s - jobs[i].submit_s;
        res->oom_restarts += r.out[i].restarts;
    }
    res->avg_jct_s = jct / (double)n;
    res->gpu_util = util_gpu_s / ((t_end - t0) * p->n_gpus);
out:
    eco_gpusel_destroy(r.sel);
    free(r.truth_wl);
    free(r.decide_wl);
    free(r.js);
    free(own_out);
    return rc;
}
