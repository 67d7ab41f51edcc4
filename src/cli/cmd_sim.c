/* SPDX-License-Identifier: MIT */
/* `ecosched sim`: replay a job trace on a modelled cluster under one or more policies. */
#define _XOPEN_SOURCE 700 /* nftw (XSI) */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "ecosched/catalog.h"
#include "ecosched/place_io.h"
#include "ecosched/powercap.h"
#include "ecosched/report.h"
#include "ecosched/sim.h"
#include "ecosched/trace.h"
#include "../util/fs.h"

#define MAX_COMPARE 16
/* --sample-s below 1 s shows nothing new: without --sample-s timeline.csv already has a row at
 * every change, so sampling only serves to thin it out. */
#define MIN_SAMPLE_S 1.0
/* At most this many timeline samples over the trace's span: 1e6 rows of timeline.csv are about
 * 50 MB, the most a spreadsheet or the HTML report loads comfortably. */
#define MAX_SAMPLES 1e6
/* --control-period below 0.1 s acts faster than a GPU can follow: a new power limit takes tens
 * to hundreds of milliseconds to settle, and NVML's power reading averages over about 100 ms. */
#define MIN_CONTROL_PERIOD_S 0.1
/* At most this many control periods over the trace's span: each costs a capping decision over
 * the running jobs. Measured: ITP cluster 10 (260 jobs) on 2x8 with mpc at the default 1 s
 * period ran 1.34 million events in 21.5 s (about 16 us each, 2-core build machine), so 1e7
 * periods are a few minutes for a small cluster. */
#define MAX_CONTROL_STEPS 1e7
/* The power policy --power-budget uses when --power-policy is not given: the allocator the
 * capping docs describe first (docs/policies/powercap.md). */
#define DEFAULT_POWER_POLICY "mpc"

struct sim_args {
    const char *trace;
    const char *cluster;
    const char *format;
    const char *policy;
    const char *placement;
    const char *compare;
    const char *out;
    const char *report;
    const char *las_thresholds;
    const char *power_down;
    const char *workload_mix;
    double sample_s;
    const char *power_policy;
    const char *budget_file;
    double budget_w;
    double control_period_s;
    int control_skip_off;
    double noise_power, noise_speed;
    int noise_set;
    int power_knob;
    double deadline_lo, deadline_hi;
    int json;
    int skip_bad_rows;
    int quiet;
    unsigned long long seed;
    unsigned long long max_jobs;
    int progress; /* 0: when stderr is a terminal, 1: --progress, 2: --no-progress */
};

