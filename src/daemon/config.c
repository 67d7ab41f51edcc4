/* SPDX-License-Identifier: MIT */
/* ecoschedd's config file: `key = value` lines and `#` comment lines, read against a table of
 * keys with type, bounds and default. The whole file is parsed and validated before anything
 * is applied; every problem is reported as "FILE:LINE: ..." (docs/daemon/README.md). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "config.h"
#include "ecosched/carbon.h"
#include "ecosched/gpusel.h"
#include "grid.h"
#include "nodecap.h"
#include "queue.h"

enum key_type {
    K_STRING,
    K_PLATFORM,
    K_LEVEL,
    K_SECONDS,
    K_FRACTION,
    K_COUNT,
    K_LOOPBACK,
    K_QPOLICY,
    K_GSTRATEGY,
    K_KNOB,
    K_WATTS,
    K_CAPPER,
    K_URL,
    K_CPOLICY,
    K_CGROUP,
    K_HOSTPORT,
    K_USER,
    K_USERS
};

const char *ecod__join_names(char *buf, size_t size, const char *const *names, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s",
                                i == 0       ? ""
                                : i + 1 == n ? " or "
                                             : ", ",
                                names[i]);
    return buf;
}

const char *ecod__gpu_strategy_names(char *buf, size_t size)
{
    const char *names[16];
    size_t n = 0;
    for (const struct eco_gpusel_ops *const *g = eco_gpusel_all(); *g && n < 16; g++)
        names[n++] = (*g)->name;
    return ecod__join_names(buf, size, names, n);
}

const char *ecod__platform_names(char *buf, size_t size)
{
    const char *names[16];
    size_t n = 0;
    for (const struct eco_platform_ops *const *p = eco_platform_all(); *p && n < 15; p++)
        names[n++] = (*p)->name;
    names[n++] = "auto";
    return ecod__join_names(buf, size, names, n);
}

struct key {
    const char *name;
    enum key_type type;
    double min, max; /* numbers: bounds; strings: max is the longest value in bytes */
    const char *def; /* default, parsed like a value; NULL: unset */
    size_t off;      /* offset of the field in struct ecod_config */
};

#define STR_KEY(n, field, def)                                                                     \
    {                                                                                              \
#n, K_STRING, 1, sizeof(((struct ecod_config *)0)->field) - 1, def,                        \
            offsetof(struct ecod_config, field)                                                    \
    }

