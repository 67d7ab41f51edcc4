/* SPDX-License-Identifier: MIT */
/* ecoschedd's scheduling pass and its sampling tick: the tick samples every GPU into the live
 * selector and accounts the jobs' energy and power limits; the pass starts queued jobs in the
 * queue policy's order on the GPUs it chooses from that sample, and reaps them (the start,
 * adoption after a restart included, is startup.c). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "daemon/runner.h"
#include "sched.h"
#include "runs.h"
#include "clockctl.h"
#include "ecod.h"
#include "jobcg.h"
#include "lease.h"
#include "nodecap.h"
#include "queue.h"
#include "util/fs.h"

/* Time between a cancel's SIGTERM and the SIGKILL that follows when the job is still there:
 * long enough for a training script to write a checkpoint's last bytes, short enough that a
 * cancelled job frees its GPUs soon (Slurm's KillWait defaults to 30 s; jobs here are local). */
#define KILL_WAIT_S 10.0

/* Time between retries of store writes that failed (a full disk, an I/O error): the default
 * tick. Each retry of a start forks the job's gated process again, so not at every pass a
 * submit asks for. */
#define STORE_RETRY_S 1.0

/* Pruning runs every PRUNE_EVERY_S (or every keep_finished_s when shorter), deleting at most
 * PRUNE_BATCH jobs a pass, and goes on at the next pass while batches come back full: 500
 * rows and 1,000 log files are a few ms, so a pass stays short however much is due. */
#define PRUNE_EVERY_S 60.0
#define PRUNE_BATCH 500

void ecod__log_path_in(const char *logs_dir, int64_t id, const char *ext, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%" PRId64 ".%s", logs_dir, id, ext);
}

void ecod__log_path(const struct ecod *d, int64_t id, const char *ext, char *buf, size_t cap)
{
    ecod__log_path_in(d->logs_dir, id, ext, buf, cap);
}

static int record_end(struct ecod *d, struct ecod_run *r, struct eco_error *err);

void ecod__sched_fini(struct ecod *d)
{
    /* ends still unrecorded get one last try; those that fail are marked lost by the next
     * daemon (their process is gone), so say so with what the store should have said */
    for (size_t i = 0; d->store && i < d->n_runs; i++) {
        struct eco_error err = {{0}};
        struct ecod_run *r = &d->runs[i];
        if (r->end_unrecorded && record_end(d, r, &err) < 0)
            ECO_LOG(ECO_LOG_ERR, "sched",
                    "job %" PRId64 ": %s, exit %d at %.0f not recorded (%s); the next start "
                    "marks it lost",
                    r->id, eco_store_state_name(r->end_state), r->end_code, r->end_s, err.msg);
    }
    eco_gpusel_destroy(d->sel);
    d->sel = NULL;
    free(d->runs);
    d->runs = NULL;
    d->n_runs = d->cap_runs = 0;
}

const struct ecod_run *ecod__sched_find(const struct ecod *d, int64_t id)
{
    for (size_t i = 0; i < d->n_runs; i++)
        if (d->runs[i].id == id)
            return &d->runs[i];
    return NULL;
}

static void format_gpus(const uint32_t *gpus, uint32_t n, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && off < cap; i++)
        off += (size_t)snprintf(buf + off, cap - off, "%s%u", i ? "," : "", gpus[i]);
}

static void sample_gpus(struct ecod *d, double mono)
{
    for (unsigned g = 0; g < d->n_gpus; g++) {
        struct eco_error err = {{0}};
        struct eco_gpu_sample smp = {.t_s = mono};
        int rc = eco_platform_memory(d->platform, g, &smp.mem_total_b, &smp.mem_used_b, &err);
        if (rc == 0)
            rc = eco_platform_util(d->platform, g, &smp.util, &err);
        if (rc == 0)
            rc = eco_gpusel_sample(d->sel, g, &smp);
        if (rc < 0)
            ECO_LOG(ECO_LOG_DEBUG, "sched", "GPU %u: no sample: %s", g,
                    err.msg[0] ? err.msg : strerror(-rc));
    }
}

/* Energy accounting (docs/daemon/README.md, "Energy"): what each GPU used since the last
 * accounting, from its energy counter (or, without one, its power times the interval), is
 * split among the jobs running on it then by their measured share (attrib.c: SM utilisation,
 * else memory, else equal; docs/models/energy.md), so jobs sharing a GPU share its energy and
 * nothing is counted twice. Called at every sampling and before a job starts or ends. */
