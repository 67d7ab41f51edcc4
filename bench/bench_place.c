/* SPDX-License-Identifier: MIT */
/* Placement optimisers benchmark: gap to the exact optimum (ilp) on seeded random instances,
 * and GPUs placed before the first failure on openb (default, gpushare, multigpu), with the
 * time per solve. Prints markdown tables (bench/README.md, docs/results/placement.md).
 * usage: eco_bench_place random [N_INSTANCES [ILP_LIMIT_S]] | openb DATA_DIR [TIME_LIMIT_S
 * [INFLATE_PCT]] | pso [N_INSTANCES [ILP_LIMIT_S]] (pso's ablation on the random instances,
 * scripts/results_pso.sh) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "place/place_io.h"
#include "util/clock.h"

struct deadline {
    double end_s;
};

static int past(void *ctx)
{
    const struct deadline *d = ctx;
    return d->end_s > 0 && eco_mono_s() >= d->end_s;
}

static int run(const struct eco_pl_instance *in, const char *name, int objective, double limit_s,
               struct eco_pl_slot *slots, struct eco_pl_metrics *m, struct eco_pl_outcome *o,
               double *secs)
{
    const struct eco_pl_algo *a = eco_pl_find_any(name);
    struct eco_error err = {{0}};
    struct eco_pl_workload w;
    double t0 = eco_mono_s();
    struct deadline dl = {limit_s > 0 ? t0 + limit_s : 0};
    struct eco_pl_params p = {
        .seed = 1, .objective = objective, .time_limit_s = limit_s, .stop = past, .stop_ctx = &dl};
    *o = (struct eco_pl_outcome){.bound = NAN};
    if (a->solve(in, &p, slots, o, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return -1;
    }
    *secs = eco_mono_s() - t0;
    if (eco_pl_verify(in, slots, &err)) {
        fprintf(stderr, "%s: infeasible: %s\n", name, err.msg);
        return -1;
    }
    if (eco_pl_workload_from_items(in, &w))
        return -1;
    eco_pl_metrics_compute(in, &w, slots, 3600, m);
    eco_pl_workload_fini(&w);
    return 0;
}

static const char *const ALGOS[] = {"ffd", "bfd", "dot-product", "fgd", "pso-basic", "pso", "ilp"};
#define N_ALGOS 7

static int bench_random(int n_inst, double ilp_limit_s)
{
    double hosts[N_ALGOS] = {0}, gap[N_ALGOS] = {0}, secs[N_ALGOS] = {0}, worst[N_ALGOS] = {0};
    int fewer[N_ALGOS] = {0};
    double over_bound[N_ALGOS] = {0};
    int opt_count = 0, pso_beats = 0, pso_ties = 0, pso_at_opt = 0;
    double ilp_gap = 0, items = 0, pso_opt_excess = 0, basic_opt_excess = 0;
    for (int k = 1; k <= n_inst; k++) {
        struct eco_pl_instance in;
        if (eco_pl_random_instance((uint64_t)k, 20, 60, 4, &in))
            return 1;
        items += in.n_items;
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        struct eco_pl_metrics m[N_ALGOS];
        struct eco_pl_outcome o[N_ALGOS];
        double t[N_ALGOS];
        for (int a = 0; a < N_ALGOS; a++)
            if (run(&in, ALGOS[a], ECO_PL_OBJ_HOSTS, !strcmp(ALGOS[a], "ilp") ? ilp_limit_s : 0,
                    slots, &m[a], &o[a], &t[a]))
                return 1;
        double ref = m[N_ALGOS - 1].active_hosts, bound = o[N_ALGOS - 1].bound;
        for (int a = 0; a < N_ALGOS; a++) {
            hosts[a] += m[a].active_hosts;
            over_bound[a] += bound > 0 ? (m[a].active_hosts - bound) / bound : 0;
            double g = (m[a].active_hosts - ref) / ref;
            if (m[a].placed != m[N_ALGOS - 1].placed) {
                fewer[a]++; /* not comparable: a different number of items placed */
                continue;
            }
            gap[a] += g;
            if (g > worst[a])
                worst[a] = g;
        }
        for (int a = 0; a < N_ALGOS; a++)
            secs[a] += t[a];
        opt_count += o[N_ALGOS - 1].optimal;
        if (o[N_ALGOS - 1].optimal) {
            pso_opt_excess += (m[5].active_hosts - ref) / ref;
            basic_opt_excess += (m[4].active_hosts - ref) / ref;
        }
        ilp_gap += o[N_ALGOS - 1].gap;
        pso_beats += m[5].active_hosts < m[4].active_hosts;
        pso_ties += m[5].active_hosts == m[4].active_hosts;
        pso_at_opt += m[5].active_hosts <= ref;
        printf("<!-- instance %d: %u items, %u nodes, ilp %u hosts (%s), pso %u, pso-basic %u, fgd "
               "%u -->\n",
               k, in.n_items, in.n_nodes, m[6].active_hosts, o[6].optimal ? "optimal" : "limit",
               m[5].active_hosts, m[4].active_hosts, m[3].active_hosts);
        free(slots);
        eco_pl_instance_fini(&in);
    }
    printf("\n%d random instances (ilp time limit %g s; seeds 1-%d, 20-60 items, mean %.1f; 4-GPU "
           "nodes of 2 models); "
           "ilp proven optimal on %d, mean ilp gap %.2f%%\n\n",
           n_inst, ilp_limit_s, n_inst, items / n_inst, opt_count, 100 * ilp_gap / n_inst);
    printf("| algo | mean active hosts | mean excess over ilp | worst excess | mean excess over "
           "ilp's bound | instances with other items placed | mean time per solve |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    for (int a = 0; a < N_ALGOS; a++) {
        int cmp = n_inst - fewer[a];
        printf("| %s | %.2f | %.2f%% | %.1f%% | %.2f%% | %d | %.4f s |\n", ALGOS[a],
               hosts[a] / n_inst, cmp ? 100 * gap[a] / cmp : 0.0, 100 * worst[a],
               100 * over_bound[a] / n_inst, fewer[a], secs[a] / n_inst);
    }
    printf("\npso fewer hosts than pso-basic on %d of %d instances, equal on %d; pso at or below "
           "ilp's solution on %d. On the %d instances ilp proves optimal, mean excess over the "
           "optimum: pso %.2f%%, pso-basic %.2f%%.\n",
           pso_beats, n_inst, pso_ties, pso_at_opt, opt_count,
           opt_count ? 100 * pso_opt_excess / opt_count : 0.0,
           opt_count ? 100 * basic_opt_excess / opt_count : 0.0);
    int cmp = n_inst - fewer[5];
    double pso_vs_ilp = cmp ? 100 * gap[5] / cmp : 0.0;
    double pso_opt = opt_count ? 100 * pso_opt_excess / opt_count : 0.0;
    printf("\nTarget (pso within 1 %% of the ilp optimum in active hosts, mean over %d "
           "instances): over ilp's best solutions %.2f %% (%s); over the %d proven optima %.2f %% "
           "(%s); over ilp's bounds %.2f %% (%s; a bound is below the optimum where ilp stopped "
           "at its limit). pso ahead of pso-basic on every instance: %s.\n",
           n_inst, pso_vs_ilp, pso_vs_ilp <= 1 ? "met" : "not met", opt_count, pso_opt,
           pso_opt <= 1 ? "met" : "not met", 100 * over_bound[5] / n_inst,
           100 * over_bound[5] / n_inst <= 1 ? "met" : "not met",
           pso_beats == n_inst ? "yes" : "no (counts above)");
    return 0;
}

