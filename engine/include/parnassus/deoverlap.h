/* Group de-overlap: the distinct columns of A (paper section 4.1).
 *
 * Raw inputs are grouped by their cell tuple (cell of rule 1, ..., rule K)
 * without ever materialising A: a cell source hands out the cells of a range
 * of raw inputs for one rule, and the tuples are refined rule by rule. Group
 * numbers follow the order of first appearance in the raw space. */
#ifndef PARNASSUS_DEOVERLAP_H
#define PARNASSUS_DEOVERLAP_H

#include <stdint.h>

#include "parnassus/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes, for rule `rule` and raw inputs first .. first+count-1, each input's
 * cell (a local index in [0, m_r)) into cells[0..count-1]. Returns 0, or
 * nonzero to abort (e.g. a value out of range); the de-overlap then fails
 * with PN_ERR_INVALID. */
typedef int (*pn_cell_source)(void *ctx, int32_t rule, int64_t first, int64_t count,
                              int32_t *cells);

/* Fills prob->num_groups, group_rows and group_size from a cell source over
 * the prob->n raw inputs. Any groups already in prob are replaced. */
pn_error pn_deoverlap(pn_problem *prob, pn_cell_source source, void *ctx, pn_error_info *info);

/* The same, also writing each raw input's group into group_of (n entries):
 * the map a sampler needs to draw members of a group. */
pn_error pn_deoverlap_map(pn_problem *prob, pn_cell_source source, void *ctx, int32_t *group_of,
                          pn_error_info *info);

/* Before de-overlapping n inputs under K rules of the given sizes: an upper
 * bound of the bytes pn_deoverlap_map() takes at its peak, the problem's
 * group table (K' x K rows, K' at most min(n, product of the sizes))
 * included. */
int64_t pn_deoverlap_bytes(int64_t n, int32_t K, const int32_t *rule_sizes);

/* Merges groups that agree on the kept rows: row i of A is kept when
 * keep_row[i] is nonzero; cells of a rule that are not kept collapse into one
 * "don't care" value. Produces num_merged groups, writes merged_of[k] (the
 * merged group of each original group, in order of first appearance) and
 * merged_weight[j] (the number of original groups merged into j). The arrays
 * must hold prob->num_groups entries. Reusable buffers come from the caller
 * through pn_merge_workspace. */
typedef struct pn_merge_workspace pn_merge_workspace;

pn_error pn_merge_workspace_create(const pn_problem *prob, pn_merge_workspace **out,
                                   pn_error_info *info);
void pn_merge_workspace_free(pn_merge_workspace *ws);

/* Cannot fail: the workspace holds all it needs, for any number of rules. */
void pn_merge_groups(const pn_problem *prob, const unsigned char *keep_row, pn_merge_workspace *ws,
                     int64_t *num_merged, int32_t *merged_of, int32_t *merged_weight);

#ifdef __cplusplus
}
#endif

#endif