void ecod__sched_account(struct ecod *d, double mono)
{
    double dt = d->acct_mono > 0 ? mono - d->acct_mono : 0;
    d->acct_mono = mono;
    for (size_t i = 0; i < d->n_runs; i++)
        d->runs[i].basis_now = ECOD_BASIS_NONE;
    for (unsigned g = 0; g < d->n_gpus; g++) {
        double v = 0, p = 0, delta = 0;
        bool have = eco_platform_energy(d->platform, g, &v, NULL) == 0;
        if (have && d->gpu_counter_ok[g] && v >= d->gpu_counter_j[g])
            delta = v - d->gpu_counter_j[g];
        else if (!have && eco_platform_power(d->platform, g, &p, NULL) == 0)
            delta = p * dt;
        d->gpu_counter_j[g] = v;
        d->gpu_counter_ok[g] = have;
        /* every GPU: a GPU without jobs may have a stray process, whose energy is reported */
        ecod__attrib_gpu(d, g, delta);
    }
    for (size_t i = 0; i < d->n_runs; i++) {
        struct ecod_run *r = &d->runs[i];
        enum ecod_basis most = ECOD_BASIS_NONE;
        for (int b = ECOD_BASIS_EXCLUSIVE; b <= ECOD_BASIS_EQUAL; b++)
            if (r->basis_j[b] > r->basis_j[most])
                most = (enum ecod_basis)b;
        if (most != ECOD_BASIS_NONE)
            r->basis = most; /* the basis of most of its energy */
        else if (r->basis_now != ECOD_BASIS_NONE && r->basis == ECOD_BASIS_NONE)
            r->basis = r->basis_now;
        r->energy_j = r->energy_base_j + r->acc_j;
        /* the same piece's carbon and cost: its energy spread evenly over the interval */
        ecod__grid_account(&d->grid, r->acc_j - r->grid_acc_j, d->now_s - dt, d->now_s, &r->grid);
        r->grid_acc_j = r->acc_j;
    }
}

/* Writes run r's carbon and cost to the store when they moved. */
static int store_grid(struct ecod *d, struct ecod_run *r, struct eco_error *err)
{
    if (!r->grid.has_carbon && !r->grid.has_cost)
        return 0;
    const struct ecod_grid_acc *a = &r->grid, *b = &r->stored_grid;
    if (a->has_carbon == b->has_carbon && a->carbon_partial == b->carbon_partial &&
        a->has_cost == b->has_cost && a->cost_partial == b->cost_partial &&
        a->carbon_kg == b->carbon_kg && a->cost == b->cost)
        return 0;
    struct eco_store_grid g = {
        .has_carbon = r->grid.has_carbon,
        .carbon_partial = r->grid.carbon_partial,
        .has_cost = r->grid.has_cost,
        .cost_partial = r->grid.cost_partial,
        .carbon_kg = r->grid.carbon_kg,
        .cost = r->grid.cost,
    };
    snprintf(g.currency, sizeof g.currency, "%s", ecod__grid_currency(&d->grid));
    int rc = eco_store_set_grid(d->store, r->id, &g, err);
    if (rc == 0)
        r->stored_grid = r->grid;
    return rc;
}

/* Writes run r's energy basis to the store when it changed (a failed write is tried again at
 * the next sampling). */
static void store_basis(struct ecod *d, struct ecod_run *r)
{
    const char *name = ecod_basis_name(r->basis);
    if (!name || r->basis == r->stored_basis)
        return;
    if (eco_store_set_energy_basis(d->store, r->id, name, NULL) == 0)
        r->stored_basis = r->basis;
}

/* Gives GPU g the limit its jobs other than run `skip` need on the knob (clock or power
 * limit): their lowest cap, or the default when none is capped. id: the job logged. */
static bool settle_gpu(struct ecod *d, int64_t id, uint32_t g, size_t skip, bool clock)
{
    double w = ecod__caps_lowest(d, g, skip, clock, NULL);
    if (clock)
        return ecod__clock_apply(d, id, &g, 1, w);
    struct eco_error err = {{0}};
    int rc = ecod__caps_set_limit(d, g, &w, &err);
    if (rc < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": GPU %u: power limit: %s", id, g, err.msg);
    else
        ECO_LOG(ECO_LOG_DEBUG, "sched", "job %" PRId64 ": GPU %u: power limit %.0f W", id, g, w);
    return rc == 0;
}

/* The limit for power_cap "auto" on GPU g: eco_power_auto_cap over the catalog type's limits
 * that the GPU accepts, with the configured slowdown bound. 0 and err unset, or -errno with
 * err saying why none was chosen (the platform's message cut at 180 bytes, as it always was). */
static int auto_cap(struct ecod *d, uint32_t g, double *cap_w, struct eco_error *err)
{
    char model[ECO_PLATFORM_STR_MAX];
    struct eco_error perr = {{0}};
    struct eco_power_range pr;
    int type, rc = eco_platform_gpu_name(d->platform, g, model, sizeof model, &perr);
    if (rc == 0)
        rc = eco_platform_power_range(d->platform, g, &pr, &perr);
    if (rc < 0)
        return eco_errorf(err, rc, "%.180s", perr.msg);
    if ((type = eco_catalog_match(model)) < 0)
        return eco_errorf(err, -ENOENT, "no power model for GPU model '%s'", model);
    if ((rc = eco_power_auto_cap(type, pr.min_w, pr.max_w, d->auto_cap_max_slowdown, cap_w)) < 0) {
        const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
        return eco_errorf(err, rc, "%s: model range %g..%g W outside the GPU's %g..%g W", t->name,
                          t->min_limit_w, t->max_limit_w, pr.min_w, pr.max_w);
    }
    return 0;
}

