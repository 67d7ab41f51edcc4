/* SPDX-License-Identifier: MIT */
/* Internals of the ecoschedd daemon shared by its three files: the event loop and options
 * (ecoschedd.c), the HTTP/JSON API (api.c) and the scheduling loop (sched.c). */
#ifndef ECOSCHEDD_H
#define ECOSCHEDD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"
#include "ecosched/gpusel.h"
#include "ecosched/platform.h"
#include "ecosched/policy.h"
#include "ecosched/powercap.h"
#include "ecosched/store.h"
#include "../util/clock.h"
#include "../util/log.h"

/* Largest request body accepted (HTTP 413 beyond): a submit with a big environment is a few
 * KiB; 64 KiB leaves room for long command lines while bounding what one client can pin. */
#define ECOD_MAX_BODY (64u * 1024u)

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
    int64_t slurm_job;  /* > 0: a Slurm job registered by the SPANK plugin (no process here) */
    double slurm_cap_w; /* its --gpu-power-cap in watts (0: none): the controller's ceiling */
    /* Store writes that failed (full disk, I/O error), retried every tick (sched.c): */
    bool end_unrecorded; /* ended, its end not yet in the store: end_state, end_code, end_s */
    enum eco_store_state end_state; /* done or failed; ECO_STORE_CANCELLED: only the energy */
    int end_code;
    double end_s;
};

/* A queued job as the queue keeps it (queue.c). */
struct ecod_qjob {
    int64_t id;
    struct eco_gpu_request req;
    uint32_t chosen[ECO_GPUSEL_MAX_GPUS]; /* during a pass: the GPUs chosen for it */
    bool started;                         /* during a pass: the policy started it */
    bool never;                           /* during a pass: it can never fit this server */
};

/* What a queue pass decided for one job: start it on `gpus`, or (never) refuse it. */
struct ecod_start {
    int64_t id;
    bool never;
    uint32_t n_gpus;
    uint32_t gpus[ECO_GPUSEL_MAX_GPUS];
};

struct ecod_queue;

/* Scheduling-pass timings (s), for /v1/status and /metrics. */
struct ecod_pass_stats {
    uint64_t passes;
    double last_s, max_s, sum_s;
    double queue_max_s, queue_sum_s; /* the queue policy's part: decisions and launches */
    size_t last_queue_len;           /* queued jobs the last pass looked at */
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
    double last_sample_mono; /* when the GPUs were last sampled (monotonic s) */
    double last_tick_mono;
    bool want_sched; /* a submit or a child's end asks for a pass before the next tick */
    struct ecod_queue *queue;
    struct ecod_pass_stats pass;
    /* energy accounting: each GPU's counter at the last accounting (and whether it has one) */
    double gpu_counter_j[ECO_GPUSEL_MAX_GPUS];
    bool gpu_counter_ok[ECO_GPUSEL_MAX_GPUS];
    double acct_mono;
    /* store writes that failed (sched.c): unrecorded ends are retried, and starts wait, until
     * these monotonic times (0: none failed); store_failing: a start failure was logged */
    double end_retry_mono, start_retry_mono;
    bool store_failing;
    double prune_mono; /* the next pruning pass (monotonic s) */
    struct ecod_lister *lister; /* GET /v1/jobs off the loop; NULL: served on it */
    struct ecod_nodecap *nodecap; /* node power budget (nodecap.c); NULL: none ever set */
    /* Settings from the config and options (ecoschedd.c, apply_config; docs/daemon/README.md):
     * the scheduling pass runs every tick_s (default 1 s: NVML's utilisation readings cover
     * 1/6 s to 1 s, so faster sampling adds nothing, and a queued job waits at most this long
     * for a freed GPU) */
    double tick_s;
    const char *gpu_strategy;     /* the GPU-selection strategy (eco_gpusel_find name) */
    double auto_cap_max_slowdown; /* power_cap "auto": slowdown bound, fraction of the time at
                                   * the maximum limit */
    double keep_finished_s;       /* how long finished jobs are kept; 0: forever */
    bool power_knob_clock;        /* caps as locked SM clocks (power_knob = clock) */
    double power_budget_w;        /* the node power budget at start (0: none) */
    const char *power_policy;     /* its capper, "family[:key=value,...]" */
};

