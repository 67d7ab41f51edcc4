/* SPDX-License-Identifier: MIT */
/* ecoschedd's GET /metrics: Prometheus text exposition format 0.0.4 (per GPU readings, job
 * counts per state, job energy with a bounded number of job labels, the running jobs' energy
 * and power); see docs/http-api.md. */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"
#include "ecod.h"
#include "nodecap.h"

/* Per-job series kept: the newest jobs only, so a server that has run a million jobs does not
 * hand Prometheus a million series (each costs a few KiB there). 100 covers every job a
 * server runs at once with room to spare; older jobs still count in the all-jobs total. */
#define RECENT_JOBS 100
#define STR_(x) #x
#define STR(x) STR_(x)

/* One GPU metric: name, help, type and how to read it. */
struct gpu_metric {
    const char *name;
    const char *help;
    const char *type;
    int (*read)(struct ecod *d, unsigned g, double *v);
};

static int read_power(struct ecod *d, unsigned g, double *v)
{
    return eco_platform_power(d->platform, g, v, NULL);
}

static int read_util(struct ecod *d, unsigned g, double *v)
{
    return eco_platform_util(d->platform, g, v, NULL);
}

static int read_mem(struct ecod *d, unsigned g, double *v, bool total)
{
    uint64_t t = 0, u = 0;
    int rc = eco_platform_memory(d->platform, g, &t, &u, NULL);
    *v = (double)(total ? t : u);
    return rc;
}

static int read_mem_used(struct ecod *d, unsigned g, double *v)
{
    return read_mem(d, g, v, false);
}

static int read_mem_total(struct ecod *d, unsigned g, double *v)
{
    return read_mem(d, g, v, true);
}

static int read_limit(struct ecod *d, unsigned g, double *v)
{
    return eco_platform_power_limit(d->platform, g, v, NULL);
}

static int read_energy(struct ecod *d, unsigned g, double *v)
{
    return eco_platform_energy(d->platform, g, v, NULL);
}

static int read_stray_n(struct ecod *d, unsigned g, double *v)
{
    *v = d->stray[g].n;
    return 0;
}

static int read_stray_j(struct ecod *d, unsigned g, double *v)
{
    *v = d->stray[g].energy_j;
    return 0;
}

static const struct gpu_metric GPU_METRICS[] = {
    {"ecosched_gpu_power_watts", "Power draw of the GPU.", "gauge", read_power},
    {"ecosched_gpu_utilization_ratio", "GPU utilisation (0..1), latest reading.", "gauge",
     read_util},
    {"ecosched_gpu_memory_used_bytes", "GPU memory in use.", "gauge", read_mem_used},
    {"ecosched_gpu_memory_total_bytes", "GPU memory size.", "gauge", read_mem_total},
    {"ecosched_gpu_power_limit_watts", "Power limit in force on the GPU.", "gauge", read_limit},
    {"ecosched_gpu_energy_joules_total",
     "Energy used by the GPU since its driver loaded (absent without an energy counter).",
     "counter", read_energy},
    {"ecosched_gpu_unattributed_processes",
     "Processes on the GPU that belong to no job on it, at the latest energy split.", "gauge",
     read_stray_n},
    {"ecosched_gpu_unattributed_energy_joules_total",
     "GPU energy split to processes of no job since the daemon started (charged to no job).",
     "counter", read_stray_j},
};

