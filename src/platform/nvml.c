/* SPDX-License-Identifier: MIT */
/* The "nvml" and "fake" platforms: NVML loaded with dlopen, from libnvidia-ml.so.1 or from the
 * project's fake NVML library; both go through exactly this code. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "platform/platform.h"
#include "nvml_api.h"

#define NVML_DEFAULT_LIB "libnvidia-ml.so.1"
#define FAKE_LIB_NAME "libecosched-fake-nvml.so"
#define LIB_PATH_MAX 4096

typedef nvmlReturn_t (*fn_void)(void);
typedef const char *(*fn_errstr)(nvmlReturn_t);
typedef nvmlReturn_t (*fn_count)(unsigned *);
typedef nvmlReturn_t (*fn_handle)(unsigned, nvmlDevice_t *);
typedef nvmlReturn_t (*fn_str)(nvmlDevice_t, char *, unsigned);
typedef nvmlReturn_t (*fn_mem)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*fn_util)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*fn_uint)(nvmlDevice_t, unsigned *);
typedef nvmlReturn_t (*fn_range)(nvmlDevice_t, unsigned *, unsigned *);
typedef nvmlReturn_t (*fn_set)(nvmlDevice_t, unsigned);
typedef nvmlReturn_t (*fn_ull)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*fn_procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v2_t *);
typedef nvmlReturn_t (*fn_putil)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
                                 unsigned long long);
typedef nvmlReturn_t (*fn_lock)(nvmlDevice_t, unsigned, unsigned);
typedef nvmlReturn_t (*fn_dev)(nvmlDevice_t);
typedef nvmlReturn_t (*fn_clock)(nvmlDevice_t, nvmlClockType_t, unsigned *);

struct nvml {
    const char *backend; /* "nvml" or "fake", for messages */
    char lib[LIB_PATH_MAX];
    void *dl;
    bool inited;
    unsigned n;
    nvmlDevice_t *dev;
    fn_void init, shutdown;
    fn_errstr errstr;
    fn_count count;
    fn_handle handle;
    fn_str name, uuid;
    fn_mem memory;
    fn_util util;
    fn_uint power, limit, enforced, default_limit;
    fn_range constraints;
    fn_set set_limit;
    fn_ull energy;       /* optional: pre-Volta drivers lack it */
    fn_procs procs;      /* optional: _v3, else _v2 */
    fn_putil proc_util;  /* optional: per-process utilisation samples */
    fn_lock lock_clocks; /* optional: drivers before 418 lack locked clocks */
    fn_dev reset_clocks; /* optional, with lock_clocks */
    fn_clock clock_info; /* optional */
};

/* Looks up `name`; a missing required symbol sets *rc (first one only) and err. */
static void *sym(struct nvml *st, const char *name, bool required, int *rc, struct eco_error *err)
{
    void *p = dlsym(st->dl, name);
    if (!p && required && *rc == 0)
        *rc = eco_errorf(err, -ENOSYS, "%s: NVML library '%s' lacks symbol %s", st->backend,
                         st->lib, name);
    return p;
}

