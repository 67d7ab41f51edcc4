/* SPDX-License-Identifier: MIT */
/* A cluster from Slurm's own description of its nodes: `scontrol show node --oneliner` (or
 * without --oneliner) and the JSON of `sinfo --json` (the nodes list that later Slurm versions'
 * `scontrol --json show nodes` and slurmrestd give too). Each node's GPUs and their type come
 * from its Gres (gpu:a100:4, gpu:4(S:0-1)); nodes of one type and GPU count make one node group;
 * nodes without GPUs are skipped and counted in one warning. docs/formats/cluster.md, "Slurm
 * node lists". */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "sim/sim.h"
#include "sim/slurm_gres.h"
#include "util/csv.h"

/* Longest line of an scontrol listing: a node's line is about 1 KB; a 64 MiB line is not one. */
#define LINE_MAX_BYTES (64u * 1024 * 1024)
/* Most text read: a node list of 100k nodes is about 100 MB. */
#define SLURM_NODES_MAX_BYTES (1ull << 30)

struct nodes {
    const char *path;
    struct eco_gres_map map;
    struct eco_cluster_info *info;
    /* node groups by (type, gpus), in order of first appearance */
    struct {
        int type;
        uint32_t gpus, count;
    } g[ECO_MAX_NODE_GROUPS];
    size_t ng;
    size_t skipped;
    char skipped_names[160];
};

static void add_partitions(struct nodes *N, const char *list)
{
    /* "gpu,all": each name once in info->partitions (cut when full) */
    char *dst = N->info ? N->info->partitions : NULL;
    if (!dst || !list)
        return;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        bool seen = false;
        for (const char *q = dst; *q && !seen;) {
            size_t l = strcspn(q, ",");
            seen = l == len && !strncmp(q, p, len);
            q += l + (q[l] == ',');
        }
        size_t used = strlen(dst);
        if (!seen && len > 0 && used + len + 2 < sizeof N->info->partitions) {
            if (used)
                dst[used++] = ',';
            memcpy(dst + used, p, len);
            dst[used + len] = '\0';
        }
        p += len + (p[len] == ',');
    }
}

/* One node: its name, Gres and partitions; `where` says where it stands for messages. */
static int add_node(struct nodes *N, const char *where, const char *gres_field, const char *name,
                    const char *gres, const char *parts, struct eco_error *err)
{
    struct eco_gres_gpus g;
    if (eco_gres_gres(gres ? gres : "", &g))
        return eco_errorf(err, -EINVAL,
                          "%s: node '%.64s': field '%s': '%.80s' has a malformed entry '%s' "
                          "(expected gpu[:TYPE][:COUNT][(S:...)])",
                          where, name, gres_field, gres, g.bad);
    if (g.count == 0) {
        size_t used = strlen(N->skipped_names);
        if (N->skipped < 4 && used + strlen(name) + 3 < sizeof N->skipped_names)
            snprintf(N->skipped_names + used, sizeof N->skipped_names - used, "%s%s",
                     used ? ", " : "", name);
        N->skipped++;
        return 0;
    }
    if (g.mixed)
        return eco_errorf(err, -EINVAL,
                          "%s: node '%.64s': field '%s': '%.80s' holds GPUs of more than one "
                          "type (an ecosched node holds one)",
                          where, name, gres_field, gres);
    if (g.count > ECO_MAX_GPUS_PER_NODE)
        return eco_errorf(err, -EINVAL,
                          "%s: node '%.64s': field '%s': '%.80s' is more than %d GPUs on one node",
                          where, name, gres_field, gres, ECO_MAX_GPUS_PER_NODE);
    int type = g.type[0] ? eco_gres_type(&N->map, g.type) : eco_catalog_find("V100");
    if (type < 0)
        return eco_errorf(err, -EINVAL,
                          "%s: node '%.64s': field '%s': GPU type '%s' is not in the catalog "
                          "(map it: --gpu-type-map %s=TYPE; see 'ecosched catalog')",
                          where, name, gres_field, g.type, g.type);
    size_t k = 0;
    while (k < N->ng && !(N->g[k].type == type && N->g[k].gpus == g.count))
        k++;
    if (k == N->ng) {
        if (N->ng == ECO_MAX_NODE_GROUPS)
            return eco_errorf(err, -EINVAL, "%s: more than %d kinds of node", where,
                              ECO_MAX_NODE_GROUPS);
        N->g[N->ng].type = type;
        N->g[N->ng].gpus = (uint32_t)g.count;
        N->g[N->ng++].count = 0;
    }
    if (N->g[k].count == ECO_MAX_NODES)
        return eco_errorf(err, -EINVAL, "%s: more than %u nodes", where, ECO_MAX_NODES);
    N->g[k].count++;
    if (N->info)
        N->info->nodes++;
    add_partitions(N, parts);
    return 0;
}

