/* SPDX-License-Identifier: MIT */
/* Fuzz target: grid-signal files (src/util/grid_signal.c, docs/formats/grid-signal.md), read as
 * a carbon and as a price signal, plain or gzip. */
#include "fuzz_util.h"
#include <math.h>
#include "util/grid_signal.h"

static void read_as(const char *path, enum eco_signal_kind kind)
{
    struct eco_signal s = {0};
    struct eco_error err = {{0}};
    int rc = eco_grid_signal_read(path, kind, NULL, &s, &err);
    if (rc == 0) {
        FUZZ_CHECK(s.n >= 1);
        for (size_t i = 0; i < s.n; i++)
            FUZZ_CHECK(s.t[i] < s.t[i + 1]);
    } else {
        FUZZ_CHECK(rc < 0 && err.msg[0]);
    }
    eco_signal_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    read_as(path, ECO_SIGNAL_CARBON);
    read_as(path, ECO_SIGNAL_PRICE);
    return 0;
}
