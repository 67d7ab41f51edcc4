/* SPDX-License-Identifier: MIT */
/* config.c: ecoschedd's settings, from its config file and options. */
#ifndef ECOD_CONFIG_H
#define ECOD_CONFIG_H

#include <stddef.h>
#include <sys/types.h>
#include "ecosched/error.h"

#define ECOD_DEFAULT_SOCKET "/run/ecosched/ecoschedd.sock"
#define ECOD_DEFAULT_STATE "/var/lib/ecosched"
#define ECOD_DEFAULT_CONFIG "/etc/ecosched/ecoschedd.conf"

/* The settings of the config file (docs/daemon/README.md, "Configuration"); empty strings
 * are unset. Filled with the defaults by ecod__config_defaults. */
struct ecod_config {
    char socket[108]; /* sun_path's size */
    char socket_group[256];
    char state_dir[4000];
    char pid_file[4096]; /* "": STATE_DIR/ecoschedd.pid */
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
    /* live's sharing gates (gpu-selection.md): utilisation bar, most jobs per GPU (0: 16),
     * settling time after a start */
    double share_util, share_max_jobs, share_settle_s;
    char power_knob[8]; /* "limit" or "clock" */
    double keep_finished_s;
    double power_budget_w;                /* 0: none */
    char power_policy[128];               /* capper "family[:key=value,...]" */
    char carbon[4096], price[4096];       /* grid-signal files; "": none */
    char carbon_url[512], price_url[512]; /* loopback http:// sources; "": none */
    char carbon_policy[128];              /* none, shift, lwa, threshold[:PARAMS] */
    double carbon_run_s, signal_fetch_s;
    char job_cgroup[4096]; /* "auto", "off" or a cgroup2 directory (jobcg.h) */
    /* the cluster listener (cluster.h): any HOST:PORT, MUNGE credentials; "": none */
    char cluster_listen[300];
    char munge_socket[256];        /* "": munge's default */
    char cluster_admin_user[64];   /* a user name or uid that may POST; "": root only */
    char cluster_read_users[1024]; /* "*" or names/uids, comma-separated, that may GET */
    char cluster_tls_cert[4096];   /* PEM files: the listener speaks https; "": http */
    char cluster_tls_key[4096];
};

/* The names a value may take, from the registries, as messages and --help write them: the GPU
 * strategies ("exclusive, memory-threshold, live or share-fit") and the platforms with auto ("nvml,
 * fake, none or auto"); into buf (ECOD_NAMES_MAX bytes is enough), returned. ecod__join_names
 * writes n names as "a, b or c" (cut at size); the queue policies' list (queue.c) uses it too.
 * The registries' names are short (3..16 letters), so 128 bytes hold several of them; a longer
 * list is cut short. */
#define ECOD_NAMES_MAX 128
const char *ecod__join_names(char *buf, size_t size, const char *const *names, size_t n);
const char *ecod__gpu_strategy_names(char *buf, size_t size);
const char *ecod__platform_names(char *buf, size_t size);

/* A user as cluster_admin_user and cluster_read_users name one: a user name of this host, or
 * a uid (digits, with or without a passwd entry). 0 with *uid, or -ENOENT (no such user). */
int ecod__config_user(const char *v, uid_t *uid);

void ecod__config_defaults(struct ecod_config *c);
/* Reads and validates the whole of `path` into *c (left unchanged on error). Each problem is
 * written to stderr as "PATH:LINE: ..."; returns 0, or -EINVAL (bad content) or -errno (cannot
 * read) after writing them all. */
int ecod__config_load(const char *path, struct ecod_config *c);
/* Sets one key from a command-line value, validated like the file's; 0, or -EINVAL (a bad
 * value: err says what is wrong with it, "'-1' is not a number of seconds 0..86400") or
 * -ENOENT (no such key). Nothing is printed. */
int ecod__config_set(struct ecod_config *c, const char *key, const char *value,
                     struct eco_error *err);

#endif
