/* SPDX-License-Identifier: MIT */
/* Daemon platforms: the fake NVML library through the nvml code path (count, names, limits,
 * processes, energy), the "none" platform, and the errors for missing libraries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "platform/platform.h"
#include "util/clock.h"

/* A fresh state file per test, so tests see only their own GPUs and processes. */
struct fixture {
    char dir[64];
    char path[96];
    pid_t runner; /* a run tool still to stop when a test fails half-way */
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/eco-platform-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/gpus.state", f->dir);
    setenv("ECOSCHED_FAKE_NVML_STATE", f->path, 1);
    setenv("ECOSCHED_FAKE_NVML_GPUS", "4", 1);
    unsetenv("ECOSCHED_FAKE_NVML_MODEL");
    unsetenv("ECOSCHED_FAKE_NVML_NO_ENERGY");
    unsetenv("ECOSCHED_FAKE_NVML_PROC_MEM_MB");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->runner > 0) {
        kill(f->runner, SIGTERM);
        waitpid(f->runner, NULL, 0);
    }
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static struct eco_platform *open_fake(void)
{
    struct eco_platform *p = NULL;
    struct eco_error err = {""};
    int rc = eco_platform_open("fake", ECO_FAKE_NVML_LIB, &p, &err);
    if (rc < 0)
        print_error("open fake: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return p;
}

static void sleep_s(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0)
        ;
}

static void test_registry(void **state)
{
    (void)state;
    assert_ptr_equal(eco_platform_find("nvml"), &eco_platform_nvml);
    assert_ptr_equal(eco_platform_find("FAKE"), &eco_platform_fake);
    assert_ptr_equal(eco_platform_find("none"), &eco_platform_none);
    assert_null(eco_platform_find("cuda"));
    size_t n = 0;
    for (const struct eco_platform_ops *const *o = eco_platform_all(); *o; o++, n++)
        assert_non_null((*o)->summary);
    assert_int_equal(n, 3);

    struct eco_platform *p = (struct eco_platform *)1;
    struct eco_error err = {""};
    assert_int_equal(eco_platform_open("cuda", NULL, &p, &err), -EINVAL);
    assert_null(p);
    assert_non_null(strstr(err.msg, "unknown platform 'cuda'"));
}

static void test_count_names_limits(void **state)
{
    (void)state;
    struct eco_platform *p = open_fake();
    struct eco_error err = {""};
    char buf[ECO_PLATFORM_STR_MAX], uuid0[ECO_PLATFORM_STR_MAX];
    assert_string_equal(eco_platform_name(p), "fake");
    assert_int_equal(eco_platform_gpu_count(p), 4);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(eco_platform_gpu_name(p, i, buf, sizeof buf, &err), 0);
        assert_string_equal(buf, "Tesla V100-PCIE-32GB");
        assert_int_equal(eco_platform_gpu_uuid(p, i, buf, sizeof buf, &err), 0);
        assert_int_equal(strncmp(buf, "GPU-", 4), 0);
        if (i == 0)
            memcpy(uuid0, buf, sizeof buf);
        else
            assert_string_not_equal(buf, uuid0);

        struct eco_power_range r;
        double limit, power, util, energy;
        uint64_t total, used;
        assert_int_equal(eco_platform_power_range(p, i, &r, &err), 0);
        assert_true(r.min_w == 100 && r.max_w == 250 && r.default_w == 250);
        assert_int_equal(eco_platform_power_limit(p, i, &limit, &err), 0);
        assert_true(limit == 250);
        assert_int_equal(eco_platform_power(p, i, &power, &err), 0);
        assert_true(power == 23);
        assert_int_equal(eco_platform_util(p, i, &util, &err), 0);
        assert_true(util == 0);
        assert_int_equal(eco_platform_memory(p, i, &total, &used, &err), 0);
        assert_true(total == 32ULL << 30 && used == 0);
        assert_int_equal(eco_platform_energy(p, i, &energy, &err), 0);
        assert_true(energy >= 0);
    }
    /* A name truncated to the caller's buffer, still terminated. */
    char small[6];
    assert_int_equal(eco_platform_gpu_name(p, 0, small, sizeof small, &err), 0);
    assert_string_equal(small, "Tesla");
    /* Out of range. */
    double w;
    assert_int_equal(eco_platform_power(p, 4, &w, &err), -ENODEV);
    assert_non_null(strstr(err.msg, "GPU 4 out of range (4 GPUs)"));
    eco_platform_close(p);

    /* The model comes from the environment when the state file is created. */
    struct fixture *f = *state;
    unlink(f->path);
    setenv("ECOSCHED_FAKE_NVML_GPUS", "2", 1);
    setenv("ECOSCHED_FAKE_NVML_MODEL", "NVIDIA H100 80GB HBM3", 1);
    p = open_fake();
    assert_int_equal(eco_platform_gpu_count(p), 2);
    struct eco_power_range r;
    assert_int_equal(eco_platform_power_range(p, 1, &r, &err), 0);
    assert_true(r.min_w == 200 && r.max_w == 700 && r.default_w == 700);
    eco_platform_close(p);
}

