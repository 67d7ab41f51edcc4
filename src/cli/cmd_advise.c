/* SPDX-License-Identifier: MIT */
/* `ecosched advise`: what power-down, a GPU power budget and carbon shifting would save on a
 * site's cluster and what its users would pay, each lever tuned on the first part of the
 * history and reported on the rest (docs/advise.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "opts.h"
#include "ecosched/carbon.h"
#include "place/place_io.h"
#include "ecosched/powercap.h"
#include "sim/advise.h"
#include "sim/report.h"
#include "sim/sim.h"
#include "sim/trace.h"
#include "util/grid_signal.h"

/* The settings tried (docs/advise.md, "What it runs"): Slurm's idle timer at 5, 15, 30 and 60
 * minutes (slurm.conf's SuspendTime spans this; the V100 node's break-even idle time, a few
 * minutes, is below the first) and the forecast policy; budgets at 90, 80 and 70 % of the
 * uncapped run's peak on both knobs; shifting with 6 h (a working day's slack) and 24 h (a
 * whole daily cycle of the grid) of delay. */
static const double idle_s[] = {300, 900, 1800, 3600};
static const double budget_pct[] = {90, 80, 70};
static const double delay_s[] = {6 * 3600.0, 24 * 3600.0};
/* The capper of the budget lever: the allocator the capping docs describe first. */
#define ADVISE_POWER_POLICY "mpc"

enum lever { L_DOWN, L_BUDGET, L_SHIFT, N_LEVERS };
static const char *const lever_name[N_LEVERS] = {"power-down", "power-budget", "carbon-shift"};

/* One setting of one lever (or several, for the combined run). */
struct setting {
    enum lever lever;
    char name[64];
    const char *power_down; /* NULL: none */
    double budget_pct;      /* 0: no budget */
    double budget_w;        /* set from the tuning part's uncapped peak */
    int knob;
    double max_delay_s; /* 0: no shifting */
};

struct advise_args {
    const char *trace, *cluster, *format, *gpu_type_map, *tz;
    const char *carbon, *price, *region, *trace_start, *forecast, *out;
    double tune_share, jct_pct, wait_pct, dl_pts, deferrable;
    unsigned long long seed, max_jobs;
    int skip_bad_rows, quiet;
};

/* What every run shares. */
struct ctx {
    const struct advise_args *a;
    const struct eco_cluster *c;
    const struct eco_placement_ops *placement;
    struct eco_signal carbon, price;
    int have_carbon, have_price;
    double epoch0_s;
    enum eco_forecast_kind forecast;
    double sigma;
    const char *phase;
    size_t run, runs;
    int quiet; /* a->quiet, for the warning callbacks */
};

static void advise_usage(FILE *f);

#define A(field) offsetof(struct advise_args, field)
/* --seed, --max-jobs: any unsigned 64-bit value (ULLONG_MAX as a double). */
#define NO_MAX_ULL 18446744073709551615.0
/* The service limits in %: from -100 (a run must halve nothing) to +1000 (ten times the
 * baseline), beyond which a limit no longer limits anything. */
static const struct eco_opt advise_opts[] = {
    {.name = "trace",
     .kind = ECO_OPT_STR,
     .offset = A(trace),
     .arg = "FILE",
     .help = "job trace, any format sim reads (sacct -P / --json, CSV)"},
    {.name = "cluster",
     .kind = ECO_OPT_STR,
     .offset = A(cluster),
     .arg = "SPEC",
     .help = "as sim takes it: COUNTxGPUS[:TYPE],..., a cluster JSON file,\n"
             "a Slurm node list (scontrol show node --oneliner, sinfo --json),\n"
             "auto or peak (docs/formats/cluster.md)"},
    {.name = "format",
     .kind = ECO_OPT_STR,
     .offset = A(format),
     .arg = "F",
     .help = "trace format (default: auto, from the header)"},
    {.name = "gpu-type-map",
     .kind = ECO_OPT_STR,
     .offset = A(gpu_type_map),
     .arg = "S=T,..",
     .help = "Slurm gres GPU types to catalog types (docs/formats/traces.md)"},
    {.name = "tz",
     .kind = ECO_OPT_STR,
     .offset = A(tz),
     .arg = "ZONE",
     .help = "time zone of a sacct -P trace's local times"},
    {.name = "carbon",
     .kind = ECO_OPT_STR,
     .offset = A(carbon),
     .arg = "FILE",
     .help = "grid carbon intensity (docs/formats/grid-signal.md): carbon\n"
             "saved, and carbon shifting evaluated"},
    {.name = "price",
     .kind = ECO_OPT_STR,
     .offset = A(price),
     .arg = "FILE",
     .help = "electricity price: cost saved, and price shifting evaluated\n"
             "(without --carbon)"},
    {.name = "region",
     .kind = ECO_OPT_STR,
     .offset = A(region),
     .arg = "NAME",
     .help = "a bundled grid signal instead of --carbon/--price, read from\n"
             "the checkout's data/grid_signals/: carbon of an EIA-930 2022\n"
             "balancing authority (CISO, ERCO, PJM, ...), price of AEMO NSW1\n"
             "or VIC1 (2020-2024) or Nord Pool DK1 (2021-2024)"},
    {.name = "trace-start",
     .kind = ECO_OPT_STR,
     .offset = A(trace_start),
     .arg = "ISO-TIME",
     .help = "calendar time (UTC) of the trace's time 0 (default: a sacct\n"
             "trace's own, else the signal's start)"},
    {.name = "forecast",
     .kind = ECO_OPT_STR,
     .offset = A(forecast),
     .arg = "F",
     .help = "what shifting knows of the signal, as sim's (default\n"
             "noisy:0.05)"},
    {.name = "deferrable",
     .kind = ECO_OPT_NUM,
     .hi = 1,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(deferrable),
     .arg = "F",
     .help = "share of the jobs without a deadline that may wait\n"
             "(default 1: all)"},
    {.name = "tune-share",
     .kind = ECO_OPT_NUM,
     .hi = 1,
     .flags = ECO_OPT_LO_OPEN,
     .offset = A(tune_share),
     .arg = "F",
     .help = "share of the jobs, by submit time, each lever is tuned on;\n"
             "the rest is held out and reported (default 0.5)"},
    {.name = "max-jct-pct",
     .kind = ECO_OPT_NUM,
     .lo = -100,
     .hi = 1000,
     .offset = A(jct_pct),
     .arg = "P",
     .help = "rule: avg JCT at most P % above the baseline (default 2)"},
    {.name = "max-p95-wait-pct",
     .kind = ECO_OPT_NUM,
     .lo = -100,
     .hi = 1000,
     .offset = A(wait_pct),
     .arg = "P",
     .help = "rule: p95 wait at most P % above the baseline, at least 60 s\n"
             "(default 5)"},
    {.name = "max-dl-miss-pts",
     .kind = ECO_OPT_NUM,
     .lo = -100,
     .hi = 100,
     .offset = A(dl_pts),
     .arg = "P",
     .help = "rule: deadline-miss ratio at most P points above the baseline\n"
             "(default 1)"},
    {.name = "out",
     .kind = ECO_OPT_STR,
     .offset = A(out),
     .arg = "DIR",
     .help = "write DIR/index.html (the advice), DIR/report.html (the\n"
             "held-out runs, as `ecosched report`), DIR/advise.txt and\n"
             "DIR/runs/NAME/ (each held-out run's sim --out files)"},
    {.name = "seed",
     .kind = ECO_OPT_WHOLE,
     .hi = NO_MAX_ULL,
     .flags = ECO_OPT_NO_MAX,
     .offset = A(seed),
     .arg = "N",
     .help = "random seed (default 1); same input and seed, same output"},
    {.name = "max-jobs",
     .kind = ECO_OPT_WHOLE,
     .lo = 1,
     .hi = NO_MAX_ULL,
     .flags = ECO_OPT_NO_MAX,
     .offset = A(max_jobs),
     .arg = "N",
     .help = "read at most N >= 1 jobs from the trace (default: all)"},
    {.name = "skip-bad-rows",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(skip_bad_rows),
     .help = "skip malformed trace rows instead of stopping"},
    {.name = "quiet",
     .short_name = 'q',
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(quiet),
     .help = "no progress lines, notes or warnings on stderr"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP, .help = "this help"},
    {0},
};
#undef A

