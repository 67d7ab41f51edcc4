/* SPDX-License-Identifier: MIT */
/* The NVML structures src/platform/nvml_api.h declares have NVIDIA's layout (nvml_layout.h);
 * where the build has NVIDIA's nvml.h, nvml_header_check.c is linked in and checks the real
 * header against the same figures and the prototypes the platform calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "nvml_layout.h"
#include "platform/nvml_api.h"

#ifdef ECO_HAVE_NVML_H
int eco_test_nvml_header_checked(void);
#endif

static void test_layout(void **state)
{
    (void)state;
    assert_int_equal(offsetof(nvmlProcessUtilizationSample_t, pid), ECO_NVML_PUS_PID);
    assert_int_equal(offsetof(nvmlProcessUtilizationSample_t, timeStamp), ECO_NVML_PUS_TIMESTAMP);
    assert_int_equal(offsetof(nvmlProcessUtilizationSample_t, smUtil), ECO_NVML_PUS_SMUTIL);
    assert_int_equal(offsetof(nvmlProcessUtilizationSample_t, decUtil), ECO_NVML_PUS_DECUTIL);
    assert_int_equal(sizeof(nvmlProcessUtilizationSample_t), ECO_NVML_PUS_SIZE);
    assert_int_equal(offsetof(nvmlProcessInfo_v2_t, pid), ECO_NVML_PI_PID);
    assert_int_equal(offsetof(nvmlProcessInfo_v2_t, usedGpuMemory), ECO_NVML_PI_MEM);
    assert_int_equal(sizeof(nvmlProcessInfo_v2_t), ECO_NVML_PI_SIZE);
    assert_int_equal(NVML_ERROR_NOT_FOUND, 6);
}

static void test_real_header(void **state)
{
    (void)state;
#ifdef ECO_HAVE_NVML_H
    assert_int_equal(eco_test_nvml_header_checked(), 1);
#else
    print_message("NVIDIA's nvml.h not found at configure time (a CUDA toolkit's include "
                  "directory): checked against the documented layout only\n");
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_real_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
