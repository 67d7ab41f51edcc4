/* SPDX-License-Identifier: MIT */
/* ecoschedd: the GPU-server daemon. Options, logging, the unix socket, and the one event loop
 * that serves the HTTP API and runs the scheduling pass every second (docs/daemon/README.md). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <microhttpd.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "api.h"
#include "cluster.h"
#include "config.h"
#include "ecod.h"
#include "jobcg.h"
#include "lister.h"
#include "nodecap.h"
#include "queue.h"
#include "sched.h"
#include "startup.h"
#include "tcp.h"
#include "util/fs.h"

#ifndef ECO_VERSION
#define ECO_VERSION "dev"
#endif

#define DEFAULT_SOCKET ECOD_DEFAULT_SOCKET
#define DEFAULT_STATE ECOD_DEFAULT_STATE

struct opts {
    const char *socket;
    const char *socket_group;
    const char *state_dir;
    const char *platform;
    const char *nvml_lib;
    bool foreground;
    bool accept_lost_jobs; /* --accept-lost-jobs: open a store that lost acknowledged jobs */
    const char *queue_policy;
    struct eco_gpusel_params sel;
    struct ecod_config cfg; /* the config file's values (strings above may point into it) */
};

static void usage(FILE *f)
{
    char platforms[ECOD_NAMES_MAX], strategies[ECOD_NAMES_MAX];
    fprintf(
        f,
        "usage: ecoschedd [OPTIONS]\n\n"
        "The ecosched GPU-server daemon: runs jobs on GPUs chosen by their live status.\n\n"
        "  --config FILE        config file (default " ECOD_DEFAULT_CONFIG " if it exists);\n"
        "                       the options below override its keys\n"
        "  --socket PATH        unix socket of the HTTP API (default " DEFAULT_SOCKET ")\n"
        "  --socket-group NAME  group owning the socket (mode 0660); default: the daemon's\n"
        "  --state-dir DIR      job store jobs.db, logs/ and run/ (default " DEFAULT_STATE ")\n"
        "  --pid-file PATH      the serving daemon's pid (default STATE_DIR/ecoschedd.pid):\n"
        "                       kill -TERM \"$(cat PATH)\" stops this daemon only\n"
        "  --platform P         %s (default auto: nvml, else none)\n"
        "  --nvml-library PATH  NVML library to load (nvml and fake platforms)\n"
        "  --foreground         stay attached and log to stderr (default: detach, syslog)\n"
        "  --accept-lost-jobs   start on a job store that lost acknowledged jobs (a deleted\n"
        "                       or cut -wal file, an older jobs.db restored): once, after\n"
        "                       ecoschedd refused it; their ids are not given again\n"
        "  --log-level L        error, warning, info (default) or debug\n"
        "  --util-window S      utilisation averaging window of GPU selection (default 10)\n"
        "  --grace S            claim of a just-started job on its GPUs (default 30)\n"
        "  --queue-policy P     queue order: fifo (default; head-of-line), greedy (start\n"
        "                       every job that fits) or edf (earliest deadline first)\n"
        "  --tcp-listen H:P     also serve the API on loopback TCP (127.0.0.1:PORT, [::1]:PORT\n"
        "                       or localhost:PORT); needs --tcp-token-file\n"
        "  --tcp-token-file F   bearer token of the TCP listener (mode 0600; TCP clients act\n"
        "                       as the file's owner)\n"
        "  --cluster-listen H:P serve the API on a cluster address (any host) to callers\n"
        "                       with a MUNGE credential (powerd --node-auth munge); config\n"
        "                       keys cluster_admin_user, cluster_read_users, cluster_tls_*\n"
        "  --munge-socket PATH  munged's socket (default munge's own)\n"
        "  --gpu-strategy S     GPU choice: %s\n"
        "                       (default live; docs/policies/gpu-selection.md)\n"
        "  --memthr-wait S      memory-threshold: seconds between starts (default 30)\n"
        "  --share-util U       live: a sharing job joins a GPU under this averaged\n"
        "                       utilisation, 0..1 (default 0.7)\n"
        "  --share-max-jobs N   live: most jobs on one GPU, 0..16 (default 0: 16)\n"
        "  --share-settle S     live: no job joins a GPU whose newest job started less\n"
        "                       than S seconds ago (default 0)\n"
        "  --power-budget W     node power budget for the jobs' GPUs (0: none, default)\n"
        "  --power-policy P     capper for it, FAMILY[:key=value,...] (default mpc)\n"
        "  --carbon FILE, --price FILE  grid signals (re-read when changed)\n"
        "  --carbon-url URL, --price-url URL  the same from a loopback HTTP source\n"
        "  --carbon-policy P    none, shift, lwa or threshold: defers jobs with slack\n"
        "  --job-cgroup C       each job's cgroup for its energy: auto (default), off or a\n"
        "                       cgroup2 directory\n"
        "  -h, --help           this text;  -V, --version  the version\n",
        ecod__platform_names(platforms, sizeof platforms),
        ecod__gpu_strategy_names(strategies, sizeof strategies));
}

