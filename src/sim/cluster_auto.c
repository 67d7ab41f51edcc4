/* SPDX-License-Identifier: MIT */
/* `--cluster auto`: a homogeneous cluster sized from the trace's average GPU demand. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/sim.h"

int eco_cluster_is_auto(const char *arg)
{
    return !strncmp(arg, "auto", 4) && (arg[4] == '\0' || arg[4] == 'x' || arg[4] == ':');
}

int eco_cluster_auto(const char *arg, const struct eco_jobset *set, struct eco_cluster **out,
                     struct eco_error *err)
{
    *out = NULL;
    char suffix[128];
    const char *rest = arg + 4;
    unsigned gpus = 8;
    if (*rest == 'x') {
        char *end;
        unsigned long v = strtoul(rest + 1, &end, 10);
        if (end == rest + 1 || v < 1 || v > ECO_MAX_GPUS_PER_NODE || (*end && *end != ':'))
            return eco_error_set(err, "cluster spec '%s': GPUs per node must be 1..%d", arg,
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
    if (last > first && gpu_s / (last - first) / ECO_AUTO_TARGET_UTIL > need)
        need = gpu_s / (last - first) / ECO_AUTO_TARGET_UTIL;
    double nodes = ceil(need / gpus);
    if (nodes < 1)
        nodes = 1;
    if (nodes > ECO_MAX_NODES)
        return eco_error_set(err, "cluster spec '%s': the trace needs %.0f nodes, more than %u",
                             arg, nodes, ECO_MAX_NODES);
    snprintf(suffix, sizeof suffix, "%.0fx%u:%s", nodes, gpus, type);
    return eco_cluster_parse_spec(suffix, out, err);
}
