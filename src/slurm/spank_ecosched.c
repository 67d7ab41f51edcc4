/* SPDX-License-Identifier: MIT */
/* ecosched.so, the SPANK plugin: `--gpu-power-cap=WATTS|auto` and `--gpu-energy`. The job
 * prolog sets the limits on the job's GPUs through the daemon's platform code (NVML, or the fake
 * library in tests) and registers the job with the node's ecoschedd, which measures its GPU
 * energy; the epilog ends it there, restores the limits and, with --gpu-energy, appends the
 * energy to the job's output and, with accounting=admincomment, adds this node's part to the
 * job's AdminComment in Slurm's accounting (sacct). Failures are logged and never fail the
 * prolog (a failing prolog drains the node). docs/slurm.md, docs/slurm/accounting.md. */
#define _DEFAULT_SOURCE /* setgroups (not in POSIX) */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <math.h>
#include <slurm/spank.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "platform/platform.h"
#include "acct_comment_internal.h"
#include "dcgm_map_internal.h"
#include "acct_lock_internal.h"
#include "slurm_int.h"

SPANK_PLUGIN(ecosched, 1);

#define DEFAULT_SOCKET "/run/ecosched/ecoschedd.sock"
/* An answer from the node daemon within 5 s or none: a prolog waiting longer delays the job,
 * and the daemon answers in milliseconds when it is up. */
#define DEFAULT_TIMEOUT_S 5L
/* Widest power limit accepted on the command line: above any GPU's range (an H100 SXM's
 * maximum is 700 W), so only nonsense is refused before the job; the prolog checks the cap
 * against each GPU's own range (cap_outside_range) before anything is set. */
#define MAX_CAP_W 2000.0
/* Writes of this node's part into the AdminComment: one, and two more when the check after it
 * finds the part gone (another node's epilog wrote over it without a shared lock_dir). */
#define ACCT_TRIES 3
/* Wait before that check, in ms: long enough for a racing node's sacctmgr (a few tens of ms
 * against a local slurmdbd) to have landed, short beside an epilog's time; a random share up
 * to the same again spreads the retries of two racing nodes apart. */
#define ACCT_CHECK_MS 300
/* The longest wait for another node's lock on the job's AdminComment, in ms: its holder's
 * sacct and sacctmgr, each bounded by timeout= (default 5 s: 10 s). A holder stuck past it
 * (or one that is no epilog) is not waited for: the part is written without the lock and
 * checked after the write, as without lock_dir (timeout= counted up to an hour here). */
#define ACCT_LOCK_WAIT_MS(c) (2000L * ((c)->timeout_s < 3600 ? (c)->timeout_s : 3600))
/* Room for a job's AdminComment as read back: a part is about 20 bytes, so some 3000 nodes;
 * a longer comment is refused rather than merged from a cut copy. */
#define ACCT_COMMENT_MAX 65536
/* The longest wait for slurmctld's end record of the job to reach slurmdbd, in ms, and the
 * poll between two reads: slurmctld queues it before it starts the epilogs, and it normally
 * lands within a fraction of a second; timeout= (5 s by default, up to an hour) bounds it
 * for a slurmctld whose queue to slurmdbd is long. */
#define ACCT_END_WAIT_MS(c) (1000L * ((c)->timeout_s < 3600 ? (c)->timeout_s : 3600))
#define ACCT_END_POLL_MS 100

/* Plugin arguments from plugstack.conf; %n in a path is the node's name. */
struct cfg {
    char socket[512];
    char platform[16];
    char library[512];
    char fake_state[512];
    char lock_dir[512];
    char dcgm_dir[512]; /* dcgm_job_map=DIR: dcgm-exporter's --hpc-job-mapping-dir, "" off */
    bool accounting;    /* accounting=admincomment */
    long timeout_s;
};

static int check_cap(int val, const char *optarg, int remote);

static struct spank_option opt_cap = {
    "gpu-power-cap",
    "WATTS|auto",
    "Power limit of the job's GPUs in watts, or 'auto' (the energy-optimal limit within 10% "
    "slowdown); restored when the job ends (ecosched)",
    1,
    0,
    check_cap};
