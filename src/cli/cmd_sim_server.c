/* SPDX-License-Identifier: MIT */
/* `ecosched sim --server`: one multi-GPU server, a job series of measured workloads, GPU
 * choice by static assignment or a selection strategy, GPU sharing with measured slowdowns
 * (docs/simulator-server.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "ecosched/catalog.h"
#include "ecosched/coloc.h"
#include "ecosched/csv.h"
#include "ecosched/server.h"

#define MAX_STRATEGIES 8
#define DEFAULT_STRATEGIES "static,exclusive,memory-threshold,live"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ecosched sim --server [OPTIONS]\n"
            "\n"
            "Simulates one multi-GPU server running a series of training jobs of measured\n"
            "workloads (Lucid, ASPLOS '23): jobs declare GPU memory, show GPU utilisation,\n"
            "and jobs sharing a GPU slow each other as measured (docs/models/colocation.md).\n"
            "Compares GPU-choice strategies on the same series: makespan, average JCT, GPU\n"
            "utilisation, energy (docs/simulator-server.md).\n"
            "\n"
            "Server and series:\n"
            "  --gpus N              GPUs of the server, 1..64 (default 8)\n"
            "  --gpu-type T          catalog GPU type (default V100; `ecosched catalog`)\n"
            "  --jobs N              jobs in the drawn series, 1..1024 (default 40)\n"
            "  --seed S              seed of the series and the sampling noise (default 1)\n"
            "  --work MIN:MAX        run time alone, s, log-uniform (default 600:3600)\n"
            "  --two-gpu-frac F      share of 2-GPU jobs, 0..1 (default 0.2)\n"
            "  --submit-every S      gap between submissions, s (default 0: all at once)\n"
            "  --series FILE         run this series instead (CSV id,workload,gpus,work_s,\n"
            "                        submit_s; --write-series writes the format)\n"
            "  --write-series FILE   write the series used to FILE\n"
            "Strategies:\n"
            "  --strategy LIST       comma-separated, of static, exclusive, memory-threshold,\n"
            "                        live (default: all four)\n"
            "  --no-share            live: jobs do not share GPUs\n"
            "  --unknown-workloads   live: the selector does not know the jobs' workloads\n"
            "                        (shares by utilisation only)\n"
            "  --share-min-gain G    live: least summed speed factor of a pair (default 1.1)\n"
            "  --util-window S       utilisation averaging window, s (default 10)\n"
            "  --grace S             claim of a just-started job, s (default 30)\n"
            "  --ts-wait S           memory-threshold: wait between starts, s (default 30)\n"
            "  --ts-slots N          memory-threshold: most running jobs (default: GPUs)\n"
            "Model:\n"
            "  --startup S           job start-up before it allocates and computes (default 20)\n"
            "  --dt S                time step and GPU sampling period, s (default 1)\n"
            "  --noise F             sampled utilisation noise, 0..1 (default 0.05)\n"
            "Output:\n"
            "  --out DIR             write DIR/jobs-STRATEGY.csv (one row per job)\n"
            "  --json                results as JSON on stdout instead of the table\n"
            "  -h, --help            this help\n");
}

struct args {
    struct eco_srv_params p;
    struct eco_srv_series_spec spec;
    const char *strategies, *series, *write_series, *out;
    int json;
};

static int num(const char *opt, const char *s, double lo, double hi, double *out)
{
    double v;
    if (eco_parse_double(s, &v) || !(v >= lo && v <= hi)) {
        eco_cli_err("sim --server: %s: '%s' is not a number in %g..%g", opt, s, lo, hi);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int parse_work(const char *s, struct eco_srv_series_spec *spec)
{
    char buf[64], *colon;
    double lo, hi;
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
    eco_cli_err("sim --server: --work: '%s' is not MIN:MAX seconds with 0 < MIN <= MAX", s);
    return -EINVAL;
}

/* 0: run; -1: help printed; 2: bad usage. */
static int parse(int argc, char **argv, struct args *a)
{
    enum {
        O_GPUS = 256,
        O_TYPE,
        O_JOBS,
        O_SEED,
        O_WORK,
        O_TWO,
        O_EVERY,
        O_SERIES,
        O_WSERIES,
        O_STRAT,
        O_NOSHARE,
        O_UNKNOWN,
        O_GAIN,
        O_WINDOW,
        O_GRACE,
        O_TSWAIT,
        O_TSSLOTS,
        O_STARTUP,
        O_DT,
        O_NOISE,
        O_OUT,
        O_JSON
    };
    static const struct option opts[] = {
        {"gpus", required_argument, NULL, O_GPUS},
        {"gpu-type", required_argument, NULL, O_TYPE},
        {"jobs", required_argument, NULL, O_JOBS},
        {"seed", required_argument, NULL, O_SEED},
        {"work", required_argument, NULL, O_WORK},
        {"two-gpu-frac", required_argument, NULL, O_TWO},
        {"submit-every", required_argument, NULL, O_EVERY},
        {"series", required_argument, NULL, O_SERIES},
        {"write-series", required_argument, NULL, O_WSERIES},
        {"strategy", required_argument, NULL, O_STRAT},
        {"no-share", no_argument, NULL, O_NOSHARE},
        {"unknown-workloads", no_argument, NULL, O_UNKNOWN},
        {"share-min-gain", required_argument, NULL, O_GAIN},
        {"util-window", required_argument, NULL, O_WINDOW},
        {"grace", required_argument, NULL, O_GRACE},
        {"ts-wait", required_argument, NULL, O_TSWAIT},
        {"ts-slots", required_argument, NULL, O_TSSLOTS},
        {"startup", required_argument, NULL, O_STARTUP},
        {"dt", required_argument, NULL, O_DT},
        {"noise", required_argument, NULL, O_NOISE},
        {"out", required_argument, NULL, O_OUT},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    eco_srv_params_default(&a->p);
    a->spec = (struct eco_srv_series_spec){
        .n_jobs = 40, .work_min_s = 600, .work_max_s = 3600, .two_gpu_frac = 0.2};
    a->strategies = DEFAULT_STRATEGIES;
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    double v;
    while (rc == 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return -1;
        case O_GPUS:
            if (!(rc = num("--gpus", optarg, 1, ECO_GPUSEL_MAX_GPUS, &v)))
                a->p.n_gpus = (uint32_t)v;
            if (!rc && v != floor(v))
                rc = num("--gpus", "x", 1, 0, &v);
            break;
        case O_TYPE:
            a->p.gpu_type = eco_catalog_find(optarg);
            if (a->p.gpu_type < 0) {
                eco_cli_err("sim --server: --gpu-type: unknown '%s' (see `ecosched catalog`)",
                            optarg);
                rc = -EINVAL;
            }
            break;
        case O_JOBS:
            if (!(rc = num("--jobs", optarg, 1, 1024, &v)))
                a->spec.n_jobs = (uint32_t)v;
            break;
        case O_SEED:
            if (!(rc = num("--seed", optarg, 0, 9007199254740992.0, &v)))
                a->p.seed = (uint64_t)v;
            break;
        case O_WORK:
            rc = parse_work(optarg, &a->spec);
            break;
        case O_TWO:
            rc = num("--two-gpu-frac", optarg, 0, 1, &a->spec.two_gpu_frac);
            break;
        case O_EVERY:
            rc = num("--submit-every", optarg, 0, 1e7, &a->spec.submit_every_s);
            break;
        case O_SERIES:
            a->series = optarg;
            break;
        case O_WSERIES:
            a->write_series = optarg;
            break;
        case O_STRAT:
            a->strategies = optarg;
            break;
        case O_NOSHARE:
            a->p.share = 0;
            break;
        case O_UNKNOWN:
            a->p.known_workloads = 0;
            break;
        case O_GAIN:
            rc = num("--share-min-gain", optarg, 0, 2, &a->p.sel.share_min_gain);
            break;
        case O_WINDOW:
            rc = num("--util-window", optarg, 0, 86400, &a->p.sel.window_s);
            break;
        case O_GRACE:
            rc = num("--grace", optarg, 0, 86400, &a->p.sel.grace_s);
            break;
        case O_TSWAIT:
            rc = num("--ts-wait", optarg, 0, 86400, &a->p.sel.memthr_wait_s);
            break;
        case O_TSSLOTS:
            if (!(rc = num("--ts-slots", optarg, 0, 1024, &v)))
                a->p.ts_slots = (uint32_t)v;
            break;
        case O_STARTUP:
            rc = num("--startup", optarg, 0, 86400, &a->p.startup_s);
            break;
        case O_DT:
            rc = num("--dt", optarg, 0.001, 3600, &a->p.dt_s);
            break;
        case O_NOISE:
            rc = num("--noise", optarg, 0, 1, &a->p.noise);
            break;
        case O_OUT:
            a->out = optarg;
            break;
        case O_JSON:
            a->json = 1;
            break;
        case ':':
            eco_cli_err("sim --server: %s needs a value", argv[optind - 1]);
            return 2;
        default:
            eco_cli_err("sim --server: unknown option '%s' (try --server --help)",
                        argv[optind - 1]);
            return 2;
        }
    }
    if (rc)
        return 2;
    if (optind < argc) {
        eco_cli_err("sim --server: unexpected argument '%s'", argv[optind]);
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
            eco_cli_err("sim --server: --strategy: unknown '%s' (static, exclusive, "
                        "memory-threshold, live)",
                        t);
            return 2;
        }
        snprintf(names[(*n)++], 32, "%s", t);
    }
    if (*n == 0) {
        eco_cli_err("sim --server: --strategy: empty list");
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
        eco_cli_err("sim --server: %s: %s", path, strerror(errno));
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
        eco_cli_err("sim --server: %s: %s", path, strerror(errno));
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
               "\"oom_restarts\": %u, \"shared_gpu_s\": %.0f}%s\n",
               first ? "" : "", name, r->makespan_s, r->avg_jct_s, r->gpu_util, r->energy_j,
               r->gpu_energy_j, r->oom_restarts, r->shared_gpu_s, last ? "" : ",");
        return;
    }
    printf("%-18s %11.0f %10.0f %9.3f %11.3f %13u %13.2f\n", name, r->makespan_s, r->avg_jct_s,
           r->gpu_util, r->energy_j / 3.6e6, r->oom_restarts, r->shared_gpu_s / 3600.0);
}

