/* SPDX-License-Identifier: MIT */
/* `ecosched place`: static placement of items (VMs, containers, pods) onto nodes by one of the
 * placement optimisers, with the assignment and its metrics. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "opts.h"
#include "util/csv.h"
#include "place/place_io.h"
#include "place_sweep.h"
#include "ecosched/rng.h"
#include "util/clock.h"
#include "util/fs.h"

struct place_args {
    const char *nodes, *items, *algo, *out, *seeds;
    int json, objective, shuffle, sweep, lp_bound;
    int progress; /* 0: when stderr is a terminal, 1: --progress, 2: --no-progress */
    unsigned long long seed;
    double time_limit_s, hold_s, inflate_pct, sweep_step_pct;
    uint32_t swarm, iterations, window;
    unsigned pso_off;
    double solve_cpu_s; /* CPU time of the solve, set after it (equal-CPU comparisons) */
};

static int check_objective(const struct eco_opt *o, const char *v, void *args);
static int check_pso_off(const struct eco_opt *o, const char *v, void *args);
static void usage(FILE *f);

#define A(field) offsetof(struct place_args, field)
/* --inflate in --sweep mode: the FGD paper's curves run to 130 % of the cluster's GPUs
 * (Weng et al., ATC '23, Figure 7; the reference's tuneUpPods target). */
#define SWEEP_INFLATE_PCT 130
/* --sweep-step: one point per 1 % arrived, the resolution of the paper's curves. */
#define SWEEP_STEP_PCT 1
/* --seed: at most 2^53, the largest integer a double holds exactly (seeds were read as doubles
 * before; the same seeds stay accepted). */
#define MAX_SEED 9007199254740992.0

