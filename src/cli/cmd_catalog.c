/* SPDX-License-Identifier: MIT */
/* `ecosched catalog`: the built-in GPU types. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "ecosched/catalog.h"

int eco_cli__cmd_catalog(int argc, char **argv)
{
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: ecosched catalog [--sources]\n\n"
                   "Lists the GPU types a cluster spec may name, with memory, idle power and\n"
                   "power-limit range. --sources adds where each figure comes from.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--sources")) {
            verbose = 1;
            continue;
        }
        eco_cli__err("catalog: unknown option '%s' (try 'ecosched catalog --help')", argv[i]);
        return ECO_EXIT_USAGE;
    }
    printf("%-10s %-24s %7s %7s %9s %9s %9s\n", "type", "model", "mem_gb", "idle_w", "min_lim_w",
           "max_lim_w", "default_w");
    for (size_t i = 0; i < eco_catalog_count(); i++) {
        const struct eco_gpu_type *t = eco_catalog_get(i);
        printf("%-10s %-24s %7.0f %7.1f %9.0f %9.0f %9.0f\n", t->name, t->model, t->mem_gb,
               t->idle_w, t->min_limit_w, t->max_limit_w, t->default_limit_w);
        if (verbose)
            printf("           source: %s\n", t->source);
    }
    return 0;
}