static struct spank_option opt_energy = {
    "gpu-energy",
    NULL,
    "Append the job's GPU energy per node to its output when it ends (ecosched)",
    0,
    0,
    NULL};

/* "auto", or a number of watts in (0, MAX_CAP_W]. */
static int parse_cap(const char *s, double *w)
{
    char *end;
    if (!s)
        return -1;
    if (!strcmp(s, "auto")) {
        *w = -1;
        return 0;
    }
    *w = strtod(s, &end);
    return *s && !*end && isfinite(*w) && *w > 0 && *w <= MAX_CAP_W ? 0 : -1;
}

static int check_cap(int val, const char *optarg, int remote)
{
    double w;
    (void)val, (void)remote;
    if (parse_cap(optarg, &w) < 0) {
        slurm_error("Invalid --gpu-power-cap argument: %s (WATTS in 1..%g, or auto)",
                    optarg ? optarg : "", MAX_CAP_W);
        return -1;
    }
    return 0;
}

/* srun made the job's allocation itself (not a step inside sbatch or salloc): the job ends
 * with this srun, and slurm_spank_exit can show the job's GPU energy (local context only). */
static bool own_allocation;

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    if (spank_context() == S_CTX_LOCAL)
        own_allocation = !getenv("SLURM_JOB_ID");
    if (spank_option_register(sp, &opt_cap) != ESPANK_SUCCESS ||
        spank_option_register(sp, &opt_energy) != ESPANK_SUCCESS)
        slurm_error("ecosched: cannot register options");
    return 0;
}

/* Copies src into dst, replacing %n by the node's name. */
static void expand(char *dst, size_t cap, const char *src)
{
    char host[256] = "";
    const char *node = getenv("SLURMD_NODENAME");
    size_t n = 0;
    if (!node || !*node) {
        gethostname(host, sizeof host - 1);
        host[strcspn(host, ".")] = '\0';
        node = host;
    }
    for (; *src && n + 1 < cap; src++) {
        if (src[0] == '%' && src[1] == 'n') {
            n += (size_t)snprintf(dst + n, cap - n, "%s", node);
            if (n >= cap)
                n = cap - 1;
            src++;
        } else {
            dst[n++] = *src;
        }
    }
    dst[n] = '\0';
}

static void parse_args(struct cfg *c, int ac, char **av)
{
    snprintf(c->socket, sizeof c->socket, "%s", DEFAULT_SOCKET);
    snprintf(c->platform, sizeof c->platform, "nvml");
    c->library[0] = c->fake_state[0] = c->lock_dir[0] = c->dcgm_dir[0] = '\0';
    c->accounting = false;
    c->timeout_s = DEFAULT_TIMEOUT_S;
    for (int i = 0; i < ac; i++) {
        const char *a = av[i];
        if (!strncmp(a, "socket=", 7))
            expand(c->socket, sizeof c->socket, a + 7);
        else if (!strncmp(a, "platform=", 9))
            snprintf(c->platform, sizeof c->platform, "%s", a + 9);
        else if (!strncmp(a, "library=", 8))
            expand(c->library, sizeof c->library, a + 8);
        else if (!strncmp(a, "fake_state=", 11))
            expand(c->fake_state, sizeof c->fake_state, a + 11);
        else if (!strncmp(a, "timeout=", 8) && atol(a + 8) > 0)
            c->timeout_s = atol(a + 8);
        else if (!strcmp(a, "accounting=admincomment") || !strcmp(a, "accounting=none"))
            c->accounting = !strcmp(a, "accounting=admincomment");
        else if (!strncmp(a, "lock_dir=", 9))
            expand(c->lock_dir, sizeof c->lock_dir, a + 9);
        else if (!strncmp(a, "dcgm_job_map=", 13))
            expand(c->dcgm_dir, sizeof c->dcgm_dir, a + 13);
        else
            slurm_error("ecosched: plugstack.conf: unknown argument '%s' (known: socket=PATH, "
                        "platform=nvml|fake|none, library=PATH, fake_state=PATH, timeout=S, "
                        "accounting=admincomment|none, lock_dir=PATH, dcgm_job_map=DIR)",
                        a);
    }
}

