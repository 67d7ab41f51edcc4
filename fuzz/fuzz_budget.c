/* SPDX-License-Identifier: MIT */
/* Fuzz target: power-budget files (`time_s,watts` rows, src/sim/budget.c) and the
 * --power-budget-follow spec HIGH_W:LOW_W:PCT[:carbon|price] (the input as a string). */
#include "fuzz_util.h"
#include <math.h>
#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eco_budget_step *steps = NULL;
    struct eco_error err = {{0}};
    size_t n = 0;
    int rc = eco_budget_load(fuzz_file(data, size), &steps, &n, &err);
    if (rc == 0) {
        FUZZ_CHECK(n > 0 && steps);
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(steps[i].t_s >= 0 && steps[i].watts > 0 && isfinite(steps[i].watts));
            FUZZ_CHECK(i == 0 || steps[i].t_s > steps[i - 1].t_s);
        }
    } else {
        FUZZ_CHECK(rc < 0 && !steps && n == 0);
    }
    free(steps);

    char *spec = fuzz_str(data, size);
    struct eco_budget_follow bf = {0};
    if (eco_budget_follow_parse(spec, &bf, &err) == 0)
        FUZZ_CHECK(bf.low_w > 0 && bf.low_w <= bf.high_w && bf.pct >= 0 && bf.pct <= 100);
    free(spec);
    return 0;
}
