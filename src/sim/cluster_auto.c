/* SPDX-License-Identifier: MIT */
/* `--cluster auto` and `--cluster peak`: homogeneous clusters sized from the trace itself. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/sim.h"

static int prefix(const char *arg, const char *word)
{
    size_t n = strlen(word);
    return !strncmp(arg, word, n) && (arg[n] == '\0' || arg[n] == 'x' || arg[n] == ':');
}

int eco_cluster_is_auto(const char *arg)
{
    return prefix(arg, "auto") || prefix(arg, "peak");
}

struct point {
    double t_s;
    double delta; /* GPUs taken (+) or returned (-) */
};

static int cmp_point(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    if (x->t_s != y->t_s)
        return x->t_s < y->t_s ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta); /* ends before starts */
}

/* Peak of concurrent GPU demand if every job started on arrival. */
static int peak_demand(const struct eco_jobset *set, double *peak)
{
    struct point *p = malloc((2 * set->n + 1) * sizeof *p);
    if (!p)
        return -ENOMEM;
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        p[2 * i] = (struct point){j->submit_s, j->gpus};
        p[2 * i + 1] = (struct point){j->submit_s + j->duration_s, -(double)j->gpus};
    }
    qsort(p, 2 * set->n, sizeof *p, cmp_point);
    double cur = 0;
    *peak = 0;
    for (size_t i = 0; i < 2 * set->n; i++) {
        cur += p[i].delta;
        if (cur > *peak)
            *peak = cur;
    }
    free(p);
    return 0;
}

int eco_cluster_auto(const char *arg, const struct eco_jobset *set, struct eco_cluster **out,
                     struct eco_error *err)
{
    *out = NULL;
    int by_peak = prefix(arg, "peak");
    char spec[128];
    const char *rest = arg + 4;
    unsigned gpus = 8;
    if (*rest == 'x') {
        char *end;
        unsigned long v = strtoul(rest + 1, &end, 10);
        if (end == rest + 1 || v < 1 || v > ECO_MAX_GPUS_PER_NODE || (*end && *end != ':'))
            return eco_errorf(err, -EINVAL, "cluster spec '%s': GPUs per node must be 1..%d", arg,
                              ECO_MAX_GPUS_PER_NODE);
        gpus = (unsigned)v;
        rest = end;
    }
    const char *type = *rest == ':' ? rest + 1 : "V100";
    double first = 0, last = 0, gpu_s = 0;
    uint32_t largest = 0;
    for (size_t i = 0; i < set->n; i++) {
        const struct eco_job *j = &set->jobs[i];
        if (i == 0 || j->submit_s < first)
            first = j->submit_s;
        if (i == 0 || j->submit_s + j->duration_s > last)
            last = j->submit_s + j->duration_s;
        gpu_s += j->duration_s * j->gpus;
        if (j->gpus > largest)
            largest = j->gpus;
    }
    double need = largest;
    if (by_peak) {
        double peak;
        if (peak_demand(set, &peak))
            return -ENOMEM;
        if (peak > need)
            need = peak;
    } else if (last > first && gpu_s / (last - first) / ECO_AUTO_TARGET_UTIL > need) {
        need = gpu_s / (last - first) / ECO_AUTO_TARGET_UTIL;
    }
    double nodes = ceil(need / gpus);
    if (nodes < 1)
        nodes = 1;
    if (nodes > ECO_MAX_NODES)
        return eco_errorf(err, -EINVAL,
                          "cluster spec '%s': the trace needs %.0f nodes, more than %u", arg, nodes,
                          ECO_MAX_NODES);
    snprintf(spec, sizeof spec, "%.0fx%u:%s", nodes, gpus, type);
    struct eco_error e2;
    int rc = eco_cluster_parse_spec(spec, out, &e2);
    if (rc == -EINVAL)
        rc = eco_errorf(err, -EINVAL, "cluster spec '%s': %s", arg,
                        strstr(e2.msg, "unknown GPU type") ? strstr(e2.msg, "unknown GPU type")
                                                           : e2.msg);
    return rc;
}