static const struct key KEYS[] = {
    STR_KEY(socket, socket, ECOD_DEFAULT_SOCKET),
    STR_KEY(socket_group, socket_group, NULL),
    STR_KEY(state_dir, state_dir, ECOD_DEFAULT_STATE),
    /* the serving daemon's pid, for `kill -TERM "$(cat FILE)"`; unset: ecoschedd.pid in the
     * state directory, one per daemon (two daemons cannot share a state directory) */
    STR_KEY(pid_file, pid_file, NULL),
    {"platform", K_PLATFORM, 0, 0, "auto", offsetof(struct ecod_config, platform)},
    STR_KEY(nvml_library, nvml_library, NULL),
    {"log_level", K_LEVEL, 0, 0, "info", offsetof(struct ecod_config, log_level)},
    {"util_window_s", K_SECONDS, 0, 86400, "10", offsetof(struct ecod_config, util_window_s)},
    {"grace_s", K_SECONDS, 0, 86400, "30", offsetof(struct ecod_config, grace_s)},
    /* below 0.1 s the pass would outrun NVML's own sampling; above a minute queued jobs wait
     * too long for freed GPUs */
    {"tick_s", K_SECONDS, 0.1, 60, "1", offsetof(struct ecod_config, tick_s)},
    {"tcp_listen", K_LOOPBACK, 0, sizeof(((struct ecod_config *)0)->tcp_listen) - 1, NULL,
     offsetof(struct ecod_config, tcp_listen)},
    STR_KEY(tcp_token_file, tcp_token_file, NULL),
    {"queue_policy", K_QPOLICY, 0, 0, "fifo", offsetof(struct ecod_config, queue_policy)},
    {"gpu_strategy", K_GSTRATEGY, 0, 0, "live", offsetof(struct ecod_config, gpu_strategy)},
    {"memthr_wait_s", K_SECONDS, 0, 86400, "30", offsetof(struct ecod_config, memthr_wait_s)},
    /* live's sharing gates, the library's defaults (docs/policies/gpu-selection.md): a job
     * joins a GPU under 70% averaged utilisation, up to 16 jobs, at once after a start */
    {"share_util", K_FRACTION, 0, 1, "0.7", offsetof(struct ecod_config, share_util)},
    {"share_max_jobs", K_COUNT, 0, ECO_GPUSEL_MAX_JOBS, "0",
     offsetof(struct ecod_config, share_max_jobs)},
    {"share_settle_s", K_SECONDS, 0, 86400, "0", offsetof(struct ecod_config, share_settle_s)},
    {"auto_cap_max_slowdown", K_FRACTION, 0, 1, "0.10",
     offsetof(struct ecod_config, auto_cap_max_slowdown)},
    {"power_knob", K_KNOB, 0, 0, "limit", offsetof(struct ecod_config, power_knob)},
    /* finished jobs (and their logs) are deleted this long after they ended; 0: never. A
     * week: a user back after a weekend still finds last week's jobs and output, while a busy
     * server (thousands of jobs a day) keeps tens of thousands, not millions. At most 10 years. */
    /* node power budget for the running jobs' GPUs (docs/daemon/README.md, "Node power
     * budget"); 0: none. 100 kW bounds it well above any one server (8 x 1 kW GPUs plus host)
     * so that a value meant in mW is refused. */
    {"power_budget_w", K_WATTS, 0, 100000, "0", offsetof(struct ecod_config, power_budget_w)},
    {"power_policy", K_CAPPER, 0, sizeof(((struct ecod_config *)0)->power_policy) - 1, "mpc",
     offsetof(struct ecod_config, power_policy)},
    {"keep_finished_s", K_SECONDS, 0, 315360000, "604800",
     offsetof(struct ecod_config, keep_finished_s)},
    /* grid signals (docs/daemon/README.md, "Grid signals"): a file an operator's job
     * refreshes, or a loopback HTTP source; the carbon policy that defers jobs with slack */
    STR_KEY(carbon, carbon, NULL),
    STR_KEY(price, price, NULL),
    {"carbon_url", K_URL, 0, sizeof(((struct ecod_config *)0)->carbon_url) - 1, NULL,
     offsetof(struct ecod_config, carbon_url)},
    {"price_url", K_URL, 0, sizeof(((struct ecod_config *)0)->price_url) - 1, NULL,
     offsetof(struct ecod_config, price_url)},
    {"carbon_policy", K_CPOLICY, 0, sizeof(((struct ecod_config *)0)->carbon_policy) - 1, "none",
     offsetof(struct ecod_config, carbon_policy)},
    /* the daemon knows no job's run time; an hour, the signals' step, is what a policy assumes
     * (a shorter job's window is then judged by its first hour) */
    {"carbon_run_s", K_SECONDS, 1, 31536000, "3600", offsetof(struct ecod_config, carbon_run_s)},
    /* a *_url source is fetched this often: 5 minutes follows a source that updates hourly
     * within a twelfth of its step; at least 1 s, so that a source is not asked without pause
     * (the fetch runs on the grid reader thread, off the loop) */
    {"signal_fetch_s", K_SECONDS, 1, 86400, "300", offsetof(struct ecod_config, signal_fetch_s)},
    /* where each job's cgroup is made, by which its processes are told apart for its energy
     * (docs/daemon/README.md, "Energy") */
    {"job_cgroup", K_CGROUP, 0, sizeof(((struct ecod_config *)0)->job_cgroup) - 1, "auto",
     offsetof(struct ecod_config, job_cgroup)},
    /* the cluster listener (docs/daemon/README.md, "Cluster listener (MUNGE)") */
    {"cluster_listen", K_HOSTPORT, 0, sizeof(((struct ecod_config *)0)->cluster_listen) - 1, NULL,
     offsetof(struct ecod_config, cluster_listen)},
    STR_KEY(munge_socket, munge_socket, NULL),
    {"cluster_admin_user", K_USER, 0, sizeof(((struct ecod_config *)0)->cluster_admin_user) - 1,
     NULL, offsetof(struct ecod_config, cluster_admin_user)},
    {"cluster_read_users", K_USERS, 0, sizeof(((struct ecod_config *)0)->cluster_read_users) - 1,
     NULL, offsetof(struct ecod_config, cluster_read_users)},
    STR_KEY(cluster_tls_cert, cluster_tls_cert, NULL),
    STR_KEY(cluster_tls_key, cluster_tls_key, NULL),
};
#define N_KEYS (sizeof KEYS / sizeof KEYS[0])

