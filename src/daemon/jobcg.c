/* SPDX-License-Identifier: MIT */
/* Per-job cgroups (cgroup v2): the jobs' parent cgroup found or made, each job's first process
 * moved into a cgroup of its own before it execs, and a process's job read back from
 * /proc/PID/cgroup. A job's descendants stay in its cgroup whatever they do (setsid, double
 * fork): only a writer of the cgroup directories (root, or the daemon's user) can move them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "ecod.h"
#include "jobcg.h"

/* statfs f_type of cgroup2 (linux/magic.h's CGROUP2_SUPER_MAGIC; spelled out so that the
 * header is not needed) */
#define CGROUP2_MAGIC 0x63677270
/* Bytes of /proc/PID/cgroup read: one line per hierarchy (a dozen on a v1 + v2 host), each a
 * path of a few directories; 8 KiB holds deep systemd slices with room. */
#define CGROUP_FILE_MAX 8192

/* The cgroup2 mount point and its root (mountinfo fields 5 and 4) from /proc/self/mountinfo.
 * 0, or -ENOENT when there is none. */
static int cgroup2_mount(char *mnt, size_t mcap, char *root, size_t rcap)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = -ENOENT;
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f && rc < 0 && getline(&line, &cap, f) >= 0) {
        char r[4096], m[4096], type[64];
        const char *sep = strstr(line, " - ");
        if (!sep || sscanf(sep + 3, "%63s", type) != 1 || strcmp(type, "cgroup2") ||
            sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2)
            continue;
        if (strlen(m) < mcap && strlen(r) < rcap) {
            strcpy(mnt, m);
            strcpy(root, r);
            rc = 0;
        }
    }
    free(line);
    if (f)
        fclose(f);
    return rc;
}

/* Process pid's cgroup2 path ("0::PATH" of /proc/PID/cgroup) into buf. 0, or < 0. */
static int cgroup_of(pid_t pid, char *buf, size_t cap)
{
    char path[64], text[CGROUP_FILE_MAX];
    snprintf(path, sizeof path, pid > 0 ? "/proc/%d/cgroup" : "/proc/self/cgroup", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n < 0)
        return -EIO;
    text[n] = '\0';
    for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, "0::", 3))
            continue;
        size_t len = strcspn(l + 3, "\n");
        if (len >= cap)
            return -ENAMETOOLONG;
        memcpy(buf, l + 3, len);
        buf[len] = '\0';
        return 0;
    }
    return -ENOENT;
}

/* Makes dir (0755) when missing and checks it is the daemon's: a directory of its euid that
 * nobody else can write, on cgroup2. NULL when fine, else why not (errno-style text). */
static const char *own_dir(const char *dir)
{
    static char why[160];
    struct stat st;
    struct statfs fs;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return strerror(errno);
    if (lstat(dir, &st) < 0 || statfs(dir, &fs) < 0)
        return strerror(errno);
    if (!S_ISDIR(st.st_mode) || (unsigned long)fs.f_type != CGROUP2_MAGIC)
        return "not a cgroup2 directory";
    if (st.st_uid != geteuid() || (st.st_mode & 022)) {
        snprintf(why, sizeof why, "owned by uid %u with mode %04o: not the daemon's own",
                 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
        return why;
    }
    return NULL;
}

/* The jobs' cgroup directory and its cgroup path for setting (see jobcg.h) into d. NULL when
 * found, else why not. */
static const char *find_base(struct ecod *d, const char *setting)
{
    static char why[300];
    char mnt[4096], root[4096], own[4096];
    struct stat st;
    if (cgroup2_mount(mnt, sizeof mnt, root, sizeof root) < 0)
        return "no cgroup2 mount";
    size_t ml = strlen(mnt), rl = strcmp(root, "/") ? strlen(root) : 0;
    if (!strcmp(setting, "auto")) {
        if (cgroup_of(0, own, sizeof own) < 0 || strncmp(own, root, rl))
            return "the daemon's own cgroup is not on the cgroup2 mount";
        if (stat(d->state_dir, &st) < 0)
            return strerror(errno);
        const char *sub = own + rl, *sl = strcmp(sub, "/") ? "/" : "";
        if ((size_t)snprintf(d->cgroup_rel, sizeof d->cgroup_rel, "%s%secosched.%ju", own, sl,
                             (uintmax_t)st.st_ino) >= sizeof d->cgroup_rel ||
            (size_t)snprintf(d->cgroup_dir, sizeof d->cgroup_dir, "%s%s%secosched.%ju",
                             strcmp(mnt, "/") ? mnt : "", sub, sl,
                             (uintmax_t)st.st_ino) >= sizeof d->cgroup_dir)
            return "its path is too long";
    } else {
        if (strncmp(setting, mnt, ml) || (setting[ml] != '/' && setting[ml] != '\0')) {
            if ((size_t)snprintf(why, sizeof why, "not below the cgroup2 mount %s", mnt) >=
                sizeof why)
                return "not below the cgroup2 mount";
            return why;
        }
        const char *sub = setting + ml;
        if ((size_t)snprintf(d->cgroup_dir, sizeof d->cgroup_dir, "%s", setting) >=
                sizeof d->cgroup_dir ||
            (size_t)snprintf(d->cgroup_rel, sizeof d->cgroup_rel, "%s%s", rl ? root : "",
                             *sub ? sub : "/") >= sizeof d->cgroup_rel)
            return "its path is too long";
    }
    size_t len = strlen(d->cgroup_rel);
    while (len > 1 && d->cgroup_rel[len - 1] == '/')
        d->cgroup_rel[--len] = '\0';
    return own_dir(d->cgroup_dir);
}

int ecod__jobcg_init(struct ecod *d, const char *setting, struct eco_error *err)
{
    const char *why = "job_cgroup = off";
    d->cgroup_dir[0] = d->cgroup_rel[0] = '\0';
    if (strcmp(setting, "off") && (why = find_base(d, setting))) {
        d->cgroup_dir[0] = d->cgroup_rel[0] = '\0';
        if (strcmp(setting, "auto"))
            return eco_errorf(err, -EINVAL, "job_cgroup %s: %s", setting, why);
    }
    d->cgroup_sweep = d->cgroup_dir[0] != '\0'; /* jobs that ended while none watched them */
    if (d->cgroup_dir[0])
        ECO_LOG(ECO_LOG_INFO, "main", "jobs' processes told apart by cgroup: %s/job-ID",
                d->cgroup_dir);
    else
        ECO_LOG(strcmp(setting, "off") ? ECO_LOG_WARN : ECO_LOG_INFO, "main",
                "jobs' processes told apart by the process tree (each job's leader a child "
                "subreaper; no cgroup: %s)",
                why);
    return 0;
}

int ecod__jobcg_enter(struct ecod *d, int64_t id, pid_t pid, struct eco_error *err)
{
    char path[4200], num[32];
    int rc = 0, fd = -1;
    if (!d->cgroup_dir[0])
        return 0;
    snprintf(path, sizeof path, "%s/job-%" PRId64, d->cgroup_dir, id);
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        rc = eco_errorf(err, -errno, "%s: cannot create: %s", path, strerror(errno));
        goto out;
    }
    snprintf(path, sizeof path, "%s/job-%" PRId64 "/cgroup.procs", d->cgroup_dir, id);
    int len = snprintf(num, sizeof num, "%d\n", (int)pid);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, num, (size_t)len) != len)
        rc = eco_errorf(err, -errno, "%s: cannot move process %d there: %s", path, (int)pid,
                        strerror(errno));
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

