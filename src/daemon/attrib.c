/* SPDX-License-Identifier: MIT */
/* Per-job energy on a shared GPU: the split rule (pure) and the readings it is fed with, the
 * GPU's processes, their memory and their SM utilisation samples, each process mapped to its
 * job by its cgroup or the job's process tree, session and group; the share of a process of no
 * job is charged to no job. The rule and its error model are in docs/models/energy.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attrib.h"
#include "ecod.h"
#include "jobcg.h"

/* Processes read per GPU and accounting. A GPU runs a handful (MPS and time-slicing setups a
 * few dozen); 256 is the fake NVML's own limit and far above what shares one GPU. */
#define MAX_PROCS 256
/* Utilisation samples read per GPU and accounting: NVML keeps about a second of samples per
 * process (1/6 s apart on recent GPUs), so 1024 is 170 processes' worth at the 1 s tick. */
#define MAX_SAMPLES 1024
/* Ancestors walked from a GPU process to its job's leader: a shell, a launcher (torchrun,
 * mpirun) and a wrapper are a few levels; the bound ends a walk that /proc races into a loop. */
#define MAX_DEPTH 32

const char *ecod_basis_name(enum ecod_basis b)
{
    static const char *const names[] = {
        [ECOD_BASIS_EXCLUSIVE] = "exclusive",
        [ECOD_BASIS_UTIL] = "utilization",
        [ECOD_BASIS_MEMORY] = "memory",
        [ECOD_BASIS_EQUAL] = "equal",
    };
    return b > ECOD_BASIS_NONE && b <= ECOD_BASIS_EQUAL ? names[b] : NULL;
}

enum ecod_basis ecod_basis_parse(const char *name)
{
    for (enum ecod_basis b = ECOD_BASIS_EXCLUSIVE; name && b <= ECOD_BASIS_EQUAL; b++)
        if (!strcmp(name, ecod_basis_name(b)))
            return b;
    return ECOD_BASIS_NONE;
}

/* Weight of job i under basis b; negative or NaN readings weigh nothing. */
static double weight(const struct ecod_attrib_job *j, enum ecod_basis b)
{
    double w = b == ECOD_BASIS_UTIL ? j->util : b == ECOD_BASIS_MEMORY ? j->mem_b : 1.0;
    return w > 0 ? w : 0;
}

/* Whether the stray processes take a part: there are some, and every job's processes can be
 * told (beside a Slurm job's, a process of no job here may be that job's). */
static bool stray_counts(const struct ecod_attrib_job *jobs, size_t n,
                         const struct ecod_attrib_job *stray)
{
    for (size_t i = 0; stray && stray->known && i < n; i++)
        if (!jobs[i].known)
            return false;
    return stray && stray->known;
}

/* Whether basis b can split: every job's processes known and a positive total weight. */
static bool usable(const struct ecod_attrib_job *jobs, size_t n,
                   const struct ecod_attrib_job *stray, enum ecod_basis b)
{
    double total = stray ? weight(stray, b) : 0;
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].known)
            return false;
        total += weight(&jobs[i], b);
    }
    return total > 0;
}

enum ecod_basis ecod__attrib_split_stray(double delta_j, const struct ecod_attrib_job *jobs,
                                         size_t n, const struct ecod_attrib_job *stray,
                                         double *part_j, double *stray_j)
{
    const struct ecod_attrib_job *st = stray_counts(jobs, n, stray) ? stray : NULL;
    if (stray_j)
        *stray_j = 0;
    if (n == 0 && !st)
        return ECOD_BASIS_NONE;
    if (n == 1 && !st) {
        part_j[0] = delta_j;
        return ECOD_BASIS_EXCLUSIVE;
    }
    enum ecod_basis b = usable(jobs, n, st, ECOD_BASIS_UTIL)     ? ECOD_BASIS_UTIL
                        : usable(jobs, n, st, ECOD_BASIS_MEMORY) ? ECOD_BASIS_MEMORY
                                                                 : ECOD_BASIS_EQUAL;
    /* party i < n is job i, party n the strays (when they count) */
    size_t parties = n + (st != NULL), big = 0;
    double total = 0, given = 0;
#define W(i) weight((i) < n ? &jobs[i] : st, b)
    for (size_t i = 0; i < parties; i++) {
        total += W(i);
        if (W(i) > W(big))
            big = i;
    }
    for (size_t i = 0; i < parties; i++) {
        if (i == big)
            continue;
        double x = delta_j * (W(i) / total);
        given += x;
        if (i < n)
            part_j[i] = x;
        else
            *stray_j = x;
    }
#undef W
    if (big < n) /* the rest: the parts add up to delta_j */
        part_j[big] = delta_j - given;
    else
        *stray_j = delta_j - given;
    return b;
}