int ecod__config_user(const char *v, uid_t *uid)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (*v >= '0' && *v <= '9' && !*end && !errno && n < (uid_t)-1) {
        *uid = (uid_t)n;
        return 0;
    }
    struct passwd *pw = *v ? getpwnam(v) : NULL;
    if (!pw)
        return -ENOENT;
    *uid = pw->pw_uid;
    return 0;
}

/* "*" or a comma list of users (ecod__config_user). NULL when fine, else why (in buf). */
static const char *check_users(const char *v, char *buf, size_t size)
{
    if (!strcmp(v, "*"))
        return NULL;
    for (const char *p = v;; p++) {
        size_t n = strcspn(p, ",");
        char one[64];
        uid_t uid;
        if (n == 0 || n >= sizeof one) {
            snprintf(buf, size, "'%s' is not * or a comma list of user names or uids", v);
            return buf;
        }
        memcpy(one, p, n);
        one[n] = '\0';
        if (ecod__config_user(one, &uid) < 0) {
            snprintf(buf, size, "no such user '%s' (a user name of this host or a uid)", one);
            return buf;
        }
        p += n;
        if (!*p)
            return NULL;
    }
}

/* host:port with a loopback host (127.0.0.0/8, ::1 as [::1], or localhost), port 1..65535;
 * any host when !loopback. NULL when fine, else what is wrong. */
static const char *check_hostport(const char *v, bool loopback)
{
    char host[64];
    const char *colon = strrchr(v, ':');
    if (!colon || colon == v)
        return "must be HOST:PORT";
    size_t hl = (size_t)(colon - v);
    if (v[0] == '[' && hl >= 2 && v[hl - 1] == ']') {
        v++;
        hl -= 2;
    }
    if (hl >= sizeof host)
        return "host too long";
    memcpy(host, v, hl);
    host[hl] = '\0';
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || errno || port < 1 || port > 65535)
        return "port must be 1..65535";
    if (!loopback)
        return host[0] ? NULL : "must be HOST:PORT";
    struct in_addr a4;
    struct in6_addr a6;
    if (!strcasecmp(host, "localhost"))
        return NULL;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127 ? NULL
                                               : "only loopback addresses (127.0.0.0/8, [::1], "
                                                 "localhost) are allowed";
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) ? NULL
                                         : "only loopback addresses (127.0.0.0/8, [::1], "
                                           "localhost) are allowed";
    return "host must be a loopback IP address or localhost";
}