static int load_syms(struct nvml *st, struct eco_error *err)
{
    int rc = 0;
    st->init = (fn_void)sym(st, "nvmlInit_v2", true, &rc, err);
    st->shutdown = (fn_void)sym(st, "nvmlShutdown", true, &rc, err);
    st->errstr = (fn_errstr)sym(st, "nvmlErrorString", true, &rc, err);
    st->count = (fn_count)sym(st, "nvmlDeviceGetCount_v2", true, &rc, err);
    st->handle = (fn_handle)sym(st, "nvmlDeviceGetHandleByIndex_v2", true, &rc, err);
    st->name = (fn_str)sym(st, "nvmlDeviceGetName", true, &rc, err);
    st->uuid = (fn_str)sym(st, "nvmlDeviceGetUUID", true, &rc, err);
    st->memory = (fn_mem)sym(st, "nvmlDeviceGetMemoryInfo", true, &rc, err);
    st->util = (fn_util)sym(st, "nvmlDeviceGetUtilizationRates", true, &rc, err);
    st->power = (fn_uint)sym(st, "nvmlDeviceGetPowerUsage", true, &rc, err);
    st->limit = (fn_uint)sym(st, "nvmlDeviceGetPowerManagementLimit", true, &rc, err);
    st->enforced = (fn_uint)sym(st, "nvmlDeviceGetEnforcedPowerLimit", false, &rc, err);
    st->default_limit =
        (fn_uint)sym(st, "nvmlDeviceGetPowerManagementDefaultLimit", true, &rc, err);
    st->constraints =
        (fn_range)sym(st, "nvmlDeviceGetPowerManagementLimitConstraints", true, &rc, err);
    st->set_limit = (fn_set)sym(st, "nvmlDeviceSetPowerManagementLimit", true, &rc, err);
    st->energy = (fn_ull)sym(st, "nvmlDeviceGetTotalEnergyConsumption", false, &rc, err);
    st->procs = (fn_procs)sym(st, "nvmlDeviceGetComputeRunningProcesses_v3", false, &rc, err);
    if (!st->procs)
        st->procs = (fn_procs)sym(st, "nvmlDeviceGetComputeRunningProcesses_v2", false, &rc, err);
    st->proc_util = (fn_putil)sym(st, "nvmlDeviceGetProcessUtilization", false, &rc, err);
    st->lock_clocks = (fn_lock)sym(st, "nvmlDeviceSetGpuLockedClocks", false, &rc, err);
    st->reset_clocks = (fn_dev)sym(st, "nvmlDeviceResetGpuLockedClocks", false, &rc, err);
    st->clock_info = (fn_clock)sym(st, "nvmlDeviceGetClockInfo", false, &rc, err);
    return rc;
}

/* NVML codes to errno codes; the message keeps NVML's own text. */
static int errno_of(nvmlReturn_t r)
{
    switch (r) {
    case NVML_ERROR_INVALID_ARGUMENT:
        return -EINVAL;
    case NVML_ERROR_NOT_SUPPORTED:
        return -ENOTSUP;
    case NVML_ERROR_NO_PERMISSION:
        return -EPERM;
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return -ENOSPC;
    case NVML_ERROR_NOT_FOUND:
    case NVML_ERROR_DRIVER_NOT_LOADED:
    case NVML_ERROR_LIBRARY_NOT_FOUND:
        return -ENODEV;
    default:
        return -EIO;
    }
}

static const char *errtext(const struct nvml *st, nvmlReturn_t r)
{
    const char *s = st->errstr ? st->errstr(r) : NULL;
    return s ? s : "unknown NVML error";
}

static int check(const struct nvml *st, unsigned gpu, nvmlReturn_t r, const char *call,
                 struct eco_error *err)
{
    if (r == NVML_SUCCESS)
        return 0;
    return eco_errorf(err, errno_of(r), "%s: GPU %u: %s: %s (NVML code %d)", st->backend, gpu, call,
                      errtext(st, r), r);
}

static int device(const struct nvml *st, unsigned gpu, nvmlDevice_t *d, struct eco_error *err)
{
    if (gpu >= st->n)
        return eco_errorf(err, -ENODEV, "%s: GPU %u out of range (%u GPUs)", st->backend, gpu,
                          st->n);
    *d = st->dev[gpu];
    return 0;
}

static void nvml_destroy(void *state)
{
    struct nvml *st = state;
    if (!st)
        return;
    if (st->inited)
        st->shutdown();
    if (st->dl)
        dlclose(st->dl);
    free(st->dev);
    free(st);
}