/* "0,2" or "0-1,3" (SLURM_JOB_GPUS) into indices; how many. */
static unsigned parse_gpus(const char *s, unsigned *out, unsigned cap)
{
    unsigned n = 0;
    while (s && *s && n < cap) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0)
            break;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || b < a)
                break;
        }
        for (long g = a; g <= b && n < cap; g++)
            out[n++] = (unsigned)g;
        if (*end != ',')
            break;
        s = end + 1;
    }
    return n;
}

/* POST `body` to the node daemon; the JSON answer (caller's) or NULL with why in err. */
static json_t *post(const struct cfg *c, const char *path, const char *body, long *status,
                    struct eco_error *err)
{
    struct eco_error why = {{0}};
    json_t *out = eco_http_json(c->socket, path, body, c->timeout_s * 1000L, status, &why);
    if (out && *status < 300)
        return out;
    if (out || *status) {
        const char *e = json_string_value(json_object_get(out, "error"));
        eco_errorf(err, -EPROTO, "ecoschedd on %s: HTTP %ld: %s", c->socket, *status,
                   e ? e : "no JSON answer");
    } else {
        eco_errorf(err, -EIO, "ecoschedd on %s", why.msg); /* "SOCKET: what curl says" */
    }
    json_decref(out);
    return NULL;
}

/* Opens the configured platform (the fake one finds its state file through the environment). */
static struct eco_platform *open_platform(const struct cfg *c)
{
    struct eco_platform *p = NULL;
    struct eco_error err = {{0}};
    if (c->fake_state[0])
        setenv("ECOSCHED_FAKE_NVML_STATE", c->fake_state, 1);
    if (eco_platform_open(c->platform, c->library[0] ? c->library : NULL, &p, &err) < 0)
        slurm_error("ecosched: platform %s: %s", c->platform, err.msg);
    return p;
}

/* Sets limit w (> 0) or the default (w <= 0) on the GPUs; logs each failure. */
static void set_limits(struct eco_platform *p, uint32_t job, const unsigned *gpus, unsigned n,
                       double w)
{
    for (unsigned i = 0; p && i < n; i++) {
        struct eco_error err = {{0}};
        struct eco_power_range pr;
        double lim = w, now_w = -1;
        int rc = 0;
        if (lim <= 0 && (rc = eco_platform_power_range(p, gpus[i], &pr, &err)) == 0) {
            lim = pr.default_w;
            if (eco_platform_power_limit(p, gpus[i], &now_w, NULL) == 0 && fabs(now_w - lim) < 0.5)
                continue; /* already at the default */
        }
        if (rc == 0)
            rc = eco_platform_set_power_limit(p, gpus[i], lim, &err);
        if (rc < 0)
            slurm_error("ecosched: job %u: GPU %u: limit %.0f W not set: %s", job, gpus[i], lim,
                        err.msg);
        else
            slurm_info("ecosched: job %u: GPU %u: power limit %.0f W", job, gpus[i], lim);
    }
}

/* Whether the cap w is outside the limit range of one of the GPUs (NVML's constraints); then
 * err says which and the cap is not applied. A GPU whose range cannot be read is not judged. */
static bool cap_outside_range(struct eco_platform *p, const unsigned *gpus, unsigned n, double w,
                              struct eco_error *err)
{
    for (unsigned i = 0; p && i < n; i++) {
        struct eco_power_range pr;
        if (eco_platform_power_range(p, gpus[i], &pr, NULL) == 0 &&
            (w < pr.min_w - 1e-9 || w > pr.max_w + 1e-9)) {
            eco_errorf(err, -ERANGE,
                       "--gpu-power-cap=%g W is outside GPU %u's limit range %g..%g W: not "
                       "applied, the job runs at the GPUs' limits without a cap",
                       w, gpus[i], pr.min_w, pr.max_w);
            return true;
        }
    }
    return false;
}

/* Sets the limits the node daemon answered (gpu_limits_w: per GPU, the lowest cap of the jobs
 * on it; null: none); false when the answer has none (an older or unreachable daemon). */