/* GPU allocation ratio (% of the cluster's GPUs) once `pct` % of them have been requested. */
static double alloc_at(const struct eco_pl_instance *in, const struct eco_pl_slot *slots,
                       double pct)
{
    double cap = 0, req = 0, alloc = 0;
    for (uint32_t n = 0; n < in->n_nodes; n++)
        cap += in->nodes[n].gpus;
    for (uint32_t i = 0; i < in->n_items; i++) {
        double g = in->items[i].gpus * in->items[i].gpu_milli / 1000.0;
        if (req + g > cap * pct / 100)
            break;
        req += g;
        if (slots[i].node >= 0)
            alloc += g;
    }
    return 100 * alloc / cap;
}

static int bench_openb(const char *dir, double limit_s, double inflate_pct)
{
    static const char *const lists[] = {"default", "gpushare40", "gpushare100", "multigpu50"};
    char verdict[4][512] = {"", "", "", ""};
    printf("Pods of each list in their order, then drawn from it (seed 1) until %g %% of the "
           "cluster's GPUs are requested; pso and pso-basic with --objective frag, %g s time "
           "limit.\n\n",
           inflate_pct, limit_s);
    printf("| pod list | algo | GPUs before first failure | first failed pod | "
           "allocation at 80 / 90 / 100 / %g %% requested | frag at the end (GPUs) | time |\n"
           "|---|---|---:|---:|---|---:|---:|\n",
           inflate_pct);
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
        struct eco_pl_instance in = {0};
        struct eco_error err = {{0}};
        char np[4096], ip[4096];
        snprintf(np, sizeof np, "%s/openb_node_list_gpu_node.csv.gz", dir);
        snprintf(ip, sizeof ip, "%s/openb_pod_list_%s.csv.gz", dir, lists[l]);
        if (eco_pl_read_nodes(np, &in, &err) || eco_pl_read_items(ip, &in, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        if (eco_pl_inflate(&in, inflate_pct, 1))
            return 1;
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        double fgd_before = 0, basic_before = 0;
        for (int a = 0; a < N_ALGOS - 1; a++) {
            struct eco_pl_metrics m;
            struct eco_pl_outcome o;
            double t;
            int obj = !strncmp(ALGOS[a], "pso", 3) ? ECO_PL_OBJ_FRAG : ECO_PL_OBJ_HOSTS;
            if (run(&in, ALGOS[a], obj, limit_s, slots, &m, &o, &t))
                return 1;
            printf("| %s | %s | %.1f | %lld | %.1f / %.1f / %.1f / %.1f | %.1f | %.2f s |\n",
                   lists[l], ALGOS[a], m.gpus_before_fail, (long long)m.first_failed,
                   alloc_at(&in, slots, 80), alloc_at(&in, slots, 90), alloc_at(&in, slots, 100),
                   alloc_at(&in, slots, inflate_pct), m.frag_gpus, t);
            if (!strcmp(ALGOS[a], "fgd"))
                fgd_before = m.gpus_before_fail;
            if (!strcmp(ALGOS[a], "pso-basic"))
                basic_before = m.gpus_before_fail;
            if (!strcmp(ALGOS[a], "pso"))
                snprintf(verdict[l], sizeof verdict[l],
                         "- %s: pso %.1f GPUs before the first failure, fgd %.1f (%s), in %.2f s "
                         "(%s 10 s); pso-basic %.1f (pso %s)\n",
                         lists[l], m.gpus_before_fail, fgd_before,
                         m.gpus_before_fail >= fgd_before ? "at least fgd's" : "fewer", t,
                         t <= 10 ? "within" : "over", basic_before,
                         m.gpus_before_fail > basic_before ? "ahead" : "not ahead");
            fflush(stdout);
        }
        free(slots);
        eco_pl_instance_fini(&in);
    }
    printf("\nTarget (pso at least as many GPU requests as fgd before the first failure, within "
           "10 s; pso ahead of pso-basic):\n\n");
    for (int l = 0; l < 4; l++)
        fputs(verdict[l], stdout);
    return 0;
}

/* pso's ablation on the random instances (docs/policies/pso.md, "Measured"): the full swarm,
 * its seeds plus local search without the swarm, the seeds alone, each operator off, and
 * pso-basic, against ilp's solution and GLPK's bound; CPU time per solve. */
struct variant {
    const char *label, *algo;
    unsigned off;
};

static const struct variant VARIANTS[] = {
    {"pso (all operators)", "pso", 0},
    {"seeds + local search, no swarm (`--pso-off swarm`)", "pso", ECO_PL_PSO_OFF_SWARM},
    {"seeds only (`--pso-off swarm,local-search`)", "pso",
     ECO_PL_PSO_OFF_SWARM | ECO_PL_PSO_OFF_LOCAL_SEARCH},
    {"no mutation", "pso", ECO_PL_PSO_OFF_MUTATION},
    {"no adaptive parameters", "pso", ECO_PL_PSO_OFF_ADAPTIVE},
    {"no local search", "pso", ECO_PL_PSO_OFF_LOCAL_SEARCH},
    {"no greedy seeding", "pso", ECO_PL_PSO_OFF_SEEDING},
    {"pso-basic", "pso-basic", 0},
    {"fgd", "fgd", 0},
};
#define N_VARIANTS (sizeof VARIANTS / sizeof *VARIANTS)

static int bench_pso(int n_inst, double ilp_limit_s)
{
    double hosts[N_VARIANTS] = {0}, over_best[N_VARIANTS] = {0}, over_bound[N_VARIANTS] = {0};
    double over_opt[N_VARIANTS] = {0}, cpu[N_VARIANTS] = {0};
    int fewer[N_VARIANTS] = {0}, n_opt = 0;
    double ilp_cpu = 0;
    for (int k = 1; k <= n_inst; k++) {
        struct eco_pl_instance in;
        if (eco_pl_random_instance((uint64_t)k, 20, 60, 4, &in))
            return 1;
        struct eco_pl_slot *slots = calloc(in.n_items, sizeof *slots);
        struct eco_pl_metrics mi, m;
        struct eco_pl_outcome oi, o;
        double t, c0 = eco_clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (!slots || run(&in, "ilp", ECO_PL_OBJ_HOSTS, ilp_limit_s, slots, &mi, &oi, &t))
            return 1;
        ilp_cpu += eco_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        n_opt += oi.optimal;
        for (size_t v = 0; v < N_VARIANTS; v++) {
            const struct eco_pl_algo *a = eco_pl_find_any(VARIANTS[v].algo);
            struct eco_pl_params p = {
                .seed = 1, .objective = ECO_PL_OBJ_HOSTS, .pso_off = VARIANTS[v].off};
            struct eco_error err = {{0}};
            struct eco_pl_workload w;
            o = (struct eco_pl_outcome){.bound = NAN};
            c0 = eco_clock_s(CLOCK_PROCESS_CPUTIME_ID);
            if (a->solve(&in, &p, slots, &o, &err) || eco_pl_verify(&in, slots, &err)) {
                fprintf(stderr, "%s: %s\n", VARIANTS[v].label, err.msg);
                return 1;
            }
            cpu[v] += eco_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (eco_pl_workload_from_items(&in, &w))
                return 1;
            eco_pl_metrics_compute(&in, &w, slots, 3600, &m);
            eco_pl_workload_fini(&w);
            hosts[v] += m.active_hosts;
            over_bound[v] += oi.bound > 0 ? (m.active_hosts - oi.bound) / oi.bound : 0;
            if (m.placed != mi.placed) {
                fewer[v]++;
                continue;
            }
            over_best[v] += (m.active_hosts - (double)mi.active_hosts) / mi.active_hosts;
            if (oi.optimal)
                over_opt[v] += (m.active_hosts - (double)mi.active_hosts) / mi.active_hosts;
        }
        free(slots);
        eco_pl_instance_fini(&in);
    }
    printf("%d random instances (seeds 1-%d, 20-60 items, 4-GPU nodes of 2 models; objective "
           "fewest active hosts; pso: 20 particles, 200 iterations, seed 1, no time limit); ilp "
           "(GLPK, %g s limit) proven optimal on %d, %.2f s CPU per solve.\n\n",
           n_inst, n_inst, ilp_limit_s, n_opt, ilp_cpu / n_inst);
    printf("| variant | mean active hosts | excess over ilp's solution | excess over ilp's "
           "%d optima | excess over GLPK's bound | instances with other items placed | CPU "
           "per solve |\n|---|---:|---:|---:|---:|---:|---:|\n",
           n_opt);
    for (size_t v = 0; v < N_VARIANTS; v++) {
        int cmp = n_inst - fewer[v];
        printf("| %s | %.2f | %.2f %% | %.2f %% | %.2f %% | %d | %.4f s |\n", VARIANTS[v].label,
               hosts[v] / n_inst, cmp ? 100 * over_best[v] / cmp : 0.0,
               n_opt ? 100 * over_opt[v] / n_opt : 0.0, 100 * over_bound[v] / n_inst, fewer[v],
               cpu[v] / n_inst);
    }
    double worth = 100 * (over_bound[1] - over_bound[0]) / n_inst;
    printf("\nWhat the swarm adds over its own seeds plus the same local search: %.2f points of "
           "excess over the bound (%.2f against %.2f hosts on average), at %.1fx their CPU "
           "time. Goal (the swarm worth >= 1 point offline): %s.\n",
           worth, hosts[0] / n_inst, hosts[1] / n_inst, cpu[1] > 0 ? cpu[0] / cpu[1] : 0.0,
           worth >= 1 ? "met" : "not met");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "random"))
        return bench_random(argc >= 3 ? atoi(argv[2]) : 50, argc >= 4 ? atof(argv[3]) : 10);
    if (argc >= 2 && !strcmp(argv[1], "pso"))
        return bench_pso(argc >= 3 ? atoi(argv[2]) : 50, argc >= 4 ? atof(argv[3]) : 10);
    if (argc >= 3 && !strcmp(argv[1], "openb"))
        return bench_openb(argv[2], argc >= 4 ? atof(argv[3]) : 10,
                           argc >= 5 ? atof(argv[4]) : 120);
    fprintf(stderr,
            "usage: eco_bench_place random [N] | openb DATA_DIR [TIME_LIMIT_S [INFLATE_PCT]] | "
            "pso [N [ILP_LIMIT_S]]\n");
    return 2;
}
