/* SPDX-License-Identifier: MIT */
/* Compiled only where the build has NVIDIA's nvml.h (tests/CMakeLists.txt): the layouts and
 * prototypes src/platform/nvml_api.h declares for the NVML calls ecosched makes must be
 * NVIDIA's, or this file does not compile. It cannot include nvml_api.h (the two headers
 * declare the same names), so both are checked against the same figures, nvml_layout.h. */
#include <stddef.h>
#include <nvml.h>
#include "nvml_layout.h"

#define SAME(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field)
SAME(nvmlProcessUtilizationSample_t, pid, ECO_NVML_PUS_PID);
SAME(nvmlProcessUtilizationSample_t, timeStamp, ECO_NVML_PUS_TIMESTAMP);
SAME(nvmlProcessUtilizationSample_t, smUtil, ECO_NVML_PUS_SMUTIL);
SAME(nvmlProcessUtilizationSample_t, decUtil, ECO_NVML_PUS_DECUTIL);
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == ECO_NVML_PUS_SIZE, "sample size");
SAME(nvmlProcessInfo_v2_t, pid, ECO_NVML_PI_PID);
SAME(nvmlProcessInfo_v2_t, usedGpuMemory, ECO_NVML_PI_MEM);
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == ECO_NVML_PI_SIZE, "process info size");
_Static_assert(NVML_ERROR_NOT_FOUND == 6 && NVML_ERROR_NOT_SUPPORTED == 3 &&
                   NVML_ERROR_INSUFFICIENT_SIZE == 7,
               "return codes");

/* The prototypes the platform calls through its function pointers (src/platform/nvml.c). */
static nvmlReturn_t (*const put)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
                                 unsigned long long) = nvmlDeviceGetProcessUtilization;
static nvmlReturn_t (*const procs)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v2_t *) =
    nvmlDeviceGetComputeRunningProcesses_v3;

/* 1 when this file was built (the real header agreed), for test_nvml_layout. */
int eco_test_nvml_header_checked(void)
{
    return put != NULL && procs != NULL;
}
