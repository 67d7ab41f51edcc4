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

/* The prototypes the platform calls through its function pointers (src/platform/nvml.c),
 * compared by type only: _Generic does not evaluate its operand, so nothing links against
 * libnvidia-ml (a build machine may have the toolkit's header without the driver's library). */
typedef nvmlReturn_t (*put_fn)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
                               unsigned long long);
typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v2_t *);
_Static_assert(_Generic(&nvmlDeviceGetProcessUtilization, put_fn : 1, default : 0),
               "nvmlDeviceGetProcessUtilization's prototype");
_Static_assert(_Generic(&nvmlDeviceGetComputeRunningProcesses_v3, procs_fn : 1, default : 0),
               "nvmlDeviceGetComputeRunningProcesses_v3's prototype");

/* 1: this file was built, so the real header agreed (for test_nvml_layout). */
int eco_test_nvml_header_checked(void)
{
    return 1;
}
