/* SPDX-License-Identifier: MIT */
/* The simulator placement `ilp`: the queue of each scheduling pass placed as a batch by the
 * exact ILP (GLPK). It lives at the edge because the core does not link GLPK; the simulator's
 * command finds it through eco_placement_find_any. See docs/policies/placement.md. */
#include <strings.h>
#include "place/place_io.h"
#include "ecosched/policy.h"

/* GLPK's limit per pass, s. A pass that reaches it keeps the best solution found (at least the
 * greedy start), which depends on the machine's speed: runs are byte-identical only while
 * every pass is solved within the limit (docs/policies/placement.md). */
#define ILP_STEP_LIMIT_S 1.0

static int plan_ilp(void **state, const struct eco_freemap *fm, const struct eco_job *jobs,
                    const uint32_t *queue, size_t n, uint64_t seed)
{
    return eco_placement_batch_plan(state, fm, jobs, queue, n, seed, &eco_pl_algo_ilp,
                                    ILP_STEP_LIMIT_S);
}

static int place_best_fit(void *ctx, const struct eco_freemap *fm, const struct eco_job *job,
                          struct eco_alloc *out, size_t cap)
{
    (void)ctx;
    return eco_placement_find("pack")->place(ctx, fm, job, out, cap);
}

const struct eco_placement_ops eco_placement_ilp = {
    .name = "ilp",
    .summary = "the queue of each pass placed as a batch by the exact ILP (GLPK, 1 s per pass); "
               "best fit where the plan no longer fits",
    .place = place_best_fit,
    .plan = plan_ilp,
    .place_planned = eco_placement_batch_place,
    .plan_free = eco_placement_batch_free,
};

const struct eco_placement_ops *eco_placement_find_any(const char *name)
{
    if (!strcasecmp(name, eco_placement_ilp.name))
        return &eco_placement_ilp;
    return eco_placement_find(name);
}

const struct eco_placement_ops *eco_placement_any_at(size_t i)
{
    const struct eco_placement_ops *const *all = eco_placement_all();
    size_t n = 0;
    while (all[n])
        n++;
    return i < n ? all[i] : i == n ? &eco_placement_ilp : NULL;
}
