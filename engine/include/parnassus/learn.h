/* Learning a rule set's targets from a corpus: the abstraction step of the
 * paper (docs/learning.md).
 *
 * The rules' features (and their contexts) are given; learning sets every
 * rule's targets to the empirical distribution of its feature over the
 * corpus's sonorities, and, for a rule with a context feature psi, one row
 * per observed value u of psi(x_{t-1}): the distribution of phi(x_t) over
 * the steps that follow a sonority with psi = u, with the number of those
 * observations as the row's count. The rule's smoothing is kept.
 *
 * Pieces are counted separately: a transition never crosses from one piece
 * into the next. A step whose sonority has a pitch outside the rule set's
 * space is skipped, and so is every transition into or out of it.
 *
 * Usage: pn_learn_settings_default(), change what you need, pn_learn(). */
#ifndef PARNASSUS_LEARN_H
#define PARNASSUS_LEARN_H

#include <stdint.h>

#include "parnassus/corpus.h"
#include "parnassus/error.h"
#include "parnassus/rules.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pn_learn_settings {
    /* 0: every step counts once; 1: a step counts its duration in grid
     * units (pn_piece_duration), a transition the duration of the step it
     * goes to. Counts are then durations, not numbers of steps.      (0) */
    int by_duration;
    /* 1: learn the listed contexts of rules that have a context feature;
     * 0: leave those rules with no listed contexts (only the back-off). (1) */
    int contexts;
    /* A context observed fewer times than this (its count) is not listed,
     * so the rule backs off there; >= 0.                              (1) */
    double min_context_count;
} pn_learn_settings;

void pn_learn_settings_default(pn_learn_settings *s);

/* Checks ranges; PN_ERR_INVALID names the bad field. */
pn_error pn_learn_settings_validate(const pn_learn_settings *s, pn_error_info *info);

/* What learning counted. */
typedef struct pn_learn_report {
    int32_t num_pieces;          /* pieces of the corpus */
    int32_t pieces_used;         /* pieces with at least one step counted */
    int64_t steps_used;          /* sonorities counted */
    int64_t steps_skipped;       /* sonorities with a pitch outside the space */
    int64_t transitions_used;    /* consecutive pairs in a piece, both inside the space */
    int64_t transitions_skipped; /* consecutive pairs with a sonority outside */
    double total_weight;         /* sum of the counted steps' weights (= steps_used
                                  * unless by_duration) */
    int64_t contexts_listed;     /* listed contexts, all rules together */
    int64_t contexts_dropped;    /* observed, but fewer than min_context_count times */
    /* The first skipped step (all -1 when none): piece, step and voice
     * (0-based) and the pitch that is outside the voice's range. */
    int32_t skip_piece, skip_step, skip_voice, skip_pitch;
} pn_learn_report;

/* Learns the targets of every rule of rs from the corpus (except those
 * marked "learn": false, pn_rule.fixed, which stay as written), replacing its
 * targets and listed contexts (the old arrays are freed; features, context
 * features and smoothing stay). corpus->num_voices must equal the space's
 * voices. Fails with PN_ERR_INVALID, leaving rs unchanged, when the voices
 * differ or no step of the corpus lies inside the space (then no feature
 * was observed at all). report may be NULL. s may be NULL for the
 * defaults. */
pn_error pn_learn(pn_rule_set *rs, const pn_corpus *corpus, const pn_learn_settings *s,
                  pn_learn_report *report, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
