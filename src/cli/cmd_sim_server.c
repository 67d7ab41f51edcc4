/* SPDX-License-Identifier: MIT */
/* `ecosched sim --server`: one multi-GPU server, a job series of measured workloads, GPU
 * choice by static assignment or a selection strategy, GPU sharing with measured slowdowns
 * (docs/simulator-server.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "cli.h"
#include "opts.h"
#include "ecosched/catalog.h"
#include "ecosched/coloc.h"
#include "util/csv.h"
#include "util/fs.h"
#include "sim/server.h"

#define MAX_STRATEGIES 8
#define DEFAULT_STRATEGIES "static,exclusive,memory-threshold,live"

struct args {
    struct eco_srv_params p;
    struct eco_srv_series_spec spec;
    const char *strategies, *series, *write_series, *out;
    unsigned long long seed; /* into p.seed */
    int json;
};

static int check_type(const struct eco_opt *o, const char *v, void *args);
static int check_work(const struct eco_opt *o, const char *v, void *args);
static int check_judge(const struct eco_opt *o, const char *v, void *args);
static int check_decide(const struct eco_opt *o, const char *v, void *args);
static int check_arrivals(const struct eco_opt *o, const char *v, void *args);
static void usage(FILE *f);

#define A(field) offsetof(struct args, field)
/* --seed: at most 2^53, the largest integer a double holds exactly (seeds were read as doubles
 * before; the same seeds stay accepted). */
#define MAX_SEED 9007199254740992.0
/* Longest --util-window, --grace, --ts-wait, --startup: a day, far beyond any job's start-up. */
#define MAX_DAY_S 86400

