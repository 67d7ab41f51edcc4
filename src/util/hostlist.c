/* SPDX-License-Identifier: MIT */
/* Slurm hostlist expansion ("n[1-3,7],gpu01"), for powerd's --nodes and `ecosched power`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/hostlist.h"

#define HOSTLIST_MAX 100000

static int push(char ***v, size_t *n, size_t *capv, const char *s, size_t len)
{
    if (*n >= HOSTLIST_MAX)
        return -EINVAL;
    if (*n == *capv) {
        size_t c = *capv ? 2 * *capv : 16;
        char **nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        *v = nv;
        *capv = c;
    }
    if (!((*v)[*n] = strndup(s, len)))
        return -ENOMEM;
    (*n)++;
    return 0;
}

/* One item: PREFIX or PREFIX[RANGES]SUFFIX (one bracket group). */
static int expand_item(const char *s, size_t len, char ***v, size_t *n, size_t *capv)
{
    const char *lb = memchr(s, '[', len);
    if (!lb)
        return len ? push(v, n, capv, s, len) : -EINVAL;
    const char *rb = memchr(lb, ']', len - (size_t)(lb - s));
    if (!rb || rb == lb + 1)
        return -EINVAL;
    char prefix[256], suffix[256], out[600];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(lb - s), s);
    snprintf(suffix, sizeof suffix, "%.*s", (int)(len - (size_t)(rb + 1 - s)), rb + 1);
    if (memchr(suffix, '[', strlen(suffix)))
        return -EINVAL;
    const char *p = lb + 1;
    while (p < rb) {
        const char *q = p;
        while (q < rb && *q >= '0' && *q <= '9')
            q++;
        if (q == p)
            return -EINVAL;
        int width = (int)(q - p);
        long a = strtol(p, NULL, 10), b = a;
        if (*q == '-') {
            const char *r = ++q;
            while (q < rb && *q >= '0' && *q <= '9')
                q++;
            if (q == r)
                return -EINVAL;
            b = strtol(r, NULL, 10);
        }
        if (b < a || b - a >= HOSTLIST_MAX || (q < rb && *q != ','))
            return -EINVAL;
        for (long k = a; k <= b; k++) {
            int rc, m = snprintf(out, sizeof out, "%s%0*ld%s", prefix, width, k, suffix);
            if ((rc = push(v, n, capv, out, (size_t)m)) < 0)
                return rc;
        }
        p = q < rb ? q + 1 : q;
    }
    return 0;
}

int eco_hostlist_expand(const char *list, char ***names, size_t *n)
{
    size_t capv = 0;
    int rc = 0;
    *names = NULL;
    *n = 0;
    const char *s = list;
    while (s && *s) {
        /* an item ends at a comma outside brackets */
        const char *e = s;
        int depth = 0;
        while (*e && (depth || *e != ',')) {
            depth += *e == '[' ? 1 : *e == ']' ? -1 : 0;
            e++;
        }
        if ((rc = expand_item(s, (size_t)(e - s), names, n, &capv)) < 0)
            break;
        s = *e ? e + 1 : e;
    }
    if (rc == 0 && *n == 0)
        rc = -EINVAL;
    if (rc < 0) {
        eco_hostlist_free(*names, *n);
        *names = NULL;
        *n = 0;
    }
    return rc;
}

void eco_hostlist_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}
