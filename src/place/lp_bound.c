/* SPDX-License-Identifier: MIT */
/* An upper bound on the GPUs any placement can allocate (GLPK simplex): the LP relaxation of
 * the assignment of items to nodes, aggregated over identical items and identical nodes, with
 * valid inequalities from dual feasible functions (docs/policies/ilp.md, "LP bound"). */
#include <errno.h>
#include <glpk.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "place/place_io.h"

/* The Fekete-Schepers dual feasible functions u^(k), k = 1..DFF_MAX (Fekete and Schepers, "New
 * classes of fast lower bounds for bin packing problems", Math. Programming 91, 2001). Measured
 * on openb's 1,213 GPU nodes (default, gpushare100, cpu250 and multigpu50 lists, seed 1): k up
 * to 3 leaves the bound at 100 % arrived 2.2 points (default) to 7.8 points (gpushare100) looser
 * than k up to 5; 5 to 10 tightens it by 0.17-0.18 points at 120 %, 10 to 20 by 0.01 or less
 * while the solve time doubles. */
#define DFF_MAX 10

/* A group of identical nodes or identical items: the index of its first member and its count. */
struct group {
    uint32_t rep, n;
};

static int cmp_item(const struct eco_pl_item *a, const struct eco_pl_item *b)
{
    if (a->cpu_milli != b->cpu_milli)
        return a->cpu_milli < b->cpu_milli ? -1 : 1;
    if (a->mem_mib != b->mem_mib)
        return a->mem_mib < b->mem_mib ? -1 : 1;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    if (a->gpu_milli != b->gpu_milli)
        return a->gpu_milli < b->gpu_milli ? -1 : 1;
    if (a->models != b->models)
        return a->models < b->models ? -1 : 1;
    return 0;
}

static const struct eco_pl_item *sort_items; /* qsort has no context argument in C11 */

static int by_item(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    int c = cmp_item(&sort_items[i], &sort_items[j]);
    return c ? c : (i > j) - (i < j);
}

/* u^(k)(a / b) for 0 <= a <= b, k >= 1: a / b when (k + 1) a / b is a whole number, else
 * floor((k + 1) a / b) / k. Exact in integers. */
static double dff(int64_t a, int64_t b, int k)
{
    if (b <= 0 || a <= 0)
        return 0;
    if (a >= b)
        return 1;
    int64_t t = (k + 1) * a;
    if (t % b == 0)
        return (double)a / (double)b;
    return (double)(t / b) / k;
}

/* The weight of item it on one GPU's scale (per-GPU rows): a whole GPU per GPU it takes, the
 * dual feasible function of its share for a shared GPU (k = 0: the share itself). */
static double gpu_weight(const struct eco_pl_item *it, int k)
{
    if (!it->gpus)
        return 0;
    if (it->gpu_milli >= ECO_PL_GPU_MILLI)
        return it->gpus;
    return k ? dff(it->gpu_milli, ECO_PL_GPU_MILLI, k) : it->gpu_milli / (double)ECO_PL_GPU_MILLI;
}

struct guard {
    jmp_buf env;
};

static void on_glpk_error(void *info)
{
    longjmp(((struct guard *)info)->env, 1);
}

/* Groups of identical nodes (in node order of first appearance) into *out. */
static int node_groups(const struct eco_pl_instance *in, struct group **out, uint32_t *n_out)
{
    struct group *g = malloc((in->n_nodes ? in->n_nodes : 1) * sizeof *g);
    uint32_t n = 0;
    if (!g)
        return -ENOMEM;
    for (uint32_t j = 0; j < in->n_nodes; j++) {
        uint32_t t = 0;
        while (t < n && !eco_pl_same_node(&in->nodes[g[t].rep], &in->nodes[j]))
            t++;
        if (t == n)
            g[n++] = (struct group){j, 0};
        g[t].n++;
    }
    *out = g;
    *n_out = n;
    return 0;
}

