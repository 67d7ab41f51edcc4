/* SPDX-License-Identifier: MIT */
/* Cluster description files (JSON, docs/formats/cluster.md) and the --cluster argument. */
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include "ecosched/catalog.h"
#include "sim/sim.h"
#include "cluster_internal.h"

static int is_file_arg(const char *arg)
{
    struct stat st;
    size_t n = strlen(arg);
    if (n > 5 && !strcmp(arg + n - 5, ".json"))
        return 1;
    return stat(arg, &st) == 0 && S_ISREG(st.st_mode);
}

/* count, gpus and gpu_type, or a power figure of the node group (eco_node_group_field). */
static int is_known_field(const char *key)
{
    struct eco_node_group g;
    return !strcmp(key, "count") || !strcmp(key, "gpus") || !strcmp(key, "gpu_type") ||
           eco_node_group_field(&g, key);
}

static int get_uint(const char *path, size_t i, json_t *node, const char *key, long long max,
                    long long *out, struct eco_error *err)
{
    json_t *v = json_object_get(node, key);
    if (!v)
        return eco_errorf(err, -EINVAL, "%s: nodes[%zu]: missing field '%s'", path, i, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
        return eco_errorf(err, -EINVAL, "%s: nodes[%zu].%s: expected a whole number in 1..%lld",
                          path, i, key, max);
    *out = json_integer_value(v);
    return 0;
}

static int load_json(const char *path, struct eco_cluster *c, struct eco_error *err)
{
    json_error_t jerr;
    int rc = 0;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        if (jerr.line < 0)
            rc = eco_errorf(err, -EINVAL, "%s: cannot read: %s", path, jerr.text);
        else
            rc = eco_errorf(err, -EINVAL, "%s:%d:%d: invalid JSON: %s", path, jerr.line,
                            jerr.column, jerr.text);
        goto done;
    }
    json_t *nodes = json_object_get(root, "nodes");
    if (!json_is_object(root) || !json_is_array(nodes) || json_array_size(nodes) == 0) {
        rc =
            eco_errorf(err, -EINVAL, "%s: expected an object with a non-empty array 'nodes'", path);
        goto done;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (strcmp(key, "nodes") && strcmp(key, "name")) {
            rc = eco_errorf(err, -EINVAL, "%s: unknown field '%s' (known: name, nodes)", path, key);
            goto done;
        }
        if (!strcmp(key, "name") && !json_is_string(val)) {
            rc = eco_errorf(err, -EINVAL, "%s: name: expected a string", path);
            goto done;
        }
    }
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node)
    {
        long long count = 0, gpus = 0;
        if (!json_is_object(node)) {
            rc = eco_errorf(err, -EINVAL, "%s: nodes[%zu]: expected an object", path, i);
            goto done;
        }
        json_object_foreach(node, key, val)
        {
            if (!is_known_field(key)) {
                rc = eco_errorf(err, -EINVAL,
                                "%s: nodes[%zu]: unknown field '%s' (known: count, gpus, "
                                "gpu_type, %s)",
                                path, i, key, eco_node_group_field_names());
                goto done;
            }
        }
        if ((rc = get_uint(path, i, node, "count", ECO_MAX_NODES, &count, err)) ||
            (rc = get_uint(path, i, node, "gpus", ECO_MAX_GPUS_PER_NODE, &gpus, err)))
            goto done;
        json_t *t = json_object_get(node, "gpu_type");
        const char *tname = "V100";
        if (t && !json_is_string(t)) {
            rc = eco_errorf(err, -EINVAL, "%s: nodes[%zu].gpu_type: expected a string", path, i);
            goto done;
        }
        if (t)
            tname = json_string_value(t);
        int type = eco_catalog_find(tname);
        if (type < 0) {
            rc = eco_errorf(err, -EINVAL,
                            "%s: nodes[%zu].gpu_type: unknown GPU type '%s' (see "
                            "'ecosched catalog')",
                            path, i, tname);
            goto done;
        }
        struct eco_node_group g;
        eco_node_group_defaults(&g, type, (uint32_t)gpus);
        g.count = (uint32_t)count;
        json_object_foreach(node, key, val)
        {
            double *dst = eco_node_group_field(&g, key);
            if (!dst)
                continue; /* count, gpus, gpu_type */
            if (!json_is_number(val)) {
                rc = eco_errorf(err, -EINVAL, "%s: nodes[%zu].%s: expected a number", path, i, key);
                goto done;
            }
            *dst = json_number_value(val);
        }
        struct eco_error e2;
        if ((rc = eco_cluster_add_group(c, &g, &e2))) {
            if (rc == -EINVAL)
                rc = eco_errorf(err, -EINVAL, "%s: nodes[%zu].%s", path, i, e2.msg);
            goto done;
        }
    }
done:
    json_decref(root);
    return rc;
}

int eco_cluster_load(const char *arg, struct eco_cluster **out, struct eco_error *err)
{
    return eco_cluster_load_with(arg, NULL, out, err);
}

int eco_cluster_load_with(const char *arg, const struct eco_cluster_opts *o,
                          struct eco_cluster **out, struct eco_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
        return eco_errorf(err, -EINVAL,
                          "%s: is a directory; expected COUNTxGPUS[:TYPE][,...] or a cluster "
                          "JSON file (docs/formats/cluster.md)",
                          arg);
    if (!is_file_arg(arg))
        return eco_cluster_parse_spec(arg, out, err);
    struct eco_cluster *c = eco_cluster_create();
    if (!c)
        return -ENOMEM;
    /* a Slurm node list, or the cluster file of docs/formats/cluster.md */
    json_t *root = json_load_file(arg, 0, NULL);
    int kind = eco_cluster__slurm_kind(arg, root);
    int rc = kind ? eco_cluster__load_slurm(arg, kind, root, o, c, err) : load_json(arg, c, err);
    json_decref(root);
    if (rc) {
        eco_cluster_destroy(c);
        return rc;
    }
    *out = c;
    return 0;
}
