/* SPDX-License-Identifier: MIT */
/* Fuzz target: the trace loader (src/sim/trace.c) on every format of src/sim/trace_formats.def,
 * detected from the header and forced, strict and with bad rows skipped, plain or gzip. */
#include "fuzz_util.h"
#include <math.h>
#include <stdbool.h>
#include "sim/trace.h"

static const enum eco_trace_format formats[] = {
    ECO_TRACE_AUTO,
#define ECO_TRACE_FORMAT(ID, name) ECO_TRACE_##ID,
#include "sim/trace_formats.def"
#undef ECO_TRACE_FORMAT
};

static void warn(void *ctx, const char *msg)
{
    (void)ctx;
    FUZZ_CHECK(strlen(msg) < 4096);
}

/* What a load promises: all or nothing, and every job within the documented ranges. */
static void load(const char *path, enum eco_trace_format f, bool skip)
{
    /* sacct: the site type names of tests/data/trace_sacct/ mapped, local times in UTC */
    struct eco_trace_opts o = {.format = f,
                               .skip_bad_rows = skip,
                               .gpu_type_map = "a100=A100-SXM,tesla=V100",
                               .tz = "UTC",
                               .warn = warn};
    struct eco_error err = {{0}};
    struct eco_jobset *set = eco_jobset_create();
    FUZZ_CHECK(set);
    int rc = eco_trace_load(path, &o, set, &err);
    if (rc == 0) {
        FUZZ_CHECK(set->n > 0);
        for (size_t i = 0; i < set->n; i++) {
            const struct eco_job *j = &set->jobs[i];
            FUZZ_CHECK(isfinite(j->submit_s) && fabs(j->submit_s) <= ECO_TRACE_MAX_TIME_S);
            FUZZ_CHECK(j->duration_s >= 0 && j->duration_s <= ECO_TRACE_MAX_DURATION_S);
            FUZZ_CHECK(j->gpus <= ECO_TRACE_MAX_GPUS);
            FUZZ_CHECK(j->gpu_milli >= 1 && j->gpu_milli <= 1000);
            FUZZ_CHECK(j->gpu_mem_gb >= 0 && j->gpu_mem_gb <= ECO_TRACE_MAX_GPU_MEM_GB);
            FUZZ_CHECK(j->deadline_s == ECO_NO_DEADLINE || isfinite(j->deadline_s));
            FUZZ_CHECK(j->id_off < set->str_len);
            FUZZ_CHECK(j->limit_s >= 0 && !isnan(j->limit_s));
        }
    } else {
        FUZZ_CHECK(rc < 0 && set->n == 0 && err.msg[0]);
    }
    eco_jobset_destroy(set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    load(path, ECO_TRACE_AUTO, false);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        load(path, formats[i], true);
    /* the detection alone, on the first line as a string */
    char *s = fuzz_str(data, size);
    s[strcspn(s, "\r\n")] = '\0';
    enum eco_trace_format f = eco_trace_detect(s);
    FUZZ_CHECK(eco_trace_format_parse(eco_trace_format_name(f)) == (int)f);
    free(s);
    return 0;
}