static int nvml_open(const char *backend, const char *lib, void **state, struct eco_error *err)
{
    struct nvml *st = NULL;
    int rc = 0;
    *state = NULL;
    st = calloc(1, sizeof *st);
    if (!st) {
        rc = eco_errorf(err, -ENOMEM, "%s: out of memory", backend);
        goto out;
    }
    st->backend = backend;
    snprintf(st->lib, sizeof st->lib, "%s", lib);
    st->dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!st->dl) {
        const char *why = dlerror();
        rc = eco_errorf(err, -ENOENT, "%s: cannot load NVML library '%s': %s", backend, lib,
                        why ? why : "dlopen failed");
        goto out;
    }
    rc = load_syms(st, err);
    if (rc < 0)
        goto out;
    nvmlReturn_t r = st->init();
    if (r != NVML_SUCCESS) {
        rc = eco_errorf(err, -ENODEV, "%s: nvmlInit_v2 from '%s' failed: %s (NVML code %d)",
                        backend, lib, errtext(st, r), r);
        goto out;
    }
    st->inited = true;
    r = st->count(&st->n);
    if (r != NVML_SUCCESS) {
        rc = eco_errorf(err, errno_of(r), "%s: nvmlDeviceGetCount_v2: %s", backend, errtext(st, r));
        goto out;
    }
    st->dev = calloc(st->n ? st->n : 1, sizeof *st->dev);
    if (!st->dev) {
        rc = eco_errorf(err, -ENOMEM, "%s: out of memory", backend);
        goto out;
    }
    for (unsigned i = 0; i < st->n; i++) {
        rc = check(st, i, st->handle(i, &st->dev[i]), "nvmlDeviceGetHandleByIndex_v2", err);
        if (rc < 0)
            goto out;
    }
    *state = st;
    st = NULL;
out:
    nvml_destroy(st);
    return rc;
}

static int nvml_create(const char *lib_path, void **state, struct eco_error *err)
{
    return nvml_open("nvml", lib_path ? lib_path : NVML_DEFAULT_LIB, state, err);
}

/* The fake library: lib_path, else $ECOSCHED_FAKE_NVML_LIB, else next to the executable. */
static int fake_create(const char *lib_path, void **state, struct eco_error *err)
{
    char path[LIB_PATH_MAX];
    if (!lib_path || !*lib_path)
        lib_path = getenv("ECOSCHED_FAKE_NVML_LIB");
    if (!lib_path || !*lib_path) {
        ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
        if (len < 0) {
            *state = NULL;
            return eco_errorf(err, -ENOENT,
                              "fake: cannot find " FAKE_LIB_NAME
                              " (no library path, $ECOSCHED_FAKE_NVML_LIB unset, "
                              "/proc/self/exe unreadable: %s)",
                              strerror(errno));
        }
        path[len] = '\0';
        char *slash = strrchr(path, '/');
        size_t dir = slash ? (size_t)(slash - path) : 0;
        if (dir + sizeof "/" FAKE_LIB_NAME > sizeof path)
            dir = 0;
        memcpy(path + dir, "/" FAKE_LIB_NAME, sizeof "/" FAKE_LIB_NAME);
        lib_path = path;
    }
    return nvml_open("fake", lib_path, state, err);
}

static unsigned nvml_count(const void *state)
{
    const struct nvml *st = state;
    return st->n;
}

static int get_str(struct nvml *st, unsigned gpu, fn_str fn, const char *call, char *buf,
                   size_t cap, struct eco_error *err)
{
    char tmp[ECO_PLATFORM_STR_MAX] = "";
    nvmlDevice_t d = NULL;
    if (cap)
        buf[0] = '\0';
    int rc = device(st, gpu, &d, err);
    if (rc < 0)
        return rc;
    rc = check(st, gpu, fn(d, tmp, sizeof tmp), call, err);
    if (rc < 0)
        return rc;
    tmp[sizeof tmp - 1] = '\0';
    if (cap)
        snprintf(buf, cap, "%s", tmp);
    return 0;
}

static int nvml_name(void *state, unsigned gpu, char *buf, size_t cap, struct eco_error *err)
{
    struct nvml *st = state;
    return get_str(st, gpu, st->name, "nvmlDeviceGetName", buf, cap, err);
}

