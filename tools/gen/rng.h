/* A small seeded PRNG for the instance generators: xoshiro256** seeded
 * through splitmix64 (Blackman & Vigna). Integer arithmetic only, so a seed
 * gives the same stream on every machine and compiler; doubles are built
 * from the top 53 bits. Internal to pngen. */
#ifndef PN_GEN_RNG_H
#define PN_GEN_RNG_H

#include <stdint.h>

typedef struct gen_rng {
    uint64_t s[4];
} gen_rng;

static inline uint64_t gen_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* `stream` separates independent uses of the same user seed (e.g. case A1
 * and case A2), so they do not share a sequence. */
static inline void gen_rng_seed(gen_rng *rng, uint64_t seed, uint64_t stream)
{
    uint64_t state = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (int i = 0; i < 4; ++i)
        rng->s[i] = gen_splitmix64(&state);
}

static inline uint64_t gen_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t gen_next(gen_rng *rng)
{
    uint64_t *s = rng->s;
    const uint64_t result = gen_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = gen_rotl(s[3], 45);
    return result;
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
