/* Sequential generation from a rule set: draw x_t from the current
 * realization p*, make x_t every context rule's previous sonority, re-realize
 * warm, draw x_{t+1} (docs/generate.md).
 *
 * A generator owns everything one rule set needs: the de-overlapped problem
 * (built once: contexts change only the targets), each sonority's group,
 * the solver, and a sampler over the groups. Setup allocates; after it,
 * pn_generator_advance(), pn_generator_set_knobs() and the draws allocate
 * nothing. Draws only read, so one generator's draws may run on one thread
 * while nothing else touches it; the generator itself is not thread-safe. */
#ifndef PARNASSUS_GENERATE_H
#define PARNASSUS_GENERATE_H

#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/problem.h"
#include "parnassus/rng.h"
#include "parnassus/rules.h"
#include "parnassus/sampler.h"
#include "parnassus/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pn_generator pn_generator;

/* Builds the problem of rs (which must outlive the generator), sets up the
 * solver with `settings` (NULL = defaults) and realizes the first step's
 * targets (every context rule backs off) with a cold solve. */
pn_error pn_generator_create(const pn_rule_set *rs, const pn_settings *settings, pn_generator **out,
                             pn_error_info *info);
void pn_generator_free(pn_generator *gen);

/* New knobs and a warm re-realization (with the settings' warm_pool). */
pn_error pn_generator_set_knobs(pn_generator *gen, double log2_lambda_w, double alpha,
                                pn_error_info *info);

/* Makes `previous` (k pitches, negative = rest; NULL = start over) the
 * context of the next step and re-realizes warm from the current solution
 * alone (warm_pool 0: trying other known selections every step would cost
 * a full solve each). PN_ERR_INVALID when a pitch is outside the space. */
pn_error pn_generator_advance(pn_generator *gen, const int *previous, pn_error_info *info);

/* New knobs and a new context at once, then one warm re-realization: what
 * a live instrument needs when a knob moved while the music went on. Uses
 * the caller's warm_pool when the knobs changed and warm_pool 0 when only
 * the context did. `previous` as in pn_generator_advance (NULL = start
 * over). */
pn_error pn_generator_update(pn_generator *gen, double log2_lambda_w, double alpha,
                             const int *previous, pn_error_info *info);

/* A sonority drawn from the current realization into pitches (k entries,
 * PN_REST for a rest), conditioned on the rule set's constraints (the move
 * from the current context keeps them): draws are repeated up to
 * PN_CONSTRAINT_TRIES times, then the last one is kept and counted in
 * pn_generator_constraint_misses(). Returns its index x in the space. */
int64_t pn_generator_draw(pn_generator *gen, pn_rng *rng, int *pitches);

/* Draws that kept a move breaking the constraints (see pn_generator_draw). */
uint64_t pn_generator_constraint_misses(const pn_generator *gen);

/* Realizations that lost the rule system the last steady one kept (at
 * least 3 rules fewer and under 7/8 of its components: the selection trap,
 * where the warm start alone would keep the rules out at the next contexts
 * too) and were realized again from that steady selection
 * (docs/generate.md). */
uint64_t pn_generator_recoveries(const pn_generator *gen);

/* A sonority drawn from the current realization given that voice `voice`
 * (0-based) sounds `pitch` (negative = rests): p(x | x_voice = pitch),
 * conditioned on the constraints as pn_generator_draw.
 * Returns -1, writing nothing, when the voice's range does not hold the
 * pitch or the realization gives it no mass. Sets up the voice's
 * conditional tables at the first call for that voice (allocates then;
 * pn_generator_prepare_conditional() does it ahead of time). */
int64_t pn_generator_draw_given(pn_generator *gen, int voice, int pitch, pn_rng *rng, int *pitches);
pn_error pn_generator_prepare_conditional(pn_generator *gen, int voice, pn_error_info *info);

/* Why the last pn_generator_draw_given() that returned -1 could not set
 * up its tables (code PN_OK when that was not the reason). */
const pn_error_info *pn_generator_given_error(const pn_generator *gen);

/* One step of sequential generation: draw, then advance to it. */
pn_error pn_generator_step(pn_generator *gen, pn_rng *rng, int *pitches, pn_error_info *info);

const pn_rule_set *pn_generator_rules(const pn_generator *gen);
const pn_problem *pn_generator_problem(const pn_generator *gen);
const pn_solver *pn_generator_solver(const pn_generator *gen);
/* Each group's sonorities: for samplers and conditionals built beside the
 * generator's own (e.g. double-buffered for an audio thread). */
const pn_group_index *pn_generator_group_index(const pn_generator *gen);
/* For callers that draw only from samplers of their own: frees the
 * generator's sampler, so realizations no longer rebuild it (one alias
 * table less per step); pn_generator_draw then returns -1. */
void pn_generator_release_sampler(pn_generator *gen);
/* The targets b of the current step (m entries). */
const double *pn_generator_targets(const pn_generator *gen);
/* How the last realization ended. */
const pn_info *pn_generator_last_info(const pn_generator *gen);

#ifdef __cplusplus
}
#endif

#endif