/* The settings (the config file's, then the options') into o and d. */
static void apply_config(struct opts *o, struct ecod *d)
{
    const struct ecod_config *c = &o->cfg;
    o->socket = c->socket;
    o->socket_group = c->socket_group[0] ? c->socket_group : NULL;
    o->state_dir = c->state_dir;
    o->platform = c->platform;
    o->nvml_lib = c->nvml_library[0] ? c->nvml_library : NULL;
    eco_log_level = c->log_level;
    eco_gpusel_params_default(&o->sel);
    o->sel.window_s = c->util_window_s;
    o->sel.grace_s = c->grace_s;
    d->tick_s = c->tick_s;
    o->queue_policy = c->queue_policy;
    d->gpu_strategy = eco_gpusel_find(c->gpu_strategy)->name;
    o->sel.memthr_wait_s = c->memthr_wait_s;
    o->sel.share_util_max = c->share_util;
    o->sel.share_max_jobs = (uint32_t)c->share_max_jobs;
    o->sel.share_settle_s = c->share_settle_s;
    d->auto_cap_max_slowdown = c->auto_cap_max_slowdown;
    d->keep_finished_s = c->keep_finished_s;
    d->power_knob_clock = !strcasecmp(c->power_knob, "clock");
    d->power_budget_w = c->power_budget_w;
    d->power_policy = c->power_policy;
}

/* The config file: --config FILE (which must exist), else ECOD_DEFAULT_CONFIG when it exists.
 * Its values become the defaults the command-line options then override. 0, or 2 (errors
 * written). */
static int load_config(int argc, char **argv, struct opts *o)
{
    const char *path = NULL;
    struct ecod_config *c = &o->cfg;
    ecod__config_defaults(c);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strncmp(argv[i], "--config=", 9))
            path = argv[i] + 9;
        else if (!strcmp(argv[i], "--config"))
            path = i + 1 < argc ? argv[i + 1] : "";
    }
    if (path && !*path) {
        fprintf(stderr, "ecoschedd: --config needs a value\n");
        return 2;
    }
    if (!path && access(ECOD_DEFAULT_CONFIG, F_OK) == 0)
        path = ECOD_DEFAULT_CONFIG;
    if (path && ecod__config_load(path, c) < 0)
        return 2;
    return 0;
}

/* The options: each sets its config key through ecod__config_set, validated like the file's.
 * A bad value is reported as before the table: by the option's name ("--grace: '-1' is not a
 * number of seconds 0..86400"), by its key (bad), or with a message of its own (bad_fmt). */
static const struct flag {
    const char *name;
    const char *key;     /* its config key; NULL: --config (read first, by load_config) */
    const char *bad_fmt; /* NULL, or the message, a format with the value's %s */
    bool by_key;         /* the message names the key: "tcp_listen 'VALUE': what is wrong" */
    /* NULL, or the names a bad value is not one of: "'VALUE' is not fifo, greedy or edf" */
    const char *(*names)(char *buf, size_t size);
} FLAGS[] = {
    {"--socket", "socket", NULL, false, NULL},
    {"--socket-group", "socket_group", NULL, false, NULL},
    {"--state-dir", "state_dir", NULL, false, NULL},
    {"--pid-file", "pid_file", NULL, false, NULL},
    {"--platform", "platform", "unknown '%s' (%s)", false, ecod__platform_names},
    {"--nvml-library", "nvml_library", NULL, false, NULL},
    {"--log-level", "log_level", "'%s' is not error, warning, info or debug", false, NULL},
    {"--util-window", "util_window_s", NULL, false, NULL},
    {"--grace", "grace_s", NULL, false, NULL},
    {"--config", NULL, NULL, false, NULL},
    {"--queue-policy", "queue_policy", NULL, false, ecod__queue_policy_names},
    {"--tcp-listen", "tcp_listen", NULL, true, NULL},
    {"--tcp-token-file", "tcp_token_file", NULL, true, NULL},
    {"--gpu-strategy", "gpu_strategy", "unknown '%s' (%s)", false, ecod__gpu_strategy_names},
    {"--memthr-wait", "memthr_wait_s", NULL, false, NULL},
    {"--share-util", "share_util", NULL, false, NULL},
    {"--share-max-jobs", "share_max_jobs", NULL, false, NULL},
    {"--share-settle", "share_settle_s", NULL, false, NULL},
    {"--power-budget", "power_budget_w", NULL, true, NULL},
    {"--power-policy", "power_policy", NULL, true, NULL},
    {"--carbon", "carbon", NULL, true, NULL},
    {"--price", "price", NULL, true, NULL},
    {"--carbon-url", "carbon_url", NULL, true, NULL},
    {"--price-url", "price_url", NULL, true, NULL},
    {"--carbon-policy", "carbon_policy", NULL, true, NULL},
    {"--job-cgroup", "job_cgroup", NULL, true, NULL},
    {"--cluster-listen", "cluster_listen", NULL, true, NULL},
    {"--munge-socket", "munge_socket", NULL, true, NULL},
};