static const struct eco_opt_cmd advise_cmd = {
    .prefix = "advise",
    .opts = advise_opts,
    .needs_value = "advise: option '%s' needs a value (try 'ecosched advise --help')",
    .unknown = "advise: unknown option '%s' (try 'ecosched advise --help')",
    .usage = advise_usage,
};

static void advise_usage(FILE *f)
{
    fprintf(f, "usage: ecosched advise --trace FILE --cluster SPEC [--carbon FILE|--price FILE]\n"
               "                       [OPTIONS]\n"
               "\n"
               "What would power-down, a GPU power budget or carbon shifting save on this\n"
               "cluster, and what would its users pay? Simulates each lever's settings on the\n"
               "first part of the trace (--tune-share), picks each lever's setting by one rule,\n"
               "and reports the picks, alone and combined, on the held-out rest against the\n"
               "baseline (no lever), with the configuration that deploys them (docs/advise.md).\n"
               "\n");
    eco_cli__opt_help(f, &advise_cmd);
    fprintf(f,
            "\n"
            "Levers: power-down idle:300, idle:900, idle:1800, idle:3600, forecast; power\n"
            "budget (power policy " ADVISE_POWER_POLICY ") at 90, 80, 70 %% of the uncapped peak, "
            "knob limit\n"
            "and clock; carbon shifting (shift, max delay 6h and 24h), with --carbon or\n"
            "--price only; combined: each paying lever's pick together.\n"
            "\n"
            "Rule (every lever): the setting with the largest saving of carbon (with\n"
            "--carbon), else cost (with --price), else energy, among those within the\n"
            "service limits on the tuning part; none: \"does not pay\".\n"
            "\n"
            "Columns (held-out part, against its baseline): saved_MWh, energy saved;\n"
            "MWh_per_yr, the same over 365 days / the held-out span; carbon_t (t CO2eq) and\n"
            "cost saved, with a signal; avg_jct and p95_wait, their change, %%; dl_miss, the\n"
            "deadline-miss ratio's change, points; delayed, jobs starting over 60 s later\n"
            "than in the baseline; verdict.\n"
            "\n"
            "Progress: one line per simulation run on stderr. Exit status: 0 on success, 2 on\n"
            "bad options or bad input (a trace too short to split included), 1 on other\n"
            "failures.\n");
}

static void warn_cb(void *ctx, const char *msg)
{
    if (!*(const int *)ctx)
        eco_cli__err("warning: %s", msg);
}

