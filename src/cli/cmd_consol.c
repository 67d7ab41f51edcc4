/* SPDX-License-Identifier: MIT */
/* `ecosched sim --consolidation NAME`: container consolidation on GPU hosts under one or more
 * consolidation policies, on the same containers (docs/policies/consolidation.md). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "ecosched/consol_sim.h"
#include "ecosched/sim.h"
#include "ecosched/trace.h"

#define MAX_POLICIES 16

struct consol_args {
    const char *policies;
    const char *trace;
    const char *cluster;
    const char *out;
    struct eco_consol_thresholds t;
    unsigned long long containers;
    double hours, period_s, mig_bw, corr_s;
    unsigned long long seed;
    int json, quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ecosched sim --consolidation NAME[,NAME...] --trace PODS --cluster SPEC "
            "[OPTIONS]\n"
            "\n"
            "Simulates containers whose GPU utilisation and GPU memory change every period on GPU\n"
            "hosts, under consolidation policies that migrate containers and power hosts down.\n"
            "Every policy runs on the same containers (docs/policies/consolidation.md).\n"
            "\n"
            "  --consolidation P   none, thr-mmt, mad-mmt, iqr-mmt, lr-mmt (CloudSim on GPU\n"
            "                      utilisation), dual-pabfd, dgddep (dual thresholds); a comma\n"
            "                      list runs each, one table\n"
            "  --trace PODS        Alibaba openb pod list (GPU requests of the containers)\n"
            "  --cluster SPEC      hosts: COUNTxGPUS[:TYPE][,...] or a cluster JSON file\n"
            "  --thresholds L,H,LM,HM  dual thresholds LO_UTIL,HI_UTIL,LO_MEM,HI_MEM in 0-1\n"
            "                      (default 0.3,0.8,0.3,0.8)\n"
            "  --containers N      containers sampled from the pods (default 1000)\n"
            "  --hours H           simulated time (default 24)\n"
            "  --period S          consolidation period in seconds (default 300)\n"
            "  --migration-bw M    checkpoint/restore bandwidth, MiB/s (default 596: half of\n"
            "                      10 Gb/s)\n"
            "  --corr-s S          correlation time of container activity (default 3600)\n"
            "  --seed N            random seed (default 1); same input and seed, same output\n"
            "  --out DIR           DIR/summary.json and DIR/timeline.csv (several policies:\n"
            "                      DIR/NAME/...)\n"
            "  --json              print the summaries as JSON\n"
            "  -q, --quiet         no notes on stderr\n"
            "  -h, --help          this help\n"
            "\n"
            "Exit status: 0 on success, 2 on bad options or bad input, 1 on other failures.\n");
}

static int num(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > lo) || v > hi) {
        eco_cli_err("sim: %s: '%s' is not a number > %g and <= %g", opt, s, lo, hi);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int whole(const char *opt, const char *s, unsigned long long lo, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || errno || *end || v < lo || v > 10000000ULL) {
        eco_cli_err("sim: %s: '%s' is not a whole number in %llu-10000000", opt, s, lo);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, struct consol_args *a)
{
    enum {
        O_CONS = 256,
        O_TRACE,
        O_CLUSTER,
        O_THR,
        O_CTRS,
        O_HOURS,
        O_PERIOD,
        O_BW,
        O_CORR,
        O_SEED,
        O_OUT,
        O_JSON
    };
    static const struct option opts[] = {
        {"consolidation", required_argument, NULL, O_CONS},
        {"trace", required_argument, NULL, O_TRACE},
        {"cluster", required_argument, NULL, O_CLUSTER},
        {"thresholds", required_argument, NULL, O_THR},
        {"containers", required_argument, NULL, O_CTRS},
        {"hours", required_argument, NULL, O_HOURS},
        {"period", required_argument, NULL, O_PERIOD},
        {"migration-bw", required_argument, NULL, O_BW},
        {"corr-s", required_argument, NULL, O_CORR},
        {"seed", required_argument, NULL, O_SEED},
        {"out", required_argument, NULL, O_OUT},
        {"json", no_argument, NULL, O_JSON},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *a = (struct consol_args){.containers = 1000,
                              .hours = 24,
                              .period_s = ECO_CONSOL_PERIOD_S,
                              .mig_bw = ECO_CONSOL_MIG_BW_MIBS,
                              .corr_s = ECO_CONSOL_CORR_S,
                              .seed = 1};
    eco_consol_thresholds_default(&a->t);
    opterr = 0;
    optind = 1;
    int c;
    struct eco_error err = {{0}};
    while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case O_CONS:
            a->policies = optarg;
            break;
        case O_TRACE:
            a->trace = optarg;
            break;
        case O_CLUSTER:
            a->cluster = optarg;
            break;
        case O_OUT:
            a->out = optarg;
            break;
        case O_JSON:
            a->json = 1;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case O_THR:
            if (eco_consol_thresholds_parse(optarg, &a->t, &err)) {
                eco_cli_err("sim: --%s", err.msg);
                bad = 1;
            }
            break;
        case O_CTRS:
            bad = whole("--containers", optarg, 1, &a->containers);
            break;
        case O_SEED:
            bad = whole("--seed", optarg, 0, &a->seed);
            break;
        case O_HOURS:
            bad = num("--hours", optarg, 0, 24 * 366, &a->hours);
            break;
        case O_PERIOD:
            bad = num("--period", optarg, 0, 86400, &a->period_s);
            break;
        case O_BW:
            bad = num("--migration-bw", optarg, 0, 1e9, &a->mig_bw);
            break;
        case O_CORR:
            bad = num("--corr-s", optarg, 0, 1e9, &a->corr_s);
            break;
        case 'h':
            usage(stdout);
            return -1;
        case ':':
            eco_cli_err("sim: option '%s' needs a value (try 'ecosched sim --consolidation none "
                        "--help')",
                        argv[optind - 1]);
            return ECO_EXIT_USAGE;
        default:
            eco_cli_err("sim: option '%s' is unknown or does not apply with --consolidation "
                        "(try 'ecosched sim --consolidation none --help')",
                        argv[optind - 1]);
            return ECO_EXIT_USAGE;
        }
        if (bad)
            return ECO_EXIT_USAGE;
    }
    if (optind < argc) {
        eco_cli_err("sim: unexpected argument '%s'", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (!a->trace || !a->cluster) {
        eco_cli_err("sim: --consolidation needs --trace PODS (an openb pod list) and --cluster "
                    "SPEC");
        return ECO_EXIT_USAGE;
    }
    if (a->hours * 3600 < a->period_s) {
        eco_cli_err("sim: --hours %g is shorter than one --period of %g s", a->hours, a->period_s);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int resolve(const char *list, const struct eco_consol_ops **pol, size_t *n)
{
    char buf[512];
    *n = 0;
    if (strlen(list) >= sizeof buf) {
        eco_cli_err("sim: --consolidation: list too long");
        return ECO_EXIT_USAGE;
    }
    strcpy(buf, list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const struct eco_consol_ops *p = eco_consol_find(tok);
        if (!p) {
            struct eco_cli_list l;
            eco_cli_err("sim: --consolidation: unknown policy '%s' (known: %s)", tok,
                        eco_cli_names(ECO_CLI_CONSOLIDATION, &l));
            return ECO_EXIT_USAGE;
        }
        if (*n == MAX_POLICIES) {
            eco_cli_err("sim: --consolidation: at most %d policies", MAX_POLICIES);
            return ECO_EXIT_USAGE;
        }
        pol[(*n)++] = p;
    }
    if (!*n) {
        eco_cli_err("sim: --consolidation: empty policy list");
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static FILE *open_out(const char *dir, const char *name, const char *file)
{
    char path[4400];
    if (name)
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else
        snprintf(path, sizeof path, "%s", dir);
    if (eco_cli_mkdir_p(path)) {
        eco_cli_err("sim: cannot create %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t l = strlen(path);
    snprintf(path + l, sizeof path - l, "/%s", file);
    FILE *f = fopen(path, "w");
    if (!f)
        eco_cli_err("sim: cannot write %s: %s", path, strerror(errno));
    return f;
}

static void header(void)
{
    printf("%-10s %7s %11s %9s %9s %10s %8s %8s %9s %9s %9s %9s\n", "policy", "hosts", "energy_kwh",
           "avg_on", "peak_on", "migrations", "boots", "sla_%", "over_%", "lost_mig%", "lost_col%",
           "slow_p95");
}

static void row(const struct eco_consol_summary *s)
{
    printf("%-10s %7u %11.1f %9.2f %9.0f %10llu %8llu %8.3f %9.3f %9.3f %9.3f %9.4f\n", s->policy,
           s->hosts, s->energy_j / 3.6e6, s->avg_hosts_on, s->peak_hosts_on,
           (unsigned long long)s->migrations, (unsigned long long)s->boots, 100 * s->sla_violation,
           100 * s->over_threshold, 100 * s->lost_migration, 100 * s->lost_coloc, s->slowdown_p95);
}

static int run_one(const struct consol_args *a, const struct eco_consol_ops *p, size_t npol,
                   const struct eco_cluster *c, const struct eco_consol_workload *w, int first,
                   int last)
{
    struct eco_consol_sim_config cfg = {.policy = p,
                                        .thresholds = a->t,
                                        .period_s = a->period_s,
                                        .horizon_s = a->hours * 3600,
                                        .mig_bw_mibs = a->mig_bw};
    FILE *tl = NULL;
    int status = 0;
    if (a->out) {
        tl = open_out(a->out, npol > 1 ? p->name : NULL, "timeline.csv");
        if (!tl || eco_consol_timeline_header(tl))
            status = ECO_EXIT_FAIL;
        cfg.timeline = eco_consol_timeline_write;
        cfg.timeline_ctx = tl;
    }
    struct eco_consol_summary s;
    struct eco_error err = {{0}};
    int rc = status ? 0 : eco_consol_sim_run(c, w, &cfg, &s, &err);
    if (tl && fclose(tl) && !status) {
        eco_cli_err("sim: error writing timeline.csv");
        status = ECO_EXIT_FAIL;
    }
    if (status)
        return status;
    if (rc) {
        eco_cli_err("sim: %s", err.msg);
        return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
    }
    char *js = eco_consol_summary_json(&s);
    if (!js)
        return ECO_EXIT_FAIL;
    if (a->out) {
        FILE *f = open_out(a->out, npol > 1 ? p->name : NULL, "summary.json");
        if (!f || fprintf(f, "%s\n", js) < 0 || fclose(f)) {
            eco_cli_err("sim: error writing summary.json");
            free(js);
            return ECO_EXIT_FAIL;
        }
    }
    if (a->json) {
        printf("%s%s\n", js, npol > 1 && !last ? "," : "");
    } else {
        if (first)
            header();
        row(&s);
    }
    free(js);
    return 0;
}

int eco_cmd_sim_consolidation(int argc, char **argv)
{
    struct consol_args a;
    int status = parse(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    const struct eco_consol_ops *pol[MAX_POLICIES];
    size_t npol;
    if ((status = resolve(a.policies, pol, &npol)))
        return status;
    struct eco_error err = {{0}};
    struct eco_cluster *c = NULL;
    struct eco_jobset *pods = eco_jobset_create();
    struct eco_consol_workload w = {0};
    if (!pods)
        return ECO_EXIT_FAIL;
    int rc = eco_cluster_load(a.cluster, &c, &err);
    if (rc) {
        eco_cli_err("sim: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    struct eco_trace_opts topts = {.format = ECO_TRACE_OPENB};
    rc = eco_trace_load(a.trace, &topts, pods, &err);
    if (!rc)
        rc = eco_consol_workload_build(pods, (size_t)a.containers, a.seed, a.corr_s, &w, &err);
    if (rc) {
        eco_cli_err("sim: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    if (a.json && npol > 1)
        printf("[\n");
    for (size_t i = 0; i < npol && !status; i++)
        status = run_one(&a, pol[i], npol, c, &w, i == 0, i + 1 == npol);
    if (a.json && npol > 1 && !status)
        printf("]\n");
done:
    eco_consol_workload_fini(&w);
    eco_jobset_destroy(pods);
    eco_cluster_destroy(c);
    return status;
}
