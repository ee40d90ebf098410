/* Inside the samplers: the alias column and the draw from it, shared by
 * the alias tables (alias_table.c), the group index (group_index.c), the
 * sampler over groups (sampler.c) and the conditional draws
 * (conditional.c). docs/sampler.md explains the layout and the precision.
 *
 * A column of an alias table takes outcome 0 (its own entry) with
 * probability keep/2^64 and outcome 1 (its alias) otherwise. One 64-bit word
 * drives a draw: its product with the table size n, a 128-bit number, has
 * the column in its high word and a uniform coin in its low word.
 *
 * The samplers store, per column and outcome, where the outcome's members
 * start in the member list and how many there are, so a draw reads one
 * column and one member: two memory accesses, whatever the sizes. Internal
 * to the engine. */
#ifndef PN_SAMPLER_INTERNAL_H
#define PN_SAMPLER_INTERNAL_H

#include <stdint.h>

#include "parnassus/sampler.h"

/* Plain tables: first[0] = the column's entry, first[1] = its alias, count
 * unused. Sampler tables: first/count = the members of the two outcomes. */
typedef struct alias_column {
    uint64_t keep;
    uint32_t first[2];
    uint32_t count[2];
} alias_column;

/* Tables and member lists index with 32 bits. */
#define PN_SAMPLER_MAX_SIZE INT32_MAX

/* ---- 64 x 64 -> 128 bit products ---- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 pn_u128;

static inline uint64_t mul_hi_lo(uint64_t a, uint64_t b, uint64_t *lo)
{
    const pn_u128 p = (pn_u128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}
#else
static inline uint64_t mul_hi_lo(uint64_t a, uint64_t b, uint64_t *lo)
{
    const uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    const uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

/* Index in [0, n) from 64 uniform bits (bias below n / 2^64). */
static inline uint64_t below(uint64_t bits, uint64_t n)
{
    uint64_t lo;
    return mul_hi_lo(bits, n, &lo);
}

/* The column and the outcome (0 keep, 1 alias) of one draw. */
static inline const alias_column *column_pick(const alias_column *col, int64_t n, uint64_t bits,
                                              int *outcome)
{
    uint64_t lo;
    const alias_column *c = col + mul_hi_lo(bits, (uint64_t)n, &lo);
    *outcome = lo >= c->keep;
    return c;
}

/* A uniform member of the chosen outcome. */
static inline int64_t member_pick(const alias_column *c, int outcome, const int32_t *members,
                                  uint64_t bits)
{
    return members[c->first[outcome] + below(bits, c->count[outcome])];
}

struct pn_group_index {
    int64_t n;
    int64_t num_groups;
    int64_t *start;   /* num_groups + 1 */
    int32_t *members; /* n */
};

/* Sum with Neumaier's compensation; returns -1 if a weight is negative or
 * not finite. */
double pn_alias_checked_sum(const double *w, int64_t n);

/* Vose's construction over scaled[0..n-1], which holds the weights on
 * entry (scratch afterwards); total is their positive sum; work holds n
 * indices. Fills the plain columns: first[0] = the column's entry,
 * first[1] = its alias. */
void pn_alias_fill(alias_column *col, double *scaled, int64_t n, double total, int32_t *work);

#endif
