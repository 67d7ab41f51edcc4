/* SPDX-License-Identifier: MIT */
/* A fake NVML shared library (libecosched-fake-nvml.so) for tests: simulated GPUs whose power,
 * utilisation, memory and energy counter follow the processes registered on them, with
 * settable power limits, shared by every process through one small locked state file. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "nvml_api.h"

#define MAX_GPUS 64
#define MAX_PROCS 256
#define STATE_MAX (64 * 1024) /* 64 GPUs and 256 processes in the text format fit with room */
#define PATH_CAP 4096
#define DEFAULT_GPUS 4
#define DEFAULT_MODEL "Tesla V100-PCIE-32GB"
#define MAGIC "ecosched-fake-nvml 1"

/* Figures per model family. V100: limit range 100..250 W from Zeus's NVML sweep, default 250 W
 * and idle 23 W from an nvidia-smi snapshot of a Tesla V100-PCIE-32GB (both in
 * data/gpu_power_specs/gpu_power_reference.csv); busy 200 W is a round figure below the 228 W
 * highest per-epoch training average there. H100: 200..700 W and 72 W idle from the same file;
 * busy 600 W is assumed. Other names get the V100 figures. SM clocks: V100 135..1380 MHz from
 * data/gpu_power_specs/supported_clocks.csv; H100 345 MHz (the lowest H100 level there) to
 * 1980 MHz (the H100 SXM5's boost clock, datasheet). With the clock locked below the top a busy
 * GPU draws idle + (busy - idle) x f / f_max: linear, as the fitted clock model of the V100
 * mostly is (docs/models/clock.md). */
struct model {
    const char *match;
    unsigned min_w, max_w, default_w;
    double idle_w, busy_w;
    unsigned min_mhz, max_mhz;
};
static const struct model models[] = {
    {"V100", 100, 250, 250, 23.0, 200.0, 135, 1380},
    {"H100", 200, 700, 700, 72.0, 600.0, 345, 1980},
};

#define BUSY_UTIL_PCT 95     /* GPU utilisation of a busy fake GPU */
#define BUSY_MEM_UTIL_PCT 40 /* memory-controller utilisation of a busy fake GPU (assumed) */
/* Per-process utilisation samples: one every SAMPLE_NS per process (1/6 s, the shortest
 * sampling period NVML's documentation gives for nvmlDeviceGetProcessUtilization), on a grid
 * of the real-time clock, kept SAMPLE_KEEP_NS (NVML keeps a few seconds; 2 s is assumed), also
 * for a process that has exited, as the driver's buffer does. */
#define SAMPLE_NS 166666667LL
#define SAMPLE_KEEP_NS 2000000000LL

struct fake_gpu {
    unsigned limit_mw;
    double energy_mj;
    unsigned lock_min_mhz, lock_max_mhz; /* locked SM clocks; 0 0: not locked */
};

struct fake_proc {
    int pid;
    uint64_t mask; /* GPUs it runs on */
    unsigned long long mem_b;
    int sm_pct; /* its SM utilisation, percent; -1: unset (an equal part of BUSY_UTIL_PCT) */
    long long start_ns, end_ns; /* registered, and exited (0: running), CLOCK_REALTIME */
};