enum ecod_basis ecod__attrib_split(double delta_j, const struct ecod_attrib_job *jobs, size_t n,
                                   double *part_j)
{
    return ecod__attrib_split_stray(delta_j, jobs, n, NULL, part_j, NULL);
}

/* Fields 4..6 of /proc/PID/stat (parent, process group, session, after the command's closing
 * parenthesis) and 22 (start time); 0 when it cannot be read (the process is gone). */
static int read_ids(pid_t pid, pid_t *ppid, pid_t *pgrp, pid_t *sid, uint64_t *ticks)
{
    char path[64], buf[1024];
    int a = 0, b = 0, c = 0;
    unsigned long long t = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *paren = strrchr(buf, ')');
    if (!paren || sscanf(paren + 1,
                         " %*c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                         "%*d %llu",
                         &a, &b, &c, &t) != 4)
        return -1;
    *ppid = (pid_t)a;
    *pgrp = (pid_t)b;
    *sid = (pid_t)c;
    *ticks = t;
    return 0;
}

/* The watched run whose process (its leader) is pid, NULL for none. */
static const struct ecod_run *run_led_by(const struct ecod *d, pid_t pid)
{
    for (size_t i = 0; pid > 1 && i < d->n_runs; i++)
        if (d->runs[i].pid == pid)
            return &d->runs[i];
    return NULL;
}

static bool watched(const struct ecod *d, int64_t job)
{
    for (size_t i = 0; i < d->n_runs; i++)
        if (d->runs[i].id == job)
            return true;
    return false;
}

/* The job process pid belongs to, 0 for none: its job's cgroup (jobcg.c) when jobs have
 * cgroups; else the owner remembered when it was seen (its samples outlive it); else the run
 * its parent chain reaches (a job's leader is a child subreaper: a descendant that double-forks
 * is re-parented to it, not to init) or whose session or process group it is in (the daemon
 * made the leader's session; Linux reuses no pid while a session or group holds it).
 * *alive: whether the process is in /proc now. */
static int64_t job_of(struct ecod *d, pid_t pid, bool *alive)
{
    pid_t ppid = 0, pgrp = 0, sid = 0;
    uint64_t ticks = 0;
    *alive = pid > 0 && read_ids(pid, &ppid, &pgrp, &sid, &ticks) == 0;
    int64_t job = *alive ? ecod__jobcg_job_of(d, pid) : 0;
    for (size_t c = 0; !job && pid > 0 && c < ECOD_PID_CACHE; c++) {
        const struct ecod_pid_owner *o = &d->pid_owner[c];
        if (o->pid != pid)
            continue;
        if ((!*alive || o->start_ticks == ticks) && watched(d, o->job))
            return o->job;
        break; /* a recycled pid, or a job no longer watched: walk again */
    }
    const struct ecod_run *r = NULL;
    if (!job && *alive) {
        pid_t p = pid, g, s;
        uint64_t t;
        for (int depth = 0; !r && p > 1 && depth < MAX_DEPTH; depth++)
            if (!(r = run_led_by(d, p)) && read_ids(p, &p, &g, &s, &t) < 0)
                break;
        /* a leader is its session's and group's leader (the runner's setsid): no process
         * outside its job can join either */
        if (!r && !(r = run_led_by(d, sid)))
            r = run_led_by(d, pgrp);
    }
    if (r)
        job = r->id;
    if (job > 0) { /* remembered in its own slot when it has one (no churn of the ring) */
        size_t c = 0;
        while (c < ECOD_PID_CACHE && d->pid_owner[c].pid != pid)
            c++;
        if (c == ECOD_PID_CACHE) {
            c = d->pid_owner_next;
            d->pid_owner_next = (d->pid_owner_next + 1) % ECOD_PID_CACHE;
        }
        d->pid_owner[c] = (struct ecod_pid_owner){.pid = pid, .start_ticks = ticks, .job = job};
    }
    return job;
}