/* ---- scontrol show node ------------------------------------------------------------------ */

/* The value of KEY in a record "NodeName=n1 Arch=x86_64 ... Gres=gpu:a100:2 ...": values may
 * hold spaces (OS=Linux 6.1 #1 SMP), so a value runs to the next " WORD=". Copies it into buf;
 * NULL when the record has no KEY. */
static const char *value_of(const char *rec, const char *key, char *buf, size_t size)
{
    size_t klen = strlen(key);
    for (const char *p = rec; (p = strstr(p, key)); p += klen) {
        if ((p != rec && p[-1] != ' ') || p[klen] != '=')
            continue;
        const char *v = p + klen + 1, *e = v;
        for (;;) {
            const char *sp = strchr(e, ' ');
            if (!sp) {
                e += strlen(e);
                break;
            }
            const char *w = sp;
            while (*w == ' ')
                w++;
            const char *q = w;
            while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
                   (*q >= '0' && *q <= '9') || *q == '_' || *q == ':')
                q++;
            if (*q == '=' && q > w) {
                e = sp;
                break;
            }
            if (!*w) {
                e = sp;
                break;
            }
            e = w;
        }
        size_t n = (size_t)(e - v);
        if (n >= size)
            n = size - 1;
        memcpy(buf, v, n);
        buf[n] = '\0';
        return buf;
    }
    return NULL;
}

static int scontrol_record(struct nodes *N, const char *rec, unsigned long line,
                           struct eco_error *err)
{
    char where[600], name[256], gres[1024], parts[1024];
    snprintf(where, sizeof where, "%s:%lu", N->path, line);
    if (!value_of(rec, "NodeName", name, sizeof name) || !name[0])
        return eco_errorf(err, -EINVAL, "%s: field 'NodeName': missing or empty", where);
    const char *g = value_of(rec, "Gres", gres, sizeof gres);
    const char *p = value_of(rec, "Partitions", parts, sizeof parts);
    return add_node(N, where, "Gres", name, g, p, err);
}

static int load_scontrol(struct nodes *N, struct eco_error *err)
{
    struct eco_csv_file *f;
    int rc = eco_csv_open(N->path, LINE_MAX_BYTES, &f, err);
    if (rc)
        return rc;
    eco_csv_set_max_bytes(f, SLURM_NODES_MAX_BYTES, "a Slurm node list");
    char *line, *rec = NULL;
    size_t len, rlen = 0;
    unsigned long rec_line = 0;
    while ((rc = eco_csv_next(f, &line, &len, err)) == 1) {
        unsigned long ln = eco_csv_lineno(f);
        const char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            continue;
        bool starts = !strncmp(s, "NodeName=", 9);
        if (starts && rec) {
            rc = scontrol_record(N, rec, rec_line, err);
            rlen = 0;
            if (rc)
                break;
        }
        if (!starts && rlen == 0) {
            rc = eco_errorf(err, -EINVAL,
                            "%s:%lu: expected a node, 'NodeName=...' (scontrol show node "
                            "--oneliner): '%.60s'",
                            N->path, ln, s);
            break;
        }
        if (starts)
            rec_line = ln;
        size_t n = strlen(s);
        char *p = realloc(rec, rlen + n + 2);
        if (!p) {
            rc = -ENOMEM;
            break;
        }
        rec = p;
        if (rlen)
            rec[rlen++] = ' ';
        memcpy(rec + rlen, s, n + 1);
        rlen += n;
    }
    if (rc == 0 && rlen)
        rc = scontrol_record(N, rec, rec_line, err);
    free(rec);
    eco_csv_close(f);
    return rc;
}

