/* SPDX-License-Identifier: MIT */
/* The AdminComment ecosched keeps for a Slurm job (src/slurm/acct_comment.c): each node's part
 * merged in, the sum over the nodes recomputed, carbon summed only when every node has it, a
 * site's own comment kept, a node's part replaced when its epilog writes again, an
 * unreadable comment or a figure that is no plain decimal below the bound refused, node names
 * equal to the comment's own keys read back, and the previous version's comments read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
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
    /* a negative zero is written as 0, which the reader takes (it printed "-0.0": found by
     * fuzz_acct_comment) */
    {"ops", "N0", -0.0, -0.0, "ops; ecosched gpu_energy_j=0.0 carbon_g=0.00 nodes=1 N0=0.0J,0.00g"},
    /* AdminComment is shared (issue 31): another tool's text before or after ecosched's part
     * is kept byte for byte, its separators and blanks included; Jobstats' "JS1:" blob
     * (base64, '+', '/' and '=' in it) first */
    {"JS1:H4sIAAAAAAAAA+1Xy2/bOBD9/w==", "n1", 5, -1,
     "JS1:H4sIAAAAAAAAA+1Xy2/bOBD9/w==; ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J"},
    {"JS1:H4sIAAAAAAAAA+1Xy2/bOBD9/w==; ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J", "n2", 1, -1,
     "JS1:H4sIAAAAAAAAA+1Xy2/bOBD9/w==; ecosched gpu_energy_j=6.0 nodes=2 n1=5.0J n2=1.0J"},
    /* written after ecosched's part, with or without a separator */
    {"ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J; JS1:H4sI+1Xy/w==", "n2", 1, -1,
     "ecosched gpu_energy_j=6.0 nodes=2 n1=5.0J n2=1.0J; JS1:H4sI+1Xy/w=="},
    {"ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J JS1:H4sI+1Xy/w==", "n1", 7, -1,
     "ecosched gpu_energy_j=7.0 nodes=1 n1=7.0J JS1:H4sI+1Xy/w=="},
    {"ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J;JS1:x", "n2", 1, -1,
     "ecosched gpu_energy_j=6.0 nodes=2 n1=5.0J n2=1.0J;JS1:x"},
    /* arbitrary text on both sides, some of it looking like ecosched's words */
    {"NERSC cap=300W;  ; ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J  nodes=9 n9=1.0J x=y;", "n1", 2,
     -1, "NERSC cap=300W;  ; ecosched gpu_energy_j=2.0 nodes=1 n1=2.0J  nodes=9 n9=1.0J x=y;"},
    /* trailing separators of another tool's text are its own: nothing trimmed */
    {"cap=300W; ", "n1", 1, -1, "cap=300W; ; ecosched gpu_energy_j=1.0 nodes=1 n1=1.0J"},
    {"multi\nline\ttext", "n1", 1, -1,
     "multi\nline\ttext; ecosched gpu_energy_j=1.0 nodes=1 n1=1.0J"},
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
        {NULL, "a;b", 1, "node 'a;b'"}, /* ';' ends a part: text after it is another tool's */
        {NULL, "n1", -1, "energy -1 J"},
        {NULL, "n1", 1e300, "energy 1e+300 J"},
        {"ecosched gpu_energy_j=5 nodes=1 n1=5", "n2", 1, "part 'n1=5' is not NODE=JOULESJ"},
        {"ecosched gpu_energy_j=5 nodes=1 n1=5J,xg", "n2", 1, "carbon is not GRAMSg"},
        {"ecosched gpu_energy_j=5 junk", "n2", 1, "no nodes=COUNT"},
        /* figures as the merge prints them: plain decimals below a petajoule (a petagram) */
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=infJ", "n2", 1, "part 'n1=infJ' is not NODE="},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=nanJ", "n2", 1, "part 'n1=nanJ' is not NODE="},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=1e999J", "n2", 1, "part 'n1=1e999J' is not"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=0x1p10J", "n2", 1, "part 'n1=0x1p10J' is not"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=5e3J", "n2", 1, "part 'n1=5e3J' is not"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=-5.0J", "n2", 1, "part 'n1=-5.0J' is not"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=+5.0J", "n2", 1, "part 'n1=+5.0J' is not"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=1000000000000000.0J", "n2", 1, "is not NODE="},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J,infg", "n2", 1, "carbon is not GRAMSg"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J,0x1p3g", "n2", 1, "carbon is not GRAMSg"},
        {"ecosched gpu_energy_j=5.0 nodes=1 n1=5.0J,1e999g", "n2", 1, "carbon is not GRAMSg"},
        {"ecosched gpu_energy_j=inf nodes=1 n1=5.0J", "n2", 1, "gpu_energy_j=inf"},
        {"ecosched gpu_energy_j=5.0 carbon_g=0x1p3 nodes=1 n1=5.0J,8.00g", "n2", 1,
         "carbon_g=0x1p3"},
        {"ecosched gpu_energy_j=5.0 nodes=2 n1=5.0J", "n2", 1, "nodes=2 but 1 part"},
        {"ecosched gpu_energy_j=5.0 nodes=1 =5.0J", "n2", 1, "part '=5.0J' is not NODE="},
        /* a job's sum stays below the bound too */
        {"ecosched gpu_energy_j=999999999999999.0 nodes=1 n1=999999999999999.0J", "n2", 1,
         "the job's sum"},
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

