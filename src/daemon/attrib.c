/* SPDX-License-Identifier: MIT */
/* Per-job energy on a shared GPU: the split rule (pure) and the readings it is fed with, the
 * GPU's processes, their memory and their SM utilisation samples, each process mapped to the
 * job it descends from. The rule and its error model are in docs/models/energy.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attrib.h"
#include "ecod.h"

/* Processes read per GPU and accounting. A GPU runs a handful (MPS and time-slicing setups a
 * few dozen); 256 is the fake NVML's own limit and far above what shares one GPU. */
#define MAX_PROCS 256
/* Utilisation samples read per GPU and accounting: NVML keeps about a second of samples per
 * process (1/6 s apart on recent GPUs), so 1024 is 170 processes' worth at the 1 s tick. */
#define MAX_SAMPLES 1024
/* Ancestors walked from a GPU process to its job's process: a shell, a launcher (torchrun,
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

/* Whether basis b can split: every job's processes known and a positive total weight. */
static bool usable(const struct ecod_attrib_job *jobs, size_t n, enum ecod_basis b)
{
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].known)
            return false;
        total += weight(&jobs[i], b);
    }
    return total > 0;
}

enum ecod_basis ecod__attrib_split(double delta_j, const struct ecod_attrib_job *jobs, size_t n,
                                   double *part_j)
{
    if (n == 0)
        return ECOD_BASIS_NONE;
    if (n == 1) {
        part_j[0] = delta_j;
        return ECOD_BASIS_EXCLUSIVE;
    }
    enum ecod_basis b = usable(jobs, n, ECOD_BASIS_UTIL)     ? ECOD_BASIS_UTIL
                        : usable(jobs, n, ECOD_BASIS_MEMORY) ? ECOD_BASIS_MEMORY
                                                             : ECOD_BASIS_EQUAL;
    double total = 0, given = 0;
    size_t big = 0;
    for (size_t i = 0; i < n; i++) {
        total += weight(&jobs[i], b);
        if (weight(&jobs[i], b) > weight(&jobs[big], b))
            big = i;
    }
    for (size_t i = 0; i < n; i++)
        if (i != big)
            given += part_j[i] = delta_j * (weight(&jobs[i], b) / total);
    part_j[big] = delta_j - given; /* the rest: the parts add up to delta_j */
    return b;
}

/* The parent of pid from /proc/PID/stat (field 4, after the command's closing parenthesis),
 * 0 when it cannot be read (the process is gone). */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    int ppid = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *paren = strrchr(buf, ')');
    if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1)
        return 0;
    return (pid_t)ppid;
}

/* Index in cand[0..k) (indices of d->runs) of the run that process pid belongs to, -1 for
 * none. The owner is remembered, so that the samples of a process that has exited since
 * (gone from /proc) still count for its job. */
static int owner(struct ecod *d, const size_t *cand, size_t k, pid_t pid)
{
    for (size_t c = 0; pid > 0 && c < ECOD_PID_CACHE; c++) {
        if (d->pid_owner[c].pid != pid)
            continue;
        for (size_t i = 0; i < k; i++)
            if (d->runs[cand[i]].id == d->pid_owner[c].job)
                return (int)i;
        break; /* a job no longer on this GPU: the pid may have been reused, walk again */
    }
    pid_t p = pid;
    for (int depth = 0; p > 1 && depth < MAX_DEPTH; depth++, p = parent_of(p))
        for (size_t i = 0; i < k; i++)
            if (d->runs[cand[i]].pid == p) {
                d->pid_owner[d->pid_owner_next] =
                    (struct ecod_pid_owner){.pid = pid, .job = d->runs[cand[i]].id};
                d->pid_owner_next = (d->pid_owner_next + 1) % ECOD_PID_CACHE;
                return (int)i;
            }
    return -1;
}

/* Reads GPU g's processes and utilisation samples into jobs[0..k) (cand: their runs). */
static void measure(struct ecod *d, unsigned g, const size_t *cand, size_t k,
                    struct ecod_attrib_job *jobs)
{
    pid_t *pids = calloc(MAX_PROCS, sizeof *pids);
    uint64_t *mem = calloc(MAX_PROCS, sizeof *mem);
    struct eco_proc_util *smp = calloc(MAX_SAMPLES, sizeof *smp);
    size_t n = 0;
    if (!pids || !mem || !smp)
        goto out; /* nothing read: no weights, an equal split */
    if (eco_platform_gpu_procs(d->platform, g, pids, mem, MAX_PROCS, &n, NULL) == 0)
        for (size_t i = 0; i < n; i++) {
            int o = owner(d, cand, k, pids[i]);
            if (o >= 0)
                jobs[o].mem_b += (double)mem[i];
        }
    uint64_t since = d->gpu_util_us[g];
    int rc = eco_platform_proc_util(d->platform, g, since, smp, MAX_SAMPLES, &n, NULL);
    if (rc == 0 && n == 0 && since > 0) /* none since the last split: the latest kept */
        rc = eco_platform_proc_util(d->platform, g, 0, smp, MAX_SAMPLES, &n, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (smp[i].t_us > d->gpu_util_us[g])
            d->gpu_util_us[g] = smp[i].t_us;
        int o = owner(d, cand, k, smp[i].pid);
        if (o >= 0)
            jobs[o].util += smp[i].sm;
    }
out:
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
    struct ecod_attrib_job *jobs = NULL;
    double *part = NULL, *frac = NULL;
    for (size_t i = 0; i < d->n_runs; i++)
        for (uint32_t m = 0; m < d->runs[i].n_gpus; m++)
            k += d->runs[i].gpus[m] == g;
    if (k == 0)
        return;
    cand = calloc(k, sizeof *cand);
    jobs = calloc(k, sizeof *jobs);
    part = calloc(k, sizeof *part);
    frac = calloc(k, sizeof *frac);
    if (!cand || !jobs || !part || !frac) {
        ECO_LOG(ECO_LOG_ERR, "sched", "GPU %u: out of memory: %.1f J not accounted", g, delta_j);
        goto out;
    }
    k = 0;
    for (size_t i = 0; i < d->n_runs; i++)
        for (uint32_t m = 0; m < d->runs[i].n_gpus; m++)
            if (d->runs[i].gpus[m] == g) {
                jobs[k].known = d->runs[i].pid > 0;
                cand[k++] = i;
            }
    if (k > 1)
        measure(d, g, cand, k, jobs);
    for (size_t i = 0; i < k; i++) {
        /* memory is read at the interval's end, when a job that just exited (and is reaped
         * now) has none left: its larger reading of the interval's two ends counts */
        double *prev = &d->runs[cand[i]].mem_prev_b[gpu_slot(&d->runs[cand[i]], g)];
        double now_b = k > 1 ? jobs[i].mem_b : 0;
        if (*prev > jobs[i].mem_b)
            jobs[i].mem_b = *prev;
        *prev = now_b;
    }
    enum ecod_basis b = ecod__attrib_split(delta_j, jobs, k, part);
    ecod__attrib_split(1.0, jobs, k, frac);
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
