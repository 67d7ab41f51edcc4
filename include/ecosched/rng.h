/* SPDX-License-Identifier: MIT */
/* Seeded pseudo-random numbers (xoshiro256**, seeded with splitmix64): same seed, same stream. */
#ifndef ECOSCHED_RNG_H
#define ECOSCHED_RNG_H

#include <stdint.h>

struct eco_rng {
    uint64_t s[4];
};

void eco_rng_init(struct eco_rng *r, uint64_t seed);
uint64_t eco_rng_next(struct eco_rng *r);
/* Uniform in [0, 1). */
double eco_rng_uniform(struct eco_rng *r);

#endif