void ecod__jobcg_remove(struct ecod *d, int64_t id)
{
    char path[4200];
    if (!d->cgroup_dir[0])
        return;
    snprintf(path, sizeof path, "%s/job-%" PRId64, d->cgroup_dir, id);
    if (rmdir(path) < 0 && errno != ENOENT)
        d->cgroup_sweep = true;
}

/* Whether job directory `name` ("job-ID") is of a watched job. */
static bool watched_dir(const struct ecod *d, const char *name)
{
    char *end = NULL;
    long long id = strtoll(name + 4, &end, 10);
    for (size_t i = 0; end && !*end && i < d->n_runs; i++)
        if (d->runs[i].id == id)
            return true;
    return false;
}

/* Whether cgroup directory dir holds a process. */
static bool populated(const char *dir)
{
    char path[4500], c = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= sizeof path)
        return true; /* cannot tell: kept */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, &c, 1) : 0;
    if (fd >= 0)
        close(fd);
    return n > 0;
}

void ecod__jobcg_sweep(struct ecod *d)
{
    char path[4400];
    if (!d->cgroup_dir[0] || !d->cgroup_sweep)
        return;
    DIR *dp = opendir(d->cgroup_dir);
    struct dirent *e;
    d->cgroup_sweep = false;
    while (dp && (e = readdir(dp))) {
        if (strncmp(e->d_name, "job-", 4) || watched_dir(d, e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", d->cgroup_dir, e->d_name);
        if (rmdir(path) == 0 || errno == ENOENT)
            continue;
        if (!populated(path)) {
            d->cgroup_sweep = true; /* not released yet: the next tick */
            continue;
        }
        long long id = strtoll(e->d_name + 4, NULL, 10);
        if (id > d->cgroup_kept_logged) {
            ECO_LOG(ECO_LOG_WARN, "sched",
                    "job %lld ended, but processes it left run on in %s (their GPU use is "
                    "reported as unattributed)",
                    id, path);
            d->cgroup_kept_logged = id;
        }
    }
    if (dp)
        closedir(dp);
}

int64_t ecod__jobcg_job_of(const struct ecod *d, pid_t pid)
{
    char cg[4096];
    size_t rl = strlen(d->cgroup_rel);
    if (!rl || pid <= 0 || cgroup_of(pid, cg, sizeof cg) < 0)
        return 0;
    /* "REL/job-ID", or below it (only a writer of job-ID's directory makes a child there) */
    if (strncmp(cg, d->cgroup_rel, rl) || strncmp(cg + rl, "/job-", 5))
        return 0;
    char *end = NULL;
    errno = 0;
    long long id = strtoll(cg + rl + 5, &end, 10);
    if (errno || end == cg + rl + 5 || id <= 0 || (*end && *end != '/'))
        return 0;
    return (int64_t)id;
}

void ecod__jobcg_fini(struct ecod *d)
{
    if (!d->cgroup_dir[0])
        return;
    d->cgroup_sweep = true;
    ecod__jobcg_sweep(d);
    rmdir(d->cgroup_dir); /* ENOTEMPTY / EBUSY while jobs left running keep theirs */
}
