/* SPDX-License-Identifier: MIT */
/* Simulator output: jobs.csv, rejected.csv and the summary JSON object. Numbers are printed
 * with %.15g (and jansson's 15-digit reals) so that identical runs give identical bytes. */
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "sim/sim.h"
#include "util/grid_signal.h"

/* Writes a CSV field, quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Whether the trace kept Slurm's accounting fields (sacct: user, account, partition, state). */
static int have_acct(const struct eco_jobset *set)
{
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->account_off || j->partition_off || j->acct_state_off)
            return 1;
    }
    return 0;
}

int eco_sim_write_jobs_csv(FILE *f, const struct eco_jobset *set, const struct eco_sim_result *r)
{
    int acct = have_acct(set);
    fputs("job_id,submit_s,start_s,end_s,gpus,nodes,wait_s,jct_s,preemptions,energy_j,workload", f);
    /* carbon and cost columns only with a signal, so that jobs.csv without keeps its columns */
    if (r->job_carbon_kg && r->summary.have_carbon)
        fputs(",carbon_kg", f);
    if (r->job_cost && r->summary.have_price)
        fputs(",cost", f);
    /* the accounting columns only for a trace that has them, so that other traces keep theirs */
    if (acct)
        fputs(",user,account,partition,state", f);
    fputc('\n', f);
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->state == ECO_JOB_REJECTED)
            continue;
        csv_field(f, eco_jobset_str(set, j->id_off));
        fprintf(f, ",%.15g,", j->submit_s);
        if (j->start_s >= 0)
            fprintf(f, "%.15g", j->start_s);
        fputc(',', f);
        if (j->state == ECO_JOB_DONE)
            fprintf(f, "%.15g", j->end_s);
        fprintf(f, ",%u,", j->gpus);
        for (uint32_t k = 0; k < j->alloc_n && j->alloc_off + k < r->n_alloc; k++)
            fprintf(f, k ? ";%u" : "%u", r->alloc_pool[j->alloc_off + k].node);
        if (j->state == ECO_JOB_DONE)
            fprintf(f, ",%.15g,%.15g,%u,", j->wait_s, j->end_s - j->submit_s, j->preemptions);
        else
            fprintf(f, ",,,%u,", j->preemptions);
        fprintf(f, "%.15g,%s", j->energy_j, eco_workload_name(j->workload));
        if (r->job_carbon_kg && r->summary.have_carbon)
            fprintf(f, ",%.15g", r->job_carbon_kg[i]);
        if (r->job_cost && r->summary.have_price)
            fprintf(f, ",%.15g", r->job_cost[i]);
        if (acct) {
            const uint32_t off[] = {j->user_off, j->account_off, j->partition_off,
                                    j->acct_state_off};
            for (size_t k = 0; k < sizeof off / sizeof off[0]; k++) {
                fputc(',', f);
                csv_field(f, eco_jobset_str(set, off[k]));
            }
        }
        fputc('\n', f);
    }
    return ferror(f) ? -EIO : 0;
}

const char *eco_sim_reject_reason(int reason)
{
    switch (reason) {
    case ECO_REJECT_POWER:
        return "needs more power than the budget allows even alone at minimum limits";
    case ECO_REJECT_GPU_TYPE:
        return "needs a GPU type the cluster has none of";
    default:
        return "larger than all GPUs of the cluster it may use";
    }
}

int eco_sim_write_rejected_csv(FILE *f, const struct eco_jobset *set)
{
    fputs("job_id,line,gpus,gpu_type,reason\n", f);
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->state != ECO_JOB_REJECTED)
            continue;
        csv_field(f, eco_jobset_str(set, j->id_off));
        fprintf(f, ",%u,%u,%s,%s\n", j->line, j->gpus,
                j->gpu_type >= 0 ? eco_catalog_get((size_t)j->gpu_type)->name : "",
                eco_sim_reject_reason(j->reject_reason));
    }
    return ferror(f) ? -EIO : 0;
}

int eco_sim_write_nodes_csv(FILE *f, const struct eco_cluster *c, const struct eco_sim_result *r)
{
    int carbon = r->node_carbon_kg && r->summary.have_carbon;
    int price = r->node_cost && r->summary.have_price;
    fprintf(f, "node,group,gpu_type,gpus,energy_j,boots%s%s\n", carbon ? ",carbon_kg" : "",
            price ? ",cost" : "");
    for (uint32_t n = 0; n < c->n_nodes && n < r->n_nodes; n++) {
        fprintf(f, "%u,%u,%s,%u,%.15g,%u", n, c->nodes[n].group,
                eco_catalog_get(c->nodes[n].type)->name, c->nodes[n].gpus, r->node_energy_j[n],
                r->node_boots[n]);
        if (carbon)
            fprintf(f, ",%.15g", r->node_carbon_kg[n]);
        if (price)
            fprintf(f, ",%.15g", r->node_cost[n]);
        fputc('\n', f);
    }
    return ferror(f) ? -EIO : 0;
}

