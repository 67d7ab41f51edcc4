/* SPDX-License-Identifier: MIT */
/* Fuzz target: cluster descriptions of `sim --cluster` (docs/formats/cluster.md): the input as
 * a file (a JSON cluster file, src/sim/cluster_json.c, or a Slurm node list,
 * src/sim/cluster_slurm.c) and as an inline spec COUNTxGPUS[:TYPE],... (src/core/cluster.c). */
#include "fuzz_util.h"
#include <stdbool.h>
#include "ecosched/cluster.h"
#include "sim/sim.h"

static void load(const char *arg, bool spec)
{
    struct eco_cluster *c = NULL;
    struct eco_error err = {{0}};
    /* Slurm node lists: the site type names of tests/data/trace_sacct/ mapped */
    struct eco_cluster_opts o = {.gpu_type_map = "a100=A100-SXM,tesla=V100"};
    if ((spec ? eco_cluster_parse_spec(arg, &c, &err) : eco_cluster_load_with(arg, &o, &c, &err)) ==
        0)
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
