/* SPDX-License-Identifier: MIT */
/* CSV helpers: an in-place record splitter and strict decimal number parsers, used by the
 * trace readers and anything else that reads CSV at the edges. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/csv.h"

/* Unquotes the quoted field at `p` (which points at its opening '"') in place. On success
 * returns a pointer to the separator after the closing quote (',' or '\0'); NULL when the
 * field is malformed. */
static char *unquote(char *p)
{
    char *w = p;
    p++;
    for (;;) {
        if (*p == '\0')
            return NULL; /* unterminated */
        if (*p == '"') {
            if (p[1] != '"') {
                p++;
                break;
            }
            p++; /* "" stands for one quote */
        }
        *w++ = *p++;
    }
    if (*p != ',' && *p != '\0')
        return NULL;
    /* w < p here: writing the terminator cannot clobber the separator. */
    *w = '\0';
    return p;
}

int eco_csv_split(char *line, char **fields, int max)
{
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';

    char *p = line;
    int n = 0;
    for (;;) {
        char *start = p;
        char *sep;
        if (*p == '"') {
            sep = unquote(p);
            if (!sep)
                return -EINVAL;
        } else {
            sep = strchr(p, ',');
        }
        if (n < max)
            fields[n] = start;
        n++;
        if (!sep || *sep == '\0')
            return n;
        *sep = '\0';
        p = sep + 1;
    }
}

/* Characters a decimal number may contain; checked before strtod so that "nan", "inf",
 * hexadecimal ("0x1p3") and leading spaces, all of which strtod accepts, are refused. */
static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' || c == 'e' || c == 'E';
}

int eco_parse_double(const char *s, double *out)
{
    if (!s || *s == '\0')
        return -EINVAL;

    /* Fast path for plain decimals ("-12", "3.25") with at most 15 significant digits, which
     * is what trace columns hold: the digits form an integer below 2^53 and 10^k is exact, so
     * one IEEE division gives the correctly rounded result, the same double strtod would
     * (Clinger's fast path). Anything else goes through strtod. */
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    const char *c = s;
    bool neg = (*c == '-');
    if (*c == '-' || *c == '+')
        c++;
    int digits = 0, frac = -1;
    int64_t m = 0;
    for (; digits <= 15; c++) {
        if (*c >= '0' && *c <= '9') {
            m = m * 10 + (*c - '0');
            digits++;
            frac += (frac >= 0);
        } else if (*c == '.' && frac < 0) {
            frac = 0;
        } else {
            break;
        }
    }
    if (*c == '\0' && digits > 0 && digits <= 15) {
        double v = frac > 0 ? (double)m / pow10[frac] : (double)m;
        *out = neg ? -v : v;
        return 0;
    }

    for (c = s; *c; c++)
        if (!is_number_char(*c))
            return -EINVAL;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return -EINVAL;
    /* ERANGE with a finite result is underflow towards 0: the value is still the nearest
     * double, so it is accepted. */
    *out = v;
    return 0;
}

int eco_parse_int64(const char *s, int64_t *out)
{
    if (!s || *s == '\0')
        return -EINVAL;
    const char *c = s;
    bool neg = (*c == '-');
    if (*c == '-' || *c == '+')
        c++;
    if (*c == '\0')
        return -EINVAL;
    /* Accumulate as a negative number: its range includes INT64_MIN. */
    int64_t v = 0;
    bool range = false;
    for (; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        int d = *c - '0';
        if (v < (INT64_MIN + d) / 10)
            range = true;
        else
            v = v * 10 - d;
    }
    if (range || (!neg && v == INT64_MIN))
        return -ERANGE;
    *out = neg ? v : -v;
    return 0;
}