/* `sim --server`'s options, in --help order. */
static const struct eco_opt server_opts[] = {
    {.kind = ECO_OPT_HEADING, .help = "Server and series:"},
    {.name = "gpus",
     .kind = ECO_OPT_WHOLE32,
     .lo = 1,
     .hi = ECO_GPUSEL_MAX_GPUS,
     .offset = A(p.n_gpus),
     .arg = "N",
     .help = "GPUs of the server, 1..64 (default 8)"},
    {.name = "gpu-type",
     .kind = ECO_OPT_CUSTOM,
     .arg = "T",
     .help = "catalog GPU type (default V100; `ecosched catalog`)",
     .check = check_type},
    {.name = "jobs",
     .kind = ECO_OPT_WHOLE32,
     .lo = 1,
     .hi = 1024,
     .offset = A(spec.n_jobs),
     .arg = "N",
     .help = "jobs in the drawn series, 1..1024 (default 40)"},
    {.name = "seed",
     .kind = ECO_OPT_WHOLE,
     .lo = 0,
     .hi = MAX_SEED,
     .offset = A(seed),
     .arg = "S",
     .help = "seed of the series and the sampling noise (default 1)"},
    {.name = "work",
     .kind = ECO_OPT_CUSTOM,
     .arg = "MIN:MAX",
     .help = "run time alone, s, log-uniform (default 600:3600)",
     .check = check_work},
    {.name = "two-gpu-frac",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .offset = A(spec.two_gpu_frac),
     .arg = "F",
     .help = "share of 2-GPU jobs, 0..1 (default 0.2)"},
    {.name = "submit-every",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e7,
     .offset = A(spec.submit_every_s),
     .arg = "S",
     .help = "gap between submissions, s (default 0: all at once);\n"
             "with --arrivals poisson, the mean gap"},
    {.name = "arrivals",
     .kind = ECO_OPT_CUSTOM,
     .arg = "A",
     .help = "even (default: --submit-every apart) or poisson\n"
             "(exponential gaps of mean --submit-every)",
     .check = check_arrivals},
    {.name = "series",
     .kind = ECO_OPT_STR,
     .offset = A(series),
     .arg = "FILE",
     .help = "run this series instead (CSV id,workload,gpus,work_s,\n"
             "submit_s; --write-series writes the format)"},
    {.name = "write-series",
     .kind = ECO_OPT_STR,
     .offset = A(write_series),
     .arg = "FILE",
     .help = "write the series used to FILE"},
    {.kind = ECO_OPT_HEADING, .help = "Strategies:"},
    {.name = "strategy",
     .kind = ECO_OPT_STR,
     .offset = A(strategies),
     .arg = "LIST",
     .help = "comma-separated, of static, exclusive, memory-threshold,\n"
             "live, share-fit (default: the first four)"},
    {.name = "no-share",
     .kind = ECO_OPT_FLAG,
     .lo = 0,
     .offset = A(p.share),
     .help = "live: jobs do not share GPUs"},
    {.name = "unknown-workloads",
     .kind = ECO_OPT_FLAG,
     .lo = 0,
     .offset = A(p.known_workloads),
     .help = "live: the selector does not know the jobs' workloads\n"
             "(shares by utilisation only)"},
    {.name = "share-min-gain",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 2,
     .offset = A(p.sel.share_min_gain),
     .arg = "G",
     .help = "live: least summed speed factor of a pair (default 1.1)"},
    {.name = "share-util",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .offset = A(p.sel.share_util_max),
     .arg = "U",
     .help = "live, unknown workloads: a sharing job joins a GPU only\n"
             "under this averaged utilisation (default 0.7)"},
    {.name = "share-max-jobs",
     .kind = ECO_OPT_WHOLE32,
     .lo = 0,
     .hi = ECO_GPUSEL_MAX_JOBS,
     .offset = A(p.sel.share_max_jobs),
     .arg = "N",
     .help = "live: most jobs on one GPU, 0..16 (default 0: 16)"},
    {.name = "share-settle",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = MAX_DAY_S,
     .offset = A(p.sel.share_settle_s),
     .arg = "S",
     .help = "live, unknown workloads: no job joins a GPU whose newest\n"
             "job started less than S ago (default 0)"},
    {.name = "share-min-queue",
     .kind = ECO_OPT_WHOLE32,
     .lo = 0,
     .hi = 1024,
     .offset = A(p.sel.share_min_queue),
     .arg = "N",
     .help = "live, unknown workloads: a job joins a GPU beside others\n"
             "only while N jobs wait, itself included (default 0)"},
    {.name = "util-window",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = MAX_DAY_S,
     .offset = A(p.sel.window_s),
     .arg = "S",
     .help = "utilisation averaging window, s (default 10)"},
    {.name = "grace",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = MAX_DAY_S,
     .offset = A(p.sel.grace_s),
     .arg = "S",
     .help = "claim of a just-started job, s (default 30)"},
    {.name = "ts-wait",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = MAX_DAY_S,
     .offset = A(p.sel.memthr_wait_s),
     .arg = "S",
     .help = "memory-threshold: wait between starts, s (default 30)"},
    {.name = "ts-slots",
     .kind = ECO_OPT_WHOLE32,
     .lo = 0,
     .hi = 1024,
     .offset = A(p.ts_slots),
     .arg = "N",
     .help = "memory-threshold: most running jobs (default: GPUs)"},
    {.kind = ECO_OPT_HEADING, .help = "Model:"},
    {.name = "judge",
     .kind = ECO_OPT_CUSTOM,
     .arg = "J",
     .help = "pairs that slow sharing jobs: lucid (default) or gavel",
     .check = check_judge},
    {.name = "decide",
     .kind = ECO_OPT_CUSTOM,
     .arg = "M",
     .help = "pairs live decides with (known workloads): lucid\n"
             "(default) or gavel; held out when it differs from --judge",
     .check = check_decide},
    {.name = "startup",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = MAX_DAY_S,
     .offset = A(p.startup_s),
     .arg = "S",
     .help = "job start-up before it allocates and computes (default 20)"},
    {.name = "dt",
     .kind = ECO_OPT_NUM,
     .lo = 0.001,
     .hi = 3600,
     .offset = A(p.dt_s),
     .arg = "S",
     .help = "time step and GPU sampling period, s (default 1)"},
    {.name = "noise",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .offset = A(p.noise),
     .arg = "F",
     .help = "sampled utilisation noise, 0..1 (default 0.05)"},
    {.kind = ECO_OPT_HEADING, .help = "Output:"},
    {.name = "out",
     .kind = ECO_OPT_STR,
     .offset = A(out),
     .arg = "DIR",
     .help = "write DIR/jobs-STRATEGY.csv (one row per job)"},
    {.name = "json",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(json),
     .help = "results as JSON on stdout instead of the table"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};
#undef A

static const struct eco_opt_cmd server_cmd = {
    .prefix = "sim --server",
    .opts = server_opts,
    .help_col = 24,
    .needs_value = "sim --server: %s needs a value",
    .unknown = "sim --server: unknown option '%s' (try --server --help)",
    .usage = usage,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ecosched sim --server [OPTIONS]\n"
               "\n"
               "Simulates one multi-GPU server running a series of training jobs of measured\n"
               "workloads (Lucid, ASPLOS '23): jobs declare GPU memory, show GPU utilisation,\n"
               "and jobs sharing a GPU slow each other as measured (docs/models/colocation.md).\n"
               "Compares GPU-choice strategies on the same series: makespan, average JCT, GPU\n"
               "utilisation, energy (docs/simulator-server.md).\n"
               "\n");
    eco_cli__opt_help(f, &server_cmd);
}