/* Groups of identical items among the first n_items into *out. */
static int item_groups(const struct eco_pl_instance *in, uint32_t n_items, struct group **out,
                       uint32_t *n_out)
{
    uint32_t *idx = malloc((n_items ? n_items : 1) * sizeof *idx);
    struct group *g = malloc((n_items ? n_items : 1) * sizeof *g);
    uint32_t n = 0;
    if (!idx || !g) {
        free(idx);
        free(g);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n_items; i++)
        idx[i] = i;
    sort_items = in->items;
    qsort(idx, n_items, sizeof *idx, by_item);
    for (uint32_t i = 0; i < n_items; i++) {
        if (n == 0 || cmp_item(&in->items[g[n - 1].rep], &in->items[idx[i]]))
            g[n++] = (struct group){idx[i], 0};
        g[n - 1].n++;
    }
    free(idx);
    *out = g;
    *n_out = n;
    return 0;
}

/* The model's inputs and its GLPK problem (set while it lives). */
struct lpd {
    const struct eco_pl_instance *in;
    const struct group *ng, *tg;
    uint32_t n_ng, n_tg;
    int cuts, ncol;
    const int *col; /* col[t * n_ng + k]: the column of y[t][k], 0 where t cannot go on k */
    int *ia, *ja;
    double *ar;
    glp_prob *lp;
    double gpus;
    int grc, status;
};

/* Builds the rows and solves; GLPK's errors leave through the hook (see guarded). */
static void build_and_solve(struct lpd *d)
{
    const struct eco_pl_instance *in = d->in;
    uint32_t n_ng = d->n_ng;
    int per_node = 3 + (d->cuts ? 4 * DFF_MAX : 0);
    glp_prob *lp = d->lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    if (d->ncol)
        glp_add_cols(lp, d->ncol);
    for (uint32_t t = 0; t < d->n_tg; t++) {
        const struct eco_pl_item *it = &in->items[d->tg[t].rep];
        for (uint32_t k = 0; k < n_ng; k++) {
            int c = d->col[(size_t)t * n_ng + k];
            if (!c)
                continue;
            glp_set_col_bnds(lp, c, GLP_LO, 0, 0);
            glp_set_obj_coef(lp, c, (double)it->gpus * it->gpu_milli / ECO_PL_GPU_MILLI);
        }
    }
    size_t nz = 0;
    for (uint32_t t = 0; t < d->n_tg; t++) { /* at most the items of the group */
        int row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_UP, 0, d->tg[t].n);
        for (uint32_t k = 0; k < n_ng; k++)
            if (d->col[(size_t)t * n_ng + k])
                ++nz, d->ia[nz] = row, d->ja[nz] = d->col[(size_t)t * n_ng + k], d->ar[nz] = 1;
    }
    for (uint32_t k = 0; k < n_ng; k++) {
        const struct eco_pl_node *nd = &in->nodes[d->ng[k].rep];
        double nn = d->ng[k].n;
        int64_t node_gpu_milli = (int64_t)nd->gpus * ECO_PL_GPU_MILLI;
        for (int r = 0; r < per_node; r++) {
            /* r: 0 CPU, 1 memory, 2 GPUs (shares summed); then per DFF k = 1..DFF_MAX:
             * per-GPU, CPU, memory, node's GPUs (normalised by the node's capacity) */
            int kind = r < 3 ? r : 3 + (r - 3) % 4, kd = r < 3 ? 0 : 1 + (r - 3) / 4;
            double rhs = kind == 0   ? nn * (double)nd->cpu_milli
                         : kind == 1 ? nn * (double)nd->mem_mib
                         : kind <= 3 ? nn * nd->gpus
                                     : nn;
            int row = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, row, GLP_UP, 0, rhs);
            for (uint32_t t = 0; t < d->n_tg; t++) {
                int c = d->col[(size_t)t * n_ng + k];
                if (!c)
                    continue;
                const struct eco_pl_item *it = &in->items[d->tg[t].rep];
                int64_t g_milli = (int64_t)it->gpus * it->gpu_milli;
                double a = kind == 0   ? (double)it->cpu_milli
                           : kind == 1 ? (double)it->mem_mib
                           : kind == 2 ? gpu_weight(it, 0)
                           : kind == 3 ? gpu_weight(it, kd)
                           : kind == 4 ? dff(it->cpu_milli, nd->cpu_milli, kd)
                           : kind == 5 ? dff(it->mem_mib, nd->mem_mib, kd)
                                       : dff(g_milli, node_gpu_milli, kd);
                if (a != 0)
                    ++nz, d->ia[nz] = row, d->ja[nz] = c, d->ar[nz] = a;
            }
        }
    }
    if (nz)
        glp_load_matrix(lp, (int)nz, d->ia, d->ja, d->ar);
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.presolve = GLP_ON;
    d->gpus = 0;
    d->grc = 0;
    d->status = GLP_OPT;
    if (d->ncol) {
        d->grc = glp_simplex(lp, &sm);
        d->status = glp_get_status(lp);
        d->gpus = glp_get_obj_val(lp);
    }
}