/* Writes run r's end into the store: done or failed with its exit status, or only the energy
 * of a job the store already has as cancelled. */
static int record_end(struct ecod *d, struct ecod_run *r, struct eco_error *err)
{
    int rc = store_grid(d, r, err);
    if (rc < 0)
        return rc;
    if (r->end_state == ECO_STORE_CANCELLED)
        return eco_store_set_energy(d->store, r->id, r->energy_j, err);
    return eco_store_finish(d->store, r->id, r->end_state, r->end_code, r->end_s, r->energy_j, err);
}

/* Whether a failed store write is one to retry: not the store refusing the transition
 * (-ESTALE: the job is in another state, -ENOENT: no such job, -EINVAL: bad value) but the
 * medium failing it (-ENOSPC full disk, -EIO, -EBUSY, -EROFS, ...), which may pass. */
static bool store_retryable(int rc)
{
    return rc < 0 && rc != -ESTALE && rc != -ENOENT && rc != -EINVAL;
}

/* A start could not be stored: starts wait STORE_RETRY_S. Logged once until a write succeeds
 * again (store_recovered), not at every retry. */
static void store_failed(struct ecod *d, int64_t id, const char *what, const char *msg)
{
    d->start_retry_mono = d->mono_s + STORE_RETRY_S;
    if (!d->store_failing)
        ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s: %s; retried every %.0f s", id, what,
                msg, STORE_RETRY_S);
    d->store_failing = true;
}

static void store_recovered(struct ecod *d)
{
    if (d->store_failing)
        ECO_LOG(ECO_LOG_INFO, "sched", "store writes succeed again");
    d->store_failing = false;
}

/* Forgets run i (its end is in the store): its run file and its slot. */
static void forget_run(struct ecod *d, size_t i)
{
    char path[4200];
    ecod__run_file(d, d->runs[i].id, path, sizeof path);
    unlink(path);
    ecod__jobcg_remove(d, d->runs[i].id);
    d->runs[i] = d->runs[--d->n_runs];
    d->want_sched = true;
}

/* Run r ended but the store did not take its end (full disk): it stays as "ended, not
 * recorded" (no process, no GPUs, energy final) and retry_store writes it every
 * STORE_RETRY_S. Logged here once per job (its end happens once); retries are silent. */
static void keep_unrecorded(struct ecod *d, struct ecod_run *r, const char *msg)
{
    ECO_LOG(ECO_LOG_ERR, "sched",
            "job %" PRId64 ": end not recorded: %s; kept in memory, retried every %.0f s", r->id,
            msg, STORE_RETRY_S);
    d->end_retry_mono = d->mono_s + STORE_RETRY_S;
    r->end_unrecorded = true;
    r->pid = 0;
    r->n_gpus = 0; /* released: no energy accrues */
    r->capped = false;
    r->kill_at = 0;
    d->want_sched = true;
}

/* Job of run i ended: record it, restore limits, free its GPUs, forget the run. have_status:
 * `status` is a wait status (our child); otherwise the exit status is unknown (adopted).
 * When the store cannot record the end (full disk), the run stays as "ended, not recorded"
 * (end_unrecorded: no process, no GPUs, energy final) and retry_store writes it later.
 * energy_j (may be NULL): the run's final energy, the figure recorded (the GPUs' counters are
 * read once here: a second reading a moment later would add to the stored figure). */
static void end_run(struct ecod *d, size_t i, bool have_status, int status, double *energy_j)
{
    struct ecod_run *r = &d->runs[i];
    struct eco_error err = {{0}};
    ecod__sched_account(d, d->mono_s);
    if (energy_j)
        *energy_j = r->energy_j;
    /* each GPU back to the lowest cap of the jobs still on it, or the default; a Slurm job's
     * GPUs always (the power controller may have lowered them), not only when it was capped */
    if (r->cap_w > 0 || r->slurm_job > 0)
        for (uint32_t k = 0; k < r->n_gpus; k++)
            settle_gpu(d, r->id, r->gpus[k], i, ecod__caps_clock(d, r));
    if (d->sel && r->n_gpus)
        eco_gpusel_release(d->sel, (uint64_t)r->id);
    int code = -1;
    if (have_status)
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->end_code = code;
    r->end_s = d->now_s;
    r->end_state = r->cancelled ? ECO_STORE_CANCELLED
                   : code > 0   ? ECO_STORE_FAILED
                                : ECO_STORE_DONE;
    ECO_LOG(ECO_LOG_INFO, "sched", "job %" PRId64 " ended: %s%d, %.1f J", r->id,
            have_status ? "exit " : "adopted, status unknown ", code, r->energy_j);
    store_basis(d, r);
    int rc = record_end(d, r, &err);
    if (store_retryable(rc)) {
        keep_unrecorded(d, r, err.msg);
        return;
    }
    if (rc < 0)
        ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s", r->id, err.msg);
    else
        store_recovered(d);
    forget_run(d, i);
}

