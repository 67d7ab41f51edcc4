/* SPDX-License-Identifier: MIT */
/* A clairvoyant lower bound on the jobs' own carbon when every job runs within its window and
 * the cluster's GPUs (docs/policies/carbon.md, "Bound: least carbon within the windows"): the
 * linear relaxation of "place each job's work in the cleanest hours of its window", knowing
 * every job's arrival, run time, energy and the true signal in advance, a job's work divisible
 * across slots (at most its full speed in each), the GPUs of each slot a single pool. Solved with
 * GLPK (interior point, the simplex if that fails). */
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine_internal.h"
#include "util/clock.h"

/* At most this many columns (job x slot pairs): about 1 GB of GLPK's memory. */
#define MAX_COLUMNS 20000000

/* Least value of the signal over [a, b) (a < b; the cover's first or last value outside it). */
static double least_in(const struct eco_signal *s, double a, double b)
{
    size_t lo = 0, hi = s->n; /* the first piece that ends after a */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->t[mid + 1] > a)
            hi = mid;
        else
            lo = mid + 1;
    }
    double m = INFINITY;
    for (size_t i = lo; i < s->n && s->t[i] < b; i++)
        if (s->v[i] < m)
            m = s->v[i];
    return isinf(m) ? eco_signal_value(s, a) : m;
}

/* Solves lp (interior point, the simplex if that fails); its optimum, NAN when none. */
static double solve(glp_prob *lp)
{
    glp_iptcp ip;
    glp_init_iptcp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    if (glp_interior(lp, &ip) == 0 && glp_ipt_status(lp) == GLP_OPT)
        return glp_ipt_obj_val(lp);
    glp_smcp sm;
    glp_init_smcp(&sm);
    sm.presolve = GLP_ON;
    sm.msg_lev = GLP_MSG_OFF;
    if (glp_simplex(lp, &sm) == 0 && glp_get_status(lp) == GLP_OPT)
        return glp_get_obj_val(lp);
    return NAN;
}