static void test_set_limit(void **state)
{
    (void)state;
    struct eco_platform *a = open_fake(), *b = open_fake();
    struct eco_error err = {""};
    double limit;
    assert_int_equal(eco_platform_set_power_limit(a, 2, 150, &err), 0);
    assert_int_equal(eco_platform_power_limit(b, 2, &limit, &err), 0);
    assert_true(limit == 150);
    assert_int_equal(eco_platform_power_limit(b, 1, &limit, &err), 0);
    assert_true(limit == 250);

    static const double bad[] = {99, 251, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        assert_int_equal(eco_platform_set_power_limit(b, 2, bad[i], &err), -EINVAL);
        if (!strstr(err.msg, "outside 100..250 W"))
            print_error("limit %g: message '%s'\n", bad[i], err.msg);
        assert_non_null(strstr(err.msg, "GPU 2"));
        assert_non_null(strstr(err.msg, "outside 100..250 W"));
    }
    assert_int_equal(eco_platform_set_power_limit(b, 2, -5, &err), -EINVAL);
    assert_int_equal(eco_platform_power_limit(a, 2, &limit, &err), 0);
    assert_true(limit == 150);
    eco_platform_close(a);
    eco_platform_close(b);

    /* A third process-like open after both closed still sees the limit. */
    a = open_fake();
    assert_int_equal(eco_platform_power_limit(a, 2, &limit, &err), 0);
    assert_true(limit == 150);
    eco_platform_close(a);
}

static pid_t spawn_on_gpu(const char *gpus)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl(ECO_FAKE_GPU_RUN, ECO_FAKE_GPU_RUN, gpus, "sleep", "30", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static size_t pids_on(struct eco_platform *p, unsigned gpu, pid_t *pids, size_t cap)
{
    struct eco_error err = {""};
    size_t n = 99;
    int rc = eco_platform_gpu_pids(p, gpu, pids, cap, &n, &err);
    if (rc < 0)
        print_error("pids: %s\n", err.msg);
    assert_int_equal(rc, 0);
    return n;
}

static void test_process_on_gpu(void **state)
{
    struct fixture *f = *state;
    struct eco_platform *p = open_fake();
    struct eco_error err = {""};
    pid_t pids[8];
    assert_int_equal(eco_platform_set_power_limit(p, 1, 180, &err), 0);
    pid_t runner = f->runner = spawn_on_gpu("1");
    size_t n = 0;
    for (int i = 0; i < 500 && n == 0; i++) {
        n = pids_on(p, 1, pids, 8);
        if (n == 0)
            sleep_s(0.01);
    }
    assert_int_equal(n, 1);
    assert_true(pids[0] > 0 && pids[0] != runner); /* the command, not the wrapper */
    assert_int_equal(pids_on(p, 0, pids, 8), 0);

    /* Too small a buffer: -ENOSPC with the count. */
    size_t need = 0;
    assert_int_equal(eco_platform_gpu_pids(p, 1, pids, 0, &need, &err), -ENOSPC);
    assert_int_equal(need, 1);

    double w, util;
    uint64_t total, used;
    assert_int_equal(eco_platform_power(p, 1, &w, &err), 0);
    assert_true(w == 180); /* busy 200 W, capped by the 180 W limit */
    assert_int_equal(eco_platform_util(p, 1, &util, &err), 0);
    assert_true(fabs(util - 0.95) < 1e-9);
    assert_int_equal(eco_platform_memory(p, 1, &total, &used, &err), 0);
    assert_true(used == 2ULL << 30);
    assert_int_equal(eco_platform_power(p, 0, &w, &err), 0);
    assert_true(w == 23);
    assert_int_equal(eco_platform_util(p, 0, &util, &err), 0);
    assert_true(util == 0);

    /* Stopping the wrapper stops the command and frees the GPU. */
    int status = 0;
    assert_int_equal(kill(runner, SIGTERM), 0);
    assert_int_equal(waitpid(runner, &status, 0), runner);
    f->runner = 0;
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM);
    assert_int_equal(pids_on(p, 1, pids, 8), 0);
    assert_int_equal(eco_platform_power(p, 1, &w, &err), 0);
    assert_true(w == 23);
    assert_int_equal(eco_platform_memory(p, 1, &total, &used, &err), 0);
    assert_true(used == 0);
    eco_platform_close(p);
}

