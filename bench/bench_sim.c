/* SPDX-License-Identifier: MIT */
/* Simulator benchmarks on the bundled ITP traces, fixed seeds; prints figures as Markdown.
 * Never pass/fail: bench/run.sh writes the output to bench/README.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "sim/sim.h"
#include "sim/trace.h"

#define RUNS 5

static const char *data_dir = "data/itp";

static struct eco_jobset *load_cluster(int k)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cluster%02d.csv.gz", data_dir, k);
    struct eco_jobset *set = eco_jobset_create();
    struct eco_trace_opts opts = {.format = ECO_TRACE_ITP};
    struct eco_error err;
    if (!set || eco_trace_load(path, &opts, set, &err)) {
        fprintf(stderr, "eco_bench: %s\n", set ? err.msg : "out of memory");
        exit(1);
    }
    return set;
}

/* All ten ITP clusters, each cluster's jobs with their own times. */
static struct eco_jobset *load_all(void)
{
    struct eco_jobset *set = eco_jobset_create();
    struct eco_trace_opts opts = {.format = ECO_TRACE_ITP};
    struct eco_error err;
    for (int k = 1; k <= 10; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/cluster%02d.csv.gz", data_dir, k);
        if (eco_trace_load(path, &opts, set, &err)) {
            fprintf(stderr, "eco_bench: %s\n", err.msg);
            exit(1);
        }
    }
    return set;
}

