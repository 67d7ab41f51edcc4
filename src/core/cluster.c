/* SPDX-License-Identifier: MIT */
/* Cluster model: nodes of catalog GPU types, and the inline spec COUNTxGPUS[:TYPE],... */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/cluster.h"

/* The type an inline spec part gets when it names none: the most common GPU of the bundled
 * traces' era (ITP and Philly ran on V100/P100-class GPUs). */
#define DEFAULT_TYPE "V100"

struct eco_cluster *eco_cluster_create(void)
{
    return calloc(1, sizeof(struct eco_cluster));
}

void eco_cluster_destroy(struct eco_cluster *c)
{
    if (!c)
        return;
    free(c->nodes);
    free(c);
}

/* Baseboard management controller of a node that is off: assumption (no measurement in the
 * bundled data); BMCs commonly draw 5-20 W. */
#define NODE_OFF_W 15.0

/* Host base power, boot and shutdown times and the cycle cost come from the GPU type's host
 * class in the catalog (catalog.c and docs/models/energy.md give each source). */
void eco_node_group_defaults(struct eco_node_group *g, int type, uint32_t gpus)
{
    const struct eco_gpu_type *t = eco_catalog_get((size_t)type);
    *g = (struct eco_node_group){
        .type = (uint16_t)type,
        .gpus = (uint16_t)gpus,
        .count = 1,
        .base_w = t ? t->host_base_w + t->host_per_gpu_w * gpus : 0,
        .off_w = NODE_OFF_W,
        .boot_s = t ? t->boot_s : 0,
        .shutdown_s = t ? t->shutdown_s : 0,
        .gpu_idle_w = t ? t->idle_w : 0,
        .limit_w = t ? t->default_limit_w : 0,
        .gpu_idle_ctx_w = t ? t->idle_ctx_w : 0,
        .gpu_low_w = t ? t->low_util_w : 0,
        .trans_w = -1,
        .cycle_j = t ? t->cycle_j : 0,
    };
}

double eco_node_group_trans_w(const struct eco_node_group *g)
{
    return g->trans_w >= 0 ? g->trans_w : g->base_w + (double)g->gpus * g->gpu_idle_w;
}

double eco_node_group_gpu_power_w(const struct eco_node_group *g, double busy_w, double u)
{
    double hi = busy_w > g->gpu_low_w ? busy_w : g->gpu_low_w;
    u = u < 0 ? 0 : u > 1 ? 1 : u;
    if (u <= ECO_LOW_UTIL)
        return g->gpu_idle_ctx_w + (g->gpu_low_w - g->gpu_idle_ctx_w) * u / ECO_LOW_UTIL;
    return g->gpu_low_w + (hi - g->gpu_low_w) * (u - ECO_LOW_UTIL) / (1 - ECO_LOW_UTIL);
}

/* Powering down at idle time 0 a node needed again D seconds later costs trans_w over the
 * shutdown and the boot, off_w over the rest of D, and cycle_j; staying on costs the idle
 * node's power over D. Equal at D = (trans (sd + boot) - off sd + cycle) / (idle - off). */
double eco_node_group_breakeven_s(const struct eco_node_group *g)
{
    double idle = g->base_w + (double)g->gpus * g->gpu_idle_w, tr = eco_node_group_trans_w(g);
    if (!(idle > g->off_w))
        return 1e300;
    double d = (tr * (g->shutdown_s + g->boot_s) - g->off_w * g->shutdown_s + g->cycle_j) /
               (idle - g->off_w);
    return d > g->shutdown_s ? d : g->shutdown_s;
}

