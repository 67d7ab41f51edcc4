/* SPDX-License-Identifier: MIT */
/* The "none" platform: a machine without GPUs. Jobs still run; every per-GPU call says the GPU
 * does not exist. */
#include <errno.h>
#include "platform/platform.h"

static int none_create(const char *lib_path, void **state, struct eco_error *err)
{
    (void)lib_path;
    (void)err;
    *state = NULL;
    return 0;
}

static void none_destroy(void *state)
{
    (void)state;
}

static unsigned none_count(const void *state)
{
    (void)state;
    return 0;
}

static int no_gpu(unsigned gpu, struct eco_error *err)
{
    return eco_errorf(err, -ENODEV, "none: GPU %u out of range (no GPUs)", gpu);
}

static int none_str(void *state, unsigned gpu, char *buf, size_t cap, struct eco_error *err)
{
    (void)state;
    if (cap)
        buf[0] = '\0';
    return no_gpu(gpu, err);
}

static int none_memory(void *state, unsigned gpu, uint64_t *total_b, uint64_t *used_b,
                       struct eco_error *err)
{
    (void)state;
    (void)total_b;
    (void)used_b;
    return no_gpu(gpu, err);
}

static int none_double(void *state, unsigned gpu, double *v, struct eco_error *err)
{
    (void)state;
    (void)v;
    return no_gpu(gpu, err);
}

static int none_range(void *state, unsigned gpu, struct eco_power_range *out, struct eco_error *err)
{
    (void)state;
    (void)out;
    return no_gpu(gpu, err);
}

static int none_set_limit(void *state, unsigned gpu, double limit_w, struct eco_error *err)
{
    (void)state;
    (void)limit_w;
    return no_gpu(gpu, err);
}

static int none_pids(void *state, unsigned gpu, pid_t *pids, size_t cap, size_t *n,
                     struct eco_error *err)
{
    (void)state;
    (void)pids;
    (void)cap;
    *n = 0;
    return no_gpu(gpu, err);
}

const struct eco_platform_ops eco_platform_none = {
    .name = "none",
    .summary = "no GPUs: jobs run without GPU choice, power limits or GPU energy",
    .create = none_create,
    .destroy = none_destroy,
    .gpu_count = none_count,
    .gpu_name = none_str,
    .gpu_uuid = none_str,
    .memory = none_memory,
    .util = none_double,
    .power = none_double,
    .power_limit = none_double,
    .power_range = none_range,
    .energy = none_double,
    .set_power_limit = none_set_limit,
    .gpu_pids = none_pids,
};
