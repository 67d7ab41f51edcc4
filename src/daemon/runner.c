/* SPDX-License-Identifier: MIT */
/* The daemon's job runner: fork + exec of a job as its user, in its own session (optionally a
 * child subreaper), with its environment, CUDA_VISIBLE_DEVICES and output files, behind an
 * optional start gate; reaping; adoption by start ticks. */
/* _GNU_SOURCE for pipe2, setgroups, close_range and execveat (none is in POSIX); this file
 * only. */
#define _GNU_SOURCE
#include "daemon/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Default search path when the job's environment has no PATH; glibc's execvp uses the
 * same idea (confstr _CS_PATH), with /usr/local/bin added as most distributions do. */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
/* Output files: the job's user only (its group may hold other users; they read their own
 * jobs' outputs through the daemon, `ecosched logs`). */
#define OUTPUT_MODE 0600
/* The exit status of a child that failed before exec, as a shell reports "not run". */
#define EXIT_NOT_RUN 127
/* The exit status of a child whose gate stayed shut: nothing ran (as the old ecoschedd --gate). */
#define EXIT_GATE_SHUT 125

/* Steps of the child before exec; the number travels through the pipe with errno. */
enum step {
    STEP_SETSID = 1,
    STEP_SUBREAPER,
    STEP_SIGNALS,
    STEP_STDIN,
    STEP_STDOUT,
    STEP_STDERR,
    STEP_CHOWN,
    STEP_DUP2,
    STEP_SETGROUPS,
    STEP_SETGID,
    STEP_SETUID,
    STEP_CHDIR,
    STEP_EXEC,
    STEP_READY, /* not a failure: the child waits at the gate */
};

struct report {
    int step;
    int err;
};

/* What the child needs, all prepared by the parent: the child only makes system calls
 * (no malloc, no stdio), so that fork is safe even from a multi-threaded daemon. */
struct child_ctx {
    const struct eco_run_spec *spec;
    char *const *envp;
    char **wargv;     /* wrapped: wrap_argv, a slot for the command's path, argv[1..] */
    size_t wslot;     /* index of that slot */
    const char *path; /* search path from the job's environment */
    int as_root;      /* daemon runs as root: chown outputs, switch user */
    int fd;           /* write end of the report pipe (close-on-exec) */
    int gate;         /* the child's end of the gate socket, or -1 (close-on-exec) */
    int gate_other;   /* the parent's end, closed first thing in the child */
};

static void child_report(int fd, int step, int e)
{
    struct report r = {.step = step, .err = e};
    ssize_t n;
    do
        n = write(fd, &r, sizeof r);
    while (n < 0 && errno == EINTR);
}

static void child_fail(int fd, int step, int e)
{
    child_report(fd, step, e);
    _exit(EXIT_NOT_RUN);
}

/* Closes every descriptor above stderr but the child's own (report pipe, gate, wrapper),
 * which are close-on-exec: the job must not inherit what the daemon's parent left open (an fd
 * on a root-only file), and a child waiting at the gate must not hold the daemon's listening
 * socket or store open after the daemon died. close_range is Linux 5.9; older kernels
 * (ENOSYS) get the loop up to RLIMIT_NOFILE. */
static void child_close_fds(const struct child_ctx *c)
{
    int keep[3], n = 0;
    keep[n++] = c->fd;
    if (c->gate >= 0)
        keep[n++] = c->gate;
    if (c->wargv && c->spec->wrap_fd > 2)
        keep[n++] = c->spec->wrap_fd;
    for (int i = 1; i < n; i++) /* sort the (at most 3) keepers */
        for (int k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
            int t = keep[k];
            keep[k] = keep[k - 1];
            keep[k - 1] = t;
        }
    unsigned lo = 3;
    int ranged = 1;
    for (int i = 0; i <= n && ranged; i++) {
        unsigned hi = i < n ? (unsigned)keep[i] : ~0U; /* close [lo, keep[i]) */
        if (hi > lo && close_range(lo, i < n ? hi - 1 : ~0U, 0) != 0)
            ranged = 0;
        lo = hi + 1;
    }
    if (!ranged) {
        struct rlimit rl;
        rlim_t max = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
        if (max == RLIM_INFINITY || max > INT_MAX)
            max = INT_MAX;
        for (rlim_t fd = 3; fd < max; fd++) {
            int k = 0;
            while (k < n && keep[k] != (int)fd)
                k++;
            if (k == n)
                close((int)fd); /* EBADF for the closed ones */
        }
    }
    for (int i = 0; i < n; i++)
        fcntl(keep[i], F_SETFD, FD_CLOEXEC);
}

