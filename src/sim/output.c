/* SPDX-License-Identifier: MIT */
/* Simulator output: jobs.csv, rejected.csv and the summary JSON object. Numbers are printed
 * with %.15g (and jansson's 15-digit reals) so that identical runs give identical bytes. */
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include "ecosched/sim.h"

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

int eco_sim_write_jobs_csv(FILE *f, const struct eco_jobset *set, const struct eco_sim_result *r)
{
    fputs("job_id,submit_s,start_s,end_s,gpus,nodes,wait_s,jct_s,preemptions\n", f);
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
            fprintf(f, ",%.15g,%.15g,%u\n", j->wait_s, j->end_s - j->submit_s, j->preemptions);
        else
            fprintf(f, ",,,%u\n", j->preemptions);
    }
    return ferror(f) ? -EIO : 0;
}

int eco_sim_write_rejected_csv(FILE *f, const struct eco_jobset *set)
{
    fputs("job_id,line,gpus,gpu_type,reason\n", f);
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (j->state != ECO_JOB_REJECTED)
            continue;
        csv_field(f, eco_jobset_str(set, j->id_off));
        fprintf(f, ",%u,%u,%d,larger than all GPUs of the cluster it may use\n", j->line, j->gpus,
                j->gpu_type);
    }
    return ferror(f) ? -EIO : 0;
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
    bad |= set_num(o, "gpu_util", s->gpu_util);
    bad |= set_num(o, "busy_gpu_s", s->busy_gpu_s);
    bad |= set_int(o, "events", s->events);
    if (with_wall)
        bad |= set_num(o, "sim_wall_s", s->sim_wall_s);
    char *text = bad ? NULL : json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15) | JSON_INDENT(2));
    json_decref(o);
    return text;
}