struct fake_state {
    char model[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    unsigned n;
    long long created_ns, updated_ns;
    struct fake_gpu gpu[MAX_GPUS];
    unsigned n_procs;
    struct fake_proc procs[MAX_PROCS];
};

/* What one GPU looks like now. */
struct snap {
    const struct model *m;
    char model[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    unsigned index, limit_mw, power_mw, util, mem_util, sm_mhz;
    unsigned long long mem_total, mem_used, energy_mj;
    unsigned n_procs;
    nvmlProcessInfo_v2_t procs[MAX_PROCS];
};

struct nvmlDevice_st {
    unsigned index;
};

/* Guarded by `lock` (the file lock below only excludes other processes). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;
static char state_path[PATH_CAP];
static char io_buf[STATE_MAX];
static struct fake_state cur;
static struct nvmlDevice_st devices[MAX_GPUS];

typedef nvmlReturn_t (*txn_fn)(struct fake_state *st, void *arg);

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void resolve_path(char *buf, size_t cap)
{
    const char *p = getenv("ECOSCHED_FAKE_NVML_STATE");
    if (p && *p)
        snprintf(buf, cap, "%s", p);
    else
        snprintf(buf, cap, "/tmp/ecosched-fake-nvml-%u.state", (unsigned)getuid());
}

static const struct model *model_of(const char *name)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strstr(name, models[i].match))
            return &models[i];
    return &models[0];
}

/* Memory size from "NNGB" in the model name, else 16 GiB. */
static unsigned long long mem_total_of(const char *name)
{
    const char *gb = strstr(name, "GB");
    const char *d = gb;
    while (d && d > name && d[-1] >= '0' && d[-1] <= '9')
        d--;
    unsigned long long n = (gb && d < gb) ? strtoull(d, NULL, 10) : 16;
    return (n ? n : 16) << 30;
}

static void fresh(struct fake_state *st)
{
    const char *g = getenv("ECOSCHED_FAKE_NVML_GPUS");
    const char *m = getenv("ECOSCHED_FAKE_NVML_MODEL");
    long n = g && *g ? strtol(g, NULL, 10) : DEFAULT_GPUS;
    memset(st, 0, sizeof *st);
    st->n = (unsigned)(n < 1 ? 1 : n > MAX_GPUS ? MAX_GPUS : n);
    snprintf(st->model, sizeof st->model, "%s", m && *m ? m : DEFAULT_MODEL);
    st->created_ns = st->updated_ns = now_ns();
    for (unsigned i = 0; i < st->n; i++)
        st->gpu[i].limit_mw = model_of(st->model)->default_w * 1000;
}

/* "1,3" -> bit mask; 0 when malformed or an index is >= n. */
static uint64_t parse_gpus(const char *s, unsigned n)
{
    uint64_t mask = 0;
    while (*s) {
        char *end;
        if (*s < '0' || *s > '9')
            return 0;
        unsigned long i = strtoul(s, &end, 10);
        if (i >= n || i >= MAX_GPUS)
            return 0;
        mask |= 1ULL << i;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return mask;
}

static int format_gpus(uint64_t mask, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < MAX_GPUS && len < cap; i++)
        if (mask >> i & 1)
            len += (size_t)snprintf(buf + len, cap - len, "%s%u", len ? "," : "", i);
    return len < cap ? 0 : -1;
}

static int parse_line(struct fake_state *st, const char *line)
{
    unsigned i, mw;
    double mj;
    int pid;
    char gpus[200];
    unsigned long long mem;
    if (!strncmp(line, "model ", 6))
        return snprintf(st->model, sizeof st->model, "%s", line + 6) < 0 ? -1 : 0;
    if (sscanf(line, "gpus %u", &st->n) == 1)
        return st->n >= 1 && st->n <= MAX_GPUS ? 0 : -1;
    if (sscanf(line, "created_ns %lld", &st->created_ns) == 1 ||
        sscanf(line, "updated_ns %lld", &st->updated_ns) == 1)
        return 0;
    unsigned lo = 0, hi = 0;
    int got = sscanf(line, "gpu %u limit_mw %u energy_mj %lf clocks %u %u", &i, &mw, &mj, &lo, &hi);
    if (got == 3 || got == 5) {
        if (i >= st->n || lo > hi)
            return -1;
        st->gpu[i].limit_mw = mw;
        st->gpu[i].energy_mj = mj;
        st->gpu[i].lock_min_mhz = lo;
        st->gpu[i].lock_max_mhz = hi;
        return 0;
    }
    int sm = -1; /* files written before per-process utilisation have no "sm" and times */
    long long t0 = 0, t1 = 0;
    got = sscanf(line, "proc %d gpus %199s mem_b %llu sm %d start_ns %lld end_ns %lld", &pid, gpus,
                 &mem, &sm, &t0, &t1);
    if (got == 3 || got == 4 || got == 6) {
        uint64_t mask = parse_gpus(gpus, st->n);
        if (!mask || pid <= 0 || sm < -1 || sm > 100 || st->n_procs >= MAX_PROCS)
            return -1;
        st->procs[st->n_procs++] = (struct fake_proc){
            .pid = pid, .mask = mask, .mem_b = mem, .sm_pct = sm, .start_ns = t0, .end_ns = t1};
        return 0;
    }
    return -1;
}

static int parse(struct fake_state *st, char *buf)
{
    memset(st, 0, sizeof *st);
    char *save = NULL;
    char *line = strtok_r(buf, "\n", &save);
    if (!line || strcmp(line, MAGIC))
        return -1;
    while ((line = strtok_r(NULL, "\n", &save)))
        if (parse_line(st, line) < 0)
            return -1;
    if (!st->n || !st->model[0])
        return -1;
    const struct model *m = model_of(st->model);
    for (unsigned i = 0; i < st->n; i++)
        if (!st->gpu[i].limit_mw)
            st->gpu[i].limit_mw = m->default_w * 1000;
    return 0;
}

static int format(const struct fake_state *st, char *buf, size_t cap, size_t *len)
{
    size_t n =
        (size_t)snprintf(buf, cap, MAGIC "\nmodel %s\ngpus %u\ncreated_ns %lld\nupdated_ns %lld\n",
                         st->model, st->n, st->created_ns, st->updated_ns);
    for (unsigned i = 0; i < st->n && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "gpu %u limit_mw %u energy_mj %.3f clocks %u %u\n",
                              i, st->gpu[i].limit_mw, st->gpu[i].energy_mj, st->gpu[i].lock_min_mhz,
                              st->gpu[i].lock_max_mhz);
    for (unsigned i = 0; i < st->n_procs && n < cap; i++) {
        char gpus[200];
        if (format_gpus(st->procs[i].mask, gpus, sizeof gpus) < 0)
            return -1;
        n += (size_t)snprintf(buf + n, cap - n,
                              "proc %d gpus %s mem_b %llu sm %d start_ns %lld end_ns %lld\n",
                              st->procs[i].pid, gpus, st->procs[i].mem_b, st->procs[i].sm_pct,
                              st->procs[i].start_ns, st->procs[i].end_ns);
    }
    *len = n;
    return n < cap ? 0 : -1;
}

/* Alive and not a zombie. */
static int alive(int pid)
{
    if (kill(pid, 0) < 0 && errno != EPERM)
        return 0;
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 1;
    size_t len = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[len] = '\0';
    const char *paren = strrchr(stat, ')');
    return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}

static const struct model *limits(const struct fake_state *st)
{
    return model_of(st->model);
}

static double power_w(const struct fake_state *st, unsigned gpu, unsigned *procs)
{
    unsigned busy = 0;
    for (unsigned i = 0; i < st->n_procs; i++)
        busy += (unsigned)(!st->procs[i].end_ns && (st->procs[i].mask >> gpu & 1));
    if (procs)
        *procs = busy;
    const struct model *m = limits(st);
    double cap = st->gpu[gpu].limit_mw / 1000.0, draw = m->busy_w;
    if (st->gpu[gpu].lock_max_mhz && st->gpu[gpu].lock_max_mhz < m->max_mhz)
        draw = m->idle_w + (m->busy_w - m->idle_w) * st->gpu[gpu].lock_max_mhz / m->max_mhz;
    return busy ? (draw < cap ? draw : cap) : m->idle_w;
}

/* Marks dead processes exited (their samples are kept SAMPLE_KEEP_NS), then charges each GPU
 * its power since the last update. */
static void advance(struct fake_state *st)
{
    unsigned kept = 0;
    long long now = now_ns();
    for (unsigned i = 0; i < st->n_procs; i++) {
        struct fake_proc *p = &st->procs[i];
        if (!p->end_ns && !alive(p->pid))
            p->end_ns = now;
        if (!p->end_ns || now - p->end_ns <= SAMPLE_KEEP_NS)
            st->procs[kept++] = *p;
    }
    st->n_procs = kept;
    double dt_s = now > st->updated_ns ? (double)(now - st->updated_ns) / 1e9 : 0.0;
    for (unsigned g = 0; g < st->n; g++)
        st->gpu[g].energy_mj += power_w(st, g, NULL) * dt_s * 1000.0;
    if (now > st->updated_ns)
        st->updated_ns = now;
}

static int read_all(int fd, char *buf, size_t cap, size_t *len)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = pread(fd, buf + n, cap - 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0 || (n += (size_t)r) == cap - 1)
            break;
    }
    buf[n] = '\0';
    *len = n;
    return n < cap - 1 ? 0 : -1;
}