static int check_type(const struct eco_opt *o, const char *v, void *args)
{
    struct args *a = args;
    (void)o;
    a->p.gpu_type = eco_catalog_find(v);
    if (a->p.gpu_type < 0) {
        eco_cli__err("sim --server: --gpu-type: unknown '%s' (see `ecosched catalog`)", v);
        return 2;
    }
    return 0;
}

/* --judge and --decide: a pair set by name into *out; 2 (usage) with the option named. */
static int parse_model(const char *opt, const char *v, int *out)
{
    enum eco_srv_judge j;
    if (eco_srv_judge_parse(v, &j)) {
        eco_cli__err("sim --server: --%s: unknown '%s' (lucid or gavel)", opt, v);
        return 2;
    }
    *out = (int)j;
    return 0;
}

static int check_judge(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    return parse_model("judge", v, &((struct args *)args)->p.judge);
}

static int check_decide(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    return parse_model("decide", v, &((struct args *)args)->p.decide);
}

static int check_arrivals(const struct eco_opt *o, const char *v, void *args)
{
    struct eco_srv_series_spec *spec = &((struct args *)args)->spec;
    (void)o;
    if (!strcasecmp(v, "even") || !strcasecmp(v, "poisson")) {
        spec->poisson = !strcasecmp(v, "poisson");
        return 0;
    }
    eco_cli__err("sim --server: --arrivals: unknown '%s' (even or poisson)", v);
    return 2;
}

static int check_work(const struct eco_opt *o, const char *s, void *args)
{
    struct eco_srv_series_spec *spec = &((struct args *)args)->spec;
    char buf[64], *colon;
    double lo, hi;
    (void)o;
    snprintf(buf, sizeof buf, "%s", s);
    colon = strchr(buf, ':');
    if (!colon)
        goto bad;
    *colon = '\0';
    if (eco_parse_double(buf, &lo) || eco_parse_double(colon + 1, &hi) || !(lo > 0) ||
        !(hi >= lo) || hi > 1e7)
        goto bad;
    spec->work_min_s = lo;
    spec->work_max_s = hi;
    return 0;
bad:
    eco_cli__err("sim --server: --work: '%s' is not MIN:MAX seconds with 0 < MIN <= MAX", s);
    return 2;
}

