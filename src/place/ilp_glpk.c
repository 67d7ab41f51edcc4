/* SPDX-License-Identifier: MIT */
/* Exact placement with GLPK (branch and cut): as many items as possible on as few hosts as
 * possible, with per-GPU shares, CPU, memory and GPU model constraints. For small instances;
 * the time limit gives the best solution found and the optimality gap. */
#include <errno.h>
#include <glpk.h>
#include <limits.h>
#include <setjmp.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "place/place_io.h"

struct cb {
    const struct eco_pl_params *p;
    double M;            /* objective = hosts - M x items placed (0: every item must be) */
    double bound;        /* best bound of the minimisation objective seen */
    const double *start; /* a feasible start (column values from 1), or NULL */
    int started;
};

static void callback(glp_tree *tree, void *info)
{
    struct cb *cb = info;
    if (glp_ios_reason(tree) == GLP_IHEUR && cb->start && !cb->started) {
        glp_ios_heur_sol(tree, cb->start);
        cb->started = 1;
    }
    int p = glp_ios_best_node(tree);
    if (p)
        cb->bound = glp_ios_node_bound(tree, p);
    if (cb->p->progress) {
        glp_prob *mip = glp_ios_get_prob(tree);
        int active, all, total, st = glp_mip_status(mip);
        glp_ios_tree_size(tree, &active, &all, &total);
        struct eco_pl_progress pr = {
            .stage = "branch and cut", .step = (uint64_t)total, .best = NAN, .bound = NAN};
        if (st == GLP_FEAS || st == GLP_OPT) { /* in hosts, for the items the best places */
            double obj = glp_mip_obj_val(mip);
            double placed = cb->M > 0 ? ceil(-obj / cb->M - 1e-9) : 0;
            pr.placed = (uint32_t)placed;
            pr.best = obj + cb->M * placed;
            if (p)
                pr.bound = fmax(0, ceil(cb->bound + cb->M * placed - 1e-6));
        }
        cb->p->progress(cb->p->progress_ctx, &pr);
    }
}

/* Column indices: x[i][j] (0 when item i may not go on node j), y[j], z[i][j][g]. */
struct cols {
    int *x, *y, *z;
    uint32_t ni, nn, ng;
};

static int by_load_desc(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b; /* (load, gpu) pairs */
    if (x[0] != y[0])
        return x[0] > y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Column values of a feasible assignment put in the model's canonical form (GPU loads of a
 * node in decreasing order, used nodes first in each run of identical nodes), so that it
 * satisfies the symmetry rows. 0, or -1 when slots do not fit the model (an item unplaced
 * while require_all) or memory runs out. */
static int start_values(const struct eco_pl_instance *in, const struct cols *c,
                        const struct eco_pl_slot *slots, int require_all, int ncol, double *val)
{
    uint32_t ni = c->ni, nn = c->nn;
    int rc = -1;
    uint32_t *used = calloc(nn + 1, sizeof *used), *node_map = malloc((nn + 1) * sizeof *node_map);
    uint32_t *gpu_map = malloc(((size_t)nn * c->ng + 1) * sizeof *gpu_map);
    if (!used || !node_map || !gpu_map)
        goto out;
    for (uint32_t i = 0; i < ni; i++) {
        if (slots[i].node < 0) {
            if (require_all)
                goto out;
            continue;
        }
        used[slots[i].node] = 1;
    }
    /* runs of identical consecutive nodes: used ones move to the front of their run */
    for (uint32_t j = 0; j < nn;) {
        uint32_t e = j + 1;
        while (e < nn && eco_pl_same_node(&in->nodes[e - 1], &in->nodes[e]))
            e++;
        uint32_t k = j;
        for (uint32_t t = j; t < e; t++)
            if (used[t])
                node_map[t] = k++;
        for (uint32_t t = j; t < e; t++)
            if (!used[t])
                node_map[t] = k++;
        j = e;
    }
    /* GPUs of each node: by load, largest first */
    for (uint32_t j = 0; j < nn; j++) {
        uint32_t pairs[ECO_PL_MAX_GPUS][2];
        uint32_t ng = in->nodes[j].gpus;
        for (uint32_t g = 0; g < ng; g++)
            pairs[g][0] = 0, pairs[g][1] = g;
        for (uint32_t i = 0; i < ni; i++)
            if (slots[i].node == (int32_t)j)
                for (uint64_t m = slots[i].gpus; m; m &= m - 1)
                    pairs[__builtin_ctzll(m)][0] += in->items[i].gpu_milli;
        qsort(pairs, ng, sizeof pairs[0], by_load_desc);
        for (uint32_t g = 0; g < ng; g++)
            gpu_map[(size_t)j * c->ng + pairs[g][1]] = g;
    }
    for (int k = 0; k <= ncol; k++)
        val[k] = 0;
    for (uint32_t i = 0; i < ni; i++) {
        if (slots[i].node < 0)
            continue;
        uint32_t j0 = (uint32_t)slots[i].node, j = node_map[j0];
        int x = c->x[(size_t)i * nn + j];
        if (!x)
            goto out;
        val[x] = 1;
        val[c->y[j]] = 1;
        for (uint64_t m = slots[i].gpus; m; m &= m - 1) {
            uint32_t g = gpu_map[(size_t)j0 * c->ng + __builtin_ctzll(m)];
            int z = c->z[((size_t)i * nn + j) * c->ng + g];
            if (!z)
                goto out;
            val[z] = 1;
        }
    }
    rc = 0;
out:
    free(used);
    free(node_map);
    free(gpu_map);
    return rc;
}