static int nvml_uuid(void *state, unsigned gpu, char *buf, size_t cap, struct eco_error *err)
{
    struct nvml *st = state;
    return get_str(st, gpu, st->uuid, "nvmlDeviceGetUUID", buf, cap, err);
}

static int nvml_memory(void *state, unsigned gpu, uint64_t *total_b, uint64_t *used_b,
                       struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    nvmlMemory_t m;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = check(st, gpu, st->memory(d, &m), "nvmlDeviceGetMemoryInfo", err);
    if (rc == 0) {
        *total_b = m.total;
        *used_b = m.used;
    }
    return rc;
}

static int nvml_util(void *state, unsigned gpu, double *util, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    nvmlUtilization_t u;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = check(st, gpu, st->util(d, &u), "nvmlDeviceGetUtilizationRates", err);
    if (rc == 0)
        *util = (u.gpu > 100 ? 100 : u.gpu) / 100.0;
    return rc;
}

static int read_mw(struct nvml *st, unsigned gpu, fn_uint fn, const char *call, double *w,
                   struct eco_error *err)
{
    nvmlDevice_t d = NULL;
    unsigned mw = 0;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = check(st, gpu, fn(d, &mw), call, err);
    if (rc == 0)
        *w = mw / 1000.0;
    return rc;
}

static int nvml_power(void *state, unsigned gpu, double *power_w, struct eco_error *err)
{
    struct nvml *st = state;
    return read_mw(st, gpu, st->power, "nvmlDeviceGetPowerUsage", power_w, err);
}

static int nvml_limit(void *state, unsigned gpu, double *limit_w, struct eco_error *err)
{
    struct nvml *st = state;
    int rc = read_mw(st, gpu, st->limit, "nvmlDeviceGetPowerManagementLimit", limit_w, err);
    if (rc == -ENOTSUP && st->enforced)
        rc = read_mw(st, gpu, st->enforced, "nvmlDeviceGetEnforcedPowerLimit", limit_w, err);
    return rc;
}

static int nvml_range(void *state, unsigned gpu, struct eco_power_range *out, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    unsigned lo = 0, hi = 0;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = check(st, gpu, st->constraints(d, &lo, &hi),
                   "nvmlDeviceGetPowerManagementLimitConstraints", err);
    if (rc == 0)
        rc = read_mw(st, gpu, st->default_limit, "nvmlDeviceGetPowerManagementDefaultLimit",
                     &out->default_w, err);
    if (rc == 0) {
        out->min_w = lo / 1000.0;
        out->max_w = hi / 1000.0;
    }
    return rc;
}

static int nvml_energy(void *state, unsigned gpu, double *energy_j, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    unsigned long long mj = 0;
    int rc = device(st, gpu, &d, err);
    if (rc < 0)
        return rc;
    if (!st->energy)
        return eco_errorf(err, -ENOTSUP,
                          "%s: GPU %u: '%s' lacks nvmlDeviceGetTotalEnergyConsumption", st->backend,
                          gpu, st->lib);
    rc = check(st, gpu, st->energy(d, &mj), "nvmlDeviceGetTotalEnergyConsumption", err);
    if (rc == 0)
        *energy_j = (double)mj / 1000.0;
    return rc;
}

static int nvml_set_limit(void *state, unsigned gpu, double limit_w, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    int rc = device(st, gpu, &d, err);
    if (rc < 0)
        return rc;
    if (!(limit_w > 0 && limit_w < 4e6))
        return eco_errorf(err, -EINVAL, "%s: GPU %u: power limit %g W is not a power", st->backend,
                          gpu, limit_w);
    unsigned mw = (unsigned)(limit_w * 1000.0 + 0.5);
    nvmlReturn_t r = st->set_limit(d, mw);
    if (r == NVML_SUCCESS)
        return 0;
    unsigned lo = 0, hi = 0;
    if (r == NVML_ERROR_INVALID_ARGUMENT && st->constraints(d, &lo, &hi) == NVML_SUCCESS)
        return eco_errorf(err, -EINVAL,
                          "%s: GPU %u: power limit %g W refused: outside %g..%g W (%s)",
                          st->backend, gpu, limit_w, lo / 1000.0, hi / 1000.0, errtext(st, r));
    return eco_errorf(err, errno_of(r),
                      "%s: GPU %u: nvmlDeviceSetPowerManagementLimit(%u mW): %s%s", st->backend,
                      gpu, mw, errtext(st, r),
                      r == NVML_ERROR_NO_PERMISSION ? " (setting limits needs root)" : "");
}