static int write_all(int fd, const char *buf, size_t len)
{
    size_t n = 0;
    while (n < len) {
        ssize_t w = pwrite(fd, buf + n, len - n, (off_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        n += (size_t)w;
    }
    return ftruncate(fd, (off_t)len);
}

/* Loads the state file (path NULL: the one nvmlInit_v2 chose) under an exclusive lock,
 * brings it up to now, runs fn on it and writes it back. */
static nvmlReturn_t txn(const char *path, txn_fn fn, void *arg)
{
    nvmlReturn_t r = NVML_ERROR_UNKNOWN;
    int fd = -1;
    pthread_mutex_lock(&lock);
    if (!path && init_count == 0) {
        r = NVML_ERROR_UNINITIALIZED;
        goto out;
    }
    fd = open(path ? path : state_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        r = errno == EACCES ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_UNKNOWN;
        goto out;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    while (fcntl(fd, F_SETLKW, &fl) < 0)
        if (errno != EINTR)
            goto out;
    size_t len = 0;
    if (read_all(fd, io_buf, sizeof io_buf, &len) < 0)
        goto out;
    if (len == 0)
        fresh(&cur);
    else if (parse(&cur, io_buf) < 0)
        goto out; /* a corrupt state file: UNKNOWN, left as it is for a person to read */
    advance(&cur);
    r = fn(&cur, arg);
    if (format(&cur, io_buf, sizeof io_buf, &len) < 0 || write_all(fd, io_buf, len) < 0)
        r = NVML_ERROR_UNKNOWN;
out:
    if (fd >= 0)
        close(fd); /* releases the record lock */
    pthread_mutex_unlock(&lock);
    return r;
}

static nvmlReturn_t noop(struct fake_state *st, void *arg)
{
    (void)st;
    (void)arg;
    return NVML_SUCCESS;
}

/* ---- NVML entry points ------------------------------------------------------------------ */

nvmlReturn_t nvmlInit_v2(void)
{
    pthread_mutex_lock(&lock);
    if (init_count++ == 0)
        resolve_path(state_path, sizeof state_path);
    pthread_mutex_unlock(&lock);
    nvmlReturn_t r = txn(NULL, noop, NULL);
    if (r != NVML_SUCCESS)
        nvmlShutdown();
    return r;
}

nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t r = NVML_SUCCESS;
    pthread_mutex_lock(&lock);
    if (init_count > 0)
        init_count--;
    else
        r = NVML_ERROR_UNINITIALIZED;
    pthread_mutex_unlock(&lock);
    return r;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

static nvmlReturn_t get_count(struct fake_state *st, void *arg)
{
    *(unsigned *)arg = st->n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    if (!deviceCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    return txn(NULL, get_count, deviceCount);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    unsigned n = 0;
    if (!device)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = txn(NULL, get_count, &n);
    if (r != NVML_SUCCESS)
        return r;
    if (index >= n)
        return NVML_ERROR_INVALID_ARGUMENT;
    devices[index].index = index;
    *device = &devices[index];
    return NVML_SUCCESS;
}

static nvmlReturn_t take_snap(struct fake_state *st, void *arg)
{
    struct snap *s = arg;
    if (s->index >= st->n)
        return NVML_ERROR_INVALID_ARGUMENT;
    unsigned busy = 0;
    double w = power_w(st, s->index, &busy);
    s->m = limits(st);
    snprintf(s->model, sizeof s->model, "%s", st->model);
    s->limit_mw = st->gpu[s->index].limit_mw;
    s->power_mw = (unsigned)(w * 1000.0 + 0.5);
    s->sm_mhz = st->gpu[s->index].lock_max_mhz ? st->gpu[s->index].lock_max_mhz
                : busy                         ? s->m->max_mhz
                                               : s->m->min_mhz;
    s->util = busy ? BUSY_UTIL_PCT : 0;
    s->mem_util = busy ? BUSY_MEM_UTIL_PCT : 0;
    s->mem_total = mem_total_of(st->model);
    s->energy_mj = (unsigned long long)st->gpu[s->index].energy_mj;
    for (unsigned i = 0; i < st->n_procs; i++) {
        if (st->procs[i].end_ns || !(st->procs[i].mask >> s->index & 1))
            continue;
        s->mem_used += st->procs[i].mem_b;
        s->procs[s->n_procs++] = (nvmlProcessInfo_v2_t){.pid = (unsigned)st->procs[i].pid,
                                                        .usedGpuMemory = st->procs[i].mem_b};
    }
    if (s->mem_used > s->mem_total)
        s->mem_used = s->mem_total;
    return NVML_SUCCESS;
}

/* Checks the handle and reads the GPU's current state. */
static nvmlReturn_t snapshot(nvmlDevice_t device, struct snap *s)
{
    uintptr_t p = (uintptr_t)device, base = (uintptr_t)devices;
    if (p < base || p >= base + sizeof devices || (p - base) % sizeof devices[0])
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(s, 0, sizeof *s);
    s->index = device->index;
    return txn(NULL, take_snap, s);
}

static nvmlReturn_t copy_str(const char *src, char *dst, unsigned int length)
{
    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) >= length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    struct snap s;
    nvmlReturn_t r = snapshot(device, &s);
    return r == NVML_SUCCESS ? copy_str(s.model, name, length) : r;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    struct snap s;
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    nvmlReturn_t r = snapshot(device, &s);
    if (r != NVML_SUCCESS)
        return r;
    snprintf(buf, sizeof buf, "GPU-ec05c4ed-fa4e-4000-8000-%012u", s.index);
    return copy_str(buf, uuid, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    struct snap s;
    nvmlReturn_t r = memory ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *memory = (nvmlMemory_t){
            .total = s.mem_total, .used = s.mem_used, .free = s.mem_total - s.mem_used};
    return r;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
    struct snap s;
    nvmlReturn_t r = utilization ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *utilization = (nvmlUtilization_t){.gpu = s.util, .memory = s.mem_util};
    return r;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    struct snap s;
    nvmlReturn_t r = power ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *power = s.power_mw;
    return r;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
    struct snap s;
    nvmlReturn_t r = limit ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *limit = s.limit_mw;
    return r;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
    return nvmlDeviceGetPowerManagementLimit(device, limit);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int *minLimit,
                                                          unsigned int *maxLimit)
{
    struct snap s;
    nvmlReturn_t r = minLimit && maxLimit ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS) {
        *minLimit = s.m->min_w * 1000;
        *maxLimit = s.m->max_w * 1000;
    }
    return r;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                      unsigned int *defaultLimit)
{
    struct snap s;
    nvmlReturn_t r = defaultLimit ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *defaultLimit = s.m->default_w * 1000;
    return r;
}

struct set_limit {
    unsigned index, mw;
};

static nvmlReturn_t do_set_limit(struct fake_state *st, void *arg)
{
    const struct set_limit *a = arg;
    const struct model *m = limits(st);
    if (a->index >= st->n || a->mw < m->min_w * 1000 || a->mw > m->max_w * 1000)
        return NVML_ERROR_INVALID_ARGUMENT;
    st->gpu[a->index].limit_mw = a->mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit)
{
    struct snap s;
    nvmlReturn_t r = snapshot(device, &s); /* checks the handle */
    if (r != NVML_SUCCESS)
        return r;
    struct set_limit a = {.index = s.index, .mw = limit};
    return txn(NULL, do_set_limit, &a);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
    struct snap s;
    const char *off = getenv("ECOSCHED_FAKE_NVML_NO_ENERGY");
    if (off && *off && strcmp(off, "0"))
        return NVML_ERROR_NOT_SUPPORTED; /* a pre-Volta GPU */
    nvmlReturn_t r = energy ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *energy = s.energy_mj;
    return r;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    struct snap s;
    nvmlReturn_t r = infoCount ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS)
        return r;
    if (*infoCount < s.n_procs || (s.n_procs && !infos)) {
        *infoCount = s.n_procs;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < s.n_procs; i++)
        infos[i] = s.procs[i];
    *infoCount = s.n_procs;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    return nvmlDeviceGetComputeRunningProcesses_v3(device, infoCount, infos);
}

struct util_query {
    unsigned index, cap, n;
    long long since_ns; /* samples at or after this time */
    nvmlProcessUtilizationSample_t *out;
};

/* The samples of GPU q->index's processes since q->since_ns: each process's grid points of
 * SAMPLE_NS within its life and the last SAMPLE_KEEP_NS; counted in q->n, written while they
 * fit. */
static nvmlReturn_t take_util(struct fake_state *st, void *arg)
{
    struct util_query *q = arg;
    long long now = st->updated_ns;
    unsigned busy = 0;
    if (q->index >= st->n)
        return NVML_ERROR_INVALID_ARGUMENT;
    power_w(st, q->index, &busy);
    for (unsigned i = 0; i < st->n_procs; i++) {
        const struct fake_proc *p = &st->procs[i];
        if (!(p->mask >> q->index & 1))
            continue;
        unsigned sm = p->sm_pct >= 0 ? (unsigned)p->sm_pct : BUSY_UTIL_PCT / (busy ? busy : 1);
        long long lo = p->start_ns, hi = p->end_ns ? p->end_ns : now;
        if (lo < now - SAMPLE_KEEP_NS)
            lo = now - SAMPLE_KEEP_NS;
        if (lo < q->since_ns)
            lo = q->since_ns;
        for (long long k = (lo + SAMPLE_NS - 1) / SAMPLE_NS; k * SAMPLE_NS <= hi; k++, q->n++)
            if (q->out && q->n < q->cap)
                q->out[q->n] = (nvmlProcessUtilizationSample_t){
                    .pid = (unsigned)p->pid,
                    .timeStamp = (unsigned long long)(k * SAMPLE_NS / 1000),
                    .smUtil = sm};
    }
    return NVML_SUCCESS;
}

/* The registered processes' samples (docs/platform.md): SM utilisation as registered, every
 * SAMPLE_NS of their lives, kept SAMPLE_KEEP_NS. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
    struct snap s;
    const char *off = getenv("ECOSCHED_FAKE_NVML_NO_PROC_UTIL");
    if (off && *off && strcmp(off, "0"))
        return NVML_ERROR_NOT_SUPPORTED; /* a GPU without per-process accounting */
    nvmlReturn_t r = processSamplesCount ? snapshot(device, &s) : NVML_ERROR_INVALID_ARGUMENT;
    if (r != NVML_SUCCESS)
        return r;
    struct util_query q = {.index = s.index,
                           .cap = utilization ? *processSamplesCount : 0,
                           .since_ns = ((long long)lastSeenTimeStamp + 1) * 1000,
                           .out = utilization};
    if ((r = txn(NULL, take_util, &q)) != NVML_SUCCESS)
        return r;
    if (q.n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (q.n > q.cap) {
        *processSamplesCount = q.n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *processSamplesCount = q.n;
    return NVML_SUCCESS;
}

/* ---- extras for tests and the run tool ---------------------------------------------------- */

struct reg {
    int pid;
    const char *gpus;
    unsigned long long mem_b;
    int sm_pct;
};

static nvmlReturn_t do_register(struct fake_state *st, void *arg)
{
    const struct reg *a = arg;
    uint64_t mask = a->gpus ? parse_gpus(a->gpus, st->n) : 0;
    unsigned i = 0;
    if (!mask || a->pid <= 0 || a->sm_pct < -1 || a->sm_pct > 100)
        return NVML_ERROR_INVALID_ARGUMENT;
    while (i < st->n_procs && st->procs[i].pid != a->pid)
        i++;
    if (i == MAX_PROCS)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    if (i == st->n_procs)
        st->n_procs++;
    st->procs[i] = (struct fake_proc){.pid = a->pid,
                                      .mask = mask,
                                      .mem_b = a->mem_b,
                                      .sm_pct = a->sm_pct,
                                      .start_ns = st->updated_ns};
    return NVML_SUCCESS;
}

static nvmlReturn_t do_unregister(struct fake_state *st, void *arg)
{
    int pid = *(const int *)arg;
    for (unsigned i = 0; i < st->n_procs; i++)
        if (st->procs[i].pid == pid && !st->procs[i].end_ns)
            st->procs[i].end_ns = st->updated_ns; /* exited: its samples stay a while */
    return NVML_SUCCESS;
}

int ecosched_fake_nvml_register_util(int pid, const char *gpus, unsigned long long mem_b,
                                     int sm_pct)
{
    char path[PATH_CAP];
    struct reg a = {.pid = pid, .gpus = gpus, .mem_b = mem_b, .sm_pct = sm_pct};
    resolve_path(path, sizeof path);
    return txn(path, do_register, &a);
}

int ecosched_fake_nvml_register(int pid, const char *gpus, unsigned long long mem_b)
{
    return ecosched_fake_nvml_register_util(pid, gpus, mem_b, -1);
}

int ecosched_fake_nvml_unregister(int pid)
{
    char path[PATH_CAP];
    resolve_path(path, sizeof path);
    return txn(path, do_unregister, &pid);
}

/* ---- locked SM clocks --------------------------------------------------------------------- */

struct set_clocks {
    unsigned index, lo, hi; /* 0 0: reset */
};

static nvmlReturn_t do_set_clocks(struct fake_state *st, void *arg)
{
    const struct set_clocks *a = arg;
    const struct model *m = limits(st);
    if (a->index >= st->n || a->lo > a->hi || (a->hi && (a->lo < m->min_mhz || a->hi > m->max_mhz)))
        return NVML_ERROR_INVALID_ARGUMENT;
    st->gpu[a->index].lock_min_mhz = a->lo;
    st->gpu[a->index].lock_max_mhz = a->hi;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                          unsigned int maxGpuClockMHz)
{
    struct snap s;
    nvmlReturn_t r = snapshot(device, &s); /* checks the handle */
    if (r != NVML_SUCCESS)
        return r;
    if (!maxGpuClockMHz)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct set_clocks a = {.index = s.index, .lo = minGpuClockMHz, .hi = maxGpuClockMHz};
    return txn(NULL, do_set_clocks, &a);
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device)
{
    struct snap s;
    nvmlReturn_t r = snapshot(device, &s);
    if (r != NVML_SUCCESS)
        return r;
    struct set_clocks a = {.index = s.index};
    return txn(NULL, do_set_clocks, &a);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
    struct snap s;
    if (!clock || type != NVML_CLOCK_SM)
        return clock ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = snapshot(device, &s);
    if (r == NVML_SUCCESS)
        *clock = s.sm_mhz;
    return r;
}