static int parse_args(int argc, char **argv, struct advise_args *a)
{
    *a = (struct advise_args){
        .format = "auto", .tune_share = 0.5, .jct_pct = 2, .wait_pct = 5, .dl_pts = 1, .seed = 1};
    int rc = eco_cli__opt_parse(&advise_cmd, argc, argv, a);
    if (rc)
        return rc;
    if (optind < argc) {
        eco_cli__err("advise: unexpected argument '%s' (try 'ecosched advise --help')",
                     argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (!a->trace) {
        eco_cli__err("advise: --trace FILE is required (try 'ecosched advise --help')");
        return ECO_EXIT_USAGE;
    }
    if (!a->cluster) {
        eco_cli__err("advise: --cluster SPEC is required, e.g. --cluster 30x8:V100, a Slurm node "
                     "list or auto (try 'ecosched advise --help')");
        return ECO_EXIT_USAGE;
    }
    return 0;
}

/* The bundled grid signals --region names (the README.md of each folder of data/grid_signals): the
 * file under the checkout and whether it is a carbon (1) or price (0) signal. */
static const struct region {
    const char *name, *path;
    int carbon;
} regions[] = {
    {"AZPS", "data/grid_signals/us_eia930_2022/eia930_AZPS_2022_carbon.csv.gz", 1},
    {"BPAT", "data/grid_signals/us_eia930_2022/eia930_BPAT_2022_carbon.csv.gz", 1},
    {"CISO", "data/grid_signals/us_eia930_2022/eia930_CISO_2022_carbon.csv.gz", 1},
    {"ERCO", "data/grid_signals/us_eia930_2022/eia930_ERCO_2022_carbon.csv.gz", 1},
    {"MISO", "data/grid_signals/us_eia930_2022/eia930_MISO_2022_carbon.csv.gz", 1},
    {"NYIS", "data/grid_signals/us_eia930_2022/eia930_NYIS_2022_carbon.csv.gz", 1},
    {"PJM", "data/grid_signals/us_eia930_2022/eia930_PJM_2022_carbon.csv.gz", 1},
    {"SOCO", "data/grid_signals/us_eia930_2022/eia930_SOCO_2022_carbon.csv.gz", 1},
    {"NSW1", "data/grid_signals/aemo_nem_2020_2024/aemo_NSW1_2020_2024_hourly.csv.gz", 0},
    {"VIC1", "data/grid_signals/aemo_nem_2020_2024/aemo_VIC1_2020_2024_hourly.csv.gz", 0},
    {"DK1", "data/grid_signals/energinet_elspot_dk_se/elspot_DK1_20201231_20240331_hourly.csv.gz",
     0},
};

/* --region NAME into a->carbon or a->price: 0 or an exit status (message printed). */
static int resolve_region(struct advise_args *a)
{
    if (!a->region)
        return 0;
    if (a->carbon || a->price) {
        eco_cli__err("advise: --region: give a bundled region or --carbon/--price FILE, not both");
        return ECO_EXIT_USAGE;
    }
    struct eco_cli_list names = {{0}};
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++) {
        if (!strcmp(a->region, regions[i].name)) {
            *(regions[i].carbon ? &a->carbon : &a->price) = regions[i].path;
            return 0;
        }
        eco_cli__list_add(&names, regions[i].name);
    }
    eco_cli__err("advise: --region: unknown region '%s' (known: %s)", a->region, names.buf);
    return ECO_EXIT_USAGE;
}

/* --carbon, --price, --forecast and --trace-start: 0 or an exit status (message printed). */
static int load_signals(struct ctx *x)
{
    const struct advise_args *a = x->a;
    struct eco_error err = {{0}};
    const struct eco_cli_grid grid = {a->carbon, NULL, a->price, NULL};
    int rc =
        eco_cli__grid_read("advise", &grid, &x->carbon, &x->price, &x->have_carbon, &x->have_price);
    if (rc) {
        if (a->region)
            eco_cli__err("advise: --region %s: a bundled region is read from the ecosched "
                         "checkout: run advise there, or give --carbon/--price FILE",
                         a->region);
        return rc;
    }
    if (!a->quiet)
        eco_cli__grid_notes(&grid, &x->carbon, &x->price, x->have_carbon, x->have_price);
    if (eco_forecast_parse(a->forecast ? a->forecast : "noisy", &x->forecast, &x->sigma, &err) <
        0) {
        eco_cli__err("advise: --forecast: %s", err.msg);
        return ECO_EXIT_USAGE;
    }
    if (a->trace_start && eco_parse_utc(a->trace_start, &x->epoch0_s, &err) < 0) {
        eco_cli__err("advise: --trace-start: %s", err.msg);
        return ECO_EXIT_USAGE;
    }
    if (!a->trace_start && (x->have_carbon || x->have_price)) {
        double c0 = x->have_carbon ? eco_signal_start(&x->carbon) : -INFINITY;
        double p0 = x->have_price ? eco_signal_start(&x->price) : -INFINITY;
        x->epoch0_s = c0 > p0 ? c0 : p0;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Runs one setting (NULL: the baseline) on set into *sum; with dir, writes its sim --out files
 * there. 0 or an exit status (message printed). */
static int run_one(struct ctx *x, struct eco_jobset *set, const struct setting *s, const char *dir,
                   struct eco_sim_summary *sum)
{
    const char *pd_params = NULL;
    const struct eco_budget_step step = {0, s ? s->budget_w : 0};
    int shift = s && s->max_delay_s > 0;
    struct eco_sim_config cfg = {
        .policy = eco_policy_find("fifo"),
        .placement = x->placement,
        .power_down = eco_powerdown_find(s && s->power_down ? s->power_down : "none", &pd_params),
        .seed = x->a->seed,
        .power_policy = s && s->budget_w > 0 ? ADVISE_POWER_POLICY : NULL,
        .budget = s && s->budget_w > 0 ? &step : NULL,
        .n_budget = s && s->budget_w > 0 ? 1 : 0,
        .power_knob = s ? s->knob : ECO_POWER_KNOB_LIMIT,
        .carbon = x->have_carbon ? &x->carbon : NULL,
        .price = x->have_price ? &x->price : NULL,
        .epoch0_s = x->epoch0_s,
        .forecast = x->forecast,
        .forecast_sigma = x->sigma,
        .max_delay_s = shift ? s->max_delay_s : 0,
        .deferrable = x->a->deferrable,
        .suspend_s = ECO_SIM_SUSPEND_S,
    };
    cfg.power_down_params = pd_params;
    if (shift) {
        const char *params = NULL;
        cfg.carbon_policy = eco_carbon_find("shift", &params);
        cfg.carbon_params = params;
    }
    char path[4200];
    FILE *tl = NULL;
    struct eco_timeline_writer tw;
    if (dir) {
        int rc = eco_cli__mkdir_p(dir);
        if (rc) {
            eco_cli__err("advise: cannot create output directory %s: %s", dir, strerror(-rc));
            return ECO_EXIT_FAIL;
        }
        snprintf(path, sizeof path, "%s/timeline.csv", dir);
        if (!(tl = fopen(path, "w"))) {
            eco_cli__err("advise: cannot write %s: %s", path, strerror(errno));
            return ECO_EXIT_FAIL;
        }
        errno = 0;
        /* an hourly timeline: the report's plots need no more, and it keeps DIR small */
        eco_timeline_writer_init_signals(&tw, tl, 3600, x->have_carbon, x->have_price);
        cfg.timeline = eco_timeline_write;
        cfg.timeline_ctx = &tw;
    }
    struct eco_sim_result res;
    struct eco_error err = {{0}};
    double t0 = now_s();
    int rc = eco_sim_run(x->c, set, &cfg, &res, &err);
    if (tl) {
        int werr = rc ? 0 : eco_timeline_writer_finish(&tw, res.summary.window_end_s);
        if (eco_cli__close_output(tl, path, werr)) {
            if (!rc)
                eco_sim_result_fini(&res);
            return ECO_EXIT_FAIL;
        }
    }
    if (rc) {
        eco_cli__err("advise: %s: %s", s ? s->name : "baseline",
                     rc == -EINVAL ? err.msg : strerror(-rc));
        return rc == -EINVAL ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
    }
    x->run++;
    if (!x->a->quiet)
        eco_cli__err("advise: %s %zu/%zu: %s%s%s: %.2f s", x->phase, x->run, x->runs,
                     !s                    ? "baseline"
                     : s->lever < N_LEVERS ? lever_name[s->lever]
                                           : "combined",
                     s ? " " : "", s ? s->name : "", now_s() - t0);
    int status = dir ? eco_cli__sim_write_outputs(dir, set, x->c, &res) : 0;
    *sum = res.summary;
    sum->power_down = NULL; /* pointed into res */
    eco_sim_result_fini(&res);
    return status;
}

/* The settings tried; returns how many (cands has room for 16). */
static size_t settings(const struct ctx *x, struct setting *cands)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof idle_s / sizeof idle_s[0]; i++) {
        struct setting *s = &cands[n++];
        *s = (struct setting){.lever = L_DOWN};
        snprintf(s->name, sizeof s->name, "idle:%.0f", idle_s[i]);
        s->power_down = s->name;
    }
    cands[n++] = (struct setting){.lever = L_DOWN, .name = "forecast", .power_down = "forecast"};
    for (int knob = 0; knob < 2; knob++)
        for (size_t i = 0; i < sizeof budget_pct / sizeof budget_pct[0]; i++) {
            struct setting *s = &cands[n++];
            *s = (struct setting){.lever = L_BUDGET, .budget_pct = budget_pct[i], .knob = knob};
        }
    if (x->have_carbon || x->have_price)
        for (size_t i = 0; i < sizeof delay_s / sizeof delay_s[0]; i++) {
            struct setting *s = &cands[n++];
            *s = (struct setting){.lever = L_SHIFT, .max_delay_s = delay_s[i]};
            snprintf(s->name, sizeof s->name, "shift max-delay=%.0fh", delay_s[i] / 3600);
        }
    return n;
}

static void budget_name(struct setting *s)
{
    snprintf(s->name, sizeof s->name, "%s %s %.0f%% (%.1f kW)", ADVISE_POWER_POLICY,
             s->knob == ECO_POWER_KNOB_CLOCK ? "clock" : "limit", s->budget_pct,
             s->budget_w / 1000);
}

/* The held-out results of one row of the table. */
struct row {
    const char *lever;
    char setting[160];
    int evaluated, pays;
    char why[256];
    struct eco_sim_summary sum;
    size_t delayed;
    char verdict[256];
};

/* A number of the table, or "-" where it does not apply. */
static const char *num(char *buf, size_t size, int applies, const char *fmt, double v)
{
    if (!applies)
        return "-";
    snprintf(buf, size, fmt, v);
    return buf;
}

static void print_row(FILE *f, const struct row *r, const struct eco_sim_summary *base,
                      const struct ctx *x, double span_s, int setting_w)
{
    if (!r->evaluated || !r->pays) {
        fprintf(f, "%-13s %s\n", r->lever, r->why);
        return;
    }
    struct eco_advise_delta d;
    eco_advise_delta(base, &r->sum, &d);
    char b[8][32];
    int dl = base->deadline_jobs > 0;
    fprintf(f, "%-13s %-*s %9.3f %10.2f %9s %9s %6.2f%% %8.2f%% %7s %7zu  %s\n", r->lever,
            setting_w, r->setting, d.energy_j / 3.6e9,
            eco_advise_per_year(d.energy_j, span_s) / 3.6e9,
            num(b[0], 32, x->have_carbon, "%.3f", d.carbon_kg / 1000),
            num(b[1], 32, x->have_price, "%.0f", d.cost), d.avg_jct_pct, d.p95_wait_pct,
            num(b[2], 32, dl, "%+.2f", d.dl_miss_pts), r->delayed, r->verdict);
}

static void print_header(FILE *f, int setting_w, const char *currency)
{
    char cost[16];
    snprintf(cost, sizeof cost, "cost%s%.3s", *currency ? "_" : "", currency);
    fprintf(f, "%-13s %-*s %9s %10s %9s %9s %7s %9s %7s %7s  %s\n", "lever", setting_w, "setting",
            "saved_MWh", "MWh_per_yr", "carbon_t", cost, "avg_jct", "p95_wait", "dl_miss",
            "delayed", "verdict");
}

/* The configuration that deploys a pick (docs/slurm/). */
static void print_deploy(FILE *f, const struct setting *s, const struct ctx *x)
{
    if (s->lever == L_DOWN) {
        int forecast = !strcmp(s->power_down, "forecast");
        fprintf(f,
                "power-down %s: slurm.conf (docs/slurm/README.md, section 5), with the two\n"
                "scripts that call `ecosched power suspend/resume`:\n"
                "    SuspendProgram=/usr/local/sbin/ecosched-suspend\n"
                "    ResumeProgram=/usr/local/sbin/ecosched-resume\n"
                "    SuspendTime=%.0f\n"
                "    SuspendTimeout=60\n"
                "    ResumeTimeout=600\n"
                "  and powerd's policy for the suspend program: ecosched powerd --power-down %s\n",
                s->power_down, forecast ? 120.0 : atof(s->power_down + 5), s->power_down);
    } else if (s->lever == L_BUDGET) {
        /* powerd's budget covers the GPUs; the simulated one the whole cluster */
        double hosts_w = 0;
        for (uint32_t n = 0; n < x->c->n_nodes; n++)
            hosts_w += x->c->groups[x->c->nodes[n].group].base_w;
        double gpu_w = s->budget_w - hosts_w;
        fprintf(f,
                "power budget %s: the simulated budget covers the whole cluster (%.0f W);\n"
                "powerd's covers the GPUs, so less the hosts' %.0f W (docs/slurm/powerd.md):\n"
                "    ecosched powerd --budget %.0f --policy %s --nodes /run/ecosched/%%n.sock\n",
                s->name, s->budget_w, hosts_w, gpu_w > 1 ? gpu_w : 1, ADVISE_POWER_POLICY);
        if (s->knob == ECO_POWER_KNOB_CLOCK)
            fprintf(f, "  (powerd sets power limits, not clocks: deployed with powerd this is the\n"
                       "  limit knob at the same budget, listed with the tuning part above)\n");
    } else if (s->lever == L_SHIFT) {
        fprintf(f,
                "carbon shifting (max delay %.0fh): powerd follows the signal and releases\n"
                "held deferrable jobs (docs/slurm/powerd.md, \"Grid signals\"):\n"
                "    ecosched powerd --budget W ... --%s FILE --carbon-policy shift\n"
                "  and users submit the jobs that may wait with\n"
                "    sbatch --hold --comment=ecosched:max-delay=%.0fh job.sh\n",
                s->max_delay_s / 3600, x->have_carbon ? "carbon" : "price", s->max_delay_s / 3600);
    }
}

/* The combined setting: each pick's part together. */
static void combine(struct setting *comb, const struct setting *const *picks)
{
    *comb = (struct setting){.lever = N_LEVERS};
    for (int l = 0; l < N_LEVERS; l++) {
        const struct setting *p = picks[l];
        if (!p)
            continue;
        if (p->power_down)
            comb->power_down = p->power_down;
        if (p->budget_w > 0) {
            comb->budget_w = p->budget_w;
            comb->budget_pct = p->budget_pct;
            comb->knob = p->knob;
        }
        if (p->max_delay_s > 0)
            comb->max_delay_s = p->max_delay_s;
    }
}

/* The tuning part's runs, for the report. */
struct tuning {
    const struct setting *cands;
    size_t n;
    const struct eco_sim_summary *base, *sum;
    const struct eco_advise_limits *lim;
};

/* The text of the report: header lines, the table, the deployment. */
static void print_report(FILE *f, const struct ctx *x, const struct eco_jobset *tune,
                         const struct eco_jobset *held, const struct eco_sim_summary *base,
                         const struct row *rows, size_t nrows, const struct setting *const *picks,
                         enum eco_advise_goal goal, const struct tuning *t)
{
    const struct advise_args *a = x->a;
    char ctext[160];
    eco_cli__cluster_text(x->c, ctext, sizeof ctext);
    double span = base->window_end_s - base->window_start_s;
    fprintf(f, "ecosched advise: %s on %s (%zu jobs)\n", a->trace, ctext, tune->n + held->n);
    fprintf(f,
            "tuned on the first %zu jobs by submit time (%.0f %%), reported on the other %zu "
            "(held out, %.1f days)\n",
            tune->n, 100 * a->tune_share, held->n, span / 86400);
    fprintf(f,
            "rule: per lever, the largest %s saving on the tuning part with avg JCT within "
            "%+g %%, p95 wait within %+g %% (at least 60 s) and deadline misses within %+g "
            "points of the baseline\n",
            eco_advise_goal_name(goal), a->jct_pct, a->wait_pct, a->dl_pts);
    fprintf(f, "baseline (held out, no lever): energy %.3f MWh, avg JCT %.2f h, p95 wait %.2f h",
            base->energy_j.total / 3.6e9, base->avg_jct_s / 3600, base->p95_wait_s / 3600);
    if (x->have_carbon)
        fprintf(f, ", carbon %.3f t", base->carbon_kg / 1000);
    if (x->have_price)
        fprintf(f, ", cost %.0f %s", base->cost, base->cost_currency);
    if (base->deadline_jobs)
        fprintf(f, ", deadline misses %.2f %%", 100 * base->deadline_miss_ratio);
    fprintf(f, "\n\n");
    int w = 7; /* the setting column: its longest entry */
    for (size_t i = 0; i < nrows; i++)
        if (rows[i].evaluated && rows[i].pays && (int)strlen(rows[i].setting) > w)
            w = (int)strlen(rows[i].setting);
    print_header(f, w, x->have_price ? base->cost_currency : "");
    for (size_t i = 0; i < nrows; i++)
        print_row(f, &rows[i], base, x, span, w);
    fprintf(f, "\ntuning part (the first %zu jobs), every setting against its baseline:\n",
            tune->n);
    for (size_t i = 0; i < t->n; i++) {
        struct eco_advise_delta d;
        char why[128];
        eco_advise_delta(t->base, &t->sum[i], &d);
        int ok = eco_advise_within(t->base, &t->sum[i], t->lim, why, sizeof why);
        double save = eco_advise_saving(&d, goal);
        fprintf(f, "  %-13s %-26s saved %9.3f MWh", lever_name[t->cands[i].lever], t->cands[i].name,
                d.energy_j / 3.6e9);
        if (goal == ECO_ADVISE_CARBON)
            fprintf(f, " %8.3f t", d.carbon_kg / 1000);
        else if (goal == ECO_ADVISE_COST)
            fprintf(f, " %8.0f %s", d.cost, t->base->cost_currency);
        fprintf(f, "  avg_jct %+7.2f%%  p95_wait %+7.2f%%  %s%s\n", d.avg_jct_pct, d.p95_wait_pct,
                !ok        ? "breaks: "
                : save > 0 ? "within the limits"
                           : "within the limits, saves no ",
                !ok        ? why
                : save > 0 ? ""
                           : eco_advise_goal_name(goal));
    }
    /* recommended: a pick that also pays on the held-out part */
    int any = 0;
    for (int l = 0; l < N_LEVERS; l++)
        any |= picks[l] && !strcmp(rows[l].verdict, "pays");
    fprintf(f, "\n%s\n", any ? "deploy:" : "deploy: nothing (no lever pays on the held-out part)");
    for (int l = 0; l < N_LEVERS; l++)
        if (picks[l] && !strcmp(rows[l].verdict, "pays"))
            print_deploy(f, picks[l], x);
    for (int l = 0; l < N_LEVERS; l++)
        if (picks[l] && strcmp(rows[l].verdict, "pays"))
            fprintf(f, "not recommended: %s %s (tuned, but %s)\n", lever_name[l], picks[l]->name,
                    rows[l].verdict);
}

static void esc(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        if (s[i] == '<')
            fputs("&lt;", f);
        else if (s[i] == '>')
            fputs("&gt;", f);
        else if (s[i] == '&')
            fputs("&amp;", f);
        else
            fputc(s[i], f);
    }
}

