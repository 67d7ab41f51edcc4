/* SPDX-License-Identifier: MIT */
/* The trace-driven discrete-event simulator: replays a job set on a cluster under a queue
 * policy and a placement, deterministically. */
#ifndef ECOSCHED_SIM_H
#define ECOSCHED_SIM_H

#include <stdint.h>
#include <stdio.h>
#include "ecosched/cluster.h"
#include "ecosched/error.h"
#include "ecosched/job.h"
#include "ecosched/policy.h"
#include "ecosched/power.h"
#include "ecosched/carbon.h"
#include "ecosched/signal.h"

/* One line of the power timeline: the state from t_s until the next line. */
struct eco_timeline_row {
    double t_s;
    double power_w;  /* whole cluster: GPUs, hosts, nodes off and in transition */
    double budget_w; /* power budget in force, 0 when none */
    uint64_t busy_gpus;
    uint32_t nodes_on; /* nodes powered: on, booting or shutting down */
    uint64_t queued;   /* jobs waiting */
    /* With grid signals (eco_sim_config.carbon, .price): the values in force and the
     * cluster's carbon and cost so far; 0 without. */
    double carbon_g_per_kwh, price_per_mwh;
    double carbon_kg, cost;
};

/* How far a run has come (eco_sim_config.progress). */
struct eco_sim_progress {
    double t_s;      /* simulated time reached */
    double start_s;  /* the first submit: where the run's simulated time starts */
    size_t done;     /* jobs completed */
    size_t total;    /* jobs to run (the trace's jobs minus those rejected) */
    uint64_t events; /* events processed */
    int finished;    /* 1 on the last call */
};

/* A power budget step: from t_s on, the cluster may draw `watts`. */
struct eco_budget_step {
    double t_s;
    double watts;
};

/* What power capping actuates (docs/models/clock.md): the GPUs' power limits, or their locked
 * SM clocks (discrete levels). */
#define ECO_POWER_KNOB_LIMIT 0
#define ECO_POWER_KNOB_CLOCK 1

struct eco_sim_config {
    const struct eco_policy_ops *policy;
    const char *policy_params; /* policy-specific, may be NULL */
    const struct eco_placement_ops *placement;
    const struct eco_powerdown_ops *power_down; /* NULL: none */
    const char *power_down_params;
    const char *workload_mix; /* NULL: jobs without a workload use "generic"; else a mix spec */
    uint64_t seed;
    /* Power capping (docs/policies/powercap.md). power_policy NULL or "none": GPUs run at
     * their group's limit. Budget steps sorted by time; before the first step its value
     * applies. */
    const char *power_policy;
    const struct eco_budget_step *budget;
    size_t n_budget;
    double control_period_s; /* default 1 s when 0 */
    int control_skip_off;    /* 1: run every control period; 0 (default): skip settled ones */
    double noise_power;      /* relative standard deviation of power samples, default 0.02 */
    double noise_speed;      /* ... of progress (iteration time) samples, default 0.01 */
    int noise_set;           /* the two above were given (0 is a valid value) */
    int power_knob;          /* ECO_POWER_KNOB_LIMIT (default) or ECO_POWER_KNOB_CLOCK */
    /* Deadlines for jobs without one: submit + U(lo, hi) x duration; hi <= 0: none. */
    double deadline_lo, deadline_hi;
    /* Called at every instant the cluster's state may have changed, in time order; may be
     * NULL. The row is borrowed for the call. */
    void (*timeline)(void *ctx, const struct eco_timeline_row *row);
    void *timeline_ctx;
    /* Called after every instant the engine processed and once at the end, for a progress
     * display; may be NULL. The engine prints nothing: the callback decides how often to show
     * the figures (it may read a clock). The struct is borrowed for the call. */
    void (*progress)(void *ctx, const struct eco_sim_progress *p);
    void *progress_ctx;
    /* Grid signals (docs/formats/grid-signal.md), borrowed, each may be NULL: carbon and cost
     * are integrated over the same constant-power pieces as energy. Simulated time t is the
     * calendar time epoch0_s + t (seconds since the Unix epoch); the run must lie inside each
     * signal's cover. */
    const struct eco_signal *carbon, *price;
    double epoch0_s;
    /* Carbon policy (docs/policies/carbon.md): NULL for none (carbon-agnostic). It follows the
     * carbon signal, else the price signal, through a forecast (kind and relative error).
     * Jobs with a deadline may start as late as deadline - duration; of the others, a
     * `deferrable` share (seeded; 0 counts as 1) may start up to max_delay_s after submit. */
    const struct eco_carbon_ops *carbon_policy;
    const char *carbon_params;
    enum eco_forecast_kind forecast;
    double forecast_sigma;
    double max_delay_s;
    double deferrable;
    /* An interrupting carbon policy's cost of one suspension (checkpoint and restore), s:
     * the job does that much more work at its draw on resuming (docs/policies/carbon.md). */
    double suspend_s;
    /* > 0: after the run, the bound on the jobs' own carbon within their windows and the
     * cluster's GPUs (eco_carbon_lp_bound) in calendar slots of this length, s; needs a carbon
     * signal. The windows follow the slack rules above (max_delay_s, deferrable, deadlines),
     * with or without a carbon policy. */
    double carbon_bound_slot_s;
};