/* Parses value v of key k into c. 0 when fine, else -EINVAL and err says why. */
static int set_value(const struct key *k, const char *v, struct ecod_config *c,
                     struct eco_error *err)
{
    char *field = (char *)c + k->off;
    const char *why = NULL;
    char *end;
    double x;
    int lvl;
    switch (k->type) {
    case K_STRING:
    case K_LOOPBACK:
    case K_HOSTPORT:
    case K_USER:
    case K_USERS: {
        char buf[160];
        uid_t uid;
        if (!*v)
            return eco_errorf(err, -EINVAL, "needs a value");
        if (strlen(v) > (size_t)k->max)
            return eco_errorf(err, -EINVAL, "longer than %.0f bytes", k->max);
        if ((k->type == K_LOOPBACK || k->type == K_HOSTPORT) &&
            (why = check_hostport(v, k->type == K_LOOPBACK)))
            return eco_errorf(err, -EINVAL, "%s", why);
        if (k->type == K_USER && ecod__config_user(v, &uid) < 0)
            return eco_errorf(err, -EINVAL, "no such user '%s' (a user name of this host or a uid)",
                              v);
        if (k->type == K_USERS && (why = check_users(v, buf, sizeof buf)))
            return eco_errorf(err, -EINVAL, "%s", why);
        strcpy(field, v);
        return 0;
    }
    case K_GSTRATEGY:
        if (!eco_gpusel_find(v)) {
            char names[ECOD_NAMES_MAX];
            return eco_errorf(err, -EINVAL, "must be %s",
                              ecod__gpu_strategy_names(names, sizeof names));
        }
        snprintf(field, sizeof((struct ecod_config *)0)->gpu_strategy, "%s", v);
        return 0;
    case K_QPOLICY:
        if (!ecod__queue_policy_find(v)) {
            char names[ECOD_NAMES_MAX];
            return eco_errorf(err, -EINVAL, "must be %s",
                              ecod__queue_policy_names(names, sizeof names));
        }
        snprintf(field, sizeof((struct ecod_config *)0)->queue_policy, "%s", v);
        return 0;
    case K_PLATFORM:
        if (strcasecmp(v, "auto") && !eco_platform_find(v)) {
            char names[ECOD_NAMES_MAX];
            return eco_errorf(err, -EINVAL, "must be %s",
                              ecod__platform_names(names, sizeof names));
        }
        snprintf(field, sizeof c->platform, "%s", v);
        return 0;
    case K_KNOB:
        if (strcasecmp(v, "limit") && strcasecmp(v, "clock"))
            return eco_errorf(err, -EINVAL, "must be limit or clock");
        snprintf(field, sizeof c->power_knob, "%s", v);
        return 0;
    case K_CAPPER:
        if (strlen(v) > (size_t)k->max)
            return eco_errorf(err, -EINVAL, "longer than %.0f bytes", k->max);
        if (ecod__nodecap_check(v, err) < 0)
            return -EINVAL;
        strcpy(field, v);
        return 0;
    case K_URL:
        if (strlen(v) > (size_t)k->max)
            return eco_errorf(err, -EINVAL, "longer than %.0f bytes", k->max);
        if ((why = ecod__grid_check_url(v)))
            return eco_errorf(err, -EINVAL, "%s", why);
        strcpy(field, v);
        return 0;
    case K_CPOLICY: {
        const char *params = NULL;
        if (strlen(v) > (size_t)k->max)
            return eco_errorf(err, -EINVAL, "longer than %.0f bytes", k->max);
        if (strcmp(v, "none") && !eco_carbon_find(v, &params))
            return eco_errorf(err, -EINVAL, "must be none, shift, lwa or threshold[:PARAMS]");
        strcpy(field, v);
        return 0;
    }
    case K_CGROUP:
        if (strlen(v) > (size_t)k->max)
            return eco_errorf(err, -EINVAL, "longer than %.0f bytes", k->max);
        if (strcmp(v, "auto") && strcmp(v, "off") && v[0] != '/')
            return eco_errorf(err, -EINVAL, "'%s' is not auto, off or an absolute path", v);
        strcpy(field, v);
        return 0;
    case K_LEVEL:
        if ((lvl = eco_log_level_parse(v)) < 0)
            return eco_errorf(err, -EINVAL, "must be error, warning, info or debug");
        *(int *)(void *)field = lvl;
        return 0;
    case K_SECONDS:
    case K_FRACTION:
    case K_WATTS:
    case K_COUNT:
        errno = 0;
        x = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(x) || x < k->min || x > k->max ||
            (k->type == K_COUNT && x != floor(x)))
            return eco_errorf(err, -EINVAL, "'%s' is not a %s %g..%g", v,
                              k->type == K_SECONDS ? "number of seconds"
                              : k->type == K_WATTS ? "power in watts"
                              : k->type == K_COUNT ? "whole number"
                                                   : "fraction",
                              k->min, k->max);
        *(double *)(void *)field = x;
        return 0;
    }
    return eco_errorf(err, -EINVAL, "unknown type");
}

