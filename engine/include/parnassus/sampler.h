/* Drawing raw inputs from a realization.
 *
 * The solver returns one mass q_k per group; the realized distribution over
 * the raw space is p_x = q_k / |k| for every raw input x of group k. The
 * sampler draws x exactly from p in O(1): an alias table (Walker, Vose) picks
 * the group, a uniform index into the group's member list picks x.
 *
 * Setup (create, *_build of indexes) allocates and belongs off the audio
 * thread. Rebuilds for new masses (pn_alias_build, pn_sampler_set_q,
 * pn_conditional_set_q) allocate nothing. Draws allocate nothing, take no
 * locks and only read the table, so any number of threads may draw from one
 * table at once, each with its own pn_rng. A rebuild must not run while
 * another thread draws from the same object: build the next table in a
 * second object and hand the pointer over (docs/sampler.md). */
#ifndef PARNASSUS_SAMPLER_H
#define PARNASSUS_SAMPLER_H

#include <stdint.h>

#include "parnassus/deoverlap.h"
#include "parnassus/error.h"
#include "parnassus/problem.h"
#include "parnassus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Alias table ----
 *
 * A distribution over {0..n-1} given by nonnegative weights (not all zero,
 * any scale). Column i keeps i with probability keep_i and otherwise yields
 * its alias; a draw picks a column uniformly. The columns represent the
 * normalised weights exactly up to floating rounding (docs/sampler.md). */

typedef struct pn_alias pn_alias;

/* Allocates a table for up to `capacity` weights, 1 <= capacity <=
 * INT32_MAX: 36 bytes per entry. */
pn_error pn_alias_create(int64_t capacity, pn_alias **out, pn_error_info *info);
void pn_alias_free(pn_alias *alias);

/* Rebuilds the table for weights[0..n-1], 1 <= n <= capacity; every weight
 * finite and >= 0, their sum positive and finite. Zeros are allowed (those
 * entries are never drawn). O(n), allocation-free. On error the table is
 * left empty (pn_alias_size returns 0). */
pn_error pn_alias_build(pn_alias *alias, const double *weights, int64_t n, pn_error_info *info);

/* Number of entries of the current table (0 before the first build). */
int64_t pn_alias_size(const pn_alias *alias);

/* One draw from 64 random bits: an index in [0, n), or -1 for an empty
 * table. O(1), reads only; the same bits give the same index. */
int64_t pn_alias_draw(const pn_alias *alias, uint64_t random_bits);

/* Column i of the table: the probability of keeping i and the alias drawn
 * otherwise. For checks: the mass of entry j is the sum over columns of
 * keep (if i == j) and 1 - keep (if alias == j), divided by n. */
void pn_alias_column(const pn_alias *alias, int64_t i, double *keep, int64_t *other);

/* ---- Members of each group ----
 *
 * Compressed lists: for every group, the raw inputs it holds, in increasing
 * order. Memory: 4 n + 8 (K' + 1) bytes. Raw spaces of up to INT32_MAX
 * inputs. */

typedef struct pn_group_index pn_group_index;

/* Builds the lists from group_of[x] in [0, num_groups) for x = 0..n-1 by a
 * counting sort: O(n + K'). Empty groups are allowed. */
pn_error pn_group_index_create(const int32_t *group_of, int64_t n, int64_t num_groups,
                               pn_group_index **out, pn_error_info *info);
void pn_group_index_free(pn_group_index *index);

int64_t pn_group_index_num_groups(const pn_group_index *index);
int64_t pn_group_index_num_inputs(const pn_group_index *index);
/* Size of group k. */
int64_t pn_group_index_size(const pn_group_index *index, int64_t group);
/* The members of group k, pn_group_index_size of them, increasing. */
const int32_t *pn_group_index_members(const pn_group_index *index, int64_t group);

/* A uniform member of group k from 64 random bits; -1 for an empty group.
 * O(1), reads only. */
int64_t pn_group_index_draw(const pn_group_index *index, int64_t group, uint64_t random_bits);