/* Option f's value v into o->cfg. 0, or -EINVAL (written to stderr). */
static int set_flag(struct opts *o, const struct flag *f, const char *v)
{
    struct eco_error err = {{0}};
    if (!f->key || ecod__config_set(&o->cfg, f->key, v, &err) == 0)
        return 0;
    if (f->by_key) {
        fprintf(stderr, "ecoschedd: %s '%s': %s\n", f->key, v, err.msg);
    } else if (f->names) {
        char names[ECOD_NAMES_MAX];
        fprintf(stderr, "ecoschedd: %s: ", f->name);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        /* the table's own formats: the value, then the names */
        fprintf(stderr, f->bad_fmt ? f->bad_fmt : "'%s' is not %s", v,
                f->names(names, sizeof names));
#pragma GCC diagnostic pop
        fputc('\n', stderr);
    } else if (f->bad_fmt) {
        fprintf(stderr, "ecoschedd: %s: ", f->name);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        fprintf(stderr, f->bad_fmt, v); /* the table's own formats, one %s each */
#pragma GCC diagnostic pop
        fputc('\n', stderr);
    } else {
        fprintf(stderr, "ecoschedd: %s: %s\n", f->name, err.msg);
    }
    return -EINVAL;
}

/* 0: run; 1: exit 0 (help, version); 2: bad usage. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const char *eq = strchr(a, '=');
        char name[64];
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, a, n);
        name[n] = '\0';
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
            printf("ecoschedd %s\n", ECO_VERSION);
            return 1;
        }
        if (!strcmp(a, "--foreground")) {
            o->foreground = true;
            continue;
        }
        if (!strcmp(a, "--accept-lost-jobs")) {
            o->accept_lost_jobs = true;
            continue;
        }
        size_t k = 0;
        while (k < sizeof FLAGS / sizeof FLAGS[0] && strcmp(FLAGS[k].name, name))
            k++;
        if (k == sizeof FLAGS / sizeof FLAGS[0]) {
            fprintf(stderr, "ecoschedd: unknown option '%s' (try --help)\n", a);
            return 2;
        }
        v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v || !*v) {
            fprintf(stderr, "ecoschedd: %s needs a value\n", name);
            return 2;
        }
        if (set_flag(o, &FLAGS[k], v) < 0)
            return 2;
    }
    if (o->cfg.tcp_listen[0] && !o->cfg.tcp_token_file[0]) {
        fprintf(stderr, "ecoschedd: --tcp-listen needs --tcp-token-file (or the tcp_token_file "
                        "key)\n");
        return 2;
    }
    return 0;
}

/* A killed daemon's listening socket stays open, and connectable, in a job it was forking at
 * that moment until the job execs (the socket is close-on-exec): milliseconds. A socket that
 * still accepts after CLAIM_TRIES x CLAIM_WAIT_NS = 2 s is a live daemon's. */
#define CLAIM_TRIES 40
#define CLAIM_WAIT_NS 50000000L

/* 1 when a connection to the socket succeeds, 0 when it is refused (nobody listens), or a
 * negative errno. */
static int connects(const struct sockaddr_un *sa)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;
    if (fd < 0)
        return -errno;
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0)
        rc = 1;
    else
        rc = errno == ECONNREFUSED ? 0 : -errno;
    close(fd);
    return rc;
}

/* Makes the socket path free to bind: nothing there, or a stale socket file (connecting is
 * refused: no daemon listens), which is removed. Returns 0, or fails, removing nothing, when a
 * daemon answers there (-EADDRINUSE) or the path is not a socket (-EEXIST). */