/* The queue policies of the registry, ", "-separated (a static buffer). */
static const char *policy_names(void)
{
    static char buf[256];
    size_t n = 0;
    const struct eco_policy_ops *const *all = eco_policy_all();
    buf[0] = '\0';
    for (size_t i = 0; all[i] && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", all[i]->name);
    return buf;
}

/* "mpc, oracle, ..." from the capper family's registry. */
static const char *capper_names(void)
{
    static char buf[256];
    size_t n = 0;
    const struct eco_capper_ops *const *all = eco_capper_all();
    buf[0] = '\0';
    for (size_t i = 0; all[i] && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", all[i]->name);
    return buf;
}

/* One line per capper: name, summary and parameter keys. */
static void capper_usage(FILE *f)
{
    const struct eco_capper_ops *const *all = eco_capper_all();
    fprintf(f, "\nPower policies (--power-policy FAMILY[:KEY=VALUE,...], docs/policies/powercap.md):\n");
    for (size_t i = 0; all[i]; i++)
        fprintf(f, "  %-13s %s\n                keys: %s\n", all[i]->name, all[i]->summary,
                all[i]->params_help);
}

static void sim_usage(FILE *f)
{
    fprintf(f,
            "usage: ecosched sim --trace FILE --cluster SPEC [OPTIONS]\n"
            "       ecosched sim --server [OPTIONS]   one GPU server, GPU sharing (--server --help)\n"
            "\n"
            "Replays a GPU job trace on a modelled cluster and reports job completion time (JCT),\n"
            "waiting time and GPU utilisation.\n"
            "\n"
            "  --trace FILE        job trace (CSV, optionally gzip-compressed)\n"
            "  --format F          auto (default: from the header), canonical, itp, philly, openb\n"
            "  --cluster SPEC      COUNTxGPUS[:TYPE][,...], e.g. 30x8:V100,4x8:A100-SXM (type\n"
            "                      defaults to V100), a cluster JSON file (docs/formats/cluster.md),\n"
            "                      auto[xGPUS][:TYPE]: sized from the trace for 70%% average\n"
            "                      utilisation, or peak[xGPUS][:TYPE]: for its peak demand\n"
            "                      (docs/formats/cluster.md)\n"
            "  --policy P          queue policy: %s (default: fifo)\n"
            "  --placement L       pack (default), pool, spread, first-fit, energy, ffd, bfd,\n"
            "                      dot-product, fgd, pso, pso-basic, ilp (the last three\n"
            "                      place the queue of each pass as a batch)\n"
            "  --compare P1,P2,..  run several policies on the same input, one table\n"
            "  --las-thresholds L  las queue thresholds in GPU-seconds (default 3600,36000)\n"
            "  --power-down P      node power-down: none (default), idle:SECONDS (Slurm\n"
            "                      power_save), forecast (docs/policies/power-down.md)\n"
            "  --workload-mix M    workloads for jobs whose trace names none: 'default' or\n"
            "                      NAME:WEIGHT,... (docs/models/energy.md); else 'generic'\n"
            "  --out DIR           write DIR/jobs.csv, summary.json, rejected.csv, nodes.csv and\n"
            "                      timeline.csv (with --compare: DIR/POLICY/...)\n"
            "  --sample-s S        timeline.csv every S seconds instead of at every change\n"
            "  --report FILE.html  also write an HTML report of the run(s) (as `ecosched\n"
            "                      report`; docs/report.md); without --out DIR the files go to\n"
            "                      a temporary directory, removed after\n"
            "  --power-policy P[:PARAMS]  GPU power capping under a budget: none (default),\n"
            "                      or a capper: %s; PARAMS\n"
            "                      key=value,... (listed below; docs/policies/powercap.md)\n"
            "  --power-budget W    cluster power budget in watts (power policy: " DEFAULT_POWER_POLICY "\n"
            "                      unless --power-policy says otherwise)\n"
            "  --power-budget-file F  budget steps over time: CSV 'time_s,watts'\n"
            "  --power-knob K      what capping actuates: limit (GPU power limits, default) or\n"
            "                      clock (locked SM clocks, discrete levels;\n"
            "                      docs/models/clock.md)\n"
            "  --control-period S  power-capping control period (default 1 s)\n"
            "  --control-skip on|off  skip control periods once the limits have settled\n"
            "                      (default on; off: run every period)\n"
            "  --noise P,S         relative noise of power and progress measurements\n"
            "                      (default 0.02,0.01)\n"
            "  --deadlines factor:LO-HI  deadline = submit + U(LO,HI) x duration for jobs\n"
            "                      whose trace gives none (seeded)\n"
            "  --json              print the summary as JSON (an array with --compare)\n"
            "  --seed N            random seed (default 1); same input and seed, same output\n"
            "  --skip-bad-rows     skip malformed trace rows (counted) instead of stopping\n"
            "  --max-jobs N        read at most N >= 1 jobs from the trace (default: all)\n"
            "  --consolidation P   container consolidation instead of trace replay (its own\n"
            "                      options: ecosched sim --consolidation none --help)\n"
            "  -q, --quiet         no warnings on stderr\n"
            "  --progress          a progress line on stderr (simulated time, jobs done,\n"
            "                      wall time); default: only when stderr is a terminal\n"
            "  --no-progress       no progress line, even on a terminal\n"
            "  -h, --help          this help\n"
            "\n"
            "Exit status: 0 on success, 2 on bad options or bad input (the message names the\n"
            "file, line and field), 1 on other failures.\n",
            policy_names(), capper_names());
    capper_usage(f);
}

static int parse_ull(const char *opt, const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        goto bad;
    *out = strtoull(s, &end, 10);
    if (errno || *end)
        goto bad;
    return 0;
bad:
    eco_cli_err("sim: %s: '%s' is not a whole number >= 0", opt, s ? s : "");
    return -EINVAL;
}

static int parse_positive(const char *opt, const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    if (end == s || *end || !(*out > 0) || *out > 1e15) {
        eco_cli_err("sim: %s: '%s' is not a number > 0", opt, s);
        return -EINVAL;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct sim_args *a)
{
    enum { O_TRACE = 256, O_FORMAT, O_CLUSTER, O_POLICY, O_PLACEMENT, O_COMPARE, O_OUT, O_JSON,
           O_SEED, O_SKIP, O_MAXJOBS, O_LAS, O_PD, O_MIX, O_SAMPLE, O_PP, O_BUDGET, O_BFILE,
           O_PERIOD, O_NOISE, O_DEADLINES, O_REPORT, O_KNOB, O_SKIPCTL };
    enum { O_PROGRESS = 512, O_NO_PROGRESS };
    static const struct option opts[] = {
        {"trace", required_argument, NULL, O_TRACE},
        {"format", required_argument, NULL, O_FORMAT},
        {"cluster", required_argument, NULL, O_CLUSTER},
        {"policy", required_argument, NULL, O_POLICY},
        {"placement", required_argument, NULL, O_PLACEMENT},
        {"compare", required_argument, NULL, O_COMPARE},
        {"out", required_argument, NULL, O_OUT},
        {"report", required_argument, NULL, O_REPORT},
        {"json", no_argument, NULL, O_JSON},
        {"seed", required_argument, NULL, O_SEED},
        {"skip-bad-rows", no_argument, NULL, O_SKIP},
        {"max-jobs", required_argument, NULL, O_MAXJOBS},
        {"las-thresholds", required_argument, NULL, O_LAS},
        {"power-down", required_argument, NULL, O_PD},
        {"workload-mix", required_argument, NULL, O_MIX},
        {"sample-s", required_argument, NULL, O_SAMPLE},
        {"power-policy", required_argument, NULL, O_PP},
        {"power-budget", required_argument, NULL, O_BUDGET},
        {"power-budget-file", required_argument, NULL, O_BFILE},
        {"control-period", required_argument, NULL, O_PERIOD},
        {"control-skip", required_argument, NULL, O_SKIPCTL},
        {"noise", required_argument, NULL, O_NOISE},
        {"power-knob", required_argument, NULL, O_KNOB},
        {"deadlines", required_argument, NULL, O_DEADLINES},
        {"quiet", no_argument, NULL, 'q'},
        {"progress", no_argument, NULL, O_PROGRESS},
        {"no-progress", no_argument, NULL, O_NO_PROGRESS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *a = (struct sim_args){
        .policy = "fifo", .placement = "pack", .format = "auto", .power_down = "none", .seed = 1};
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":hq", opts, NULL)) != -1) {
        switch (c) {
        case O_TRACE: a->trace = optarg; break;
        case O_FORMAT: a->format = optarg; break;
        case O_CLUSTER: a->cluster = optarg; break;
        case O_POLICY: a->policy = optarg; break;
        case O_PLACEMENT: a->placement = optarg; break;
        case O_COMPARE: a->compare = optarg; break;
        case O_OUT: a->out = optarg; break;
        case O_REPORT: a->report = optarg; break;
        case O_JSON: a->json = 1; break;
        case O_SKIP: a->skip_bad_rows = 1; break;
        case O_LAS: a->las_thresholds = optarg; break;
        case O_PD: a->power_down = optarg; break;
        case O_MIX: a->workload_mix = optarg; break;
        case O_PP: a->power_policy = optarg; break;
        case O_KNOB:
            if (strcmp(optarg, "limit") && strcmp(optarg, "clock")) {
                eco_cli_err("sim: --power-knob: unknown knob '%s' (known: limit, clock)", optarg);
                return ECO_EXIT_USAGE;
            }
            a->power_knob = strcmp(optarg, "clock") ? ECO_POWER_KNOB_LIMIT : ECO_POWER_KNOB_CLOCK;
            break;
        case O_BFILE: a->budget_file = optarg; break;
        case O_BUDGET:
            if (parse_positive("--power-budget", optarg, &a->budget_w))
                return ECO_EXIT_USAGE;
            break;
        case O_PERIOD:
            if (parse_positive("--control-period", optarg, &a->control_period_s))
                return ECO_EXIT_USAGE;
            if (a->control_period_s < MIN_CONTROL_PERIOD_S) {
                eco_cli_err("sim: --control-period: '%s' is below the minimum %g s (a GPU "
                            "cannot follow a faster control loop)", optarg, MIN_CONTROL_PERIOD_S);
                return ECO_EXIT_USAGE;
            }
            break;
        case O_SKIPCTL:
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                eco_cli_err("sim: --control-skip: expected on or off (got '%s')", optarg);
                return ECO_EXIT_USAGE;
            }
            a->control_skip_off = !strcmp(optarg, "off");
            break;
        case O_NOISE: {
            char *end;
            a->noise_power = strtod(optarg, &end);
            if (end == optarg || *end != ',' || !(a->noise_power >= 0 && a->noise_power < 1)) {
                eco_cli_err("sim: --noise: expected P,S with 0 <= P, S < 1, e.g. 0.02,0.01 "
                            "(got '%s')", optarg);
                return ECO_EXIT_USAGE;
            }
            const char *s2 = end + 1;
            a->noise_speed = strtod(s2, &end);
            if (end == s2 || *end || !(a->noise_speed >= 0 && a->noise_speed < 1)) {
                eco_cli_err("sim: --noise: expected P,S with 0 <= P, S < 1, e.g. 0.02,0.01 "
                            "(got '%s')", optarg);
                return ECO_EXIT_USAGE;
            }
            a->noise_set = 1;
            break;
        }
        case O_DEADLINES: {
            char *end;
            const char *p = optarg;
            int ok = !strncmp(p, "factor:", 7);
            if (ok) {
                a->deadline_lo = strtod(p + 7, &end);
                ok = end != p + 7 && *end == '-';
                if (ok) {
                    const char *q = end + 1;
                    a->deadline_hi = strtod(q, &end);
                    ok = end != q && !*end && a->deadline_lo >= 1 &&
                         a->deadline_hi >= a->deadline_lo && a->deadline_hi < 1e6;
                }
            }
            if (!ok) {
                eco_cli_err("sim: --deadlines: expected factor:LO-HI with 1 <= LO <= HI, e.g. "
                            "factor:1.5-3 (got '%s')", optarg);
                return ECO_EXIT_USAGE;
            }
            break;
        }
        case O_SAMPLE: {
            char *end;
            a->sample_s = strtod(optarg, &end);
            if (end == optarg || *end || !(a->sample_s > 0) || a->sample_s > 1e12) {
                eco_cli_err("sim: --sample-s: '%s' is not a number of seconds > 0", optarg);
                return ECO_EXIT_USAGE;
            }
            if (a->sample_s < MIN_SAMPLE_S) {
                eco_cli_err("sim: --sample-s: '%s' is below the minimum %g s (without --sample-s "
                            "timeline.csv has a row at every change)", optarg, MIN_SAMPLE_S);
                return ECO_EXIT_USAGE;
            }
            break;
        }
        case 'q': a->quiet = 1; break;
        case O_PROGRESS: a->progress = 1; break;
        case O_NO_PROGRESS: a->progress = 2; break;
        case O_SEED:
            if (parse_ull("--seed", optarg, &a->seed))
                return ECO_EXIT_USAGE;
            break;
        case O_MAXJOBS:
            if (parse_ull("--max-jobs", optarg, &a->max_jobs))
                return ECO_EXIT_USAGE;
            if (a->max_jobs == 0) {
                eco_cli_err("sim: --max-jobs: 0 would read no job; give N >= 1, or leave the "
                            "option out to read all");
                return ECO_EXIT_USAGE;
            }
            break;
        case 'h': sim_usage(stdout); return -1;
        case ':':
            eco_cli_err("sim: option '%s' needs a value (try 'ecosched sim --help')",
                        argv[optind - 1]);
            return ECO_EXIT_USAGE;
        default:
            eco_cli_err("sim: unknown option '%s' (try 'ecosched sim --help')", argv[optind - 1]);
            return ECO_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        eco_cli_err("sim: unexpected argument '%s' (try 'ecosched sim --help')", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (!a->trace) {
        eco_cli_err("sim: --trace FILE is required (try 'ecosched sim --help')");
        return ECO_EXIT_USAGE;
    }
    if (!a->cluster) {
        eco_cli_err("sim: --cluster SPEC is required, e.g. --cluster 30x8:V100 "
                    "(try 'ecosched sim --help')");
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static void warn_cb(void *ctx, const char *msg)
{
    if (!*(int *)ctx)
        eco_cli_err("warning: %s", msg);
}

int eco_cli_mkdir_p(const char *dir)
{
    return eco_mkdir_p(dir, 0777);
}

enum out_kind { OUT_TEXT, OUT_JOBS, OUT_REJECTED, OUT_NODES };

static int out_path(char *path, size_t size, const char *dir, const char *name)
{
    if (snprintf(path, size, "%s/%s", dir, name) >= (int)size) {
        eco_cli_err("sim: output path too long: %s", dir);
        return ECO_EXIT_FAIL;
    }
    return 0;
}

/* Closes an output file; a write error before (rc, with errno from the failed write) or at the
 * close is reported with the path and the reason. 0 or ECO_EXIT_FAIL. */
static int close_output(FILE *f, const char *path, int rc)
{
    int e = rc || ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) && !e)
        e = errno ? errno : EIO;
    if (!e)
        return 0;
    eco_cli_err("sim: cannot write %s: %s", path, strerror(e));
    return ECO_EXIT_FAIL;
}

static int write_file(const char *dir, const char *name, enum out_kind kind,
                      const struct eco_jobset *set, const struct eco_cluster *c,
                      const struct eco_sim_result *r, const char *text)
{
    char path[4200];
    if (out_path(path, sizeof path, dir, name))
        return ECO_EXIT_FAIL;
    FILE *f = fopen(path, "w");
    if (!f) {
        eco_cli_err("sim: cannot write %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    int rc = 0;
    errno = 0;
    switch (kind) {
    case OUT_TEXT: rc = fputs(text, f) < 0 || fputc('\n', f) == EOF ? -EIO : 0; break;
    case OUT_JOBS: rc = eco_sim_write_jobs_csv(f, set, r); break;
    case OUT_REJECTED: rc = eco_sim_write_rejected_csv(f, set); break;
    case OUT_NODES: rc = eco_sim_write_nodes_csv(f, c, r); break;
    }
    return close_output(f, path, rc);
}

static int write_outputs(const char *dir, const struct eco_jobset *set,
                         const struct eco_cluster *c, const struct eco_sim_result *r)
{
    char *summary = eco_sim_summary_json(&r->summary, 0);
    if (!summary) {
        eco_cli_err("sim: cannot write %s/summary.json: the summary could not be encoded as "
                    "JSON (a value not finite, or out of memory)", dir);
        return ECO_EXIT_FAIL;
    }
    int rc = write_file(dir, "summary.json", OUT_TEXT, set, c, r, summary);
    free(summary);
    if (!rc)
        rc = write_file(dir, "jobs.csv", OUT_JOBS, set, c, r, NULL);
    if (!rc)
        rc = write_file(dir, "rejected.csv", OUT_REJECTED, set, c, r, NULL);
    if (!rc)
        rc = write_file(dir, "nodes.csv", OUT_NODES, set, c, r, NULL);
    return rc;
}

/* Widths of the summary table's text columns: as wide as the longest name they will hold, so
 * that long names (dot-product, idle:86400, a cluster of many groups) keep the table aligned. */
struct table {
    int policy, placement, power_down, cluster;
    char cluster_text[128];
};

static int width(int w, const char *s)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}

/* The cluster as COUNTxGPUS:TYPE when its nodes are all alike, else as NODES/GPUS. */
static void cluster_text(const struct eco_cluster *c, char *buf, size_t size)
{
    int alike = c->n_nodes > 0;
    for (uint32_t n = 1; alike && n < c->n_nodes; n++)
        alike = c->nodes[n].gpus == c->nodes[0].gpus && c->nodes[n].type == c->nodes[0].type;
    if (alike)
        snprintf(buf, size, "%ux%u:%s", c->n_nodes, c->nodes[0].gpus,
                 eco_catalog_get(c->nodes[0].type)->name);
    else
        snprintf(buf, size, "%un/%llug", c->n_nodes, (unsigned long long)c->total_gpus);
}

static void table_init(struct table *t, const struct sim_args *a, const struct eco_cluster *c,
                       const struct eco_policy_ops **pol, size_t npol,
                       const struct eco_placement_ops *placement)
{
    *t = (struct table){.policy = 7, .placement = 9, .power_down = 10, .cluster = 7};
    for (size_t i = 0; i < npol; i++)
        t->policy = width(t->policy, pol[i]->name);
    t->placement = width(t->placement, placement->name);
    t->power_down = width(t->power_down, a->power_down);
    cluster_text(c, t->cluster_text, sizeof t->cluster_text);
    t->cluster = width(t->cluster, t->cluster_text);
}

static void print_table_header(const struct table *t)
{
    printf("%-*s %-*s %-*s %-*s ", t->policy, "policy", t->placement, "placement", t->power_down,
           "power_down", t->cluster, "cluster");
    printf("%7s %9s %8s %10s %10s %10s %11s %11s %10s %8s %11s %8s %6s %9s %7s %7s %8s %8s %8s\n",
           "jobs", "completed", "rejected", "avg_jct_h", "p50_jct_h", "p95_jct_h", "avg_wait_h",
           "p95_wait_h", "makespan_d", "gpu_util", "energy_kwh", "avg_kw", "boots", "events",
           "wall_s", "dl_miss", "cap_mae%", "all_mae%", "cap_ovr%");
}

static void print_table_row(const struct eco_sim_summary *s, const struct table *t)
{
    printf("%-*s %-*s %-*s %-*s ", t->policy, s->policy, t->placement, s->placement,
           t->power_down, s->power_down, t->cluster, t->cluster_text);
    printf("%7zu %9zu %8zu %10.2f %10.2f %10.2f %11.2f %11.2f %10.2f %8.3f %11.1f %8.2f %6llu "
           "%9llu %7.3f %7.3f %8.3f %8.3f %8.3f\n",
           s->jobs, s->completed, s->rejected, s->avg_jct_s / 3600, s->p50_jct_s / 3600,
           s->p95_jct_s / 3600, s->avg_wait_s / 3600, s->p95_wait_s / 3600, s->makespan_s / 86400,
           s->gpu_util, s->energy_j.total / 3.6e6, s->avg_power_w / 1000,
           (unsigned long long)s->node_boots, (unsigned long long)s->events, s->sim_wall_s,
           s->deadline_miss_ratio, s->power_cap_mae_pct, s->power_cap_mae_all_pct,
           s->power_cap_max_overshoot_pct);
}

/* Splits the --compare list into policy tables. */
static int resolve_policies(const struct sim_args *a, const struct eco_policy_ops **pol, size_t *n)
{
    *n = 0;
    if (!a->compare) {
        pol[0] = eco_policy_find(a->policy);
        if (!pol[0]) {
            eco_cli_err("sim: --policy: unknown policy '%s' (known: %s)", a->policy,
                        policy_names());
            return ECO_EXIT_USAGE;
        }
        *n = 1;
        return 0;
    }
    char buf[512];
    if (strlen(a->compare) >= sizeof buf) {
        eco_cli_err("sim: --compare: list too long");
        return ECO_EXIT_USAGE;
    }
    strcpy(buf, a->compare);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const struct eco_policy_ops *p = eco_policy_find(tok);
        if (!p) {
            eco_cli_err("sim: --compare: unknown policy '%s' (known: %s)", tok, policy_names());
            return ECO_EXIT_USAGE;
        }
        if (*n == MAX_COMPARE) {
            eco_cli_err("sim: --compare: at most %d policies", MAX_COMPARE);
            return ECO_EXIT_USAGE;
        }
        pol[(*n)++] = p;
    }
    if (*n == 0) {
        eco_cli_err("sim: --compare: empty policy list");
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static void report_rejected(const struct eco_jobset *set, size_t rejected, int quiet)
{
    if (!rejected || quiet)
        return;
    eco_cli_err("warning: %zu job(s) rejected: they can never run on this cluster (listed in "
                "rejected.csv with --out)", rejected);
    size_t shown = 0;
    for (size_t i = 0; i < set->n && shown < 5; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->state != ECO_JOB_REJECTED)
            continue;
        eco_cli_err("  rejected: job %s (line %u, %u GPUs%s%s): %s",
                    eco_jobset_str(set, j->id_off), j->line, j->gpus, j->gpu_type >= 0 ? " " : "",
                    j->gpu_type >= 0 ? eco_catalog_get((size_t)j->gpu_type)->name : "",
                    eco_sim_reject_reason(j->reject_reason));
        shown++;
    }
}

/* The progress line of one run: which run of how many, simulated days since the first
 * submit, jobs done, wall time. */
struct sim_progress {
    struct eco_cli_progress line;
    const char *policy;
    size_t run, runs;
};

static void sim_progress(void *ctx, const struct eco_sim_progress *p)
{
    struct sim_progress *sp = ctx;
    if (p->finished || !eco_cli_progress_due(&sp->line))
        return;
    eco_cli_progress_show(&sp->line,
                          "sim %s (%zu/%zu): simulated %.2f d, %zu/%zu jobs done (%.0f%%), "
                          "%.1f s wall",
                          sp->policy, sp->run, sp->runs, (p->t_s - p->start_s) / 86400, p->done,
                          p->total, p->total ? 100.0 * (double)p->done / (double)p->total : 100,
                          eco_cli_progress_elapsed(&sp->line));
}

static int run_all(const struct sim_args *a, const struct eco_cluster *c, struct eco_jobset *set,
                   const struct eco_policy_ops **pol, size_t npol,
                   const struct eco_placement_ops *placement,
                   const struct eco_budget_step *budget, size_t n_budget)
{
    int status = 0;
    struct table tab;
    table_init(&tab, a, c, pol, npol, placement);
    if (a->json && npol > 1)
        printf("[\n");
    else if (!a->json)
        print_table_header(&tab);
    for (size_t i = 0; i < npol && !status; i++) {
        const char *pd_params = NULL;
        struct eco_sim_config cfg = {
            .policy = pol[i],
            .policy_params = !strcmp(pol[i]->name, "las") ? a->las_thresholds : NULL,
            .placement = placement,
            .power_down = eco_powerdown_find(a->power_down, &pd_params),
            .workload_mix = a->workload_mix,
            .seed = a->seed,
            .power_policy = a->power_policy,
            .budget = budget,
            .n_budget = n_budget,
            .control_period_s = a->control_period_s,
            .control_skip_off = a->control_skip_off,
            .noise_power = a->noise_power,
            .noise_speed = a->noise_speed,
            .noise_set = a->noise_set,
            .power_knob = a->power_knob,
            .deadline_lo = a->deadline_lo,
            .deadline_hi = a->deadline_hi,
        };
        cfg.power_down_params = pd_params;
        struct sim_progress prog = {.policy = pol[i]->name, .run = i + 1, .runs = npol};
        eco_cli_progress_start(&prog.line,
                               eco_cli_progress_wanted(a->progress ? a->progress == 1 : -1));
        if (prog.line.on) {
            cfg.progress = sim_progress;
            cfg.progress_ctx = &prog;
        }
        char dir[4096], path[4200];
        FILE *tl = NULL;
        struct eco_timeline_writer tw;
        if (a->out) {
            int len = npol > 1 ? snprintf(dir, sizeof dir, "%s/%s", a->out, pol[i]->name)
                               : snprintf(dir, sizeof dir, "%s", a->out);
            if (len >= (int)sizeof dir) {
                eco_cli_err("sim: --out: path too long");
                return ECO_EXIT_USAGE;
            }
            int rc = eco_cli_mkdir_p(dir);
            if (rc) {
                eco_cli_err("sim: cannot create output directory %s: %s", dir, strerror(-rc));
                return ECO_EXIT_FAIL;
            }
            if (out_path(path, sizeof path, dir, "timeline.csv"))
                return ECO_EXIT_FAIL;
            if (!(tl = fopen(path, "w"))) {
                eco_cli_err("sim: cannot write %s: %s", path, strerror(errno));
                return ECO_EXIT_FAIL;
            }
            errno = 0;
            eco_timeline_writer_init(&tw, tl, a->sample_s);
            cfg.timeline = eco_timeline_write;
            cfg.timeline_ctx = &tw;
        }
        struct eco_sim_result res;
        struct eco_error err = {{0}};
        int rc = eco_sim_run(c, set, &cfg, &res, &err);
        eco_cli_progress_end(&prog.line);
        if (tl) {
            int werr = rc ? 0 : eco_timeline_writer_finish(&tw, res.summary.window_end_s);
            if (close_output(tl, path, werr)) {
                if (!rc)
                    eco_sim_result_fini(&res);
                return ECO_EXIT_FAIL;
            }
        }
        if (rc) {
            if (rc == -EINVAL && !strncmp(err.msg, "line ", 5))
                eco_cli_err("%s:%s", a->trace, err.msg + 5);
            else
                eco_cli_err("sim: %s", rc == -EINVAL ? err.msg : strerror(-rc));
            return rc == -EINVAL ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
        }
        if (i == 0)
            report_rejected(set, res.summary.rejected, a->quiet);
        if (res.summary.unfinished && !a->quiet)
            eco_cli_err("warning: %s: %zu job(s) never finished (they could never be placed); "
                        "see jobs.csv with --out", pol[i]->name, res.summary.unfinished);
        if (a->out)
            status = write_outputs(dir, set, c, &res);
        if (a->json) {
            char *text = eco_sim_summary_json(&res.summary, 1);
            if (text) {
                printf("%s%s\n", text, (npol > 1 && i + 1 < npol) ? "," : "");
            } else {
                eco_cli_err("sim: --json: the summary could not be encoded as JSON (a value not "
                            "finite, or out of memory)");
                status = ECO_EXIT_FAIL;
            }
            free(text);
        } else {
            print_table_row(&res.summary, &tab);
        }
        eco_sim_result_fini(&res);
    }
    if (a->json && npol > 1)
        printf("]\n");
    return status;
}

/* --compare with --out: DIR/compare.txt names the runs in --compare order, for `ecosched
 * report DIR` (docs/report.md). */
static int write_compare_order(const struct sim_args *a, const struct eco_policy_ops **pol,
                               size_t npol)
{
    const char *names[MAX_COMPARE];
    struct eco_error err = {{0}};
    for (size_t i = 0; i < npol; i++)
        names[i] = pol[i]->name;
    if (eco_report_save_order(a->out, names, npol, &err) < 0) {
        eco_cli_err("sim: %s", err.msg);
        return ECO_EXIT_FAIL;
    }
    return 0;
}

/* --report: the runs just written to --out, in --compare order. */
static int write_report(const struct sim_args *a, const struct eco_policy_ops **pol, size_t npol)
{
    struct eco_report_run runs[MAX_COMPARE];
    char dirs[MAX_COMPARE][4096];
    for (size_t i = 0; i < npol; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s%s%s", a->out, npol > 1 ? "/" : "",
                 npol > 1 ? pol[i]->name : "");
        runs[i] = (struct eco_report_run){dirs[i], npol > 1 ? pol[i]->name : NULL};
    }
    int status = eco_report_to_file(runs, npol, NULL, a->report);
    if (!status && !a->quiet)
        eco_cli_err("report: %s", a->report);
    return status;
}

/* Checks the policy parameters before the trace is read, so that a typo fails at once: they
 * are tried on a one-node stand-in cluster. */
static int check_params_early(const struct sim_args *a, const struct eco_policy_ops **pol,
                              size_t npol)
{
    struct eco_cluster *dummy = NULL;
    struct eco_error err = {{0}};
    int status = 0, has_las = 0;
    if (eco_cluster_parse_spec("1x1", &dummy, &err))
        return ECO_EXIT_FAIL;
    for (size_t i = 0; i < npol; i++)
        has_las |= !strcmp(pol[i]->name, "las");
    if (a->las_thresholds && !has_las && !a->quiet)
        eco_cli_err("warning: --las-thresholds applies to the las policy only; ignored");
    if (a->las_thresholds && has_las) {
        const struct eco_policy_ops *las = eco_policy_find("las");
        struct eco_policy *p = las->create(dummy, a->las_thresholds, &err);
        if (!p) {
            eco_cli_err("sim: --las-thresholds: %s", err.msg);
            status = ECO_EXIT_USAGE;
            goto done;
        }
        las->destroy(p);
    }
    const char *params;
    const struct eco_powerdown_ops *pd = eco_powerdown_find(a->power_down, &params);
    struct eco_powerdown *pdi = pd->create(dummy, params, &err);
    if (!pdi) {
        eco_cli_err("sim: %s", err.msg);
        status = ECO_EXIT_USAGE;
        goto done;
    }
    pd->destroy(pdi);
    if (a->workload_mix) {
        struct eco_workload_mix mix;
        if (eco_workload_mix_parse(a->workload_mix, &mix, &err)) {
            eco_cli_err("sim: %s", err.msg);
            status = ECO_EXIT_USAGE;
            goto done;
        }
    }
    if (eco_cluster_is_auto(a->cluster)) {
        struct eco_jobset empty = {0};
        struct eco_cluster *c = NULL;
        if (eco_cluster_auto(a->cluster, &empty, &c, &err)) {
            eco_cli_err("sim: --cluster: %s", err.msg);
            status = ECO_EXIT_USAGE;
        }
        eco_cluster_destroy(c);
    }
done:
    eco_cluster_destroy(dummy);
    return status;
}

/* The trace's span, a lower bound on the simulated window: first submit to the last end if
 * every job started at once. */
static double trace_span(const struct eco_jobset *set)
{
    double lo = 0, hi = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (i == 0 || j->submit_s < lo)
            lo = j->submit_s;
        if (i == 0 || j->submit_s + j->duration_s > hi)
            hi = j->submit_s + j->duration_s;
    }
    return hi - lo;
}

/* --sample-s and --control-period against the trace: the output and the run time stay bounded
 * (MAX_SAMPLES, MAX_CONTROL_STEPS); the message says which value would do. */
static int check_periods(const struct sim_args *a, const struct eco_jobset *set, int capping)
{
    double span = trace_span(set);
    if (a->out && a->sample_s > 0 && span / a->sample_s > MAX_SAMPLES) {
        eco_cli_err("sim: --sample-s %g: the trace spans at least %.0f s, %.3g timeline samples; "
                    "at most %.0f: give --sample-s %.0f or more", a->sample_s, span,
                    span / a->sample_s, MAX_SAMPLES, ceil(span / MAX_SAMPLES));
        return ECO_EXIT_USAGE;
    }
    double period = a->control_period_s > 0 ? a->control_period_s : 1;
    if (capping && span / period > MAX_CONTROL_STEPS) {
        eco_cli_err("sim: --control-period %g: the trace spans at least %.0f s, %.3g control "
                    "periods; at most %.0f: give --control-period %.0f or more", period, span,
                    span / period, MAX_CONTROL_STEPS, ceil(span / MAX_CONTROL_STEPS));
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* Removes the temporary --out of a --report run: the directory mkdtemp made (0700, so only
 * this run wrote into it) and all that the run wrote there, symlinks not followed. */
static void remove_tmp_out(const char *dir, int quiet)
{
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && !quiet)
        eco_cli_err("warning: cannot remove the temporary directory %s: %s", dir, strerror(errno));
}

int eco_cmd_sim(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* container consolidation is its own model (cmd_consol.c) */
        if (!strncmp(argv[i], "--consolidation", 15) && (!argv[i][15] || argv[i][15] == '='))
            return eco_cmd_sim_consolidation(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--server")) /* one-server mode: cmd_sim_server.c */
        return eco_cmd_sim_server(argc - 1, argv + 1);
    struct sim_args a;
    int status = parse_args(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    const struct eco_policy_ops *pol[MAX_COMPARE];
    size_t npol;
    if ((status = resolve_policies(&a, pol, &npol)))
        return status;
    const struct eco_placement_ops *placement = eco_placement_find_any(a.placement);
    if (!placement) {
        eco_cli_err("sim: --placement: unknown placement '%s' (known: pack, pool, spread, "
                    "first-fit, energy, ffd, bfd, dot-product, fgd, pso, pso-basic, ilp)",
                    a.placement);
        return ECO_EXIT_USAGE;
    }
    const char *pd_params;
    if (!eco_powerdown_find(a.power_down, &pd_params)) {
        eco_cli_err("sim: --power-down: unknown policy '%s' (known: none, idle:SECONDS, forecast)",
                    a.power_down);
        return ECO_EXIT_USAGE;
    }
    if ((status = check_params_early(&a, pol, npol)))
        return status;
    if (a.sample_s > 0 && !a.out && !a.report && !a.quiet)
        eco_cli_err("warning: --sample-s applies to timeline.csv, written only with --out");
    int fmt = eco_trace_format_parse(a.format);
    if (fmt < 0) {
        eco_cli_err("sim: --format: unknown format '%s' (known: auto, canonical, itp, philly, "
                    "openb)", a.format);
        return ECO_EXIT_USAGE;
    }
    struct eco_error err = {{0}};
    struct eco_cluster *c = NULL;
    struct eco_jobset *set = NULL;
    struct eco_budget_step one, *budget = NULL;
    char tmp_out[4096] = "";
    size_t n_budget = 0;
    if (a.budget_w > 0 && a.budget_file) {
        eco_cli_err("sim: give --power-budget or --power-budget-file, not both");
        return ECO_EXIT_USAGE;
    }
    if (a.budget_file) {
        int brc = eco_budget_load(a.budget_file, &budget, &n_budget, &err);
        if (brc) {
            eco_cli_err("sim: --power-budget-file: %s", brc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            return brc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        }
    } else if (a.budget_w > 0) {
        one = (struct eco_budget_step){0, a.budget_w};
        n_budget = 1;
    }
    const struct eco_budget_step *steps = budget ? budget : &one;
    if (n_budget && !a.power_policy) {
        a.power_policy = DEFAULT_POWER_POLICY;
        if (!a.quiet)
            eco_cli_err("note: power budget without --power-policy: using %s, the default "
                        "(docs/policies/powercap.md)", DEFAULT_POWER_POLICY);
    }
    int have_policy = a.power_policy && strcmp(a.power_policy, "none");
    if (n_budget && !have_policy) {
        eco_cli_err("sim: a power budget needs a power policy other than none (%s)",
                    capper_names());
        free(budget);
        return ECO_EXIT_USAGE;
    }
    if (have_policy) { /* the family and its parameters, before the trace is read */
        struct eco_capper *cp = eco_capper_create(a.power_policy, &err);
        if (!cp) {
            eco_cli_err("sim: --power-policy: %s", err.msg);
            free(budget);
            return ECO_EXIT_USAGE;
        }
        eco_capper_destroy(cp);
    }
    if (have_policy && !n_budget) {
        eco_cli_err("sim: --power-policy %s needs --power-budget W or --power-budget-file F",
                    a.power_policy);
        free(budget);
        return ECO_EXIT_USAGE;
    }
    int rc = eco_cluster_is_auto(a.cluster) ? 0 : eco_cluster_load(a.cluster, &c, &err);
    if (rc) {
        eco_cli_err("sim: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    set = eco_jobset_create();
    if (!set) {
        status = ECO_EXIT_FAIL;
        goto done;
    }
    struct eco_trace_opts topts = {
        .format = (enum eco_trace_format)fmt,
        .skip_bad_rows = a.skip_bad_rows,
        .max_jobs = (size_t)a.max_jobs,
        .warn = warn_cb,
        .warn_ctx = &a.quiet,
    };
    rc = eco_trace_load(a.trace, &topts, set, &err);
    if (rc) {
        eco_cli_err("%s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    if ((set->skipped_non_gpu || set->skipped_unfinished) && !a.quiet)
        eco_cli_err("note: %s: skipped %zu CPU-only and %zu pending pods (no GPU job to replay)",
                    a.trace, set->skipped_non_gpu, set->skipped_unfinished);
    if ((status = check_periods(&a, set, have_policy)))
        goto done;
    if (!c) {
        rc = eco_cluster_auto(a.cluster, set, &c, &err);
        if (rc) {
            eco_cli_err("sim: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
            goto done;
        }
        if (!a.quiet)
            eco_cli_err("note: --cluster %s: %u nodes x %u GPUs (%llu GPUs)", a.cluster,
                        c->n_nodes, c->nodes[0].gpus, (unsigned long long)c->total_gpus);
    }
    if (a.report && !a.out) { /* --report alone: the run's files go to a temporary dir */
        const char *tmp = getenv("TMPDIR");
        snprintf(tmp_out, sizeof tmp_out, "%s/ecosched-sim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(tmp_out)) {
            eco_cli_err("sim: --report: cannot create a temporary directory %s: %s", tmp_out,
                        strerror(errno));
            status = ECO_EXIT_FAIL;
            tmp_out[0] = '\0';
            goto done;
        }
        a.out = tmp_out;
    }
    status = run_all(&a, c, set, pol, npol, placement, n_budget ? steps : NULL, n_budget);
    if (!status && a.out && !tmp_out[0] && npol > 1) /* not into the temporary one */
        status = write_compare_order(&a, pol, npol);
    if (!status && a.report)
        status = write_report(&a, pol, npol);
    if (!status && (fflush(stdout) || ferror(stdout))) {
        eco_cli_err("sim: cannot write the summary to standard output: %s",
                    strerror(errno ? errno : EIO));
        status = ECO_EXIT_FAIL;
    }
done:
    if (tmp_out[0])
        remove_tmp_out(tmp_out, a.quiet);
    free(budget);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
    return status;
}
