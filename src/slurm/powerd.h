/* SPDX-License-Identifier: MIT */
/* Internals of `ecosched powerd` (docs/slurm.md) shared by its files: the loop and options
 * (powerd.c), Slurm and the node daemons (powerd_nodes.c), the allocation step
 * (powerd_alloc.c) and the API (powerd_api.c). */
#ifndef ECO_POWERD_H
#define ECO_POWERD_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/cluster.h"
#include "ecosched/error.h"
#include "ecosched/policy.h"
#include "ecosched/powercap.h"
#include "ecosched/rng.h"
#include "daemon/grid.h"

#define MAX_NODES 4096
#define MAX_GPUS 64
#define MAX_JOBS 8192
/* A node daemon answers /v1/node in milliseconds; 0.5 s (--node-timeout) bounds one period's
 * wait on a silent one, its requests all in flight at once (eco_http_json_all), so that a
 * period reading and then capping 1,000 nodes, some silent, fits in the 1 s of the shortest
 * period worth running and in a tenth of the default 5 s. */
#define NODE_TIMEOUT_S 0.5
/* Threads that make a batch's MUNGE credentials, each over its own connection to munged: a
 * credential is a round trip to munged (0.12 ms on the bench's machine), so 1,950 of them made
 * one after the other were a quarter of a 1,000-node period (bench/README.md); munged serves
 * them on its own worker threads. Four keep two cores and munged's default two threads busy. */
#define POWERD_SIGNERS 4
/* Below this many requests a batch is signed on the calling thread alone. */
#define POWERD_SIGN_THREADED_MIN 64
/* The connections to munged: the signers', and one more for the thread that makes the next
 * period's reading credentials ahead (GET /v1/node, the same request for every node) while
 * this period's requests wait for their answers. */
#define POWERD_MUNGE_CTX (POWERD_SIGNERS + 1)
/* Credentials made ahead are used only when at most this old: a fifth of munge's default TTL
 * (300 s), far from expiring even with some clock skew between the hosts; a longer --period
 * makes them when they are needed. */
#define POWERD_PRESIGN_MAX_AGE_S 60.0
/* The node lease (--node-lease) when not given: 3 periods (15 s at the default 5 s). A node
 * falls back to its share only after missing two renewals in a row and most of a third, so one
 * slow period (a node request at its timeout, squeue taking a second) never trips it, while the
 * budget is exposed to a node's new uncapped jobs for at most 3 periods after powerd dies. */
#define LEASE_PERIODS 3
/* A node daemon that answered 404 to POST /v1/node/limits (older than the route) is asked it
 * again after 120 periods (10 min at the default 5 s), or as soon as it stops answering (a
 * restart, maybe its upgrade): one 404 per node each 10 min keeps a rolling upgrade's nodes
 * found within minutes without a wasted request every period. */
#define LEGACY_PERIODS 120
/* Remaining time of a job without a time limit, for the allocator's cost: an hour, the order
 * of a training job's remaining time; only the ratios between jobs matter. */
#define DEFAULT_REMAINING_S 3600.0
/* The capper --policy uses when not given: the one the simulator evaluates by default. */
#define DEFAULT_CAPPER "mpc"
/* Weight of the newest progress reference (busy SM cycles per second at the job's maximum
 * limit) in its running mean: a few periods at the maximum settle it. */
#define REF_ALPHA 0.2
/* Weight classes (Slurm prefers the lowest weight): nodes already running jobs (pack), idle
 * nodes that are on, then nodes powered down or not answering. Within a class the idle draw
 * per GPU in watts orders nodes by efficiency. */
#define WEIGHT_BUSY 1000
#define WEIGHT_IDLE 2000
#define WEIGHT_COLD 3000
/* The capping metrics go to the log every 600 s of periods (and at exit): ten minutes is the
 * scale of a budget's effect on the jobs, and keeps a 1 s period's log to 144 lines a day. */
#define METRICS_LOG_S 600.0
/* A deferral entry is forgotten a day after squeue last listed its job: Slurm drops a finished
 * job from squeue MinJobAge after it ends (300 s by default) and never reuses its id, so a
 * day is long past any return; until then a job held again is known as no hold of powerd's. */