static int claim_socket(const char *path, struct eco_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;
    int rc = 0;
    if (strlen(path) >= sizeof sa.sun_path) {
        rc = eco_errorf(err, -ENAMETOOLONG, "%s: socket path too long (max %zu bytes)", path,
                        sizeof sa.sun_path - 1);
        goto out;
    }
    strcpy(sa.sun_path, path);
    if (lstat(path, &st) < 0) {
        if (errno != ENOENT) {
            rc = eco_errorf(err, -errno, "%s: %s", path, strerror(errno));
        }
        goto out;
    }
    if (!S_ISSOCK(st.st_mode)) {
        rc = eco_errorf(err, -EEXIST, "%s: exists and is not a socket (left as it is)", path);
        goto out;
    }
    for (int i = 0; (rc = connects(&sa)) == 1 && i < CLAIM_TRIES; i++)
        nanosleep(&(struct timespec){.tv_nsec = CLAIM_WAIT_NS}, NULL);
    if (rc == 1) {
        rc = eco_errorf(err, -EADDRINUSE,
                        "%s: another ecoschedd is running there (it answers on the socket; "
                        "stop it first)",
                        path);
        goto out;
    }
    if (rc < 0) {
        eco_errorf(err, rc, "%s: cannot tell whether a daemon listens there: %s", path,
                   strerror(-rc));
        goto out;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        rc = eco_errorf(err, -errno, "%s: cannot remove the stale socket: %s", path,
                        strerror(errno));
        goto out;
    }
    ECO_LOG(ECO_LOG_INFO, "main", "%s: removed a stale socket (no daemon listens on it)", path);
out:
    return rc;
}

/* Creates, binds (mode 0660) and listens on the unix socket. main claimed the path before
 * anything else (claim_socket: its length checked, a stale socket removed); a daemon that
 * bound it since makes bind fail with EADDRINUSE. */
static int listen_unix(const struct opts *o, struct eco_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = -1, rc = 0;
    char dir[sizeof sa.sun_path];
    strcpy(sa.sun_path, o->socket);
    strcpy(dir, o->socket);
    if ((rc = eco_mkdir(dirname(dir), 0755)) < 0) {
        eco_errorf(err, rc, "%s: cannot create its directory: %s", o->socket, strerror(-rc));
        goto out;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    mode_t old = umask(0117);
    int b = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (b < 0 || listen(fd, 128) < 0 || chmod(o->socket, 0660) < 0) {
        rc = eco_errorf(err, -errno, "%s: cannot listen: %s", o->socket, strerror(errno));
        goto out;
    }
    if (o->socket_group) {
        struct group *g = getgrnam(o->socket_group);
        if (!g || chown(o->socket, (uid_t)-1, g->gr_gid) < 0) {
            rc = eco_errorf(err, g ? -errno : -ENOENT, "%s: --socket-group %s: %s", o->socket,
                            o->socket_group, g ? strerror(errno) : "no such group");
            goto out;
        }
    }
    rc = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The fake NVML keeps its GPUs in its state file (ECOSCHED_FAKE_NVML_STATE, else
 * /tmp/ecosched-fake-nvml-UID.state, as src/platform/fake_nvml.c names it): a file that
 * exists keeps its GPU count, and ECOSCHED_FAKE_NVML_GPUS only sizes a new one. True, with
 * the path in buf, when the variable is set and the file exists before the platform opens. */
static bool fake_state_exists(char *buf, size_t cap)
{
    const char *gpus = getenv("ECOSCHED_FAKE_NVML_GPUS"), *p = getenv("ECOSCHED_FAKE_NVML_STATE");
    struct stat st;
    if (!gpus || !*gpus)
        return false;
    if (p && *p)
        snprintf(buf, cap, "%s", p);
    else
        snprintf(buf, cap, "/tmp/ecosched-fake-nvml-%u.state", (unsigned)getuid());
    return stat(buf, &st) == 0;
}

static int open_platform(const struct opts *o, struct ecod *d, struct eco_error *err)
{
    int rc;
    char state[4096];
    bool fake_old = !strcasecmp(o->platform, "fake") && fake_state_exists(state, sizeof state);
    if (strcasecmp(o->platform, "auto")) {
        rc = eco_platform_open(o->platform, o->nvml_lib, &d->platform, err);
    } else {
        rc = eco_platform_open("nvml", o->nvml_lib, &d->platform, err);
        if (rc == -ENOENT || rc == -ENODEV) {
            ECO_LOG(ECO_LOG_INFO, "platform", "auto: no NVML (%s); running without GPUs", err->msg);
            rc = eco_platform_open("none", NULL, &d->platform, err);
        }
    }
    if (rc < 0)
        return rc;
    ECO_LOG(ECO_LOG_INFO, "platform", "%s: %u GPUs", eco_platform_name(d->platform),
            eco_platform_gpu_count(d->platform));
    const char *gpus = getenv("ECOSCHED_FAKE_NVML_GPUS");
    if (fake_old && gpus && strtoul(gpus, NULL, 10) != eco_platform_gpu_count(d->platform))
        ECO_LOG(ECO_LOG_WARN, "platform",
                "ECOSCHED_FAKE_NVML_GPUS=%s ignored: the fake NVML state file %s exists and "
                "keeps its %u GPUs (remove it, or set ECOSCHED_FAKE_NVML_STATE to a new file, "
                "for %s)",
                gpus, state, eco_platform_gpu_count(d->platform), gpus);
    return 0;
}

/* ecosched-fake-gpu-run for the fake platform: $ECOSCHED_FAKE_GPU_RUN, else next to us. */
static const char *fake_run_path(char *buf, size_t cap)
{
    const char *env = getenv("ECOSCHED_FAKE_GPU_RUN");
    if (env && *env)
        return env;
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash || (size_t)(slash - buf) + sizeof "/ecosched-fake-gpu-run" > cap)
        return NULL;
    strcpy(slash, "/ecosched-fake-gpu-run");
    return access(buf, X_OK) == 0 ? buf : NULL;
}

static int wake_pipe[2] = {-1, -1};
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    int e = errno;
    if (sig == SIGTERM || sig == SIGINT)
        stop_signal = sig;
    if (write(wake_pipe[1], "x", 1) < 0) {
        /* pipe full: the loop is awake anyway */
    }
    errno = e;
}