/* Retries, once STORE_RETRY_S has passed, the ends of runs that ended unrecorded (each its
 * own job: the order does not matter). Starts are retried by start_queued. */
static void retry_store(struct ecod *d, double mono)
{
    if (d->end_retry_mono <= 0 || mono < d->end_retry_mono)
        return;
    d->end_retry_mono = 0;
    for (size_t i = d->n_runs; i-- > 0;) {
        struct ecod_run *r = &d->runs[i];
        struct eco_error err = {{0}};
        if (!r->end_unrecorded)
            continue;
        int rc = record_end(d, r, &err);
        if (store_retryable(rc)) {
            d->end_retry_mono = mono + STORE_RETRY_S;
            continue;
        }
        if (rc < 0)
            ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s", r->id, err.msg);
        else
            ECO_LOG(ECO_LOG_INFO, "sched", "job %" PRId64 ": end recorded (%s, exit %d)", r->id,
                    eco_store_state_name(r->end_state), r->end_code);
        store_recovered(d);
        forget_run(d, i);
    }
}

static void reap(struct ecod *d, double mono)
{
    for (size_t i = d->n_runs; i-- > 0;) {
        struct ecod_run *r = &d->runs[i];
        int status = 0, rc = 0;
        if (r->slurm_job > 0 || r->end_unrecorded)
            continue; /* ended by the SPANK plugin's epilog (ecod__sched_end_slurm), or ended */
        if (r->kill_at > 0 && mono >= r->kill_at) {
            eco_run_signal(r->pid, SIGKILL);
            r->kill_at = 0;
        }
        if (!r->adopted) {
            rc = eco_run_poll(r->pid, &status);
            if (rc == -ECHILD)
                r->adopted = true; /* reaped elsewhere: fall back to /proc */
        }
        if (rc == 1)
            end_run(d, i, true, status, NULL);
        else if (r->adopted && !ecod__run_alive(r))
            end_run(d, i, false, 0, NULL);
    }
}

/* Frees a NULL-terminated string vector. */
static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* The command line of a job, as stored (the runner wraps it in ecosched-fake-gpu-run on the
 * fake platform, see launch). */
static char **job_argv(const struct eco_store_job *j)
{
    json_t *a = json_loads(j->argv_json, 0, NULL);
    size_t n = json_array_size(a), k = 0;
    char **v = calloc(n + 1, sizeof *v);
    if (!v || n == 0)
        goto fail;
    for (size_t i = 0; i < n; i++, k++)
        if (!json_is_string(json_array_get(a, i)) ||
            !(v[k] = strdup(json_string_value(json_array_get(a, i)))))
            goto fail;
    json_decref(a);
    return v;
fail:
    json_decref(a);
    strv_free(v);
    return NULL;
}

static int env_add(char **v, size_t *k, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    if (!(v[*k] = malloc(len)))
        return -ENOMEM;
    snprintf(v[(*k)++], len, "%s=%s", name, value);
    return 0;
}

/* The job's environment; on the fake platform plus what the run tool needs to find the
 * daemon's fake GPUs (the state file, and the job's declared memory as its footprint). */
static char **job_env(const struct ecod *d, const struct eco_store_job *j)
{
    json_t *o = json_loads(j->env_json ? j->env_json : "{}", 0, NULL);
    const char *key;
    json_t *val;
    size_t k = 0;
    char **v = calloc(json_object_size(o) + 3, sizeof *v);
    if (!v || !json_is_object(o))
        goto fail;
    json_object_foreach(o, key, val)
    {
        if (!json_is_string(val) || env_add(v, &k, key, json_string_value(val)) < 0)
            goto fail;
    }
    if (d->fake_run && j->gpus > 0) {
        const char *st = getenv("ECOSCHED_FAKE_NVML_STATE");
        char mb[32];
        if (st && !json_object_get(o, "ECOSCHED_FAKE_NVML_STATE") &&
            env_add(v, &k, "ECOSCHED_FAKE_NVML_STATE", st) < 0)
            goto fail;
        snprintf(mb, sizeof mb, "%.0f", j->gpu_mem_gb * 1024);
        if (j->gpu_mem_gb > 0 && !json_object_get(o, "ECOSCHED_FAKE_NVML_PROC_MEM_MB") &&
            env_add(v, &k, "ECOSCHED_FAKE_NVML_PROC_MEM_MB", mb) < 0)
            goto fail;
    }
    json_decref(o);
    return v;
fail:
    json_decref(o);
    strv_free(v);
    return NULL;
}