static const struct {
    const char *key;
    size_t offset;
} fields[] = {
    {"base_w", offsetof(struct eco_node_group, base_w)},
    {"off_w", offsetof(struct eco_node_group, off_w)},
    {"boot_s", offsetof(struct eco_node_group, boot_s)},
    {"shutdown_s", offsetof(struct eco_node_group, shutdown_s)},
    {"gpu_idle_w", offsetof(struct eco_node_group, gpu_idle_w)},
    {"gpu_idle_ctx_w", offsetof(struct eco_node_group, gpu_idle_ctx_w)},
    {"gpu_low_w", offsetof(struct eco_node_group, gpu_low_w)},
    {"trans_w", offsetof(struct eco_node_group, trans_w)},
    {"cycle_j", offsetof(struct eco_node_group, cycle_j)},
    {"power_limit_w", offsetof(struct eco_node_group, limit_w)},
};

double *eco_node_group_field(struct eco_node_group *g, const char *key)
{
    for (size_t i = 0; key && i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(key, fields[i].key))
            return (double *)((char *)g + fields[i].offset);
    return NULL;
}

const char *eco_node_group_field_names(void)
{
    return "base_w, off_w, boot_s, shutdown_s, gpu_idle_w, gpu_idle_ctx_w, gpu_low_w, trans_w, "
           "cycle_j, power_limit_w";
}

/* Applies one KEY=VALUE (s[0..len)) to g; 0 or -EINVAL naming the key. */
static int set_one(struct eco_node_group *g, const char *s, size_t len, struct eco_error *err)
{
    char buf[64];
    if (len >= sizeof buf)
        return eco_errorf(err, -EINVAL, "'%.20s...': too long", s);
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *eq = strchr(buf, '=');
    if (!eq)
        return eco_errorf(err, -EINVAL, "'%s': expected KEY=VALUE (keys: %s)", buf,
                          eco_node_group_field_names());
    *eq = '\0';
    double *dst = eco_node_group_field(g, buf);
    if (!dst)
        return eco_errorf(err, -EINVAL, "%s: unknown key (known: %s)", buf,
                          eco_node_group_field_names());
    char *end;
    double v = strtod(eq + 1, &end);
    if (end == eq + 1 || *end)
        return eco_errorf(err, -EINVAL, "%s: '%s' is not a number", buf, eq + 1);
    *dst = v;
    return 0;
}

int eco_cluster_set_power(struct eco_cluster *c, const char *spec, struct eco_error *err)
{
    struct eco_node_group g;
    if (!spec || !*spec)
        return eco_errorf(err, -EINVAL, "empty: expected KEY=VALUE[,KEY=VALUE...]");
    /* Every group checked with every setting before any is changed. */
    for (int apply = 0; apply < 2; apply++)
        for (uint16_t i = 0; i < c->n_groups; i++) {
            g = c->groups[i];
            for (const char *p = spec;;) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t)(comma - p) : strlen(p);
                int rc = set_one(&g, p, len, err);
                if (rc)
                    return rc;
                if (!comma)
                    break;
                p = comma + 1;
            }
            int rc = eco_node_group_check(&g, err);
            if (rc)
                return rc;
            if (apply)
                c->groups[i] = g;
        }
    return 0;
}

static int finite_nonneg(double v)
{
    return v >= 0 && v < 1e12;
}

