/* Random draws for the instance generators, on the engine's pn_rng
 * (xoshiro256** seeded through splitmix64). Integer arithmetic only, so a
 * seed gives the same stream on every machine and compiler; doubles are
 * built from the top 53 bits. Internal to pngen. */
#ifndef PN_GEN_RNG_H
#define PN_GEN_RNG_H

#include <stdint.h>

#include "parnassus/rng.h"

typedef pn_rng gen_rng;

/* `stream` separates independent uses of the same user seed (e.g. case A1
 * and case A2), so they do not share a sequence. */
static inline void gen_rng_seed(gen_rng *rng, uint64_t seed, uint64_t stream)
{
    pn_rng_seed(rng, seed ^ (stream * 0xD1B54A32D192ED03ull));
}

static inline uint64_t gen_next(gen_rng *rng)
{
    return pn_rng_next(rng);
}

/* Uniform on (0, 1]: never 0, so it can be used as a positive weight. */
static inline double gen_uniform_pos(gen_rng *rng)
{
    return (double)((gen_next(rng) >> 11) + 1) * 0x1.0p-53;
}

/* Uniform integer in [0, bound), bound >= 1, without modulo bias. */
static inline uint64_t gen_below(gen_rng *rng, uint64_t bound)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do
        x = gen_next(rng);
    while (x >= limit);
    return x % bound;
}

/* Uniform integer in [lo, hi], lo <= hi. */
static inline int32_t gen_between(gen_rng *rng, int32_t lo, int32_t hi)
{
    return lo + (int32_t)gen_below(rng, (uint64_t)(hi - lo) + 1);
}

/* Fisher-Yates shuffle of v[0..n-1]. */
static inline void gen_shuffle(gen_rng *rng, int32_t *v, int32_t n)
{
    for (int32_t i = n - 1; i > 0; --i) {
        int32_t j = (int32_t)gen_below(rng, (uint64_t)i + 1);
        int32_t tmp = v[i];
        v[i] = v[j];
        v[j] = tmp;
    }
}

#endif
