/* SPDX-License-Identifier: MIT */
/* Tests for --cluster from Slurm's node lists (src/sim/cluster_slurm.c): the real
 * `scontrol show node --oneliner` and `sinfo --json` of tests/data/trace_sacct/ (a Slurm 22.05
 * with an A100 node, a V100 node named "tesla" and a node without GPUs), the multi-line form,
 * untyped Gres, and errors that name file, line (or node) and field. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "ecosched/catalog.h"
#include "ecosched/cluster.h"
#include "sim/sim.h"

#define DATA ECO_SOURCE_DIR "/tests/data/trace_sacct/"

#define TEST_TMPDIR_NAME "eco_test_cslurm"
#include "test_tmpdir.h"

static int warnings;
static char last_warning[512];

static void warn(void *ctx, const char *msg)
{
    (void)ctx;
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", msg);
}

static int load(const char *path, const char *map, struct eco_cluster_info *info,
                struct eco_cluster **c, struct eco_error *err)
{
    struct eco_cluster_opts o = {.gpu_type_map = map, .warn = warn, .info = info};
    warnings = 0;
    memset(info, 0, sizeof *info);
    err->msg[0] = '\0';
    return eco_cluster_load_with(path, &o, c, err);
}

static void check_real(const char *path)
{
    struct eco_cluster *c;
    struct eco_cluster_info info;
    struct eco_error err;
    int rc = load(path, "a100=A100-SXM,TESLA=v100", &info, &c, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(c->n_nodes, 2);
    assert_int_equal(c->total_gpus, 4);
    assert_int_equal(c->n_groups, 2);
    assert_int_equal(c->groups[0].type, eco_catalog_find("A100-SXM"));
    assert_int_equal(c->groups[0].gpus, 2);
    assert_int_equal(c->groups[1].type, eco_catalog_find("V100"));
    assert_int_equal(info.nodes, 2);
    assert_int_equal(info.skipped, 1);
    assert_string_equal(info.partitions, "gpu,all");
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "skipped 1 node without GPUs: n3"));
    eco_cluster_destroy(c);
}

static void test_real_scontrol(void **state)
{
    (void)state;
    check_real(DATA "nodes.scontrol");
}

static void test_real_sinfo_json(void **state)
{
    (void)state;
    check_real(DATA "sinfo.json");
}

/* scontrol show node without --oneliner; untyped Gres; nodes of one kind in one group. */
static void test_multiline(void **state)
{
    (void)state;
    const char *path = write_text("multi.txt", "NodeName=g1 Arch=x86_64 CoresPerSocket=16\n"
                                               "   Gres=gpu:4(S:0-1)\n"
                                               "   OS=Linux 6.1.0 #1 SMP PREEMPT_DYNAMIC Debian\n"
                                               "   Partitions=short,long\n"
                                               "\n"
                                               "NodeName=g2 Arch=x86_64 CoresPerSocket=16\n"
                                               "   Gres=gpu:h100-sxm:8(S:0-1),mps:400\n"
                                               "   Partitions=long\n"
                                               "\n"
                                               "NodeName=g3 Gres=gpu:4(S:0) Partitions=short\n");
    struct eco_cluster *c;
    struct eco_cluster_info info;
    struct eco_error err;
    int rc = load(path, NULL, &info, &c, &err);
    if (rc)
        fail_msg("%s", err.msg);
    assert_int_equal(c->n_nodes, 3);
    assert_int_equal(c->n_groups, 2);
    assert_int_equal(c->groups[0].type, eco_catalog_find("V100")); /* untyped: as the spec's */
    assert_int_equal(c->groups[0].count, 2);
    assert_int_equal(c->groups[1].type, eco_catalog_find("H100-SXM"));
    assert_int_equal(c->groups[1].gpus, 8);
    assert_string_equal(info.partitions, "short,long");
    assert_int_equal(warnings, 0);
    eco_cluster_destroy(c);
}

static void expect_error(const char *name, const char *text, const char *msg)
{
    const char *path = write_text(name, text);
    struct eco_cluster *c = NULL;
    struct eco_cluster_info info;
    struct eco_error err;
    int rc = load(path, NULL, &info, &c, &err);
    if (rc != -EINVAL || !strstr(err.msg, msg) || !strstr(err.msg, name))
        fail_msg("%s: rc %d, message '%s', expected '%s'", name, rc, err.msg, msg);
    assert_null(c);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("gres.txt", "NodeName=a Gres=gpu:2\nNodeName=b Gres=gpu:a100:x Partitions=p\n",
                 "gres.txt:2: node 'b': field 'Gres': 'gpu:a100:x' has a malformed entry");
    expect_error("type.txt", "NodeName=a Gres=gpu:tesla:2\n",
                 "type.txt:1: node 'a': field 'Gres': GPU type 'tesla' is not in the catalog "
                 "(map it: --gpu-type-map tesla=TYPE");
    expect_error("mixed.txt", "NodeName=a Gres=gpu:v100:2,gpu:p100:2\n",
                 "mixed.txt:1: node 'a': field 'Gres': 'gpu:v100:2,gpu:p100:2' holds GPUs of more "
                 "than one type");
    expect_error("many.txt", "NodeName=a Gres=gpu:65\n", "is more than 64 GPUs on one node");
}

static void test_errors_more(void **state)
{
    (void)state;
    expect_error("noname.txt", "NodeName= Gres=gpu:2\n",
                 "noname.txt:1: field 'NodeName': missing or empty");
    expect_error("cpu.txt", "NodeName=a Gres=(null)\nNodeName=b\n",
                 "cpu.txt: no node with GPUs (2 without were skipped)");
    expect_error("name.json", "{\"nodes\": [{\"gres\": \"gpu:2\"}]}",
                 "name.json: nodes[0]: field 'name': missing or not a string");
    expect_error("gres.json", "{\"nodes\": [{\"name\": \"n1\", \"gres\": 4}]}",
                 "gres.json: nodes[0]: node 'n1': field 'gres': not a string");
    expect_error("gres2.json", "{\"nodes\": [{\"name\": \"n1\", \"gres\": \"gpu:a100\"}]}",
                 "gres2.json: nodes[0]: node 'n1': field 'gres': GPU type 'a100' is not in the "
                 "catalog");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_scontrol), cmocka_unit_test(test_real_sinfo_json),
        cmocka_unit_test(test_multiline),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_errors_more),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
