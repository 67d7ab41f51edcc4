/* SPDX-License-Identifier: MIT */
/* The `ecosched` command: one file per subcommand. */
#ifndef ECOSCHED_CLI_H
#define ECOSCHED_CLI_H

/* Default API socket of `ecosched powerd` (src/slurm/powerd.c) and its client `ecosched power`. */
#define ECO_POWERD_SOCKET "/run/ecosched/powerd.sock"

#include <stddef.h>
#include <stdio.h>

/* Exit statuses: 0 success, 1 runtime failure (I/O, memory), 2 bad usage or bad input. */
#define ECO_EXIT_FAIL 1
#define ECO_EXIT_USAGE 2

/* mkdir -p DIR (mode 0777 before the umask): 0 or -errno (cmd_sim.c). */
int eco_cli__mkdir_p(const char *dir);

int eco_cli__cmd_sim(int argc, char **argv);
/* `ecosched advise` (cmd_advise.c, docs/advise.md). */
int eco_cli__cmd_advise(int argc, char **argv);
/* Shared with sim (cmd_sim.c). */
struct eco_cluster;
struct eco_jobset;
struct eco_sim_result;
/* Closes an output file; a write error before (rc != 0, errno from the failed write) or at the
 * close is printed with the path. 0 or ECO_EXIT_FAIL. */
int eco_cli__close_output(FILE *f, const char *path, int rc);
/* DIR/summary.json, jobs.csv, rejected.csv and nodes.csv of one run: 0 or ECO_EXIT_FAIL. */
int eco_cli__sim_write_outputs(const char *dir, const struct eco_jobset *set,
                               const struct eco_cluster *c, const struct eco_sim_result *r);
/* The grid signal files of a run (--carbon, --price and their --*-column; each may be NULL). */
struct eco_cli_grid {
    const char *carbon, *carbon_column, *price, *price_column;
};
struct eco_signal;
/* Reads the files g names into carbon and price, setting *have_carbon and *have_price: 0, or an
 * exit status with "PREFIX: --carbon: ..." printed (the caller frees the signals either way). */
int eco_cli__grid_read(const char *prefix, const struct eco_cli_grid *g, struct eco_signal *carbon,
                       struct eco_signal *price, int *have_carbon, int *have_price);
/* A note for each signal read with empty values (each holds the value before). */
void eco_cli__grid_notes(const struct eco_cli_grid *g, const struct eco_signal *carbon,
                         const struct eco_signal *price, int have_carbon, int have_price);
/* Most control periods a power-capped run may span with skipping on (the default), where
 * settled periods and held jobs cost little: 1e8 periods are three years at the default 1 s (a
 * site's history; bench/README.md: 100,000 jobs over 120 days, 1.04e7 periods, in seconds). */
#define ECO_CLI_MAX_CONTROL_STEPS_SKIP 1e8
/* The trace's span, a lower bound on the simulated window: first submit to the last end if
 * every job started at once, s. */
double eco_cli__trace_span(const struct eco_jobset *set);
/* The cluster as the inline spec names it (12x8:V100,4x8:H100-SXM) into buf. */
void eco_cli__cluster_text(const struct eco_cluster *c, char *buf, size_t size);
/* `sim --consolidation`: container consolidation (cmd_consol.c). */
int eco_cli__cmd_sim_consolidation(int argc, char **argv);
/* `ecosched sim --server ...` (cmd_sim_server.c); argv[0] is "--server". */
int eco_cli__cmd_sim_server(int argc, char **argv);
int eco_cli__cmd_catalog(int argc, char **argv);
int eco_cli__cmd_place(int argc, char **argv);
/* Client of ecoschedd (cmd_client.c). */
int eco_cli__cmd_submit(int argc, char **argv);
/* cmd_client.c: `submit --deadline TIME` as a Unix time after now: +N[smhd] (or N with a unit)
 * from now, @UNIX_TIME, or YYYY-MM-DD[THH:MM[:SS]] in local time. 0, or -1 (printed). */
int eco_cli__parse_deadline(const char *v, double now, double *out);
int eco_cli__cmd_ls(int argc, char **argv);
int eco_cli__cmd_show(int argc, char **argv);
int eco_cli__cmd_cancel(int argc, char **argv);
int eco_cli__cmd_wait(int argc, char **argv);
int eco_cli__cmd_logs(int argc, char **argv);
int eco_cli__cmd_gpus(int argc, char **argv);
/* Slurm integration: the power controller (src/slurm/powerd.c) and its client (cmd_power.c). */
int eco_cli__cmd_powerd(int argc, char **argv);
int eco_cli__cmd_power(int argc, char **argv);
/* `ecosched report` (cmd_report.c), and its writer for `sim --report`. */
struct eco_report_run;
int eco_cli__cmd_report(int argc, char **argv);
/* Writes the HTML report of `runs` to `path`; returns 0 or an exit status (message printed). */
int eco_cli__report_to_file(const struct eco_report_run *runs, size_t n, const char *title,
                            const char *path);

/* The progress line of long runs on stderr (progress.c): sim, place --algo pso|ilp. */
struct eco_cli_progress {
    int on, tty, shown;
    double t0_s, last_s; /* monotonic clock: start, last line drawn */
};
/* --progress (flag 1), --no-progress (0), neither (-1): on when stderr is a terminal. */
int eco_cli__progress_wanted(int flag);
void eco_cli__progress_start(struct eco_cli_progress *p, int on);
/* Wall seconds since start. */
double eco_cli__progress_elapsed(const struct eco_cli_progress *p);
/* 1 when it is on and a line is due (at most 4 a second on a terminal, one per 2 s else). */
int eco_cli__progress_due(struct eco_cli_progress *p);
/* Draws the line (printf format), over the last one on a terminal. */
void eco_cli__progress_show(struct eco_cli_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the line on a terminal, so that what follows starts on a clean line. */
void eco_cli__progress_end(struct eco_cli_progress *p);

/* A ", "-separated list of names (names.c); an empty buf starts it. Cut at its size: the
 * registries' lists are a few dozen short names. */
struct eco_cli_list {
    char buf[512];
};
void eco_cli__list_add(struct eco_cli_list *l, const char *name);
/* The names of one registry, in registry order, into l (returns l->buf): queue policies,
 * simulator placements (with ilp), power-down policies (as written: idle:SECONDS), capper
 * families, trace formats, `place` algorithms (with ilp) and objectives, consolidation
 * policies, carbon policies (with none). */
enum eco_cli_registry {
    ECO_CLI_POLICIES,
    ECO_CLI_PLACEMENTS,
    ECO_CLI_POWER_DOWN,
    ECO_CLI_CAPPERS,
    ECO_CLI_FORMATS,
    ECO_CLI_PLACE_ALGOS,
    ECO_CLI_OBJECTIVES,
    ECO_CLI_CONSOLIDATION,
    ECO_CLI_CARBON,
};
const char *eco_cli__names(enum eco_cli_registry r, struct eco_cli_list *l);
/* One "  NAME          text" entry of a --help list, the text wrapped at 78 columns. */
void eco_cli__help_entry(FILE *f, const char *name, const char *text);

/* Prints "ecosched: " + message to stderr. */
void eco_cli__err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
