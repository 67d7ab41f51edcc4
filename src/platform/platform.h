/* SPDX-License-Identifier: MIT */
/* GPU platforms for the daemon: sensors (power, utilisation, memory, energy counter, processes,
 * SM clock) and actuators (power limit, locked SM clocks) per GPU index, behind a const ops
 * table found by name. */
#ifndef ECOSCHED_PLATFORM_H
#define ECOSCHED_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "ecosched/error.h"

/* Longest model name or UUID a platform returns, terminating NUL included (NVML's v2 buffer
 * sizes for both are 96 bytes). */
#define ECO_PLATFORM_STR_MAX 96

/* Power-limit range of one GPU, in watts. */
struct eco_power_range {
    double min_w, max_w, default_w;
};

/* One per-process utilisation sample (NVML's nvmlProcessUtilizationSample_t): the process,
 * when the driver took it (t_us, microseconds on the clock NVML stamps samples with), and its
 * SM utilisation over that sample's period, 0..1. */
struct eco_proc_util {
    pid_t pid;
    uint64_t t_us;
    double sm;
};

/* A backend. Every int function returns 0 or a negative errno code and, on failure, fills the
 * optional `err` with a message naming the backend, the GPU and the call that failed. GPU
 * indices run from 0 to count-1; an index out of range gives -ENODEV. `state` is what
 * `create` returned. Backends keep no globals of their own beyond what the library they load
 * keeps. */
struct eco_platform_ops {
    const char *name;
    const char *summary;
    /* lib_path: backend-specific library to load, NULL for the default. */
    int (*create)(const char *lib_path, void **state, struct eco_error *err);
    void (*destroy)(void *state); /* accepts NULL */
    unsigned (*gpu_count)(const void *state);
    /* Writes a NUL-terminated string of at most `cap` bytes (cap >= 1). */
    int (*gpu_name)(void *state, unsigned gpu, char *buf, size_t cap, struct eco_error *err);
    int (*gpu_uuid)(void *state, unsigned gpu, char *buf, size_t cap, struct eco_error *err);
    int (*memory)(void *state, unsigned gpu, uint64_t *total_b, uint64_t *used_b,
                  struct eco_error *err);
    /* GPU (SM) utilisation over the device's last sample period, 0..1. */
    int (*util)(void *state, unsigned gpu, double *util, struct eco_error *err);
    int (*power)(void *state, unsigned gpu, double *power_w, struct eco_error *err);
    /* The power limit set on the GPU (not the enforced one, which other limiters may lower). */
    int (*power_limit)(void *state, unsigned gpu, double *limit_w, struct eco_error *err);
    int (*power_range)(void *state, unsigned gpu, struct eco_power_range *out,
                       struct eco_error *err);
    /* Total energy since the driver was loaded; -ENOTSUP where the GPU has no counter
     * (pre-Volta): integrate power instead. */
    int (*energy)(void *state, unsigned gpu, double *energy_j, struct eco_error *err);
    /* Needs root on real GPUs (-EPERM otherwise); -EINVAL outside power_range. */
    int (*set_power_limit)(void *state, unsigned gpu, double limit_w, struct eco_error *err);
    /* PIDs of compute processes on the GPU, written into pids[0..cap). *n receives how many
     * there are: when that exceeds cap the call returns -ENOSPC (cap 0 asks for the count). */
    int (*gpu_pids)(void *state, unsigned gpu, pid_t *pids, size_t cap, size_t *n,
                    struct eco_error *err);
    /* The compute processes as gpu_pids, each with the GPU memory it uses (bytes; 0 where the
     * driver does not say). mem_b may be NULL. NULL in a backend without processes. */
    int (*gpu_procs)(void *state, unsigned gpu, pid_t *pids, uint64_t *mem_b, size_t cap, size_t *n,
                     struct eco_error *err);
    /* Per-process utilisation samples taken after since_us (0: all the driver keeps), written
     * into out[0..cap) (nvmlDeviceGetProcessUtilization). *n receives how many there are; more
     * than cap: -ENOSPC (cap 0 asks for the count). None since since_us: 0 with *n = 0.
     * -ENOTSUP where the GPU does not report them; NULL in a backend without them. */
    int (*proc_util)(void *state, unsigned gpu, uint64_t since_us, struct eco_proc_util *out,
                     size_t cap, size_t *n, struct eco_error *err);
    /* Locks the SM clock to [min_mhz, max_mhz] (nvmlDeviceSetGpuLockedClocks: Volta and later,
     * root, -EPERM otherwise; -EINVAL for min > max); the lock stays until reset, also after the
     * process exits. NULL in a backend without clocks: the wrappers return -ENOTSUP. */
    int (*set_locked_clocks)(void *state, unsigned gpu, double min_mhz, double max_mhz,
                             struct eco_error *err);
    /* Back to the driver's own clock management (nvmlDeviceResetGpuLockedClocks). */
    int (*reset_locked_clocks)(void *state, unsigned gpu, struct eco_error *err);
    /* The SM clock now, MHz (nvmlDeviceGetClockInfo, NVML_CLOCK_SM). */
    int (*sm_clock)(void *state, unsigned gpu, double *mhz, struct eco_error *err);
};

