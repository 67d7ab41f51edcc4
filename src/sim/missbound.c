/* SPDX-License-Identifier: MIT */
/* A clairvoyant lower bound on deadline misses under a power budget (docs/policies/powercap.md,
 * "Bound on deadline misses"): the linear relaxation of "start and split power to meet as many
 * deadlines as possible", knowing every job's arrival, work, deadline and true curves in advance,
 * solved with GLPK's interior-point method. */
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ecosched/clock.h"
#include "engine_internal.h"
#include "util/clock.h"

/* Points of each GPU type's knob range looked at for a job's speed and power (the capper's
 * default grid: docs/policies/powercap.md, "Parameters"). */
#define BOUND_GRID 26

/* Job j's best figures over the node groups it may run on: *e, the least extra power per GPU
 * over an idle GPU per unit of work (W per reference-second per second), over the knob's grid
 * points (time-sharing between that point and not running gives any lower rate at that cost per
 * work, so the line through the origin with that slope is below the job's power-rate curve);
 * *s, the highest speed. 0, or -1 when no group suits it. */
static int job_figures(const struct engine *e, const struct eco_job *j, double *eff, double *spd)
{
    int clock = e->cfg->power_knob == ECO_POWER_KNOB_CLOCK, any = 0;
    *eff = INFINITY;
    *spd = 0;
    for (uint16_t g = 0; g < e->c->n_groups; g++) {
        const struct eco_node_group *grp = &e->c->groups[g];
        if (j->gpu_type >= 0 && grp->type != j->gpu_type)
            continue;
        if (grp->gpus < j->gpus && (uint64_t)grp->gpus * grp->count < j->gpus)
            continue;
        double lo, hi;
        if (eco_powerctl__knob_range(clock, grp->type, &lo, &hi))
            continue;
        for (int k = 0; k < BOUND_GRID; k++) {
            double x = lo + (hi - lo) * k / (BOUND_GRID - 1), s, p;
            int rc = clock ? eco_clock_eval(grp->type, j->workload, x, &s, &p)
                           : eco_power_eval(grp->type, j->workload, x, &s, &p);
            if (rc || !(s > 0))
                continue;
            any = 1;
            double extra = fmax(0.0, p - grp->gpu_idle_w);
            if (extra / s < *eff)
                *eff = extra / s;
            if (s > *spd)
                *spd = s;
        }
    }
    return any ? 0 : -1;
}

/* The budget's energy over [a, b) (J): its steps integrated, the first step's value before it. */
static double budget_energy(const struct eco_sim_config *cfg, double a, double b)
{
    double sum = 0;
    for (size_t i = 0; i < cfg->n_budget; i++) {
        double from = i == 0 ? -INFINITY : cfg->budget[i].t_s;
        double to = i + 1 < cfg->n_budget ? cfg->budget[i + 1].t_s : INFINITY;
        double x = fmax(a, from), y = fmin(b, to);
        if (y > x)
            sum += cfg->budget[i].watts * (y - x);
    }
    return sum;
}

