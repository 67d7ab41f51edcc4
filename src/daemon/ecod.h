/* SPDX-License-Identifier: MIT */
/* ecoschedd's state, struct ecod, and the runs it watches: what its modules (queue, sched,
 * api, metrics, nodecap, clockctl) share. Log and clocks come from the leaf src/util/log.h and
 * src/util/clock.h; each module's functions are in its own header. */
#ifndef ECOD_STATE_H
#define ECOD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/gpusel.h"
#include "platform/platform.h"
#include "daemon/attrib.h"
#include "daemon/grid.h"
#include "daemon/lease.h"
#include "daemon/store.h"
#include "util/clock.h"
#include "util/log.h"

struct ecod_queue;
struct ecod_lister;
struct ecod_nodecap;

/* A job the daemon watches: started by it (a child) or adopted after a restart. */
struct ecod_run {
    int64_t id;
    pid_t pid;
    uint64_t start_ticks; /* /proc/PID/stat start time: tells a recycled PID apart */
    bool adopted;         /* not our child: polled through /proc, exit status unknown */
    bool cancelled;       /* the store already says cancelled: only reap and account */
    double kill_at;       /* monotonic time to send SIGKILL after a cancel's SIGTERM, 0: none */
    uint32_t n_gpus;
    uint32_t gpus[ECO_GPUSEL_MAX_GPUS];
    bool capped;          /* a power limit was set on its GPUs at start */
    double cap_w;         /* its cap in watts ("auto" resolved), 0: none; a shared GPU's limit
                           * is the lowest cap_w of the jobs on it (sched.c, lowest_cap) */
    double energy_base_j; /* energy accounted before this daemon watched it (adoption) */
    double acc_j;         /* its share of its GPUs' energy since this daemon watched it */
    double energy_j;      /* latest total: energy_base_j + acc_j */
    double stored_j;      /* energy_j as last written to the store */
    /* Its carbon and cost (grid.c) over the same accounting pieces as acc_j: grid_acc_j is
     * acc_j when they were last added; stored_grid as last written to the store. */
    struct ecod_grid_acc grid, stored_grid;
    double grid_acc_j;
    /* The split of its GPUs' energy (attrib.c): frac[m], its part of gpus[m]'s energy in the
     * latest split (0..1; its power is sum frac[m] x the GPU's power); basis_j[b], its energy
     * split by basis b since this daemon watched it; basis, the one of most joules (before any
     * energy: the latest); basis_now, the worst of its GPUs in the accounting in progress;
     * stored_basis, basis as last written to the store. */
    double frac[ECO_GPUSEL_MAX_GPUS];
    double mem_prev_b[ECO_GPUSEL_MAX_GPUS]; /* its processes' memory on gpus[m] at the previous
                                             * split (0: alone on it, or none yet) */
    double basis_j[ECOD_BASIS_EQUAL + 1];
    enum ecod_basis basis, basis_now, stored_basis;
    int64_t slurm_job;  /* > 0: a Slurm job registered by the SPANK plugin (no process here) */
    double slurm_cap_w; /* its --gpu-power-cap in watts (0: none): the controller's ceiling */
    /* Store writes that failed (full disk, I/O error), retried every tick (sched.c): */
    bool end_unrecorded; /* ended, its end not yet in the store: end_state, end_code, end_s */
    enum eco_store_state end_state; /* done or failed; ECO_STORE_CANCELLED: only the energy */
    int end_code;
    double end_s;
};

/* Processes whose job is known (attrib.c): a GPU process and the job it belongs to. 256
 * covers every process of the jobs on a full server, whose samples may outlive them by one
 * sampling period. */
#define ECOD_PID_CACHE 256
struct ecod_pid_owner {
    pid_t pid;
    uint64_t start_ticks; /* the process's start time: a recycled pid is told apart */
    int64_t job;
};

/* A GPU's processes that belong to no job on it (attrib.c): how many at the latest split and
 * the first ECOD_STRAY_PIDS of them, their part of the GPU then (0..1) and the energy split to
 * them since the daemon started (charged to no job). 8 pids name what an operator looks for;
 * the count says when there are more. */
#define ECOD_STRAY_PIDS 8
struct ecod_stray {
    unsigned n;
    pid_t pids[ECOD_STRAY_PIDS];
    double share;
    double energy_j;
};
/* Stray processes already logged (once each), whose samples still count after they exit: a
 * ring of 64, far more than run beside jobs on a server at once. */
#define ECOD_STRAY_SEEN 64

/* Scheduling-pass timings (s), for /v1/status and /metrics. */
struct ecod_pass_stats {
    uint64_t passes;
    double last_s, max_s, sum_s;
    double queue_max_s, queue_sum_s; /* the queue policy's part: decisions and launches */
    size_t last_queue_len;           /* queued jobs the last pass looked at */
    double last_sample_age_s;        /* age of the GPU sample it chose from; < 0: none yet */
};