/* GLPK calls abort() on an internal error unless an error hook leaves by longjmp; the hook
 * gets this context. After such an error GLPK's environment must be freed. */
struct guarded {
    glp_prob *lp;
    glp_iocp *parm;
    int grc, st;
    jmp_buf env;
};

static void on_glpk_error(void *info)
{
    longjmp(((struct guarded *)info)->env, 1);
}

/* LP relaxation, then branch and cut, within parm->tm_lim for both. 0, or -1 after a GLPK
 * internal error (g->lp is then gone). */
static int guarded_solve(struct guarded *g)
{
    glp_error_hook(on_glpk_error, g);
    if (setjmp(g->env)) {
        glp_error_hook(NULL, NULL);
        glp_free_env();
        g->grc = GLP_EFAIL;
        g->st = GLP_UNDEF;
        return -1;
    }
    glp_term_out(GLP_OFF); /* GLPK's messages, its error reports included, are not ours */
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.tm_lim = g->parm->tm_lim;
    double t0 = glp_time();
    int grc = glp_simplex(g->lp, &sm);
    if (g->parm->tm_lim < INT_MAX) { /* one limit for both phases */
        double left = g->parm->tm_lim - glp_difftime(glp_time(), t0) * 1000;
        g->parm->tm_lim = left > 1 ? (int)left : 1;
    }
    if (grc == 0 && glp_get_status(g->lp) == GLP_NOFEAS)
        grc = GLP_ENOPFS;
    else if (grc == 0 && glp_get_status(g->lp) == GLP_OPT)
        grc = glp_intopt(g->lp, g->parm);
    else
        grc = GLP_EFAIL;
    g->grc = grc;
    g->st = glp_mip_status(g->lp);
    glp_error_hook(NULL, NULL);
    return 0;
}

/* One model: with require_all every item must be placed (fewest hosts; returns 1 when that
 * is infeasible), else as many items as possible, then fewest hosts. */
