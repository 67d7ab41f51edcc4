/* SPDX-License-Identifier: MIT */
/* SM clock as a power-capping knob: supported clock levels per GPU type, a model of power and
 * speed versus a locked SM clock fitted to the measured power-limit curves, the clock a power
 * limit settles at, and Slurm --gpu-freq semantics (docs/models/clock.md). Pure. */
#ifndef ECOSCHED_CLOCK_H
#define ECOSCHED_CLOCK_H

#include <stddef.h>
#include "ecosched/error.h"

/* Supported SM clock levels of catalog type `type`, strictly increasing, in MHz (static
 * storage); *n gets their count. NULL (and *n = 0) for an unknown type. */
const double *eco_clock_levels(int type, size_t *n);

/* Range of the clock knob of `type`: *min_mhz the knob's floor (the lowest clock a power limit
 * in the type's range settles at for any measured workload, a level), *max_mhz the highest
 * level. 0 or -EINVAL for an unknown type. */
int eco_clock_range(int type, double *min_mhz, double *max_mhz);

/* The level of `type` nearest to mhz (ties go to the lower one); mhz outside the levels gives
 * the nearest end; NaN gives the highest level. 0 for an unknown type. */
double eco_clock_snap(int type, double mhz);

/* Speed and average power of workload `w` on catalog type `type` with its SM clock locked at
 * clock_mhz (clamped to the type's levels, not snapped): speed relative to the reference GPU
 * as in eco_power_eval, power in W. 0 or -EINVAL (unknown type or workload, clock not finite);
 * speed and power_w may be NULL. */
int eco_clock_eval(int type, size_t w, double clock_mhz, double *speed, double *power_w);

/* The clock a GPU of `type` running workload `w` settles at under power limit limit_w: the
 * clock at which eco_clock_eval's power equals eco_power_eval's power at that limit (not
 * snapped; clamped to the lowest and highest levels). 0 or -EINVAL. */
int eco_clock_equivalent(int type, size_t w, double limit_w, double *clock_mhz);

/* The highest level in the knob's range [floor, max] at which workload `w` on `type` is
 * predicted to draw at most power_w per GPU; the floor when none does. For a power controller
 * (the Slurm one, the daemon) that splits watts and actuates clocks. 0 or -EINVAL. */
int eco_clock_for_power(int type, size_t w, double power_w, double *clock_mhz);

/* A Slurm --gpu-freq request, resolved against one GPU's levels. */
struct eco_gpu_freq {
    double graphics_mhz; /* SM clock to lock, MHz; 0: not requested */
    double memory_mhz;   /* memory clock requested ("memory=" part), MHz; 0: not requested */
    int verbose;         /* "verbose" was given */
};

/* Parses `spec` with the syntax of Slurm's --gpu-freq ("[[type=]value][,[type=]value][,verbose]",
 * type "memory" or "graphics", value "low", "medium", "high", "highm1" or a number of MHz) and
 * resolves the graphics value on `levels` (n levels, strictly increasing) as Slurm does: low is
 * the lowest level, high the highest, highm1 the one below it, medium the middle one of the
 * list in decreasing order (index (n - 1) / 2 from the top); a number above the highest level
 * gives the highest, below the lowest the lowest, and between levels rounds up to the next
 * level. The memory value is kept as given (numbers) or 0 for a keyword (the memory clock
 * lists are not modelled). 0, or -EINVAL with err naming the bad part; *out untouched on
 * error. */
int eco_gpu_freq_parse(const char *spec, const double *levels, size_t n, struct eco_gpu_freq *out,
                       struct eco_error *err);

#endif