static int setup_signals(struct eco_error *err)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (pipe(wake_pipe) < 0)
        return eco_errorf(err, -errno, "pipe: %s", strerror(errno));
    for (int i = 0; i < 2; i++) {
        fcntl(wake_pipe[i], F_SETFL, O_NONBLOCK);
        fcntl(wake_pipe[i], F_SETFD, FD_CLOEXEC);
    }
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    return 0;
}

/* Detaches (unless --foreground): the parent waits for the child to say it is serving, so
 * start-up errors still reach the caller's terminal and exit status. Returns the fd to
 * report readiness on (-1 in the foreground), or exits in the parent. */
static int detach(bool foreground)
{
    int p[2];
    char c;
    if (foreground)
        return -1;
    if (pipe(p) < 0) {
        perror("ecoschedd: pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("ecoschedd: fork");
        exit(1);
    }
    if (pid > 0) {
        close(p[1]);
        ssize_t n;
        while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
            ;
        _exit(n == 1 ? 0 : 1);
    }
    close(p[0]);
    setsid();
    return p[1];
}

static void ready(int fd)
{
    if (fd < 0)
        return;
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2)
            close(null);
    }
    openlog("ecoschedd", LOG_PID, LOG_DAEMON);
    eco_log_setup("ecoschedd", true);
    if (write(fd, "1", 1) < 0)
        ECO_LOG(ECO_LOG_WARN, "main", "readiness pipe: %s", strerror(errno));
    close(fd);
}

/* Private modes of the state: the store holds every job's environment (API keys included),
 * so the directory is the daemon's alone and its files are read and written by it only;
 * users read their outputs through the daemon (`ecosched logs`). */
#define STATE_DIR_MODE 0700
#define STATE_FILE_MODE 0600

/* Tightens an existing path to `mode` when group or others have any access; -errno. A path
 * of another owner, or a sticky directory (/tmp), is shared: -EPERM rather than chmod. */
static int tighten(const char *path, mode_t mode)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (S_ISLNK(st.st_mode) || !(st.st_mode & 077))
        return 0; /* a symlink is not followed: the store opens its target, which stays */
    if (st.st_uid != geteuid() || (st.st_mode & 01000)) /* S_ISVTX, an XSI name */
        return -EPERM;
    if (chmod(path, mode) < 0)
        return -errno;
    ECO_LOG(ECO_LOG_WARN, "main", "%s: mode %04o was open to other users: now %04o", path,
            (unsigned)(st.st_mode & 07777), (unsigned)mode);
    return 0;
}

/* The state directory (created 0700, tightened to it when looser) and the store's existing
 * files, tightened to 0600 (new ones are created so by ecod__store_open). 0 or -errno. */
static int private_state(const struct ecod *d, struct eco_error *err)
{
    static const char *const SUFFIXES[] = {"", "-wal", "-shm", "-journal", ".ids"};
    char path[sizeof d->db_path + 16];
    int rc = 0;
    if ((rc = eco_mkdir(d->state_dir, STATE_DIR_MODE)) < 0) {
        eco_errorf(err, rc, "%s: cannot create: %s", d->state_dir, strerror(-rc));
        goto out;
    }
    if ((rc = tighten(d->state_dir, STATE_DIR_MODE)) < 0) {
        eco_errorf(err, rc,
                   "%s: open to other users and cannot be made private (mode %04o): "
                   "%s; use a directory of the daemon's own",
                   d->state_dir, STATE_DIR_MODE, strerror(-rc));
        goto out;
    }
    for (size_t i = 0; i < sizeof SUFFIXES / sizeof SUFFIXES[0]; i++) {
        snprintf(path, sizeof path, "%s%s", d->db_path, SUFFIXES[i]);
        if ((rc = tighten(path, STATE_FILE_MODE)) < 0) {
            eco_errorf(err, rc, "%s: cannot make it private (mode %04o): %s", path, STATE_FILE_MODE,
                       strerror(-rc));
            goto out;
        }
    }
out:
    return rc;
}

