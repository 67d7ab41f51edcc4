/* SPDX-License-Identifier: MIT */
/* Free GPUs per node. Nodes are grouped into classes (GPU type, GPU count); each class keeps,
 * for every free count f, a two-level bitmap of its nodes with exactly f free GPUs, so the
 * lowest-index node with f free is found in O(nodes / 4096) word operations. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/catalog.h"
#include "ecosched/freemap.h"

struct bits {
    uint64_t *w;   /* one bit per class member */
    uint64_t *sum; /* bit i: w[i] != 0 */
    uint32_t nw, nsum;
};

struct cls {
    struct eco_node_class nc;
    uint32_t *members; /* global node indices, ascending */
    uint32_t n;
    struct bits *bucket; /* nc.gpus + 1 bitmaps */
    struct bits nonempty;
};

struct eco_freemap {
    const struct eco_cluster *c;
    uint16_t *free;
    uint32_t *local;  /* position of each node within its class */
    uint16_t *cls_of; /* class of each node */
    struct cls *cls;
    size_t ncls;
    uint64_t *free_by_type;
    uint64_t total_free;
    double now_s;
    double *busy_until;
};

static int bits_init(struct bits *b, uint32_t n)
{
    b->nw = (n + 63) / 64;
    b->nsum = (b->nw + 63) / 64;
    b->w = calloc(b->nw ? b->nw : 1, sizeof *b->w);
    b->sum = calloc(b->nsum ? b->nsum : 1, sizeof *b->sum);
    return (b->w && b->sum) ? 0 : -ENOMEM;
}

static void bits_fini(struct bits *b)
{
    free(b->w);
    free(b->sum);
}

static void bits_clear_all(struct bits *b)
{
    memset(b->w, 0, b->nw * sizeof *b->w);
    memset(b->sum, 0, b->nsum * sizeof *b->sum);
}

static void bits_set(struct bits *b, uint32_t i)
{
    b->w[i >> 6] |= 1ULL << (i & 63);
    b->sum[i >> 12] |= 1ULL << ((i >> 6) & 63);
}

static void bits_clear(struct bits *b, uint32_t i)
{
    uint32_t wi = i >> 6;
    b->w[wi] &= ~(1ULL << (i & 63));
    if (!b->w[wi])
        b->sum[wi >> 6] &= ~(1ULL << (wi & 63));
}

/* Lowest set bit >= from, or -1. */
static int64_t bits_first(const struct bits *b, uint32_t from)
{
    uint32_t wi = from >> 6;
    if (wi >= b->nw)
        return -1;
    uint64_t word = b->w[wi] & (~0ULL << (from & 63));
    if (word)
        return ((int64_t)wi << 6) + __builtin_ctzll(word);
    uint32_t next = wi + 1; /* first word index still to look at */
    for (uint32_t si = next >> 6; si < b->nsum; si++) {
        uint64_t s = b->sum[si];
        if (si == next >> 6)
            s &= (next & 63) ? (~0ULL << (next & 63)) : ~0ULL;
        if (s) {
            uint32_t w = (si << 6) + (uint32_t)__builtin_ctzll(s);
            return ((int64_t)w << 6) + __builtin_ctzll(b->w[w]);
        }
    }
    return -1;
}

static int cmp_class(const void *a, const void *b)
{
    const struct eco_node_class *x = a, *y = b;
    if (x->gpus != y->gpus)
        return x->gpus > y->gpus ? -1 : 1;
    return (x->group > y->group) - (x->group < y->group);
}

void eco_freemap_destroy(struct eco_freemap *fm)
{
    if (!fm)
        return;
    for (size_t k = 0; k < fm->ncls; k++) {
        struct cls *cl = &fm->cls[k];
        if (cl->bucket)
            for (uint32_t f = 0; f <= cl->nc.gpus; f++)
                bits_fini(&cl->bucket[f]);
        free(cl->bucket);
        bits_fini(&cl->nonempty);
        free(cl->members);
    }
    free(fm->cls);
    free(fm->free);
    free(fm->local);
    free(fm->cls_of);
    free(fm->free_by_type);
    free(fm->busy_until);
    free(fm);
}

static int build_classes(struct eco_freemap *fm)
{
    const struct eco_cluster *c = fm->c;
    size_t n = c->n_groups;
    fm->cls = calloc(n ? n : 1, sizeof *fm->cls);
    uint16_t *cls_of_group = calloc(n ? n : 1, sizeof *cls_of_group);
    int rc = -ENOMEM;
    if (!fm->cls || !cls_of_group)
        goto done;
    fm->ncls = n;
    for (size_t g = 0; g < n; g++)
        fm->cls[g].nc = (struct eco_node_class){c->groups[g].type, c->groups[g].gpus, (uint16_t)g};
    struct eco_node_class tmp[ECO_MAX_NODE_GROUPS];
    for (size_t k = 0; k < n; k++)
        tmp[k] = fm->cls[k].nc;
    qsort(tmp, n, sizeof tmp[0], cmp_class);
    for (size_t k = 0; k < n; k++) {
        fm->cls[k].nc = tmp[k];
        cls_of_group[tmp[k].group] = (uint16_t)k;
    }
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        size_t k = cls_of_group[c->nodes[i].group];
        fm->cls_of[i] = (uint16_t)k;
        fm->local[i] = fm->cls[k].n++;
    }
    for (size_t k = 0; k < n; k++) {
        struct cls *cl = &fm->cls[k];
        cl->members = malloc((cl->n ? cl->n : 1) * sizeof *cl->members);
        cl->bucket = calloc((size_t)cl->nc.gpus + 1, sizeof *cl->bucket);
        if (!cl->members || !cl->bucket || bits_init(&cl->nonempty, cl->n))
            goto done;
        for (uint32_t f = 0; f <= cl->nc.gpus; f++)
            if (bits_init(&cl->bucket[f], cl->n))
                goto done;
    }
    for (uint32_t i = 0; i < c->n_nodes; i++)
        fm->cls[fm->cls_of[i]].members[fm->local[i]] = i;
    rc = 0;
