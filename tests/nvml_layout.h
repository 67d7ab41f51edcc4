/* SPDX-License-Identifier: MIT */
/* The byte layout of the NVML structures ecosched reads, as NVIDIA's nvml.h (API 11 and 12)
 * defines them on LP64: checked against src/platform/nvml_api.h by test_nvml_layout.c and, where
 * the build has the real header, against it by nvml_header_check.c. */
#ifndef ECO_TEST_NVML_LAYOUT_H
#define ECO_TEST_NVML_LAYOUT_H

/* nvmlProcessUtilizationSample_t: unsigned pid; unsigned long long timeStamp; unsigned smUtil,
 * memUtil, encUtil, decUtil. */
#define ECO_NVML_PUS_PID 0
#define ECO_NVML_PUS_TIMESTAMP 8
#define ECO_NVML_PUS_SMUTIL 16
#define ECO_NVML_PUS_DECUTIL 28
#define ECO_NVML_PUS_SIZE 32
/* nvmlProcessInfo_v2_t: unsigned pid; unsigned long long usedGpuMemory; unsigned
 * gpuInstanceId, computeInstanceId. */
#define ECO_NVML_PI_PID 0
#define ECO_NVML_PI_MEM 8
#define ECO_NVML_PI_SIZE 24

#endif
