/* SPDX-License-Identifier: MIT */
/* `ecosched sim`: replay a job trace on a modelled cluster under one or more policies. */
#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "opts.h"
#include "sim_tmpdir.h"
#include "ecosched/carbon.h"
#include "ecosched/catalog.h"
#include "place/place_io.h"
#include "ecosched/powercap.h"
#include "sim/report.h"
#include "sim/sim.h"
#include "sim/trace.h"
#include "util/fs.h"
#include "util/grid_signal.h"

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
/* At most this many control periods over the trace's span with --control-skip off: each costs
 * a capping decision over the running jobs. Measured: ITP cluster 10 (260 jobs) on 2x8 with
 * mpc at the default 1 s period ran 1.34 million events in 21.5 s (about 16 us each, 2-core
 * build machine), so 1e7 periods are a few minutes for a small cluster. */
#define MAX_CONTROL_STEPS 1e7
/* The power policy --power-budget uses when --power-policy is not given: the allocator the
 * capping docs describe first (docs/policies/powercap.md). */
#define DEFAULT_POWER_POLICY "mpc"

struct sim_args {
    const char *trace;
    const char *cluster;
    const char *node_power;
    const char *format;
    const char *gpu_type_map, *tz; /* sacct traces and Slurm node lists */
    int elapsed_as_measured;
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
    const char *budget_file, *budget_follow;
    double budget_w;
    double control_period_s;
    int control_skip_off;
    double miss_bound_s;   /* > 0: --miss-bound's slot */
    double carbon_bound_s; /* > 0: --carbon-bound's slot */
    double noise_power, noise_speed;
    int noise_set;
    int power_knob;
    double deadline_lo, deadline_hi;
    const char *carbon, *carbon_column, *price, *price_column, *trace_start;
    const char *carbon_policy, *forecast, *max_delay;
    double deferrable;
    double suspend_s;
    int json;
    int skip_bad_rows;
    int quiet;
    unsigned long long seed;
    unsigned long long max_jobs;
    int progress; /* 0: when stderr is a terminal, 1: --progress, 2: --no-progress */
    /* resolve_policies: each run's policy parameters (what follows "NAME:", or
     * --las-thresholds for las; NULL: none), pointing into argv or spec_buf */
    const char *policy_params[MAX_COMPARE];
    char spec_buf[512];
};

/* One line per queue policy, placement and power-down policy of the registries: name (as
 * written on the command line), summary, and the parameters a queue policy takes. */
static void registry_usage(FILE *f)
{
    char params[256];
    fprintf(f, "\nQueue policies (--policy NAME[:PARAMS], docs/policies/NAME.md):\n");
    for (const struct eco_policy_ops *const *p = eco_policy_all(); *p; p++) {
        eco_cli__help_entry(f, (*p)->name, (*p)->summary);
        if ((*p)->params_help) {
            snprintf(params, sizeof params, "params: %s", (*p)->params_help);
            eco_cli__help_entry(f, "", params);
        }
    }
    fprintf(f, "\nTrace formats (--format F, docs/formats/traces.md):\n  %s\n",
            eco_cli__names(ECO_CLI_FORMATS, &(struct eco_cli_list){{0}}));
    fprintf(f, "\nPlacements (--placement NAME, docs/policies/placement.md):\n");
    for (size_t i = 0; eco_placement_any_at(i); i++)
        eco_cli__help_entry(f, eco_placement_any_at(i)->name, eco_placement_any_at(i)->summary);
    fprintf(f, "\nPower-down policies (--power-down P, docs/policies/power-down.md):\n");
    for (const struct eco_powerdown_ops *const *p = eco_powerdown_all(); *p; p++)
        eco_cli__help_entry(f, (*p)->usage ? (*p)->usage : (*p)->name, (*p)->summary);
}

/* One line per carbon policy: name and summary (with its parameter). */
static void carbon_usage(FILE *f)
{
    fprintf(f, "\nCarbon policies (--carbon-policy NAME[:PARAM], docs/policies/carbon.md):\n");
    eco_cli__help_entry(f, "none", "carbon-agnostic: every job enters the queue when it arrives");
    for (const struct eco_carbon_ops *const *p = eco_carbon_all(); *p; p++)
        eco_cli__help_entry(f, (*p)->name, (*p)->summary);
}

/* One line per capper: name, summary and parameter keys. */
static void capper_usage(FILE *f)
{
    const struct eco_capper_ops *const *all = eco_capper_all();
    fprintf(
        f,
        "\nPower policies (--power-policy FAMILY[:KEY=VALUE,...], docs/policies/powercap.md):\n");
    char keys[512];
    for (size_t i = 0; all[i]; i++) {
        eco_cli__help_entry(f, all[i]->name, all[i]->summary);
        snprintf(keys, sizeof keys, "keys: %s", all[i]->params_help);
        eco_cli__help_entry(f, "", keys);
    }
}

static int check_knob(const struct eco_opt *o, const char *v, void *args);
static int check_period(const struct eco_opt *o, const char *v, void *args);
static int check_skip(const struct eco_opt *o, const char *v, void *args);
static int check_noise(const struct eco_opt *o, const char *v, void *args);
static int check_deadlines(const struct eco_opt *o, const char *v, void *args);
static int check_sample(const struct eco_opt *o, const char *v, void *args);
static int check_max_jobs(const struct eco_opt *o, const char *v, void *args);
static void sim_usage(FILE *f);

/* `sim --consolidation P ...` (cmd_consol.c reads the whole command line, --consolidation
 * included, wherever it stands). */
static int run_consolidation(int argc, char **argv, int at)
{
    (void)at;
    return eco_cli__cmd_sim_consolidation(argc, argv);
}

/* `sim --server ...` (cmd_sim_server.c): its command line is the rest, --server in argv[0]. */
static int run_server(int argc, char **argv, int at)
{
    char **rest = malloc((size_t)argc * sizeof *rest);
    if (!rest) {
        eco_cli__err("sim --server: %s", strerror(ENOMEM));
        return ECO_EXIT_FAIL;
    }
    int n = 0;
    rest[n++] = argv[at];
    for (int i = 1; i < argc; i++)
        if (i != at)
            rest[n++] = argv[i];
    rest[n] = NULL;
    int status = eco_cli__cmd_sim_server(n, rest);
    free(rest);
    return status;
}

#define A(field) offsetof(struct sim_args, field)
/* Sanity bounds of values that have no natural maximum (not named in the messages): a power
 * budget or period of 1e15 (W, s) is far beyond any cluster or trace, and keeps sums finite. */
#define NO_MAX_W_S 1e15
/* --sample-s: a sample every 1e12 s is already one row for any trace. */
#define NO_MAX_SAMPLE_S 1e12
/* --seed, --max-jobs: any unsigned 64-bit value (ULLONG_MAX as a double). */
#define NO_MAX_ULL 18446744073709551615.0

/* `sim`'s options, in --help order. --server and --consolidation are subcommand entries
 * (ECO_OPT_MODE): eco_cli__cmd_sim hands the command line to their run wherever they stand. */
