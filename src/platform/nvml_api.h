/* SPDX-License-Identifier: MIT */
/* The few NVML types, constants and function signatures ecosched uses, written from NVIDIA's
 * public API documentation (NVML's own header is not redistributable). The platform loads
 * these names with dlsym; the fake NVML library defines them. */
#ifndef ECOSCHED_NVML_API_H
#define ECOSCHED_NVML_API_H

/* nvmlReturn_t is an int-sized enum; only the codes ecosched looks at are named. */
typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_UNKNOWN 999

/* Buffer sizes for names and UUIDs (the "v2" sizes, large enough for every device). */
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96

/* Opaque device handle. */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* Bytes. */
typedef struct {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* Percent over the last sample period. */
typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* Layout taken by nvmlDeviceGetComputeRunningProcesses_v2 and _v3. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/* One per-process utilisation sample: timeStamp in microseconds (CPU time), the others in
 * percent over the sample's period. Field order and types as NVIDIA's nvml.h (API 10 to 12). */
typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* usedGpuMemory when the driver cannot tell (Windows WDDM, some MIG setups). */
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* nvmlInit, nvmlDeviceGetCount and nvmlDeviceGetHandleByIndex are macros for these _v2
 * symbols in NVIDIA's header. Power figures are milliwatts, energy millijoules. */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int *minLimit,
                                                          unsigned int *maxLimit);
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                      unsigned int *defaultLimit);
nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos);
/* Samples with timeStamp > lastSeenTimeStamp (0: all kept); utilization NULL asks for the
 * count (INSUFFICIENT_SIZE); none since the time stamp: NOT_FOUND; NOT_SUPPORTED on GPUs
 * without per-process accounting (before Maxwell, vGPU without it). */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp);

/* Clocks (MHz). NVML_CLOCK_SM is 1 in nvmlClockType_t. */
typedef int nvmlClockType_t;
#define NVML_CLOCK_SM 1
nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                          unsigned int maxGpuClockMHz);
nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock);

/* ---- not NVIDIA's: extras exported by ecosched's fake NVML library only ------------------ */

/* Puts process `pid` on the GPUs listed in `gpus` ("0", "1,3") with `mem_b` bytes of memory
 * on each, in the state file named by $ECOSCHED_FAKE_NVML_STATE; replaces an earlier entry of
 * the same pid. Returns an NVML code (INVALID_ARGUMENT for a bad list or GPU index). */
int ecosched_fake_nvml_register(int pid, const char *gpus, unsigned long long mem_b);
/* As ecosched_fake_nvml_register, with the process's SM utilisation in percent (0..100, or -1:
 * unset, the GPU's busy utilisation split equally among its processes without one). */
int ecosched_fake_nvml_register_util(int pid, const char *gpus, unsigned long long mem_b,
                                     int sm_pct);
/* Removes pid's entry, if any. */
int ecosched_fake_nvml_unregister(int pid);

#endif
