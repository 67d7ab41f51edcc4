/* SPDX-License-Identifier: MIT */
/* Registry of GPU platforms by name, and the open/close and per-GPU wrappers over their ops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "platform/platform.h"

static const struct eco_platform_ops *const platforms[] = {
#define ECO_PLATFORM(name) &eco_platform_##name,
#include "platforms.def"
#undef ECO_PLATFORM
    NULL,
};

const struct eco_platform_ops *const *eco_platform_all(void)
{
    return platforms;
}

const struct eco_platform_ops *eco_platform_find(const char *name)
{
    for (size_t i = 0; name && platforms[i]; i++)
        if (!strcasecmp(platforms[i]->name, name))
            return platforms[i];
    return NULL;
}

int eco_platform_open(const char *name, const char *lib_path, struct eco_platform **out,
                      struct eco_error *err)
{
    struct eco_platform *p = NULL;
    int rc = 0;
    *out = NULL;
    const struct eco_platform_ops *ops = eco_platform_find(name);
    if (!ops) {
        rc = eco_errorf(err, -EINVAL, "unknown platform '%s' (known: nvml, fake, none)",
                        name ? name : "(null)");
        goto out;
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        rc = eco_errorf(err, -ENOMEM, "%s: out of memory", ops->name);
        goto out;
    }
    p->ops = ops;
    rc = ops->create(lib_path, &p->state, err);
    if (rc < 0)
        goto out;
    *out = p;
    p = NULL;
out:
    free(p);
    return rc;
}

void eco_platform_close(struct eco_platform *p)
{
    if (!p)
        return;
    p->ops->destroy(p->state);
    free(p);
}

const char *eco_platform_name(const struct eco_platform *p)
{
    return p->ops->name;
}

unsigned eco_platform_gpu_count(const struct eco_platform *p)
{
    return p->ops->gpu_count(p->state);
}

int eco_platform_gpu_name(struct eco_platform *p, unsigned gpu, char *buf, size_t cap,
                          struct eco_error *err)
{
    return p->ops->gpu_name(p->state, gpu, buf, cap, err);
}

int eco_platform_gpu_uuid(struct eco_platform *p, unsigned gpu, char *buf, size_t cap,
                          struct eco_error *err)
{
    return p->ops->gpu_uuid(p->state, gpu, buf, cap, err);
}

int eco_platform_memory(struct eco_platform *p, unsigned gpu, uint64_t *total_b, uint64_t *used_b,
                        struct eco_error *err)
{
    return p->ops->memory(p->state, gpu, total_b, used_b, err);
}

int eco_platform_util(struct eco_platform *p, unsigned gpu, double *util, struct eco_error *err)
{
    return p->ops->util(p->state, gpu, util, err);
}

int eco_platform_power(struct eco_platform *p, unsigned gpu, double *power_w, struct eco_error *err)
{
    return p->ops->power(p->state, gpu, power_w, err);
}

int eco_platform_power_limit(struct eco_platform *p, unsigned gpu, double *limit_w,
                             struct eco_error *err)
{
    return p->ops->power_limit(p->state, gpu, limit_w, err);
}

int eco_platform_power_range(struct eco_platform *p, unsigned gpu, struct eco_power_range *out,
                             struct eco_error *err)
{
    return p->ops->power_range(p->state, gpu, out, err);
}

int eco_platform_energy(struct eco_platform *p, unsigned gpu, double *energy_j,
                        struct eco_error *err)
{
    return p->ops->energy(p->state, gpu, energy_j, err);
}

int eco_platform_set_power_limit(struct eco_platform *p, unsigned gpu, double limit_w,
                                 struct eco_error *err)
{
    return p->ops->set_power_limit(p->state, gpu, limit_w, err);
}

int eco_platform_gpu_pids(struct eco_platform *p, unsigned gpu, pid_t *pids, size_t cap, size_t *n,
                          struct eco_error *err)
{
    return p->ops->gpu_pids(p->state, gpu, pids, cap, n, err);
}

int eco_platform_gpu_procs(struct eco_platform *p, unsigned gpu, pid_t *pids, uint64_t *mem_b,
                           size_t cap, size_t *n, struct eco_error *err)
{
    *n = 0;
    if (!p->ops->gpu_procs)
        return eco_errorf(err, -ENOTSUP, "%s: no per-process memory readings", p->ops->name);
    return p->ops->gpu_procs(p->state, gpu, pids, mem_b, cap, n, err);
}

int eco_platform_proc_util(struct eco_platform *p, unsigned gpu, uint64_t since_us,
                           struct eco_proc_util *out, size_t cap, size_t *n, struct eco_error *err)
{
    *n = 0;
    if (!p->ops->proc_util)
        return eco_errorf(err, -ENOTSUP, "%s: no per-process utilisation", p->ops->name);
    return p->ops->proc_util(p->state, gpu, since_us, out, cap, n, err);
}

int eco_platform_set_locked_clocks(struct eco_platform *p, unsigned gpu, double min_mhz,
                                   double max_mhz, struct eco_error *err)
{
    if (!p->ops->set_locked_clocks)
        return eco_errorf(err, -ENOTSUP, "%s: no clock control", p->ops->name);
    return p->ops->set_locked_clocks(p->state, gpu, min_mhz, max_mhz, err);
}

int eco_platform_reset_locked_clocks(struct eco_platform *p, unsigned gpu, struct eco_error *err)
{
    if (!p->ops->reset_locked_clocks)
        return eco_errorf(err, -ENOTSUP, "%s: no clock control", p->ops->name);
    return p->ops->reset_locked_clocks(p->state, gpu, err);
}

int eco_platform_sm_clock(struct eco_platform *p, unsigned gpu, double *mhz, struct eco_error *err)
{
    if (!p->ops->sm_clock)
        return eco_errorf(err, -ENOTSUP, "%s: no clock readings", p->ops->name);
    return p->ops->sm_clock(p->state, gpu, mhz, err);
}
