/* SPDX-License-Identifier: MIT */
/* ecoschedd at start: the state directory checked and the store opened, the run directories
 * and the GPU selector made, the jobs the store says are running adopted or marked lost, and
 * the GPUs' limits reconciled with the adopted jobs' caps. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "startup.h"
#include "clockctl.h"
#include "ecod.h"
#include "runs.h"
#include "sched.h"
#include "util/fs.h"

static int make_dir(const char *path, mode_t mode, struct eco_error *err)
{
    int rc = eco_mkdir(path, mode);
    if (rc < 0)
        eco_errorf(err, rc, "%s: cannot create: %s", path, strerror(-rc));
    return rc;
}

/* Highest job id a file of `dir` is named for ("ID", "ID.out", "ID.err"), 0 when none; the
 * file's name goes to example. */
static int64_t highest_file_id(const char *dir, char *example, size_t cap)
{
    int64_t hi = 0;
    DIR *dp = opendir(dir);
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        char *end;
        errno = 0;
        long long id = strtoll(e->d_name, &end, 10);
        if (end == e->d_name || errno || id <= 0 || !isdigit((unsigned char)e->d_name[0]) ||
            (*end && strcmp(end, ".out") && strcmp(end, ".err")))
            continue;
        if (id > hi) {
            hi = id;
            snprintf(example, cap, "%s/%s", dir, e->d_name);
        }
    }
    if (dp)
        closedir(dp);
    return hi;
}

/* The state directory's logs/ and run/ paths, into d. */
static void state_dirs(struct ecod *d)
{
    snprintf(d->logs_dir, sizeof d->logs_dir, "%s/logs", d->state_dir);
    snprintf(d->run_dir, sizeof d->run_dir, "%s/run", d->state_dir);
}

int ecod__startup_open_store(struct ecod *d, struct eco_error *err)
{
    char ex[4300] = "", ex2[4300] = "";
    struct stat st;
    int rc;
    state_dirs(d);
    int64_t hi = highest_file_id(d->logs_dir, ex, sizeof ex),
            hi2 = highest_file_id(d->run_dir, ex2, sizeof ex2);
    if (hi2 > hi) {
        hi = hi2;
        memcpy(ex, ex2, sizeof ex);
    }
    bool missing = stat(d->db_path, &st) < 0;
    if ((missing || st.st_size == 0) && hi > 0) {
        return eco_errorf(err, -EBADMSG,
                          "%s is %s, but %s holds files of past jobs (up to job %" PRId64
                          ", e.g. %.200s): the job store is lost or damaged, and starting with "
                          "an empty one would forget those jobs and give their ids again. "
                          "Restore jobs.db from a backup, or move %s aside to start with an "
                          "empty store",
                          d->db_path, missing ? "missing" : "empty (0 bytes)", d->state_dir, hi, ex,
                          d->state_dir);
    }
    /* SQLite creates jobs.db with 0644 less the umask, and its -wal and -shm with the
     * database's mode: 077 makes all three private to the daemon */
    mode_t old = umask(077);
    rc = eco_store_open_ex(d->db_path, d->accept_lost_jobs ? ECO_STORE_ACCEPT_LOSS : 0, &d->store,
                           err);
    umask(old);
    if (rc < 0)
        return rc;
    int64_t first, last;
    if (eco_store_lost(d->store, &first, &last))
        ECO_LOG(ECO_LOG_WARN, "sched",
                "%s: accepted the loss of jobs %" PRId64 "..%" PRId64
                " (--accept-lost-jobs): they are gone, and new ids start above %" PRId64,
                d->db_path, first, last, last);
    if (hi > 0 && (rc = eco_store_reserve_ids(d->store, hi, err)) < 0) {
        eco_store_close(d->store);
        d->store = NULL;
    }
    return rc;
}

int ecod__startup_init(struct ecod *d, struct eco_gpusel_params *params, struct eco_error *err)
{
    int rc = 0;
    state_dirs(d);
    /* logs: 0700 as the state directory; users read their 0600 outputs through the daemon */
    if ((rc = make_dir(d->logs_dir, 0700, err)) < 0 || (rc = make_dir(d->run_dir, 0700, err)) < 0)
        goto out;
    d->n_gpus = eco_platform_gpu_count(d->platform);
    if (d->n_gpus > ECO_GPUSEL_MAX_GPUS) {
        ECO_LOG(ECO_LOG_WARN, "sched", "%u GPUs: using the first %d", d->n_gpus,
                ECO_GPUSEL_MAX_GPUS);
        d->n_gpus = ECO_GPUSEL_MAX_GPUS;
    }
    if (d->n_gpus > 0) {
        d->sel = eco_gpusel_create(d->n_gpus, eco_gpusel_find(d->gpu_strategy), params);
        if (!d->sel) {
            rc = eco_errorf(err, -errno, "GPU selector: %s", strerror(errno));
            goto out;
        }
    }
out:
    return rc;
}

/* Reads "PID TICKS" from job id's run file; -ENOENT when there is none. */
static int read_run_file(const struct ecod *d, int64_t id, pid_t *pid, uint64_t *ticks)
{
    char path[4200];
    int p = 0, rc = 0;
    ecod__run_file(d, id, path, sizeof path);
    FILE *f = fopen(path, "re");
    if (!f)
        return -ENOENT;
    if (fscanf(f, "%d %" SCNu64, &p, ticks) != 2)
        rc = -EINVAL;
    fclose(f);
    *pid = p;
    return rc;
}