/* DIR/index.html: the advice as a page in the report's style (its style sheet), the levers as a
 * table, then the whole text (tuning runs, deployment), linking report.html. */
static int write_index(const struct ctx *x, const char *text, const struct row *rows, size_t nrows,
                       const struct eco_sim_summary *base)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/index.html", x->a->out);
    FILE *f = fopen(path, "w");
    if (!f) {
        eco_cli__err("advise: cannot write %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    errno = 0;
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<title>ecosched advise</title>\n<style>\n%s"
            "pre{overflow-x:auto;font-size:12px}td{white-space:nowrap}td.u{white-space:normal}\n"
            "</style></head>\n<body>\n"
            "<header><h1>ecosched advise</h1>\n",
            eco_report_css());
    /* the first four lines: trace and cluster, the split, the rule, the baseline */
    const char *p = text;
    for (int i = 0; i < 4 && *p; i++) {
        size_t len = strcspn(p, "\n");
        fputs("<p class=\"meta\">", f);
        esc(f, p, len);
        fputs("</p>\n", f);
        p += len + (p[len] == '\n');
    }
    fputs("<nav><a href=\"report.html\">plots of the held-out runs (report.html)</a>"
          "<a href=\"#advice\">tuning runs and deployment</a></nav></header>\n"
          "<h2>Levers, held out</h2>\n<table id=\"levers\"><thead><tr><th>lever</th>"
          "<th>setting</th><th>saved MWh</th><th>MWh per year</th><th>carbon t</th>"
          "<th>cost</th><th>avg JCT</th><th>p95 wait</th><th>deadline misses</th>"
          "<th>delayed</th><th>verdict</th></tr></thead>\n<tbody>\n",
          f);
    double span = base->window_end_s - base->window_start_s;
    for (size_t i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        fprintf(f, "<tr><th>%s</th>", r->lever);
        if (!r->evaluated || !r->pays) {
            fputs("<td class=\"u\" colspan=\"10\">", f);
            esc(f, r->why, sizeof r->why);
            fputs("</td></tr>\n", f);
            continue;
        }
        struct eco_advise_delta d;
        eco_advise_delta(base, &r->sum, &d);
        char b[3][32];
        fputs("<td class=\"u\">", f);
        esc(f, r->setting, sizeof r->setting);
        fprintf(f,
                "</td><td>%.3f</td><td>%.2f</td><td>%s</td><td>%s</td><td>%+.2f %%</td>"
                "<td>%+.2f %%</td><td>%s</td><td>%zu</td><td class=\"u\">",
                d.energy_j / 3.6e9, eco_advise_per_year(d.energy_j, span) / 3.6e9,
                num(b[0], 32, x->have_carbon, "%.3f", d.carbon_kg / 1000),
                num(b[1], 32, x->have_price, "%.0f", d.cost), d.avg_jct_pct, d.p95_wait_pct,
                num(b[2], 32, base->deadline_jobs > 0, "%+.2f pts", d.dl_miss_pts), r->delayed);
        esc(f, r->verdict, sizeof r->verdict);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n<h2>The whole advice</h2>\n<pre id=\"advice\">", f);
    esc(f, text, strlen(text));
    fputs("</pre>\n</body></html>\n", f);
    return eco_cli__close_output(f, path, 0);
}