static bool set_answered_limits(struct eco_platform *p, uint32_t job, const unsigned *gpus,
                                unsigned n, const json_t *ans)
{
    const json_t *a = json_object_get(ans, "gpu_limits_w");
    if (!json_is_array(a) || json_array_size(a) != n)
        return false;
    for (unsigned i = 0; i < n; i++) {
        double w = json_number_value(json_array_get(a, i));
        if (w > 0)
            set_limits(p, job, &gpus[i], 1, w);
    }
    return true;
}

struct job {
    uint32_t id;
    uid_t uid;
    gid_t gid;
    unsigned gpus[64];
    unsigned n;
    char gpu_list[512];
};

static int job_of(spank_t sp, struct job *j)
{
    const char *g = getenv("SLURM_JOB_GPUS");
    memset(j, 0, sizeof *j);
    if (spank_get_item(sp, S_JOB_ID, &j->id) != ESPANK_SUCCESS)
        return -1;
    spank_get_item(sp, S_JOB_UID, &j->uid);
    spank_get_item(sp, S_JOB_GID, &j->gid);
    snprintf(j->gpu_list, sizeof j->gpu_list, "%s", g ? g : "");
    j->n = parse_gpus(g, j->gpus, 64);
    return 0;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
    struct cfg c;
    struct job j;
    char *arg = NULL;
    struct eco_error e = {{0}};
    double cap_w = 0;
    long status;
    struct eco_platform *p = NULL;
    parse_args(&c, ac, av);
    if (job_of(sp, &j) < 0 || j.n == 0)
        return 0; /* no GPUs: nothing to cap or measure */
    if (c.dcgm_dir[0] && eco_slurm__dcgm_map_update(c.dcgm_dir, j.gpus, j.n, j.id, true, &e) < 0)
        slurm_error("ecosched: job %u: not in dcgm-exporter's job mapping: %s", j.id, e.msg);
    e.msg[0] = '\0';
    bool want_cap =
        spank_option_getopt(sp, &opt_cap, &arg) == ESPANK_SUCCESS && parse_cap(arg, &cap_w) == 0;
    if (want_cap)
        p = open_platform(&c);
    /* refused, not clamped: the user asked for a limit this GPU cannot have; the epilog writes
     * the same line to the job's output */
    if (want_cap && cap_w > 0 && cap_outside_range(p, j.gpus, j.n, cap_w, &e)) {
        slurm_error("ecosched: job %u: %s", j.id, e.msg);
        want_cap = false;
    }
    json_t *gl = json_array(), *body = json_pack("{s:I,s:I,s:I}", "job_id", (json_int_t)j.id, "uid",
                                                 (json_int_t)j.uid, "gid", (json_int_t)j.gid);
    for (unsigned i = 0; gl && i < j.n; i++)
        json_array_append_new(gl, json_integer(j.gpus[i]));
    json_object_set_new(body, "gpus", gl);
    json_object_set_new(body, "power_cap",
                        !want_cap   ? json_null()
                        : cap_w < 0 ? json_string("auto")
                                    : json_real(cap_w));
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    json_t *ans = text ? post(&c, "/v1/slurm/jobs", text, &status, &e) : NULL;
    free(text);
    if (!ans)
        slurm_error("ecosched: job %u: not registered, its GPU energy is not measured: %s", j.id,
                    e.msg);
    if (want_cap && cap_w < 0) { /* auto: the daemon's model chose */
        cap_w = json_number_value(json_object_get(ans, "power_cap_w"));
        if (!(cap_w > 0))
            slurm_error("ecosched: job %u: --gpu-power-cap=auto: no limit chosen (%s)", j.id,
                        ans ? "no power model for these GPUs" : "node daemon unreachable");
    }
    /* the daemon's answer: the lowest cap of all the jobs on each GPU (another job sharing one
     * may hold a lower cap); without it, this job's cap */
    if (want_cap && cap_w > 0 && !set_answered_limits(p, j.id, j.gpus, j.n, ans))
        set_limits(p, j.id, j.gpus, j.n, cap_w);
    json_decref(ans);
    eco_platform_close(p);
    return 0; /* never fail: a failing prolog drains the node */
}

/* The batch job's StdOut path, from `scontrol show job` (the epilog runs before the job is
 * purged); 0 or -1. */