#define DEFER_FORGET_S 86400.0

struct pgpu {
    double power_w, limit_w, min_w, max_w, default_w;
    double util;      /* SM utilisation 0..1 from the node daemon, NaN when it has none */
    double sm_mhz;    /* SM clock, NaN when the node daemon has none */
    double job_cap_w; /* the job's --gpu-power-cap (0: none): a ceiling for its limit */
    double alloc_w;   /* this period's allocation: its job's decided limit, else its power */
};

struct pnode {
    char name[128];
    char endpoint[600];
    unsigned gres_gpus, used_gpus; /* from sinfo */
    bool up;                       /* its ecoschedd answered this period */
    bool seen;                     /* it answered once */
    bool down_logged;              /* its not answering has been logged */
    bool powered_down;             /* Slurm says powered down (power save) */
    bool slurm_idle;               /* Slurm says idle */
    double idle_since;             /* monotonic s, -1 when not idle */
    double max_power_w;            /* sum of its GPUs' maximum limits (last answer) */
    double power_w;
    double idle_w_per_gpu;
    unsigned n_gpus;
    struct pgpu gpu[MAX_GPUS];
    long weight; /* Slurm's */
    /* the Slurm jobs its ecoschedd runs (/v1/node "slurm_jobs", last answer): each one's GPU
     * energy on this node, its measured share of the GPUs' counters (docs/models/energy.md) */
    struct pnode_job {
        int64_t id, run; /* the Slurm job, the daemon's run of it (a step) */
        double energy_j;
    } sjob[MAX_GPUS];
    unsigned n_sjob;
    bool limit_failing; /* its last limit request failed (logged once, until one succeeds) */
    /* its fallback share (docs/slurm/powerd.md, "Faults"): the one it holds (its /v1/node
     * "fallback", or the last one it took), and this period's (eco_powerd__shares) */
    double held_w, share_w;
    bool lease_failing; /* its last lease request failed (logged once, until one succeeds) */
    /* periods left that it gets its lease and limits one request each (its ecoschedd answered
     * 404 to POST /v1/node/limits: an older version); whether that was logged */
    unsigned legacy_periods;
    bool legacy_logged;
};

struct pjob {
    int64_t id;
    bool running, managed, seen_now;
    unsigned n; /* GPUs */
    uint32_t node[MAX_GPUS], gpu[MAX_GPUS];
    double remaining_s, limit_w;
    double deadline_s; /* epoch seconds (squeue's deadline, sbatch --deadline), -1 none */
    /* Progress proxy: util x SM clock (busy SM cycles per second) over its value at the job's
     * maximum limit (ref_rate, 0 until the job has run there). */
    double ref_rate, speed;
    struct eco_job_model model;
    bool model_init;
    bool metered;    /* its start has been counted by the metrics (settling) */
    bool decided;    /* limit_w is this period's decision (eco_powerd__allocate) */
    char user[64];   /* squeue's user_name ("" when it has none) */
    double power_w;  /* its GPUs' power, a shared GPU's split equally (eco_powerd__job_power) */
    double energy_j; /* its GPU energy on all its nodes so far (eco_powerd__job_power) */
    /* the node daemons' runs of it seen running (node index, run id, last energy), and the
     * energy of those that ended (left their daemon's list) */
    struct prun {
        uint32_t node;
        int64_t run;
        double energy_j;
    } run[MAX_GPUS];
    unsigned n_run;
    double ended_j;
};

/* A deferrable Slurm job (--comment=ecosched:max-delay=D; powerd_grid.c). powerd releases only
 * a hold it owns: one it placed (`scontrol uhold`), or the user hold (JobHeldUser) of a job
 * pending with the comment when powerd first saw it (sbatch --hold); never an administrator's
 * (JobHeldAdmin). An entry stays after it is done (released, refused, left to the user or an
 * administrator) for DEFER_FORGET_S after squeue last listed the job, so that a job held again
 * is never taken for powerd's. */