static int need(const struct nvml *st, unsigned gpu, bool have, const char *name,
                struct eco_error *err);

static int nvml_procs(void *state, unsigned gpu, pid_t *pids, uint64_t *mem_b, size_t cap,
                      size_t *n, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlProcessInfo_v2_t *info = NULL;
    nvmlDevice_t d = NULL;
    *n = 0;
    int rc = device(st, gpu, &d, err);
    if (rc < 0)
        goto out;
    if (!st->procs) {
        rc = eco_errorf(err, -ENOTSUP,
                        "%s: '%s' lacks nvmlDeviceGetComputeRunningProcesses_v3 and _v2",
                        st->backend, st->lib);
        goto out;
    }
    if (cap > 4096)
        cap = 4096; /* far more than one GPU runs; bounds the scratch buffer */
    if (cap) {
        info = calloc(cap, sizeof *info);
        if (!info) {
            rc = eco_errorf(err, -ENOMEM, "%s: out of memory", st->backend);
            goto out;
        }
    }
    unsigned count = (unsigned)cap;
    nvmlReturn_t r = st->procs(d, &count, info);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
        *n = count;
        rc = eco_errorf(err, -ENOSPC, "%s: GPU %u: %u processes, room for %zu", st->backend, gpu,
                        count, cap);
        goto out;
    }
    rc = check(st, gpu, r, "nvmlDeviceGetComputeRunningProcesses", err);
    if (rc < 0)
        goto out;
    for (unsigned i = 0; i < count && i < cap; i++) {
        pids[i] = (pid_t)info[i].pid;
        if (mem_b)
            mem_b[i] =
                info[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? 0 : info[i].usedGpuMemory;
    }
    *n = count;
out:
    free(info);
    return rc;
}

static int nvml_pids(void *state, unsigned gpu, pid_t *pids, size_t cap, size_t *n,
                     struct eco_error *err)
{
    return nvml_procs(state, gpu, pids, NULL, cap, n, err);
}

static int nvml_proc_util(void *state, unsigned gpu, uint64_t since_us, struct eco_proc_util *out,
                          size_t cap, size_t *n, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlProcessUtilizationSample_t *smp = NULL;
    nvmlDevice_t d = NULL;
    *n = 0;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = need(st, gpu, st->proc_util != NULL, "nvmlDeviceGetProcessUtilization", err);
    if (rc < 0)
        goto out;
    if (cap > 4096)
        cap = 4096; /* NVML keeps about a second of samples per process; bounds the buffer */
    if (cap && !(smp = calloc(cap, sizeof *smp))) {
        rc = eco_errorf(err, -ENOMEM, "%s: out of memory", st->backend);
        goto out;
    }
    unsigned count = (unsigned)cap;
    nvmlReturn_t r = st->proc_util(d, smp, &count, since_us);
    if (r == NVML_ERROR_NOT_FOUND)
        goto out; /* no samples since since_us */
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
        *n = count;
        rc = eco_errorf(err, -ENOSPC, "%s: GPU %u: %u utilisation samples, room for %zu",
                        st->backend, gpu, count, cap);
        goto out;
    }
    rc = check(st, gpu, r, "nvmlDeviceGetProcessUtilization", err);
    if (rc < 0)
        goto out;
    for (unsigned i = 0; i < count && i < cap; i++)
        out[i] = (struct eco_proc_util){.pid = (pid_t)smp[i].pid,
                                        .t_us = smp[i].timeStamp,
                                        .sm = (smp[i].smUtil > 100 ? 100 : smp[i].smUtil) / 100.0};
    *n = count < cap ? count : cap;
