/* SPDX-License-Identifier: MIT */
/* The runs ecoschedd watches (struct ecod's runs): their slots, run files, GPUs and requests,
 * and the power caps they ask of a GPU (the lowest cap of the jobs on it, on the power-limit
 * knob or the clock knob). No platform, store or clock. */
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/runner.h"
#include "runs.h"

/* Whether run r's cap acts on the SM clock (the daemon's jobs with power_knob = clock) rather
 * than on the power limit (Slurm jobs, whose limit the SPANK plugin sets, and the others). */
bool ecod__caps_clock(const struct ecod *d, const struct ecod_run *r)
{
    return d->power_knob_clock && r->slurm_job <= 0;
}

/* The lowest cap of the watched jobs on GPU g, other than run `skip` (SIZE_MAX: none), whose
 * caps act on the clock (clock) or on the power limit (!clock); 0 when none is capped. An
 * uncapped job does not raise it: jobs sharing a GPU get the strictest of their caps. *by: the
 * job that sets it (0 for none), when by is not NULL. */
double ecod__caps_lowest(const struct ecod *d, uint32_t g, size_t skip, bool clock, int64_t *by)
{
    double w = 0;
    int64_t id = 0;
    for (size_t i = 0; i < d->n_runs; i++) {
        const struct ecod_run *r = &d->runs[i];
        if (i == skip || !(r->cap_w > 0) || ecod__caps_clock(d, r) != clock)
            continue;
        for (uint32_t k = 0; k < r->n_gpus; k++)
            if (r->gpus[k] == g && (w == 0 || r->cap_w < w)) {
                w = r->cap_w;
                id = r->id;
            }
    }
    if (by)
        *by = id;
    return w;
}

double ecod__caps_gpu(const struct ecod *d, uint32_t g)
{
    return ecod__caps_lowest(d, g, SIZE_MAX, false, NULL);
}

int ecod__caps_set_limit(struct ecod *d, uint32_t g, double *w, struct eco_error *err)
{
    struct eco_power_range pr;
    int rc = 0;
    if (*w <= 0 && (rc = eco_platform_power_range(d->platform, g, &pr, err)) == 0)
        *w = pr.default_w;
    return rc ? rc : eco_platform_set_power_limit(d->platform, g, *w, err);
}

void ecod__run_file(const struct ecod *d, int64_t id, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%" PRId64, d->run_dir, id);
}

struct ecod_run *ecod__run_add(struct ecod *d)
{
    if (d->n_runs == d->cap_runs) {
        size_t cap = d->cap_runs ? 2 * d->cap_runs : 16;
        struct ecod_run *r = realloc(d->runs, cap * sizeof *r);
        if (!r)
            return NULL;
        d->runs = r;
        d->cap_runs = cap;
    }
    struct ecod_run *r = &d->runs[d->n_runs++];
    memset(r, 0, sizeof *r);
    return r;
}

/* The request a job makes of the selector. */
struct eco_gpu_request ecod__run_request(const struct eco_store_job *j)
{
    return (struct eco_gpu_request){
        .job_id = (uint64_t)j->id,
        .n_gpus = j->gpus,
        .mem_b = (uint64_t)(j->gpu_mem_gb * (double)(1ull << 30)),
        .share = j->share,
    };
}

/* "0,2" -> {0, 2}; -EINVAL on anything else or an index past the server's GPUs. */
int ecod__run_parse_gpus(const char *s, unsigned n_gpus, uint32_t *out, uint32_t *n)
{
    *n = 0;
    if (!s || !*s)
        return 0;
    while (*s) {
        char *end;
        errno = 0;
        unsigned long g = strtoul(s, &end, 10);
        if (end == s || errno || g >= n_gpus || *n >= ECO_GPUSEL_MAX_GPUS)
            return -EINVAL;
        out[(*n)++] = (uint32_t)g;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -EINVAL;
    }
    return 0;
}

bool ecod__run_alive(const struct ecod_run *r)
{
    return r->pid > 0 && eco_run_alive(r->pid, r->start_ticks); /* zombies count as gone */
}
