/* SPDX-License-Identifier: MIT */
/* A job's AdminComment as ecosched writes it: one GPU-energy part per node and their sum
 * (docs/slurm/accounting.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "acct_comment_internal.h"

/* A node name in a part: Slurm node names never hold a blank or '=' (slurm.conf NodeName). */
#define NAME_MAX_LEN 128
/* Largest part and sum accepted (excluded), in joules and grams: a petajoule is 30 MW for a
 * year, beyond any job; a larger figure is a broken counter (and keeps each printed part
 * within its room below). report --accounting reads with the same bound
 * (src/cli/report_acct.c). */
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

/* A figure as the merge prints it ("%.1f", "%.2f"): digits, optionally a point and digits,
 * below PART_MAX; *end after it. strtod alone takes inf, nan, 1e999 (as HUGE_VAL),
 * hexadecimal and signs. */
static bool decimal(const char *s, char **end, double *v)
{
    size_t n = strspn(s, "0123456789"), f;
    if (n && s[n] == '.' && (f = strspn(s + n + 1, "0123456789")))
        n += 1 + f;
    else if (!n || s[n] == '.')
        return false;
    *v = strtod(s, end);
    return *end == s + n && *v < PART_MAX;
}

/* The next blank-separated token of *s (NULL at the end), *len its length; *s moves past it. */
static const char *next(const char **s, size_t *len)
{
    const char *t = *s + strspn(*s, " ");
    *len = strcspn(t, " ");
    *s = t + *len;
    return *len ? t : NULL;
}

/* Whether token t of length len is KEY=DECIMAL (KEY in any case). */
static bool total(const char *t, size_t len, const char *key)
{
    size_t k = strlen(key);
    char *end;
    double v;
    return len > k && !strncasecmp(t, key, k) && decimal(t + k, &end, &v) && end == t + len;
}

/* One part "NODE=EJ[,Cg]" (token t of length len) into p. */
static int part(const char *t, size_t len, struct parts *p, struct eco_error *err)
{
    const char *eq = memchr(t, '=', len);
    size_t klen = eq ? (size_t)(eq - t) : 0;
    char *end;
    double e, c = -1;
    if (!klen || klen >= NAME_MAX_LEN || !decimal(eq + 1, &end, &e) || (*end != 'J' && *end != 'j'))
        return eco_errorf(err, -EINVAL, "AdminComment: part '%.*s' is not NODE=JOULESJ", (int)len,
                          t);
    if (end[1] == ',') {
        const char *cs = end + 2;
        if (!decimal(cs, &end, &c) || (*end != 'g' && *end != 'G'))
            return eco_errorf(err, -EINVAL, "AdminComment: part '%.*s': carbon is not GRAMSg",
                              (int)len, t);
    }
    if ((size_t)(end + 1 - t) != len)
        return eco_errorf(err, -EINVAL, "AdminComment: part '%.*s': text after the figures",
                          (int)len, t);
    return add(p, t, klen, e, c);
}

/* The parts of ecosched's text `s` (from ECO_ACCT_TAG's "gpu_energy_j=" on). Its words are
 * known by their place, never by their name, so that a node may be called "nodes",
 * "carbon_g" or "gpu_energy_j" (the reader before this one took those parts for totals and
 * dropped them; what it wrote is the same layout and is read the same way): the totals in
 * the merge's order, "gpu_energy_j=SUM [carbon_g=SUM] nodes=K", then K parts. The totals are
 * recomputed by the merge, only checked here. Read without regard to case: sacctmgr stores
 * the comment in lower case (seen with Debian's 22.05, quoted or not). *rest (rest may be NULL)
 * is set to the text after the K-th part: another tool's, appended after ecosched's. */
static int parse(const char *s, struct parts *p, const char **rest, struct eco_error *err)
{
    size_t len, k = 0;
    const char *t = next(&s, &len);
    char *end;
    if (!t || !total(t, len, "gpu_energy_j="))
        return eco_errorf(err, -EINVAL,
                          "AdminComment: '%.*s' is not gpu_energy_j=JOULES (digits and a point)",
                          t ? (int)len : 0, t ? t : "");
    t = next(&s, &len);
    if (t && len >= 9 && !strncasecmp(t, "carbon_g=", 9)) {
        if (!total(t, len, "carbon_g="))
            return eco_errorf(err, -EINVAL,
                              "AdminComment: '%.*s' is not carbon_g=GRAMS (digits and a point)",
                              (int)len, t);
        t = next(&s, &len);
    }
    size_t digits = t && len > 6 ? strspn(t + 6, "0123456789") : 0;
    if (!t || strncasecmp(t, "nodes=", 6) || !digits || digits != len - 6 || digits > 6)
        return eco_errorf(err, -EINVAL, "AdminComment: no nodes=COUNT after the totals, at '%.*s'",
                          t ? (int)len : 0, t ? t : "");
    unsigned long want = strtoul(t + 6, &end, 10);
    int rc;
    /* exactly K parts: what follows them is another tool's, kept as it is (a part ends at a
     * blank or at the ';' of a text appended after it) */
    for (; k < want; k++) {
        t = s + strspn(s, " ");
        len = strcspn(t, " ;");
        if (!len)
            break;
        s = t + len;
        if ((rc = part(t, len, p, err)) < 0)
            return rc;
    }
    if (k != want)
        return eco_errorf(err, -EINVAL, "AdminComment: nodes=%lu but %zu part%s", want, k,
                          k == 1 ? "" : "s");
    if (rest)
        *rest = s;
    return 0;
}

