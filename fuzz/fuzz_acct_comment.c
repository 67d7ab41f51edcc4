/* SPDX-License-Identifier: MIT */
/* Fuzz target: the AdminComment the SPANK plugin keeps (src/slurm/acct_comment.c,
 * docs/slurm/accounting.md). The input's lines: the old comment, a node name, its energy and
 * its carbon (numbers as text). A merged comment must read back: it holds the node, it merges
 * again, and after that one rewrite (parts printed to 0.1 J) merging changes nothing. */
#include "fuzz_util.h"
#include "slurm/acct_comment_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_str(data, size);
    const char *part[4];
    fuzz_split(s, part, 4);
    const char *old = part[0], *node = part[1];
    double e = strtod(part[2], NULL), c = *part[3] ? strtod(part[3], NULL) : -1;
    char *out = NULL, *again = NULL, *third = NULL;
    struct eco_error err = {{0}};

    (void)eco_slurm__comment_has(old, node);
    if (eco_slurm__comment_merge(*old ? old : NULL, node, e, c, &out, &err) == 0) {
        FUZZ_CHECK(out);
        FUZZ_CHECK(eco_slurm__comment_has(out, node));
        FUZZ_CHECK(eco_slurm__comment_merge(out, node, e, c, &again, &err) == 0);
        FUZZ_CHECK(eco_slurm__comment_has(again, node));
        FUZZ_CHECK(eco_slurm__comment_merge(again, node, e, c, &third, &err) == 0);
        FUZZ_CHECK(!strcmp(again, third));
    } else {
        FUZZ_CHECK(!out && err.msg[0]);
    }
    free(third);
    free(again);
    free(out);
    free(s);
    return 0;
}