done:
    free(cls_of_group);
    return rc;
}

struct eco_freemap *eco_freemap_create(const struct eco_cluster *c)
{
    struct eco_freemap *fm = calloc(1, sizeof *fm);
    if (!fm)
        return NULL;
    fm->c = c;
    size_t nn = c->n_nodes ? c->n_nodes : 1;
    fm->free = calloc(nn, sizeof *fm->free);
    fm->local = calloc(nn, sizeof *fm->local);
    fm->cls_of = calloc(nn, sizeof *fm->cls_of);
    fm->free_by_type = calloc(eco_catalog_count(), sizeof *fm->free_by_type);
    fm->busy_until = calloc(nn, sizeof *fm->busy_until);
    if (!fm->free || !fm->local || !fm->cls_of || !fm->free_by_type || !fm->busy_until ||
        build_classes(fm)) {
        eco_freemap_destroy(fm);
        return NULL;
    }
    eco_freemap_reset(fm);
    return fm;
}

void eco_freemap_reset(struct eco_freemap *fm)
{
    const struct eco_cluster *c = fm->c;
    for (size_t k = 0; k < fm->ncls; k++) {
        struct cls *cl = &fm->cls[k];
        for (uint32_t f = 0; f <= cl->nc.gpus; f++)
            bits_clear_all(&cl->bucket[f]);
        bits_clear_all(&cl->nonempty);
    }
    memset(fm->free_by_type, 0, eco_catalog_count() * sizeof *fm->free_by_type);
    memset(fm->busy_until, 0, (c->n_nodes ? c->n_nodes : 1) * sizeof *fm->busy_until);
    fm->total_free = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        struct cls *cl = &fm->cls[fm->cls_of[i]];
        fm->free[i] = c->nodes[i].gpus;
        bits_set(&cl->bucket[c->nodes[i].gpus], fm->local[i]);
        bits_set(&cl->nonempty, fm->local[i]);
        fm->free_by_type[c->nodes[i].type] += c->nodes[i].gpus;
        fm->total_free += c->nodes[i].gpus;
    }
}

const struct eco_cluster *eco_freemap_cluster(const struct eco_freemap *fm)
{
    return fm->c;
}

size_t eco_freemap_n_classes(const struct eco_freemap *fm)
{
    return fm->ncls;
}

const struct eco_node_class *eco_freemap_class(const struct eco_freemap *fm, size_t cls)
{
    return &fm->cls[cls].nc;
}

size_t eco_freemap_class_of(const struct eco_freemap *fm, uint32_t node)
{
    return fm->cls_of[node];
}

uint16_t eco_freemap_free(const struct eco_freemap *fm, uint32_t node)
{
    return fm->free[node];
}

uint64_t eco_freemap_total_free(const struct eco_freemap *fm, int type)
{
    if (type < 0)
        return fm->total_free;
    return (size_t)type < eco_catalog_count() ? fm->free_by_type[type] : 0;
}

/* First member position of class cl whose global index is >= from. */
static uint32_t local_from(const struct cls *cl, uint32_t from)
{
    uint32_t lo = 0, hi = cl->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cl->members[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t eco_freemap_find(const struct eco_freemap *fm, size_t cls, uint16_t f, uint32_t from)
{
    const struct cls *cl = &fm->cls[cls];
    if (f > cl->nc.gpus)
        return -1;
    int64_t pos = bits_first(&cl->bucket[f], from ? local_from(cl, from) : 0u);
    return pos < 0 ? -1 : (int64_t)cl->members[pos];
}

int64_t eco_freemap_find_nonempty(const struct eco_freemap *fm, size_t cls, uint32_t from)
{
    const struct cls *cl = &fm->cls[cls];
    int64_t pos = bits_first(&cl->nonempty, from ? local_from(cl, from) : 0u);
    return pos < 0 ? -1 : (int64_t)cl->members[pos];
}

static void set_free(struct eco_freemap *fm, uint32_t node, uint16_t nf)
{
    struct cls *cl = &fm->cls[fm->cls_of[node]];
    uint32_t li = fm->local[node];
    uint16_t of = fm->free[node];
    bits_clear(&cl->bucket[of], li);
    bits_set(&cl->bucket[nf], li);
    if (nf == 0)
        bits_clear(&cl->nonempty, li);
    else if (of == 0)
        bits_set(&cl->nonempty, li);
    fm->free[node] = nf;
}

void eco_freemap_set_now(struct eco_freemap *fm, double now_s)
{
    fm->now_s = now_s;
}

double eco_freemap_now(const struct eco_freemap *fm)
{
    return fm->now_s;
}

void eco_freemap_set_busy_until(struct eco_freemap *fm, uint32_t node, double t_s)
{
    fm->busy_until[node] = t_s;
}

double eco_freemap_busy_until(const struct eco_freemap *fm, uint32_t node)
{
    return fm->busy_until[node];
}

void eco_freemap_take(struct eco_freemap *fm, uint32_t node, uint16_t n)
{
    set_free(fm, node, (uint16_t)(fm->free[node] - n));
    fm->free_by_type[fm->c->nodes[node].type] -= n;
    fm->total_free -= n;
}

void eco_freemap_give(struct eco_freemap *fm, uint32_t node, uint16_t n)
{
    set_free(fm, node, (uint16_t)(fm->free[node] + n));
    fm->free_by_type[fm->c->nodes[node].type] += n;
    fm->total_free += n;
}
