/* SPDX-License-Identifier: MIT */
/* Fuzz target: cluster descriptions of `sim --cluster` (docs/formats/cluster.md): the input as
 * a JSON file (src/sim/cluster_json.c) and as an inline spec COUNTxGPUS[:TYPE],...
 * (src/core/cluster.c). */
#include "fuzz_util.h"
#include <stdbool.h>
#include "ecosched/cluster.h"
#include "sim/sim.h"

static void load(const char *arg, bool spec)
{
    struct eco_cluster *c = NULL;
    struct eco_error err = {{0}};
    if ((spec ? eco_cluster_parse_spec(arg, &c, &err) : eco_cluster_load(arg, &c, &err)) == 0)
        FUZZ_CHECK(c);
    else
        FUZZ_CHECK(!c && err.msg[0]);
    eco_cluster_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load(fuzz_file(data, size), false);
    char *spec = fuzz_str(data, size);
    load(spec, true);
    free(spec);
    return 0;
}
