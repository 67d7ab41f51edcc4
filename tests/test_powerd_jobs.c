/* SPDX-License-Identifier: MIT */
/* `ecosched powerd`'s per-job power and energy (src/slurm/powerd_jobs.c) on hand-made node
 * answers: a two-node job's energy summed over its nodes' runs, a shared GPU's power split
 * between its two jobs, a step that ended kept in the total, a silent node's last figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "slurm/powerd.h"

#define EPS 1e-9

struct fixture {
    struct powerd pd;
    struct pnode nodes[2];
    struct pjob jobs[2];
};

/* Two answering nodes of two GPUs: node 0 at 100 W and 60 W, node 1 at 80 W and 40 W. Job 7
 * holds both GPUs of node 0 and GPU 0 of node 1; job 8 shares node 1's GPU 0 and has GPU 1. */
static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    static const double w[2][2] = {{100, 60}, {80, 40}};
    for (unsigned n = 0; n < 2; n++) {
        f->nodes[n].up = f->nodes[n].seen = true;
        f->nodes[n].n_gpus = 2;
        for (unsigned g = 0; g < 2; g++)
            f->nodes[n].gpu[g].power_w = w[n][g];
    }
    f->jobs[0] = (struct pjob){.id = 7, .running = true, .n = 3};
    f->jobs[0].node[0] = 0, f->jobs[0].gpu[0] = 0;
    f->jobs[0].node[1] = 0, f->jobs[0].gpu[1] = 1;
    f->jobs[0].node[2] = 1, f->jobs[0].gpu[2] = 0;
    f->jobs[1] = (struct pjob){.id = 8, .running = true, .n = 2};
    f->jobs[1].node[0] = 1, f->jobs[1].gpu[0] = 0;
    f->jobs[1].node[1] = 1, f->jobs[1].gpu[1] = 1;
    f->pd.nodes = f->nodes, f->pd.n_nodes = 2;
    f->pd.jobs = f->jobs, f->pd.n_jobs = 2;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

/* The runs node n's daemon lists: (job, run, energy) triples. */
static void runs(struct pnode *nd, unsigned n, const double (*r)[3])
{
    nd->n_sjob = n;
    for (unsigned i = 0; i < n; i++)
        nd->sjob[i] = (struct pnode_job){
            .id = (int64_t)r[i][0], .run = (int64_t)r[i][1], .energy_j = r[i][2]};
}

static void power_split_on_shared_gpu(void **state)
{
    struct fixture *f = *state;
    eco_powerd__job_power(&f->pd);
    /* job 7: 100 + 60 + 80 / 2; job 8: 80 / 2 + 40 */
    assert_true(fabs(f->jobs[0].power_w - 200.0) < EPS);
    assert_true(fabs(f->jobs[1].power_w - 80.0) < EPS);
    /* a silent node's GPUs count 0 W */
    f->nodes[1].up = false;
    eco_powerd__job_power(&f->pd);
    assert_true(fabs(f->jobs[0].power_w - 160.0) < EPS);
    assert_true(fabs(f->jobs[1].power_w - 0.0) < EPS);
}

static void energy_over_nodes_and_steps(void **state)
{
    struct fixture *f = *state;
    /* period 1: job 7 has run 1 on node 0 and run 2 on node 1; job 8 run 3 on node 1 */
    runs(&f->nodes[0], 1, (const double[][3]){{7, 1, 1000}});
    runs(&f->nodes[1], 2, (const double[][3]){{7, 2, 300}, {8, 3, 50}});
    eco_powerd__job_power(&f->pd);
    assert_true(fabs(f->jobs[0].energy_j - 1300.0) < EPS);
    assert_true(fabs(f->jobs[1].energy_j - 50.0) < EPS);
    /* period 2: node 1 silent: its runs keep their last figures */
    f->nodes[1].up = false;
    runs(&f->nodes[0], 1, (const double[][3]){{7, 1, 1500}});
    eco_powerd__job_power(&f->pd);
    assert_true(fabs(f->jobs[0].energy_j - 1800.0) < EPS);
    assert_true(fabs(f->jobs[1].energy_j - 50.0) < EPS);
    /* period 3: node 1 back; job 7's step on node 0 (run 1) ended, a new one (run 4) began */
    f->nodes[1].up = true;
    runs(&f->nodes[0], 1, (const double[][3]){{7, 4, 20}});
    runs(&f->nodes[1], 2, (const double[][3]){{7, 2, 400}, {8, 3, 90}});
    eco_powerd__job_power(&f->pd);
    assert_true(fabs(f->jobs[0].energy_j - (1500.0 + 20.0 + 400.0)) < EPS);
    assert_true(fabs(f->jobs[1].energy_j - 90.0) < EPS);
    /* period 4: every run of job 7 ended on both nodes: its total stays */
    runs(&f->nodes[0], 0, NULL);
    runs(&f->nodes[1], 1, (const double[][3]){{8, 3, 95}});
    eco_powerd__job_power(&f->pd);
    assert_true(fabs(f->jobs[0].energy_j - 1920.0) < EPS);
    assert_true(fabs(f->jobs[1].energy_j - 95.0) < EPS);
    assert_int_equal(f->jobs[0].n_run, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(power_split_on_shared_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(energy_over_nodes_and_steps, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