struct pdefer {
    int64_t id;
    double release_s;    /* epoch s: the carbon policy's release time */
    double last_seen_s;  /* epoch s: squeue last listed it (with the comment) */
    unsigned generation; /* the signal's generation it was decided on */
    bool decided;        /* release_s is set */
    bool owned;          /* the job's hold is powerd's to release */
    bool done;           /* powerd never acts on the job again */
    bool seen_now;
};

struct powerd {
    /* options */
    const char *socket, *node_pattern, *forecast;
    gid_t socket_gid; /* --socket-group's, (gid_t)-1: powerd's own group */
    double period_s;
    double node_timeout_s; /* --node-timeout: each node request's bound */
    double node_lease_s;   /* --node-lease: the nodes' fallback lease */
    /* --node-auth munge: a fresh MUNGE credential on every node request (munge_auth.h), made
     * on POWERD_SIGNERS threads, each with its own connection to munged; munge[0] NULL: none.
     * --node-ca: the CA file of https:// node URLs, NULL: the system's */
    struct eco_munge *munge[POWERD_MUNGE_CTX];
    /* the next reading's credentials, made ahead by a thread of their own (powerd_nodes.c) */
    struct powerd_presign {
        pthread_t th;
        bool running;
        char *block; /* n header lines of NODE_AUTH_MAX bytes, made of them */
        size_t n, made;
        double made_at; /* monotonic s */
    } presign;
    const char *node_ca;
    bool weights;
    /* shared with the API thread, under lock */
    pthread_mutex_t lock;
    double budget_w;
    json_t *status; /* last period's status */
    /* controller state (main thread only) */
    struct pnode *nodes;
    size_t n_nodes;
    struct pjob *jobs;
    size_t n_jobs;
    int64_t max_seen_id; /* highest job id seen (arrivals are ids above it) */
    uint64_t arrivals;
    double arrived_gpus;
    /* capping metrics (docs/policies/powercap.md, "Metrics"): the sums, the last sample's
     * monotonic time (< 0 before the first), the budget it saw, the last log */
    struct eco_cap_metrics met;
    double met_last_t, met_budget_w, met_logged_t;
    struct eco_capper *capper; /* --policy */
    const char *policy;
    double last_budget_w; /* budget of the last decide (its step sign) */
    struct eco_rng rng;   /* the family's dithering */
    struct eco_cluster *cluster;
    struct eco_powerdown *pd;
    const struct eco_powerdown_ops *pd_ops;
    /* grid signals (powerd_grid.c): the demand-response budget is max(dr_floor_w, budget x
     * dr_scale) while the signal is above dr_above (-inf: never), else the budget */
    struct ecod_grid grid;
    double dr_above, dr_scale, dr_floor_w;
    struct pdefer *defer; /* MAX_JOBS entries */
    size_t n_defer;
    /* runs `scontrol VERB JOBID` (hold, uhold, release): 0 or < 0 (logged); NULL: the real
     * one (powerd_grid.c), a test's stand-in otherwise */
    int (*scontrol)(const char *verb, int64_t id);
};

/* powerd_grid.c: the budget in force at epoch time now_s under demand response; a deferrable
 * job of squeue --json (object o) held or released (the rules at struct pdefer); after each
 * read, the entries of jobs squeue has not listed for DEFER_FORGET_S forgotten; the grid part
 * of the status. */
double eco_powerd__dr_budget(const struct powerd *pd, double budget, double now_s);
void eco_powerd__defer_job(struct powerd *pd, const json_t *o, double now_s);
/* The slack of a job comment beginning "ecosched:": "ecosched:max-delay=DURATION", at most
 * ECO_MAX_DELAY_S (31 days, as ecoschedd's max_delay). 0 and *delay_s, or -EINVAL with err
 * naming the field ("field max-delay: ..."). */
int eco_powerd__defer_parse(const char *comment, double *delay_s, struct eco_error *err);
void eco_powerd__defer_sweep(struct powerd *pd, double now_s);
json_t *eco_powerd__grid_json(const struct powerd *pd, double budget, double now_s);