static int job_stdout(uint32_t id, char *path, size_t cap)
{
    char cmd[96], line[8192];
    int found = -1;
    snprintf(cmd, sizeof cmd, "scontrol show job -o %u 2>/dev/null", id);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char *s = strstr(line, " StdOut=");
        if (s && s[8] == '/') {
            s += 8;
            snprintf(path, cap, "%.*s", (int)strcspn(s, " \n"), s);
            found = 0;
        }
    }
    pclose(f);
    return found;
}

/* Appends `text` to the job's output file as the job's user (a child process drops to the
 * user's ids, so root never writes where the user could not). */
static void append_as_user(const struct job *j, const char *path, const char *text)
{
    pid_t pid = fork();
    if (pid == 0) {
        /* root's supplementary groups first (setgroups needs root, so before setuid), then the
         * group, then the user: each checked, the write is never done with root's groups */
        if (setgroups(1, &j->gid) < 0 || setgid(j->gid) < 0 || setuid(j->uid) < 0)
            _exit(1);
        int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            _exit(2);
        ssize_t w = write(fd, text, strlen(text));
        close(fd);
        _exit(w == (ssize_t)strlen(text) ? 0 : 3);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        slurm_error("ecosched: job %u: cannot append the GPU energy to %s", j->id, path);
}

/* Runs argv (no shell) as root with a time limit (SIGALRM ends it); its first `cap` - 1 bytes
 * of stdout into out (NULL: discarded), stderr discarded. The exit status, or -1. */
static int run_capture(char *const argv[], long timeout_s, char *out, size_t cap)
{
    int fd[2], st = 0;
    size_t n = 0;
    if (pipe(fd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(fd[1], 1);
        dup2(null, 2);
        close(fd[0]);
        alarm((unsigned)timeout_s); /* kept across exec: a hung client is killed */
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    for (ssize_t r = 1; pid > 0 && r > 0;) {
        char tmp[512];
        r = read(fd[0], tmp, sizeof tmp);
        for (ssize_t i = 0; i < r && out && n + 1 < cap; i++)
            out[n++] = tmp[i];
    }
    close(fd[0]);
    if (out && cap)
        out[n] = '\0';
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* The job's AdminComment in Slurm's accounting (its last allocation record), "" when none, and
 * (ended, may be NULL) whether that record has the job's end: slurmctld's end record has
 * reached slurmdbd (sacct's End is "Unknown" until then). 0, -1 (sacct failed: accounting off
 * or slurmdbd down) or -2 (longer than cap - 1 bytes: never merged from a cut copy, which would
 * drop the parts past the cut). */
static int read_comment(const struct cfg *c, uint32_t job, char *out, size_t cap, bool *ended)
{
    char id[16];
    snprintf(id, sizeof id, "%u", job);
    char *argv[] = {"sacct", "-n", "-X", "-P", "-j", id, "-o", "End,AdminComment", NULL};
    if (run_capture(argv, c->timeout_s, out, cap) != 0)
        return -1;
    size_t len = strlen(out);
    if (len + 1 >= cap)
        return -2;
    while (len && out[len - 1] == '\n')
        out[--len] = '\0';
    char *last = strrchr(out, '\n'); /* a requeued job has a record per run: the last */
    if (last)
        memmove(out, last + 1, strlen(last + 1) + 1);
    char *bar = strchr(out, '|'); /* End has none; the comment may */
    if (!bar && *out)
        return -1;
    if (ended)
        *ended = bar && bar > out && strncmp(out, "Unknown|", 8) != 0;
    if (bar)
        memmove(out, bar + 1, strlen(bar + 1) + 1);
    return 0;
}

/* The job's AdminComment as slurmctld holds it (`scontrol show job`: the epilog runs while
 * the job is still there), "" when none; 0 or -1. */
static int ctld_comment(const struct cfg *c, uint32_t job, char *out, size_t cap)
{
    char id[16];
    size_t big = cap + 16384; /* the rest of the job's line beside the comment */
    char *show = malloc(big);
    int rc = -1;
    snprintf(id, sizeof id, "%u", job);
    char *argv[] = {"scontrol", "show", "job", "-o", id, NULL};
    if (show && run_capture(argv, c->timeout_s, show, big) == 0 && strlen(show) + 1 < big) {
        rc = eco_slurm__comment_from_scontrol(show, out, cap);
        if (rc == -ENOENT)
            out[0] = '\0';
        rc = rc == 0 || rc == -ENOENT ? 0 : -1;
    }
    free(show);
    return rc;
}

/* Waits (at most ACCT_END_WAIT_MS) for slurmctld's end record of the job in slurmdbd. Slurm
 * 22.05's records of a running job carry no AdminComment: the text other tools set while the
 * job ran (scontrol) reaches slurmdbd with the end record, which writes slurmctld's copy over
 * slurmdbd's. A part merged into slurmdbd's copy before it landed would lose that text (read
 * before it) or be lost (written before it). 1 (landed), 0 (not in time) or -1 (sacct failed);
 * *waited_ms the time it took, 0 when it was there at the first read. */
static int wait_end_record(const struct cfg *c, uint32_t job, char *buf, size_t cap,
                           long *waited_ms)
{
    struct timespec t0, t;
    bool ended = false;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int n = 0;; n++) {
        int rd = read_comment(c, job, buf, cap, &ended);
        clock_gettime(CLOCK_MONOTONIC, &t);
        *waited_ms = n ? (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L : 0;
        if (rd < 0)
            return -1;
        if (ended)
            return 1;
        if (*waited_ms >= ACCT_END_WAIT_MS(c))
            return 0;
        usleep(ACCT_END_POLL_MS * 1000u);
    }
}

/* Adds this node's part (energy_j, carbon_g < 0: unknown) to the job's AdminComment through
 * sacctmgr, which writes slurmdbd's record (scontrol refuses a finished job, and the epilog
 * runs when the job has finished). Each node's epilog does the same, so the comment ends with
 * the sum over the job's nodes; under lock_dir (a directory every node shares) the writes take
 * turns, without it a write that lost a race is found by the check after it and done again.
 * docs/slurm/accounting.md. */
static void record_accounting(const struct cfg *c, uint32_t job, const char *node, double energy_j,
                              double carbon_g)
{
    char old[ACCT_COMMENT_MAX], id[48], *val = NULL, *set = NULL, *ctld = NULL;
    struct eco_error e = {{0}};
    struct eco_error le = {{0}};
    int dir = -1, lock = -1;
    bool ok = false, ended = false;
    long waited_ms = 0;
    snprintf(id, sizeof id, "jobid=%u", job);
    /* slurmctld's end record first (it writes slurmctld's copy of the comment over slurmdbd's);
     * not landed in time, slurmctld's copy is the one merged into while slurmdbd's is empty */
    if (wait_end_record(c, job, old, sizeof old, &waited_ms) == 0) {
        ctld = malloc(ACCT_COMMENT_MAX);
        if (ctld && ctld_comment(c, job, ctld, ACCT_COMMENT_MAX) < 0) {
            free(ctld);
            ctld = NULL;
        }
        slurm_error("ecosched: job %u: AdminComment: slurmctld's end record not in slurmdbd "
                    "after %ld ms (when it lands it writes slurmctld's copy over this node's "
                    "part); %s",
                    job, waited_ms,
                    ctld ? "merged with slurmctld's copy (scontrol)"
                         : "slurmctld's copy unknown (scontrol failed)");
    } else if (waited_ms > 0) {
        slurm_info("ecosched: job %u: AdminComment: waited %ld ms for slurmctld's end record", job,
                   waited_ms);
    }
    if (c->lock_dir[0] && eco_slurm__lock_dir_open(c->lock_dir, geteuid(), &dir, &le) < 0)
        slurm_error("ecosched: job %u: %s (written without the lock)", job, le.msg);
    for (int t = 0; t < ACCT_TRIES && !ok; t++) {
        if (dir >= 0 && eco_slurm__lock_take(dir, job, ACCT_LOCK_WAIT_MS(c), &lock, &le) < 0)
            slurm_error("ecosched: job %u: lock_dir %s: %s (written without the lock)", job,
                        c->lock_dir, le.msg);
        free(val);
        val = NULL;
        int rd = read_comment(c, job, old, sizeof old, &ended);
        if (rd == 0 && !ended && ctld && !old[0])
            snprintf(old, sizeof old, "%s", ctld); /* the text set while the job ran */
        if (rd < 0) {
            snprintf(e.msg, sizeof e.msg, "sacct -j %u %s", job,
                     rd == -2 ? "AdminComment too long" : "failed (accounting storage off?)");
        } else if (eco_slurm__comment_others_upper(old)) {
            /* written back through sacctmgr in lower case, another tool's text (a JS1: blob,
             * base64) would be spoilt: left as it is */
            snprintf(e.msg, sizeof e.msg,
                     "AdminComment holds another tool's text in upper case (a Jobstats JS1: "
                     "blob?), which sacctmgr would store in lower case: left as it is");
        } else if (eco_slurm__comment_merge(old, node, energy_j, carbon_g, &val, &e) == 0) {
            size_t len = strlen(val) + sizeof "AdminComment=\"\"";
            free(set);
            if (!(set = malloc(len))) {
                snprintf(e.msg, sizeof e.msg, "out of memory");
            } else {
                snprintf(set, len, "AdminComment=\"%s\"", val); /* quoted, as sacctmgr wants */
                char *argv[] = {"sacctmgr", "-i", "modify", "job", "where", id, "set", set, NULL};
                if (run_capture(argv, c->timeout_s, NULL, 0) != 0)
                    snprintf(e.msg, sizeof e.msg, "sacctmgr modify job %s failed", id);
            }
        }
        eco_slurm__lock_release(dir, job, lock); /* the lock file removed, then let go */
        lock = -1;
        if (!val || e.msg[0])
            break;
        usleep((useconds_t)(ACCT_CHECK_MS + rand() % ACCT_CHECK_MS) * 1000u);
        ok = read_comment(c, job, old, sizeof old, NULL) == 0 && eco_slurm__comment_has(old, node);
    }
    if (ok)
        slurm_info("ecosched: job %u: AdminComment: %s", job, val);
    else
        slurm_error("ecosched: job %u: GPU energy not in Slurm's accounting: %s", job,
                    e.msg[0] ? e.msg : "this node's part was written over each time");
    if (dir >= 0)
        close(dir);
    free(ctld);
    free(set);
    free(val);
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
    struct cfg c;
    struct job j;
    char path[64], out[4096], line[2048], node[256];
    struct eco_error e = {{0}};
    long status;
    parse_args(&c, ac, av);
    if (job_of(sp, &j) < 0 || j.n == 0)
        return 0;
    if (c.dcgm_dir[0] && eco_slurm__dcgm_map_update(c.dcgm_dir, j.gpus, j.n, j.id, false, &e) < 0)
        slurm_error("ecosched: job %u: still in dcgm-exporter's job mapping: %s", j.id, e.msg);
    e.msg[0] = '\0';
    snprintf(path, sizeof path, "/v1/slurm/jobs/%u/end", j.id);
    json_t *ans = post(&c, path, "{}", &status, &e);
    double energy = ans ? json_number_value(json_object_get(ans, "energy_j")) : -1;
    double elapsed = ans ? json_number_value(json_object_get(ans, "elapsed_s")) : 0;
    /* the job's carbon on this node, where the daemon knows the grid's signal (absent: -1) */
    const json_t *cj = json_object_get(ans, "carbon_g");
    double carbon = json_is_number(cj) ? json_number_value(cj) : -1;
    bool restored = json_is_true(json_object_get(ans, "limits_restored"));
    json_decref(ans);
    char *arg = NULL;
    struct eco_error range = {{0}};
    double cap_w = 0;
    bool numeric = spank_option_getopt(sp, &opt_cap, &arg) == ESPANK_SUCCESS &&
                   parse_cap(arg, &cap_w) == 0 && cap_w > 0;
    struct eco_platform *p = !restored || numeric ? open_platform(&c) : NULL;
    /* the daemon set each GPU to the lowest cap of the jobs still on it (or the default): a GPU
     * another job uses is not reset here. Without the daemon, back to the default whether this
     * job or the power controller set them (nothing here knows of other users). */
    if (!restored)
        set_limits(p, j.id, j.gpus, j.n, 0);
    bool refused = numeric && cap_outside_range(p, j.gpus, j.n, cap_w, &range);
    eco_platform_close(p);
    expand(node, sizeof node, "%n");
    if (energy < 0) {
        slurm_error("ecosched: job %u: GPU energy unknown: %s", j.id, e.msg);
        snprintf(line, sizeof line,
                 "ecosched: job %u on %s: GPU energy unknown (node daemon: %.400s)\n", j.id, node,
                 e.msg);
    } else {
        slurm_info("ecosched: job %u: GPU energy %.1f J on GPUs %s in %.1f s", j.id, energy,
                   j.gpu_list, elapsed);
        snprintf(line, sizeof line,
                 "ecosched: job %u on %s: GPU energy %.1f J (%.4f kWh) on GPUs %s in %.1f s\n",
                 j.id, node, energy, energy / 3.6e6, j.gpu_list, elapsed);
    }
    if (c.accounting && energy >= 0) {
        srand((unsigned)getpid());
        record_accounting(&c, j.id, node, energy, carbon);
    }
    bool want_energy = spank_option_getopt(sp, &opt_energy, NULL) == ESPANK_SUCCESS;
    if ((want_energy || refused) && job_stdout(j.id, out, sizeof out) == 0) {
        if (refused) { /* the prolog's output is not the job's: say it here */
            char rl[sizeof node + sizeof range.msg + 48]; /* prefix, node, reason */
            snprintf(rl, sizeof rl, "ecosched: job %u on %s: %s\n", j.id, node, range.msg);
            append_as_user(&j, out, rl);
        }
        if (want_energy)
            append_as_user(&j, out, line);
    }
    return 0;
}

/* Waits in tenths of a second for the epilogs (they run once srun has let the job go). */
#define SRUN_WAIT_TENTHS_PER_S 10

/* srun's job, kept from slurm_spank_local_user_init for slurm_spank_exit (where Slurm 22.05
 * answers neither options nor items: ESPANK_NOT_AVAIL). */
static uint32_t srun_job, srun_nodes;
static bool srun_energy;

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    srun_energy = own_allocation && spank_option_getopt(sp, &opt_energy, NULL) == ESPANK_SUCCESS &&
                  spank_get_item(sp, S_JOB_ID, &srun_job) == ESPANK_SUCCESS;
    if (spank_get_item(sp, S_JOB_NNODES, &srun_nodes) != ESPANK_SUCCESS || srun_nodes == 0)
        srun_nodes = 1;
    return 0;
}

/* srun --gpu-energy on a job srun allocated (interactive): once the job's epilogs have written
 * every node's part into the AdminComment (accounting=admincomment), the job's GPU energy on
 * srun's stderr; the wait is bounded by timeout= (twice: one for the epilogs, one for sacct). */
int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    struct cfg c;
    char comment[ACCT_COMMENT_MAX], want[32];
    (void)sp;
    if (spank_context() != S_CTX_LOCAL || !srun_energy)
        return 0;
    parse_args(&c, ac, av);
    if (!c.accounting)
        return 0;
    snprintf(want, sizeof want, " nodes=%u ", srun_nodes);
    for (long t = 0; t < 2 * c.timeout_s * SRUN_WAIT_TENTHS_PER_S; t++) {
        if (read_comment(&c, srun_job, comment, sizeof comment, NULL) == 0 &&
            strstr(comment, want)) {
            const char *ours = strstr(comment, ECO_ACCT_TAG);
            double e = strtod(ours + strlen(ECO_ACCT_TAG), NULL);
            fprintf(stderr, "ecosched: job %u: GPU energy %.1f J (%.4f kWh) on %u node%s: %s\n",
                    srun_job, e, e / 3.6e6, srun_nodes, srun_nodes > 1 ? "s" : "", ours);
            return 0;
        }
        usleep(1000000 / SRUN_WAIT_TENTHS_PER_S);
    }
    fprintf(stderr,
            "ecosched: job %u: GPU energy not in Slurm's accounting yet (later: sacct -j %u -o "
            "AdminComment%%100)\n",
            srun_job, srun_job);
    return 0;
}
