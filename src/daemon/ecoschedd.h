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
#include "ecosched/store.h"

/* Log levels, syslog's order (lower is more severe). */
enum ecod_level { ECOD_ERR = 3, ECOD_WARN = 4, ECOD_INFO = 6, ECOD_DEBUG = 7 };

extern int ecod_log_level;
void ecod_log_write(int level, const char *tag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The one way the daemon logs: level-checked, with a subsystem tag ("api", "sched", ...). */
#define ECOD_LOG(level, tag, ...)                                                                  \
    do {                                                                                           \
        if ((level) <= ecod_log_level)                                                             \
            ecod_log_write((level), (tag), __VA_ARGS__);                                           \
    } while (0)

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
    double energy_base_j; /* energy accounted before this daemon watched it (adoption) */
    double counter0_j[ECO_GPUSEL_MAX_GPUS]; /* energy counters when watching began */
    bool integrate;                         /* no energy counter: integrate power at each tick */
    double integrated_j;
    double energy_j; /* latest total */
};

/* The daemon: everything lives on one thread (the event loop), so nothing here is locked. */
struct ecod {
    const char *state_dir;
    char db_path[4096];
    char logs_dir[4096];
    char run_dir[4096];   /* per running job: "PID START_TICKS" for adoption after a restart */
    char self_exe[4096];  /* this executable: the start gate jobs exec first */
    const char *fake_run; /* ecosched-fake-gpu-run wrapping jobs on the fake platform, or NULL */
    struct eco_platform *platform;
    unsigned n_gpus;
    struct eco_gpusel *sel; /* NULL when the platform has no GPUs */
    struct eco_store *store;
    struct ecod_run *runs;
    size_t n_runs, cap_runs;
    double last_sample_mono; /* when the GPUs were last sampled (monotonic s) */
    double last_tick_mono;
    bool want_sched; /* a submit or a child's end asks for a pass before the next tick */
};

/* Clocks: wall time (stored times) and monotonic time (selector samples, timers), in s. */
double ecod_now(void);
double ecod_mono(void);

/* sched.c */
int ecod_sched_init(struct ecod *d, struct eco_gpusel_params *params, struct eco_error *err);
void ecod_sched_fini(struct ecod *d);
/* Adopts or marks lost the jobs the store says are running (once, at start). */
void ecod_sched_recover(struct ecod *d);
/* One pass: sample GPUs, account energy, reap ended jobs, start queued ones. */
void ecod_sched_pass(struct ecod *d);
/* A cancelled running job: signal its process group (SIGTERM, SIGKILL 10 s later). */
void ecod_sched_cancelled(struct ecod *d, int64_t id);
/* The watched run of job id, NULL when none. Borrowed until the next pass. */
const struct ecod_run *ecod_sched_find(const struct ecod *d, int64_t id);
/* Paths of a job's output files (buf of at least 4096 bytes). */
void ecod_log_path(const struct ecod *d, int64_t id, const char *ext, char *buf, size_t cap);

/* api.c: starts the HTTP server on the listening unix socket `fd` (taken over). */
struct MHD_Daemon;
struct MHD_Daemon *ecod_api_start(struct ecod *d, int fd, struct eco_error *err);

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
    char power_knob[8]; /* "limit" or "clock" */
};

void ecod_config_defaults(struct ecod_config *c);
/* Reads and validates the whole of `path` into *c (left unchanged on error). Each problem is
 * written to stderr as "PATH:LINE: ..."; returns 0, or -EINVAL (bad content) or -errno (cannot
 * read) after writing them all. */
int ecod_config_load(const char *path, struct ecod_config *c);
/* Log level from its name (error, warning, info, debug; err, warn); -EINVAL when unknown. */
int ecod_level_parse(const char *name);

/* sched.c: the slowdown bound of power_cap "auto" (fraction of the time at the maximum
 * limit), and the start-up reconciliation of the GPUs' limits with the store (after
 * ecod_sched_recover). */
extern double ecod_auto_cap_max_slowdown;
void ecod_sched_reconcile_limits(struct ecod *d);
/* Catalog type of an NVML model name, or -1 (sched.c). */
int ecod_catalog_type_of(const char *model);

/* clockctl.c: power caps as locked SM clocks (config power_knob = clock; 0: power limits).
 * ecod_clock_apply locks (cap_w > 0) or resets (0) the listed GPUs' clocks and says whether any
 * GPU took it; ecod_clock_reconcile locks GPU g for want[g] (> 0; adopted job by[g]) or resets
 * it. */
extern int ecod_power_knob_clock;
bool ecod_clock_apply(struct ecod *d, int64_t id, const uint32_t *gpus, uint32_t n, double cap_w);
void ecod_clock_reconcile(struct ecod *d, const double *want, const int64_t *by);

#endif