/* queue.c: the in-memory queue in the order of a core queue policy. */
/* The daemon's queue policies: fifo, greedy, edf (NULL for other names). */
const struct eco_policy_ops *ecod_queue_policy_find(const char *name);
int ecod_queue_create(struct ecod *d, const char *policy, struct eco_error *err);
void ecod_queue_destroy(struct ecod *d);
const char *ecod_queue_policy_name(const struct ecod *d);
size_t ecod_queue_len(const struct ecod *d);
/* Adds a queued job (borrowed fields copied). 0 or -ENOMEM. */
int ecod_queue_add(struct ecod *d, const struct eco_store_job *j);
void ecod_queue_remove(struct ecod *d, int64_t id);
/* Runs the queue policy: *starts (caller frees) lists the jobs to start now with their GPUs
 * (already released from the selector: launch records them) and the ones that can never fit;
 * all of them have left the queue. 0 or < 0 and err. */
int ecod_queue_pass(struct ecod *d, double mono, struct ecod_start **starts, size_t *n_starts,
                    struct eco_error *err);

/* sched.c */
/* Opens d->db_path into d->store after checking the state directory: a missing or empty
 * jobs.db while logs/ or run/ hold files of past jobs is refused (-EBADMSG; the message says
 * how to fix it), and ids up to the highest such file's are never given again. */
int ecod_store_open(struct ecod *d, struct eco_error *err);
int ecod_sched_init(struct ecod *d, struct eco_gpusel_params *params, struct eco_error *err);
void ecod_sched_fini(struct ecod *d);
/* Fills the in-memory queue from the store's queued jobs (once, at start). */
int ecod_sched_load_queue(struct ecod *d, struct eco_error *err);
/* Adopts or marks lost the jobs the store says are running (once, at start). */
void ecod_sched_recover(struct ecod *d);
/* One pass: sample GPUs, account energy, reap ended jobs, start queued ones. */
void ecod_sched_pass(struct ecod *d);
/* A cancelled running job: signal its process group (SIGTERM, SIGKILL 10 s later). */
void ecod_sched_cancelled(struct ecod *d, int64_t id);
/* The watched run of job id, NULL when none. Borrowed until the next pass. */
const struct ecod_run *ecod_sched_find(const struct ecod *d, int64_t id);
/* Paths of a job's output files (buf of at least 4096 bytes): in d's logs directory, or in
 * logs_dir (the listing worker's copy of it). */
void ecod_log_path(const struct ecod *d, int64_t id, const char *ext, char *buf, size_t cap);
void ecod_log_path_in(const char *logs_dir, int64_t id, const char *ext, char *buf, size_t cap);

/* lister.c: GET /v1/jobs pages built by a worker thread (nice +10, its own read-only store
 * connection) while the event loop serves everything else. A listing's connection is
 * suspended while the worker has it (libmicrohttpd suspend/resume). */
struct MHD_Connection;
struct ecod_list_req {
    struct MHD_Connection *conn; /* suspended while queued and built */
    int state;                   /* ECO_STORE_ANY or an eco_store_state */
    int64_t after;               /* the page's cursor */
    size_t limit;                /* jobs in the page, 1..1000 */
    /* the answer, set by ecod_api_jobs_page: HTTP status and JSON body (malloc'd, len bytes,
     * NULL when out of memory); the connection's to free */
    unsigned status;
    char *body;
    size_t len;
};
/* Most listings waiting for the worker; beyond, GET /v1/jobs answers 503 with Retry-After.
 * Eight clients listing back to back (bench/bench_daemon_list.sh) keep 8 waiting; 64 leaves
 * room for several users' `ls --all` at once while bounding what waiting listings pin: a
 * suspended connection and its request each, and one page (at most 1,000 jobs, ~0.45 MB)
 * at a time being built. */
#define ECOD_LIST_QUEUE 64
struct ecod_lister;
/* Opens a read-only store connection to db_path (the writer's open must come first) and
 * starts the worker with a queue of queue_cap pending listings. *out is the caller's, freed
 * with ecod_lister_destroy. 0, or < 0 and err. */
int ecod_lister_create(const char *db_path, const char *logs_dir, size_t queue_cap,
                       struct ecod_lister **out, struct eco_error *err);
/* A descriptor the event loop polls for reading: readable when the worker has resumed a
 * connection, so the loop runs libmicrohttpd to send the answer; ecod_lister_woken clears
 * it. -1 for NULL. */
