/* SPDX-License-Identifier: MIT */
/* `ecosched place --sweep`: the FGD paper's evaluation protocol (pods arrive in shuffled,
 * inflated order; the curve of unallocated GPU share and fragmentation rate against arrived
 * workload) for several algorithms and seeds, as DIR/curve.csv and DIR/report.html. */
#ifndef ECOSCHED_CLI_PLACE_SWEEP_H
#define ECOSCHED_CLI_PLACE_SWEEP_H

#include <stdint.h>
#include "ecosched/place.h"

/* --sweep-step's smallest value, in % arrived: ten times finer than the FGD paper's curves
 * (1 %), and a bound on the curve's points, 10001 at the largest --inflate (1000 %): 3 curves
 * of 3 arrays of doubles per algorithm, 23 MB with 32 algorithms (a step of 1e-5 took 923 MB;
 * 1e-300 overflowed the point count). */
#define ECO_CLI_SWEEP_STEP_MIN 0.1

struct eco_cli__sweep_cfg {
    const char *algos;   /* comma-separated names, or "all-online" */
    const char *seeds;   /* "A-B", "A,B,C" or a mix; NULL: `seed` alone */
    uint64_t seed;       /* --seed, when seeds is NULL */
    double step_pct;     /* grid of arrived workload, % of the cluster's GPUs, >= the MIN */
    double inflate_pct;  /* the curve's end and --inflate's target */
    double time_limit_s; /* per solve (pso, ilp); 0: none */
    int objective;
    uint32_t swarm, iterations;
    uint32_t window;  /* pso, pso-basic: online windows (--window); 0: offline */
    unsigned pso_off; /* pso: ECO_PL_PSO_OFF_* bits */
    int lp_bound;     /* --lp-bound: GLPK's bound on allocatable GPUs at the key points */
    const char *nodes_path, *items_path; /* for the report's heading */
    const char *out;                     /* DIR, or NULL: the table on stdout only */
    int progress; /* a line on stderr at each placement (eco_cli__progress_wanted's answer) */
};

/* Runs the sweep on `base` (read and checked, not shuffled or inflated; borrowed, left as it
 * is): prints the table of key points on stdout and writes cfg->out's files. Returns 0 or an
 * exit status (ECO_EXIT_USAGE, ECO_EXIT_FAIL) with the message printed. */
int eco_cli__place_sweep(const struct eco_cli__sweep_cfg *cfg, const struct eco_pl_instance *base);

#endif