/* Default cost of one suspension by an interrupting carbon policy, s: an 8-GPU V100 job's
 * CRIU + cuda-checkpoint image (16 GiB of device memory and 4 GiB of host memory per GPU,
 * docs/models/energy.md "Migration": 160 GiB) written to and read back from local NVMe at
 * about 3 GB/s (2 x 57 s), plus the 2 s checkpoint and 3 s restore fixed parts and the device
 * copies over PCIe (2 x 1.4 s): about 120 s. An assumption, not a measurement. */
#define ECO_SIM_SUSPEND_S 120.0

/* The bound on the jobs' own carbon (docs/policies/carbon.md, "Bound: least carbon within
 * the windows"): each job's work may be split across calendar slots of its window [submit_s,
 * end_s) (end_s = its latest start + run_s), at most its full speed in each, the GPUs of every
 * slot at most the cluster's; its energy (kWh) weighs the true signal where it is done. Work
 * the slots cannot hold is done after the window at the least intensity the signal reaches
 * then (`late`, in jobs). Times calendar s. */
struct eco_carbon_bound_job {
    double submit_s, end_s, run_s, energy_kwh;
    uint32_t gpus;
};
struct eco_carbon_bound {
    double kg;   /* no schedule's jobs emit less */
    double late; /* jobs' worth of work the bound places after their window */
    size_t jobs, slots, columns;
    double slot_s, solve_s;
};
/* Cluster energy by where it goes, J; the parts add up to total. */
struct eco_energy {
    double total;
    double gpu_busy;    /* GPUs running jobs (= sum of the jobs' energy) */
    double gpu_idle;    /* idle GPUs of nodes that are on */
    double node_base;   /* hosts of nodes that are on (CPU, memory, fans, NICs) */
    double off;         /* nodes that are off (BMC) */
    double transitions; /* nodes booting or shutting down */
};

struct eco_sim_summary {
    const char *policy;
    const char *placement;
    uint64_t seed;
    size_t jobs; /* jobs loaded from the trace */
    size_t completed;
    size_t rejected;   /* can never fit the cluster */
    size_t unfinished; /* neither completed nor rejected (should be 0) */
    size_t skipped_rows;
    size_t preemptions;
    double avg_jct_s, p50_jct_s, p95_jct_s, p99_jct_s;
    double avg_wait_s, p95_wait_s;
    double makespan_s; /* last end minus first submit */
    double gpu_util;   /* busy GPU-seconds / (GPUs x makespan) */
    double busy_gpu_s;
    uint64_t events;
    uint64_t cluster_gpus;
    uint32_t cluster_nodes;
    const char *power_down; /* as given, e.g. "idle:600" (points into power_down_buf) */
    char power_down_buf[64];
    double window_start_s;      /* first submit */
    double window_end_s;        /* last completion */
    struct eco_energy energy_j; /* over [window_start_s, window_end_s] */
    double avg_power_w;
    double peak_power_w;
    uint64_t node_boots;
    uint64_t node_shutdowns;
    uint64_t boot_delayed_starts; /* starts of jobs that waited, on a node whose boot ended
                                   * at that instant: the start waited for the boot */
    uint64_t power_cycles;        /* shutdowns: each starts a power cycle */
    double cycle_cost_j;          /* their wear as an energy equivalent (cycle_j each), J; not in
                                   * energy_j, which is metered energy */
    /* Deadlines and power capping. */
    const char *power_policy;
    size_t deadline_jobs;       /* completed jobs with a deadline */
    double deadline_miss_ratio; /* of those, the share that ended after it */
    /* Capping metrics over the control periods, each period's power its mean over the period
     * (eco_cap_metrics, docs/policies/powercap.md "Metrics"). */
    double power_cap_mae_pct;           /* mean |power - budget| / budget over binding periods */
    double power_cap_mae_all_pct;       /* the same over every period */
    double power_cap_max_overshoot_pct; /* largest excess after settling */
    double power_cap_raw_overshoot_pct; /* largest excess, settling periods included */
    double power_cap_over_s;            /* summed length of the periods above the budget */
    double power_cap_over_kwh;          /* energy above the budget over the periods */
    double power_cap_over_share;        /* share of the periods above the budget */
    uint64_t power_cap_periods;         /* control periods */
    uint64_t settling_periods;          /* of those, first periods after a budget step or a start */
    double overshoot_s;                 /* time with instantaneous power above the budget (exact) */
    uint64_t capped_periods; /* control periods whose full-power demand exceeded the budget */
    size_t admission_waits;  /* job starts deferred because of the budget */
    /* Grid signals: which were given, and the cluster's carbon (kg CO2eq) and cost (in
     * cost_currency) over the energy window; 0 without. */
    int have_carbon, have_price;
    double carbon_kg, cost;
    const char *carbon_policy; /* "none" without */
    size_t deferred;           /* jobs the carbon policy started later than they arrived */
    double avg_deferral_s;     /* mean delay of those, s */
    /* with carbon_bound_slot_s: the jobs' own carbon in this run and the bound on it */
    int have_carbon_bound;
    double jobs_carbon_kg;
    struct eco_carbon_bound carbon_bound;
    int interrupting;    /* the carbon policy may suspend jobs */
    size_t suspensions;  /* jobs it suspended (each resumed later) */
    double checkpoint_s; /* their checkpoint and restore time, s */
    char cost_currency[8];
    double epoch0_s; /* calendar time of simulated time 0 */
    double sim_wall_s;
};