static void test_bad_gpu_list(void **state)
{
    (void)state;
    /* The run tool refuses GPUs that do not exist and does not run the command. */
    pid_t pid = spawn_on_gpu("7");
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 125);
}

static void test_energy(void **state)
{
    (void)state;
    struct eco_platform *p = open_fake();
    struct eco_error err = {""};
    double e0, e1;
    double t0 = eco_mono_s();
    assert_int_equal(eco_platform_energy(p, 3, &e0, &err), 0);
    double t1 = eco_mono_s();
    sleep_s(0.2);
    double t2 = eco_mono_s();
    assert_int_equal(eco_platform_energy(p, 3, &e1, &err), 0);
    double t3 = eco_mono_s();
    /* Idle at 23 W between the two readings; the counter has 1 mJ resolution. */
    double lo = 23.0 * (t2 - t1) - 0.002, hi = 23.0 * (t3 - t0) + 0.002;
    if (!(e1 - e0 >= lo && e1 - e0 <= hi))
        print_error("energy grew %g J, expected %g..%g J\n", e1 - e0, lo, hi);
    assert_true(e1 - e0 >= lo && e1 - e0 <= hi);

    setenv("ECOSCHED_FAKE_NVML_NO_ENERGY", "1", 1);
    assert_int_equal(eco_platform_energy(p, 3, &e1, &err), -ENOTSUP);
    assert_non_null(strstr(err.msg, "nvmlDeviceGetTotalEnergyConsumption"));
    eco_platform_close(p);
}

static void test_fake_lookup(void **state)
{
    (void)state;
    struct eco_platform *p = NULL;
    struct eco_error err = {""};
    setenv("ECOSCHED_FAKE_NVML_LIB", ECO_FAKE_NVML_LIB, 1);
    assert_int_equal(eco_platform_open("fake", NULL, &p, &err), 0);
    assert_int_equal(eco_platform_gpu_count(p), 4);
    eco_platform_close(p);
    /* Without the variable: next to the executable, which for this test (in tests/) has none. */
    unsetenv("ECOSCHED_FAKE_NVML_LIB");
    assert_int_equal(eco_platform_open("fake", NULL, &p, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/tests/libecosched-fake-nvml.so'"));
}

static void test_none(void **state)
{
    (void)state;
    struct eco_platform *p = NULL;
    struct eco_error err = {""};
    assert_int_equal(eco_platform_open("none", NULL, &p, &err), 0);
    assert_string_equal(eco_platform_name(p), "none");
    assert_int_equal(eco_platform_gpu_count(p), 0);
    double w;
    size_t n = 5;
    assert_int_equal(eco_platform_power(p, 0, &w, &err), -ENODEV);
    assert_non_null(strstr(err.msg, "no GPUs"));
    assert_int_equal(eco_platform_set_power_limit(p, 0, 200, &err), -ENODEV);
    assert_int_equal(eco_platform_gpu_pids(p, 0, NULL, 0, &n, &err), -ENODEV);
    assert_int_equal(n, 0);
    eco_platform_close(p);
    eco_platform_close(NULL);
}

static void test_missing_library(void **state)
{
    (void)state;
    struct eco_platform *p = (struct eco_platform *)1;
    struct eco_error err = {""};
    assert_int_equal(eco_platform_open("nvml", "/nonexistent/libnvidia-ml.so.1", &p, &err),
                     -ENOENT);
    assert_null(p);
    assert_non_null(strstr(err.msg, "'/nonexistent/libnvidia-ml.so.1'"));
    assert_non_null(strstr(err.msg, "cannot load"));

    assert_int_equal(eco_platform_open("fake", "/nonexistent/fake.so", &p, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "fake: cannot load NVML library '/nonexistent/fake.so'"));

    /* A library that loads but is not NVML: the first missing symbol is named. */
    assert_int_equal(eco_platform_open("nvml", "libm.so.6", &p, &err), -ENOSYS);
    assert_null(p);
    assert_non_null(strstr(err.msg, "lacks symbol nvmlInit_v2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test_setup_teardown(test_count_names_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_on_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_gpu_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_energy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fake_lookup, setup, teardown),
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_missing_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
