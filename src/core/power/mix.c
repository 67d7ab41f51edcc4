/* SPDX-License-Identifier: MIT */
/* Workload mixes: parse "default" or "NAME:WEIGHT[,NAME:WEIGHT...]" into cumulative weights and
 * map a uniform draw to a workload (docs/models/energy.md, "Workload mix"). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/power.h"

#define OPT "--workload-mix"
#define WEIGHT_MAX_CHARS 63 /* longer weight strings are rejected rather than copied */

/* Case-insensitive: does the n-byte string s equal the NUL-terminated name? */
static int same_n(const char *s, size_t n, const char *name)
{
    size_t i = 0;
    for (; i < n && name[i]; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)name[i]))
            return 0;
    return i == n && name[i] == '\0';
}

static int find_n(const char *s, size_t n)
{
    for (size_t w = 0; w < eco_workload_count(); w++)
        if (same_n(s, n, eco_workload_name(w)))
            return (int)w;
    return -1;
}

/* "shufflenet, resnet50, ..." into buf (truncated to size). */
static void known_list(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t w = 1; w < eco_workload_count() && used + 1 < size; w++) {
        const char *sep = w > 1 ? ", " : "";
        size_t need = strlen(sep) + strlen(eco_workload_name(w));
        if (used + need >= size)
            break;
        strcat(buf, sep);
        strcat(buf, eco_workload_name(w));
        used += need;
    }
}

/* A positive finite decimal number filling all of s[0..n): digits, '.', exponent, sign. */
static int parse_weight(const char *s, size_t n, double *out)
{
    char buf[WEIGHT_MAX_CHARS + 1];
    char *end = NULL;
    if (n == 0 || n > WEIGHT_MAX_CHARS || strspn(s, "0123456789.eE+-") < n)
        return -EINVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v) || !(v > 0))
        return -EINVAL;
    *out = v;
    return 0;
}

/* One NAME:WEIGHT entry, s[0..n), into weights[]. */
static int parse_entry(const char *spec, const char *s, size_t n, double *weights,
                       struct eco_error *err)
{
    const char *colon = memchr(s, ':', n);
    if (n == 0)
        return eco_errorf(err, -EINVAL, OPT ": empty entry in '%s' (stray comma?)", spec);
    if (!colon)
        return eco_errorf(err, -EINVAL, OPT ": entry '%.*s' is not NAME:WEIGHT", (int)n, s);
    size_t name_len = (size_t)(colon - s);
    int w = find_n(s, name_len);
    if (w < 0) {
        char known[256];
        known_list(known, sizeof known);
        return eco_errorf(err, -EINVAL, OPT ": unknown workload '%.*s' (known: %s)", (int)name_len,
                          s, known);
    }
    if (w == ECO_WORKLOAD_GENERIC)
        return eco_errorf(err, -EINVAL,
                          OPT ": 'generic' is not allowed in a mix (it is the workload of "
                              "jobs that get no draw from a mix)");
    if (weights[w] > 0)
        return eco_errorf(err, -EINVAL, OPT ": workload '%s' is given twice", eco_workload_name(w));
    size_t wlen = n - name_len - 1;
    if (parse_weight(colon + 1, wlen, &weights[w]) < 0)
        return eco_errorf(err, -EINVAL,
                          OPT ": weight of '%s' must be a positive number, got '%.*s'",
                          eco_workload_name(w), (int)wlen, colon + 1);
    return 0;
}

int eco_workload_mix_parse(const char *spec, struct eco_workload_mix *mix, struct eco_error *err)
{
    double weights[sizeof mix->cum / sizeof mix->cum[0]] = {0};
    size_t n = eco_workload_count();
    if (!mix)
        return eco_errorf(err, -EINVAL, OPT ": no mix to fill");
    if (!spec || !*spec)
        return eco_errorf(err, -EINVAL,
                          OPT ": empty spec (give 'default' or NAME:WEIGHT[,NAME:WEIGHT...])");
    if (same_n(spec, strlen(spec), "default")) {
        /* Equal weights over the measured workloads. */
        for (size_t w = 1; w < n; w++)
            weights[w] = 1;
    } else {
        for (const char *p = spec;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            int rc = parse_entry(spec, p, len, weights, err);
            if (rc < 0)
                return rc;
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    double total = 0;
    for (size_t w = 1; w < n; w++)
        total += weights[w];
    if (!isfinite(total))
        return eco_errorf(err, -EINVAL, OPT ": weights in '%s' are too large (their sum overflows)",
                          spec);
    /* cum[w] = share of workloads 1..w; cum[0] stays 0 (the generic workload is never drawn). */
    double run = 0;
    mix->cum[0] = 0;
    for (size_t w = 1; w < n; w++) {
        run += weights[w];
        mix->cum[w] = run / total;
    }
    mix->cum[n - 1] = 1.0;
    mix->n = n;
    return 0;
}

size_t eco_workload_mix_pick(const struct eco_workload_mix *mix, double u)
{
    size_t last = ECO_WORKLOAD_GENERIC;
    if (!mix)
        return last;
    /* First workload with positive weight whose cumulative share exceeds u; a draw outside
     * [0, 1) lands on the first or last such workload. */
    for (size_t w = 1; w < mix->n; w++) {
        if (!(mix->cum[w] > mix->cum[w - 1]))
            continue;
        if (u < mix->cum[w])
            return w;
        last = w;
    }
    return last;
}