/* --out: advise.txt, index.html and report.html of the held-out runs. */
static int write_out(const struct ctx *x, const char *text, const char *const *labels, size_t nruns,
                     const struct row *rows, size_t nrows, const struct eco_sim_summary *base)
{
    const char *dir = x->a->out;
    char path[4200];
    snprintf(path, sizeof path, "%s/advise.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        eco_cli__err("advise: cannot write %s: %s", path, strerror(errno));
        return ECO_EXIT_FAIL;
    }
    errno = 0;
    int status = eco_cli__close_output(f, path, fputs(text, f) < 0 ? -EIO : 0);
    if (!status)
        status = write_index(x, text, rows, nrows, base);
    struct eco_report_run runs[ECO_REPORT_MAX_RUNS];
    char dirs[ECO_REPORT_MAX_RUNS][4200];
    for (size_t i = 0; i < nruns && !status; i++) {
        snprintf(dirs[i], sizeof dirs[i], "%s/runs/%zu", dir, i);
        runs[i] = (struct eco_report_run){dirs[i], labels[i]};
    }
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (!status)
        status = eco_cli__report_to_file(runs, nruns, "ecosched advise: held-out runs", path);
    if (!status && !x->a->quiet)
        eco_cli__err("advise: wrote %s/index.html, %s/report.html", dir, dir);
    return status;
}