/* GLPK calls abort() on an internal error unless its error hook leaves by longjmp; after that
 * its environment, the problem with it, must be freed. 0, or -1 after such an error. */
static int guarded(struct lpd *d)
{
    struct guard g;
    glp_error_hook(on_glpk_error, &g);
    if (setjmp(g.env)) {
        glp_error_hook(NULL, NULL);
        glp_free_env();
        d->lp = NULL;
        return -1;
    }
    glp_term_out(GLP_OFF); /* GLPK's messages are not ours */
    build_and_solve(d);
    glp_error_hook(NULL, NULL);
    return 0;
}

int eco_pl_lp_bound(const struct eco_pl_instance *in, uint32_t n_items, int cuts, double *gpus,
                    struct eco_error *err)
{
    struct group *ng = NULL, *tg = NULL;
    struct lpd d = {.in = in, .cuts = cuts};
    int *col = NULL;
    int rc = -ENOMEM;
    if (n_items > in->n_items)
        return eco_errorf(err, -EINVAL, "lp bound: %u items asked, the instance has %u", n_items,
                          in->n_items);
    if (node_groups(in, &ng, &d.n_ng) || item_groups(in, n_items, &tg, &d.n_tg))
        goto out;
    d.ng = ng;
    d.tg = tg;
    /* columns y[t][k]: items of group t on nodes of group k, where one fits an empty node */
    col = calloc((size_t)d.n_tg * d.n_ng + 1, sizeof *col);
    if (!col)
        goto out;
    for (uint32_t t = 0; t < d.n_tg; t++)
        for (uint32_t k = 0; k < d.n_ng; k++)
            if (eco_pl_compatible(in, tg[t].rep, ng[k].rep))
                col[(size_t)t * d.n_ng + k] = ++d.ncol;
    d.col = col;
    /* non-zeros: a column's item row, and at most one entry in each of its node group's rows
     * (3 capacities, and with cuts DFF_MAX per-GPU rows and DFF_MAX for each of CPU, memory
     * and the node's GPUs) */
    size_t cap = (size_t)d.ncol * (1 + 3 + (cuts ? 4 * DFF_MAX : 0)) + 1;
    d.ia = malloc(cap * sizeof *d.ia);
    d.ja = malloc(cap * sizeof *d.ja);
    d.ar = malloc(cap * sizeof *d.ar);
    if (!d.ia || !d.ja || !d.ar)
        goto out;
    if (guarded(&d)) {
        rc = eco_errorf(err, -EIO, "lp bound: GLPK internal error");
        goto out;
    }
    if (d.grc || d.status != GLP_OPT) {
        rc = eco_errorf(err, -EIO, "lp bound: GLPK simplex failed (code %d, status %d)", d.grc,
                        d.status);
        goto out;
    }
    *gpus = d.gpus;
    rc = 0;
out:
    if (d.lp)
        glp_delete_prob(d.lp);
    free(col);
    free(d.ia);
    free(d.ja);
    free(d.ar);
    free(ng);
    free(tg);
    return rc;
}