struct eco_sim_result {
    struct eco_sim_summary summary;
    struct eco_alloc *alloc_pool; /* job->alloc_off/alloc_n index into this */
    size_t n_alloc;
    double *node_energy_j; /* per node, over the same window as the summary */
    uint32_t *node_boots;  /* per node */
    uint32_t n_nodes;
    /* With a carbon or price signal (else NULL): per node and per job (by index in the job
     * set), over the same pieces as node_energy_j and the jobs' energy_j. */
    double *node_carbon_kg, *node_cost;
    double *job_carbon_kg, *job_cost;
};

/* Runs the simulation. The jobs' run state in `set` is reset first and filled in (start,
 * end, wait, preemptions, allocation). `res` receives the summary and the allocation pool
 * (free with eco_sim_result_fini). 0, -EINVAL (bad config; err says why) or -ENOMEM. */
int eco_sim_run(const struct eco_cluster *c, struct eco_jobset *set,
                const struct eco_sim_config *cfg, struct eco_sim_result *res,
                struct eco_error *err);
void eco_sim_result_fini(struct eco_sim_result *res);

/* A clairvoyant lower bound on deadline misses under the config's power budget
 * (docs/policies/powercap.md, "Bound on deadline misses"): the jobs, workloads and deadlines
 * eco_sim_run would replay, and the linear relaxation of meeting as many deadlines as possible
 * with every job's arrival, work, deadline and true curves known in advance, in slots of slot_s
 * (GLPK). */
struct eco_miss_bound {
    size_t deadline_jobs; /* jobs with a deadline that run (not rejected) */
    double met;           /* the relaxation's optimum: deadline jobs met, fractionally */
    size_t misses;        /* no schedule misses fewer deadlines */
    size_t slots, columns;
    double slot_s, solve_s;
};
/* 0, -EINVAL (bad config, no budget, no optimum; err says why) or -ENOMEM. */
int eco_sim_miss_bound(const struct eco_cluster *c, struct eco_jobset *set,
                       const struct eco_sim_config *cfg, double slot_s, struct eco_miss_bound *out,
                       struct eco_error *err);

/* 0, -EINVAL (no carbon signal, a bad window or slot, no optimum; err says why). */
int eco_carbon_lp_bound(const struct eco_carbon_bound_job *jobs, size_t n, double cluster_gpus,
                        const struct eco_signal *carbon, double slot_s,
                        struct eco_carbon_bound *out, struct eco_error *err);

/* Percentile with linear interpolation between closest ranks (numpy's default), p in
 * [0, 100], over `v` sorted ascending. 0 for n == 0. */
double eco_percentile_sorted(const double *v, size_t n, double p);
/* The same percentile of v[0..n) in any order, in linear time on average; reorders v. */
double eco_percentile_select(double *v, size_t n, double p);

/* Writers. Numbers are printed with %.15g so that identical runs give identical bytes. */
int eco_sim_write_jobs_csv(FILE *f, const struct eco_jobset *set, const struct eco_sim_result *r);
int eco_sim_write_rejected_csv(FILE *f, const struct eco_jobset *set);
/* Why a job was rejected (enum eco_reject_reason), in words; a static string. */
const char *eco_sim_reject_reason(int reason);
int eco_sim_write_nodes_csv(FILE *f, const struct eco_cluster *c, const struct eco_sim_result *r);

/* Writes timeline rows to a CSV file: every row (sample_s == 0) or the state at every
 * multiple of sample_s. Use as eco_sim_config.timeline with a struct eco_timeline_writer as
 * its context; eco_timeline_writer_finish writes the header-only file when nothing came and
 * the last samples. */