/* Index in cand[0..k) (indices of d->runs) of job's run, -1 when it is not among them. */
static int cand_of(const struct ecod *d, const size_t *cand, size_t k, int64_t job)
{
    for (size_t i = 0; job > 0 && i < k; i++)
        if (d->runs[cand[i]].id == job)
            return (int)i;
    return -1;
}

/* Whether stray pid was logged already (its samples count after it exits); else, when log,
 * logs it once: its command and the job it belongs to (one not on this GPU, or ended). */
static bool stray_known(struct ecod *d, unsigned g, pid_t pid, int64_t job, bool log)
{
    for (size_t i = 0; i < ECOD_STRAY_SEEN; i++)
        if (d->stray_seen[i] == pid)
            return true;
    if (!log)
        return false;
    char path[64], comm[64] = "?";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "re");
    if (f && fgets(comm, sizeof comm, f))
        comm[strcspn(comm, "\n")] = '\0';
    if (f)
        fclose(f);
    if (job > 0)
        ECO_LOG(ECO_LOG_WARN, "sched",
                "GPU %u: process %d (%s) of job %" PRId64 " (ended, or not given this GPU) "
                "uses it: its share is charged to no job (unattributed)",
                g, (int)pid, comm, job);
    else
        ECO_LOG(ECO_LOG_WARN, "sched",
                "GPU %u: process %d (%s) belongs to no job: its share is charged to no job "
                "(unattributed)",
                g, (int)pid, comm);
    d->stray_seen[d->stray_seen_next] = pid;
    d->stray_seen_next = (d->stray_seen_next + 1) % ECOD_STRAY_SEEN;
    return true;
}

/* Process pid on GPU g: its index in cand[0..k), or -1 when it is a stray (then counted in
 * the GPU's stray list), or -2 when it is neither (gone from /proc and never seen: a process
 * of another pid namespace, whose ids mean nothing here, or one that came and went between
 * two readings). */
static int place(struct ecod *d, unsigned g, const size_t *cand, size_t k, pid_t pid)
{
    bool alive = false;
    int64_t job = job_of(d, pid, &alive);
    int o = cand_of(d, cand, k, job);
    if (o >= 0)
        return o;
    if (!stray_known(d, g, pid, job, alive))
        return -2;
    struct ecod_stray *s = &d->stray[g];
    unsigned i = 0;
    while (i < s->n && i < ECOD_STRAY_PIDS && s->pids[i] != pid)
        i++;
    if (i == s->n || i == ECOD_STRAY_PIDS) {
        if (s->n < ECOD_STRAY_PIDS)
            s->pids[s->n] = pid;
        s->n++; /* may count a pid past the list twice (memory and samples): a bound only */
    }
    return -1;
}

/* Reads GPU g's processes and utilisation samples into jobs[0..k) (cand: their runs) and
 * *stray (the processes of no job on it; d->stray[g] lists them). */