static const struct eco_opt sim_opts[] = {
    {.name = "trace",
     .kind = ECO_OPT_STR,
     .offset = A(trace),
     .arg = "FILE",
     .help = "job trace (CSV, optionally gzip-compressed)"},
    {.name = "format",
     .kind = ECO_OPT_STR,
     .offset = A(format),
     .arg = "F",
     .help = "trace format (default: auto, from the header; listed below)"},
    {.name = "gpu-type-map",
     .kind = ECO_OPT_STR,
     .offset = A(gpu_type_map),
     .arg = "S=T,..",
     .help = "Slurm gres GPU types (sacct traces, Slurm node lists) to catalog\n"
             "types, e.g. a100_80g=A100-SXM,tesla=V100 (docs/formats/traces.md)"},
    {.name = "tz",
     .kind = ECO_OPT_STR,
     .offset = A(tz),
     .arg = "ZONE",
     .help = "time zone of a sacct -P trace's local times, e.g. Europe/Berlin\n"
             "(default: TZ, else the system's)"},
    {.name = "elapsed-as-measured",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(elapsed_as_measured),
     .help = "sacct traces: take Elapsed as the reference duration as it is,\n"
             "not scaled by the speed of the GPU type the job ran on"},
    {.name = "cluster",
     .kind = ECO_OPT_STR,
     .offset = A(cluster),
     .arg = "SPEC",
     .help = "COUNTxGPUS[:TYPE][,...], e.g. 30x8:V100,4x8:A100-SXM (type\n"
             "defaults to V100), a cluster JSON file (docs/formats/cluster.md),\n"
             "a Slurm node list (scontrol show node --oneliner, sinfo --json),\n"
             "auto[xGPUS][:TYPE]: sized from the trace for 70% average\n"
             "utilisation, or peak[xGPUS][:TYPE]: for its peak demand\n"
             "(docs/formats/cluster.md)"},
    {.name = "node-power",
     .kind = ECO_OPT_STR,
     .offset = A(node_power),
     .arg = "K=V,..",
     .help = "set power figures of every node group of the cluster, e.g.\n"
             "base_w=450,boot_s=600,cycle_j=0,gpu_idle_w=30 (keys and units:\n"
             "docs/formats/cluster.md; for sensitivity sweeps)"},
    {.name = "policy",
     .kind = ECO_OPT_STR,
     .offset = A(policy),
     .arg = "P[:PARAMS]",
     .help = "queue policy (default: fifo; listed below), parameters\n"
             "after the name, e.g. las:3600,36000"},
    {.name = "placement",
     .kind = ECO_OPT_STR,
     .offset = A(placement),
     .arg = "L",
     .help = "GPU placement (default: pack; listed below)"},
    {.name = "compare",
     .kind = ECO_OPT_STR,
     .offset = A(compare),
     .arg = "P1,P2,..",
     .help = "run several policies on the same input, one table (each\n"
             "P may carry its parameters: fifo,las:1800,18000)"},
    {.name = "las-thresholds",
     .kind = ECO_OPT_STR,
     .offset = A(las_thresholds),
     .arg = "L",
     .help = "as --policy las:L: las queue thresholds in GPU-seconds\n"
             "(default 3600,36000)"},
    {.name = "power-down",
     .kind = ECO_OPT_STR,
     .offset = A(power_down),
     .arg = "P",
     .help = "node power-down (default: none; listed below)"},
    {.name = "workload-mix",
     .kind = ECO_OPT_STR,
     .offset = A(workload_mix),
     .arg = "M",
     .help = "workloads for jobs whose trace names none: 'default' or\n"
             "NAME:WEIGHT,... (docs/models/energy.md); else 'generic'"},
    {.name = "out",
     .kind = ECO_OPT_STR,
     .offset = A(out),
     .arg = "DIR",
     .help = "write DIR/jobs.csv, summary.json, rejected.csv, nodes.csv and\n"
             "timeline.csv (with --compare: DIR/POLICY/...)"},
    {.name = "sample-s",
     .kind = ECO_OPT_NUM,
     .hi = NO_MAX_SAMPLE_S,
     .flags = ECO_OPT_LO_OPEN | ECO_OPT_NO_MAX,
     .offset = A(sample_s),
     .arg = "S",
     .help = "timeline.csv every S seconds instead of at every change",
     .check = check_sample,
     .noun = "a number of seconds"},
    {.name = "report",
     .kind = ECO_OPT_STR,
     .offset = A(report),
     .arg = "FILE.html",
     .help = "also write an HTML report of the run(s) (as `ecosched\n"
             "report`; docs/report.md); without --out DIR the files go to\n"
             "a temporary directory, removed after"},
    {.name = "power-policy",
     .kind = ECO_OPT_STR,
     .offset = A(power_policy),
     .arg = "P[:PARAMS]",
     .help = "GPU power capping under a budget: none (default),\n"
             "or a capper (listed below); PARAMS key=value,...\n"
             "(docs/policies/powercap.md)"},
    {.name = "power-budget",
     .kind = ECO_OPT_NUM,
     .hi = NO_MAX_W_S,
     .flags = ECO_OPT_LO_OPEN | ECO_OPT_NO_MAX,
     .offset = A(budget_w),
     .arg = "W",
     .help = "cluster power budget in watts (power policy: " DEFAULT_POWER_POLICY "\n"
             "unless --power-policy says otherwise)"},
    {.name = "power-budget-file",
     .kind = ECO_OPT_STR,
     .offset = A(budget_file),
     .arg = "F",
     .help = "budget steps over time: CSV 'time_s,watts'"},
    {.name = "power-budget-follow",
     .kind = ECO_OPT_STR,
     .offset = A(budget_follow),
     .arg = "HIGH_W:LOW_W:PCT[:carbon|price]",
     .help = "demand response: LOW_W (the guaranteed floor) in the hours\n"
             "whose day-ahead forecast of the price (else carbon) signal\n"
             "is above the day's PCT-th percentile, HIGH_W otherwise\n"
             "(--forecast says what is known; docs/policies/powercap.md)"},
    {.name = "power-knob",
     .kind = ECO_OPT_CUSTOM,
     .arg = "K",
     .help = "what capping actuates: limit (GPU power limits, default) or\n"
             "clock (locked SM clocks, discrete levels;\n"
             "docs/models/clock.md)",
     .check = check_knob},
    {.name = "control-period",
     .kind = ECO_OPT_NUM,
     .hi = NO_MAX_W_S,
     .flags = ECO_OPT_LO_OPEN | ECO_OPT_NO_MAX,
     .offset = A(control_period_s),
     .arg = "S",
     .help = "power-capping control period (default 1 s)",
     .check = check_period},
    {.name = "control-skip",
     .kind = ECO_OPT_CUSTOM,
     .arg = "on|off",
     .help = "skip control periods once the limits have settled\n"
             "(default on; off: run every period)",
     .check = check_skip},
    {.name = "miss-bound",
     .kind = ECO_OPT_NUM,
     .hi = NO_MAX_W_S,
     .flags = ECO_OPT_LO_OPEN | ECO_OPT_NO_MAX,
     .offset = A(miss_bound_s),
     .arg = "SLOT_S",
     .help = "instead of a run: a lower bound on the deadline misses\n"
             "of any schedule under the power budget (a linear\n"
             "relaxation in slots of SLOT_S seconds; 3600 is usual)"},
    {.name = "carbon-bound",
     .kind = ECO_OPT_NUM,
     .hi = NO_MAX_W_S,
     .flags = ECO_OPT_LO_OPEN | ECO_OPT_NO_MAX,
     .offset = A(carbon_bound_s),
     .arg = "SLOT_S",
     .help = "with the run: a lower bound on the jobs' own carbon when\n"
             "each runs within its window (--max-delay, --deadlines)\n"
             "and the cluster's GPUs (a linear relaxation in calendar\n"
             "slots of SLOT_S seconds; 3600 matches hourly signals)"},
    {.name = "noise",
     .kind = ECO_OPT_CUSTOM,
     .arg = "P,S",
     .help = "relative noise of power and progress measurements\n"
             "(default 0.02,0.01)",
     .check = check_noise},
    {.name = "deadlines",
     .kind = ECO_OPT_CUSTOM,
     .arg = "factor:LO-HI",
     .help = "deadline = submit + U(LO,HI) x duration for jobs\n"
             "whose trace gives none (seeded)",
     .check = check_deadlines},
    {.name = "carbon",
     .kind = ECO_OPT_STR,
     .offset = A(carbon),
     .arg = "FILE",
     .help = "grid carbon intensity over calendar time (CSV time_utc,\n"
             "carbon*_gco2eq_per_kwh; docs/formats/grid-signal.md): report\n"
             "carbon (kg CO2eq) per run, job, node and over time"},
    {.name = "carbon-column",
     .kind = ECO_OPT_STR,
     .offset = A(carbon_column),
     .arg = "NAME",
     .help = "the --carbon file's column to use (default: the first\n"
             "carbon column)"},
    {.name = "price",
     .kind = ECO_OPT_STR,
     .offset = A(price),
     .arg = "FILE",
     .help = "electricity price over calendar time (CSV time_utc,\n"
             "price_<currency>_per_mwh): report the cost likewise"},
    {.name = "price-column",
     .kind = ECO_OPT_STR,
     .offset = A(price_column),
     .arg = "NAME",
     .help = "the --price file's column to use (default: the first\n"
             "price column)"},
    {.name = "carbon-policy",
     .kind = ECO_OPT_STR,
     .offset = A(carbon_policy),
     .arg = "P[:PARAMS]",
     .help = "shift deferrable jobs in time by the grid signal: none\n"
             "(default), or a carbon policy (listed below;\n"
             "docs/policies/carbon.md); follows --carbon, else --price"},
    {.name = "forecast",
     .kind = ECO_OPT_STR,
     .offset = A(forecast),
     .arg = "F",
     .help = "what the carbon policy knows of the signal: noisy[:SIGMA]\n"
             "(the signal with a fixed relative error per hour, default\n"
             "0.05), persist (the last 24 h repeated) or oracle (the\n"
             "signal: a bound only); default noisy:0.05"},
    {.name = "max-delay",
     .kind = ECO_OPT_STR,
     .offset = A(max_delay),
     .arg = "DURATION",
     .help = "slack of jobs without a deadline: they may start up to\n"
             "DURATION after submit (6h, 90m, 1d; default 0: not\n"
             "deferrable); jobs with a deadline start by deadline - duration"},
    {.name = "deferrable",
     .kind = ECO_OPT_NUM,
     .hi = 1,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(deferrable),
     .arg = "F",
     .help = "share of the jobs without a deadline that --max-delay makes\n"
             "deferrable, drawn with --seed (default 1: all)"},
    {.name = "suspend-cost",
     .kind = ECO_OPT_NUM,
     .hi = 86400,
     .offset = A(suspend_s),
     .arg = "S",
     .help = "an interrupting carbon policy's checkpoint and restore per\n"
             "suspension, s of the job's time at its draw (default 120;\n"
             "docs/policies/carbon.md)"},
    {.name = "trace-start",
     .kind = ECO_OPT_STR,
     .offset = A(trace_start),
     .arg = "ISO-TIME",
     .help = "calendar time (UTC) of the trace's time 0, e.g.\n"
             "2022-06-01T00:00:00Z (default: the start of the signal, the\n"
             "later start of the two with both)"},
    {.name = "json",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(json),
     .help = "print the summary as JSON (an array with --compare)"},
    {.name = "seed",
     .kind = ECO_OPT_WHOLE,
     .hi = NO_MAX_ULL,
     .flags = ECO_OPT_NO_MAX,
     .offset = A(seed),
     .arg = "N",
     .help = "random seed (default 1); same input and seed, same output"},
    {.name = "skip-bad-rows",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(skip_bad_rows),
     .help = "skip malformed trace rows (counted) instead of stopping"},
    {.name = "max-jobs",
     .kind = ECO_OPT_WHOLE,
     .hi = NO_MAX_ULL,
     .flags = ECO_OPT_NO_MAX,
     .offset = A(max_jobs),
     .arg = "N",
     .help = "read at most N >= 1 jobs from the trace (default: all)",
     .check = check_max_jobs},
    {.name = "consolidation",
     .kind = ECO_OPT_MODE,
     .arg = "P",
     .help = "container consolidation instead of trace replay (its own\n"
             "options: ecosched sim --consolidation none --help)",
     .run = run_consolidation},
    {.name = "server", .kind = ECO_OPT_MODE, .run = run_server},
    {.name = "quiet",
     .short_name = 'q',
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(quiet),
     .help = "no warnings on stderr"},
    {.name = "progress",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(progress),
     .help = "a progress line on stderr (simulated time, jobs done,\n"
             "wall time); default: only when stderr is a terminal"},
    {.name = "no-progress",
     .kind = ECO_OPT_FLAG,
     .lo = 2,
     .offset = A(progress),
     .help = "no progress line, even on a terminal"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};
#undef A

static const struct eco_opt_cmd sim_cmd = {
    .prefix = "sim",
    .opts = sim_opts,
    .needs_value = "sim: option '%s' needs a value (try 'ecosched sim --help')",
    .unknown = "sim: unknown option '%s' (try 'ecosched sim --help')",
    .usage = sim_usage,
};

static void sim_usage(FILE *f)
{
    fprintf(f, "usage: ecosched sim --trace FILE --cluster SPEC [OPTIONS]\n"
               "       ecosched sim --server [OPTIONS]   one GPU server, GPU sharing (--server "
               "--help)\n"
               "\n"
               "Replays a GPU job trace on a modelled cluster and reports job completion time "
               "(JCT),\n"
               "waiting time and GPU utilisation.\n"
               "\n");
    eco_cli__opt_help(f, &sim_cmd);
    fprintf(f,
            "\n"
            "Exit status: 0 on success, 2 on bad options or bad input (the message names the\n"
            "file, line and field), 1 on other failures.\n"
            "\n"
            "Summary table (without --json; one row per policy; docs/simulator.md, \"Standard\n"
            "output\"): policy, placement, power_down (its name), cluster (COUNTxGPUS:TYPE,...);\n"
            "jobs in the trace, completed, rejected (can never run: listed on stderr);\n"
            "avg/p50/p95_jct_h job completion time (submit to end) and avg/p95_wait_h\n"
            "(time queued, every wait), hours; makespan_d, first submit to last end, days;\n"
            "gpu_util, busy GPU time over GPUs x makespan, 0..1; energy_kwh, all energy metered; "
            "avg_kw, its mean power;\n"
            "boots, node boots; events, simulation events; wall_s, seconds the simulation\n"
            "took; dl_miss, share of the jobs with a deadline that ended after it; cap_mae%%,\n"
            "mean |power - budget| / budget over the periods where the budget binds, %%;\n"
            "all_mae%%, the same over every control period; cap_ovr%%, largest excess over the\n"
            "budget after settling, %%; carbon_kg and cost with --carbon / --price.\n"
            "\"-\": the column does not apply: dl_miss without a job with a deadline, the\n"
            "three cap columns without a budget or with one that never binds (no period's\n"
            "full-power demand above it). --json and summary.json keep the numbers.\n");
    registry_usage(f);
    capper_usage(f);
    carbon_usage(f);
}

static int check_knob(const struct eco_opt *o, const char *v, void *args)
{
    struct sim_args *a = args;
    (void)o;
    if (strcmp(v, "limit") && strcmp(v, "clock")) {
        eco_cli__err("sim: --power-knob: unknown knob '%s' (known: limit, clock)", v);
        return ECO_EXIT_USAGE;
    }
    a->power_knob = strcmp(v, "clock") ? ECO_POWER_KNOB_LIMIT : ECO_POWER_KNOB_CLOCK;
    return 0;
}

static int check_period(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    if (((struct sim_args *)args)->control_period_s < MIN_CONTROL_PERIOD_S) {
        eco_cli__err("sim: --control-period: '%s' is below the minimum %g s (a GPU "
                     "cannot follow a faster control loop)",
                     v, MIN_CONTROL_PERIOD_S);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int check_skip(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    if (strcmp(v, "on") && strcmp(v, "off")) {
        eco_cli__err("sim: --control-skip: expected on or off (got '%s')", v);
        return ECO_EXIT_USAGE;
    }
    ((struct sim_args *)args)->control_skip_off = !strcmp(v, "off");
    return 0;
}

/* One relative noise of --noise: 0 <= x < 1. */
static int noise_part(const char *s, const char **end, double *x)
{
    char *e;
    *x = strtod(s, &e);
    *end = e;
    return e != s && *x >= 0 && *x < 1;
}

static int check_noise(const struct eco_opt *o, const char *v, void *args)
{
    struct sim_args *a = args;
    const char *end;
    (void)o;
    if (!noise_part(v, &end, &a->noise_power) || *end != ',' ||
        !noise_part(end + 1, &end, &a->noise_speed) || *end) {
        eco_cli__err("sim: --noise: expected P,S with 0 <= P, S < 1, e.g. 0.02,0.01 "
                     "(got '%s')",
                     v);
        return ECO_EXIT_USAGE;
    }
    a->noise_set = 1;
    return 0;
}

static int check_deadlines(const struct eco_opt *o, const char *v, void *args)
{
    struct sim_args *a = args;
    char *end;
    (void)o;
    int ok = !strncmp(v, "factor:", 7);
    if (ok) {
        a->deadline_lo = strtod(v + 7, &end);
        ok = end != v + 7 && *end == '-';
        if (ok) {
            const char *q = end + 1;
            a->deadline_hi = strtod(q, &end);
            ok = end != q && !*end && a->deadline_lo >= 1 && a->deadline_hi >= a->deadline_lo &&
                 a->deadline_hi < 1e6;
        }
    }
    if (!ok) {
        eco_cli__err("sim: --deadlines: expected factor:LO-HI with 1 <= LO <= HI, e.g. "
                     "factor:1.5-3 (got '%s')",
                     v);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int check_sample(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    if (((struct sim_args *)args)->sample_s < MIN_SAMPLE_S) {
        eco_cli__err("sim: --sample-s: '%s' is below the minimum %g s (without --sample-s "
                     "timeline.csv has a row at every change)",
                     v, MIN_SAMPLE_S);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int check_max_jobs(const struct eco_opt *o, const char *v, void *args)
{
    (void)o;
    (void)v;
    if (((struct sim_args *)args)->max_jobs == 0) {
        eco_cli__err("sim: --max-jobs: 0 would read no job; give N >= 1, or leave the "
                     "option out to read all");
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct sim_args *a)
{
    *a = (struct sim_args){.policy = "fifo",
                           .placement = "pack",
                           .format = "auto",
                           .power_down = "none",
                           .seed = 1,
                           .suspend_s = ECO_SIM_SUSPEND_S};
    int rc = eco_cli__opt_parse(&sim_cmd, argc, argv, a);
    if (rc)
        return rc;
    if (optind < argc) {
        eco_cli__err("sim: unexpected argument '%s' (try 'ecosched sim --help')", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (!a->trace) {
        eco_cli__err("sim: --trace FILE is required (try 'ecosched sim --help')");
        return ECO_EXIT_USAGE;
    }
    if (!a->cluster) {
        eco_cli__err("sim: --cluster SPEC is required, e.g. --cluster 30x8:V100 "
                     "(try 'ecosched sim --help')");
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static void warn_cb(void *ctx, const char *msg)
{
    if (!*(int *)ctx)
        eco_cli__err("warning: %s", msg);
}

int eco_cli__mkdir_p(const char *dir)
{
    return eco_mkdir_p(dir, 0777);
}

enum out_kind { OUT_TEXT, OUT_JOBS, OUT_REJECTED, OUT_NODES };

static int out_path(char *path, size_t size, const char *dir, const char *name)
{
    if (snprintf(path, size, "%s/%s", dir, name) >= (int)size) {
        eco_cli__err("sim: output path too long: %s", dir);
        return ECO_EXIT_FAIL;
    }
    return 0;
}

/* Closes an output file; a write error before (rc, with errno from the failed write) or at the
 * close is reported with the path and the reason. 0 or ECO_EXIT_FAIL. */
int eco_cli__close_output(FILE *f, const char *path, int rc)
{
    int e = rc || ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) && !e)
        e = errno ? errno : EIO;
    if (!e)
        return 0;
    eco_cli__err("sim: cannot write %s: %s", path, strerror(e));
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
        eco_cli__err("sim: cannot write %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    int rc = 0;
    errno = 0;
    switch (kind) {
    case OUT_TEXT:
        rc = fputs(text, f) < 0 || fputc('\n', f) == EOF ? -EIO : 0;
        break;
    case OUT_JOBS:
        rc = eco_sim_write_jobs_csv(f, set, r);
        break;
    case OUT_REJECTED:
        rc = eco_sim_write_rejected_csv(f, set);
        break;
    case OUT_NODES:
        rc = eco_sim_write_nodes_csv(f, c, r);
        break;
    }
    return eco_cli__close_output(f, path, rc);
}

int eco_cli__sim_write_outputs(const char *dir, const struct eco_jobset *set,
                               const struct eco_cluster *c, const struct eco_sim_result *r)
{
    char *summary = eco_sim_summary_json(&r->summary, 0);
    if (!summary) {
        eco_cli__err("sim: cannot write %s/summary.json: the summary could not be encoded as "
                     "JSON (a value not finite, or out of memory)",
                     dir);
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
    int carbon, price; /* carbon_kg and cost columns (grid signals given) */
    char cluster_text[128];
};

static int width(int w, const char *s)
{
    int n = (int)strlen(s);
    return n > w ? n : w;
}

/* The cluster as the inline spec names it, COUNTxGPUS:TYPE for each run of alike nodes joined
 * by commas (12x8:V100,4x8:H100-SXM), whether it came inline, from a JSON file or from auto;
 * one cut short ends in ",..." and the totals. */
void eco_cli__cluster_text(const struct eco_cluster *c, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t n = 0, count = 1; n < c->n_nodes; n++, count++) {
        const struct eco_node *a = &c->nodes[n];
        if (n + 1 < c->n_nodes && c->nodes[n + 1].gpus == a->gpus &&
            c->nodes[n + 1].type == a->type)
            continue;
        char part[64];
        int len = snprintf(part, sizeof part, "%s%ux%u:%s", off ? "," : "", count, a->gpus,
                           eco_catalog_get(a->type)->name);
        count = 0;
        if (len < 0 || len >= (int)sizeof part || off + (size_t)len + 24 >= size) {
            snprintf(buf + off, size - off, ",...(%un/%llug)", c->n_nodes,
                     (unsigned long long)c->total_gpus);
            return;
        }
        memcpy(buf + off, part, (size_t)len + 1);
        off += (size_t)len;
    }
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
    eco_cli__cluster_text(c, t->cluster_text, sizeof t->cluster_text);
    t->cluster = width(t->cluster, t->cluster_text);
}

static void print_table_header(const struct table *t)
{
    printf("%-*s %-*s %-*s %-*s ", t->policy, "policy", t->placement, "placement", t->power_down,
           "power_down", t->cluster, "cluster");
    printf("%7s %9s %8s %10s %10s %10s %11s %11s %10s %8s %11s %8s %6s %9s %7s %7s %8s %8s %8s",
           "jobs", "completed", "rejected", "avg_jct_h", "p50_jct_h", "p95_jct_h", "avg_wait_h",
           "p95_wait_h", "makespan_d", "gpu_util", "energy_kwh", "avg_kw", "boots", "events",
           "wall_s", "dl_miss", "cap_mae%", "all_mae%", "cap_ovr%");
    /* carbon and cost only with a signal: without, the table keeps its columns */
    if (t->carbon)
        printf(" %11s", "carbon_kg");
    if (t->price)
        printf(" %11s", "cost");
    putchar('\n');
}

/* A column that does not apply to the run prints as this (docs/simulator.md, "Standard
 * output"); --json and summary.json keep the number. */
#define NOT_APPLICABLE "-"

/* v with 3 decimals, or NOT_APPLICABLE. */
static const char *maybe3(char *buf, size_t size, bool applies, double v)
{
    if (!applies)
        return NOT_APPLICABLE;
    snprintf(buf, size, "%.3f", v);
    return buf;
}

static void print_table_row(const struct eco_sim_summary *s, const struct table *t)
{
    /* dl_miss applies when a completed job had a deadline; the capping columns when the
     * budget bound: some control period's full-power demand exceeded it (without a power
     * policy, or with a budget above every demand, no limit was ever set below full power,
     * the MAE measures only the distance to an unused budget and no overshoot can happen) */
    bool deadlines = s->deadline_jobs > 0, binding = s->capped_periods > 0;
    char dl[32], mae[32], all[32], ovr[32];
    printf("%-*s %-*s %-*s %-*s ", t->policy, s->policy, t->placement, s->placement, t->power_down,
           s->power_down, t->cluster, t->cluster_text);
    printf("%7zu %9zu %8zu %10.2f %10.2f %10.2f %11.2f %11.2f %10.2f %8.3f %11.1f %8.2f %6llu "
           "%9llu %7.3f %7s %8s %8s %8s",
           s->jobs, s->completed, s->rejected, s->avg_jct_s / 3600, s->p50_jct_s / 3600,
           s->p95_jct_s / 3600, s->avg_wait_s / 3600, s->p95_wait_s / 3600, s->makespan_s / 86400,
           s->gpu_util, s->energy_j.total / 3.6e6, s->avg_power_w / 1000,
           (unsigned long long)s->node_boots, (unsigned long long)s->events, s->sim_wall_s,
           maybe3(dl, sizeof dl, deadlines, s->deadline_miss_ratio),
           maybe3(mae, sizeof mae, binding, s->power_cap_mae_pct),
           maybe3(all, sizeof all, binding, s->power_cap_mae_all_pct),
           maybe3(ovr, sizeof ovr, binding, s->power_cap_max_overshoot_pct));
    if (t->carbon)
        printf(" %11.1f", s->carbon_kg);
    if (t->price)
        printf(" %7.1f %-3s", s->cost, s->cost_currency);
    putchar('\n');
}

/* The end of one "NAME[:PARAMS]" part of a --compare list starting at p: its parameters run to
 * the first ',' before a part that starts with a letter (policy names do; las thresholds are
 * numbers), so that "fifo,las:1800,18000,easy" is three policies. */
static char *spec_end(char *p)
{
    char *q = p + strcspn(p, ",:");
    if (*q != ':')
        return q;
    for (q += strcspn(q, ","); *q == ',' && q[1] && !isalpha((unsigned char)q[1]);)
        q += 1 + strcspn(q + 1, ",");
    return q;
}

/* --las-thresholds L: the parameters of las where its name carries none (the older spelling
 * of --policy las:L). */
static int apply_las_thresholds(struct sim_args *a, const struct eco_policy_ops **pol, size_t n)
{
    const struct eco_policy_ops *las = eco_policy_find("las");
    int has_las = 0;
    for (size_t i = 0; i < n; i++) {
        if (pol[i] != las || !a->las_thresholds)
            continue;
        if (a->policy_params[i]) {
            eco_cli__err("sim: --las-thresholds: las already has its thresholds from its name "
                         "(las:%s); give them once",
                         a->policy_params[i]);
            return ECO_EXIT_USAGE;
        }
        a->policy_params[i] = a->las_thresholds;
        has_las = 1;
    }
    if (a->las_thresholds && !has_las && !a->quiet)
        eco_cli__err("warning: --las-thresholds applies to the las policy only; ignored");
    return 0;
}

/* Resolves --policy NAME[:PARAMS], or the --compare list of them, into policy tables and
 * their parameters (a->policy_params). */
static int resolve_policies(struct sim_args *a, const struct eco_policy_ops **pol, size_t *n)
{
    struct eco_cli_list names;
    *n = 0;
    if (!a->compare) {
        pol[0] = eco_policy_find_spec(a->policy, &a->policy_params[0]);
        if (!pol[0]) {
            eco_cli__err("sim: --policy: unknown policy '%s' (known: %s)", a->policy,
                         eco_cli__names(ECO_CLI_POLICIES, &names));
            return ECO_EXIT_USAGE;
        }
        *n = 1;
        return apply_las_thresholds(a, pol, *n);
    }
    if (strlen(a->compare) >= sizeof a->spec_buf) {
        eco_cli__err("sim: --compare: list too long");
        return ECO_EXIT_USAGE;
    }
    strcpy(a->spec_buf, a->compare);
    for (char *p = a->spec_buf, *end; *p; p = end + 1) {
        end = spec_end(p);
        if (end == p) /* empty parts are skipped */
            continue;
        int last = !*end;
        *end = '\0';
        const char *params;
        const struct eco_policy_ops *ops = eco_policy_find_spec(p, &params);
        if (!ops) {
            eco_cli__err("sim: --compare: unknown policy '%s' (known: %s)", p,
                         eco_cli__names(ECO_CLI_POLICIES, &names));
            return ECO_EXIT_USAGE;
        }
        if (*n == MAX_COMPARE) {
            eco_cli__err("sim: --compare: at most %d policies", MAX_COMPARE);
            return ECO_EXIT_USAGE;
        }
        a->policy_params[*n] = params;
        pol[(*n)++] = ops;
        if (last)
            break;
    }
    if (*n == 0) {
        eco_cli__err("sim: --compare: empty policy list");
        return ECO_EXIT_USAGE;
    }
    return apply_las_thresholds(a, pol, *n);
}

/* The rejected jobs on stderr: how many and why, the first REJECTED_SHOWN, then how many more
 * for each reason and where they all are (DIR/rejected.csv with --out). */
#define REJECTED_SHOWN 5
static void report_rejected(const struct eco_jobset *set, size_t rejected, const char *dir,
                            int quiet)
{
    if (!rejected || quiet)
        return;
    char where[4200];
    if (dir)
        snprintf(where, sizeof where, "see %s/rejected.csv", dir);
    else
        snprintf(where, sizeof where, "--out DIR lists them all in DIR/rejected.csv");
    eco_cli__err("warning: %zu of %zu job(s) rejected: they can never run on this cluster (%s)",
                 rejected, set->n, where);
    size_t shown = 0, more[ECO_REJECT_GPU_TYPE + 1] = {0};
    unsigned largest = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->state != ECO_JOB_REJECTED)
            continue;
        if (shown == REJECTED_SHOWN) {
            int r = j->reject_reason;
            more[r >= 0 && r <= ECO_REJECT_GPU_TYPE ? r : ECO_REJECT_SIZE]++;
            if (j->gpus > largest)
                largest = j->gpus;
            continue;
        }
        eco_cli__err("  rejected: job %s (line %u, %u GPUs%s%s): %s",
                     eco_jobset_str(set, j->id_off), j->line, j->gpus, j->gpu_type >= 0 ? " " : "",
                     j->gpu_type >= 0 ? eco_catalog_get((size_t)j->gpu_type)->name : "",
                     eco_sim_reject_reason(j->reject_reason));
        shown++;
    }
    if (rejected <= shown)
        return;
    char why[512] = "";
    size_t off = 0;
    for (int r = ECO_REJECT_SIZE; r <= ECO_REJECT_GPU_TYPE; r++)
        if (more[r] && off < sizeof why)
            off += (size_t)snprintf(why + off, sizeof why - off, "%s%zu %s", off ? "; " : "",
                                    more[r], eco_sim_reject_reason(r));
    eco_cli__err("  ... and %zu more, up to %u GPUs (%s; %s)", rejected - shown, largest, why,
                 where);
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
    if (p->finished || !eco_cli__progress_due(&sp->line))
        return;
    eco_cli__progress_show(&sp->line,
                           "sim %s (%zu/%zu): simulated %.2f d, %zu/%zu jobs done (%.0f%%), "
                           "%.1f s wall",
                           sp->policy, sp->run, sp->runs, (p->t_s - p->start_s) / 86400, p->done,
                           p->total, p->total ? 100.0 * (double)p->done / (double)p->total : 100,
                           eco_cli__progress_elapsed(&sp->line));
}

/* The run's grid signals (--carbon, --price) and the calendar time of the trace's time 0. */
struct signals {
    struct eco_signal carbon, price;
    int have_carbon, have_price;
    double epoch0_s;
    const char *epoch_from;              /* "carbon" or "price": epoch0_s is that signal's start */
    const struct eco_carbon_ops *policy; /* NULL: none */
    const char *params;
    enum eco_forecast_kind forecast;
    double sigma, max_delay_s;
};

static void free_signals(struct signals *sig)
{
    eco_signal_free(&sig->carbon);
    eco_signal_free(&sig->price);
}

/* --power-budget-follow: the budget steps from a forecast of the signal it follows (the
 * forecast --forecast names, seeded as the run's): 0 or an exit status, the message printed. */
static int follow_budget(const struct eco_budget_follow *bf, struct signals *sig,
                         unsigned long long seed, struct eco_budget_step **steps, size_t *n)
{
    struct eco_error err = {{0}};
    int price = bf->which == 2 || (bf->which == 0 && sig->have_price);
    if (!(price ? sig->have_price : sig->have_carbon)) {
        eco_cli__err("sim: --power-budget-follow needs the signal it follows: --%s FILE",
                     bf->which == 1   ? "carbon"
                     : bf->which == 2 ? "price"
                                      : "price or --carbon");
        return ECO_EXIT_USAGE;
    }
    struct eco_forecast f;
    if (eco_forecast_init(&f, sig->forecast, sig->sigma, price ? &sig->price : &sig->carbon,
                          (uint64_t)seed, &err) < 0) {
        eco_cli__err("sim: --power-budget-follow: %s", err.msg);
        return ECO_EXIT_FAIL;
    }
    int rc = eco_budget_follow(bf, &f, sig->epoch0_s, steps, n);
    eco_forecast_fini(&f);
    if (rc < 0) {
        eco_cli__err("sim: --power-budget-follow: %s", strerror(-rc));
        return ECO_EXIT_FAIL;
    }
    return 0;
}

/* Reads --carbon and --price and sets the trace's start: 0, or an exit status with the
 * message printed. */
static int load_signals(const struct sim_args *a, struct signals *sig)
{
    struct eco_error err = {{0}};
    int rc;
    memset(sig, 0, sizeof *sig);
    if ((a->carbon_column && !a->carbon) || (a->price_column && !a->price)) {
        eco_cli__err("sim: --%s-column needs --%s FILE", a->carbon_column ? "carbon" : "price",
                     a->carbon_column ? "carbon" : "price");
        return ECO_EXIT_USAGE;
    }
    const struct eco_cli_grid grid = {a->carbon, a->carbon_column, a->price, a->price_column};
    if ((rc = eco_cli__grid_read("sim", &grid, &sig->carbon, &sig->price, &sig->have_carbon,
                                 &sig->have_price))) {
        free_signals(sig);
        return rc;
    }
    if (a->carbon_policy && strcmp(a->carbon_policy, "none")) {
        sig->policy = eco_carbon_find(a->carbon_policy, &sig->params);
        if (!sig->policy) {
            struct eco_cli_list names;
            eco_cli__err("sim: --carbon-policy: unknown policy '%s' (known: %s)", a->carbon_policy,
                         eco_cli__names(ECO_CLI_CARBON, &names));
            free_signals(sig);
            return ECO_EXIT_USAGE;
        }
        struct eco_carbon *probe = sig->policy->create(NULL, sig->params, &err);
        if (!probe) {
            eco_cli__err("sim: --carbon-policy: %s", err.msg);
            free_signals(sig);
            return ECO_EXIT_USAGE;
        }
        sig->policy->destroy(probe);
        if (!sig->have_carbon && !sig->have_price) {
            eco_cli__err("sim: --carbon-policy %s needs a signal to follow: --carbon FILE or "
                         "--price FILE",
                         sig->policy->name);
            return ECO_EXIT_USAGE;
        }
    }
    if (eco_forecast_parse(a->forecast ? a->forecast : "noisy", &sig->forecast, &sig->sigma, &err) <
        0) {
        eco_cli__err("sim: --forecast: %s", err.msg);
        free_signals(sig);
        return ECO_EXIT_USAGE;
    }
    if (a->max_delay && eco_parse_duration(a->max_delay, &sig->max_delay_s, &err) < 0) {
        eco_cli__err("sim: --max-delay: %s", err.msg);
        free_signals(sig);
        return ECO_EXIT_USAGE;
    }
    if (a->carbon_bound_s > 0 && !sig->have_carbon) {
        eco_cli__err("sim: --carbon-bound needs a carbon signal (--carbon FILE)");
        free_signals(sig);
        return ECO_EXIT_USAGE;
    }
    if (a->carbon_bound_s > 0 && !(a->carbon_bound_s >= 1)) {
        eco_cli__err("sim: --carbon-bound: the slot must be at least 1 s (got %g)",
                     a->carbon_bound_s);
        free_signals(sig);
        return ECO_EXIT_USAGE;
    }
    if (!a->quiet && !sig->policy && !(a->carbon_bound_s > 0) &&
        (a->max_delay || a->forecast || a->deferrable > 0))
        eco_cli__err("warning: --max-delay, --forecast and --deferrable matter only with "
                     "--carbon-policy");
    if (a->trace_start) {
        if (eco_parse_utc(a->trace_start, &sig->epoch0_s, &err) < 0) {
            eco_cli__err("sim: --trace-start: %s", err.msg);
            free_signals(sig);
            return ECO_EXIT_USAGE;
        }
        if (!a->carbon && !a->price && !a->quiet)
            eco_cli__err("warning: --trace-start matters only with --carbon or --price");
    } else if (sig->have_carbon || sig->have_price) {
        double c0 = sig->have_carbon ? eco_signal_start(&sig->carbon) : -INFINITY;
        double p0 = sig->have_price ? eco_signal_start(&sig->price) : -INFINITY;
        sig->epoch0_s = c0 > p0 ? c0 : p0;
        sig->epoch_from = c0 > p0 ? "carbon" : "price"; /* noted once the trace is read */
    }
    if (!a->quiet)
        eco_cli__grid_notes(&grid, &sig->carbon, &sig->price, sig->have_carbon, sig->have_price);
    return 0;
}

int eco_cli__grid_read(const char *prefix, const struct eco_cli_grid *g, struct eco_signal *carbon,
                       struct eco_signal *price, int *have_carbon, int *have_price)
{
    struct eco_error err = {{0}};
    for (int i = 0; i < 2; i++) {
        const char *path = i ? g->price : g->carbon;
        if (!path)
            continue;
        int rc =
            eco_grid_signal_read(path, i ? ECO_SIGNAL_PRICE : ECO_SIGNAL_CARBON,
                                 i ? g->price_column : g->carbon_column, i ? price : carbon, &err);
        if (rc < 0) {
            eco_cli__err("%s: --%s: %s", prefix, i ? "price" : "carbon",
                         rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        }
        *(i ? have_price : have_carbon) = 1;
    }
    return 0;
}

void eco_cli__grid_notes(const struct eco_cli_grid *g, const struct eco_signal *carbon,
                         const struct eco_signal *price, int have_carbon, int have_price)
{
    for (int i = 0; i < 2; i++) {
        const struct eco_signal *s = i ? price : carbon;
        if ((i ? have_price : have_carbon) && s->gaps)
            eco_cli__err("note: --%s: %s: %zu empty value%s, each holding the value before "
                         "(docs/formats/grid-signal.md)",
                         i ? "price" : "carbon", i ? g->price : g->carbon, s->gaps,
                         s->gaps > 1 ? "s" : "");
    }
}

/* A failed eco_sim_run or eco_sim_miss_bound: its error on stderr (a trace line's with the
 * trace's name), and the exit status. */
static int sim_failed(const struct sim_args *a, int rc, const struct eco_error *err)
{
    if (rc == -EINVAL && !strncmp(err->msg, "line ", 5))
        eco_cli__err("%s:%s", a->trace, err->msg + 5);
    else
        eco_cli__err("sim: %s", rc == -EINVAL ? err->msg : strerror(-rc));
    return rc == -EINVAL ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
}

/* What a run and the bound read alike: the jobs' workloads and deadlines, the seed, the budget
 * and the knob. */
static struct eco_sim_config jobs_config(const struct sim_args *a,
                                         const struct eco_budget_step *budget, size_t n_budget)
{
    return (struct eco_sim_config){
        .workload_mix = a->workload_mix,
        .seed = a->seed,
        .budget = budget,
        .n_budget = n_budget,
        .power_knob = a->power_knob,
        .deadline_lo = a->deadline_lo,
        .deadline_hi = a->deadline_hi,
    };
}

static int run_all(const struct sim_args *a, const struct eco_cluster *c, struct eco_jobset *set,
                   const struct eco_policy_ops **pol, size_t npol,
                   const struct eco_placement_ops *placement, const struct eco_budget_step *budget,
                   size_t n_budget, const struct signals *sig)
{
    int status = 0;
    struct table tab;
    table_init(&tab, a, c, pol, npol, placement);
    tab.carbon = sig->have_carbon;
    tab.price = sig->have_price;
    if (a->json && npol > 1)
        printf("[\n");
    else if (!a->json)
        print_table_header(&tab);
    for (size_t i = 0; i < npol && !status; i++) {
        const char *pd_params = NULL;
        struct eco_sim_config cfg = jobs_config(a, budget, n_budget);
        cfg.policy = pol[i];
        cfg.policy_params = a->policy_params[i];
        cfg.placement = placement;
        cfg.power_down = eco_powerdown_find(a->power_down, &pd_params);
        cfg.power_policy = a->power_policy;
        cfg.control_period_s = a->control_period_s;
        cfg.control_skip_off = a->control_skip_off;
        cfg.noise_power = a->noise_power;
        cfg.noise_speed = a->noise_speed;
        cfg.noise_set = a->noise_set;
        cfg.carbon = sig->have_carbon ? &sig->carbon : NULL;
        cfg.price = sig->have_price ? &sig->price : NULL;
        cfg.epoch0_s = sig->epoch0_s;
        cfg.carbon_policy = sig->policy;
        cfg.carbon_params = sig->params;
        cfg.forecast = sig->forecast;
        cfg.forecast_sigma = sig->sigma;
        cfg.max_delay_s = sig->max_delay_s;
        cfg.deferrable = a->deferrable;
        cfg.suspend_s = a->suspend_s;
        cfg.carbon_bound_slot_s = a->carbon_bound_s;
        cfg.power_down_params = pd_params;
        struct sim_progress prog = {.policy = pol[i]->name, .run = i + 1, .runs = npol};
        eco_cli__progress_start(&prog.line,
                                eco_cli__progress_wanted(a->progress ? a->progress == 1 : -1));
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
                eco_cli__err("sim: --out: path too long");
                return ECO_EXIT_USAGE;
            }
            int rc = eco_cli__mkdir_p(dir);
            if (rc) {
                eco_cli__err("sim: cannot create output directory %s: %s", dir, strerror(-rc));
                return ECO_EXIT_FAIL;
            }
            if (out_path(path, sizeof path, dir, "timeline.csv"))
                return ECO_EXIT_FAIL;
            if (!(tl = fopen(path, "w"))) {
                eco_cli__err("sim: cannot write %s: %s", path, strerror(errno));
                return ECO_EXIT_FAIL;
            }
            errno = 0;
            eco_timeline_writer_init_signals(&tw, tl, a->sample_s, sig->have_carbon,
                                             sig->have_price);
            cfg.timeline = eco_timeline_write;
            cfg.timeline_ctx = &tw;
        }
        struct eco_sim_result res;
        struct eco_error err = {{0}};
        int rc = eco_sim_run(c, set, &cfg, &res, &err);
        eco_cli__progress_end(&prog.line);
        if (tl) {
            int werr = rc ? 0 : eco_timeline_writer_finish(&tw, res.summary.window_end_s);
            if (eco_cli__close_output(tl, path, werr)) {
                if (!rc)
                    eco_sim_result_fini(&res);
                return ECO_EXIT_FAIL;
            }
        }
        if (rc) {
            return sim_failed(a, rc, &err);
        }
        if (i == 0)
            report_rejected(set, res.summary.rejected, a->out ? dir : NULL, a->quiet);
        if (res.summary.unfinished && !a->quiet)
            eco_cli__err("warning: %s: %zu job(s) never finished (they could never be placed); "
                         "see jobs.csv with --out",
                         pol[i]->name, res.summary.unfinished);
        if (a->out)
            status = eco_cli__sim_write_outputs(dir, set, c, &res);
        if (a->json) {
            char *text = eco_sim_summary_json(&res.summary, 1);
            if (text) {
                printf("%s%s\n", text, (npol > 1 && i + 1 < npol) ? "," : "");
            } else {
                eco_cli__err("sim: --json: the summary could not be encoded as JSON (a value not "
                             "finite, or out of memory)");
                status = ECO_EXIT_FAIL;
            }
            free(text);
        } else {
            print_table_row(&res.summary, &tab);
            if (res.summary.have_carbon_bound)
                printf("  jobs' own carbon %.1f kg; no schedule within the windows and GPUs "
                       "emits less than %.1f kg (bound, %.3g jobs' work past their window)\n",
                       res.summary.jobs_carbon_kg, res.summary.carbon_bound.kg,
                       res.summary.carbon_bound.late);
        }
        eco_sim_result_fini(&res);
    }
    if (a->json && npol > 1)
        printf("]\n");
    return status;
}

/* --miss-bound: the bound on deadline misses over the jobs a run would replay, as a table line
 * or a JSON object. */
static int run_bound(const struct sim_args *a, const struct eco_cluster *c, struct eco_jobset *set,
                     const struct eco_budget_step *budget, size_t n_budget)
{
    struct eco_sim_config cfg = jobs_config(a, budget, n_budget);
    struct eco_miss_bound b;
    struct eco_error err = {{0}};
    int rc = eco_sim_miss_bound(c, set, &cfg, a->miss_bound_s, &b, &err);
    if (rc)
        return sim_failed(a, rc, &err);
    double ratio = b.deadline_jobs ? (double)b.misses / (double)b.deadline_jobs : 0;
    if (a->json)
        printf("{\"deadline_jobs\": %zu, \"miss_bound\": %zu, \"miss_ratio_bound\": %.6f, "
               "\"met_lp\": %.3f, \"slots\": %zu, \"columns\": %zu, \"slot_s\": %g, "
               "\"solve_s\": %.3f}\n",
               b.deadline_jobs, b.misses, ratio, b.met, b.slots, b.columns, b.slot_s, b.solve_s);
    else
        printf("%-13s %10s %16s %12s %8s %9s %7s %8s\n%-13zu %10zu %16.4f %12.3f %8zu %9zu %7g "
               "%8.2f\n",
               "deadline_jobs", "miss_bound", "miss_ratio_bound", "met_lp", "slots", "columns",
               "slot_s", "solve_s", b.deadline_jobs, b.misses, ratio, b.met, b.slots, b.columns,
               b.slot_s, b.solve_s);
    return 0;
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
        eco_cli__err("sim: %s", err.msg);
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
    int status = eco_cli__report_to_file(runs, npol, NULL, a->report);
    if (!status && !a->quiet)
        eco_cli__err("report: %s", a->report);
    return status;
}

/* Checks the policy parameters before the trace is read, so that a typo fails at once: they
 * are tried on a one-node stand-in cluster. */
static int check_params_early(const struct sim_args *a, const struct eco_policy_ops **pol,
                              size_t npol)
{
    struct eco_cluster *dummy = NULL;
    struct eco_error err = {{0}};
    int status = 0;
    if (eco_cluster_parse_spec("1x1", &dummy, &err))
        return ECO_EXIT_FAIL;
    for (size_t i = 0; i < npol; i++) {
        const char *params = a->policy_params[i];
        if (!params)
            continue;
        struct eco_policy *p = pol[i]->create(dummy, params, &err);
        if (!p) {
            if (params == a->las_thresholds)
                eco_cli__err("sim: --las-thresholds: %s", err.msg);
            else
                eco_cli__err("sim: %s %s: %s", a->compare ? "--compare" : "--policy", pol[i]->name,
                             err.msg);
            status = ECO_EXIT_USAGE;
            goto done;
        }
        pol[i]->destroy(p);
    }
    const char *params;
    const struct eco_powerdown_ops *pd = eco_powerdown_find(a->power_down, &params);
    struct eco_powerdown *pdi = pd->create(dummy, params, &err);
    if (!pdi) {
        eco_cli__err("sim: %s", err.msg);
        status = ECO_EXIT_USAGE;
        goto done;
    }
    pd->destroy(pdi);
    if (a->workload_mix) {
        struct eco_workload_mix mix;
        if (eco_workload_mix_parse(a->workload_mix, &mix, &err)) {
            eco_cli__err("sim: %s", err.msg);
            status = ECO_EXIT_USAGE;
            goto done;
        }
    }
    if (eco_cluster_is_auto(a->cluster)) {
        struct eco_jobset empty = {0};
        struct eco_cluster *c = NULL;
        if (eco_cluster_auto(a->cluster, &empty, &c, &err)) {
            eco_cli__err("sim: --cluster: %s", err.msg);
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
double eco_cli__trace_span(const struct eco_jobset *set)
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
    double span = eco_cli__trace_span(set);
    if (a->out && a->sample_s > 0 && span / a->sample_s > MAX_SAMPLES) {
        eco_cli__err("sim: --sample-s %g: the trace spans at least %.0f s, %.3g timeline samples; "
                     "at most %.0f: give --sample-s %.0f or more",
                     a->sample_s, span, span / a->sample_s, MAX_SAMPLES, ceil(span / MAX_SAMPLES));
        return ECO_EXIT_USAGE;
    }
    double period = a->control_period_s > 0 ? a->control_period_s : 1;
    double most = a->control_skip_off ? MAX_CONTROL_STEPS : ECO_CLI_MAX_CONTROL_STEPS_SKIP;
    if (capping && span / period > most) {
        eco_cli__err("sim: --control-period %g: the trace spans at least %.0f s, %.3g control "
                     "periods; at most %.0f%s: give --control-period %.0f or more",
                     period, span, span / period, most,
                     a->control_skip_off ? " with --control-skip off" : "", ceil(span / most));
        return ECO_EXIT_USAGE;
    }
    return 0;
}

int eco_cli__cmd_sim(int argc, char **argv)
{
    int at = 0; /* the subcommands (--consolidation, --server) are entries of sim_opts */
    const struct eco_opt *mode = eco_cli__opt_find_mode(&sim_cmd, argc, argv, &at);
    if (mode)
        return mode->run(argc, argv, at);
    struct sim_args a;
    struct eco_cli_list names;
    int status = parse_args(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    const struct eco_policy_ops *pol[MAX_COMPARE];
    size_t npol;
    if ((status = resolve_policies(&a, pol, &npol)))
        return status;
    const struct eco_placement_ops *placement = eco_placement_find_any(a.placement);
    if (!placement) {
        eco_cli__err("sim: --placement: unknown placement '%s' (known: %s)", a.placement,
                     eco_cli__names(ECO_CLI_PLACEMENTS, &names));
        return ECO_EXIT_USAGE;
    }
    const char *pd_params;
    if (!eco_powerdown_find(a.power_down, &pd_params)) {
        eco_cli__err("sim: --power-down: unknown policy '%s' (known: %s)", a.power_down,
                     eco_cli__names(ECO_CLI_POWER_DOWN, &names));
        return ECO_EXIT_USAGE;
    }
    if ((status = check_params_early(&a, pol, npol)))
        return status;
    if (a.sample_s > 0 && !a.out && !a.report && !a.quiet)
        eco_cli__err("warning: --sample-s applies to timeline.csv, written only with --out");
    int fmt = eco_trace_format_parse(a.format);
    if (fmt < 0) {
        eco_cli__err("sim: --format: unknown format '%s' (known: %s)", a.format,
                     eco_cli__names(ECO_CLI_FORMATS, &names));
        return ECO_EXIT_USAGE;
    }
    struct eco_error err = {{0}};
    struct eco_cluster *c = NULL;
    struct eco_jobset *set = NULL;
    struct eco_budget_step one, *budget = NULL;
    struct signals sig = {0};
    char tmp_out[4096] = "";
    size_t n_budget = 0;
    if ((a.budget_w > 0) + !!a.budget_file + !!a.budget_follow > 1) {
        eco_cli__err("sim: give one of --power-budget, --power-budget-file and "
                     "--power-budget-follow");
        return ECO_EXIT_USAGE;
    }
    struct eco_budget_follow follow;
    if (a.budget_follow) {
        if (eco_budget_follow_parse(a.budget_follow, &follow, &err) < 0) {
            eco_cli__err("sim: --power-budget-follow: %s", err.msg);
            return ECO_EXIT_USAGE;
        }
        one = (struct eco_budget_step){0, follow.high_w}; /* until the signal is read */
        n_budget = 1;
    }

    if (a.budget_file) {
        int brc = eco_budget_load(a.budget_file, &budget, &n_budget, &err);
        if (brc) {
            eco_cli__err("sim: --power-budget-file: %s",
                         brc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            return brc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        }
    } else if (a.budget_w > 0) {
        one = (struct eco_budget_step){0, a.budget_w};
        n_budget = 1;
    }
    const struct eco_budget_step *steps = budget ? budget : &one;
    if (n_budget && !a.power_policy) {
        a.power_policy = DEFAULT_POWER_POLICY;
        if (!a.quiet && !(a.miss_bound_s > 0)) /* the bound runs no policy */
            eco_cli__err("note: power budget without --power-policy: using %s, the default "
                         "(docs/policies/powercap.md)",
                         DEFAULT_POWER_POLICY);
    }
    int have_policy = a.power_policy && strcmp(a.power_policy, "none");
    if (n_budget && !have_policy) {
        eco_cli__err("sim: a power budget needs a power policy other than none (%s)",
                     eco_cli__names(ECO_CLI_CAPPERS, &names));
        free(budget);
        return ECO_EXIT_USAGE;
    }
    if (have_policy) { /* the family and its parameters, before the trace is read */
        struct eco_capper *cp = eco_capper_create(a.power_policy, &err);
        if (!cp) {
            eco_cli__err("sim: --power-policy: %s", err.msg);
            free(budget);
            return ECO_EXIT_USAGE;
        }
        eco_capper_destroy(cp);
    }
    if (have_policy && !n_budget) {
        eco_cli__err("sim: --power-policy %s needs --power-budget W or --power-budget-file F",
                     a.power_policy);
        free(budget);
        return ECO_EXIT_USAGE;
    }
    if ((status = load_signals(&a, &sig))) {
        free(budget);
        return status;
    }
    struct eco_cluster_info cinfo = {0};
    struct eco_cluster_opts copts = {
        .gpu_type_map = a.gpu_type_map, .warn = warn_cb, .warn_ctx = &a.quiet, .info = &cinfo};
    int rc =
        eco_cluster_is_auto(a.cluster) ? 0 : eco_cluster_load_with(a.cluster, &copts, &c, &err);
    if (rc) {
        eco_cli__err("sim: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    if (c && cinfo.nodes && !a.quiet)
        eco_cli__err("note: --cluster %s: %zu Slurm nodes with GPUs (%llu GPUs) in partitions %s; "
                     "ecosched places jobs on any of them",
                     a.cluster, cinfo.nodes, (unsigned long long)c->total_gpus,
                     cinfo.partitions[0] ? cinfo.partitions : "(none)");
    set = eco_jobset_create();
    if (!set) {
        status = ECO_EXIT_FAIL;
        goto done;
    }
    struct eco_trace_opts topts = {
        .format = (enum eco_trace_format)fmt,
        .skip_bad_rows = a.skip_bad_rows,
        .max_jobs = (size_t)a.max_jobs,
        .gpu_type_map = a.gpu_type_map,
        .tz = a.tz,
        .elapsed_as_measured = a.elapsed_as_measured,
        .warn = warn_cb,
        .warn_ctx = &a.quiet,
    };
    rc = eco_trace_load(a.trace, &topts, set, &err);
    if (rc) {
        eco_cli__err("%s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    if (!a.quiet && !set->has_epoch && (a.tz || a.elapsed_as_measured))
        eco_cli__err("warning: --tz and --elapsed-as-measured matter only with a sacct trace");
    if (!a.quiet && !set->has_epoch && !cinfo.nodes && a.gpu_type_map)
        eco_cli__err("warning: --gpu-type-map matters only with a sacct trace or a Slurm node "
                     "list");
    if (sig.epoch_from && set->has_epoch) {
        /* a trace with calendar times (sacct's Submit) gives its own time 0 */
        sig.epoch0_s = set->epoch_s;
        sig.epoch_from = NULL;
    } else if (sig.epoch_from && !a.quiet) {
        char when[32];
        eco_format_utc(sig.epoch0_s, when, sizeof when);
        eco_cli__err("note: no --trace-start: the trace's time 0 is %s, the start of the %s "
                     "signal",
                     when, sig.epoch_from);
    }
    if (a.budget_follow && (status = follow_budget(&follow, &sig, a.seed, &budget, &n_budget)))
        goto done;
    steps = budget ? budget : &one;
    if ((set->skipped_non_gpu || set->skipped_unfinished) && !a.quiet)
        eco_cli__err("note: %s: skipped %zu CPU-only and %zu pending pods (no GPU job to replay)",
                     a.trace, set->skipped_non_gpu, set->skipped_unfinished);
    if ((status = check_periods(&a, set, have_policy)))
        goto done;
    if (!c) {
        rc = eco_cluster_auto(a.cluster, set, &c, &err);
        if (rc) {
            eco_cli__err("sim: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
            goto done;
        }
        if (!a.quiet)
            eco_cli__err("note: --cluster %s: %u nodes x %u GPUs (%llu GPUs)", a.cluster,
                         c->n_nodes, c->nodes[0].gpus, (unsigned long long)c->total_gpus);
    }
    if (a.node_power && (rc = eco_cluster_set_power(c, a.node_power, &err))) {
        eco_cli__err("sim: --node-power: %s", err.msg);
        status = ECO_EXIT_USAGE;
        goto done;
    }
    if (a.report && !a.out) { /* --report alone: the run's files go to a temporary dir */
        int werr = 0;
        if ((rc = eco_cli__tmpdir_make(tmp_out, sizeof tmp_out, &werr)) < 0) {
            eco_cli__err("sim: --report: cannot create a temporary directory %s: %s", tmp_out,
                         strerror(-rc));
            status = ECO_EXIT_FAIL;
            tmp_out[0] = '\0';
            goto done;
        }
        if (werr && !a.quiet) /* made, but not watched for signals */
            eco_cli__err("warning: %s is removed at the end of the run, not if a signal ends "
                         "it: %s",
                         tmp_out, strerror(werr));
        a.out = tmp_out;
    }
    if (a.miss_bound_s > 0) {
        status = run_bound(&a, c, set, n_budget ? steps : NULL, n_budget);
        goto done;
    }
    status = run_all(&a, c, set, pol, npol, placement, n_budget ? steps : NULL, n_budget, &sig);
    if (!status && a.out && !tmp_out[0] && npol > 1) /* not into the temporary one */
        status = write_compare_order(&a, pol, npol);
    if (!status && a.report)
        status = write_report(&a, pol, npol);
    if (!status && (fflush(stdout) || ferror(stdout))) {
        eco_cli__err("sim: cannot write the summary to standard output: %s",
                     strerror(errno ? errno : EIO));
        status = ECO_EXIT_FAIL;
    }
done:
    if (tmp_out[0])
        eco_cli__tmpdir_remove(a.quiet);
    free_signals(&sig);
    free(budget);
    eco_jobset_destroy(set);
    eco_cluster_destroy(c);
    return status;
}