static int ilp_run(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                   struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err,
                   int require_all, const struct eco_pl_slot *start)
{
    double *start_val = NULL;
    uint32_t ni = in->n_items, nn = in->n_nodes, ng = in->max_gpus ? in->max_gpus : 1;
    if ((double)ni * nn * ng > 2e6)
        return eco_errorf(err, -EINVAL,
                          "ilp: %u items x %u nodes x %u GPUs is too large for the "
                          "exact model (at most 2,000,000 variables)",
                          ni, nn, ng);
    struct cols c = {.ni = ni, .nn = nn, .ng = ng};
    c.x = calloc((size_t)ni * nn + 1, sizeof *c.x);
    c.y = calloc(nn + 1, sizeof *c.y);
    c.z = calloc((size_t)ni * nn * ng + 1, sizeof *c.z);
    int *ia = NULL, *ja = NULL;
    double *ar = NULL;
    glp_prob *lp = NULL;
    int rc = -ENOMEM;
    if (!c.x || !c.y || !c.z)
        goto out;
    lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    /* M > nodes: one more item placed always beats any number of hosts */
    double M = require_all ? 0 : nn + 1.0;
    int ncol = 0;
    for (uint32_t j = 0; j < nn; j++) {
        c.y[j] = ++ncol;
    }
    for (uint32_t i = 0; i < ni; i++)
        for (uint32_t j = 0; j < nn; j++) {
            if (!eco_pl_compatible(in, i, j))
                continue;
            c.x[(size_t)i * nn + j] = ++ncol;
            if (in->items[i].gpus)
                for (uint32_t g = 0; g < in->nodes[j].gpus; g++)
                    c.z[((size_t)i * nn + j) * ng + g] = ++ncol;
        }
    glp_add_cols(lp, ncol ? ncol : 1);
    for (int k = 1; k <= ncol; k++)
        glp_set_col_kind(lp, k, GLP_BV);
    for (uint32_t j = 0; j < nn; j++)
        glp_set_obj_coef(lp, c.y[j], 1.0);
    for (uint32_t i = 0; i < ni; i++)
        for (uint32_t j = 0; j < nn; j++)
            if (c.x[(size_t)i * nn + j] && M > 0)
                glp_set_obj_coef(lp, c.x[(size_t)i * nn + j], -M);

    /* rows, built as triplets */
    size_t cap = 1024, nz = 0;
    ia = malloc(cap * sizeof *ia);
    ja = malloc(cap * sizeof *ja);
    ar = malloc(cap * sizeof *ar);
    if (!ia || !ja || !ar)
        goto out;
    int row = 0;
#define ADD(col, val)                                                                              \
    do {                                                                                           \
        if (nz + 2 >= cap) {                                                                       \
            cap *= 2;                                                                              \
            int *a = realloc(ia, cap * sizeof *ia);                                                \
            if (a)                                                                                 \
                ia = a;                                                                            \
            int *b = realloc(ja, cap * sizeof *ja);                                                \
            if (b)                                                                                 \
                ja = b;                                                                            \
            double *d = realloc(ar, cap * sizeof *ar);                                             \
            if (d)                                                                                 \
                ar = d;                                                                            \
            if (!a || !b || !d)                                                                    \
                goto out;                                                                          \
        }                                                                                          \
        ++nz;                                                                                      \
        ia[nz] = row;                                                                              \
        ja[nz] = (col);                                                                            \
        ar[nz] = (val);                                                                            \
    } while (0)
#define NEW_ROW(type, lb, ub)                                                                      \
    do {                                                                                           \
        row = glp_add_rows(lp, 1);                                                                 \
        glp_set_row_bnds(lp, row, (type), (lb), (ub));                                             \
    } while (0)

    for (uint32_t i = 0; i < ni; i++) { /* each item at most once */
        if (require_all)
            NEW_ROW(GLP_FX, 1, 1);
        else
            NEW_ROW(GLP_UP, 0, 1);
        for (uint32_t j = 0; j < nn; j++)
            if (c.x[(size_t)i * nn + j])
                ADD(c.x[(size_t)i * nn + j], 1);
    }
    for (uint32_t j = 0; j < nn; j++) {
        const struct eco_pl_node *nd = &in->nodes[j];
        NEW_ROW(GLP_UP, 0, 0); /* CPU: sum cpu x <= cap y */
        ADD(c.y[j], -(double)nd->cpu_milli);
        for (uint32_t i = 0; i < ni; i++)
            if (c.x[(size_t)i * nn + j] && in->items[i].cpu_milli)
                ADD(c.x[(size_t)i * nn + j], (double)in->items[i].cpu_milli);
        NEW_ROW(GLP_UP, 0, 0); /* memory */
        ADD(c.y[j], -(double)nd->mem_mib);
        for (uint32_t i = 0; i < ni; i++)
            if (c.x[(size_t)i * nn + j] && in->items[i].mem_mib)
                ADD(c.x[(size_t)i * nn + j], (double)in->items[i].mem_mib);
        for (uint32_t g = 0; g < nd->gpus; g++) { /* each GPU's shares <= 1000 y */
            NEW_ROW(GLP_UP, 0, 0);
            ADD(c.y[j], -(double)ECO_PL_GPU_MILLI);
            for (uint32_t i = 0; i < ni; i++) {
                int z = c.z[((size_t)i * nn + j) * ng + g];
                if (z)
                    ADD(z, in->items[i].gpu_milli);
            }
        }
        /* GPUs of a node are interchangeable: loads in decreasing order */
        for (uint32_t g = 0; g + 1 < nd->gpus; g++) {
            NEW_ROW(GLP_LO, 0, 0);
            for (uint32_t i = 0; i < ni; i++) {
                int z0 = c.z[((size_t)i * nn + j) * ng + g];
                int z1 = c.z[((size_t)i * nn + j) * ng + g + 1];
                if (z0)
                    ADD(z0, in->items[i].gpu_milli);
                if (z1)
                    ADD(z1, -(double)in->items[i].gpu_milli);
            }
        }
        /* identical consecutive nodes are interchangeable: used ones first */
        if (j + 1 < nn && eco_pl_same_node(nd, &in->nodes[j + 1])) {
            NEW_ROW(GLP_LO, 0, 0);
            ADD(c.y[j], 1);
            ADD(c.y[j + 1], -1);
        }
        for (uint32_t i = 0; i < ni; i++) {
            int x = c.x[(size_t)i * nn + j];
            if (!x)
                continue;
            NEW_ROW(GLP_UP, 0, 0); /* x <= y */
            ADD(x, 1);
            ADD(c.y[j], -1);
            if (in->items[i].gpus) { /* GPUs of the item: sum z = gpus x */
                NEW_ROW(GLP_FX, 0, 0);
                ADD(x, -(double)in->items[i].gpus);
                for (uint32_t g = 0; g < nd->gpus; g++)
                    ADD(c.z[((size_t)i * nn + j) * ng + g], 1);
            }
        }
    }
    if (row == 0) {
        NEW_ROW(GLP_FR, 0, 0);
    }
    glp_load_matrix(lp, (int)nz, ia, ja, ar);

    struct cb cb = {.p = p, .M = M, .bound = -INFINITY};
    start_val = start ? malloc((ncol + 1) * sizeof *start_val) : NULL;
    if (start_val && !start_values(in, &c, start, require_all, ncol, start_val))
        cb.start = start_val;
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    /* no MIP presolver: the start's column values must index the original columns, which the
     * presolver renumbers; the LP relaxation is solved first instead (GLPK's requirement) */
    parm.presolve = GLP_OFF;
    parm.gmi_cuts = GLP_ON;
    parm.mir_cuts = GLP_ON;
    parm.cb_func = callback;
    parm.cb_info = &cb;
    if (p->time_limit_s > 0)
        parm.tm_lim = p->time_limit_s * 1000 > 2e9 ? 2000000000 : (int)(p->time_limit_s * 1000);
    struct guarded g = {.lp = lp, .parm = &parm};
    int crashed = guarded_solve(&g);
    int grc = g.grc, st = g.st;
    if (crashed)
        lp = NULL; /* GLPK freed its environment, the problem with it */
    if (require_all && (grc == GLP_ENOPFS || st == GLP_NOFEAS)) {
        rc = 1;
        goto out;
    }
    if (crashed || (st != GLP_OPT && st != GLP_FEAS)) {
        /* no integer solution in time (or a GLPK failure): the start, else bfd's, against
         * the bound */
        if (start) {
            memcpy(slots, start, ni * sizeof *slots);
        } else {
            rc = eco_pl_algo_find("bfd")->solve(in, p, slots, out, err);
            if (rc)
                goto out;
        }
        if (out) {
            out->optimal = 0;
            out->iterations = 0;
        }
    } else {
        for (uint32_t i = 0; i < ni; i++) {
            slots[i] = (struct eco_pl_slot){-1, 0};
            for (uint32_t j = 0; j < nn; j++) {
                int x = c.x[(size_t)i * nn + j];
                if (!x || glp_mip_col_val(lp, x) < 0.5)
                    continue;
                slots[i].node = (int32_t)j;
                for (uint32_t g = 0; g < in->nodes[j].gpus; g++) {
                    int z = c.z[((size_t)i * nn + j) * ng + g];
                    if (z && glp_mip_col_val(lp, z) > 0.5)
                        slots[i].gpus |= 1ull << g;
                }
                break;
            }
        }
        if (out)
            out->optimal = st == GLP_OPT && grc == 0;
    }
    if (out) {
        uint32_t placed = 0, hosts = 0;
        uint8_t *used = calloc(nn + 1, 1);
        for (uint32_t i = 0; i < ni; i++)
            if (slots[i].node >= 0) {
                placed++;
                if (used && !used[slots[i].node]++)
                    hosts++;
            }
        free(used);
        out->objective = hosts;
        /* the bound in hosts for this number of items placed: GLPK's objective bound is
         * hosts - M x placed */
        double b = out->optimal ? hosts : ceil(cb.bound + M * placed - 1e-6);
        if (!(b >= 0))
            b = 0;
        if (b > hosts)
            b = hosts;
        out->bound = b;
        out->gap = hosts > 0 ? (hosts - b) / hosts : 0;
    }
    rc = 0;
out:
#undef ADD
#undef NEW_ROW
    if (lp)
        glp_delete_prob(lp);
    free(start_val);
    free(ia);
    free(ja);
    free(ar);
    free(c.x);
    free(c.y);
    free(c.z);
    return rc;
}