/* Writes `s` as a label value: backslash, double quote and line feed escaped (format 0.0.4). */
static void label_value(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '"')
            fputs("\\\"", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void header(FILE *f, const char *name, const char *help, const char *type)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample value: 15 significant digits (readable, and far finer than any sensor); NaN and
 * infinities spelled as the format wants. */
static void value(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN\n", f);
    else if (isinf(v))
        fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
    else
        fprintf(f, " %.15g\n", v);
}

static void gpu_metrics(struct ecod *d, FILE *f)
{
    for (size_t m = 0; m < sizeof GPU_METRICS / sizeof GPU_METRICS[0]; m++) {
        const struct gpu_metric *gm = &GPU_METRICS[m];
        header(f, gm->name, gm->help, gm->type);
        for (unsigned g = 0; g < d->n_gpus; g++) {
            char name[ECO_PLATFORM_STR_MAX];
            double v;
            if (gm->read(d, g, &v) < 0)
                continue; /* no reading: no sample, rather than a made-up 0 */
            if (eco_platform_gpu_name(d->platform, g, name, sizeof name, NULL) < 0)
                snprintf(name, sizeof name, "unknown");
            fprintf(f, "%s{gpu=\"%u\",model=\"", gm->name, g);
            label_value(f, name);
            fputs("\"}", f);
            value(f, v);
        }
    }
}

static int job_metrics(struct ecod *d, FILE *f, struct eco_error *err)
{
    struct eco_store_stats st;
    int64_t ids[RECENT_JOBS];
    double energy[RECENT_JOBS];
    size_t n = 0;
    int rc = eco_store_stats(d->store, &st, err);
    if (rc < 0)
        return rc;
    if ((rc = eco_store_recent_energy(d->store, RECENT_JOBS, ids, energy, &n, err)) < 0)
        return rc;
    header(f, "ecosched_jobs", "Jobs in the store by state.", "gauge");
    for (int s = 0; s < ECO_STORE_NSTATES; s++)
        fprintf(f, "ecosched_jobs{state=\"%s\"} %" PRIu64 "\n",
                eco_store_state_name((enum eco_store_state)s), st.jobs[s]);
    /* the all-jobs counters are the stored jobs' sums plus the pruned jobs' totals, which the
     * store keeps apart from the rows (store.h, eco_store_prune): pruning never lowers them */
    header(f, "ecosched_jobs_pruned_total",
           "Finished jobs deleted from the store after keep_finished_s (still counted in the "
           "all-jobs totals).",
           "counter");
    fprintf(f, "ecosched_jobs_pruned_total %" PRIu64 "\n", st.pruned_jobs);
    header(f, "ecosched_jobs_energy_joules_total",
           "GPU energy of all jobs ever run, pruned ones included (jobs sharing a GPU each count "
           "it).",
           "counter");
    fputs("ecosched_jobs_energy_joules_total", f);
    value(f, st.energy_j);
    header(f, "ecosched_job_energy_joules_total",
           "GPU energy of one job; only the " STR(RECENT_JOBS) " newest jobs are exported.",
           "counter");
    for (size_t i = n; i-- > 0;) {
        fprintf(f, "ecosched_job_energy_joules_total{job=\"%" PRId64 "\"}", ids[i]);
        value(f, energy[i]);
    }
    if (d->grid.carbon.loaded) {
        header(f, "ecosched_jobs_carbon_kg_total",
               "Carbon (kg CO2eq) of all jobs' GPU energy under the carbon signal, pruned ones "
               "included.",
               "counter");
        fputs("ecosched_jobs_carbon_kg_total", f);
        value(f, st.carbon_kg);
    }
    if (d->grid.price.loaded) {
        header(f, "ecosched_jobs_cost_total",
               "Cost of all jobs' GPU energy under the price signal, pruned ones included.",
               "counter");
        fprintf(f, "ecosched_jobs_cost_total{currency=\"%s\"}", ecod__grid_currency(&d->grid));
        value(f, st.cost);
    }
    return 0;
}

bool ecod__user_name(uid_t uid, char *buf, size_t cap)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &res) == 0 && res && res->pw_name[0]) {
        snprintf(buf, cap, "%s", res->pw_name);
        return true;
    }
    snprintf(buf, cap, "%u", (unsigned)uid);
    return false;
}

/* Run r's power: its part of each of its GPUs (the latest split) times the GPU's power. False
 * when a GPU has no power reading. */
static bool run_power(struct ecod *d, const struct ecod_run *r, double *w)
{
    *w = 0;
    for (uint32_t m = 0; m < r->n_gpus; m++) {
        double p = 0;
        if (eco_platform_power(d->platform, r->gpus[m], &p, NULL) < 0)
            return false;
        *w += r->frac[m] * p;
    }
    return true;
}

/* Labels of a running job: job_id, user, slurm_job_id ("" when not a Slurm job). */
static void run_labels(struct ecod *d, const struct ecod_run *r, FILE *f)
{
    struct eco_store_job j;
    char user[256] = "";
    if (eco_store_get(d->store, r->id, &j, NULL) == 0)
        ecod__user_name(j.uid, user, sizeof user);
    eco_store_job_fini(&j);
    fprintf(f, "{job_id=\"%" PRId64 "\",user=\"", r->id);
    label_value(f, user);
    if (r->slurm_job > 0)
        fprintf(f, "\",slurm_job_id=\"%" PRId64 "\"}", r->slurm_job);
    else
        fputs("\",slurm_job_id=\"\"}", f);
}

/* The running jobs' carbon and cost so far, beside their energy (only with a signal; a job's
 * figure counts only the part of its run the signal covers: see the API's *_partial). */
static void running_grid_metrics(struct ecod *d, FILE *f)
{
    if (d->grid.carbon.loaded) {
        header(f, "ecosched_running_job_carbon_kg_total",
               "Carbon (kg CO2eq) of a running job's GPU energy so far, under the carbon signal.",
               "counter");
        for (size_t i = 0; i < d->n_runs; i++) {
            if (d->runs[i].end_unrecorded)
                continue;
            fputs("ecosched_running_job_carbon_kg_total", f);
            run_labels(d, &d->runs[i], f);
            value(f, d->runs[i].grid.carbon_kg);
        }
    }
    if (d->grid.price.loaded) {
        header(f, "ecosched_running_job_cost_total",
               "Cost of a running job's GPU energy so far under the price signal (currency in "
               "the ecosched_grid_price_per_mwh series' label).",
               "counter");
        for (size_t i = 0; i < d->n_runs; i++) {
            if (d->runs[i].end_unrecorded)
                continue;
            fputs("ecosched_running_job_cost_total", f);
            run_labels(d, &d->runs[i], f);
            value(f, d->runs[i].grid.cost);
        }
    }
    double now = eco_wall_s();
    if (d->grid.carbon.loaded && eco_signal_covers(&d->grid.carbon.s, now, now)) {
        header(f, "ecosched_grid_carbon_gco2eq_per_kwh",
               "The carbon signal's intensity now (absent when the signal does not cover now).",
               "gauge");
        fputs("ecosched_grid_carbon_gco2eq_per_kwh", f);
        value(f, eco_signal_value(&d->grid.carbon.s, now));
    }
    if (d->grid.price.loaded && eco_signal_covers(&d->grid.price.s, now, now)) {
        header(f, "ecosched_grid_price_per_mwh",
               "The price signal's electricity price now per MWh (absent when not covered).",
               "gauge");
        fprintf(f, "ecosched_grid_price_per_mwh{currency=\"%s\"}", ecod__grid_currency(&d->grid));
        value(f, eco_signal_value(&d->grid.price.s, now));
    }
}