/* 0: run; -1: help printed; 2: bad usage. */
static int parse(int argc, char **argv, struct args *a)
{
    memset(a, 0, sizeof *a);
    eco_srv_params_default(&a->p);
    a->spec = (struct eco_srv_series_spec){
        .n_jobs = 40, .work_min_s = 600, .work_max_s = 3600, .two_gpu_frac = 0.2};
    a->strategies = DEFAULT_STRATEGIES;
    a->seed = a->p.seed;
    int rc = eco_cli__opt_parse(&server_cmd, argc, argv, a);
    if (rc)
        return rc;
    a->p.seed = (uint64_t)a->seed;
    if (optind < argc) {
        eco_cli__err("sim --server: unexpected argument '%s'", argv[optind]);
        return 2;
    }
    a->spec.gpu_mem_mb = eco_catalog_get((size_t)a->p.gpu_type)->mem_gb * 1024.0;
    return 0;
}

static int split_strategies(const char *list, char names[][32], size_t *n)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    *n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!eco_srv_strategy_known(t) || *n == MAX_STRATEGIES) {
            struct eco_cli_list known = {"static"}; /* static assignment, then the selectors */
            for (const struct eco_gpusel_ops *const *g = eco_gpusel_all(); *g; g++)
                eco_cli__list_add(&known, (*g)->name);
            eco_cli__err("sim --server: --strategy: unknown '%s' (%s)", t, known.buf);
            return 2;
        }
        snprintf(names[(*n)++], 32, "%s", t);
    }
    if (*n == 0) {
        eco_cli__err("sim --server: --strategy: empty list");
        return 2;
    }
    return 0;
}