/* ---- sinfo --json ------------------------------------------------------------------------ */

static int load_slurm_json(struct nodes *N, json_t *nodes, struct eco_error *err)
{
    size_t i;
    json_t *node;
    json_array_foreach(nodes, i, node)
    {
        char where[600];
        snprintf(where, sizeof where, "%s: nodes[%zu]", N->path, i);
        json_t *name = json_object_get(node, "name");
        if (!json_is_object(node) || !json_is_string(name) || !*json_string_value(name))
            return eco_errorf(err, -EINVAL, "%s: field 'name': missing or not a string", where);
        json_t *gres = json_object_get(node, "gres");
        if (gres && !json_is_string(gres) && !json_is_null(gres))
            return eco_errorf(err, -EINVAL, "%s: node '%.64s': field 'gres': not a string", where,
                              json_string_value(name));
        char parts[1024] = "";
        size_t k, used = 0;
        json_t *p;
        json_array_foreach(json_object_get(node, "partitions"), k, p)
        {
            if (json_is_string(p) && used < sizeof parts)
                used += (size_t)snprintf(parts + used, sizeof parts - used, "%s%s", used ? "," : "",
                                         json_string_value(p));
        }
        int rc = add_node(N, where, "gres", json_string_value(name),
                          json_is_string(gres) ? json_string_value(gres) : "", parts, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the cluster -------------------------------------------------------------------------- */

int eco_cluster__slurm_kind(const char *path, json_t *root)
{
    if (root) {
        json_t *nodes = json_object_get(root, "nodes");
        json_t *n0 = json_array_get(nodes, 0);
        return json_is_object(n0) && (json_object_get(n0, "gres") || json_object_get(n0, "name"))
                   ? 2
                   : 0;
    }
    FILE *f = fopen(path, "rb");
    char head[16] = "";
    if (!f)
        return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        ;
    if (c != EOF) {
        head[0] = (char)c;
        if (!fgets(head + 1, sizeof head - 1, f))
            head[1] = '\0';
    }
    fclose(f);
    return !strncmp(head, "NodeName=", 9) ? 1 : 0;
}

int eco_cluster__load_slurm(const char *path, int kind, json_t *root,
                            const struct eco_cluster_opts *o, struct eco_cluster *c,
                            struct eco_error *err)
{
    struct nodes *N = calloc(1, sizeof *N);
    if (!N)
        return -ENOMEM;
    N->path = path;
    N->info = o ? o->info : NULL;
    struct eco_error merr;
    int rc = eco_gres_map_parse(o ? o->gpu_type_map : NULL, &N->map, &merr);
    if (rc) {
        rc = eco_errorf(err, rc, "--gpu-type-map: %s", merr.msg);
        goto out;
    }
    rc =
        kind == 1 ? load_scontrol(N, err) : load_slurm_json(N, json_object_get(root, "nodes"), err);
    if (rc)
        goto out;
    if (N->ng == 0) {
        rc = eco_errorf(err, -EINVAL, "%s: no node with GPUs (%zu without were skipped)", path,
                        N->skipped);
        goto out;
    }
    for (size_t k = 0; k < N->ng && !rc; k++) {
        struct eco_node_group g;
        eco_node_group_defaults(&g, N->g[k].type, N->g[k].gpus);
        g.count = N->g[k].count;
        rc = eco_cluster_add_group(c, &g, err);
    }
    if (!rc && N->skipped && o && o->warn) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s: skipped %zu node%s without GPUs: %s%s", path, N->skipped,
                 N->skipped > 1 ? "s" : "", N->skipped_names, N->skipped > 4 ? ", ..." : "");
        o->warn(o->warn_ctx, msg);
    }
    if (N->info)
        N->info->skipped = N->skipped;
out:
    free(N);
    return rc;
}
