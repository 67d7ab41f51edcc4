/* SPDX-License-Identifier: MIT */
/* grid.c: ecoschedd's grid signals (docs/daemon/README.md, "Grid signals"): a carbon and a price
 * series read from a file an operator's job refreshes (re-read when its mtime changes; a bad
 * refresh keeps the old series) or fetched from a loopback HTTP source, by a reader thread off
 * the event loop that hands each new series to the loop; each job's carbon and
 * cost integrated over the same accounting pieces as its energy; and the release time of a
 * deferrable job from a carbon policy of the core family (include/ecosched/carbon.h). */
#ifndef ECOD_GRID_H
#define ECOD_GRID_H

#include <stdbool.h>
#include <sys/types.h>
#include <time.h>
#include "ecosched/carbon.h"
#include "ecosched/error.h"
#include "ecosched/signal.h"

/* One signal's source and the series last read from it. kind, path, url and cache are set up
 * once; loaded and s belong to the loop; mtime, size and next_fetch_mono to the reader thread
 * once it runs. */
struct ecod_grid_src {
    enum eco_signal_kind kind;
    char path[4096];  /* a file, or "" */
    char url[512];    /* a loopback http:// URL, or "" */
    char cache[4096]; /* url: where its last answer is written to be read */
    bool loaded;
    struct eco_signal s;
    struct timespec mtime; /* the file's when last read (or tried) */
    off_t size;
    double next_fetch_mono; /* url: the next fetch */
};

/* The reader thread and the series it read for the loop to take (grid.c). */
struct ecod_grid_reader;

/* Longest answer a *_url source may give: 64 MiB, as much as a signal file may hold
 * (ECO_SIGNAL_MAX_BYTES); a longer one is refused and the old series kept. */
#define ECOD_GRID_MAX_BODY (64u << 20)

struct ecod_grid {
    struct ecod_grid_src carbon, price;
    unsigned generation;                 /* counts the series read (a refresh that took moves it) */
    double fetch_s;                      /* url: how often it is fetched */
    const struct eco_carbon_ops *policy; /* NULL: none (every job released at once) */
    struct eco_carbon *pol;
    double run_s; /* the run time a policy assumes for a job (the daemon knows none) */
    struct ecod_grid_reader *reader; /* NULL: none (no source configured) */
};

/* Checks a *_url value: "http://HOST[:PORT]/PATH" with a loopback host (127.0.0.0/8,
 * localhost, [::1]); NULL when fine, else what is wrong (static text). */
const char *ecod__grid_check_url(const char *url);
/* Sets up g from the config's values (each may be "" or NULL), reads every source once (on the
 * caller's thread: a start-up with a bad source fails) and starts the reader thread that
 * re-reads them from then on.
 * policy: "none", "shift", "lwa", "threshold" with optional ":PARAMS". 0, or -EINVAL/-ENOENT/
 * -EIO with err naming the file and line or the URL. state_dir holds the URL answers' cache.
 * ecod__grid_fini frees it (also after a failure). */
int ecod__grid_setup(struct ecod_grid *g, const char *carbon, const char *carbon_url,
                     const char *price, const char *price_url, const char *policy, double run_s,
                     double fetch_s, const char *state_dir, double mono, struct eco_error *err);
void ecod__grid_fini(struct ecod_grid *g);
/* Takes the series the reader thread read since the last call (it re-reads a file whose mtime or
 * size changed and fetches a URL when due, off the loop); a bad refresh keeps the old series and
 * is logged with the file and line. Never blocks on a source. Called at each sampling tick, and
 * when ecod__grid_fd is readable; mono is unused (the reader keeps its own times). */
void ecod__grid_refresh(struct ecod_grid *g, double mono);
/* An eventfd that turns readable when the reader thread has a series (or an error) for the
 * loop, so that it is taken at once rather than at the next tick; -1 when there is no reader. */
int ecod__grid_fd(const struct ecod_grid *g);

/* Carbon and cost of delta_j joules used evenly over the wall-clock interval [a, b]: added to
 * *kg / *cost for the covered part only; *kg_part / *cost_part set when part of [a, b] lies
 * outside the series' cover (nothing is invented there). *has_* set when a series is loaded. */
struct ecod_grid_acc {
    bool has_carbon, carbon_partial, has_cost, cost_partial;
    double carbon_kg, cost;
};
void ecod__grid_account(const struct ecod_grid *g, double delta_j, double a, double b,
                        struct ecod_grid_acc *acc);
/* The currency of the price series ("" when none). */
const char *ecod__grid_currency(const struct ecod_grid *g);
/* Which forecast a policy sees: "operator" (the file holds values after now: the operator's
 * forecast), "persist" (only the past: seasonal persistence) or "none" (no carbon signal). */
const char *ecod__grid_forecast_name(const struct ecod_grid *g, double now);

/* The release time (wall clock) of a job submitted at submit_s with slack until latest_s
 * (latest_s >= submit_s), decided at now by the policy from a forecast of the carbon signal (or
 * the price signal when there is no carbon one); submit_s when no policy or no signal. */
double ecod__grid_release(struct ecod_grid *g, double now, double submit_s, double latest_s,
                          unsigned gpus, unsigned cluster_gpus);

#endif