static int write_jobs(const char *dir, const char *strategy, const struct eco_srv_job *jobs,
                      const struct eco_srv_job_out *o, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/jobs-%s.csv", dir, strategy);
    FILE *f = fopen(path, "w");
    if (!f) {
        eco_cli__err("sim --server: %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    fprintf(f, "id,workload,gpus,work_s,submit_s,start_s,end_s,jct_s,gpu_ids,restarts,shared_s\n");
    for (size_t i = 0; i < n; i++) {
        char ids[64] = "";
        size_t len = 0;
        for (uint32_t k = 0; k < jobs[i].n_gpus; k++)
            len +=
                (size_t)snprintf(ids + len, sizeof ids - len, "%s%u", k ? " " : "", o[i].gpus[k]);
        fprintf(f, "%u,%s,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%u,%.1f\n", jobs[i].id,
                eco_coloc_workload(jobs[i].wl)->name, jobs[i].n_gpus, jobs[i].work_s,
                jobs[i].submit_s, o[i].start_s, o[i].end_s, o[i].end_s - jobs[i].submit_s, ids,
                o[i].restarts, o[i].shared_s);
    }
    if (fclose(f)) {
        eco_cli__err("sim --server: %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    return 0;
}

static void print_result(const struct args *a, const char *name, const struct eco_srv_result *r,
                         int first, int last)
{
    if (a->json) {
        printf("%s    {\"strategy\": \"%s\", \"makespan_s\": %.3f, \"avg_jct_s\": %.3f, "
               "\"gpu_util\": %.4f, \"energy_j\": %.0f, \"gpu_energy_j\": %.0f, "
               "\"oom_restarts\": %u, \"shared_gpu_s\": %.0f, \"shared3_gpu_s\": %.0f, "
               "\"lossy_gpu_s\": %.0f}%s\n",
               first ? "" : "", name, r->makespan_s, r->avg_jct_s, r->gpu_util, r->energy_j,
               r->gpu_energy_j, r->oom_restarts, r->shared_gpu_s, r->shared3_gpu_s, r->lossy_gpu_s,
               last ? "" : ",");
        return;
    }
    printf("%-18s %11.0f %10.0f %9.3f %11.3f %13u %13.2f %14.2f\n", name, r->makespan_s,
           r->avg_jct_s, r->gpu_util, r->energy_j / 3.6e6, r->oom_restarts,
           r->shared_gpu_s / 3600.0, r->shared3_gpu_s / 3600.0);
}

int eco_cli__cmd_sim_server(int argc, char **argv)
{
    struct args a = {0};
    struct eco_srv_job *jobs = NULL;
    struct eco_srv_job_out *outs = NULL;
    size_t n = 0, ns = 0;
    char names[MAX_STRATEGIES][32];
    struct eco_error err = {{0}};
    int status = parse(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    if ((status = split_strategies(a.strategies, names, &ns)))
        return status;

    if (a.series) {
        int rc = eco_srv_series_read(a.series, &jobs, &n, &err);
        if (rc) {
            eco_cli__err("sim --server: --series: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        }
    } else {
        n = a.spec.n_jobs;
        jobs = calloc(n, sizeof *jobs);
        if (!jobs || eco_srv_series(a.p.seed, &a.spec, jobs, &err)) {
            eco_cli__err("sim --server: %s", jobs ? err.msg : strerror(ENOMEM));
            status = jobs ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
            goto out;
        }
    }
    if (a.write_series) {
        FILE *f = fopen(a.write_series, "w");
        if (!f || eco_srv_series_write(f, jobs, n) || fclose(f)) {
            eco_cli__err("sim --server: --write-series: %s: %s", a.write_series, strerror(errno));
            status = ECO_EXIT_FAIL;
            goto out;
        }
    }
    int mk = a.out ? eco_mkdir(a.out, 0755) : 0;
    if (mk < 0) {
        eco_cli__err("sim --server: --out: %s: %s", a.out, strerror(-mk));
        status = ECO_EXIT_FAIL;
        goto out;
    }
    outs = calloc(n, sizeof *outs);
    if (!outs) {
        status = ECO_EXIT_FAIL;
        goto out;
    }
    const char *type = eco_catalog_get((size_t)a.p.gpu_type)->name;
    /* the default models print nothing extra: the output stays what it was before --judge
     * and --decide */
    char models[96] = "";
    int held_out = a.p.judge != a.p.decide;
    if (a.p.judge != ECO_SRV_JUDGE_LUCID || a.p.decide != ECO_SRV_JUDGE_LUCID)
        snprintf(models, sizeof models,
                 a.json ? ", \"judge\": \"%s\", \"decide\": \"%s\", \"held_out\": %s"
                        : ", judge %s, decide %s%s",
                 eco_srv_judge_name(a.p.judge), eco_srv_judge_name(a.p.decide),
                 a.json ? (held_out ? "true" : "false") : (held_out ? " (held out)" : ""));
    if (a.json)
        printf("{\"server\": {\"gpus\": %u, \"gpu_type\": \"%s\", \"jobs\": %zu, \"seed\": "
               "%llu%s},\n  \"results\": [\n",
               a.p.n_gpus, type, n, (unsigned long long)a.p.seed, models);
    else
        printf("server: %u x %s, %zu jobs, seed %llu%s\n%-18s %11s %10s %9s %11s %13s %13s %14s\n",
               a.p.n_gpus, type, n, (unsigned long long)a.p.seed, models, "strategy", "makespan_s",
               "avg_jct_s", "gpu_util", "energy_kwh", "oom_restarts", "shared_gpu_h",
               "shared3_gpu_h");
    for (size_t s = 0; s < ns; s++) {
        struct eco_srv_result r;
        int rc = eco_srv_run(&a.p, names[s], jobs, n, outs, &r, &err);
        if (rc) {
            eco_cli__err("sim --server: %s: %s", names[s],
                         rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
            goto out;
        }
        print_result(&a, names[s], &r, s == 0, s + 1 == ns);
        if (a.out && (status = write_jobs(a.out, names[s], jobs, outs, n)))
            goto out;
    }
    if (a.json)
        printf("  ]\n}\n");
out:
    free(jobs);
    free(outs);
    return status;
}