/* Text of other tools with upper case, which sacctmgr's lower-case copy would spoil: the
 * plugin leaves such a comment alone (issue 31). ecosched's own part does not count. */
static void others_upper(void **state)
{
    (void)state;
    assert_true(eco_slurm__comment_others_upper("JS1:H4sIAAAA+1Xy2/w=="));
    assert_true(
        eco_slurm__comment_others_upper("JS1:H4sI; ecosched gpu_energy_j=1.0 nodes=1 n1=1.0J"));
    assert_true(
        eco_slurm__comment_others_upper("ecosched gpu_energy_j=1.0 nodes=1 n1=1.0J; JS1:Ab"));
    assert_false(eco_slurm__comment_others_upper(NULL));
    assert_false(eco_slurm__comment_others_upper(""));
    assert_false(eco_slurm__comment_others_upper("checked by ops"));
    assert_false(eco_slurm__comment_others_upper("ops; ecosched gpu_energy_j=1.0 nodes=1 N1=1.0J"));
    assert_false(
        eco_slurm__comment_others_upper("js1:h4si; ecosched gpu_energy_j=1.0 nodes=1 n1=1.0j"));
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

/* The comment's own keys as node names (a fuzzer found them written, then dropped when read
 * back: the reader took them for the totals), in any case, and names near them: each part is
 * read back, merged with a second node, replaced by a retried epilog, and read from the
 * lower-case copy sacctmgr stores. */
static void reserved_names_round_trip(void **state)
{
    static const char *const names[] = {
        "nodes",    "carbon_g", "gpu_energy_j", "NODES", "Carbon_G", "GPU_ENERGY_J",
        "ecosched", "node",     "nodes1",       "n1",    "nodes,x",  "ecosched:1",
    };
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *name = names[i];
        struct eco_error err = {{0}};
        char *one = NULL, *two = NULL, *again = NULL, want[256];
        if (eco_slurm__comment_merge("ops", name, 5, 1, &one, &err))
            fail_msg("'%s': %s", name, err.msg);
        snprintf(want, sizeof want,
                 "ops; ecosched gpu_energy_j=5.0 carbon_g=1.00 nodes=1 %s=5.0J,1.00g", name);
        assert_string_equal(one, want);
        if (!eco_slurm__comment_has(one, name))
            fail_msg("'%s' not read back from '%s'", name, one);
        const char *other = strcmp(name, "n1") ? "n1" : "n2";
        if (eco_slurm__comment_merge(one, other, 2, 0.5, &two, &err))
            fail_msg("'%s' then %s: %s", name, other, err.msg);
        snprintf(want, sizeof want,
                 "ops; ecosched gpu_energy_j=7.0 carbon_g=1.50 nodes=2 %s=5.0J,1.00g %s=2.0J,0.50g",
                 name, other);
        assert_string_equal(two, want);
        assert_true(eco_slurm__comment_has(two, name) && eco_slurm__comment_has(two, other));
        for (char *c = two; *c; c++) /* sacctmgr's copy */
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        if (eco_slurm__comment_merge(two, name, 10, -1, &again, &err))
            fail_msg("'%s' again: %s", name, err.msg);
        assert_true(eco_slurm__comment_has(again, name));
        assert_non_null(strstr(again, "ecosched gpu_energy_j=12.0 nodes=2 "));
        assert_non_null(strstr(again, "=10.0J"));
        free(one), free(two), free(again);
    }
}