static void measure(struct ecod *d, unsigned g, const size_t *cand, size_t k,
                    struct ecod_attrib_job *jobs, struct ecod_attrib_job *stray)
{
    pid_t *pids = calloc(MAX_PROCS, sizeof *pids);
    uint64_t *mem = calloc(MAX_PROCS, sizeof *mem);
    struct eco_proc_util *smp = calloc(MAX_SAMPLES, sizeof *smp);
    size_t n = 0;
    if (!pids || !mem || !smp)
        goto out; /* nothing read: no weights, an equal split */
    if (eco_platform_gpu_procs(d->platform, g, pids, mem, MAX_PROCS, &n, NULL) == 0)
        for (size_t i = 0; i < n; i++) {
            int o = place(d, g, cand, k, pids[i]);
            if (o >= 0 || o == -1)
                (o >= 0 ? &jobs[o] : stray)->mem_b += (double)mem[i];
        }
    uint64_t since = d->gpu_util_us[g];
    int rc = eco_platform_proc_util(d->platform, g, since, smp, MAX_SAMPLES, &n, NULL);
    if (rc == 0 && n == 0 && since > 0) /* none since the last split: the latest kept */
        rc = eco_platform_proc_util(d->platform, g, 0, smp, MAX_SAMPLES, &n, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (smp[i].t_us > d->gpu_util_us[g])
            d->gpu_util_us[g] = smp[i].t_us;
        int o = place(d, g, cand, k, smp[i].pid);
        if (o >= 0 || o == -1)
            (o >= 0 ? &jobs[o] : stray)->util += smp[i].sm;
    }
out:
    stray->known = d->stray[g].n > 0;
    free(pids);
    free(mem);
    free(smp);
}

/* Where GPU g is in run r's list (r holds it). */
static uint32_t gpu_slot(const struct ecod_run *r, unsigned g)
{
    uint32_t m = 0;
    while (m + 1 < r->n_gpus && r->gpus[m] != g)
        m++;
    return m;
}

void ecod__attrib_gpu(struct ecod *d, unsigned g, double delta_j)
{
    size_t k = 0, *cand = NULL;
    struct ecod_attrib_job *jobs = NULL, stray = {0};
    double *part = NULL, *frac = NULL, stray_j = 0, stray_frac = 0;
    for (size_t i = 0; i < d->n_runs; i++)
        for (uint32_t m = 0; m < d->runs[i].n_gpus; m++)
            k += d->runs[i].gpus[m] == g;
    /* one more slot each, so that k == 0 allocates */
    cand = calloc(k + 1, sizeof *cand);
    jobs = calloc(k + 1, sizeof *jobs);
    part = calloc(k + 1, sizeof *part);
    frac = calloc(k + 1, sizeof *frac);
    if (!cand || !jobs || !part || !frac) {
        ECO_LOG(ECO_LOG_ERR, "sched", "GPU %u: out of memory: %.1f J not accounted", g, delta_j);
        goto out;
    }
    k = 0;
    bool all_known = true;
    for (size_t i = 0; i < d->n_runs; i++)
        for (uint32_t m = 0; m < d->runs[i].n_gpus; m++)
            if (d->runs[i].gpus[m] == g) {
                jobs[k].known = d->runs[i].pid > 0;
                all_known &= jobs[k].known;
                cand[k++] = i;
            }
    d->stray[g].n = 0;
    /* read even for one job alone (a process of no job beside it is not its own), but not
     * beside a Slurm job, whose processes cannot be told from strays */
    if (k > 1 || all_known)
        measure(d, g, cand, k, jobs, &stray);
    for (size_t i = 0; i < k; i++) {
        /* memory is read at the interval's end, when a job that just exited (and is reaped
         * now) has none left: its larger reading of the interval's two ends counts */
        double *prev = &d->runs[cand[i]].mem_prev_b[gpu_slot(&d->runs[cand[i]], g)];
        double now_b = jobs[i].mem_b; /* 0 when not read (alone beside nothing readable) */
        if (*prev > jobs[i].mem_b)
            jobs[i].mem_b = *prev;
        *prev = now_b;
    }
    enum ecod_basis b = ecod__attrib_split_stray(delta_j, jobs, k, &stray, part, &stray_j);
    ecod__attrib_split_stray(1.0, jobs, k, &stray, frac, &stray_frac);
    d->stray[g].share = stray_frac;
    d->stray[g].energy_j += stray_j;
    for (size_t i = 0; i < k; i++) {
        struct ecod_run *r = &d->runs[cand[i]];
        r->acc_j += part[i];
        r->basis_j[b] += part[i];
        r->frac[gpu_slot(r, g)] = frac[i];
        if (b > r->basis_now)
            r->basis_now = b; /* the worst of its GPUs' */
    }
out:
    free(cand);
    free(jobs);
    free(part);
    free(frac);
}