int eco_sim__miss_bound(struct engine *e, double slot_s, struct eco_miss_bound *out,
                        struct eco_error *err)
{
    const struct eco_sim_config *cfg = e->cfg;
    memset(out, 0, sizeof *out);
    out->slot_s = slot_s;
    const double fixed = eco_sim__idle_w(e->c), gpus = (double)e->c->total_gpus;
    /* The deadline jobs that run (not rejected), their window [submit, deadline). */
    size_t n = 0;
    double t0 = INFINITY, t1 = -INFINITY;
    for (size_t i = 0; i < e->n_arrivals; i++) {
        const struct eco_job *j = &e->jobs[e->arrivals[i]];
        if (j->deadline_s < 0)
            continue;
        n++;
        t0 = fmin(t0, j->submit_s);
        t1 = fmax(t1, j->deadline_s);
    }
    out->deadline_jobs = n;
    if (n == 0)
        return 0;
    size_t slots = (size_t)ceil((t1 - t0) / slot_s);
    slots = slots ? slots : 1;
    if (slots > 10000000)
        return eco_errorf(err, -EINVAL,
                          "--miss-bound: %zu slots of %g s over the jobs' windows: give a longer "
                          "slot",
                          slots, slot_s);
    out->slots = slots;
    glp_term_out(GLP_OFF); /* GLPK's messages are not ours */
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    /* rows 1..slots: energy over the idle cluster, in units of the slot's budget room; rows
     * slots+1..2 slots: GPU time, in units of the cluster's GPU time in a slot; then one row per
     * job: its work done less its share met, >= 0 */
    glp_add_rows(lp, (int)(2 * slots));
    double *room = malloc(slots * sizeof *room), val[4];
    int ind[4], rc = 0;
    if (!room) {
        rc = -ENOMEM;
        goto done;
    }
    for (size_t t = 0; t < slots; t++) {
        double a = t0 + (double)t * slot_s, b = a + slot_s;
        room[t] = budget_energy(cfg, a, b) - fixed * slot_s;
        double r = room[t] > 0 ? 1.0 : 0.0;
        glp_set_row_bnds(lp, (int)t + 1, GLP_UP, 0.0, r);
        glp_set_row_bnds(lp, (int)(slots + t) + 1, GLP_UP, 0.0, 1.0);
    }
    for (size_t i = 0; i < e->n_arrivals; i++) {
        const struct eco_job *j = &e->jobs[e->arrivals[i]];
        if (j->deadline_s < 0)
            continue;
        double eff, spd;
        int x = glp_add_cols(lp, 1); /* the share of the job's work done by its deadline */
        glp_set_col_bnds(lp, x, GLP_DB, 0.0, 1.0);
        glp_set_obj_coef(lp, x, 1.0);
        int row = glp_add_rows(lp, 1);
        glp_set_row_bnds(lp, row, GLP_LO, 0.0, 0.0);
        ind[1] = row;
        val[1] = -1.0;
        glp_set_mat_col(lp, x, 1, ind, val);
        if (!(j->duration_s > 0)) { /* no work: met */
            glp_set_row_bnds(lp, row, GLP_LO, -1.0, 0.0);
            continue;
        }
        if (job_figures(e, j, &eff, &spd))
            continue; /* no group to run on: missed */
        double w = j->duration_s;
        size_t a = (size_t)floor((j->submit_s - t0) / slot_s);
        size_t b = (size_t)floor((j->deadline_s - t0) / slot_s);
        b = b < slots ? b : slots - 1;
        for (size_t t = a; t <= b; t++) {
            double sa = t0 + (double)t * slot_s, sb = sa + slot_s;
            double over = fmin(sb, j->deadline_s) - fmax(sa, j->submit_s);
            if (!(over > 0))
                continue;
            /* y: the share of its work done in slot t, at most its top speed over its time
             * there */
            int y = glp_add_cols(lp, 1);
            glp_set_col_bnds(lp, y, GLP_DB, 0.0, fmin(1.0, spd * over / w));
            int k = 0;
            if (room[t] > 0) {
                ind[++k] = (int)t + 1;
                val[k] = j->gpus * eff * w / room[t];
            } else if (eff > 0) {
                glp_set_col_bnds(lp, y, GLP_FX, 0.0, 0.0); /* no room for any extra power */
            }
            ind[++k] = (int)(slots + t) + 1;
            val[k] = j->gpus * (w / spd) / (gpus * slot_s);
            ind[++k] = row;
            val[k] = 1.0;
            glp_set_mat_col(lp, y, k, ind, val);
            out->columns++;
        }
    }
    double c0 = eco_mono_s();
    glp_iptcp ip;
    glp_init_iptcp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    int st = glp_interior(lp, &ip);
    double met = NAN;
    if (st == 0 && glp_ipt_status(lp) == GLP_OPT) {
        met = glp_ipt_obj_val(lp);
    } else {
        glp_smcp sm;
        glp_init_smcp(&sm);
        sm.presolve = GLP_ON;
        sm.msg_lev = GLP_MSG_OFF;
        if (glp_simplex(lp, &sm) == 0 && glp_get_status(lp) == GLP_OPT)
            met = glp_get_obj_val(lp);
    }
    out->solve_s = eco_mono_s() - c0;
    if (isnan(met)) {
        rc = eco_errorf(err, -EINVAL, "--miss-bound: GLPK found no optimum of the relaxation");
        goto done;
    }
    /* The optimum up to the solver's tolerance (1e-6 of each job, relatively): the bound
     * counts whole misses that no schedule can avoid. */
    out->met = fmin((double)n, met);
    double miss = (double)n - out->met - 1e-6 * (double)n;
    out->misses = miss > 0 ? (size_t)ceil(miss) : 0;
done:
    free(room);
    glp_delete_prob(lp);
    return rc;
}
