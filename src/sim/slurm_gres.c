/* SPDX-License-Identifier: MIT */
/* Slurm's TRES, GRES and time strings, and the site GPU type map (slurm_gres.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "ecosched/catalog.h"
#include "sim/slurm_gres.h"

int eco_gres_map_parse(const char *spec, struct eco_gres_map *m, struct eco_error *err)
{
    m->n = 0;
    if (!spec || !*spec)
        return 0;
    const char *p = spec;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        char type[ECO_GRES_NAME_MAX];
        if (!eq || eq == p || (size_t)(eq - p) >= ECO_GRES_NAME_MAX ||
            len - (size_t)(eq - p) - 1 >= sizeof type || eq + 1 == p + len)
            return eco_errorf(err, -EINVAL,
                              "part '%.*s': expected SITE=TYPE (a gres type and a catalog type, "
                              "e.g. a100_80g=A100-SXM)",
                              (int)(len > 64 ? 64 : len), p);
        if (m->n == ECO_GRES_MAP_MAX)
            return eco_errorf(err, -EINVAL, "more than %d entries", ECO_GRES_MAP_MAX);
        memcpy(type, eq + 1, len - (size_t)(eq - p) - 1);
        type[len - (size_t)(eq - p) - 1] = '\0';
        int t = eco_catalog_find(type);
        if (t < 0)
            return eco_errorf(err, -EINVAL,
                              "part '%.*s': '%s' is not a GPU type of the catalog (see "
                              "'ecosched catalog')",
                              (int)len, p, type);
        memcpy(m->e[m->n].site, p, (size_t)(eq - p));
        m->e[m->n].site[eq - p] = '\0';
        m->e[m->n].type = t;
        m->n++;
        if (!end)
            return 0;
        p = end + 1;
    }
}

int eco_gres_type(const struct eco_gres_map *m, const char *name)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (strcasecmp(m->e[i].site, name) == 0)
            return m->e[i].type;
    return eco_catalog_find(name);
}

static int bad_entry(const char *p, size_t len, struct eco_gres_gpus *g)
{
    snprintf(g->bad, sizeof g->bad, "%.*s", (int)(len > 80 ? 80 : len), p);
    return -EINVAL;
}

/* A whole number of at most 2^20 (ECO_TRACE_MAX_GPUS) written in p[0..len). */
static int parse_count(const char *p, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 7)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)p[i]))
            return -EINVAL;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    if (v > 1048576)
        return -EINVAL;
    *out = v;
    return 0;
}

static void add_type(struct eco_gres_gpus *g, const char *t, size_t len)
{
    if (len >= sizeof g->type)
        len = sizeof g->type - 1;
    if (!g->type[0]) {
        memcpy(g->type, t, len);
        g->type[len] = '\0';
    } else if (strlen(g->type) != len || strncasecmp(g->type, t, len) != 0) {
        g->mixed = true;
    }
}

int eco_gres_tres(const char *s, struct eco_gres_gpus *out)
{
    uint64_t total = 0, typed = 0;
    bool have_total = false;
    memset(out, 0, sizeof *out);
    for (const char *p = s; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || eq == p)
            return bad_entry(p, len, out);
        size_t klen = (size_t)(eq - p);
        const char *v = eq + 1;
        size_t vlen = len - klen - 1;
        uint64_t n;
        if (klen == 8 && !memcmp(p, "gres/gpu", 8)) {
            if (parse_count(v, vlen, &n))
                return bad_entry(p, len, out);
            total = n;
            have_total = true;
        } else if (klen > 9 && !memcmp(p, "gres/gpu:", 9)) {
            if (parse_count(v, vlen, &n))
                return bad_entry(p, len, out);
            typed += n;
            if (n > 0)
                add_type(out, p + 9, klen - 9);
        }
        p = end ? end + 1 : NULL;
    }
    out->count = have_total ? total : typed;
    if (out->count == 0)
        out->type[0] = '\0';
    return 0;
}

int eco_gres_gres(const char *s, struct eco_gres_gpus *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !strcmp(s, "(null)"))
        return 0;
    const char *p = s;
    while (*p) {
        /* an entry ends at a comma outside parentheses: gpu:2(S:0,1) */
        const char *e = p;
        int depth = 0;
        while (*e && (*e != ',' || depth > 0)) {
            depth += (*e == '(') - (*e == ')');
            e++;
        }
        size_t len = (size_t)(e - p);
        const char *paren = memchr(p, '(', len);
        size_t body = paren ? (size_t)(paren - p) : len;
        if (paren && p[len - 1] != ')')
            return bad_entry(p, len, out);
        const char *c1 = memchr(p, ':', body);
        size_t nlen = c1 ? (size_t)(c1 - p) : body;
        if (nlen == 0)
            return bad_entry(p, len, out);
        if (nlen == 3 && !memcmp(p, "gpu", 3)) {
            uint64_t n = 1;
            if (c1) {
                const char *rest = c1 + 1;
                size_t rlen = body - nlen - 1;
                const char *c2 = memchr(rest, ':', rlen);
                if (c2) { /* gpu:TYPE:COUNT */
                    if (c2 == rest || parse_count(c2 + 1, rlen - (size_t)(c2 - rest) - 1, &n))
                        return bad_entry(p, len, out);
                    if (n > 0)
                        add_type(out, rest, (size_t)(c2 - rest));
                } else if (rlen > 0 && isdigit((unsigned char)rest[0])) { /* gpu:COUNT */
                    if (parse_count(rest, rlen, &n))
                        return bad_entry(p, len, out);
                } else if (rlen > 0) { /* gpu:TYPE */
                    add_type(out, rest, rlen);
                } else {
                    return bad_entry(p, len, out);
                }
            }
            out->count += n;
            if (out->count > 1048576)
                return bad_entry(p, len, out);
        }
        p = *e ? e + 1 : e;
    }
    if (out->count == 0)
        out->type[0] = '\0';
    return 0;
}

/* Up to `max` numbers separated by ':' in s[0..len); the count found, or -1. */
static int colon_parts(const char *s, size_t len, long long *v, int max)
{
    int n = 0;
    size_t i = 0;
    for (;;) {
        size_t start = i;
        long long x = 0;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (i - start >= 10)
                return -1;
            x = x * 10 + (s[i] - '0');
            i++;
        }
        if (i == start || n == max)
            return -1;
        v[n++] = x;
        if (i == len)
            return n;
        if (s[i] != ':')
            return -1;
        i++;
    }
}

int eco_slurm_duration(const char *s, double *out)
{
    long long v[3];
    long long days = 0;
    const char *dash = strchr(s, '-');
    const char *rest = s;
    if (dash) {
        long long d[1];
        if (colon_parts(s, (size_t)(dash - s), d, 1) != 1)
            return -EINVAL;
        days = d[0];
        rest = dash + 1;
    }
    int n = colon_parts(rest, strlen(rest), v, 3);
    double sec;
    if (n < 1)
        return -EINVAL;
    if (dash) { /* DD-HH, DD-HH:MM, DD-HH:MM:SS */
        sec = (double)v[0] * 3600 + (n > 1 ? (double)v[1] * 60 : 0) + (n > 2 ? (double)v[2] : 0);
        sec += (double)days * 86400;
    } else if (n == 1) { /* minutes */
        sec = (double)v[0] * 60;
    } else if (n == 2) { /* MM:SS */
        sec = (double)v[0] * 60 + (double)v[1];
    } else { /* HH:MM:SS */
        sec = (double)v[0] * 3600 + (double)v[1] * 60 + (double)v[2];
    }
    *out = sec;
    return 0;
}