/* The backends: NVML from libnvidia-ml.so.1; the same code loading the project's fake NVML
 * library; no GPUs at all. */
#define ECO_PLATFORM(name) extern const struct eco_platform_ops eco_platform_##name;
#include "platform/platforms.def"
#undef ECO_PLATFORM

/* Backend by name ("nvml", "fake", "none"; case-insensitive), NULL when unknown. */
const struct eco_platform_ops *eco_platform_find(const char *name);
/* NULL-terminated list of all backends (static storage). */
const struct eco_platform_ops *const *eco_platform_all(void);

/* An open platform: a backend and its state. */
struct eco_platform {
    const struct eco_platform_ops *ops;
    void *state;
};

/* Opens backend `name`. lib_path: library to load (nvml: default libnvidia-ml.so.1; fake:
 * default $ECOSCHED_FAKE_NVML_LIB, else libecosched-fake-nvml.so next to the executable;
 * none: ignored). On success *out is the caller's, freed with eco_platform_close; on failure
 * *out is NULL. Errors: -EINVAL unknown name, -ENOENT library not loadable (the "no GPU"
 * path for nvml), -ENOSYS library lacks a required symbol, -ENODEV NVML would not start. */
int eco_platform_open(const char *name, const char *lib_path, struct eco_platform **out,
                      struct eco_error *err);
void eco_platform_close(struct eco_platform *p); /* accepts NULL */

/* Thin wrappers over the ops, same contracts. The name is static storage. */
const char *eco_platform_name(const struct eco_platform *p);
unsigned eco_platform_gpu_count(const struct eco_platform *p);
int eco_platform_gpu_name(struct eco_platform *p, unsigned gpu, char *buf, size_t cap,
                          struct eco_error *err);
int eco_platform_gpu_uuid(struct eco_platform *p, unsigned gpu, char *buf, size_t cap,
                          struct eco_error *err);
int eco_platform_memory(struct eco_platform *p, unsigned gpu, uint64_t *total_b, uint64_t *used_b,
                        struct eco_error *err);
int eco_platform_util(struct eco_platform *p, unsigned gpu, double *util, struct eco_error *err);
int eco_platform_power(struct eco_platform *p, unsigned gpu, double *power_w,
                       struct eco_error *err);
int eco_platform_power_limit(struct eco_platform *p, unsigned gpu, double *limit_w,
                             struct eco_error *err);
int eco_platform_power_range(struct eco_platform *p, unsigned gpu, struct eco_power_range *out,
                             struct eco_error *err);
int eco_platform_energy(struct eco_platform *p, unsigned gpu, double *energy_j,
                        struct eco_error *err);
int eco_platform_set_power_limit(struct eco_platform *p, unsigned gpu, double limit_w,
                                 struct eco_error *err);
int eco_platform_gpu_pids(struct eco_platform *p, unsigned gpu, pid_t *pids, size_t cap, size_t *n,
                          struct eco_error *err);
/* -ENOTSUP (with err) when the backend has no per-process readings. */
int eco_platform_gpu_procs(struct eco_platform *p, unsigned gpu, pid_t *pids, uint64_t *mem_b,
                           size_t cap, size_t *n, struct eco_error *err);
int eco_platform_proc_util(struct eco_platform *p, unsigned gpu, uint64_t since_us,
                           struct eco_proc_util *out, size_t cap, size_t *n, struct eco_error *err);
/* -ENOTSUP (with err) when the backend has no clock control. */
int eco_platform_set_locked_clocks(struct eco_platform *p, unsigned gpu, double min_mhz,
                                   double max_mhz, struct eco_error *err);
int eco_platform_reset_locked_clocks(struct eco_platform *p, unsigned gpu, struct eco_error *err);
int eco_platform_sm_clock(struct eco_platform *p, unsigned gpu, double *mhz, struct eco_error *err);

#endif