/* Moves fd above stdio (a daemon with 0..2 closed gets them from open/pipe), close-on-exec. */
static int above_stdio(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int e = errno;
    close(fd);
    errno = e;
    return nfd;
}

static int open_output(const char *path)
{
    /* O_NOFOLLOW: the daemon may run as root; a symlink planted at the output path must
     * not make it truncate another file. */
    return above_stdio(open(path ? path : "/dev/null",
                            O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, OUTPUT_MODE));
}

static void child_signals(int fd)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &sa, NULL); /* EINVAL for SIGKILL, SIGSTOP and libc's own: fine */
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        child_fail(fd, STEP_SIGNALS, errno);
}

static void child_stdio(const struct child_ctx *c)
{
    const struct eco_run_spec *s = c->spec;
    int in = above_stdio(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (in < 0)
        child_fail(c->fd, STEP_STDIN, errno);
    int out = open_output(s->stdout_path);
    if (out < 0)
        child_fail(c->fd, STEP_STDOUT, errno);
    int err = out;
    if (!s->stdout_path || !s->stderr_path || strcmp(s->stdout_path, s->stderr_path) != 0) {
        err = open_output(s->stderr_path);
        if (err < 0)
            child_fail(c->fd, STEP_STDERR, errno);
    }
    if (c->as_root && (fchown(out, s->uid, s->gid) != 0 || fchown(err, s->uid, s->gid) != 0))
        child_fail(c->fd, STEP_CHOWN, errno);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        child_fail(c->fd, STEP_DUP2, errno);
    /* the originals are close-on-exec; the copies on 0..2 are not */
}

static void child_user(const struct child_ctx *c)
{
    const struct eco_run_spec *s = c->spec;
    if (!c->as_root || s->uid == 0)
        return;
    if (setgroups(1, &s->gid) != 0)
        child_fail(c->fd, STEP_SETGROUPS, errno);
    if (setgid(s->gid) != 0)
        child_fail(c->fd, STEP_SETGID, errno);
    if (setuid(s->uid) != 0)
        child_fail(c->fd, STEP_SETUID, errno);
}

/* Whether `file` is one the job's user may execute: 0, or the errno execve would give for
 * the common cases (ENOENT, EACCES; a directory is EACCES as for execve). Checked with the
 * job's credentials (the child has switched already), so the answer is the user's own.
 * *seen: whether the file was found at all (not when a directory on the way is shut). */
static int exec_check(const char *file, int *seen)
{
    struct stat st;
    *seen = 0;
    if (stat(file, &st) != 0)
        return errno;
    *seen = 1;
    if (!S_ISREG(st.st_mode))
        return EACCES;
    return access(file, X_OK) == 0 ? 0 : errno;
}

/* execvp's search, with the job's PATH instead of the daemon's and never through a shell,
 * done before the gate so that "not found" and "permission denied" are reported at once:
 * the path to run, in buf (cap PATH_MAX), or the child fails. EACCES wins over ENOENT when
 * some candidate exists but is not executable. */
static const char *child_resolve(const struct child_ctx *c, char *buf)
{
    const char *file = c->spec->argv[0];
    int seen = 0;
    if (strchr(file, '/')) {
        int e = exec_check(file, &seen);
        if (e != 0)
            child_fail(c->fd, STEP_EXEC, e);
        return file;
    }
    size_t flen = strlen(file);
    int seen_eacces = 0;
    int last = ENOENT;
    for (const char *p = c->path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        if (dlen + 1 + flen + 1 <= PATH_MAX) {
            if (dlen == 0) {
                buf[0] = '.'; /* empty element: current directory, as execvp */
                dlen = 1;
            } else {
                memcpy(buf, p, dlen);
            }
            buf[dlen] = '/';
            memcpy(buf + dlen + 1, file, flen + 1);
            int e = exec_check(buf, &seen);
            if (e == 0)
                return buf;
            /* a PATH directory the user cannot search (root's ~/bin) hides nothing it could
             * run: not found there, as for a missing one */
            if (e == EACCES && seen)
                seen_eacces = 1;
            else if (e != EACCES && e != ENOENT && e != ENOTDIR && e != ESTALE && e != ENODEV &&
                     e != ETIMEDOUT)
                last = e;
        }
        if (!end)
            break;
        p = end;
    }
    child_fail(c->fd, STEP_EXEC, seen_eacces ? EACCES : last);
    return NULL;
}

/* Tells the parent the child is ready and waits for its "1"; anything else (EOF: the parent
 * died or refused) ends the child without running the command. */
static void child_gate(const struct child_ctx *c)
{
    char go = 0;
    ssize_t n;
    if (c->gate < 0)
        return;
    child_report(c->fd, STEP_READY, 0);
    do
        n = read(c->gate, &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1 || go != '1')
        _exit(EXIT_GATE_SHUT);
}

static void child_exec(const struct child_ctx *c, const char *file)
{
    if (c->wargv) {
        c->wargv[c->wslot] = (char *)file;
        execveat(c->spec->wrap_fd, "", c->wargv, c->envp, AT_EMPTY_PATH);
    } else {
        execve(file, (char *const *)c->spec->argv, c->envp);
    }
    child_fail(c->fd, STEP_EXEC, errno);
}

static void child_main(const struct child_ctx *c)
{
    char buf[PATH_MAX];
    if (c->gate_other >= 0)
        close(c->gate_other); /* else the gate would not see EOF when the parent dies */
    child_close_fds(c);
    if (setsid() < 0)
        child_fail(c->fd, STEP_SETSID, errno);
    if (c->spec->subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0)
        child_fail(c->fd, STEP_SUBREAPER, errno);
    child_signals(c->fd);
    child_stdio(c);
    child_user(c);
    /* chdir after dropping privileges: the job must be able to enter its own directory
     * (and root may not, on NFS with root_squash). */
    if (chdir(c->spec->cwd) != 0)
        child_fail(c->fd, STEP_CHDIR, errno);
    const char *file = child_resolve(c, buf);
    child_gate(c);
    child_exec(c, file);
}

/* The job's environment minus any CUDA_VISIBLE_DEVICES, plus ours. The strings are
 * borrowed from spec except the last, which is *cvd (caller frees both arrays). */
static char **build_env(const struct eco_run_spec *s, char **cvd, const char **path)
{
    static const char CVD[] = "CUDA_VISIBLE_DEVICES=";
    char **envp = NULL;
    size_t n = 0;
    *path = DEFAULT_PATH;
    for (const char *const *e = s->env; e && *e; e++)
        n++;
    if (s->n_gpus > (SIZE_MAX - sizeof CVD) / 12 || n > SIZE_MAX / sizeof *envp - 2)
        return NULL;
    size_t cap = sizeof CVD + s->n_gpus * 12; /* 10 digits + comma per GPU */
    *cvd = malloc(cap);
    envp = calloc(n + 2, sizeof *envp);
    if (!*cvd || !envp) {
        free(envp);
        return NULL;
    }
    size_t len = (size_t)snprintf(*cvd, cap, "%s", CVD);
    for (size_t i = 0; i < s->n_gpus; i++)
        len += (size_t)snprintf(*cvd + len, cap - len, "%s%u", i ? "," : "", (unsigned)s->gpus[i]);
    size_t k = 0;
    for (const char *const *e = s->env; e && *e; e++) {
        if (strncmp(*e, CVD, sizeof CVD - 1) == 0)
            continue;
        if (strncmp(*e, "PATH=", 5) == 0)
            *path = *e + 5;
        envp[k++] = (char *)*e;
    }
    envp[k] = *cvd;
    return envp;
}

static int check_spec(const struct eco_run_spec *s, struct eco_error *err)
{
    if (!s)
        return eco_errorf(err, -EINVAL, "run: no spec");
    if (!s->argv || !s->argv[0] || !s->argv[0][0])
        return eco_errorf(err, -EINVAL, "run: argv: empty command");
    if (!s->cwd || !s->cwd[0])
        return eco_errorf(err, -EINVAL, "run: cwd: empty");
    if (s->n_gpus && !s->gpus)
        return eco_errorf(err, -EINVAL, "run: gpus: %zu GPUs but no list", s->n_gpus);
    return 0;
}

/* What each step is called in messages, and which spec field it worked on. */
enum object { OBJ_NONE, OBJ_STDOUT, OBJ_STDERR, OBJ_DEVNULL, OBJ_UID, OBJ_GID, OBJ_CWD, OBJ_ARGV0 };

static const struct {
    const char *name;
    enum object obj;
} STEPS[] = {
    [STEP_SETSID] = {"setsid", OBJ_NONE},
    [STEP_SUBREAPER] = {"prctl subreaper", OBJ_NONE},
    [STEP_SIGNALS] = {"reset signal mask", OBJ_NONE},
    [STEP_STDIN] = {"open stdin", OBJ_DEVNULL},
    [STEP_STDOUT] = {"open stdout", OBJ_STDOUT},
    [STEP_STDERR] = {"open stderr", OBJ_STDERR},
    [STEP_CHOWN] = {"chown outputs to uid", OBJ_UID},
    [STEP_DUP2] = {"dup2 stdio", OBJ_NONE},
    [STEP_SETGROUPS] = {"setgroups", OBJ_GID},
    [STEP_SETGID] = {"setgid", OBJ_GID},
    [STEP_SETUID] = {"setuid", OBJ_UID},
    [STEP_CHDIR] = {"chdir", OBJ_CWD},
    [STEP_EXEC] = {"exec", OBJ_ARGV0},
};

/* The text naming what a step worked on; buf holds numbers and the quoted command. */
static const char *object_text(const struct eco_run_spec *s, enum object obj, char *buf, size_t cap)
{
    switch (obj) {
    case OBJ_STDOUT:
        return s->stdout_path ? s->stdout_path : "/dev/null";
    case OBJ_STDERR:
        return s->stderr_path ? s->stderr_path : "/dev/null";
    case OBJ_DEVNULL:
        return "/dev/null";
    case OBJ_CWD:
        return s->cwd;
    case OBJ_UID:
    case OBJ_GID:
        snprintf(buf, cap, "%u", (unsigned)(obj == OBJ_UID ? s->uid : s->gid));
        return buf;
    case OBJ_ARGV0:
        snprintf(buf, cap, "'%s'", s->argv[0]);
        return buf;
    case OBJ_NONE:
        break;
    }
    return NULL;
}

/* "chdir /x: No such file or directory", naming what the failed step worked on. */
static int report_error(const struct eco_run_spec *s, const struct report *r, struct eco_error *err)
{
    char buf[ECO_ERROR_MSG_MAX];
    const char *why = strerror(r->err);
    int known =
        r->step > 0 && r->step < (int)(sizeof STEPS / sizeof STEPS[0]) && STEPS[r->step].name;
    const char *obj = known ? object_text(s, STEPS[r->step].obj, buf, sizeof buf) : NULL;
    int code = r->err > 0 ? -r->err : -EIO;
    if (!known)
        return eco_errorf(err, code, "run: child: %s", why);
    if (!obj)
        return eco_errorf(err, code, "%s: %s", STEPS[r->step].name, why);
    return eco_errorf(err, code, "%s %s: %s", STEPS[r->step].name, obj, why);
}

static void reap(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* The wrapped command line: wrap_argv..., a NULL slot for the command's path, argv[1..];
 * borrowed strings, the array the caller's (free). */
static char **wrap_args(const struct eco_run_spec *s, size_t *slot)
{
    size_t nw = 0, na = 0;
    while (s->wrap_argv[nw])
        nw++;
    while (s->argv[na])
        na++;
    char **v = calloc(nw + na + 1, sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < nw; i++)
        v[i] = (char *)s->wrap_argv[i];
    *slot = nw;
    for (size_t i = 1; i < na; i++)
        v[nw + i] = (char *)s->argv[i];
    return v;
}

/* One report from the child: 1 and *r, or 0 at EOF (the pipe closed on exec or the child
 * ended). A short or failed read becomes a report of the error. */
static int read_report(int fd, struct report *r)
{
    ssize_t n;
    do
        n = read(fd, r, sizeof *r);
    while (n < 0 && errno == EINTR);
    if (n == 0)
        return 0;
    if (n != (ssize_t)sizeof *r)
        *r = (struct report){.step = 0, .err = n < 0 ? errno : EIO};
    return 1;
}

/* After fork: waits for the child's steps, runs the gate, lets the child exec. 0 when the
 * command runs; else the child is reaped and err says why. */
static int parent_wait(const struct eco_run_spec *spec, pid_t child, int rfd, int *gate,
                       struct eco_error *err)
{
    struct report r;
    int rc = 0;
    int got = read_report(rfd, &r);
    if (spec->gate && got && r.step == STEP_READY) {
        rc = spec->gate(spec->gate_arg, child, err);
        if (rc == 0 && send(*gate, "1", 1, MSG_NOSIGNAL) != 1)
            rc = eco_errorf(err, -errno, "start gate: %s", strerror(errno));
        close(*gate); /* without the "1" the child exits 125 having run nothing */
        *gate = -1;
        if (rc == 0)
            got = read_report(rfd, &r);
    } else if (spec->gate && !got) {
        got = 1; /* ended before the gate: killed */
        r = (struct report){.step = 0, .err = ECHILD};
    }
    if (rc == 0 && !got)
        return 0; /* EOF: the pipe closed on exec */
    reap(child);
    return rc != 0 ? rc : report_error(spec, &r, err);
}

int eco_run_start(const struct eco_run_spec *spec, pid_t *pid, struct eco_error *err)
{
    char **envp = NULL, **wargv = NULL;
    char *cvd = NULL;
    int fds[2] = {-1, -1}, gate[2] = {-1, -1};
    int masked = 0;
    sigset_t all, old;
    if (pid)
        *pid = -1;
    int rc = check_spec(spec, err);
    if (rc != 0 || !pid) {
        rc = rc ? rc : eco_errorf(err, -EINVAL, "run: no pid");
        goto out;
    }
    struct child_ctx c = {.spec = spec, .as_root = geteuid() == 0, .gate = -1, .gate_other = -1};
    envp = build_env(spec, &cvd, &c.path);
    if (!envp || (spec->wrap_argv && !(c.wargv = wargv = wrap_args(spec, &c.wslot)))) {
        rc = eco_errorf(err, -ENOMEM, "run: environment: %s", strerror(ENOMEM));
        goto out;
    }
    c.envp = envp;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        rc = eco_errorf(err, -errno, "pipe: %s", strerror(errno));
        goto out;
    }
    /* the gate is a socket pair: send's MSG_NOSIGNAL spares the caller a SIGPIPE when the
     * child died */
    if (spec->gate && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) != 0) {
        rc = eco_errorf(err, -errno, "start gate: socketpair: %s", strerror(errno));
        goto out;
    }
    c.fd = fds[1];
    c.gate = gate[0];
    c.gate_other = gate[1];
    /* Block every signal across fork, so no daemon handler runs in the child before it
     * has reset the dispositions. */
    sigfillset(&all);
    masked = sigprocmask(SIG_SETMASK, &all, &old) == 0;
    pid_t child = fork();
    if (child == 0) {
        if (c.fd <= 2)
            c.fd = above_stdio(c.fd);
        if (c.gate >= 0 && c.gate <= 2)
            c.gate = above_stdio(c.gate);
        child_main(&c);
    }
    int fork_errno = errno;
    if (masked)
        sigprocmask(SIG_SETMASK, &old, NULL);
    masked = 0;
    if (child < 0) {
        rc = eco_errorf(err, -fork_errno, "fork: %s", strerror(fork_errno));
        goto out;
    }
    close(fds[1]);
    fds[1] = -1;
    if (gate[0] >= 0)
        close(gate[0]);
    gate[0] = -1;
    rc = parent_wait(spec, child, fds[0], &gate[1], err);
    if (rc == 0)
        *pid = child;
out:
    if (masked)
        sigprocmask(SIG_SETMASK, &old, NULL);
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        if (gate[i] >= 0)
            close(gate[i]);
    }
    free(wargv);
    free(envp);
    free(cvd);
    return rc;
}