/* Comments the previous version wrote (the same layout; its reader dropped a node named like
 * a key, which this one reads): Slurm keeps AdminComment for years. */
static void reads_previous_version(void **state)
{
    static const struct merge_case old[] = {
        {"ecosched gpu_energy_j=1234.5 nodes=2 n1=600.1J n2=634.4J", "n3", 1, -1,
         "ecosched gpu_energy_j=1235.5 nodes=3 n1=600.1J n2=634.4J n3=1.0J"},
        {"site text; ecosched gpu_energy_j=11.0 carbon_g=3.00 nodes=2 nodes=5.0j,1.00g "
         "n1=6.0j,2.00g",
         "n2", 1, 1,
         "site text; ecosched gpu_energy_j=12.0 carbon_g=4.00 nodes=3 nodes=5.0J,1.00g "
         "n1=6.0J,2.00g n2=1.0J,1.00g"},
        {"ecosched gpu_energy_j=9.0 nodes=2 carbon_g=4.0J gpu_energy_j=5.0J", "carbon_g", 1, -1,
         "ecosched gpu_energy_j=6.0 nodes=2 carbon_g=1.0J gpu_energy_j=5.0J"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
        struct eco_error err = {{0}};
        char *out = NULL;
        if (eco_slurm__comment_merge(old[i].old, old[i].node, old[i].energy_j, old[i].carbon_g,
                                     &out, &err))
            fail_msg("case %zu: %s", i, err.msg);
        assert_string_equal(out, old[i].want);
        free(out);
    }
    assert_true(eco_slurm__comment_has("ecosched gpu_energy_j=5.0 nodes=1 nodes=5.0J", "nodes"));
    assert_true(eco_slurm__comment_has("ecosched gpu_energy_j=5.0 carbon_g=1.00 nodes=1 "
                                       "gpu_energy_j=5.0J,1.00g",
                                       "GPU_ENERGY_J"));
}

/* slurmctld's copy of the comment from `scontrol show job -o` (22.05's layout: "AdminComment=%s "
 * and a blank before the next field): the text as it was, blanks and '=' in it included. */
static void from_scontrol(void **state)
{
    static const struct {
        const char *show, *want;
    } ok[] = {
        {"JobId=4 JobName=wrap WorkDir=/w AdminComment=site note 7; cap=300w  StdErr=/dev/null "
         "StdIn=/dev/null Power= TresPerNode=gres:gpu:1\n",
         "site note 7; cap=300w"},
        {"JobId=4 WorkDir=/w AdminComment=a=b  c  Comment=user text  Power=\n", "a=b  c"},
        {"JobId=4 WorkDir=/w AdminComment=trailing   SystemComment=x  Power=", "trailing "},
        {"JobId=4 WorkDir=/w AdminComment=JS1:H4sI+/w==  Power=\n", "JS1:H4sI+/w=="},
        {"JobId=4 WorkDir=/w AdminComment=last \n", "last"},
    };
    char out[64];
    (void)state;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (eco_slurm__comment_from_scontrol(ok[i].show, out, sizeof out))
            fail_msg("case %zu: not read", i);
        assert_string_equal(out, ok[i].want);
    }
    assert_int_equal(eco_slurm__comment_from_scontrol("JobId=4 WorkDir=/w Power=\n", out, 64),
                     -ENOENT);
    assert_int_equal(eco_slurm__comment_from_scontrol(NULL, out, 64), -ENOENT);
    assert_int_equal(
        eco_slurm__comment_from_scontrol("JobId=4 AdminComment=0123456789  Power=", out, 10),
        -E2BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merges),
        cmocka_unit_test(refuses_bad),
        cmocka_unit_test(has_part),
        cmocka_unit_test(others_upper),
        cmocka_unit_test(reserved_names_round_trip),
        cmocka_unit_test(reads_previous_version),
        cmocka_unit_test(from_scontrol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