/* `place`'s options, in --help order. */
static const struct eco_opt place_opts[] = {
    {.name = "nodes",
     .kind = ECO_OPT_STR,
     .offset = A(nodes),
     .arg = "FILE",
     .help = "nodes: CPU, memory, GPUs, GPU model"},
    {.name = "items",
     .kind = ECO_OPT_STR,
     .offset = A(items),
     .arg = "FILE",
     .help = "items: CPU, memory, GPUs (count or share), allowed models"},
    {.name = "algo",
     .kind = ECO_OPT_STR,
     .offset = A(algo),
     .arg = "NAME",
     .help = "placement algorithm (listed below)"},
    {.name = "objective",
     .kind = ECO_OPT_CUSTOM,
     .arg = "O",
     .help = "hosts (default), frag, energy, balance (pso; ilp: hosts)",
     .check = check_objective},
    {.name = "seed",
     .kind = ECO_OPT_WHOLE,
     .lo = 0,
     .hi = MAX_SEED,
     .offset = A(seed),
     .arg = "S",
     .help = "random seed (pso, pso-basic, --inflate, --shuffle);\n"
             "default 1"},
    {.name = "time-limit",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e6,
     .offset = A(time_limit_s),
     .arg = "SEC",
     .help = "stop pso or ilp after SEC seconds with the best so far;\n"
             "default 10 (0: none); a stopped run depends on the clock"},
    {.name = "swarm",
     .kind = ECO_OPT_WHOLE32,
     .lo = 1,
     .hi = 10000,
     .offset = A(swarm),
     .arg = "N",
     .help = "particles (pso); default 20"},
    {.name = "iterations",
     .kind = ECO_OPT_WHOLE32,
     .lo = 1,
     .hi = 1e8,
     .offset = A(iterations),
     .arg = "N",
     .help = "iterations (pso); default 200"},
    {.name = "window",
     .kind = ECO_OPT_WHOLE32,
     .lo = 1,
     .hi = 1e6,
     .offset = A(window),
     .arg = "N",
     .help = "pso, pso-basic online: items arrive in order, each N\n"
             "arriving items placed by a swarm given those already\n"
             "placed (which stay put; fitness: the window's GPUs placed,\n"
             "then fragmentation growth); default: offline, all at once"},
    {.name = "pso-off",
     .kind = ECO_OPT_CUSTOM,
     .arg = "LIST",
     .help = "pso without the listed operators (comma-separated):\n"
             "mutation, adaptive, local-search, seeding, swarm (swarm:\n"
             "the greedy seeds and their local search only)",
     .check = check_pso_off},
    {.name = "inflate",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1000,
     .offset = A(inflate_pct),
     .arg = "PCT",
     .help = "repeat items drawn at random (seeded) from the list after\n"
             "it until the requested GPUs reach PCT % of the cluster's\n"
             "GPUs (FGD's saturation workload); default 0: as listed\n"
             "(130 with --sweep)"},
    {.name = "shuffle",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(shuffle),
     .help = "shuffle the listed items (seeded by --seed) before\n"
             "--inflate appends its draws, as the FGD paper's simulator\n"
             "does (shufflePod); default: as listed"},
    {.name = "sweep",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(sweep),
     .help = "the FGD paper's protocol: items arrive shuffled, then\n"
             "inflated (--shuffle implied, --inflate default 130); the\n"
             "curve of unallocated GPU share and fragmentation rate\n"
             "against arrived workload for each algorithm of --algo\n"
             "(A,B,... or all-online) and each seed of --seeds; a table\n"
             "on stdout, DIR/curve.csv and DIR/report.html with --out"},
    {.name = "sweep-step",
     .kind = ECO_OPT_NUM,
     .lo = ECO_CLI_SWEEP_STEP_MIN,
     .hi = 100,
     .offset = A(sweep_step_pct),
     .arg = "PCT",
     .help = "--sweep: one curve point per PCT % arrived, 0.1..100;\n"
             "default 1"},
    {.name = "seeds",
     .kind = ECO_OPT_STR,
     .offset = A(seeds),
     .arg = "LIST",
     .help = "--sweep: seeds A-B or A,B,...; mean, min and max over\n"
             "them per point; default: --seed"},
    {.name = "lp-bound",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(lp_bound),
     .help = "--sweep: also GLPK's upper bound on the GPUs any placement\n"
             "of the arrived items could allocate, at 70, 80, ..., 130 %\n"
             "(docs/policies/ilp.md, \"LP bound\"); DIR/bound.csv"},
    {.name = "hold-s",
     .kind = ECO_OPT_NUM,
     .lo = 0,
     .hi = 1e12,
     .offset = A(hold_s),
     .arg = "SEC",
     .help = "energy = power of active hosts x SEC; default 3600"},
    {.name = "out",
     .kind = ECO_OPT_STR,
     .offset = A(out),
     .arg = "DIR",
     .help = "write DIR/assignment.csv, DIR/metrics.json, DIR/arrival.csv\n"
             "(--sweep: DIR/curve.csv, DIR/report.html)"},
    {.name = "json",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(json),
     .help = "print the metrics as JSON instead of text"},
    {.name = "progress",
     .kind = ECO_OPT_FLAG,
     .lo = 1,
     .offset = A(progress),
     .help = "a progress line on stderr for pso and ilp (iteration or\n"
             "branch-and-bound nodes, best so far, wall time) and --sweep\n"
             "(placements done, seed, algorithm); default: only when\n"
             "stderr is a terminal"},
    {.name = "no-progress",
     .kind = ECO_OPT_FLAG,
     .lo = 2,
     .offset = A(progress),
     .help = "no progress line, even on a terminal"},
    {.name = "help", .short_name = 'h', .kind = ECO_OPT_HELP},
    {0},
};
#undef A

static const struct eco_opt_cmd place_cmd = {
    .prefix = "place",
    .opts = place_opts,
    .needs_value = "place: %s needs a value",
    .unknown = "place: unknown option '%s'",
    .usage = usage,
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ecosched place --nodes FILE --items FILE --algo NAME [options]\n\n"
               "Places items (VMs, containers, pods) onto nodes and reports the assignment and\n"
               "its metrics. Files are CSV, plain or gzip: openb's node and pod lists as they\n"
               "are, or ecosched's placement CSV (docs/formats/placement.md).\n\n");
    eco_cli__opt_help(f, &place_cmd);
    fprintf(f, "\nAlgorithms (--algo NAME):\n");
    for (size_t i = 0; eco_pl_algo_any_at(i); i++)
        eco_cli__help_entry(f, eco_pl_algo_any_at(i)->name, eco_pl_algo_any_at(i)->summary);
    fprintf(f, "\nExit status: 0 done, 1 run failure, 2 bad usage or input.\n");
}