/* A job that could not be started (before its command ran, or its exec failed after the
 * gate): its message goes to its stderr file and becomes its reason, and it ends failed with
 * 127 (the shell's "could not run"). `running`: the store has it running (the gate passed).
 * 0, or -EAGAIN when the store could not take the failure (full disk) of a job it still has
 * queued: the caller puts it back in the in-memory queue, and the start is tried again. */
static int start_failed(struct ecod *d, const struct eco_store_job *j, const char *msg,
                        bool running)
{
    char path[4200];
    struct eco_error err = {{0}};
    ecod__log_path(d, j->id, "err", path, sizeof path);
    /* O_NOFOLLOW as the runner's outputs; 0600: the job's user only (docs/daemon/README.md) */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        dprintf(fd, "ecoschedd: job %" PRId64 " could not start: %s\n", j->id, msg);
        if (fchown(fd, j->uid, j->gid) < 0 && geteuid() == 0)
            ECO_LOG(ECO_LOG_WARN, "sched", "%s: chown: %s", path, strerror(errno));
        close(fd);
    }
    ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 " could not start: %s", j->id, msg);
    double now = d->now_s;
    int rc = eco_store_fail_start(d->store, j->id, 127, now, msg, &err);
    ecod__run_file(d, j->id, path, sizeof path);
    unlink(path); /* written at the gate when the exec failed after it */
    if (rc == 0) {
        store_recovered(d);
        return 0;
    }
    if (!store_retryable(rc)) {
        ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s", j->id, err.msg);
        return 0;
    }
    struct ecod_run *r = running ? ecod__run_add(d) : NULL;
    if (r) { /* recorded running, not failed: retry_store records the end */
        *r = (struct ecod_run){
            .id = j->id, .end_state = ECO_STORE_FAILED, .end_code = 127, .end_s = now};
        keep_unrecorded(d, r, err.msg);
        return 0;
    }
    store_failed(d, j->id, "start failure not recorded", err.msg);
    return -EAGAIN;
}

/* Writes "PID START_TICKS" for job id, so a restarted daemon can tell its process apart
 * from a recycled PID. Written before the store says running (see docs/daemon/README.md). */
static void write_run_file(const struct ecod *d, int64_t id, pid_t pid, uint64_t ticks)
{
    char path[4200];
    ecod__run_file(d, id, path, sizeof path);
    FILE *f = fopen(path, "we");
    if (!f || fprintf(f, "%d %" PRIu64 "\n", (int)pid, ticks) < 0)
        ECO_LOG(ECO_LOG_ERR, "sched", "%s: %s", path, strerror(errno));
    if (f && fclose(f) != 0)
        ECO_LOG(ECO_LOG_ERR, "sched", "%s: %s", path, strerror(errno));
}

/* What the start gate of one launch needs (start_gate). */
struct gate_ctx {
    struct ecod *d;
    const struct eco_store_job *j;
    struct ecod_run *r;
    const char *gpus; /* "0,2", or NULL for none */
    int store_rc;     /* eco_store_start's answer (< 0: not ours to run, or not now); 1 until
                       * the child reached the gate */
};

/* The runner's gate: the child is ready to exec (its steps done, its command found); record
 * its start, and let it run only once the store says running. */
static int start_gate(void *arg, pid_t pid, struct eco_error *err)
{
    struct gate_ctx *g = arg;
    g->r->pid = pid;
    g->r->start_ticks = eco_run_start_ticks(pid);
    write_run_file(g->d, g->j->id, pid, g->r->start_ticks);
    /* into its cgroup before it execs: nothing of it runs outside (jobcg.c); without one it is
     * still told apart by its process tree */
    struct eco_error why = {{0}};
    if (ecod__jobcg_enter(g->d, g->j->id, pid, &why) < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": %s: told apart by its process tree",
                g->j->id, why.msg);
    g->store_rc = eco_store_start(g->d->store, g->j->id, pid, pid, g->gpus, g->d->now_s, err);
    return g->store_rc;
}

/* Starts job j on gpus[0..n): limits, energy baseline, runner, store, selector.
 * The job's process waits at the runner's start gate, its command already found, until the
 * store has recorded it running: a daemon killed in between closes the gate, the child exits
 * 125 without running the command, and the job, still queued, is started once by the next
 * daemon. Nothing of it needs the job's user to reach the daemon's files: the fake platform's
 * wrapper is executed from the descriptor opened at start-up.
 * -EAGAIN when the store could not record the start (full disk): the gate stays shut, the
 * job is still queued in the store, and the caller puts it back in the in-memory queue. */
