/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s GET /metrics: the budget, the measured cluster and node power and each
 * running Slurm job's power and energy in the Prometheus text format 0.0.4, rendered from the
 * last period's status (docs/slurm/powerd.md, "Metrics"). */
#define _GNU_SOURCE /* open_memstream */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <microhttpd.h>
#include "powerd.h"
#include "util/http_server.h"
#include "util/log.h"

/* A label value with the format's escapes (backslash, double quote, newline). */
static void label_value(FILE *f, const char *s)
{
    for (; s && *s; s++) {
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

/* A sample value: 15 significant digits; NaN and infinities as the format spells them. */
static void value(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN\n", f);
    else if (isinf(v))
        fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
    else
        fprintf(f, " %.15g\n", v);
}

static double num(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The budget and the cluster's power; st may be an empty object (before the first period). */
static void cluster_metrics(FILE *f, const json_t *st, double budget_w)
{
    header(f, "ecosched_powerd_budget_watts", "The cluster's GPU power budget as set.", "gauge");
    fputs("ecosched_powerd_budget_watts", f);
    value(f, budget_w);
    double eff = num(json_object_get(st, "grid"), "budget_effective_w");
    if (isfinite(eff)) {
        header(f, "ecosched_powerd_budget_effective_watts",
               "The budget in force this period (demand response may lower it).", "gauge");
        fputs("ecosched_powerd_budget_effective_watts", f);
        value(f, eff);
    }
    double p = num(st, "power_w");
    if (isfinite(p)) {
        header(f, "ecosched_powerd_power_watts",
               "Measured GPU power of the nodes whose ecoschedd answered this period.", "gauge");
        fputs("ecosched_powerd_power_watts", f);
        value(f, p);
    }
}

static void node_metrics(FILE *f, const json_t *st)
{
    json_t *a = json_object_get(st, "nodes"), *o;
    size_t i;
    header(f, "ecosched_powerd_node_up", "1 when the node's ecoschedd answered this period.",
           "gauge");
    json_array_foreach(a, i, o)
    {
        fputs("ecosched_powerd_node_up{node=\"", f);
        label_value(f, json_string_value(json_object_get(o, "name")));
        fputs("\"}", f);
        value(f, json_is_true(json_object_get(o, "responsive")) ? 1 : 0);
    }
    header(f, "ecosched_powerd_node_power_watts",
           "Measured GPU power of a node (its last answer; see ecosched_powerd_node_up).", "gauge");
    json_array_foreach(a, i, o)
    {
        fputs("ecosched_powerd_node_power_watts{node=\"", f);
        label_value(f, json_string_value(json_object_get(o, "name")));
        fputs("\"}", f);
        value(f, num(o, "power_w"));
    }
}

/* One series per running Slurm job and family: a job's series go once squeue no longer lists
 * it running, so their number is bounded by the jobs running at once. */
static void job_metrics(FILE *f, const json_t *st, bool users)
{
    static const struct {
        const char *name, *help, *type, *key;
    } fam[] = {
        {"ecosched_powerd_job_energy_joules_total",
         "GPU energy of a running Slurm job so far, summed over its nodes' ecoschedd figures.",
         "counter", "energy_j"},
        {"ecosched_powerd_job_power_watts",
         "GPU power of a running Slurm job: its GPUs' power, a shared GPU's split equally.",
         "gauge", "power_w"},
    };
    json_t *a = json_object_get(st, "jobs"), *o;
    size_t i;
    for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++) {
        header(f, fam[k].name, fam[k].help, fam[k].type);
        json_array_foreach(a, i, o)
        {
            json_int_t id = json_integer_value(json_object_get(o, "job_id"));
            fprintf(f, "%s{job_id=\"%" JSON_INTEGER_FORMAT "\"", fam[k].name, id);
            if (users) {
                fprintf(f, ",user=\"");
                label_value(f, json_string_value(json_object_get(o, "user")));
                fprintf(f, "\"");
            }
            fprintf(f, ",slurm_job_id=\"%" JSON_INTEGER_FORMAT "\"}", id);
            value(f, num(o, fam[k].key));
        }
    }
}

int eco_powerd__metrics(struct powerd *pd, struct MHD_Connection *c, bool users)
{
    char *text = NULL;
    size_t len = 0;
    struct MHD_Response *r = NULL;
    enum MHD_Result ret = MHD_NO;
    pthread_mutex_lock(&pd->lock);
    json_t *st = pd->status ? json_incref(pd->status) : json_object();
    double budget = pd->budget_w;
    pthread_mutex_unlock(&pd->lock);
    /* the loop replaces the status, never changes it, and jansson's reference counts are
     * atomic (2.11 and later): reading our reference unlocked is safe */
    FILE *f = open_memstream(&text, &len);
    if (!f || !st) {
        ret = eco_http_fail(c, 500, NULL, "out of memory");
        goto out;
    }
    cluster_metrics(f, st, budget);
    node_metrics(f, st);
    job_metrics(f, st, users);
    if (fclose(f) != 0) {
        f = NULL;
        ret = eco_http_fail(c, 500, NULL, "out of memory");
        goto out;
    }
    f = NULL;
    if (!(r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE)))
        goto out;
    text = NULL;
    MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    ret = MHD_queue_response(c, 200, r);
out:
    if (f)
        fclose(f);
    if (r)
        MHD_destroy_response(r);
    free(text);
    json_decref(st);
    return ret;
}