static int check_objective(const struct eco_opt *o, const char *v, void *args)
{
    struct place_args *a = args;
    (void)o;
    a->objective = eco_pl_objective_parse(v);
    if (a->objective < 0) {
        struct eco_cli_list l;
        eco_cli__err("place: --objective: unknown '%s' (known: %s)", v,
                     eco_cli__names(ECO_CLI_OBJECTIVES, &l));
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int check_pso_off(const struct eco_opt *o, const char *v, void *args)
{
    struct place_args *a = args;
    struct eco_error err = {{0}};
    (void)o;
    if (eco_pl_pso_off_parse(v, &a->pso_off, &err)) {
        eco_cli__err("place: --pso-off: %s", err.msg);
        return ECO_EXIT_USAGE;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct place_args *a)
{
    *a = (struct place_args){.seed = 1, .time_limit_s = 10, .hold_s = 3600};
    int rc = eco_cli__opt_parse(&place_cmd, argc, argv, a);
    if (rc)
        return rc;
    if (optind < argc) {
        eco_cli__err("place: unexpected argument '%s'", argv[optind]);
        return ECO_EXIT_USAGE;
    }
    if (!a->nodes || !a->items || !a->algo) {
        eco_cli__err("place: --nodes, --items and --algo are required (see --help)");
        return ECO_EXIT_USAGE;
    }
    if (a->window && !a->sweep && strcmp(a->algo, "pso") && strcmp(a->algo, "pso-basic")) {
        eco_cli__err("place: --window: only pso and pso-basic place in windows, not '%s'", a->algo);
        return ECO_EXIT_USAGE;
    }
    if (a->pso_off && !a->sweep && strcmp(a->algo, "pso")) {
        eco_cli__err("place: --pso-off: only pso has these operators, not '%s'", a->algo);
        return ECO_EXIT_USAGE;
    }
    if (!a->sweep && (a->seeds || a->sweep_step_pct > 0 || a->lp_bound)) {
        eco_cli__err("place: %s needs --sweep", a->seeds      ? "--seeds"
                                                : a->lp_bound ? "--lp-bound"
                                                              : "--sweep-step");
        return ECO_EXIT_USAGE;
    }
    if (a->sweep && a->json) {
        eco_cli__err("place: --json does not apply to --sweep (its figures: --out DIR, "
                     "DIR/curve.csv)");
        return ECO_EXIT_USAGE;
    }
    if (a->sweep) {
        a->shuffle = 1;
        if (a->inflate_pct <= 0)
            a->inflate_pct = SWEEP_INFLATE_PCT;
        if (a->sweep_step_pct <= 0)
            a->sweep_step_pct = SWEEP_STEP_PCT;
    }
    return 0;
}

struct deadline {
    double end_s;
};

static int past_deadline(void *ctx)
{
    const struct deadline *d = ctx;
    return d->end_s > 0 && eco_mono_s() >= d->end_s;
}

/* The progress line of pso and ilp: stage, step, best so far, wall time of the limit. */
struct place_progress {
    struct eco_cli_progress line;
    const char *algo;
    double limit_s;
};

static void place_progress(void *ctx, const struct eco_pl_progress *pr)
{
    struct place_progress *pp = ctx;
    char step[64], best[96] = "", bound[64] = "", limit[32] = "";
    if (!eco_cli__progress_due(&pp->line))
        return;
    if (pr->steps)
        snprintf(step, sizeof step, "%llu/%llu", (unsigned long long)pr->step,
                 (unsigned long long)pr->steps);
    else
        snprintf(step, sizeof step, "%llu nodes", (unsigned long long)pr->step);
    int ilp = !strcmp(pp->algo, "ilp"); /* its objective is the hosts */
    if (!isnan(pr->best))
        snprintf(best, sizeof best, ", best %u placed, %s %.6g", pr->placed,
                 ilp ? "hosts" : "objective", pr->best);
    if (!isnan(pr->bound))
        snprintf(bound, sizeof bound, ", bound %.6g hosts", pr->bound);
    if (pp->limit_s > 0)
        snprintf(limit, sizeof limit, " of %g s", pp->limit_s);
    eco_cli__progress_show(&pp->line, "place %s: %s %s%s%s, %.1f s%s", pp->algo, pr->stage, step,
                           best, bound, eco_cli__progress_elapsed(&pp->line), limit);
}

static void print_metrics(FILE *f, const struct place_args *a, const struct eco_pl_metrics *m,
                          const struct eco_pl_outcome *o, const struct eco_pl_instance *in,
                          double solve_s, int json)
{
    if (json) {
        fprintf(f,
                "{\"algo\": \"%s\", \"objective\": \"%s\", \"seed\": %llu, \"nodes\": %u, "
                "\"items\": %u, \"placed\": %u, \"failed\": %u, \"first_failed\": %lld, "
                "\"gpus_requested\": %.3f, \"gpus_placed\": %.3f, \"gpus_before_fail\": %.3f, "
                "\"active_hosts\": %u, \"cpu_util\": %.6f, \"mem_util\": %.6f, "
                "\"gpu_util\": %.6f, \"gpu_alloc_ratio\": %.6f, \"frag_gpus\": %.4f, "
                "\"frag_ratio\": %.6f, \"power_w\": %.1f, \"energy_j\": %.1f, "
                "\"balance\": %.6f, \"solve_s\": %.4f, \"iterations\": %u",
                a->algo, eco_pl_objective_name(a->objective), (unsigned long long)a->seed,
                in->n_nodes, in->n_items, m->placed, m->failed, (long long)m->first_failed,
                m->gpus_requested, m->gpus_placed, m->gpus_before_fail, m->active_hosts,
                m->cpu_util, m->mem_util, m->gpu_util, m->gpu_alloc_ratio, m->frag_gpus,
                m->frag_ratio, m->power_w, m->energy_j, m->balance, solve_s, o->iterations);
        if (!strcmp(a->algo, "ilp"))
            fprintf(f, ", \"optimal\": %s, \"bound_hosts\": %.0f, \"gap\": %.6f",
                    o->optimal ? "true" : "false", o->bound, o->gap);
        fprintf(f, ", \"solve_cpu_s\": %.4f", a->solve_cpu_s);
        fprintf(f, "}\n");
        return;
    }
    fprintf(f, "algo %s (objective %s), %u nodes, %u items\n", a->algo,
            eco_pl_objective_name(a->objective), in->n_nodes, in->n_items);
    if (m->failed)
        fprintf(f, "placed %u, failed %u, first failed item %lld\n", m->placed, m->failed,
                (long long)m->first_failed);
    else
        fprintf(f, "placed %u, failed 0\n", m->placed);
    fprintf(f, "GPUs requested %.2f, placed %.2f, before the first failure %.2f\n",
            m->gpus_requested, m->gpus_placed, m->gpus_before_fail);
    fprintf(f,
            "active hosts %u; utilisation of active hosts: CPU %.1f%%, memory %.1f%%, "
            "GPU %.1f%%\n",
            m->active_hosts, 100 * m->cpu_util, 100 * m->mem_util, 100 * m->gpu_util);
    fprintf(f, "GPU allocation ratio %.2f%%, fragmentation %.2f GPUs (%.1f%% of free GPUs)\n",
            100 * m->gpu_alloc_ratio, m->frag_gpus, 100 * m->frag_ratio);
    fprintf(f, "power of active hosts %.0f W, energy over %g s %.3g J; balance %.4f\n", m->power_w,
            a->hold_s, m->energy_j, m->balance);
    fprintf(f, "solve time %.3f s", solve_s);
    if (o->iterations)
        fprintf(f, ", %u iterations", o->iterations);
    if (!strcmp(a->algo, "ilp"))
        fprintf(f, "; %s, bound %.0f hosts, gap %.2f%%", o->optimal ? "optimal" : "not proven",
                o->bound, 100 * o->gap);
    fprintf(f, "\n");
}

/* The GPU allocation ratio as items arrive: after each 1 % of the cluster's GPUs requested. */
static int write_arrival(FILE *f, const struct eco_pl_instance *in, const struct eco_pl_slot *slots)
{
    double cap = 0, req = 0, alloc = 0;
    for (uint32_t n = 0; n < in->n_nodes; n++)
        cap += in->nodes[n].gpus;
    fprintf(f, "arrived_pct,alloc_pct\n");
    int next = 1;
    for (uint32_t i = 0; i < in->n_items && cap > 0; i++) {
        double g = in->items[i].gpus * in->items[i].gpu_milli / 1000.0;
        req += g;
        if (slots[i].node >= 0)
            alloc += g;
        while (100 * req / cap >= next) {
            fprintf(f, "%d,%.4f\n", next, 100 * alloc / cap);
            next++;
        }
    }
    return ferror(f) ? -EIO : 0;
}

static int write_outputs(const struct place_args *a, const struct eco_pl_instance *in,
                         const struct eco_pl_slot *slots, const struct eco_pl_metrics *m,
                         const struct eco_pl_outcome *o, double solve_s)
{
    int mk = eco_mkdir(a->out, 0777);
    if (mk < 0) {
        eco_cli__err("place: --out %s: %s", a->out, strerror(-mk));
        return ECO_EXIT_FAIL;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/assignment.csv", a->out);
    FILE *f = fopen(path, "w");
    if (!f)
        goto fail;
    fprintf(f, "item,name,node,node_name,gpus\n");
    for (uint32_t i = 0; i < in->n_items; i++) {
        fprintf(f, "%u,%s,", i, in->items[i].name);
        if (slots[i].node < 0) {
            fprintf(f, ",,\n");
            continue;
        }
        fprintf(f, "%d,%s,", slots[i].node, in->nodes[slots[i].node].name);
        int first = 1;
        for (uint64_t g = slots[i].gpus; g; g &= g - 1, first = 0)
            fprintf(f, "%s%d", first ? "" : ";", __builtin_ctzll(g));
        fprintf(f, "\n");
    }
    if (fclose(f))
        goto fail;
    snprintf(path, sizeof path, "%s/metrics.json", a->out);
    if (!(f = fopen(path, "w")))
        goto fail;
    print_metrics(f, a, m, o, in, solve_s, 1);
    if (fclose(f))
        goto fail;
    snprintf(path, sizeof path, "%s/arrival.csv", a->out);
    if (!(f = fopen(path, "w")))
        goto fail;
    write_arrival(f, in, slots);
    if (fclose(f))
        goto fail;
    return 0;
fail:
    eco_cli__err("place: %s: %s", path, strerror(errno));
    return ECO_EXIT_FAIL;
}

/* --sweep: the listed items checked, then shuffled and inflated once per seed by the sweep. */
static int run_sweep(const struct place_args *a, const struct eco_pl_instance *in,
                     struct eco_error *err)
{
    if (eco_pl_instance_check(in, err)) {
        eco_cli__err("place: %s", err->msg);
        return ECO_EXIT_USAGE;
    }
    struct eco_cli__sweep_cfg cfg = {
        .algos = a->algo,
        .seeds = a->seeds,
        .seed = a->seed,
        .step_pct = a->sweep_step_pct,
        .inflate_pct = a->inflate_pct,
        .time_limit_s = a->time_limit_s,
        .objective = a->objective,
        .swarm = a->swarm,
        .iterations = a->iterations,
        .window = a->window,
        .pso_off = a->pso_off,
        .lp_bound = a->lp_bound,
        .nodes_path = a->nodes,
        .items_path = a->items,
        .out = a->out,
        .progress = eco_cli__progress_wanted(a->progress ? a->progress == 1 : -1)};
    return eco_cli__place_sweep(&cfg, in);
}

int eco_cli__cmd_place(int argc, char **argv)
{
    struct place_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    const struct eco_pl_algo *algo = a.sweep ? NULL : eco_pl_find_any(a.algo);
    if (!algo && !a.sweep) {
        struct eco_cli_list l;
        eco_cli__err("place: --algo: unknown '%s' (known: %s)", a.algo,
                     eco_cli__names(ECO_CLI_PLACE_ALGOS, &l));
        return ECO_EXIT_USAGE;
    }
    struct eco_pl_instance in = {0};
    struct eco_pl_slot *slots = NULL;
    struct eco_pl_workload w = {0};
    struct eco_error err = {{0}};
    int status = ECO_EXIT_USAGE;
    if (eco_pl_read_nodes(a.nodes, &in, &err) || eco_pl_read_items(a.items, &in, &err)) {
        eco_cli__err("place: %s", err.msg);
        goto out;
    }
    if (in.n_nodes == 0) {
        eco_cli__err("place: %s: no nodes", a.nodes);
        goto out;
    }
    if (a.sweep) {
        status = run_sweep(&a, &in, &err);
        goto out;
    }
    status = ECO_EXIT_FAIL;
    /* the reference shuffles the listed pods, then appends the drawn copies (SortClusterPods,
     * then tuneUpPods; docs/policies/placement.md) */
    if (a.shuffle)
        eco_pl_shuffle(&in, a.seed);
    if (a.inflate_pct > 0 && eco_pl_inflate(&in, a.inflate_pct, a.seed)) {
        eco_cli__err("place: out of memory");
        goto out;
    }
    if (eco_pl_instance_check(&in, &err)) {
        eco_cli__err("place: %s", err.msg);
        status = ECO_EXIT_USAGE;
        goto out;
    }
    slots = calloc(in.n_items ? in.n_items : 1, sizeof *slots);
    if (!slots || eco_pl_workload_from_items(&in, &w)) {
        eco_cli__err("place: out of memory");
        goto out;
    }
    double t0 = eco_mono_s();
    struct deadline dl = {.end_s = a.time_limit_s > 0 ? t0 + a.time_limit_s : 0};
    struct eco_pl_params p = {.seed = a.seed,
                              .objective = a.objective,
                              .swarm = a.swarm,
                              .iterations = a.iterations,
                              .window = a.window,
                              .pso_off = a.pso_off,
                              .time_limit_s = a.time_limit_s,
                              .stop = past_deadline,
                              .stop_ctx = &dl};
    struct eco_pl_outcome o = {.bound = NAN};
    struct place_progress prog = {.algo = a.algo, .limit_s = a.time_limit_s};
    eco_cli__progress_start(&prog.line,
                            eco_cli__progress_wanted(a.progress ? a.progress == 1 : -1));
    if (prog.line.on) {
        p.progress = place_progress;
        p.progress_ctx = &prog;
    }
    double cpu0 = eco_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    rc = algo->solve(&in, &p, slots, &o, &err);
    a.solve_cpu_s = eco_clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    eco_cli__progress_end(&prog.line);
    double solve_s = eco_mono_s() - t0;
    if (rc) {
        eco_cli__err("place: %s", rc == -ENOMEM ? "out of memory" : err.msg);
        status = rc == -EINVAL ? ECO_EXIT_USAGE : ECO_EXIT_FAIL;
        goto out;
    }
    if (eco_pl_verify(&in, slots, &err)) {
        eco_cli__err("place: internal error, infeasible assignment: %s", err.msg);
        goto out;
    }
    struct eco_pl_metrics m;
    if (eco_pl_metrics_compute(&in, &w, slots, a.hold_s, &m)) {
        eco_cli__err("place: out of memory");
        goto out;
    }
    print_metrics(stdout, &a, &m, &o, &in, solve_s, a.json);
    status = a.out ? write_outputs(&a, &in, slots, &m, &o, solve_s) : 0;
out:
    eco_pl_workload_fini(&w);
    free(slots);
    eco_pl_instance_fini(&in);
    return status;
}