/* The running jobs' GPU energy and power, one series each per running job: a job's series go
 * when it ends, so their number is bounded by what runs at once (docs/http-api.md). */
static void running_job_metrics(struct ecod *d, FILE *f)
{
    static const struct {
        const char *name, *help, *type;
    } fam[] = {
        {"ecosched_running_job_energy_joules_total",
         "GPU energy of a running job so far: its measured share of each GPU it uses.", "counter"},
        {"ecosched_running_job_power_watts",
         "GPU power of a running job: its latest share of its GPUs' power.", "gauge"},
    };
    for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++) {
        header(f, fam[k].name, fam[k].help, fam[k].type);
        for (size_t i = 0; i < d->n_runs; i++) {
            const struct ecod_run *r = &d->runs[i];
            double w = 0;
            if (r->end_unrecorded || (k == 1 && !run_power(d, r, &w)))
                continue;
            fputs(fam[k].name, f);
            run_labels(d, r, f);
            value(f, k == 0 ? r->energy_j : w);
        }
    }
    running_grid_metrics(d, f);
}

/* The node power budget's capping metrics, with the simulator's definitions
 * (docs/policies/powercap.md, "Metrics"); the budget is 0 when none is set. */
static void budget_metrics(struct ecod *d, FILE *f)
{
    struct ecod_nodecap_status s;
    ecod_nodecap_status(d, &s);
    const struct eco_cap_metrics_report *m = &s.met;
    const struct {
        const char *name, *help, *type;
        double v;
    } rows[] = {
        {"ecosched_power_budget_watts", "Node power budget for the jobs' GPUs (0: none).", "gauge",
         s.budget_w},
        {"ecosched_power_budget_measured_watts",
         "Measured power of the GPUs at the last control period.", "gauge", s.measured_w},
        {"ecosched_power_budget_periods_total", "Control periods under a budget.", "counter",
         (double)m->periods},
        {"ecosched_power_budget_binding_periods_total",
         "Periods whose demand at full power exceeds the budget.", "counter",
         (double)m->binding_periods},
        {"ecosched_power_budget_above_periods_total", "Periods above the budget.", "counter",
         (double)m->above_periods},
        {"ecosched_power_budget_mae_binding_ratio",
         "Mean |power - budget| / budget over the binding periods.", "gauge",
         m->mae_binding_pct / 100},
        {"ecosched_power_budget_mae_ratio", "Mean |power - budget| / budget over all periods.",
         "gauge", m->mae_all_pct / 100},
        {"ecosched_power_budget_overshoot_ratio",
         "Largest excess over the budget after settling, relative to it.", "gauge",
         m->overshoot_pct / 100},
        {"ecosched_power_budget_overshoot_raw_ratio",
         "Largest excess over the budget, settling periods included.", "gauge",
         m->overshoot_raw_pct / 100},
        {"ecosched_power_budget_above_seconds_total", "Time above the budget.", "counter",
         m->above_s},
        {"ecosched_power_budget_above_joules_total", "Energy above the budget.", "counter",
         m->above_kwh * 3.6e6},
        {"ecosched_node_fallback_active",
         "1 while powerd's fallback share is the node budget (powerd silent past its lease).",
         "gauge", d->lease.active ? 1 : 0},
        {"ecosched_node_fallback_watts", "The fallback share powerd last gave (0: no lease).",
         "gauge", d->lease.fallback_w},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        header(f, rows[i].name, rows[i].help, rows[i].type);
        fputs(rows[i].name, f);
        value(f, rows[i].v);
    }
}

int ecod__metrics_render(struct ecod *d, char **text, size_t *len, struct eco_error *err)
{
    char *buf = NULL;
    size_t size = 0;
    int ret = 0;
    FILE *f = open_memstream(&buf, &size);
    *text = NULL;
    *len = 0;
    if (!f) {
        ret = eco_errorf(err, -errno, "metrics: out of memory");
        goto out;
    }
    gpu_metrics(d, f);
    budget_metrics(d, f);
    ret = job_metrics(d, f, err);
    if (ret == 0)
        running_job_metrics(d, f);
    if (fclose(f) != 0 && ret == 0) {
        ret = eco_errorf(err, -ENOMEM, "metrics: out of memory");
    }
    f = NULL;
    if (ret == 0) {
        *text = buf;
        *len = size;
        buf = NULL;
    }
out:
    free(buf);
    return ret;
}