int eco_carbon_lp_bound(const struct eco_carbon_bound_job *jobs, size_t n, double cluster_gpus,
                        const struct eco_signal *carbon, double slot_s,
                        struct eco_carbon_bound *out, struct eco_error *err)
{
    memset(out, 0, sizeof *out);
    out->slot_s = slot_s;
    if (!(slot_s >= 1) || !isfinite(slot_s))
        return eco_errorf(err, -EINVAL, "--carbon-bound: the slot must be at least 1 s (got %g)",
                          slot_s);
    if (!carbon || carbon->kind != ECO_SIGNAL_CARBON)
        return eco_errorf(err, -EINVAL, "--carbon-bound needs a carbon signal (--carbon FILE)");
    if (!(cluster_gpus > 0))
        return eco_errorf(err, -EINVAL, "--carbon-bound: the cluster has no GPUs");
    /* Slots are whole multiples of slot_s on the calendar, so that with the signal's step (an
     * hour) each slot lies inside one of its pieces. */
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const struct eco_carbon_bound_job *j = &jobs[i];
        if (!(j->run_s > 0) || !(j->energy_kwh > 0))
            continue;
        if (!(j->end_s >= j->submit_s + j->run_s) || !isfinite(j->end_s) || j->gpus == 0)
            return eco_errorf(err, -EINVAL,
                              "--carbon-bound: job %zu: its window [%g, %g) is shorter than its "
                              "run %g s, or it has no GPUs",
                              i, j->submit_s, j->end_s, j->run_s);
        t0 = fmin(t0, j->submit_s);
        t1 = fmax(t1, j->end_s);
        out->jobs++;
    }
    if (out->jobs == 0)
        return 0;
    double k0 = floor(t0 / slot_s);
    size_t slots = (size_t)(ceil(t1 / slot_s) - k0);
    slots = slots ? slots : 1;
    if (slots > 10000000)
        return eco_errorf(err, -EINVAL,
                          "--carbon-bound: %zu slots of %g s over the jobs' windows: give a "
                          "longer slot",
                          slots, slot_s);
    out->slots = slots;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    /* rows 1..slots: GPU time, in units of the cluster's GPU time in a slot; then one row per
     * job: the shares of its work add up to 1 */
    glp_add_rows(lp, (int)slots);
    for (size_t t = 0; t < slots; t++)
        glp_set_row_bnds(lp, (int)t + 1, GLP_UP, 0.0, 1.0);
    int rc = 0, ind[3], *late_col = NULL;
    double val[3], *late_cost = NULL, *late_gpuh = NULL, *cost = NULL, max_rate = 0;
    double max_ci = 0;
    for (size_t i = 0; i < carbon->n; i++)
        max_ci = fmax(max_ci, carbon->v[i]);
    size_t nlate = 0, cap_late = 0, ncost = 0, cap_cost = 0;
    for (size_t i = 0; i < n; i++) {
        const struct eco_carbon_bound_job *j = &jobs[i];
        if (!(j->run_s > 0) || !(j->energy_kwh > 0))
            continue;
        int row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_FX, 1.0, 1.0);
        /* overflow: its work that the slots cannot hold within its window (an overloaded
         * cluster queues jobs past their window whatever the policy), on no slot's GPUs, weighed
         * at the cleanest hour of its window, and made as small as the capacity allows (the
         * penalty below) */
        int late = glp_add_cols(lp, 1);
        glp_set_col_bnds(lp, late, GLP_LO, 0.0, 0.0);
        glp_set_obj_coef(lp, late, 0.0); /* set before the solve */
        if (nlate == cap_late) {
            size_t nc = cap_late ? 2 * cap_late : 1024;
            double *q = realloc(late_cost, nc * sizeof *q);
            if (q)
                late_cost = q;
            double *qg = realloc(late_gpuh, nc * sizeof *qg);
            if (qg)
                late_gpuh = qg;
            int *qi = realloc(late_col, nc * sizeof *qi);
            if (qi)
                late_col = qi;
            if (!q || !qg || !qi) {
                rc = -ENOMEM;
                goto done;
            }
            cap_late = nc;
        }
        late_col[nlate] = late;
        late_gpuh[nlate] = (double)j->gpus * j->run_s / 3600.0;
        late_cost[nlate++] = j->energy_kwh * least_in(carbon, j->submit_s, j->end_s) / 1000.0;
        max_rate = fmax(max_rate, j->energy_kwh / late_gpuh[nlate - 1]);
        ind[1] = row;
        val[1] = 1.0;
        glp_set_mat_col(lp, late, 1, ind, val);
        size_t a = (size_t)(floor(j->submit_s / slot_s) - k0);
        size_t b = (size_t)(ceil(j->end_s / slot_s) - k0);
        b = b < slots ? b : slots;
        for (size_t t = a; t < b; t++) {
            double sa = (k0 + (double)t) * slot_s, sb = sa + slot_s;
            double x = fmax(sa, j->submit_s), y = fmin(sb, j->end_s);
            if (!(y > x))
                continue;
            if (out->columns >= MAX_COLUMNS) {
                rc = eco_errorf(err, -EINVAL,
                                "--carbon-bound: more than %d job-slot pairs: give a longer slot",
                                MAX_COLUMNS);
                goto done;
            }
            /* the share of its work done in slot t: at most its time there at full speed */
            int c = glp_add_cols(lp, 1);
            glp_set_col_bnds(lp, c, GLP_DB, 0.0, fmin(1.0, (y - x) / j->run_s));
            /* the least intensity over its part of the slot: exact when the slot lies in one
             * piece of the signal (an hour for an hourly signal), a lower bound otherwise */
            double ci = least_in(carbon, x, y);
            glp_set_obj_coef(lp, c, 0.0); /* set before the solve: energy x ci / 1000 */
            if (ncost == cap_cost) {
                size_t nc = cap_cost ? 2 * cap_cost : 4096;
                double *q = realloc(cost, nc * sizeof *q);
                if (!q) {
                    rc = -ENOMEM;
                    goto done;
                }
                cost = q;
                cap_cost = nc;
            }
            cost[ncost++] = j->energy_kwh * ci / 1000.0;
            ind[1] = (int)t + 1;
            val[1] = (double)j->gpus * j->run_s / (cluster_gpus * slot_s);
            ind[2] = row;
            val[2] = 1.0;
            glp_set_mat_col(lp, c, 2, ind, val);
            out->columns++;
        }
    }
    glp_term_out(GLP_OFF); /* GLPK's messages are not ours */
    double c0 = eco_mono_s(), kg = NAN;
    /* One solve, overflow first: each GPU-hour of overflow costs more than the most carbon a
     * GPU-hour freed in some slot can save elsewhere (the most energy per GPU-hour times the
     * highest intensity), so the optimum has the least overflow the capacity allows and, with
     * it, the least carbon; the penalty is taken off the optimum. */
    double pen = 2.0 * max_rate * max_ci / 1000.0 + 1.0;
    size_t k = 0, q = 0;
    for (int c = 1; c <= glp_get_num_cols(lp); c++) {
        if (glp_get_col_type(lp, c) == GLP_LO) {
            glp_set_obj_coef(lp, c, late_cost[q] + pen * late_gpuh[q]);
            q++;
        } else {
            glp_set_obj_coef(lp, c, cost[k++]);
        }
    }
    double opt = solve(lp);
    if (!isnan(opt)) {
        double over = 0, late = 0;
        for (size_t i = 0; i < nlate; i++) {
            double x = glp_ipt_status(lp) == GLP_OPT ? glp_ipt_col_prim(lp, late_col[i])
                                                     : glp_get_col_prim(lp, late_col[i]);
            over += pen * late_gpuh[i] * x;
            late += x;
        }
        kg = opt - over;
        out->late = late;
    }
    out->solve_s = eco_mono_s() - c0;
    if (isnan(kg)) {
        rc = eco_errorf(err, -EINVAL, "--carbon-bound: GLPK found no optimum of the relaxation");
        goto done;
    }
    out->kg = kg;
done:
    free(late_col);
    free(late_cost);
    free(late_gpuh);
    free(cost);
    glp_delete_prob(lp);
    return rc;
}
