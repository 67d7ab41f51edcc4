/* SPDX-License-Identifier: MIT */
/* The edges' clocks: wall time (stored times, epoch s) and monotonic time (timers, samples),
 * in seconds. Header-only so that every edge (daemons, CLI, SPANK plugin, the fake NVML
 * library, benchmarks, tests) has the one copy without linking a library. The core never
 * reads a clock: it takes `now` as an argument. */
#ifndef ECO_UTIL_CLOCK_H
#define ECO_UTIL_CLOCK_H

#include <time.h>

static inline double eco_clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock time, epoch seconds. */
static inline double eco_wall_s(void)
{
    return eco_clock_s(CLOCK_REALTIME);
}

/* Monotonic time, seconds since an arbitrary start. */
static inline double eco_mono_s(void)
{
    return eco_clock_s(CLOCK_MONOTONIC);
}

#endif
