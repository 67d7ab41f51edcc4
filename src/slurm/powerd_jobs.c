/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`: each running Slurm job's GPU power and energy from one period's node
 * answers, for GET /metrics and the status (docs/slurm/powerd.md, "Metrics"). No I/O. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "powerd.h"

/* How many running jobs hold GPU g of node ni (a GPU Slurm shares, e.g. with shards). */
static unsigned gpu_holders(const struct powerd *pd, uint32_t ni, uint32_t g)
{
    unsigned n = 0;
    for (size_t k = 0; k < pd->n_jobs; k++)
        for (unsigned q = 0; pd->jobs[k].running && q < pd->jobs[k].n; q++)
            n += pd->jobs[k].node[q] == ni && pd->jobs[k].gpu[q] == g;
    return n;
}

/* Job j's energy: the runs of it the node daemons list (each one's measured share of its
 * GPUs' energy counters) plus those that ended. A run that an answering node no longer lists
 * ended: its last figure moves to ended_j; a silent node's runs keep their last figure. */
static void job_energy(const struct powerd *pd, struct pjob *j)
{
    unsigned kept = 0;
    for (unsigned r = 0; r < j->n_run; r++) {
        const struct pnode *nd = &pd->nodes[j->run[r].node];
        bool listed = !nd->up;
        for (unsigned s = 0; !listed && s < nd->n_sjob; s++)
            listed = nd->sjob[s].id == j->id && nd->sjob[s].run == j->run[r].run;
        if (listed)
            j->run[kept++] = j->run[r];
        else
            j->ended_j += j->run[r].energy_j;
    }
    j->n_run = kept;
    for (size_t i = 0; i < pd->n_nodes; i++) {
        const struct pnode *nd = &pd->nodes[i];
        for (unsigned s = 0; nd->up && s < nd->n_sjob; s++) {
            if (nd->sjob[s].id != j->id)
                continue;
            unsigned r = 0;
            while (r < j->n_run && (j->run[r].node != i || j->run[r].run != nd->sjob[s].run))
                r++;
            if (r == j->n_run) {
                if (j->n_run >= MAX_GPUS) /* more concurrent runs than slots: not counted */
                    continue;
                j->run[j->n_run++] = (struct prun){.node = (uint32_t)i, .run = nd->sjob[s].run};
            }
            j->run[r].energy_j = fmax(j->run[r].energy_j, nd->sjob[s].energy_j);
        }
    }
    double e = j->ended_j;
    for (unsigned r = 0; r < j->n_run; r++)
        e += j->run[r].energy_j;
    j->energy_j = e;
}

/* A job's power: the measured power of each of its GPUs on an answering node, split equally
 * among the running jobs holding that GPU (powerd sees no per-process share). Its energy:
 * job_energy, the node daemons' own figures summed. */
void eco_powerd__job_power(struct powerd *pd)
{
    for (size_t k = 0; k < pd->n_jobs; k++) {
        struct pjob *j = &pd->jobs[k];
        double w = 0;
        for (unsigned q = 0; j->running && q < j->n; q++) {
            const struct pnode *nd = &pd->nodes[j->node[q]];
            unsigned h = gpu_holders(pd, j->node[q], j->gpu[q]);
            if (nd->up && j->gpu[q] < nd->n_gpus && h)
                w += nd->gpu[j->gpu[q]].power_w / h;
        }
        j->power_w = w;
        job_energy(pd, j);
    }
}