out:
    free(smp);
    return rc;
}

/* A symbol optional at load that this call needs. */
static int need(const struct nvml *st, unsigned gpu, bool have, const char *name,
                struct eco_error *err)
{
    if (have)
        return 0;
    return eco_errorf(err, -ENOTSUP, "%s: GPU %u: '%s' lacks %s", st->backend, gpu, st->lib, name);
}

static int nvml_lock_clocks(void *state, unsigned gpu, double min_mhz, double max_mhz,
                            struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = need(st, gpu, st->lock_clocks != NULL, "nvmlDeviceSetGpuLockedClocks", err);
    if (rc < 0)
        return rc;
    if (!(min_mhz > 0 && min_mhz <= max_mhz && max_mhz < 1e5))
        return eco_errorf(err, -EINVAL, "%s: GPU %u: locked clocks %g..%g MHz: not a range",
                          st->backend, gpu, min_mhz, max_mhz);
    unsigned lo = (unsigned)(min_mhz + 0.5), hi = (unsigned)(max_mhz + 0.5);
    nvmlReturn_t r = st->lock_clocks(d, lo, hi);
    if (r == NVML_SUCCESS)
        return 0;
    return eco_errorf(err, errno_of(r), "%s: GPU %u: nvmlDeviceSetGpuLockedClocks(%u, %u): %s%s",
                      st->backend, gpu, lo, hi, errtext(st, r),
                      r == NVML_ERROR_NO_PERMISSION ? " (locking clocks needs root)" : "");
}

static int nvml_reset_clocks(void *state, unsigned gpu, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = need(st, gpu, st->reset_clocks != NULL, "nvmlDeviceResetGpuLockedClocks", err);
    if (rc == 0)
        rc = check(st, gpu, st->reset_clocks(d), "nvmlDeviceResetGpuLockedClocks", err);
    return rc;
}

static int nvml_sm_clock(void *state, unsigned gpu, double *mhz, struct eco_error *err)
{
    struct nvml *st = state;
    nvmlDevice_t d = NULL;
    unsigned c = 0;
    int rc = device(st, gpu, &d, err);
    if (rc == 0)
        rc = need(st, gpu, st->clock_info != NULL, "nvmlDeviceGetClockInfo", err);
    if (rc == 0)
        rc = check(st, gpu, st->clock_info(d, NVML_CLOCK_SM, &c), "nvmlDeviceGetClockInfo", err);
    if (rc == 0)
        *mhz = c;
    return rc;
}

#define NVML_OPS_BODY                                                                              \
    .destroy = nvml_destroy, .gpu_count = nvml_count, .gpu_name = nvml_name,                       \
    .gpu_uuid = nvml_uuid, .memory = nvml_memory, .util = nvml_util, .power = nvml_power,          \
    .power_limit = nvml_limit, .power_range = nvml_range, .energy = nvml_energy,                   \
    .set_power_limit = nvml_set_limit, .gpu_pids = nvml_pids, .gpu_procs = nvml_procs,             \
    .proc_util = nvml_proc_util, .set_locked_clocks = nvml_lock_clocks,                            \
    .reset_locked_clocks = nvml_reset_clocks, .sm_clock = nvml_sm_clock

const struct eco_platform_ops eco_platform_nvml = {
    .name = "nvml",
    .summary = "NVIDIA GPUs through NVML (libnvidia-ml.so.1, loaded at run time)",
    .create = nvml_create,
    NVML_OPS_BODY,
};

const struct eco_platform_ops eco_platform_fake = {
    .name = "fake",
    .summary = "simulated GPUs from the project's fake NVML library, same code path as nvml",
    .create = fake_create,
    NVML_OPS_BODY,
};