struct eco_timeline_writer {
    FILE *f;
    double sample_s;
    int started;
    double next_s;
    struct eco_timeline_row last;
    int carbon, price; /* the carbon and price columns */
};
void eco_timeline_writer_init(struct eco_timeline_writer *w, FILE *f, double sample_s);
/* The same, with the carbon columns (carbon_g_per_kwh, carbon_kg) and the price columns
 * (price_per_mwh, cost) when asked. */
void eco_timeline_writer_init_signals(struct eco_timeline_writer *w, FILE *f, double sample_s,
                                      int carbon, int price);
void eco_timeline_write(void *ctx, const struct eco_timeline_row *row);
int eco_timeline_writer_finish(struct eco_timeline_writer *w, double end_s);
/* JSON object of the summary; `with_wall` adds sim_wall_s (not deterministic). Caller frees. */
char *eco_sim_summary_json(const struct eco_sim_summary *s, int with_wall);

/* Builds a cluster from `arg`: a JSON file (docs/formats/cluster.md) when `arg` names an
 * existing file or ends in .json, else an inline spec COUNTxGPUS[:TYPE],... Caller frees the
 * cluster. 0, -EINVAL (err names the file and field), -ENOENT or -ENOMEM. */
int eco_cluster_load(const char *arg, struct eco_cluster **out, struct eco_error *err);

/* What a Slurm node list gave (docs/formats/cluster.md, "Slurm node lists"). */
struct eco_cluster_info {
    size_t nodes, skipped; /* nodes with GPUs; nodes without, skipped */
    char partitions[256];  /* the nodes' partitions, comma-separated, each once */
};
struct eco_cluster_opts {
    const char *gpu_type_map;                 /* gres types to catalog types (--gpu-type-map) */
    void (*warn)(void *ctx, const char *msg); /* the skipped nodes, in one warning; may be NULL */
    void *warn_ctx;
    struct eco_cluster_info *info; /* filled for a Slurm node list; may be NULL */
};
/* eco_cluster_load that also reads Slurm's node lists: a file of `scontrol show node
 * --oneliner` output or of `sinfo --json`. */
int eco_cluster_load_with(const char *arg, const struct eco_cluster_opts *o,
                          struct eco_cluster **out, struct eco_error *err);

/* Reads a budget file: a header line "time_s,watts", then rows sorted by time, watts > 0.
 * Caller frees *steps. 0, -EINVAL (err names file, line and column), -ENOENT or -ENOMEM. */
int eco_budget_load(const char *path, struct eco_budget_step **steps, size_t *n,
                    struct eco_error *err);

/* A budget that follows a grid signal's forecast (--power-budget-follow
 * HIGH_W:LOW_W:PCT[:carbon|price]; docs/policies/powercap.md, "Demand response"). */
struct eco_budget_follow {
    double high_w, low_w, pct;
    int which; /* 0: the price signal if given, else carbon; 1 carbon; 2 price */
};
/* Parses its value; 0 or -EINVAL with err naming the part. */
int eco_budget_follow_parse(const char *spec, struct eco_budget_follow *out, struct eco_error *err);
/* Budget steps (simulated time, the first at 0) from forecast f (of the signal followed) over
 * the signal's cover from calendar epoch0_s: each day's forecast issued at its midnight UTC;
 * an hour above the day's PCT-th percentile gets low_w, the others high_w; equal neighbours
 * merged. Caller frees *steps. 0 or -ENOMEM. */
int eco_budget_follow(const struct eco_budget_follow *bf, struct eco_forecast *f, double epoch0_s,
                      struct eco_budget_step **steps, size_t *n);

/* Average utilisation the `auto` cluster size aims at: busy enough that policies differ, with
 * headroom for bursts (the ITP clusters' peak demand is 2-10x their average). */
#define ECO_AUTO_TARGET_UTIL 0.7

/* True when `arg` asks for a cluster sized from the trace: auto[xGPUS][:TYPE] (average
 * demand) or peak[xGPUS][:TYPE] (peak demand). */
int eco_cluster_is_auto(const char *arg);
/* Sizes a cluster for `set`: nodes of GPUS GPUs (default 8) of TYPE (default V100), as few
 * as hold max(largest job, D), with every job taken to start on arrival and D, for auto, the
 * average demand (total GPU-seconds over last end - first submit) / ECO_AUTO_TARGET_UTIL, for
 * peak, the peak concurrent demand.
 * 0 or -EINVAL (err says why) / -ENOMEM. */
int eco_cluster_auto(const char *arg, const struct eco_jobset *set, struct eco_cluster **out,
                     struct eco_error *err);

#endif