/* Sampling-tick timings (s), for /v1/status: GPU readings, energy, the node budget. */
struct ecod_sample_stats {
    uint64_t samples;
    double last_s, max_s, sum_s;
};

/* The daemon: everything here lives on one thread (the event loop), so nothing is locked;
 * the listing worker (lister.c) has its own copies and store connection and never reads it. */
struct ecod {
    const char *state_dir;
    char db_path[4096];
    char logs_dir[4096];
    char run_dir[4096];   /* per running job: "PID START_TICKS" for adoption after a restart */
    const char *fake_run; /* ecosched-fake-gpu-run wrapping jobs on the fake platform, or NULL */
    int fake_run_fd;      /* it, opened at start-up: jobs exec it from this fd (execveat) */
    struct eco_platform *platform;
    unsigned n_gpus;
    struct eco_gpusel *sel; /* NULL when the platform has no GPUs */
    struct eco_store *store;
    struct ecod_run *runs;
    size_t n_runs, cap_runs;
    double now_s, mono_s;    /* wall and monotonic clocks of the scheduling call in progress,
                              * passed in by its caller (sched.h) */
    double last_sample_mono; /* when the GPUs were last sampled (monotonic s) */
    double last_tick_mono;
    bool want_sched; /* a submit or a child's end asks for a pass before the next tick */
    struct ecod_queue *queue;
    struct ecod_pass_stats pass;
    struct ecod_sample_stats sample;
    /* energy accounting: each GPU's counter at the last accounting (and whether it has one) */
    double gpu_counter_j[ECO_GPUSEL_MAX_GPUS];
    bool gpu_counter_ok[ECO_GPUSEL_MAX_GPUS];
    double acct_mono;
    /* per GPU, the newest per-process utilisation sample used (NVML's microseconds), and the
     * GPU processes' jobs (ring, next slot pid_owner_next): attrib.c */
    uint64_t gpu_util_us[ECO_GPUSEL_MAX_GPUS];
    struct ecod_pid_owner pid_owner[ECOD_PID_CACHE];
    size_t pid_owner_next;
    struct ecod_stray stray[ECO_GPUSEL_MAX_GPUS];
    pid_t stray_seen[ECOD_STRAY_SEEN];
    size_t stray_seen_next;
    /* the jobs' cgroups (jobcg.c): the directory holding job-ID/ and its cgroup path as
     * /proc/PID/cgroup writes it; "" when jobs are told apart by the process tree */
    char cgroup_dir[4096];
    char cgroup_rel[4096];
    bool cgroup_sweep;          /* an ended job's cgroup may be left: ecod__jobcg_sweep */
    int64_t cgroup_kept_logged; /* the newest job whose left processes were logged */
    /* store writes that failed (sched.c): unrecorded ends are retried, and starts wait, until
     * these monotonic times (0: none failed); store_failing: a start failure was logged */
    double end_retry_mono, start_retry_mono;
    bool store_failing;
    double prune_mono;            /* the next pruning pass (monotonic s) */
    struct ecod_lister *lister;   /* GET /v1/jobs off the loop; NULL: served on it */
    struct ecod_nodecap *nodecap; /* node power budget (nodecap.c); NULL: none ever set */
    struct ecod_lease lease;      /* powerd's fallback lease (lease.c), kept in lease_path */
    char lease_path[4096];
    /* Settings from the config and options (ecoschedd.c, apply_config; docs/daemon/README.md):
     * the scheduling pass runs every tick_s (default 1 s: NVML's utilisation readings cover
     * 1/6 s to 1 s, so faster sampling adds nothing, and a queued job waits at most this long
     * for a freed GPU) */
    double tick_s;
    const char *gpu_strategy;     /* the GPU-selection strategy (eco_gpusel_find name) */
    double auto_cap_max_slowdown; /* power_cap "auto": slowdown bound, fraction of the time at
                                   * the maximum limit */
    double keep_finished_s;       /* how long finished jobs are kept; 0: forever */
    bool accept_lost_jobs;        /* --accept-lost-jobs: open a store that lost jobs */
    bool power_knob_clock;        /* caps as locked SM clocks (power_knob = clock) */
    double power_budget_w;        /* the node power budget at start (0: none) */
    const char *power_policy;     /* its capper, "family[:key=value,...]" */
    /* Grid signals and deferral (grid.c); release[i] is the wall time from which queued job
     * release_id[i] may start, decided once by the carbon policy (recomputed after a restart) */
    struct ecod_grid grid;
    int64_t *release_id;
    double *release_s;
    size_t n_release, cap_release;
};

#endif