/* The HTTP servers: the unix socket's, then the TCP and cluster listeners' (NULL: off). */
#define N_SERVERS 3

/* The poll timeout in ms: the next tick, or sooner when a server has a timeout due. */
static int loop_timeout(const struct ecod *d, struct MHD_Daemon *const *srv)
{
    double wait_s = d->last_tick_mono + d->tick_s - eco_mono_s();
    int timeout = wait_s > 0 ? (int)(wait_s * 1000) + 1 : 0;
    for (int i = 0; i < N_SERVERS; i++) {
        MHD_UNSIGNED_LONG_LONG mhd_ms = 0;
        if (srv[i] && MHD_get_timeout(srv[i], &mhd_ms) == MHD_YES &&
            mhd_ms < (MHD_UNSIGNED_LONG_LONG)timeout)
            timeout = (int)mhd_ms;
    }
    return timeout;
}

static void loop(struct ecod *d, struct MHD_Daemon *const *srv, struct ecod_cluster *cl)
{
    char drain[64];
    ecod__sched_sample(d, eco_wall_s(), eco_mono_s());
    ecod__sched_pass(d, eco_wall_s(), eco_mono_s());
    while (!stop_signal) {
        /* fds < 0 (no listing worker, no TCP or cluster listener) are ignored by poll */
        struct pollfd pf[5 + N_SERVERS] = {{.fd = wake_pipe[0], .events = POLLIN},
                                           {.fd = ecod__lister_fd(d->lister), .events = POLLIN},
                                           {.fd = ecod__grid_fd(&d->grid), .events = POLLIN},
                                           {.fd = ecod__cluster_fd(cl), .events = POLLIN}};
        for (int i = 0; i < N_SERVERS; i++)
            pf[4 + i] = (struct pollfd){
                .fd = srv[i] ? MHD_get_daemon_info(srv[i], MHD_DAEMON_INFO_EPOLL_FD)->epoll_fd : -1,
                .events = POLLIN};
        if (poll(pf, 4 + N_SERVERS, loop_timeout(d, srv)) < 0 && errno != EINTR) {
            ECO_LOG(ECO_LOG_ERR, "main", "poll: %s", strerror(errno));
            break;
        }
        if (pf[0].revents & POLLIN) {
            while (read(wake_pipe[0], drain, sizeof drain) > 0)
                ;
            d->want_sched = true; /* a child ended, or a stop signal */
        }
        if (pf[1].revents & POLLIN)
            ecod__lister_woken(d->lister); /* listings answered: MHD_run sends them */
        if (pf[2].revents & POLLIN)
            ecod__grid_refresh(&d->grid, eco_mono_s()); /* a signal the reader thread read */
        if (pf[3].revents & POLLIN)
            ecod__cluster_woken(cl); /* credentials decoded: MHD_run routes them */
        for (int i = 0; i < N_SERVERS; i++)
            if (srv[i])
                MHD_run(srv[i]);
        /* the sampling tick first (sched.h), so the pass decides on a fresh sample and
         * makes no platform call of its own */
        double mono = eco_mono_s();
        if (!d->want_sched && mono < d->last_tick_mono + d->tick_s)
            continue;
        if (ecod__sched_sample_due(d, mono))
            ecod__sched_sample(d, eco_wall_s(), mono);
        ecod__sched_pass(d, eco_wall_s(), eco_mono_s());
    }
}

/* The pid file (pid_file, else STATE_DIR/ecoschedd.pid) of the serving daemon, written once
 * it serves, so that `kill -TERM "$(cat FILE)"` stops this daemon and no other on the host.
 * One left by a killed daemon is overwritten. 0, or -errno with err set. */
static int write_pid_file(const char *path, struct eco_error *err)
{
    char tmp[4200], line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return eco_errorf(err, -ENAMETOOLONG, "pid file %s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return eco_errorf(err, -errno, "pid file %s: %s", tmp, strerror(errno));
    int rc = write(fd, line, (size_t)n) == n ? 0 : -(errno ? errno : EIO);
    if (close(fd) < 0 && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path) < 0)
        rc = -errno;
    if (rc) {
        unlink(tmp);
        return eco_errorf(err, rc, "pid file %s: %s", path, strerror(-rc));
    }
    return 0;
}

