/* SPDX-License-Identifier: MIT */
/* Prints the Markdown tables of docs/models/energy.md ("GPU power and speed") from the model
 * itself. From the repository root, after building eco_core (see "Regenerating" there):
 *   cc -std=c11 -Iinclude scripts/power_doc_table.c build/libeco_core.a -lm -o DEST && DEST */
#include <stdio.h>
#include "ecosched/catalog.h"
#include "ecosched/power.h"
#include "../src/core/power/zeus_tables.h"

static void configurations(void)
{
    printf("| workload | dataset/network | optimizer | batch size | limits measured (W) |\n");
    printf("|---|---|---|---|---|\n");
    for (size_t z = 0; z < ECO_ZEUS_N_WORKLOADS; z++) {
        const struct eco_zeus_workload *w = &eco_zeus_workloads[z];
        printf("| `%s` | %s/%s | %s | %d |", w->name, w->dataset, w->network, w->optimizer,
               w->batch_size);
        for (size_t g = 0; g < ECO_ZEUS_N_GPUS; g++) {
            const struct eco_zeus_curve *c = &eco_zeus_curves[z][g];
            printf("%s %s: %.0f-%.0f (%zu)", g ? "," : "", eco_zeus_gpus[g], c->limit_w[0],
                   c->limit_w[c->n - 1], c->n);
        }
        printf(" |\n");
    }
}

static int speeds_and_powers(void)
{
    printf("| GPU type | workload | min limit (W) | speed | power (W) | default limit (W) | speed "
           "| power (W) |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t t = 0; t < eco_catalog_count(); t++) {
        const struct eco_gpu_type *g = eco_catalog_get(t);
        for (size_t w = 0; w < eco_workload_count(); w++) {
            double s_min, p_min, s_def, p_def;
            if (eco_power_eval((int)t, w, g->min_limit_w, &s_min, &p_min) < 0 ||
                eco_power_eval((int)t, w, g->default_limit_w, &s_def, &p_def) < 0) {
                fprintf(stderr, "power_doc_table: no model for %s\n", g->name);
                return 1;
            }
            printf("| %s | %s | %.0f | %.3f | %.1f | %.0f | %.3f | %.1f |\n", g->name,
                   eco_workload_name(w), g->min_limit_w, s_min, p_min, g->default_limit_w, s_def,
                   p_def);
        }
    }
    return 0;
}

int main(void)
{
    configurations();
    printf("\n");
    return speeds_and_powers();
}
