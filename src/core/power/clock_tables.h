/* SPDX-License-Identifier: MIT */
/* Internal: the supported SM clock levels per catalog type and the clock model fitted to the
 * measured power-limit curves, written by scripts/gen_clock_tables.py into clock_tables.c;
 * read only by src/core/power/clock.c (docs/models/clock.md). */
#ifndef ECOSCHED_CLOCK_TABLES_H
#define ECOSCHED_CLOCK_TABLES_H

#include <stddef.h>
#include "zeus_tables.h"

#define ECO_CLOCK_N_TYPES 8

/* One catalog type's clocks. */
struct eco_clock_type_table {
    const char *name; /* catalog name */
    size_t n_levels;
    const double *levels_mhz; /* supported SM clocks, strictly increasing */
    double floor_mhz;         /* lowest level of the clock knob (docs/models/clock.md) */
    const char *source;
};

/* Fitted parameters of one measured (workload, GPU) curve. */
struct eco_clock_fit {
    double static_w;  /* power that does not scale with the SM clock, W */
    double gamma;     /* dynamic power ~ (f / f_max)^gamma */
    double mem_share; /* share of the time at f_max that does not scale with the clock, 0..1 */
    double max_err;   /* largest relative speed error against the measured curve */
};

extern const struct eco_clock_type_table eco_clock_types[ECO_CLOCK_N_TYPES];
extern const struct eco_clock_fit eco_clock_fits[ECO_ZEUS_N_WORKLOADS][ECO_ZEUS_N_GPUS];

#endif
