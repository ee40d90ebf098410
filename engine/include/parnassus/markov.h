/* A first-order Markov chain over whole sonorities, the yardstick that
 * generated music is measured against (docs/evaluate.md).
 *
 * States are the sonority events of a corpus (pn_corpus_sonorities: runs of
 * equal steps merged), each a tuple of k voices. Transitions are counted
 * between consecutive events of one piece, never across pieces. The chain
 * is smoothed toward the unigram of all events exactly like a rule set's
 * context rows (docs/rule-format.md):
 *
 *     P(y | x) = (c(x, y) + kappa P(y)) / (c(x) + kappa),
 *
 * c(x, y) the transitions from x to y, c(x) = sum_y c(x, y) and P(y) the
 * share of y among all events; a state never seen as a source uses P(y).
 * kappa = 0 replays the corpus's transitions. Memory is proportional to the
 * number of distinct states and distinct transitions. */
#ifndef PARNASSUS_MARKOV_H
#define PARNASSUS_MARKOV_H

#include <stdint.h>

#include "parnassus/corpus.h"
#include "parnassus/error.h"
#include "parnassus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PN_MARKOV_MAX_VOICES = 16 };

#define PN_MARKOV_DEFAULT_KAPPA 1.0

typedef struct pn_markov pn_markov;

/* Learns the chain from a corpus (1..PN_MARKOV_MAX_VOICES voices, any
 * grid: runs of equal steps are merged first). kappa: finite, >= 0.
 * PN_ERR_INVALID for bad arguments or a corpus without any step. */
pn_error pn_markov_learn(const pn_corpus *corpus, double kappa, pn_markov **out,
                         pn_error_info *info);

void pn_markov_free(pn_markov *m);

int32_t pn_markov_num_voices(const pn_markov *m);
int32_t pn_markov_num_states(const pn_markov *m);
int64_t pn_markov_num_events(const pn_markov *m);      /* events counted for the unigram */
int64_t pn_markov_num_transitions(const pn_markov *m); /* distinct (x, y) pairs seen */
double pn_markov_kappa(const pn_markov *m);

/* The k pitches of state s (voice 1 first; PN_REST for a silent voice), in
 * order of first appearance in the corpus. */
const int8_t *pn_markov_state(const pn_markov *m, int32_t s);

/* The state with these k pitches, or -1. */
int32_t pn_markov_find(const pn_markov *m, const int8_t *pitches);

int64_t pn_markov_unigram_count(const pn_markov *m, int32_t y);    /* events equal to y */
int64_t pn_markov_source_count(const pn_markov *m, int32_t x);     /* c(x) */
int64_t pn_markov_count(const pn_markov *m, int32_t x, int32_t y); /* c(x, y) */

/* P(y | x) by the formula above; x = -1 gives the unigram P(y). */
double pn_markov_prob(const pn_markov *m, int32_t x, int32_t y);

/* Draws the state after x (x = -1: the first state, from the unigram).
 * Deterministic for the generator's state. */
int32_t pn_markov_draw(const pn_markov *m, int32_t x, pn_rng *rng);

/* The same given that voice `voice` (0-based) of the state drawn sounds
 * `pitch` (PN_REST for a rest): a draw from P(y | x) restricted to those
 * states and renormalised, the row's transitions and the unigram share
 * keeping their weights c(x, y) and kappa P(y). -1 when no state has that
 * pitch in that voice, or the voice is out of range. O(states) a draw:
 * it harmonizes a melody (parnassus baseline --midi-in-file). */
int32_t pn_markov_draw_given(const pn_markov *m, int32_t x, int voice, int pitch, pn_rng *rng);

/* The lowest and highest pitch voice `voice` sounds in any state (rests
 * left out); 0 when it never sounds or the voice is out of range. */
int pn_markov_voice_range(const pn_markov *m, int voice, int *low, int *high);

#ifdef __cplusplus
}
#endif

#endif