int ecod__config_set(struct ecod_config *c, const char *key, const char *value,
                     struct eco_error *err)
{
    struct eco_error why = {{0}};
    for (size_t k = 0; k < N_KEYS; k++)
        if (!strcmp(KEYS[k].name, key)) {
            int rc = set_value(&KEYS[k], value, c, &why);
            /* cut at 159 bytes, as the messages always were (a long bad value is not echoed
             * whole) */
            return rc < 0 ? eco_errorf(err, rc, "%.159s", why.msg) : 0;
        }
    return eco_errorf(err, -ENOENT, "unknown setting '%s'", key);
}

void ecod__config_defaults(struct ecod_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < N_KEYS; i++)
        if (KEYS[i].def)
            set_value(&KEYS[i], KEYS[i].def, c, NULL);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* The cluster listener's keys that go together (file only: they have no options). */
static int cluster_pairs(const char *path, const struct ecod_config *c, const unsigned *set_on)
{
    int rc = 0;
    for (size_t k = 0; k < N_KEYS; k++) {
        const char *name = KEYS[k].name;
        if (!set_on[k])
            continue;
        if ((!strcmp(name, "cluster_tls_cert") && !c->cluster_tls_key[0]) ||
            (!strcmp(name, "cluster_tls_key") && !c->cluster_tls_cert[0])) {
            fprintf(stderr, "%s:%u: key '%s': needs %s too\n", path, set_on[k], name,
                    strcmp(name, "cluster_tls_cert") ? "cluster_tls_cert" : "cluster_tls_key");
            rc = -EINVAL;
        }
    }
    return rc;
}

int ecod__config_load(const char *path, struct ecod_config *out)
{
    struct ecod_config c = *out;
    unsigned set_on[N_KEYS] = {0};
    char *line = NULL;
    size_t lcap = 0;
    unsigned lineno = 0;
    int rc = 0;
    FILE *f = fopen(path, "re");
    if (!f) {
        rc = -errno;
        fprintf(stderr, "ecoschedd: %s: %s\n", path, strerror(errno));
        goto out;
    }
    while (getline(&line, &lcap, f) >= 0) {
        lineno++;
        char *s = trim(line), *eq = strchr(s, '=');
        if (!*s || *s == '#')
            continue;
        if (!eq) {
            fprintf(stderr, "%s:%u: expected 'key = value'\n", path, lineno);
            rc = -EINVAL;
            continue;
        }
        *eq = '\0';
        char *name = trim(s), *v = trim(eq + 1);
        size_t k = 0;
        while (k < N_KEYS && strcmp(KEYS[k].name, name))
            k++;
        struct eco_error why = {{0}};
        int bad;
        if (k == N_KEYS) {
            fprintf(stderr, "%s:%u: unknown key '%s'\n", path, lineno, name);
            rc = -EINVAL;
            continue;
        }
        if (set_on[k])
            bad = eco_errorf(&why, -EINVAL, "already set on line %u", set_on[k]);
        else
            bad = set_value(&KEYS[k], v, &c, &why);
        if (bad < 0) { /* cut at 159 bytes, as ecod__config_set's */
            fprintf(stderr, "%s:%u: key '%s': %.159s\n", path, lineno, name, why.msg);
            rc = -EINVAL;
        }
        set_on[k] = lineno;
    }
    if (ferror(f)) {
        rc = -EIO;
        fprintf(stderr, "ecoschedd: %s: read error\n", path);
    }
    /* keys that only make sense together */
    for (size_t k = 0; k < N_KEYS; k++)
        if (!strcmp(KEYS[k].name, "tcp_listen") && set_on[k] && !c.tcp_token_file[0]) {
            fprintf(stderr, "%s:%u: key 'tcp_listen': needs tcp_token_file\n", path, set_on[k]);
            rc = -EINVAL;
        }
    if (cluster_pairs(path, &c, set_on) < 0)
        rc = -EINVAL;
    if (rc == 0)
        *out = c;
out:
    free(line);
    if (f)
        fclose(f);
    return rc;
}