int eco_run_poll(pid_t pid, int *status)
{
    int st = 0;
    pid_t r;
    if (pid <= 0)
        return -EINVAL;
    do
        r = waitpid(pid, &st, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -errno;
    if (r == 0)
        return 0;
    if (status)
        *status = st;
    return 1;
}

/* Reads field 3 (state) and field 22 (starttime) of /proc/PID/stat. The command name
 * (field 2) is in parentheses and may hold spaces and ')', so parse after the last ')'. */
static int read_stat(pid_t pid, char *state, uint64_t *ticks)
{
    char path[64], buf[1024];
    int rc = -EINVAL;
    FILE *f = NULL;
    if (pid <= 0)
        goto out;
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    f = fopen(path, "re");
    if (!f) {
        rc = -errno;
        goto out;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    rc = -EIO;
    if (!p || sscanf(p + 1, " %c", state) != 1)
        goto out;
    p++;
    for (int field = 2; field < 21; field++) { /* skip to the space before field 22 */
        p = strchr(p + 1, ' ');
        if (!p)
            goto out;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long t = strtoull(p + 1, &end, 10);
    if (errno != 0 || end == p + 1)
        goto out;
    *ticks = t;
    rc = 0;
out:
    if (f)
        fclose(f);
    return rc;
}

uint64_t eco_run_start_ticks(pid_t pid)
{
    char state = 0;
    uint64_t ticks = 0;
    return read_stat(pid, &state, &ticks) == 0 ? ticks : 0;
}

int eco_run_alive(pid_t pid, uint64_t start_ticks)
{
    char state = 0;
    uint64_t ticks = 0;
    if (read_stat(pid, &state, &ticks) != 0)
        return 0;
    /* a zombie (Z) or dying (X) process has ended: its job is over */
    return ticks == start_ticks && state != 'Z' && state != 'X';
}

int eco_run_signal(pid_t pgid, int sig)
{
    /* kill(-0) and kill(-1) would hit the daemon's own group or every process */
    if (pgid <= 1)
        return -EINVAL;
    return kill(-pgid, sig) == 0 ? 0 : -errno;
}