static int launch(struct ecod *d, const struct eco_store_job *j, const uint32_t *gpus, uint32_t n)
{
    char gl[ECO_GPUSEL_MAX_GPUS * 4 + 1], out[4200], errp[4200];
    struct eco_error err = {{0}};
    char **argv = NULL, **env = NULL;
    int ret = 0;
    struct ecod_run *r = ecod__run_add(d);
    if (!r) {
        ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": out of memory", j->id);
        goto out;
    }
    r->id = j->id;
    r->n_gpus = n;
    memcpy(r->gpus, gpus, n * sizeof *gpus);
    format_gpus(gpus, n, gl, sizeof gl);
    argv = job_argv(j);
    env = job_env(d, j);
    ecod__log_path(d, j->id, "out", out, sizeof out);
    ecod__log_path(d, j->id, "err", errp, sizeof errp);
    if (!argv || !env) {
        d->n_runs--;
        ret = start_failed(d, j, "stored argv or env unreadable", false);
        goto out;
    }
    double cap_w = j->power_cap_w;
    if (cap_w == ECO_STORE_CAP_AUTO && n > 0) {
        struct eco_error why = {{0}};
        /* the first GPU's model for all: a server's GPUs are one model */
        if (auto_cap(d, gpus[0], &cap_w, &why) < 0) {
            ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": power_cap auto: %s; running uncapped",
                    j->id, why.msg);
            cap_w = ECO_STORE_CAP_NONE;
        } else {
            ECO_LOG(ECO_LOG_INFO, "sched",
                    "job %" PRId64 ": power_cap auto: %.0f W (generic workload, slowdown "
                    "<= %.0f%%)",
                    j->id, cap_w, d->auto_cap_max_slowdown * 100);
        }
        /* recorded before the job starts, so a restarted daemon adopts it with this limit */
        if (eco_store_set_power_cap(d->store, j->id, cap_w, &err) < 0)
            ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s", j->id, err.msg);
        err.msg[0] = '\0';
    }
    r->cap_w = cap_w > 0 ? cap_w : 0;
    for (uint32_t k = 0; r->cap_w > 0 && k < n; k++) /* the lowest cap of the GPU's jobs */
        r->capped |= settle_gpu(d, j->id, gpus[k], SIZE_MAX, ecod__caps_clock(d, r));
    const char *wrap[] = {"ecosched-fake-gpu-run", gl, NULL};
    struct gate_ctx gate = {.d = d, .j = j, .r = r, .gpus = n ? gl : NULL, .store_rc = 1};
    struct eco_run_spec spec = {
        .argv = (const char *const *)argv,
        .env = (const char *const *)env,
        .cwd = j->cwd,
        .uid = j->uid,
        .gid = j->gid,
        .gpus = gpus,
        .n_gpus = n,
        .stdout_path = out,
        .stderr_path = errp,
        .wrap_argv = d->fake_run && j->gpus > 0 ? wrap : NULL,
        .wrap_fd = d->fake_run_fd,
        .gate = start_gate,
        .gate_arg = &gate,
        .subreaper = true,
    };
    int rc = eco_run_start(&spec, &r->pid, &err);
    if (rc < 0) {
        bool capped = r->capped, clock = ecod__caps_clock(d, r);
        d->n_runs--;
        ecod__jobcg_remove(d, j->id);              /* made at the gate; the child is reaped */
        for (uint32_t k = 0; capped && k < n; k++) /* as it was without this job */
            settle_gpu(d, j->id, gpus[k], SIZE_MAX, clock);
        if (gate.store_rc < 0) { /* the gate stayed shut: the command never ran */
            char path[4200];
            if (store_retryable(gate.store_rc)) {
                /* not recorded (full disk): the job goes back to the queue in its place and
                 * starts on a later pass */
                store_failed(d, j->id, "start not recorded", err.msg);
                ret = -EAGAIN;
            } else { /* the store refused the transition: not ours to run */
                ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s; not running it", j->id,
                        err.msg);
            }
            ecod__run_file(d, j->id, path, sizeof path);
            unlink(path);
        } else {
            ret = start_failed(d, j, err.msg[0] ? err.msg : strerror(-rc), gate.store_rc == 0);
        }
        goto out;
    }
    store_recovered(d);
    struct eco_gpu_request req = ecod__run_request(j);
    if (d->sel && n > 0 && eco_gpusel_reserve(d->sel, d->mono_s, gpus, n, &req) < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": selector reserve failed", j->id);
    ECO_LOG(ECO_LOG_INFO, "sched", "job %" PRId64 " started: pid %d, GPUs [%s]", j->id, (int)r->pid,
            gl);
out:
    strv_free(argv);
    strv_free(env);
    return store_retryable(ret) ? -EAGAIN : 0;
}

/* Puts a job the pass took out back into the in-memory queue: the queue sorts it into its
 * place again (policy order, then id), ahead of every job submitted after it. */
static void requeue(struct ecod *d, const struct eco_store_job *j)
{
    if (ecod__queue_add(d, j) < 0)
        ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": queue: out of memory", j->id);
}

/* Starts the jobs the queue policy picks (docs/daemon/README.md, "Queue order"). */
/* `accounted`: the GPUs' energy was accounted in this pass already, so the jobs started now
 * begin from that reading; otherwise it is accounted once before the first start (what the
 * GPUs used so far belongs to the jobs before). */
