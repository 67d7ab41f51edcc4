/* SPDX-License-Identifier: MIT */
/* `ecosched sim --consolidation NAME`: container consolidation on GPU hosts under one or more
 * consolidation policies, on the same containers (docs/policies/consolidation.md). */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "opts.h"
#include "sim/consol_sim.h"
#include "sim/sim.h"
#include "sim/trace.h"

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
    double underload_h; /* --underload-horizon, s; -1: not given */
    double ckpt_s, restore_s, mig_host_w;
    int judge, decide;
    double bound; /* --bound, lost-work share; -1: not given */
};

static int check_thresholds(const struct eco_opt *o, const char *v, void *args);
static int check_pairs(const struct eco_opt *o, const char *v, void *args);
static void usage(FILE *f);

#define A(field) offsetof(struct consol_args, field)
/* --containers and --seed: at most ten million, the command's bound before the option table
 * (kept, so that the same values are accepted). */
#define MAX_WHOLE 10000000.0

/* `sim --consolidation`'s options, in --help order. */
static const struct eco_opt consol_opts[] = {
    {.name = "consolidation",
     .kind = ECO_OPT_STR,
     .offset = A(policies),
     .arg = "P",
     .help = "consolidation policy (listed below); a comma list runs\n"
             "each, one table"},
    {.name = "trace",
     .kind = ECO_OPT_STR,
     .offset = A(trace),
     .arg = "PODS",
     .help = "Alibaba openb pod list (GPU requests of the containers)"},
    {.name = "cluster",
     .kind = ECO_OPT_STR,
     .offset = A(cluster),
     .arg = "SPEC",
     .help = "hosts: COUNTxGPUS[:TYPE][,...] or a cluster JSON file"},
    {.name = "thresholds",
     .kind = ECO_OPT_CUSTOM,
     .arg = "L,H,LM,HM",
     .help = "dual thresholds LO_UTIL,HI_UTIL,LO_MEM,HI_MEM in 0-1\n"
             "(default 0.3,0.8,0.3,0.8)",
     .check = check_thresholds},
    {.name = "thr",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(t.thr_upper),
     .arg = "U",
     .help = "thr-mmt: overloaded above U of its GPUs (default 0.8)"},
    {.name = "mad-safety",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 10,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(t.mad_safety),
     .arg = "S",
     .help = "mad-mmt: safety parameter (default 2.5)"},
    {.name = "iqr-safety",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 10,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(t.iqr_safety),
     .arg = "S",
     .help = "iqr-mmt: safety parameter (default 1.5)"},
    {.name = "lr-safety",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 10,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(t.lr_safety),
     .arg = "S",
     .help = "lr-mmt: safety parameter (default 1.2)"},
    {.name = "underload-horizon",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 366 * 86400.0,
     .offset = A(underload_h),
     .arg = "S",
     .help = "empty a host only when its idle energy over S seconds\n"
             "beats migration cost and overload risk (default: 3600\n"
             "for dgddep, off for the others; 0: off for all)"},
    {.name = "coloc-gate",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 0.99,
     .offset = A(t.coloc_gate),
     .arg = "G",
     .help = "every policy: refuse a destination host where the\n"
             "--decide pairs predict a slowdown above G (0-0.99) for the\n"
             "container or one already there (default 0: no gate)"},
    {.name = "judge",
     .kind = ECO_OPT_CUSTOM,
     .offset = A(judge),
     .arg = "PAIRS",
     .help = "co-location pairs applied as slowdown: lucid or gavel\n"
             "(default lucid)",
     .check = check_pairs},
    {.name = "decide",
     .kind = ECO_OPT_CUSTOM,
     .offset = A(decide),
     .arg = "PAIRS",
     .help = "co-location pairs dgddep and the gate decide with: lucid\n"
             "or gavel (default lucid)",
     .check = check_pairs},
    {.name = "bound",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1,
     .offset = A(bound),
     .arg = "L",
     .help = "instead of the policies' runs: the least energy of any\n"
             "consolidation losing at most L (0-1) of the demanded work\n"
             "under the --judge pairs (GLPK; DIR/bound.json with --out)"},
    {.name = "containers",
     .kind = ECO_OPT_WHOLE,
     .lo = 1,
     .hi = MAX_WHOLE,
     .offset = A(containers),
     .arg = "N",
     .help = "containers sampled from the pods (default 1000)"},
    {.name = "hours",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 24 * 366,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(hours),
     .arg = "H",
     .help = "simulated time (default 24)"},
    {.name = "period",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 86400,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(period_s),
     .arg = "S",
     .help = "consolidation period in seconds (default 300)"},
    {.name = "migration-bw",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e9,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(mig_bw),
     .arg = "M",
     .help = "checkpoint/restore bandwidth, MiB/s (default 596: half of\n"
             "10 Gb/s)"},
    {.name = "checkpoint-s",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 3600,
     .offset = A(ckpt_s),
     .arg = "S",
     .help = "fixed checkpoint time of a migration (default 2)"},
    {.name = "restore-s",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 3600,
     .offset = A(restore_s),
     .arg = "S",
     .help = "fixed restore time of a migration (default 3)"},
    {.name = "migration-host-w",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e4,
     .offset = A(mig_host_w),
     .arg = "W",
     .help = "extra power of each of the two hosts while a migration\n"
             "copies (default 60)"},
    {.name = "corr-s",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e9,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(corr_s),
     .arg = "S",
     .help = "correlation time of container activity (default 3600)"},
    {.name = "seed",
     .kind = ECO_OPT_WHOLE,
     .lo = 0,
     .hi = MAX_WHOLE,
     .offset = A(seed),
     .arg = "N",
     .help = "random seed (default 1); same input and seed, same output"},
    {.name = "out",
     .kind = ECO_OPT_STR,
     .offset = A(out),
     .arg = "DIR",
     .help = "DIR/summary.json and DIR/timeline.csv (several policies:\n"
             "DIR/NAME/...)"},
    {.name = "json",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(json),
     .help = "print the summaries as JSON"},
    {.name = "quiet",
     .short_name = 'q',
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(quiet),
     .help = "no notes on stderr"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};
#undef A

static const struct eco_opt_cmd consol_cmd = {
    .prefix = "sim",
    .opts = consol_opts,
    .needs_value = "sim: option '%s' needs a value (try 'ecosched sim --consolidation none "
                   "--help')",
    .unknown = "sim: option '%s' is unknown or does not apply with --consolidation "
               "(try 'ecosched sim --consolidation none --help')",
    .usage = usage,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ecosched sim --consolidation NAME[,NAME...] --trace PODS --cluster SPEC "
               "[OPTIONS]\n"
               "\n"
               "Simulates containers whose GPU utilisation and GPU memory change every period "
               "on GPU\n"
               "hosts, under consolidation policies that migrate containers and power hosts "
               "down.\n"
               "Every policy runs on the same containers (docs/policies/consolidation.md).\n"
               "\n");
    eco_cli__opt_help(f, &consol_cmd);
    fprintf(f, "\nConsolidation policies (--consolidation NAME):\n");
    for (const struct eco_consol_ops *const *p = eco_consol_all(); *p; p++)
        eco_cli__help_entry(f, (*p)->name, (*p)->summary);
    fprintf(f, "\nExit status: 0 on success, 2 on bad options or bad input, 1 on other "
               "failures.\n");
}