int eco_node_group_check(const struct eco_node_group *g, struct eco_error *err)
{
    const struct eco_gpu_type *t = eco_catalog_get(g->type);
    if (!t)
        return eco_errorf(err, -EINVAL, "unknown GPU type index %u", g->type);
    if (g->count == 0)
        return eco_errorf(err, -EINVAL, "count: node count must be at least 1");
    if (g->gpus == 0 || g->gpus > ECO_MAX_GPUS_PER_NODE)
        return eco_errorf(err, -EINVAL, "gpus: GPUs per node must be 1..%d, got %u",
                          ECO_MAX_GPUS_PER_NODE, g->gpus);
    if (!finite_nonneg(g->base_w))
        return eco_errorf(err, -EINVAL, "base_w: node base power must be a number >= 0 W, got %g",
                          g->base_w);
    if (!finite_nonneg(g->off_w))
        return eco_errorf(err, -EINVAL, "off_w: power when off must be a number >= 0 W, got %g",
                          g->off_w);
    if (!finite_nonneg(g->boot_s))
        return eco_errorf(err, -EINVAL, "boot_s: boot time must be a number >= 0 s, got %g",
                          g->boot_s);
    if (!finite_nonneg(g->shutdown_s))
        return eco_errorf(err, -EINVAL, "shutdown_s: shutdown time must be a number >= 0 s, got %g",
                          g->shutdown_s);
    if (!finite_nonneg(g->gpu_idle_w) || g->gpu_idle_w > t->max_limit_w)
        return eco_errorf(err, -EINVAL,
                          "gpu_idle_w: idle GPU power must be 0..%g W (the %s maximum "
                          "power limit), got %g",
                          t->max_limit_w, t->name, g->gpu_idle_w);
    if (!finite_nonneg(g->gpu_idle_ctx_w) || g->gpu_idle_ctx_w > t->max_limit_w)
        return eco_errorf(err, -EINVAL,
                          "gpu_idle_ctx_w: idle GPU power with a context must be 0..%g W (the %s "
                          "maximum power limit), got %g",
                          t->max_limit_w, t->name, g->gpu_idle_ctx_w);
    if (!finite_nonneg(g->gpu_low_w) || g->gpu_low_w > t->max_limit_w)
        return eco_errorf(err, -EINVAL,
                          "gpu_low_w: GPU power at low utilisation must be 0..%g W (the %s "
                          "maximum power limit), got %g",
                          t->max_limit_w, t->name, g->gpu_low_w);
    if (!(g->trans_w < 0 && g->trans_w == -1) && !finite_nonneg(g->trans_w))
        return eco_errorf(err, -EINVAL,
                          "trans_w: power while booting or shutting down must be a number >= 0 "
                          "W, got %g",
                          g->trans_w);
    if (!finite_nonneg(g->cycle_j))
        return eco_errorf(err, -EINVAL,
                          "cycle_j: cost of a power cycle must be a number >= 0 J, got %g",
                          g->cycle_j);
    if (!(g->limit_w >= t->min_limit_w && g->limit_w <= t->max_limit_w))
        return eco_errorf(err, -EINVAL, "power_limit_w: %g W is outside the %s range %g..%g W",
                          g->limit_w, t->name, t->min_limit_w, t->max_limit_w);
    return 0;
}

int eco_cluster_add_group(struct eco_cluster *c, const struct eco_node_group *g,
                          struct eco_error *err)
{
    int rc = eco_node_group_check(g, err);
    if (rc)
        return rc;
    if (c->n_groups == ECO_MAX_NODE_GROUPS)
        return eco_errorf(err, -EINVAL, "count: too many node groups (at most %d)",
                          ECO_MAX_NODE_GROUPS);
    if ((uint64_t)c->n_nodes + g->count > ECO_MAX_NODES)
        return eco_errorf(err, -EINVAL, "count: too many nodes in the cluster (at most %u)",
                          ECO_MAX_NODES);
    if (c->n_nodes + g->count > c->cap_nodes) {
        uint32_t cap = c->cap_nodes ? c->cap_nodes : 16;
        while (cap < c->n_nodes + g->count)
            cap *= 2;
        struct eco_node *n = realloc(c->nodes, (size_t)cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        c->nodes = n;
        c->cap_nodes = cap;
    }
    uint16_t gi = c->n_groups++;
    c->groups[gi] = *g;
    for (uint32_t i = 0; i < g->count; i++)
        c->nodes[c->n_nodes++] = (struct eco_node){.type = g->type, .gpus = g->gpus, .group = gi};
    c->total_gpus += (uint64_t)g->count * g->gpus;
    if (g->gpus > c->max_gpus_per_node)
        c->max_gpus_per_node = g->gpus;
    return 0;
}

int eco_cluster_add_nodes(struct eco_cluster *c, uint32_t count, uint32_t gpus, int type,
                          struct eco_error *err)
{
    if (count == 0)
        return eco_errorf(err, -EINVAL, "node count must be at least 1");
    if (gpus == 0 || gpus > ECO_MAX_GPUS_PER_NODE)
        return eco_errorf(err, -EINVAL, "GPUs per node must be 1..%d, got %u",
                          ECO_MAX_GPUS_PER_NODE, gpus);
    if (type < 0 || (size_t)type >= eco_catalog_count())
        return eco_errorf(err, -EINVAL, "unknown GPU type index %d", type);
    struct eco_node_group g;
    eco_node_group_defaults(&g, type, gpus);
    g.count = count;
    return eco_cluster_add_group(c, &g, err);
}

uint64_t eco_cluster_gpus_of_type(const struct eco_cluster *c, int type)
{
    if (type < 0)
        return c->total_gpus;
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].type == type)
            n += c->nodes[i].gpus;
    return n;
}