int eco_cmd_sim_server(int argc, char **argv)
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
            eco_cli_err("sim --server: --series: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        }
    } else {
        n = a.spec.n_jobs;
        jobs = calloc(n, sizeof *jobs);
        if (!jobs || eco_srv_series(a.p.seed, &a.spec, jobs, &err)) {
            eco_cli_err("sim --server: %s", jobs ? err.msg : strerror(ENOMEM));
            status = jobs ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
            goto out;
        }
    }
    if (a.write_series) {
        FILE *f = fopen(a.write_series, "w");
        if (!f || eco_srv_series_write(f, jobs, n) || fclose(f)) {
            eco_cli_err("sim --server: --write-series: %s: %s", a.write_series, strerror(errno));
            status = ECO_EXIT_FAIL;
            goto out;
        }
    }
    if (a.out && mkdir(a.out, 0755) < 0 && errno != EEXIST) {
        eco_cli_err("sim --server: --out: %s: %s", a.out, strerror(errno));
        status = ECO_EXIT_FAIL;
        goto out;
    }
    outs = calloc(n, sizeof *outs);
    if (!outs) {
        status = ECO_EXIT_FAIL;
        goto out;
    }
    const char *type = eco_catalog_get((size_t)a.p.gpu_type)->name;
    if (a.json)
        printf("{\"server\": {\"gpus\": %u, \"gpu_type\": \"%s\", \"jobs\": %zu, \"seed\": %llu},\n"
               "  \"results\": [\n",
               a.p.n_gpus, type, n, (unsigned long long)a.p.seed);
    else
        printf("server: %u x %s, %zu jobs, seed %llu\n%-18s %11s %10s %9s %11s %13s %13s\n",
               a.p.n_gpus, type, n, (unsigned long long)a.p.seed, "strategy", "makespan_s",
               "avg_jct_s", "gpu_util", "energy_kwh", "oom_restarts", "shared_gpu_h");
    for (size_t s = 0; s < ns; s++) {
        struct eco_srv_result r;
        int rc = eco_srv_run(&a.p, names[s], jobs, n, outs, &r, &err);
        if (rc) {
            eco_cli_err("sim --server: %s: %s", names[s],
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
