/* SPDX-License-Identifier: MIT */
/* The AdminComment ecosched keeps for a Slurm job (src/slurm/acct_comment.c): each node's part
 * merged in, the sum over the nodes recomputed, carbon summed only when every node has it, a
 * site's own comment kept, a node's part replaced when its epilog writes again, and an
 * unreadable comment refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "slurm/acct_comment_internal.h"

struct merge_case {
    const char *old, *node;
    double energy_j, carbon_g;
    const char *want;
};

static const struct merge_case cases[] = {
    {NULL, "n1", 600.14, -1, "ecosched gpu_energy_j=600.1 nodes=1 n1=600.1J"},
    {"", "n1", 10, 0.5, "ecosched gpu_energy_j=10.0 carbon_g=0.50 nodes=1 n1=10.0J,0.50g"},
    /* a two-node job: the second epilog adds its part, the sum is over both */
    {"ecosched gpu_energy_j=600.1 nodes=1 n1=600.1J", "n2", 634.4, -1,
     "ecosched gpu_energy_j=1234.5 nodes=2 n1=600.1J n2=634.4J"},
    /* carbon only where every node has it */
    {"ecosched gpu_energy_j=600.0 carbon_g=1.00 nodes=1 n1=600.0J,1.00g", "n2", 400, -1,
     "ecosched gpu_energy_j=1000.0 nodes=2 n1=600.0J,1.00g n2=400.0J"},
    {"ecosched gpu_energy_j=600.0 carbon_g=1.00 nodes=1 n1=600.0J,1.00g", "n2", 400, 2.5,
     "ecosched gpu_energy_j=1000.0 carbon_g=3.50 nodes=2 n1=600.0J,1.00g n2=400.0J,2.50g"},
    /* the same node again (a retried epilog) replaces its part */
    {"ecosched gpu_energy_j=1234.5 nodes=2 n1=600.1J n2=634.4J", "n1", 100, -1,
     "ecosched gpu_energy_j=734.4 nodes=2 n1=100.0J n2=634.4J"},
    /* as sacctmgr stores it: in lower case */
    {"ecosched gpu_energy_j=5.0 carbon_g=1.00 nodes=1 n1=5.0j,1.00g", "n2", 1, 1,
     "ecosched gpu_energy_j=6.0 carbon_g=2.00 nodes=2 n1=5.0J,1.00g n2=1.0J,1.00g"},
    {"ecosched gpu_energy_j=5.0 nodes=1 gpu1=5.0j", "GPU1", 2, -1,
     "ecosched gpu_energy_j=2.0 nodes=1 gpu1=2.0J"},
    /* a site's own comment stays in front */
    {"checked by ops", "gpu7", 5, -1,
     "checked by ops; ecosched gpu_energy_j=5.0 nodes=1 gpu7=5.0J"},
    {"ops; ecosched gpu_energy_j=5.0 nodes=1 a=5.0J", "b", 1, -1,
     "ops; ecosched gpu_energy_j=6.0 nodes=2 a=5.0J b=1.0J"},
};

static void merges(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct merge_case *c = &cases[i];
        struct eco_error err = {{0}};
        char *out = NULL;
        int rc = eco_slurm__comment_merge(c->old, c->node, c->energy_j, c->carbon_g, &out, &err);
        if (rc)
            fail_msg("case %zu: %s", i, err.msg);
        assert_string_equal(out, c->want);
        assert_true(eco_slurm__comment_has(out, c->node));
        free(out);
    }
}

static void refuses_bad(void **state)
{
    static const struct {
        const char *old, *node;
        double energy_j;
        const char *msg;
    } bad[] = {
        {NULL, "", 1, "node ''"},
        {NULL, "a b", 1, "node 'a b'"},
        {NULL, "n1", -1, "energy -1 J"},
        {NULL, "n1", 1e300, "energy 1e+300 J"},
        {"ecosched gpu_energy_j=5 nodes=1 n1=5", "n2", 1, "part 'n1=5' is not NODE=JOULESJ"},
        {"ecosched gpu_energy_j=5 nodes=1 n1=5J,xg", "n2", 1, "carbon is not GRAMSg"},
        {"ecosched gpu_energy_j=5 junk", "n2", 1, "token 'junk' is not NAME=VALUE"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct eco_error err = {{0}};
        char *out = (char *)"untouched";
        int rc = eco_slurm__comment_merge(bad[i].old, bad[i].node, bad[i].energy_j, -1, &out, &err);
        assert_int_equal(rc, -EINVAL);
        assert_null(out);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, bad[i].msg);
    }
}

static void has_part(void **state)
{
    (void)state;
    const char *c = "ecosched gpu_energy_j=6.0 nodes=2 n1=5.0J n12=1.0J";
    assert_true(eco_slurm__comment_has(c, "n1"));
    assert_true(eco_slurm__comment_has(c, "n12"));
    assert_false(eco_slurm__comment_has(c, "n2"));
    assert_false(eco_slurm__comment_has(NULL, "n1"));
    assert_false(eco_slurm__comment_has("ops only", "n1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merges),
        cmocka_unit_test(refuses_bad),
        cmocka_unit_test(has_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