/* powerd_nodes.c: one period's reading of Slurm (sinfo, squeue --json) and of each node's
 * ecoschedd (/v1/node), and what is sent back (limits, Slurm node weights). 0 or < 0 (Slurm
 * did not answer; logged). The node daemons are asked all at once (at most ECO_HTTP_PARALLEL
 * requests in flight), each request bounded by node_timeout_s: a node that does not answer in
 * time is down for the period (up false: its limits stay, its maximum draw is set aside),
 * logged when it goes down and when it answers again, never every period. */
int eco_powerd__read_nodes(struct powerd *pd, double now);
void eco_powerd__read_node_power(struct powerd *pd);
/* Stops the thread making credentials ahead and frees them (at exit; pd stays usable). */
void eco_powerd__nodes_fini(struct powerd *pd);
int eco_powerd__read_jobs(struct powerd *pd);
/* Sends each answering node, in one request (POST /v1/node/limits), its lease (its share,
 * POST /v1/node/budget's {"fallback_w", "lease_s"}) and the limits that changed: each decided
 * job's where it differs, and GPUs that no running job holds back to their default. A node
 * daemon that answers 404 to that route (older than it) gets the lease, then each limit, one
 * request each (remembered per node for LEGACY_PERIODS). held_w follows what each took; a
 * node whose lease or limits fail is logged when it starts failing and when it takes them
 * again, never every period. */
void eco_powerd__send_nodes(struct powerd *pd);
/* Slurm's Weight per node: class by warmth, then idle draw per GPU (watts). */
void eco_powerd__update_weights(struct powerd *pd);

/* powerd_alloc.c: the allocation step at wall time now (epoch s): jobs whose GPUs all answered
 * share what `budget` leaves after the other GPUs' measured power and the maximum draw of the
 * nodes that did not answer, through the capper family's decide (the same one `ecosched sim`
 * evaluates). Sets limit_w and decided of those jobs (nothing is sent) and the allocation's
 * figures in st. 0, or < 0 (out of memory, the capper failed: logged; no job decided). */
int eco_powerd__allocate(struct powerd *pd, double budget, double now, json_t *st);
/* What a node that did not answer may draw, set aside from the budget: its GPUs' maximum
 * limits at its last answer, or, never heard since powerd started, its Slurm GPUs at the
 * largest GPU maximum of the nodes heard (0 when none was). */
double eco_powerd__reserve_w(const struct powerd *pd, const struct pnode *nd);
/* After the allocation: each answering node's fallback share (share_w), budget x its
 * allocation (its GPUs' decided limits, the others' power) over all the answering nodes'
 * allocations, from what the budget leaves after the silent nodes' held shares (or their
 * reserve_w when not known); each at most its maximum draw and at least 1 W. The shares and
 * the silent nodes' held ones sum to at most the budget while that is above the held ones. */
void eco_powerd__shares(struct powerd *pd, double budget);

/* powerd_jobs.c: each running job's power_w and energy_j from this period's node answers
 * (read_node_power, then read_jobs). */
void eco_powerd__job_power(struct powerd *pd);

/* powerd_metrics.c: GET /metrics, Prometheus text format 0.0.4, from the last period's status
 * (the budget under pd->lock); users: the per-job series carry the job's user (the API
 * socket's readers, whom --socket-group chose), else not (the --metrics-listen address). */
struct MHD_Connection;
int eco_powerd__metrics(struct powerd *pd, struct MHD_Connection *c, bool users);

/* powerd_api.c: listens on pd->socket and serves GET /v1/status and POST /v1/budget on a
 * thread of libmicrohttpd's; NULL on failure (printed). */
struct MHD_Daemon;
struct MHD_Daemon *eco_powerd__api_start(struct powerd *pd);
/* powerd_api.c: GET /metrics alone, without users, on TCP address hostport ("HOST:PORT",
 * "[V6]:PORT"; --metrics-listen), for a Prometheus that scrapes it straight; anything else is
 * answered 404 or 405. NULL on failure (printed, naming the flag; *bad_arg when hostport is
 * no address, rather than one that cannot be bound). */
struct MHD_Daemon *eco_powerd__metrics_start(struct powerd *pd, const char *hostport,
                                             bool *bad_arg);

#endif