/* Recovers the group of every raw input of prob: runs the cell source once
 * more over the n inputs (in chunks) and looks each input's K-tuple of rows
 * up in a hash table of the problem's groups. O(n K) time, O(K' + K chunk)
 * extra memory; group_of must hold prob->n entries. Fails with
 * PN_ERR_INVALID if a tuple is not a group of prob, two groups share a
 * tuple, or the member counts differ from prob->group_size. Works whatever
 * order the groups are in (e.g. a problem read from a file). */
pn_error pn_group_of_compute(const pn_problem *prob, pn_cell_source source, void *ctx,
                             int32_t *group_of, pn_error_info *info);

/* ---- Sampler: raw inputs from group masses ---- */

typedef struct pn_sampler pn_sampler;

/* A sampler for prob's groups whose members are listed by index (which must
 * outlive the sampler and agree with prob: same number of groups, group k
 * of size prob->group_size[k]). No masses yet: set them with
 * pn_sampler_set_q before drawing. Memory: 36 K' bytes. */
pn_error pn_sampler_create(const pn_problem *prob, const pn_group_index *index, pn_sampler **out,
                           pn_error_info *info);
void pn_sampler_free(pn_sampler *sampler);

/* New group masses q[0..K'-1] (>= 0, finite, not all zero; they need not sum
 * to 1, they are normalised). Allocation-free. On error the sampler draws
 * nothing until the next successful call. */
pn_error pn_sampler_set_q(pn_sampler *sampler, const double *q, pn_error_info *info);

/* A raw input x drawn from p_x = q_k / |k| (q normalised), using two words
 * of rng; -1 if no masses are set. O(1), no allocation, no locks. */
int64_t pn_sampler_draw(const pn_sampler *sampler, pn_rng *rng);

/* count draws into out[0..count-1]. */
void pn_sampler_draw_many(const pn_sampler *sampler, pn_rng *rng, int64_t *out, int64_t count);

/* ---- Conditional draws: one label fixed ----
 *
 * label_of[x] in [0, L) is a label of every raw input (e.g. the soprano of
 * sonority x). Given a label l the conditional draws x from
 * p(x | label l) = p_x / P(l), P(l) the mass of the inputs labelled l: an
 * alias table per label over its nonempty (group, label) pairs, with weights
 * q_k * c_kl / |k| (c_kl members of k labelled l), then a uniform member of
 * the pair. Memory: 4 n + 4 K' + 44 P + 16 L bytes, P the number of nonempty
 * (group, label) pairs (P <= n). */

typedef struct pn_conditional pn_conditional;

/* Setup (allocates): sorts the members of every group by label. label_of
 * has pn_group_index_num_inputs(index) entries; the index may be freed
 * afterwards. No masses yet. */
pn_error pn_conditional_create(const pn_group_index *index, const int32_t *label_of,
                               int32_t num_labels, pn_conditional **out, pn_error_info *info);
void pn_conditional_free(pn_conditional *cond);

/* New group masses (>= 0, finite, not all zero, any scale). Rebuilds every
 * label's table: O(P + L), allocation-free. Mass on a group without members
 * is left out. On error nothing is drawn until the next successful call. */
pn_error pn_conditional_set_q(pn_conditional *cond, const double *q, pn_error_info *info);

/* P, the number of nonempty (group, label) pairs. */
int64_t pn_conditional_num_pairs(const pn_conditional *cond);

/* P(label), the normalised mass of the inputs labelled `label`; 0 for a
 * label out of range. */
double pn_conditional_label_mass(const pn_conditional *cond, int32_t label);

/* A raw input with label `label`, drawn from p(x | label); -1 when the
 * label is out of range, no masses are set or P(label) = 0 (the caller
 * falls back, e.g. to an unconditional draw). O(1), two words of rng. */
int64_t pn_conditional_draw(const pn_conditional *cond, int32_t label, pn_rng *rng);

#ifdef __cplusplus
}
#endif

#endif