static int check_thresholds(const struct eco_opt *o, const char *v, void *args)
{
    struct consol_args *a = args;
    struct eco_error err = {{0}};
    (void)o;
    if (eco_consol_thresholds_parse(v, &a->t, &err)) {
        eco_cli__err("sim: --%s", err.msg);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int check_pairs(const struct eco_opt *o, const char *v, void *args)
{
    int *field = (int *)((char *)args + o->offset);
    if (eco_consol_pairs_parse(v, field)) {
        eco_cli__err("sim: --%s: '%s' is not a pair set (lucid or gavel)", o->name, v);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int parse(int argc, char **argv, struct consol_args *a)
{
    *a = (struct consol_args){.containers = 1000,
                              .hours = 24,
                              .period_s = ECO_CONSOL_PERIOD_S,
                              .mig_bw = ECO_CONSOL_MIG_BW_MIBS,
                              .corr_s = ECO_CONSOL_CORR_S,
                              .seed = 1,
                              .underload_h = -1,
                              .ckpt_s = ECO_CONSOL_CKPT_FIXED_S,
                              .restore_s = ECO_CONSOL_RESTORE_FIXED_S,
                              .mig_host_w = ECO_CONSOL_MIG_HOST_W,
                              .bound = -1};
    eco_consol_thresholds_default(&a->t);
    int rc = eco_cli__opt_parse(&consol_cmd, argc, argv, a);
    if (rc)
        return rc;
    if (optind < argc) {
        eco_cli__err("sim: unexpected argument '%s'", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (!a->trace || !a->cluster) {
        eco_cli__err("sim: --consolidation needs --trace PODS (an openb pod list) and --cluster "
                     "SPEC");
        return ECO_EXIT_USAGE;
    }
    if (a->underload_h >= 0) /* given: 0 turns the energy rule off for every policy */
        a->t.underload_horizon_s = a->underload_h > 0 ? a->underload_h : -1;
    if (a->hours * 3600 < a->period_s) {
        eco_cli__err("sim: --hours %g is shorter than one --period of %g s", a->hours, a->period_s);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int resolve(const char *list, const struct eco_consol_ops **pol, size_t *n)
{
    char buf[512];
    *n = 0;
    if (strlen(list) >= sizeof buf) {
        eco_cli__err("sim: --consolidation: list too long");
        return ECO_EXIT_USAGE;
    }
    strcpy(buf, list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const struct eco_consol_ops *p = eco_consol_find(tok);
        if (!p) {
            struct eco_cli_list l;
            eco_cli__err("sim: --consolidation: unknown policy '%s' (known: %s)", tok,
                         eco_cli__names(ECO_CLI_CONSOLIDATION, &l));
            return ECO_EXIT_USAGE;
        }
        if (*n == MAX_POLICIES) {
            eco_cli__err("sim: --consolidation: at most %d policies", MAX_POLICIES);
            return ECO_EXIT_USAGE;
        }
        pol[(*n)++] = p;
    }
    if (!*n) {
        eco_cli__err("sim: --consolidation: empty policy list");
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
    if (eco_cli__mkdir_p(path)) {
        eco_cli__err("sim: cannot create %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t l = strlen(path);
    snprintf(path + l, sizeof path - l, "/%s", file);
    FILE *f = fopen(path, "w");
    if (!f)
        eco_cli__err("sim: cannot write %s: %s", path, strerror(errno));
    return f;
}

static void header(void)
{
    printf("%-10s %7s %11s %11s %9s %9s %10s %8s %8s %9s %9s %9s %9s %9s\n", "policy", "hosts",
           "energy_kwh", "charged_kwh", "avg_on", "peak_on", "migrations", "boots", "sla_%",
           "over_%", "lost_mig%", "lost_col%", "lost_wrk%", "slow_p95");
}

static void row(const struct eco_consol_summary *s)
{
    double lost =
        s->work_demanded_gpu_s > 0 ? 1 - s->work_useful_gpu_s / s->work_demanded_gpu_s : 0;
    printf("%-10s %7u %11.1f %11.1f %9.2f %9.0f %10llu %8llu %8.3f %9.3f %9.3f %9.3f %9.3f %9.4f\n",
           s->policy, s->hosts, s->energy_j / 3.6e6, s->energy_charged_j / 3.6e6, s->avg_hosts_on,
           s->peak_hosts_on, (unsigned long long)s->migrations, (unsigned long long)s->boots,
           100 * s->sla_violation, 100 * s->over_threshold, 100 * s->lost_migration,
           100 * s->lost_coloc, 100 * lost, s->slowdown_p95);
}

static int run_one(const struct consol_args *a, const struct eco_consol_ops *p, size_t npol,
                   const struct eco_cluster *c, const struct eco_consol_workload *w, int first,
                   int last)
{
    struct eco_consol_mig mig;
    eco_consol_mig_default(&mig, a->mig_bw);
    mig.ckpt_fixed_s = a->ckpt_s;
    mig.restore_fixed_s = a->restore_s;
    mig.host_w = a->mig_host_w;
    struct eco_consol_sim_config cfg = {.policy = p,
                                        .thresholds = a->t,
                                        .period_s = a->period_s,
                                        .horizon_s = a->hours * 3600,
                                        .mig_bw_mibs = a->mig_bw,
                                        .mig = &mig,
                                        .judge = a->judge,
                                        .decide = a->decide};
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
        eco_cli__err("sim: error writing timeline.csv");
        status = ECO_EXIT_FAIL;
    }
    if (status)
        return status;
    if (rc) {
        eco_cli__err("sim: %s", err.msg);
        return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
    }
    char *js = eco_consol_summary_json(&s);
    if (!js)
        return ECO_EXIT_FAIL;
    if (a->out) {
        FILE *f = open_out(a->out, npol > 1 ? p->name : NULL, "summary.json");
        if (!f || fprintf(f, "%s\n", js) < 0 || fclose(f)) {
            eco_cli__err("sim: error writing summary.json");
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

/* --bound: the co-location bound of the containers' demand, as JSON on stdout and in
 * DIR/bound.json. */
static int run_bound(const struct consol_args *a, const struct eco_cluster *c,
                     const struct eco_consol_workload *w)
{
    struct eco_consol_sim_config cfg = {.period_s = a->period_s,
                                        .horizon_s = a->hours * 3600,
                                        .judge = a->judge,
                                        .decide = a->decide};
    struct eco_consol_bound b;
    struct eco_error err = {{0}};
    int rc = eco_consol_bound(c, w, &cfg, a->bound, &b, &err);
    if (rc) {
        eco_cli__err("sim: --bound: %s", err.msg);
        return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
    }
    char js[512];
    snprintf(js, sizeof js,
             "{\"bound_kwh\": %.15g, \"level\": %.15g, \"hosts_only_kwh\": %.15g, \"theta\": "
             "%.15g, \"demanded_gpu_h\": %.15g, \"judge\": \"%s\"}",
             b.kwh, b.level, b.hosts_only_kwh, b.theta, b.demanded_gpu_h,
             eco_consol_pairs_name(a->judge));
    if (a->out) {
        FILE *f = open_out(a->out, NULL, "bound.json");
        if (!f || fprintf(f, "%s\n", js) < 0 || fclose(f)) {
            eco_cli__err("sim: error writing bound.json");
            return ECO_EXIT_FAIL;
        }
    }
    printf("%s\n", js);
    return 0;
}

int eco_cli__cmd_sim_consolidation(int argc, char **argv)
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
        eco_cli__err("sim: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    struct eco_trace_opts topts = {.format = ECO_TRACE_OPENB};
    rc = eco_trace_load(a.trace, &topts, pods, &err);
    if (!rc)
        rc = eco_consol_workload_build(pods, (size_t)a.containers, a.seed, a.corr_s, &w, &err);
    if (rc) {
        eco_cli__err("sim: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    if (a.bound >= 0) {
        status = run_bound(&a, c, &w);
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