/* Removes the pid file at exit when it still names this process. */
static void remove_pid_file(const char *path)
{
    char buf[32] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    bool ours = fgets(buf, sizeof buf, f) && strtol(buf, NULL, 10) == (long)getpid();
    fclose(f);
    if (ours)
        unlink(path);
}

/* The cluster listener (cluster_listen) of cl (munged checked, its worker started at start-up):
 * the socket bound on any address and served by *srv. 0, or < 0 and err. */
static int start_cluster(const struct ecod_config *c, struct ecod_listener *l,
                         struct ecod_cluster *const *cl, struct MHD_Daemon **srv,
                         struct eco_error *err)
{
    int fd;
    l->cluster = *cl;
    if ((fd = ecod__tcp_bind("cluster_listen", c->cluster_listen, false, err)) < 0)
        return fd;
    if (!(*srv = ecod__api_start(l, fd, err))) {
        close(fd); /* libmicrohttpd takes it over only once started */
        return -EIO;
    }
    const struct ecod_cluster_policy *p = ecod__cluster_policy(*cl);
    ECO_LOG(ECO_LOG_INFO, "main",
            "also serving on %s %s for MUNGE credentials (munged at %s; admin: root%s%s; "
            "readers: %s)",
            ecod__cluster_tls_cert(*cl) ? "https" : "http", c->cluster_listen,
            c->munge_socket[0] ? c->munge_socket : "munge's default socket",
            p->has_admin ? " and " : "", p->has_admin ? c->cluster_admin_user : "",
            p->all_read                ? "every authenticated user"
            : c->cluster_read_users[0] ? c->cluster_read_users
                                       : "root and admin only");
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    struct ecod d = {0};
    struct eco_error err = {{0}};
    struct MHD_Daemon *srv[N_SERVERS] = {NULL}, *m = NULL, *mt = NULL;
    struct ecod_listener unix_l = {0}, tcp_l = {0}, cluster_l = {0};
    struct ecod_cluster *cl = NULL;
    eco_log_setup("ecoschedd", false);
    struct ecod_tcp_auth tcp_auth = {0};
    char fake_buf[4096], pid_path[4200] = "";
    int fd = -1, rc = load_config(argc, argv, &o), status = 1;
    if (rc == 0)
        rc = parse_args(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    apply_config(&o, &d);
    int ready_fd = detach(o.foreground);
    d.state_dir = o.state_dir;
    d.accept_lost_jobs = o.accept_lost_jobs;
    d.fake_run_fd = -1;
    snprintf(d.db_path, sizeof d.db_path, "%s/jobs.db", o.state_dir);
    /* before the store and the GPUs are touched: a daemon already serving there owns them */
    /* the cluster listener's munged is asked before anything is touched: a listener that
     * could authenticate no one is a start-up error */
    if (claim_socket(o.socket, &err) < 0 || setup_signals(&err) < 0 ||
        (o.cfg.cluster_listen[0] && ecod__cluster_create(&o.cfg, &cl, &err) < 0) ||
        private_state(&d, &err) < 0 || open_platform(&o, &d, &err) < 0 ||
        ecod__startup_open_store(&d, &err) < 0 || ecod__startup_init(&d, &o.sel, &err) < 0 ||
        ecod__jobcg_init(&d, o.cfg.job_cgroup, &err) < 0 || ecod__nodecap_init(&d, &err) < 0 ||
        ecod__grid_setup(&d.grid, o.cfg.carbon, o.cfg.carbon_url, o.cfg.price, o.cfg.price_url,
                         o.cfg.carbon_policy, o.cfg.carbon_run_s, o.cfg.signal_fetch_s, o.state_dir,
                         eco_mono_s(), &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "main", "%s", err.msg);
        goto out;
    }
    if (!strcmp(eco_platform_name(d.platform), "fake") &&
        !(d.fake_run = fake_run_path(fake_buf, sizeof fake_buf)))
        ECO_LOG(ECO_LOG_WARN, "main",
                "ecosched-fake-gpu-run not found: jobs will not load the "
                "fake GPUs");
    /* jobs exec the wrapper from this descriptor, so their users need not reach its
     * directory (a build tree in a 0700 home) */
    if (d.fake_run && (d.fake_run_fd = open(d.fake_run, O_RDONLY | O_CLOEXEC)) < 0) {
        ECO_LOG(ECO_LOG_WARN, "main", "%s: %s: jobs will not load the fake GPUs", d.fake_run,
                strerror(errno));
        d.fake_run = NULL;
    }
    ecod__startup_recover(&d, eco_wall_s(), eco_mono_s());
    /* powerd's last limits first: the reconciliation leaves the GPUs they cover alone */
    ecod__lease_init(&d, eco_wall_s(), eco_mono_s());
    ecod__startup_reconcile_limits(&d);
    if (ecod__queue_create(&d, o.queue_policy, &err) < 0 || ecod__sched_load_queue(&d, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "main", "%s", err.msg);
        goto out;
    }
    /* GET /v1/jobs off the loop; without the worker (a store it cannot open read-only) the
     * loop builds the pages itself, as before */
    if (ecod__lister_create(d.db_path, d.logs_dir, ECOD_LIST_QUEUE, ecod__api_jobs_page, &d.lister,
                            &err) < 0)
        ECO_LOG(ECO_LOG_WARN, "main", "%s: listings are served on the event loop", err.msg);
    unix_l.d = tcp_l.d = cluster_l.d = &d;
    if ((fd = listen_unix(&o, &err)) < 0 || !(m = ecod__api_start(&unix_l, fd, &err))) {
        ECO_LOG(ECO_LOG_ERR, "main", "%s", err.msg);
        goto out;
    }
    fd = -1; /* libmicrohttpd closes it */
    if (o.cfg.tcp_listen[0]) {
        tcp_l.tcp = &tcp_auth;
        if ((fd = ecod__tcp_listen(o.cfg.tcp_listen, o.cfg.tcp_token_file, &tcp_auth, &err)) < 0 ||
            !(mt = ecod__api_start(&tcp_l, fd, &err))) {
            ECO_LOG(ECO_LOG_ERR, "main", "%s", err.msg);
            goto out;
        }
        fd = -1;
        ECO_LOG(ECO_LOG_INFO, "main",
                "also serving on tcp %s (bearer token of %s, acting as uid %u)", o.cfg.tcp_listen,
                o.cfg.tcp_token_file, (unsigned)tcp_auth.uid);
        if (tcp_auth.uid == 0)
            ECO_LOG(ECO_LOG_WARN, "main",
                    "tcp_token_file %s is owned by root: TCP clients act as root (they may "
                    "cancel any job and run jobs as root); chown it to the account they should "
                    "act as",
                    o.cfg.tcp_token_file);
    }
    if (o.cfg.cluster_listen[0] && start_cluster(&o.cfg, &cluster_l, &cl, &srv[2], &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "main", "%s", err.msg);
        goto out;
    }
    srv[0] = m, srv[1] = mt;
    if (o.cfg.pid_file[0])
        snprintf(pid_path, sizeof pid_path, "%s", o.cfg.pid_file);
    else
        snprintf(pid_path, sizeof pid_path, "%s/ecoschedd.pid", o.state_dir);
    if (write_pid_file(pid_path, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "main", "%s", err.msg);
        pid_path[0] = '\0';
        goto out;
    }
    ECO_LOG(ECO_LOG_INFO, "main", "ecoschedd %s serving on %s, state in %s, pid %ld in %s",
            ECO_VERSION, o.socket, o.state_dir, (long)getpid(), pid_path);
    ready(ready_fd);
    ready_fd = -1;
    loop(&d, srv, cl);
    ECO_LOG(ECO_LOG_INFO, "main", "stopping (signal %d); %zu running jobs left running",
            (int)stop_signal, d.n_runs);
    /* the worker answers the listings it holds and resumes their connections; one more run
     * of each server queues those answers (libmicrohttpd must not stop with a connection
     * suspended) */
    ecod__cluster_destroy(cl); /* first: a request it resumes may list jobs */
    cl = NULL;
    ecod__lister_destroy(d.lister);
    d.lister = NULL;
    for (int i = 0; i < N_SERVERS; i++)
        if (srv[i])
            MHD_run(srv[i]);
    unlink(o.socket);
    status = 0;
out:
    if (pid_path[0])
        remove_pid_file(pid_path);
    /* before the servers: none of their connections waits */
    ecod__cluster_destroy(cl);
    ecod__lister_destroy(d.lister);
    if (srv[2])
        MHD_stop_daemon(srv[2]);
    if (mt)
        MHD_stop_daemon(mt);
    if (m)
        MHD_stop_daemon(m);
    ecod__queue_destroy(&d);
    if (fd >= 0)
        close(fd);
    ecod__nodecap_fini(&d);
    ecod__sched_fini(&d);
    ecod__jobcg_fini(&d);
    ecod__grid_fini(&d.grid);
    free(d.release_id);
    free(d.release_s);
    if (d.fake_run_fd >= 0)
        close(d.fake_run_fd);
    eco_store_close(d.store);
    eco_platform_close(d.platform);
    if (ready_fd >= 0)
        close(ready_fd);
    return status;
}
