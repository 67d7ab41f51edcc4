/* SPDX-License-Identifier: MIT */
/* A job's AdminComment as ecosched writes it: one GPU-energy part per node and their sum
 * (docs/slurm/accounting.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "acct_comment_internal.h"

/* A node name in a part: Slurm node names never hold a blank or '=' (slurm.conf NodeName). */
#define NAME_MAX_LEN 128
/* Largest part accepted, in joules and grams: a petajoule is 30 MW for a year, beyond any job;
 * a larger figure is a broken counter (and keeps each printed part within its room below). */
#define PART_MAX 1e15

struct part {
    char node[NAME_MAX_LEN];
    double energy_j, carbon_g; /* carbon_g < 0: unknown */
};

struct parts {
    struct part *v;
    size_t n, cap;
};

static int add(struct parts *p, const char *node, size_t len, double e, double c)
{
    for (size_t i = 0; i < p->n; i++)
        if (strlen(p->v[i].node) == len && !strncasecmp(p->v[i].node, node, len)) {
            p->v[i].energy_j = e, p->v[i].carbon_g = c;
            return 0;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        struct part *v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        p->v = v, p->cap = cap;
    }
    snprintf(p->v[p->n].node, sizeof p->v[p->n].node, "%.*s", (int)len, node);
    p->v[p->n].energy_j = e, p->v[p->n].carbon_g = c;
    p->n++;
    return 0;
}

/* The parts of ecosched's text `s` (from ECO_ACCT_TAG on): totals are skipped, every other
 * "NAME=EJ[,Cg]" token is a part. Read without regard to case: sacctmgr stores the comment
 * in lower case (seen with Debian's 22.05, quoted or not). */
static int parse(const char *s, struct parts *p, struct eco_error *err)
{
    while (*s) {
        s += strspn(s, " ");
        size_t len = strcspn(s, " ");
        const char *eq = memchr(s, '=', len);
        if (!len)
            break;
        if (!eq)
            return eco_errorf(err, -EINVAL, "AdminComment: token '%.*s' is not NAME=VALUE",
                              (int)len, s);
        size_t klen = (size_t)(eq - s);
        bool total = (klen == 12 && !strncmp(s, "gpu_energy_j", 12)) ||
                     (klen == 8 && !strncmp(s, "carbon_g", 8)) ||
                     (klen == 5 && !strncmp(s, "nodes", 5));
        if (!total) {
            char *end;
            double e = strtod(eq + 1, &end), c = -1;
            if (end == eq + 1 || (*end != 'J' && *end != 'j') || !(e >= 0 && e < PART_MAX) ||
                klen >= NAME_MAX_LEN)
                return eco_errorf(err, -EINVAL, "AdminComment: part '%.*s' is not NODE=JOULESJ",
                                  (int)len, s);
            if (end[1] == ',') {
                const char *cs = end + 2;
                c = strtod(cs, &end);
                if (end == cs || (*end != 'g' && *end != 'G') || !(c >= 0 && c < PART_MAX))
                    return eco_errorf(err, -EINVAL,
                                      "AdminComment: part '%.*s': carbon is not GRAMSg", (int)len,
                                      s);
            }
            if (add(p, s, klen, e, c) < 0)
                return -ENOMEM;
        }
        s += len;
    }
    return 0;
}

static bool good_name(const char *node)
{
    size_t n = strlen(node);
    return n > 0 && n < NAME_MAX_LEN && !strpbrk(node, " =\t\n");
}

int eco_slurm__comment_merge(const char *old, const char *node, double energy_j, double carbon_g,
                             char **out, struct eco_error *err)
{
    struct parts p = {0};
    char *buf = NULL;
    const char *ours = old ? strstr(old, ECO_ACCT_TAG) : NULL;
    size_t pre = ours ? (size_t)(ours - old) : old ? strlen(old) : 0;
    int rc = 0;
    *out = NULL;
    if (!good_name(node) || !(energy_j >= 0 && energy_j < PART_MAX)) {
        rc = eco_errorf(err, -EINVAL, "node '%s', energy %g J: not a node name and energy", node,
                        energy_j);
        goto done;
    }
    if ((ours && (rc = parse(ours + strlen("ecosched "), &p, err)) < 0) ||
        (rc = add(&p, node, strlen(node), energy_j,
                  carbon_g >= 0 && carbon_g < PART_MAX ? carbon_g : -1)) < 0)
        goto done;
    while (pre && (old[pre - 1] == ' ' || old[pre - 1] == ';'))
        pre--; /* the separator written below */
    double sum_e = 0, sum_c = 0;
    bool all_c = true;
    for (size_t i = 0; i < p.n; i++) {
        sum_e += p.v[i].energy_j;
        sum_c += p.v[i].carbon_g;
        all_c = all_c && p.v[i].carbon_g >= 0;
    }
    size_t cap = pre + 128 + p.n * (NAME_MAX_LEN + 64);
    if (!(buf = malloc(cap))) {
        rc = -ENOMEM;
        goto done;
    }
    size_t n = (size_t)snprintf(buf, cap, "%.*s%sgpu_energy_j=%.1f", (int)pre, old ? old : "",
                                pre ? "; ecosched " : "ecosched ", sum_e);
    if (all_c)
        n += (size_t)snprintf(buf + n, cap - n, " carbon_g=%.2f", sum_c);
    n += (size_t)snprintf(buf + n, cap - n, " nodes=%zu", p.n);
    for (size_t i = 0; i < p.n; i++) {
        n += (size_t)snprintf(buf + n, cap - n, " %s=%.1fJ", p.v[i].node, p.v[i].energy_j);
        if (p.v[i].carbon_g >= 0)
            n += (size_t)snprintf(buf + n, cap - n, ",%.2fg", p.v[i].carbon_g);
    }
    *out = buf;
    buf = NULL;
done:
    free(buf);
    free(p.v);
    return rc;
}

bool eco_slurm__comment_has(const char *comment, const char *node)
{
    struct parts p = {0};
    const char *ours = comment ? strstr(comment, ECO_ACCT_TAG) : NULL;
    bool found = false;
    if (ours && parse(ours + strlen("ecosched "), &p, NULL) == 0)
        for (size_t i = 0; i < p.n && !found; i++)
            found = !strcasecmp(p.v[i].node, node);
    free(p.v);
    return found;
}