int ecod_lister_fd(const struct ecod_lister *l);
void ecod_lister_woken(struct ecod_lister *l);
/* From the event loop: suspends r->conn and queues r (borrowed until the worker resumes the
 * connection, by which time r holds the answer). -EAGAIN when queue_cap listings are pending
 * (nothing suspended then). */
int ecod_lister_submit(struct ecod_lister *l, struct ecod_list_req *r);
/* Answers every pending listing, stops and joins the worker, closes its store. Call it
 * before stopping the HTTP servers (then run them once so the answers go out). Accepts NULL. */
void ecod_lister_destroy(struct ecod_lister *l);
/* api.c: builds the answer of listing r from store s (any thread; reads only s, logs_dir
 * and r). */
void ecod_api_jobs_page(struct eco_store *s, const char *logs_dir, struct ecod_list_req *r);

/* The loopback TCP listener's bearer token and the identity its clients act with: the token
 * file's owner (tcp.c). */
/* Longest token accepted: 255 characters (docs/daemon/README.md, tcp_token_file), room enough
 * for any base64 or hex secret and within the CLI's header buffer (cmd_client.c). */
#define ECOD_TCP_TOKEN_MAX 255
struct ecod_tcp_auth {
    char token[ECOD_TCP_TOKEN_MAX + 1];
    size_t token_len;
    uid_t uid;
    gid_t gid;
};
/* Binds and listens on tcp_listen (a loopback HOST:PORT) after reading the token file (it
 * must be a regular file readable by its owner only; a FIFO or device is refused without
 * blocking). The fd, or < 0 and err. */
int ecod_tcp_listen(const char *hostport, const char *token_file, struct ecod_tcp_auth *auth,
                    struct eco_error *err);
/* Whether an Authorization header value is "Bearer TOKEN" with the right token. */
bool ecod_tcp_token_ok(const struct ecod_tcp_auth *a, const char *header);

/* One HTTP listener: the unix socket (tcp NULL: callers known by peer credentials) or the
 * loopback TCP socket (callers known by the bearer token). */
struct ecod_listener {
    struct ecod *d;
    const struct ecod_tcp_auth *tcp;
};

/* api.c: starts the HTTP server on the listening socket `fd` (taken over). `l` must outlive
 * the server. */
struct MHD_Daemon;
struct MHD_Daemon *ecod_api_start(struct ecod_listener *l, int fd, struct eco_error *err);

/* page.c: queues the live page (GET /) on connection c; an enum MHD_Result. */
struct MHD_Connection;
int ecod_page(struct MHD_Connection *c);

/* metrics.c (added for GET /metrics): the Prometheus text (format 0.0.4) of the GPUs and
 * jobs. On success *text (*len bytes, NUL-terminated) is the caller's, freed with free();
 * on failure it is NULL and err says why. */
int ecod_metrics_render(struct ecod *d, char **text, size_t *len, struct eco_error *err);

/* Added for the config file (config.c) and automatic power caps (sched.c). */

#define ECOD_DEFAULT_SOCKET "/run/ecosched/ecoschedd.sock"
#define ECOD_DEFAULT_STATE "/var/lib/ecosched"
#define ECOD_DEFAULT_CONFIG "/etc/ecosched/ecoschedd.conf"

/* The settings of the config file (docs/daemon/README.md, "Configuration"); empty strings
 * are unset. Filled with the defaults by ecod_config_defaults. */
struct ecod_config {
    char socket[108]; /* sun_path's size */
    char socket_group[256];
    char state_dir[4000];
    char platform[16];
    char nvml_library[4096];
    int log_level;
    double util_window_s, grace_s, tick_s;
    char tcp_listen[300];
    char tcp_token_file[4096];
    double auto_cap_max_slowdown;
    char queue_policy[16];
    char gpu_strategy[32];
    double memthr_wait_s;
    char power_knob[8]; /* "limit" or "clock" */
    double keep_finished_s;
    double power_budget_w; /* 0: none */
    char power_policy[128]; /* capper "family[:key=value,...]" */
};

void ecod_config_defaults(struct ecod_config *c);
/* Reads and validates the whole of `path` into *c (left unchanged on error). Each problem is
 * written to stderr as "PATH:LINE: ..."; returns 0, or -EINVAL (bad content) or -errno (cannot
 * read) after writing them all. */