static bool good_name(const char *node)
{
    size_t n = strlen(node);
    return n > 0 && n < NAME_MAX_LEN && !strpbrk(node, " =;\t\n");
}

int eco_slurm__comment_merge(const char *old, const char *node, double energy_j, double carbon_g,
                             char **out, struct eco_error *err)
{
    struct parts p = {0};
    char *buf = NULL;
    const char *ours = old ? strstr(old, ECO_ACCT_TAG) : NULL, *rest = "";
    size_t pre = ours ? (size_t)(ours - old) : old ? strlen(old) : 0;
    int rc = 0;
    *out = NULL;
    if (!good_name(node) || !(energy_j >= 0 && energy_j < PART_MAX)) {
        rc = eco_errorf(err, -EINVAL, "node '%s', energy %g J: not a node name and energy", node,
                        energy_j);
        goto done;
    }
    /* -0 is printed "-0.0", which no reader takes (signs refused): written as 0 */
    energy_j = fabs(energy_j);
    carbon_g = carbon_g >= 0 && carbon_g < PART_MAX ? fabs(carbon_g) : -1;
    if ((ours && (rc = parse(ours + strlen("ecosched "), &p, &rest, err)) < 0) ||
        (rc = add(&p, node, strlen(node), energy_j, carbon_g)) < 0)
        goto done;
    double sum_e = 0, sum_c = 0;
    bool all_c = true;
    for (size_t i = 0; i < p.n; i++) {
        sum_e += p.v[i].energy_j;
        sum_c += p.v[i].carbon_g;
        all_c = all_c && p.v[i].carbon_g >= 0;
    }
    if (!(sum_e < PART_MAX) || (all_c && !(sum_c < PART_MAX))) {
        rc = eco_errorf(err, -EINVAL, "node '%s': the job's sum %g J, %g g is beyond %g", node,
                        sum_e, sum_c, PART_MAX);
        goto done;
    }
    size_t cap = pre + strlen(rest) + 128 + p.n * (NAME_MAX_LEN + 64);
    if (!(buf = malloc(cap))) {
        rc = -ENOMEM;
        goto done;
    }
    /* the text before ecosched's part byte for byte (its "; " separator included, once one was
     * written); on the first write "; " after another tool's text, none of it changed */
    size_t n = (size_t)snprintf(buf, cap, "%.*s%sgpu_energy_j=%.1f", (int)pre, old ? old : "",
                                ours || !pre ? "ecosched " : "; ecosched ", sum_e);
    if (all_c)
        n += (size_t)snprintf(buf + n, cap - n, " carbon_g=%.2f", sum_c);
    n += (size_t)snprintf(buf + n, cap - n, " nodes=%zu", p.n);
    for (size_t i = 0; i < p.n; i++) {
        n += (size_t)snprintf(buf + n, cap - n, " %s=%.1fJ", p.v[i].node, p.v[i].energy_j);
        if (p.v[i].carbon_g >= 0)
            n += (size_t)snprintf(buf + n, cap - n, ",%.2fg", p.v[i].carbon_g);
    }
    snprintf(buf + n, cap - n, "%s", rest); /* and the text after it, as it was */
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
    if (ours && parse(ours + strlen("ecosched "), &p, NULL, NULL) == 0)
        for (size_t i = 0; i < p.n && !found; i++)
            found = !strcasecmp(p.v[i].node, node);
    free(p.v);
    return found;
}

bool eco_slurm__comment_others_upper(const char *comment)
{
    const char *ours = comment ? strstr(comment, ECO_ACCT_TAG) : NULL, *rest = NULL;
    struct parts p = {0};
    if (!comment)
        return false;
    size_t pre = ours ? (size_t)(ours - comment) : strlen(comment);
    if (ours && parse(ours + strlen("ecosched "), &p, &rest, NULL) < 0)
        rest = NULL; /* unreadable: the merge refuses it anyway */
    free(p.v);
    for (size_t i = 0; i < pre; i++)
        if (isupper((unsigned char)comment[i]))
            return true;
    for (; rest && *rest; rest++)
        if (isupper((unsigned char)*rest))
            return true;
    return false;
}

int eco_slurm__comment_from_scontrol(const char *show, char *out, size_t cap)
{
    static const char key[] = " AdminComment=";
    const char *v = show ? strstr(show, key) : NULL;
    if (!v || !cap)
        return -ENOENT;
    v += strlen(key);
    /* scontrol writes "AdminComment=%s " and a blank before the next field: the text ends at
     * the first two blanks followed by a field's name and '=' (or at the line's end) */
    size_t n = 0;
    for (; v[n] && v[n] != '\n'; n++) {
        if (v[n] != ' ' || v[n + 1] != ' ')
            continue;
        size_t k = 2;
        while (isalpha((unsigned char)v[n + k]))
            k++;
        if (k > 2 && v[n + k] == '=')
            break;
    }
    if (!v[n] || v[n] == '\n') /* the last field: its own blank after it */
        n = n && v[n - 1] == ' ' ? n - 1 : n;
    if (n + 1 > cap)
        return -E2BIG;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
}