/* Loads the cluster and the trace: 0 or an exit status (message printed). */
static int load_input(struct ctx *x, struct eco_cluster **c, struct eco_jobset **set)
{
    const struct advise_args *a = x->a;
    struct eco_error err = {{0}};
    struct eco_cli_list names;
    int fmt = eco_trace_format_parse(a->format);
    if (fmt < 0) {
        eco_cli__err("advise: --format: unknown format '%s' (known: %s)", a->format,
                     eco_cli__names(ECO_CLI_FORMATS, &names));
        return ECO_EXIT_USAGE;
    }
    struct eco_cluster_info cinfo = {0};
    struct eco_cluster_opts copts = {
        .gpu_type_map = a->gpu_type_map, .warn = warn_cb, .warn_ctx = &x->quiet, .info = &cinfo};
    int rc =
        eco_cluster_is_auto(a->cluster) ? 0 : eco_cluster_load_with(a->cluster, &copts, c, &err);
    if (rc) {
        eco_cli__err("advise: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
    }
    if (!(*set = eco_jobset_create()))
        return ECO_EXIT_FAIL;
    struct eco_trace_opts topts = {
        .format = (enum eco_trace_format)fmt,
        .skip_bad_rows = a->skip_bad_rows,
        .max_jobs = (size_t)a->max_jobs,
        .gpu_type_map = a->gpu_type_map,
        .tz = a->tz,
        .warn = warn_cb,
        .warn_ctx = &x->quiet,
    };
    rc = eco_trace_load(a->trace, &topts, *set, &err);
    if (rc) {
        eco_cli__err("%s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
        return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
    }
    if (!a->trace_start && (*set)->has_epoch)
        x->epoch0_s = (*set)->epoch_s; /* a sacct trace's calendar times */
    if (!*c) {
        rc = eco_cluster_auto(a->cluster, *set, c, &err);
        if (rc) {
            eco_cli__err("advise: --cluster: %s", rc == -ENOMEM ? strerror(ENOMEM) : err.msg);
            return rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        }
        if (!a->quiet)
            eco_cli__err("note: --cluster %s: %u nodes x %u GPUs (%llu GPUs)", a->cluster,
                         (*c)->n_nodes, (*c)->nodes[0].gpus, (unsigned long long)(*c)->total_gpus);
    }
    return 0;
}

#define MAX_SETTINGS 16

int eco_cli__cmd_advise(int argc, char **argv)
{
    struct advise_args a;
    int status = parse_args(argc, argv, &a);
    if (status)
        return status < 0 ? 0 : status;
    if ((status = resolve_region(&a)))
        return status;
    struct ctx x = {.a = &a, .quiet = a.quiet, .placement = eco_placement_find_any("pack")};
    struct eco_cluster *c = NULL;
    struct eco_jobset *all = NULL, *tune = NULL, *held = NULL;
    struct eco_sim_summary *tsum = NULL;
    double *base_start = NULL;
    char *text = NULL;
    size_t text_len = 0;
    struct eco_error err = {{0}};
    if ((status = load_signals(&x)) || (status = load_input(&x, &c, &all)))
        goto done;
    x.c = c;
    int rc = eco_advise_split(all, a.tune_share, ECO_ADVISE_MIN_PART_JOBS, &tune, &held, &err);
    if (rc < 0) {
        eco_cli__err("advise: %s: %s", a.trace, err.msg);
        status = rc == -ENOMEM ? ECO_EXIT_FAIL : ECO_EXIT_USAGE;
        goto done;
    }
    /* the capped runs' control periods (1 s), bounded as sim bounds them */
    for (int p = 0; p < 2; p++) {
        double span = eco_cli__trace_span(p ? held : tune);
        if (span > ECO_CLI_MAX_CONTROL_STEPS_SKIP) {
            eco_cli__err("advise: %s: the %s part spans at least %.0f s, more than the %.0f "
                         "control periods of 1 s a power-capped run may take; give --max-jobs "
                         "to read less of the trace",
                         a.trace, p ? "held-out" : "tuning", span, ECO_CLI_MAX_CONTROL_STEPS_SKIP);
            status = ECO_EXIT_USAGE;
            goto done;
        }
    }
    enum eco_advise_goal goal = eco_advise_goal_of(x.have_carbon, x.have_price);
    struct eco_advise_limits lim = {a.jct_pct, a.wait_pct, a.dl_pts};

    /* tuning: the baseline and every setting on the first part */
    struct setting cands[MAX_SETTINGS];
    size_t nc = settings(&x, cands);
    struct eco_sim_summary tbase;
    tsum = calloc(nc, sizeof *tsum);
    if (!tsum) {
        status = ECO_EXIT_FAIL;
        goto done;
    }
    x.phase = "tune";
    x.runs = nc + 1;
    if ((status = run_one(&x, tune, NULL, NULL, &tbase)))
        goto done;
    for (size_t i = 0; i < nc; i++) {
        if (cands[i].lever == L_BUDGET) {
            cands[i].budget_w = cands[i].budget_pct / 100 * tbase.peak_power_w;
            budget_name(&cands[i]);
        }
        if ((status = run_one(&x, tune, &cands[i], NULL, &tsum[i])))
            goto done;
    }
    struct row rows[N_LEVERS + 1];
    const struct setting *picks[N_LEVERS] = {0};
    size_t npick = 0;
    for (int l = 0; l < N_LEVERS; l++) {
        struct row *r = &rows[l];
        *r = (struct row){.lever = lever_name[l]};
        struct eco_sim_summary lsum[MAX_SETTINGS];
        const char *names[MAX_SETTINGS];
        size_t idx[MAX_SETTINGS], n = 0;
        for (size_t i = 0; i < nc; i++)
            if (cands[i].lever == (enum lever)l) {
                lsum[n] = tsum[i];
                names[n] = cands[i].name;
                idx[n++] = i;
            }
        if (!n) {
            snprintf(r->why, sizeof r->why,
                     "not evaluated: give --carbon FILE or --price FILE (a grid signal to shift "
                     "by; docs/advise.md)");
            continue;
        }
        r->evaluated = 1;
        char why[200];
        long k = eco_advise_pick(&tbase, lsum, names, n, &lim, goal, why, sizeof why);
        if (k < 0) {
            snprintf(r->why, sizeof r->why, "does not pay: %s (tuning part)", why);
            continue;
        }
        r->pays = 1;
        picks[l] = &cands[idx[k]];
        snprintf(r->setting, sizeof r->setting, "%s", cands[idx[k]].name);
        npick++;
    }
    struct setting comb;
    combine(&comb, picks);
    struct row *cr = &rows[N_LEVERS];
    *cr = (struct row){.lever = "combined", .evaluated = 1, .pays = npick >= 2};
    if (npick < 2)
        snprintf(cr->why, sizeof cr->why, "%s",
                 npick ? "= the one lever that pays (nothing to combine)"
                       : "does not pay: no lever pays alone");
    else {
        size_t off = 0;
        for (int l = 0; l < N_LEVERS; l++)
            if (picks[l])
                off += (size_t)snprintf(cr->setting + off, sizeof cr->setting - off, "%s%s",
                                        off ? " + " : "", picks[l]->name);
        snprintf(comb.name, sizeof comb.name, "%.60s", cr->setting);
    }

    /* held out: the baseline, each pick, the combination */
    x.phase = "held-out";
    x.run = 0;
    x.runs = 1 + npick + (npick >= 2);
    char dir[4200];
    const char *labels[N_LEVERS + 2];
    size_t nout = 0;
    struct eco_sim_summary hbase;
    if (a.out)
        snprintf(dir, sizeof dir, "%s/runs/%zu", a.out, nout);
    labels[nout++] = "baseline";
    if ((status = run_one(&x, held, NULL, a.out ? dir : NULL, &hbase)))
        goto done;
    if ((tbase.rejected || hbase.rejected) && !a.quiet)
        eco_cli__err("warning: %zu of %zu job(s) can never run on this cluster (ecosched sim lists "
                     "them); every run leaves them out",
                     tbase.rejected + hbase.rejected, all->n);
    base_start = malloc((held->n ? held->n : 1) * sizeof *base_start);
    if (!base_start) {
        status = ECO_EXIT_FAIL;
        goto done;
    }
    for (size_t i = 0; i < held->n; i++)
        base_start[i] = held->jobs[i].start_s;
    for (int l = 0; l <= N_LEVERS; l++) {
        struct row *r = &rows[l];
        if (!r->pays)
            continue;
        const struct setting *s = l < N_LEVERS ? picks[l] : &comb;
        if (a.out)
            snprintf(dir, sizeof dir, "%s/runs/%zu", a.out, nout);
        labels[nout++] = l < N_LEVERS ? lever_name[l] : "combined";
        if ((status = run_one(&x, held, s, a.out ? dir : NULL, &r->sum)))
            goto done;
        r->delayed = eco_advise_delayed(held, base_start);
        struct eco_advise_delta d;
        eco_advise_delta(&hbase, &r->sum, &d);
        char why[128];
        if (!eco_advise_within(&hbase, &r->sum, &lim, why, sizeof why))
            snprintf(r->verdict, sizeof r->verdict, "held out: breaks a limit: %s", why);
        else if (!(eco_advise_saving(&d, goal) > 0))
            snprintf(r->verdict, sizeof r->verdict, "held out: saves no %s",
                     eco_advise_goal_name(goal));
        else
            snprintf(r->verdict, sizeof r->verdict, "pays");
    }

    FILE *mem = open_memstream(&text, &text_len);
    if (!mem) {
        status = ECO_EXIT_FAIL;
        goto done;
    }
    struct tuning tun = {cands, nc, &tbase, tsum, &lim};
    print_report(mem, &x, tune, held, &hbase, rows, N_LEVERS + 1, picks, goal, &tun);
    if (fclose(mem)) {
        status = ECO_EXIT_FAIL;
        goto done;
    }
    fputs(text, stdout);
    if (a.out)
        status = write_out(&x, text, labels, nout, rows, N_LEVERS + 1, &hbase);
    if (!status && (fflush(stdout) || ferror(stdout))) {
        eco_cli__err("advise: cannot write to standard output: %s", strerror(errno ? errno : EIO));
        status = ECO_EXIT_FAIL;
    }
done:
    free(text);
    free(base_start);
    free(tsum);
    eco_signal_free(&x.carbon);
    eco_signal_free(&x.price);
    eco_jobset_destroy(tune);
    eco_jobset_destroy(held);
    eco_jobset_destroy(all);
    eco_cluster_destroy(c);
    return status;
}