static void start_queued(struct ecod *d, double mono, bool accounted)
{
    struct ecod_start *st = NULL;
    size_t n = 0;
    struct eco_error err = {{0}};
    bool blocked = false; /* a start could not be recorded: the rest go back to the queue */
    if (d->start_retry_mono > 0 && mono < d->start_retry_mono)
        return; /* a start could not be stored: the next try waits STORE_RETRY_S */
    d->start_retry_mono = 0;
    if (ecod__queue_pass(d, d->now_s, mono, &st, &n, &err) < 0) {
        ECO_LOG(ECO_LOG_ERR, "sched", "%s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct eco_store_job j = {0};
        if (eco_store_get(d->store, st[i].id, &j, &err) < 0) {
            ECO_LOG(ECO_LOG_ERR, "sched", "job %" PRId64 ": %s", st[i].id, err.msg);
            err.msg[0] = '\0';
            continue;
        }
        if (j.state != ECO_STORE_QUEUED) {
            /* cancelled meanwhile: nothing to start */
        } else if (blocked) {
            requeue(d, &j);
        } else if (st[i].never) {
            char why[160];
            snprintf(why, sizeof why,
                     "can never run here: %u GPUs with %.1f GB each asked, %u GPUs", j.gpus,
                     j.gpu_mem_gb, d->n_gpus);
            int rc = eco_store_cancel(d->store, j.id, d->now_s, why, NULL, &err);
            if (rc < 0)
                ECO_LOG(ECO_LOG_ERR, "sched", "%s", err.msg);
            if (store_retryable(rc))
                requeue(d, &j); /* refused again on a later pass */
        } else {
            if (!accounted)
                ecod__sched_account(d, d->mono_s);
            accounted = true;
            if (launch(d, &j, st[i].gpus, st[i].n_gpus) == -EAGAIN) {
                blocked = true;
                requeue(d, &j);
            }
        }
        eco_store_job_fini(&j);
    }
    free(st);
}

/* Puts every queued job of the store into the in-memory queue (once, at start). */
int ecod__sched_load_queue(struct ecod *d, struct eco_error *err)
{
    struct eco_store_job *jobs = NULL;
    size_t n = 0;
    int rc = eco_store_list(d->store, ECO_STORE_QUEUED, 0, 0, &jobs, &n, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (ecod__defer_enqueue(d, &jobs[i], eco_wall_s()) < 0)
            rc = eco_errorf(err, -ENOMEM, "queue: out of memory");
    eco_store_jobs_free(jobs, n);
    return rc;
}

/* Deletes a batch of finished jobs older than keep_finished_s, and their log files. */
static void prune(struct ecod *d, double mono)
{
    int64_t ids[PRUNE_BATCH];
    struct eco_error err = {{0}};
    char path[4200];
    size_t n = 0;
    if (d->keep_finished_s <= 0 || mono < d->prune_mono)
        return;
    double every = d->keep_finished_s < PRUNE_EVERY_S ? d->keep_finished_s : PRUNE_EVERY_S;
    d->prune_mono = mono + every;
    if (eco_store_prune(d->store, d->now_s - d->keep_finished_s, PRUNE_BATCH, ids, &n, &err) < 0) {
        ECO_LOG(ECO_LOG_WARN, "sched", "pruning: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        ecod__log_path(d, ids[i], "out", path, sizeof path);
        unlink(path);
        ecod__log_path(d, ids[i], "err", path, sizeof path);
        unlink(path);
    }
    if (n == PRUNE_BATCH)
        d->prune_mono = mono; /* more are due: the next pass goes on */
    if (n > 0)
        ECO_LOG(ECO_LOG_INFO, "sched",
                "pruned %zu jobs that ended over %.0f s ago (ids %" PRId64 "..%" PRId64 ")", n,
                d->keep_finished_s, ids[0], ids[n - 1]);
}

/* Shortest interval between two samplings of the GPUs (s): passes come every tick and after
 * each submit, cancel or child exit, and sampling (several platform calls per GPU) at most this
 * often keeps a burst of submissions cheap, while a job that ends still leaves a sample at most
 * 0.2 s old for the start of the next. */
#define SAMPLE_MIN_S 0.2

bool ecod__sched_sample_due(const struct ecod *d, double mono)
{
    return d->last_sample_mono <= 0 || mono - d->last_sample_mono >= SAMPLE_MIN_S;
}

void ecod__sched_sample(struct ecod *d, double now, double mono)
{
    d->now_s = now;
    d->mono_s = mono;
    if (d->sel)
        sample_gpus(d, mono);
    d->last_sample_mono = mono;
    reap(d, mono); /* as in the pass: a job that ended gets no share of the budget below */
    ecod__grid_refresh(&d->grid, mono); /* a signal file its operator's job rewrote */
    /* the jobs' energy to the sampling instant, written to the store when it moved */
    ecod__sched_account(d, mono);
    ecod__jobcg_sweep(d); /* ended jobs' cgroups the kernel had not released yet */
    for (size_t i = 0; i < d->n_runs; i++) {
        if (d->runs[i].end_unrecorded)
            continue;
        if (d->runs[i].energy_j != d->runs[i].stored_j) {
            eco_store_set_energy(d->store, d->runs[i].id, d->runs[i].energy_j, NULL);
            d->runs[i].stored_j = d->runs[i].energy_j;
        }
        store_basis(d, &d->runs[i]);
        store_grid(d, &d->runs[i], NULL);
    }
    ecod__lease_tick(d, mono); /* powerd silent past its lease: the fallback budget */
    ecod__nodecap_tick(d, mono);
    ecod__lease_keep_limits(d);
    double took = eco_mono_s() - mono; /* the sampling's own duration (status): measured */
    d->sample.samples++;
    d->sample.last_s = took;
    d->sample.sum_s += took;
    if (took > d->sample.max_s)
        d->sample.max_s = took;
}

void ecod__sched_pass(struct ecod *d, double now, double mono)
{
    d->now_s = now;
    d->mono_s = mono;
    d->last_tick_mono = mono;
    d->want_sched = false;
    /* No platform call here unless a job starts or ends (its energy is read at that instant,
     * its power limit set): the GPUs' state is the latest sample, taken by the sampling tick
     * (ecod__sched_sample) before this pass, aged `age` s. Jobs started since that sample are
     * covered by the selector's in-flight claims. */
    double age = d->last_sample_mono > 0 ? mono - d->last_sample_mono : -1;
    reap(d, mono);
    retry_store(d, mono);
    prune(d, mono);
    ecod__defer_release_due(d, now); /* held jobs whose release time came join the queue */
    size_t queued = ecod__queue_len(d);
    double t0 = eco_mono_s(); /* the pass's own duration (status, /metrics): measured */
    /* energy accounted at this instant already (the sampling just ran): the jobs started now
     * begin from that reading */
    start_queued(d, mono, d->acct_mono > 0 && d->acct_mono >= mono);
    double t1 = eco_mono_s(), took = t1 - mono;
    d->pass.queue_sum_s += t1 - t0;
    if (t1 - t0 > d->pass.queue_max_s)
        d->pass.queue_max_s = t1 - t0;
    d->pass.passes++;
    d->pass.last_s = took;
    d->pass.sum_s += took;
    if (took > d->pass.max_s)
        d->pass.max_s = took;
    d->pass.last_queue_len = queued;
    d->pass.last_sample_age_s = age;
    ECO_LOG(ECO_LOG_DEBUG, "sched",
            "pass: %zu queued, %.3f ms (queue policy %.3f ms), GPU sample %.3f s old", queued,
            took * 1e3, (t1 - t0) * 1e3, age);
}

void ecod__sched_cancelled(struct ecod *d, int64_t id, double now, double mono)
{
    d->now_s = now;
    d->mono_s = mono;
    for (size_t i = 0; i < d->n_runs; i++) {
        struct ecod_run *r = &d->runs[i];
        if (r->id != id)
            continue;
        r->cancelled = true;
        if (r->pid > 0 && eco_run_signal(r->pid, SIGTERM) == 0)
            r->kill_at = d->mono_s + KILL_WAIT_S;
    }
}

int ecod__sched_add_slurm(struct ecod *d, int64_t id, int64_t slurm_job, const uint32_t *gpus,
                          uint32_t n, double cap_w, double now, double mono)
{
    d->now_s = now;
    d->mono_s = mono;
    ecod__sched_account(d, d->mono_s); /* what the GPUs used so far belongs to the jobs before */
    struct ecod_run *r = ecod__run_add(d);
    if (!r)
        return -ENOMEM;
    r->id = id;
    r->slurm_job = slurm_job;
    r->slurm_cap_w = cap_w > 0 ? cap_w : 0;
    r->cap_w = r->slurm_cap_w;
    r->adopted = true;
    r->n_gpus = n;
    memcpy(r->gpus, gpus, n * sizeof *gpus);
    struct eco_gpu_request req = {.job_id = (uint64_t)id, .n_gpus = n};
    if (d->sel && n > 0 && eco_gpusel_reserve(d->sel, d->mono_s, gpus, n, &req) < 0)
        ECO_LOG(ECO_LOG_WARN, "sched", "job %" PRId64 ": selector reserve failed", id);
    return 0;
}

int ecod__sched_end_slurm(struct ecod *d, int64_t id, double now, double mono, double *energy_j)
{
    d->now_s = now;
    d->mono_s = mono;
    for (size_t i = 0; i < d->n_runs; i++) {
        if (d->runs[i].id != id || d->runs[i].slurm_job <= 0)
            continue;
        end_run(d, i, true, 0, energy_j);
        return 0;
    }
    return -ENOENT;
}

int ecod__sched_auto_cap(struct ecod *d, uint32_t g, double *cap_w, struct eco_error *err)
{
    return auto_cap(d, g, cap_w, err);
}