static int solve_ilp(const struct eco_pl_instance *in, const struct eco_pl_params *p,
                     struct eco_pl_slot *slots, struct eco_pl_outcome *out, struct eco_error *err)
{
    if (p->objective != ECO_PL_OBJ_HOSTS)
        return eco_errorf(err, -EINVAL, "ilp: only --objective hosts is supported, not '%s'",
                          eco_pl_objective_name(p->objective));
    /* start: the greedy solution with most items placed, then fewest hosts */
    struct eco_pl_slot *start = malloc((in->n_items ? in->n_items : 1) * sizeof *start);
    struct eco_pl_slot *trial = malloc((in->n_items ? in->n_items : 1) * sizeof *trial);
    int rc = -ENOMEM;
    if (!start || !trial)
        goto out;
    static const char *const starts[] = {"ffd", "bfd", "fgd"};
    uint32_t best_placed = 0, best_hosts = 0;
    for (size_t k = 0; k < 3; k++) {
        struct eco_pl_metrics m;
        if (eco_pl_algo_find(starts[k])->solve(in, p, trial, NULL, err) ||
            eco_pl_metrics_compute(in, NULL, trial, 0, &m))
            goto out;
        if (k == 0 || m.placed > best_placed ||
            (m.placed == best_placed && m.active_hosts < best_hosts)) {
            best_placed = m.placed;
            best_hosts = m.active_hosts;
            memcpy(start, trial, in->n_items * sizeof *start);
        }
    }
    rc = ilp_run(in, p, slots, out, err, 1, start);
    if (rc == 1)
        rc = ilp_run(in, p, slots, out, err, 0, start);
out:
    free(start);
    free(trial);
    return rc;
}

const struct eco_pl_algo eco_pl_algo_ilp = {
    .name = "ilp",
    .summary = "exact (GLPK branch and cut): most items placed, then fewest active hosts; "
               "small instances, with a time limit and the optimality gap",
    .solve = solve_ilp,
};

const struct eco_pl_algo *eco_pl_find_any(const char *name)
{
    if (!strcmp(name, eco_pl_algo_ilp.name))
        return &eco_pl_algo_ilp;
    return eco_pl_algo_find(name);
}

const struct eco_pl_algo *eco_pl_algo_any_at(size_t i)
{
    const struct eco_pl_algo *const *all = eco_pl_algo_all();
    size_t n = 0;
    while (all[n])
        n++;
    return i < n ? all[i] : i == n ? &eco_pl_algo_ilp : NULL;
}