void eco_timeline_writer_init(struct eco_timeline_writer *w, FILE *f, double sample_s)
{
    eco_timeline_writer_init_signals(w, f, sample_s, 0, 0);
}

void eco_timeline_writer_init_signals(struct eco_timeline_writer *w, FILE *f, double sample_s,
                                      int carbon, int price)
{
    *w = (struct eco_timeline_writer){
        .f = f, .sample_s = sample_s, .carbon = carbon, .price = price};
    fprintf(f, "time_s,power_w,budget_w,busy_gpus,nodes_on,queued%s%s\n",
            carbon ? ",carbon_g_per_kwh,carbon_kg" : "", price ? ",price_per_mwh,cost" : "");
}

static void timeline_line(const struct eco_timeline_writer *w, double t,
                          const struct eco_timeline_row *r)
{
    fprintf(w->f, "%.15g,%.15g,%.15g,%llu,%u,%llu", t, r->power_w, r->budget_w,
            (unsigned long long)r->busy_gpus, r->nodes_on, (unsigned long long)r->queued);
    if (w->carbon)
        fprintf(w->f, ",%.15g,%.15g", r->carbon_g_per_kwh, r->carbon_kg);
    if (w->price)
        fprintf(w->f, ",%.15g,%.15g", r->price_per_mwh, r->cost);
    fputc('\n', w->f);
}

/* Emits the state in force at each sample time before t (the last row seen). */
static void timeline_flush(struct eco_timeline_writer *w, double t)
{
    while (w->next_s < t) {
        timeline_line(w, w->next_s, &w->last);
        w->next_s += w->sample_s;
    }
}

void eco_timeline_write(void *ctx, const struct eco_timeline_row *row)
{
    struct eco_timeline_writer *w = ctx;
    if (w->sample_s <= 0) {
        timeline_line(w, row->t_s, row);
        return;
    }
    if (!w->started) {
        w->started = 1;
        w->next_s = row->t_s;
    } else {
        timeline_flush(w, row->t_s);
    }
    w->last = *row;
}

int eco_timeline_writer_finish(struct eco_timeline_writer *w, double end_s)
{
    if (w->sample_s > 0 && w->started) {
        timeline_flush(w, end_s);
        if (w->next_s <= end_s)
            timeline_line(w, w->next_s, &w->last);
    }
    return ferror(w->f) ? -EIO : 0;
}

static int set_num(json_t *o, const char *k, double v)
{
    return json_object_set_new(o, k, json_real(v));
}

static int set_int(json_t *o, const char *k, uint64_t v)
{
    return json_object_set_new(o, k, json_integer((json_int_t)v));
}