/* Parses a whole decimal number in [1, max] from s[0..len). */
static int parse_count(const char *s, size_t len, unsigned long max, unsigned long *out)
{
    if (len == 0 || len > 9)
        return -1;
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_part(struct eco_cluster *c, const char *part, size_t len, struct eco_error *err)
{
    char buf[128];
    if (len >= sizeof buf)
        return eco_errorf(err, -EINVAL, "cluster spec part '%.*s...' is too long", 40, part);
    memcpy(buf, part, len);
    buf[len] = '\0';
    char *x = strchr(buf, 'x');
    if (!x)
        return eco_errorf(err, -EINVAL,
                          "cluster spec part '%s': expected COUNTxGPUS[:TYPE], e.g. 4x8:A100-SXM",
                          buf);
    char *colon = strchr(x, ':');
    size_t gpus_len = colon ? (size_t)(colon - x - 1) : strlen(x + 1);
    unsigned long count, gpus;
    if (parse_count(buf, (size_t)(x - buf), ECO_MAX_NODES, &count))
        return eco_errorf(err, -EINVAL,
                          "cluster spec part '%s': node count '%.*s' is not a number in 1..%u", buf,
                          (int)(x - buf), buf, ECO_MAX_NODES);
    if (parse_count(x + 1, gpus_len, ECO_MAX_GPUS_PER_NODE, &gpus))
        return eco_errorf(err, -EINVAL,
                          "cluster spec part '%s': GPUs per node '%.*s' is not a number in 1..%d",
                          buf, (int)gpus_len, x + 1, ECO_MAX_GPUS_PER_NODE);
    const char *tname = colon ? colon + 1 : DEFAULT_TYPE;
    int type = eco_catalog_find(tname);
    if (type < 0) {
        char known[256] = "";
        for (size_t i = 0; i < eco_catalog_count(); i++) {
            strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, eco_catalog_get(i)->name, sizeof known - strlen(known) - 1);
        }
        return eco_errorf(err, -EINVAL, "cluster spec part '%s': unknown GPU type '%s' (known: %s)",
                          buf, tname, known);
    }
    return eco_cluster_add_nodes(c, (uint32_t)count, (uint32_t)gpus, type, err);
}

int eco_cluster_parse_spec(const char *spec, struct eco_cluster **out, struct eco_error *err)
{
    int rc = 0;
    struct eco_cluster *c = NULL;
    *out = NULL;
    if (!spec || !*spec) {
        rc = eco_errorf(err, -EINVAL, "empty cluster spec: expected COUNTxGPUS[:TYPE][,...]");
        goto done;
    }
    c = eco_cluster_create();
    if (!c) {
        rc = -ENOMEM;
        goto done;
    }
    for (const char *p = spec;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) {
            rc = eco_errorf(err, -EINVAL, "cluster spec '%s': empty part", spec);
            goto done;
        }
        rc = parse_part(c, p, len, err);
        if (rc)
            goto done;
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = c;
    c = NULL;
done:
    eco_cluster_destroy(c);
    return rc;
}