/* The first n jobs of `copies` replays of `src`, copy k shifted by k x shift_s. */
static struct eco_jobset *replay(const struct eco_jobset *src, size_t n, double shift_s)
{
    struct eco_jobset *set = eco_jobset_create();
    for (size_t k = 0; set->n < n; k++)
        for (size_t i = 0; i < src->n && set->n < n; i++) {
            struct eco_job *j = eco_jobset_add(set);
            if (!j) {
                fprintf(stderr, "eco_bench: out of memory\n");
                exit(1);
            }
            *j = src->jobs[i];
            j->id_off = 0;
            j->submit_s += (double)k * shift_s;
        }
    return set;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median simulation wall time of `runs` runs; the last run's summary in *out. */
static double time_sim(const char *spec, struct eco_jobset *set, const char *policy,
                       const char *placement, int runs, struct eco_sim_summary *out)
{
    struct eco_cluster *c = NULL;
    struct eco_error err;
    if (eco_cluster_is_auto(spec) ? eco_cluster_auto(spec, set, &c, &err)
                                  : eco_cluster_parse_spec(spec, &c, &err)) {
        fprintf(stderr, "eco_bench: %s\n", err.msg);
        exit(1);
    }
    struct eco_sim_config cfg = {
        .policy = eco_policy_find(policy), .placement = eco_placement_find(placement), .seed = 1};
    double t[RUNS];
    for (int r = 0; r < runs; r++) {
        struct eco_sim_result res;
        if (eco_sim_run(c, set, &cfg, &res, &err)) {
            fprintf(stderr, "eco_bench: %s\n", err.msg);
            exit(1);
        }
        t[r] = res.summary.sim_wall_s;
        *out = res.summary;
        eco_sim_result_fini(&res);
    }
    eco_cluster_destroy(c);
    qsort(t, (size_t)runs, sizeof t[0], cmp_double);
    return t[runs / 2];
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* Copies of all ITP jobs start 4 days apart, so about 15 copies overlap: an average demand
 * near 60% of 16,384 GPUs. */
#define SHIFT_S (4.0 * 86400.0)

static void bench_small(void)
{
    struct eco_sim_summary s;
    struct eco_jobset *all = load_all();
    printf("| case | jobs | GPUs | policy | placement | sim wall s (median of %d) | target |\n",
           RUNS);
    printf("|---|---:|---:|---|---|---:|---|\n");
    struct eco_jobset *c04 = load_cluster(4);
    struct eco_jobset *tenk = replay(c04, 10000, 0);
    double t = time_sim("30x8", tenk, "fifo", "pack", RUNS, &s);
    printf("| ITP cluster04, first 10,000 jobs | %zu | %llu | fifo | pack | %.4f | < 0.05 |\n",
           s.jobs, (unsigned long long)s.cluster_gpus, t);
    struct eco_jobset *hundk = replay(all, 100000, 60.0 * 86400.0);
    t = time_sim("300x8", hundk, "fifo", "pack", RUNS, &s);
    printf("| all ITP jobs replayed to 100,000 | %zu | %llu | fifo | pack | %.4f | < 0.5 |\n",
           s.jobs, (unsigned long long)s.cluster_gpus, t);
    double total = 0;
    size_t jobs = 0;
    for (int k = 1; k <= 10; k++) {
        struct eco_jobset *set = load_cluster(k);
        total += time_sim("auto", set, "fifo", "pack", RUNS, &s);
        jobs += s.jobs;
        eco_jobset_destroy(set);
    }
    printf("| all 10 ITP clusters, each its own run (--cluster auto) | %zu | per cluster | fifo | "
           "pack | %.4f (sum) | < 1 |\n",
           jobs, total);
    printf("\nEvery policy on ITP cluster04 (15,802 jobs, --cluster auto = 704 GPUs):\n\n");
    printf("| policy | placement | sim wall s | avg JCT h | events |\n|---|---|---:|---:|---:|\n");
    const char *pols[] = {"fifo", "greedy", "easy", "sjf", "las"};
    for (size_t i = 0; i < 5; i++) {
        t = time_sim("auto", c04, pols[i], "pack", 3, &s);
        printf("| %s | pack | %.4f | %.2f | %llu |\n", pols[i], t, s.avg_jct_s / 3600,
               (unsigned long long)s.events);
    }
    eco_jobset_destroy(tenk);
    eco_jobset_destroy(hundk);
    eco_jobset_destroy(c04);
    eco_jobset_destroy(all);
}

/* Growth with n at a constant load: the n jobs are ceil(n / 69,351) copies of the ITP jobs
 * spread evenly over the traces' 60 days, on a cluster scaled with n (2,048 nodes at 1M). */
static void bench_scaling(void)
{
    struct eco_sim_summary s;
    struct eco_jobset *all = load_all();
    printf("| jobs | GPUs | policy | placement | sim wall s | ratio to half the jobs |\n");
    printf("|---:|---:|---|---|---:|---:|\n");
    double prev = 0;
    for (size_t n = 125000; n <= 1000000; n *= 2) {
        size_t copies = (n + all->n - 1) / all->n;
        struct eco_jobset *set = replay(all, n, 60.0 * 86400.0 / (double)copies);
        char spec[32];
        snprintf(spec, sizeof spec, "%zux8", 2048 * n / 1000000);
        double t = time_sim(spec, set, "fifo", "pack", RUNS, &s);
        if (prev > 0)
            printf("| %zu | %llu | fifo | pack | %.3f | %.2f |\n", n,
                   (unsigned long long)s.cluster_gpus, t, t / prev);
        else
            printf("| %zu | %llu | fifo | pack | %.3f | |\n", n, (unsigned long long)s.cluster_gpus,
                   t);
        prev = t;
        eco_jobset_destroy(set);
    }
    eco_jobset_destroy(all);
}

/* Run in a fresh process so that peak memory is this case's alone. */
static void bench_million(void)
{
    struct eco_sim_summary s;
    struct eco_jobset *all = load_all();
    struct eco_jobset *set = replay(all, 1000000, SHIFT_S);
    eco_jobset_destroy(all);
    double t = time_sim("2048x8", set, "fifo", "pack", 1, &s);
    printf("| 1,000,000 ITP jobs (replayed, copies 4 days apart) | %zu | %llu in %u nodes | fifo | "
           "pack | %.3f | %.0f MiB | < 10 s, < 1 GiB |\n",
           s.jobs, (unsigned long long)s.cluster_gpus, s.cluster_nodes, t, peak_rss_mib());
    printf("\n(completed %zu, avg JCT %.2f h, GPU utilisation %.3f, %llu events)\n", s.completed,
           s.avg_jct_s / 3600, s.gpu_util, (unsigned long long)s.events);
    eco_jobset_destroy(set);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "small";
    if (argc > 2)
        data_dir = argv[2];
    if (!strcmp(what, "small"))
        bench_small();
    else if (!strcmp(what, "scaling"))
        bench_scaling();
    else if (!strcmp(what, "million"))
        bench_million();
    else {
        fprintf(stderr, "usage: eco_bench small|scaling|million [DATA_DIR]\n");
        return 2;
    }
    return 0;
}
