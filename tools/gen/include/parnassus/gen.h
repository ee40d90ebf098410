/* Seeded generators of test instances (library pngen).
 *
 * Every generator is a pure function of its seed: the same seed gives the
 * same problem, bit for bit, on every machine (integer PRNG, doubles from 53
 * random bits, no libm). docs/test-instances.md explains the constructions. */
#ifndef PARNASSUS_GEN_H
#define PARNASSUS_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "parnassus/error.h"
#include "parnassus/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Artificial cases A1 and A2 (paper section 5.1) ----
 *
 * n = 600 raw inputs, K = 5 rules; A1 has rule sizes 80, 50, 60, 60, 60 and
 * A2 70, 50, 65, 65, 65. Rules {1,2} and {3,4} (1-based) are the only
 * consistent subsets of two or more rules. */

typedef enum pn_gen_case {
    PN_GEN_A1 = 1,
    PN_GEN_A2 = 2,
} pn_gen_case;

enum {
    PN_GEN_ARTIFICIAL_N = 600,
    PN_GEN_ARTIFICIAL_RULES = 5,
};

/* Which witness pn_gen_artificial_witness returns. */
enum {
    PN_GEN_WITNESS_RULES_1_2 = 0,
    PN_GEN_WITNESS_RULES_3_4 = 1,
};

/* Builds case `which` for `seed`: targets and groups (via pn_deoverlap), so
 * *out passes pn_problem_validate. */
pn_error pn_gen_artificial(pn_gen_case which, uint64_t seed, pn_problem **out, pn_error_info *info);

/* Writes into p[0..599] the probability vector that realises rules {1,2}
 * (subset 0) or rules {3,4} (subset 1) exactly: A_r p = b_r. */
pn_error pn_gen_artificial_witness(pn_gen_case which, uint64_t seed, int subset, double *p);

/* Writes into cells[0..599] the cell (0-based, local to the rule) of every
 * raw input for rule `rule` (0-based): the partition behind the groups. */
pn_error pn_gen_artificial_assign(pn_gen_case which, uint64_t seed, int32_t rule, int32_t *cells);

/* Writes the case in the full form "parnassus-instance 1". */
pn_error pn_gen_artificial_write_full(FILE *out, pn_gen_case which, uint64_t seed,
                                      pn_error_info *info);

/* ---- A music-sized instance ----
 *
 * Raw inputs are 4-voice sonorities (soprano, alto, tenor, bass); each voice
 * takes one of 55 values: 0 = rest, v = 1..54 = MIDI pitch 30 + v. Input
 * x = ((s * 55 + a) * 55 + t) * 55 + b. Sixteen rules are features of the
 * sonority; the partition does not depend on the seed, only the targets do. */

#define PN_GEN_MUSIC_N ((int64_t)9150625)
enum {
    PN_GEN_MUSIC_VALUES = 55,
    PN_GEN_MUSIC_RULES = 16,
    PN_GEN_MUSIC_ROWS = 2328,      /* m, the total number of cells */
    PN_GEN_MUSIC_GROUPS = 1249781, /* K', the distinct columns of A */
};

/* The rule system without targets or groups: n, K, sizes and names. Handy
 * for timing pn_deoverlap(prob, pn_gen_music_cells, NULL, info). */
pn_error pn_gen_music_rules(pn_problem **out, pn_error_info *info);

/* Builds the full instance: the rules, seeded sparse targets (some pairs of
 * rules conflict by construction) and the groups, de-overlapped from the
 * whole sonority space. */
pn_error pn_gen_music_like(uint64_t seed, pn_problem **out, pn_error_info *info);

/* The cell source of the music rules (a pn_cell_source; ctx is unused and
 * may be NULL). Returns nonzero for a rule or range out of bounds. */
int pn_gen_music_cells(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells);

#ifdef __cplusplus
}
#endif

#endif