int ecod_config_load(const char *path, struct ecod_config *c);
/* Sets one key from a command-line value, validated like the file's; 0, or -EINVAL (a bad
 * value: err says what is wrong with it, "'-1' is not a number of seconds 0..86400") or
 * -ENOENT (no such key). Nothing is printed. */
int ecod_config_set(struct ecod_config *c, const char *key, const char *value,
                    struct eco_error *err);

/* sched.c: the start-up reconciliation of the GPUs' limits with the store (after
 * ecod_sched_recover). */
void ecod_sched_reconcile_limits(struct ecod *d);

/* sched.c, for Slurm jobs (api_node.c, docs/slurm.md): the SPANK plugin registers a Slurm job's
 * GPUs so that the daemon measures their energy, and ends it from the epilog. The job has a
 * store row (name "slurm-JOBID", no process) and a watched run; its GPUs are reserved in the
 * selector. add: 0 or -ENOMEM. end: accounts, records done with the energy, sets each of its
 * GPUs' power limit to the lowest cap of the jobs still on it (the default when none), releases
 * the GPUs; -ENOENT when no run has that store id. */
int ecod_sched_add_slurm(struct ecod *d, int64_t id, int64_t slurm_job, const uint32_t *gpus,
                         uint32_t n, double cap_w);
int ecod_sched_end_slurm(struct ecod *d, int64_t id, double *energy_j);
/* The lowest power cap (W) of the watched jobs on GPU g whose caps are power limits (Slurm
 * jobs; the daemon's jobs unless power_knob = clock), 0 when none of them is capped: the limit
 * GPU g must have, "the default" for 0. */
double ecod_sched_gpu_cap(const struct ecod *d, uint32_t g);
/* The limit power_cap "auto" chooses on GPU g (see auto_cap in sched.c). */
int ecod_sched_auto_cap(struct ecod *d, uint32_t g, double *cap_w, char *why, size_t cap);

/* api_node.c: the routes /v1/node, /v1/gpus/N/limit and /v1/slurm/... (docs/http-api.md,
 * "Slurm and the cluster power controller"). Returns true when it queued a response. */
struct MHD_Connection;
bool ecod_api_node_route(struct ecod *d, struct MHD_Connection *c, const char *url,
                         const char *method, const char *body, size_t len, uid_t peer_uid,
                         int *mhd_ret);

/* clockctl.c: power caps as locked SM clocks (config power_knob = clock; 0: power limits).
 * ecod_clock_apply locks (cap_w > 0) or resets (0) the listed GPUs' clocks and says whether any
 * GPU took it; ecod_clock_reconcile locks GPU g for want[g] (> 0; adopted job by[g]) or resets
 * it. */
bool ecod_clock_apply(struct ecod *d, int64_t id, const uint32_t *gpus, uint32_t n, double cap_w);
void ecod_clock_reconcile(struct ecod *d, const double *want, const int64_t *by);

/* nodecap.c: the node power budget (config power_budget_w, power_policy; POST /v1/node/budget;
 * docs/daemon/README.md, "Node power budget"). Every tick with a budget the running jobs'
 * GPUs get their limits from the capper family's shared decide (include/ecosched/powercap.h). */
/* NULL when `spec` names a capper with good parameters, else the message (in msg). */
const char *ecod_nodecap_check(const char *spec, char *msg, size_t cap);
/* Creates d->nodecap with d->power_budget_w and d->power_policy. 0, or < 0 and err. */
int ecod_nodecap_init(struct ecod *d, struct eco_error *err);
void ecod_nodecap_fini(struct ecod *d);
/* One control period at monotonic time mono (after the GPUs were sampled). */
void ecod_nodecap_tick(struct ecod *d, double mono);
/* A new budget (0: none; the GPUs go back to their jobs' caps or the default) and optionally a
 * new policy (NULL: keep). 0, or -EINVAL with msg saying which field is wrong. */
int ecod_nodecap_set(struct ecod *d, double budget_w, const char *policy, char *msg, size_t cap);
/* The budget's state, borrowed from d. */
struct ecod_nodecap_status {
    double budget_w;        /* 0: none */
    const char *policy;
    double measured_w;      /* sum of the GPUs' power at the last period, NaN before */
    double demand_w;        /* the same with every controlled GPU at its maximum limit */
    double feedback_w;
    size_t jobs;            /* jobs in the last decide */
    struct eco_cap_metrics_report met;
};
void ecod_nodecap_status(const struct ecod *d, struct ecod_nodecap_status *s);

#endif