char *eco_sim_summary_json(const struct eco_sim_summary *s, int with_wall)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "policy", json_string(s->policy ? s->policy : ""));
    bad |= json_object_set_new(o, "placement", json_string(s->placement ? s->placement : ""));
    bad |=
        json_object_set_new(o, "power_down", json_string(s->power_down ? s->power_down : "none"));
    bad |= set_int(o, "seed", s->seed);
    bad |= set_int(o, "cluster_nodes", s->cluster_nodes);
    bad |= set_int(o, "cluster_gpus", s->cluster_gpus);
    bad |= set_int(o, "jobs", s->jobs);
    bad |= set_int(o, "completed", s->completed);
    bad |= set_int(o, "rejected", s->rejected);
    bad |= set_int(o, "unfinished", s->unfinished);
    bad |= set_int(o, "skipped_rows", s->skipped_rows);
    bad |= set_int(o, "preemptions", s->preemptions);
    bad |= set_num(o, "avg_jct_s", s->avg_jct_s);
    bad |= set_num(o, "p50_jct_s", s->p50_jct_s);
    bad |= set_num(o, "p95_jct_s", s->p95_jct_s);
    bad |= set_num(o, "p99_jct_s", s->p99_jct_s);
    bad |= set_num(o, "avg_wait_s", s->avg_wait_s);
    bad |= set_num(o, "p95_wait_s", s->p95_wait_s);
    bad |= set_num(o, "makespan_s", s->makespan_s);
    bad |= set_num(o, "window_start_s", s->window_start_s);
    bad |= set_num(o, "window_end_s", s->window_end_s);
    bad |= set_num(o, "gpu_util", s->gpu_util);
    bad |= set_num(o, "busy_gpu_s", s->busy_gpu_s);
    json_t *en = json_object();
    bad |= !en;
    if (en) {
        bad |= set_num(en, "total", s->energy_j.total);
        bad |= set_num(en, "gpu_busy", s->energy_j.gpu_busy);
        bad |= set_num(en, "gpu_idle", s->energy_j.gpu_idle);
        bad |= set_num(en, "node_base", s->energy_j.node_base);
        bad |= set_num(en, "off", s->energy_j.off);
        bad |= set_num(en, "transitions", s->energy_j.transitions);
        bad |= json_object_set_new(o, "energy_j", en);
    }
    bad |= set_num(o, "energy_kwh", s->energy_j.total / 3.6e6);
    bad |= set_num(o, "avg_power_w", s->avg_power_w);
    bad |= set_num(o, "peak_power_w", s->peak_power_w);
    bad |= set_int(o, "node_boots", s->node_boots);
    bad |= set_int(o, "node_shutdowns", s->node_shutdowns);
    bad |= set_int(o, "boot_delayed_starts", s->boot_delayed_starts);
    bad |= set_int(o, "power_cycles", s->power_cycles);
    bad |= set_num(o, "cycle_cost_kwh", s->cycle_cost_j / 3.6e6);
    bad |= json_object_set_new(o, "power_policy",
                               json_string(s->power_policy ? s->power_policy : "none"));
    bad |= set_int(o, "deadline_jobs", s->deadline_jobs);
    bad |= set_num(o, "deadline_miss_ratio", s->deadline_miss_ratio);
    bad |= set_num(o, "power_cap_mae_pct", s->power_cap_mae_pct);
    bad |= set_num(o, "power_cap_mae_all_pct", s->power_cap_mae_all_pct);
    bad |= set_num(o, "power_cap_max_overshoot_pct", s->power_cap_max_overshoot_pct);
    bad |= set_num(o, "power_cap_raw_overshoot_pct", s->power_cap_raw_overshoot_pct);
    bad |= set_num(o, "power_cap_over_s", s->power_cap_over_s);
    bad |= set_num(o, "power_cap_over_kwh", s->power_cap_over_kwh);
    bad |= set_num(o, "power_cap_over_share", s->power_cap_over_share);
    bad |= set_num(o, "overshoot_s", s->overshoot_s);
    bad |= set_int(o, "capped_periods", s->capped_periods);
    bad |= set_int(o, "power_cap_periods", s->power_cap_periods);
    bad |= set_int(o, "settling_periods", s->settling_periods);
    bad |= set_int(o, "admission_waits", s->admission_waits);
    if (s->have_carbon || s->have_price) {
        char when[32];
        eco_format_utc(s->epoch0_s, when, sizeof when);
        bad |= json_object_set_new(o, "trace_start", json_string(when));
    }
    if (s->have_carbon)
        bad |= set_num(o, "carbon_kg", s->carbon_kg);
    if (s->have_carbon_bound) {
        bad |= set_num(o, "jobs_carbon_kg", s->jobs_carbon_kg);
        bad |= set_num(o, "carbon_bound_kg", s->carbon_bound.kg);
        bad |= set_num(o, "carbon_bound_late_jobs", s->carbon_bound.late);
        bad |= set_int(o, "carbon_bound_columns", s->carbon_bound.columns);
        bad |= set_num(o, "carbon_bound_slot_s", s->carbon_bound.slot_s);
        if (with_wall)
            bad |= set_num(o, "carbon_bound_solve_s", s->carbon_bound.solve_s);
    }
    if (s->carbon_policy && strcmp(s->carbon_policy, "none")) {
        bad |= json_object_set_new(o, "carbon_policy", json_string(s->carbon_policy));
        bad |= set_int(o, "deferred", s->deferred);
        bad |= set_num(o, "avg_deferral_s", s->avg_deferral_s);
        if (s->interrupting) {
            bad |= set_int(o, "suspensions", s->suspensions);
            bad |= set_num(o, "checkpoint_s", s->checkpoint_s);
        }
    }
    if (s->have_price) {
        bad |= set_num(o, "cost", s->cost);
        bad |= json_object_set_new(o, "cost_currency", json_string(s->cost_currency));
    }
    bad |= set_int(o, "events", s->events);
    if (with_wall)
        bad |= set_num(o, "sim_wall_s", s->sim_wall_s);
    char *text =
        bad ? NULL : json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) | JSON_INDENT(2));
    json_decref(o);
    return text;
}
