/* A small seeded random generator (xoshiro256**, seeded through
 * splitmix64). Every user owns its state: no globals, so it is safe on an
 * audio thread and reproducible for a seed. */
#ifndef PARNASSUS_RNG_H
#define PARNASSUS_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Random bits ----
 *
 * xoshiro256** (Blackman and Vigna), its state filled from the seed by
 * splitmix64. Each pn_rng owns its state: one per thread, no globals. */

typedef struct pn_rng {
    uint64_t s[4];
} pn_rng;

static inline uint64_t pn_rng_splitmix_(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Any seed (0 included) gives a valid, nonzero state. */
static inline void pn_rng_seed(pn_rng *rng, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; ++i)
        rng->s[i] = pn_rng_splitmix_(&state);
}

static inline uint64_t pn_rng_rotl_(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The next 64 random bits. */
static inline uint64_t pn_rng_next(pn_rng *rng)
{
    uint64_t *s = rng->s;
    const uint64_t result = pn_rng_rotl_(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = pn_rng_rotl_(s[3], 45);
    return result;
}

#ifdef __cplusplus
}
#endif

#endif
