/* SPDX-License-Identifier: MIT */
/* Fuzz target: placement lists (src/place/io.c, docs/formats/placement.md): the input read as
 * a node list and as an item list (openb's columns or ecosched's placement CSV, plain or gzip),
 * then the instance check. */
#include "fuzz_util.h"
#include "place/place_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    struct eco_pl_instance in = {0};
    struct eco_error err = {{0}};
    int rn = eco_pl_read_nodes(path, &in, &err);
    FUZZ_CHECK(rn == 0 || err.msg[0]);
    int ri = eco_pl_read_items(path, &in, &err);
    FUZZ_CHECK(ri == 0 || err.msg[0]);
    FUZZ_CHECK(in.n_models <= ECO_PL_MAX_MODELS);
    for (uint32_t i = 0; i < in.n_nodes; i++)
        FUZZ_CHECK(in.nodes[i].model < (int)in.n_models && in.nodes[i].gpus <= in.max_gpus);
    eco_pl_instance_check(&in, &err);
    eco_pl_instance_fini(&in);
    return 0;
}