/* One job the store says is running, found again after a restart: adopt or mark lost. */
static void recover_one(struct ecod *d, const struct eco_store_job *j)
{
    struct eco_error err = {{0}};
    struct ecod_run probe = {.id = j->id, .adopted = true};
    char why[128], path[4200];
    long long slurm_job = 0;
    int rc = read_run_file(d, j->id, &probe.pid, &probe.start_ticks);
    if (j->pid == 0 && j->name && sscanf(j->name, "slurm-%lld", &slurm_job) == 1 && slurm_job > 0) {
        probe.slurm_job = slurm_job; /* a Slurm job: no process, its epilog ends it */
        probe.slurm_cap_w = j->power_cap_w > 0 ? j->power_cap_w : 0;
        why[0] = '\0';
    } else if (rc < 0 || probe.pid != j->pid || j->pid <= 0)
        snprintf(why, sizeof why, "no start record of process %d after a daemon restart",
                 (int)j->pid);
    else if (!ecod__run_alive(&probe))
        snprintf(why, sizeof why, "process %d gone after a daemon restart", (int)j->pid);
    else
        why[0] = '\0';
    if (why[0]) {
        if (eco_store_lose(d->store, j->id, d->now_s, why, &err) < 0)
            ECO_LOG(ECO_LOG_ERR, "sched", "%s", err.msg);
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 " lost: %s", j->id, why);
        ecod__run_file(d, j->id, path, sizeof path);
        unlink(path);
        return;
    }
    struct ecod_run *r = ecod__run_add(d);
    if (!r) {
        ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": out of memory", j->id);
        return;
    }
    *r = probe;
    if (ecod__run_parse_gpus(j->assigned_gpus, d->n_gpus, r->gpus, &r->n_gpus) < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": GPUs '%s' not on this server", j->id,
                j->assigned_gpus);
    r->capped = j->power_cap_w > 0 && r->n_gpus > 0;
    r->cap_w = j->power_cap_w > 0 ? j->power_cap_w : 0;
    if (j->power_cap_w == ECO_STORE_CAP_AUTO && r->n_gpus > 0) {
        if (ecod__sched_auto_cap(d, r->gpus[0], &r->cap_w, NULL) < 0)
            r->cap_w = 0;
        r->capped = r->cap_w > 0;
    }
    r->energy_base_j = j->energy_j;
    r->energy_j = j->energy_j;
    r->stored_j = j->energy_j;
    r->grid = (struct ecod_grid_acc){
        .has_carbon = j->has_carbon,
        .carbon_partial = j->carbon_partial,
        .has_cost = j->has_cost,
        .cost_partial = j->cost_partial,
        .carbon_kg = j->carbon_kg,
        .cost = j->cost,
    };
    r->stored_grid = r->grid;
    r->basis = r->stored_basis = ecod_basis_parse(j->energy_basis);
    struct eco_gpu_request req = ecod__run_request(j);
    req.n_gpus = r->n_gpus;
    if (d->sel && r->n_gpus > 0 &&
        eco_gpusel_reserve(d->sel, d->mono_s, r->gpus, r->n_gpus, &req) < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": selector reserve failed", j->id);
    ECO_LOG(ECO_LOG_INFO, "sched", "job %" PRId64 " adopted: pid %d", j->id, (int)j->pid);
}

void ecod__startup_recover(struct ecod *d, double now, double mono)
{
    d->now_s = now;
    d->mono_s = mono;
    struct eco_store_job *jobs = NULL;
    size_t n = 0;
    struct eco_error err = {{0}};
    if (eco_store_running(d->store, &jobs, &n, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "sched", "recovery: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++)
        recover_one(d, &jobs[i]);
    eco_store_jobs_free(jobs, n);
    ecod__sched_account(d, d->mono_s); /* the adopted jobs' energy counts from here */
}

void ecod__startup_reconcile_limits(struct ecod *d)
{
    double want[ECO_GPUSEL_MAX_GPUS] = {0}; /* 0: the default */
    int64_t by[ECO_GPUSEL_MAX_GPUS] = {0};
    /* the adopted jobs (recovery has run: the store's running jobs are the watched ones); a
     * shared GPU gets the lowest cap of its jobs, as when they started */
    for (unsigned g = 0; g < d->n_gpus && g < ECO_GPUSEL_MAX_GPUS; g++)
        want[g] = ecod__caps_lowest(d, g, SIZE_MAX, d->power_knob_clock, &by[g]);
    if (d->power_knob_clock) {
        ecod__clock_reconcile(d, want, by);
        return;
    }
    for (unsigned g = 0; g < d->n_gpus; g++) {
        struct eco_error err = {{0}};
        struct eco_power_range pr;
        double now_w = -1, w = want[g];
        if (g < ECO_GPUSEL_MAX_GPUS && d->lease.fallback_w > 0 && d->lease.limit_w[g] > 0)
            continue; /* powerd's last limit, put back by ecod__lease_init */
        if (w <= 0 && eco_platform_power_range(d->platform, g, &pr, NULL) == 0)
            w = pr.default_w;
        if (w <= 0 || (eco_platform_power_limit(d->platform, g, &now_w, NULL) == 0 &&
                       now_w > w - 0.5 && now_w < w + 0.5))
            continue;
        if (eco_platform_set_power_limit(d->platform, g, w, &err) < 0)
            ECO_LOG(ECO_LOG_WARN, "sched", "GPU %u: limit %.0f W: %s", g, w, err.msg);
        else if (by[g])
            ECO_LOG(ECO_LOG_INFO, "sched",
                    "GPU %u: limit %.0f W -> %.0f W (adopted job %" PRId64 ")", g, now_w, w, by[g]);
        else
            ECO_LOG(ECO_LOG_INFO, "sched", "GPU %u: limit %.0f W -> default %.0f W (no capped job)",
                    g, now_w, w);
    }
}
