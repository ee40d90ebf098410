/* Features of a sonority: "descriptor o window" (MUS-ROVER style).
 *
 * A feature is written as text, e.g. `mod12(diff(w(4,1)))`:
 *
 *     feature := window | name "(" feature ")" | "clamp(" int "," int "," feature ")"
 *     window  := "w(" voice { "," voice } ")"
 *
 * A window picks 1..k distinct voices (1-based, 1 = soprano) in the order
 * written; descriptors transform the vector: mod12, diff, rel, sort, order,
 * abs, and clamp(LO,HI,...), which moves every entry below LO up to LO and
 * every entry above HI down to HI (the tail of a value range as one value).
 * A value is an integer vector of length >= 1 whose entries may be the rest
 * marker PN_FEATURE_REST ("R"). docs/features.md gives the full semantics,
 * including how rests propagate.
 *
 * A feature partitions the sonority space by its distinct values.
 * pn_feature_values() enumerates them (over the window's voices only),
 * numbers them 0..m-1 in canonical order (lexicographic, R after every
 * integer) and builds a lookup table, so the cell of a sonority is one
 * table read. pn_feature_cells() is a pn_cell_source over a set of tables
 * for pn_deoverlap(). */
#ifndef PARNASSUS_FEATURE_H
#define PARNASSUS_FEATURE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/problem.h"
#include "parnassus/space.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rest marker inside a feature value; sorts after every integer. */
#define PN_FEATURE_REST INT_MIN

enum {
    PN_FEATURE_MAX_LENGTH = PN_SPACE_MAX_VOICES, /* longest value vector */
    PN_FEATURE_MAX_DEPTH = 16,                   /* most nested descriptors */
    PN_FEATURE_TEXT_MAX = 256,                   /* canonical text, terminator included */
    PN_FEATURE_VALUE_TEXT_MAX = 96,              /* value text, terminator included */
};

/* Largest window product (combinations of the window voices' values)
 * pn_feature_values() enumerates: 2^27. */
#define PN_FEATURE_MAX_COMBINATIONS ((int64_t)1 << 27)

typedef struct pn_feature pn_feature;

/* Parses `text` for a space of `num_voices` voices (1..8). On failure
 * returns PN_ERR_PARSE (PN_ERR_INVALID for a bad num_voices) and a message
 * with the text and the 1-based character position, e.g.
 * "w(1,5): voice 5 out of range 1..4 at position 5". Spaces between
 * tokens are allowed. */
pn_error pn_feature_parse(const char *text, int num_voices, pn_feature **out, pn_error_info *info);

void pn_feature_free(pn_feature *f);

/* Canonical text (no spaces), snprintf-style: writes at most len bytes
 * (terminated when len > 0) and returns the full length. The canonical
 * text parses back to the same feature. */
size_t pn_feature_to_string(const pn_feature *f, char *buf, size_t len);

/* Length of the feature's values (window length minus one per diff or rel). */
int pn_feature_length(const pn_feature *f);

/* Number of voices the feature was parsed for. */
int pn_feature_num_voices(const pn_feature *f);

/* The value of a sonority: pitches holds num_voices entries (negative =
 * rest); value receives pn_feature_length(f) entries (PN_FEATURE_REST for
 * R). Returns the length. */
int pn_feature_eval(const pn_feature *f, const int *pitches, int *value);

/* Lexicographic comparison of two values of the same length, R after
 * every integer: < 0, 0, > 0. */
int pn_feature_value_compare(const int *a, const int *b, int length);

/* Writes a value as text, "4", "R" or "(-7,R)" (a vector of length >= 2 in
 * parentheses), snprintf-style. */
size_t pn_feature_format_value(const int *value, int length, char *buf, size_t len);

/* ---- the values of a feature over a space ---- */

typedef struct pn_feature_table pn_feature_table;

/* Enumerates the distinct values of f over the space (visiting only the
 * product of the window voices' ranges) and builds the lookup table. The
 * feature must have been parsed for space->num_voices voices. The table
 * keeps its own copies of f and the space. */
pn_error pn_feature_values(const pn_feature *f, const pn_space *space, pn_feature_table **out,
                           pn_error_info *info);

void pn_feature_table_free(pn_feature_table *t);

/* m: the number of distinct values (cells). */
int32_t pn_feature_table_size(const pn_feature_table *t);

/* Before pn_feature_values(): an upper bound of the bytes it allocates at
 * its peak for f over space, and of the number of values (cells) it can
 * find. Cheap: nothing is enumerated. */
void pn_feature_cost(const pn_feature *f, const pn_space *space, int64_t *bytes,
                     int64_t *max_cells);

/* The bytes a built table holds. */
int64_t pn_feature_table_bytes(const pn_feature_table *t);

/* The feature and the space the table was built for. */
const pn_feature *pn_feature_table_feature(const pn_feature_table *t);
const pn_space *pn_feature_table_space(const pn_feature_table *t);

/* The value of a cell (pn_feature_length entries), or NULL if out of
 * range. Cells are in canonical order of their values. */
const int *pn_feature_table_value(const pn_feature_table *t, int32_t cell);

/* The value text of a cell, snprintf-style ("" for a cell out of range). */
size_t pn_feature_value_text(const pn_feature_table *t, int32_t cell, char *buf, size_t len);

/* The cell of one sonority (space->num_voices pitches, negative = rest).
 * PN_ERR_INVALID when a pitch of a window voice is outside its range. */
pn_error pn_feature_cell_of(const pn_feature_table *t, const int *pitches, int32_t *cell,
                            pn_error_info *info);

/* The cell of a value given as text ("4", "R", "(-7,R)"; "(4)" is also
 * accepted for length 1; spaces allowed). PN_ERR_PARSE for malformed text
 * or a wrong length, PN_ERR_INVALID when the feature never takes that value
 * over the space. */
pn_error pn_feature_find_value(const pn_feature_table *t, const char *text, int32_t *cell,
                               pn_error_info *info);

/* ---- a cell source for pn_deoverlap ---- */

/* Rule r of the de-overlap is tables[r]. Every table must have been built
 * for `space` (pn_feature_set_check). */
typedef struct pn_feature_set {
    pn_space space;
    int32_t num_tables;
    const pn_feature_table *const *tables;
} pn_feature_set;

/* Checks that every table was built for set->space. */
pn_error pn_feature_set_check(const pn_feature_set *set, pn_error_info *info);

/* A pn_cell_source: ctx is a const pn_feature_set *. Writes the cells of
 * tables[rule] for sonorities first .. first+count-1. Returns nonzero for a
 * rule or range out of bounds or a table built for another space. */
int pn_feature_cells(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells);

/* ---- sums over the rows of every sonority ----
 *
 * For the solver's passes over all groups when every sonority is a group
 * of its own: rule r owns rows first_row(r) + cell, and the sum over the
 * rules of a value per row is wanted for every sonority in order. Walking
 * the space, the rules whose window leaves out the last voice (the bass)
 * are summed once per run of that voice; only the others are read per
 * sonority (pn_problem's row sums). */

typedef struct pn_feature_sums pn_feature_sums;

/* For the tables of set (borrowed: they must outlive the object), rule r
 * owning rows rule_start[r] + cell. */
pn_error pn_feature_sums_create(const pn_feature_set *set, const int32_t *rule_start,
                                pn_feature_sums **out, pn_error_info *info);
void pn_feature_sums_free(pn_feature_sums *s);

/* Sums over the rules r with kept[r] != 0 (every rule when kept is NULL)
 * of v[(rule_start[r] + cell_r(x)) * nv + c] for the sonorities
 * x = first .. first + count - 1 and c < nv (1 or 2): nv values per row,
 * interleaved. The i-th sonority summed is x = first + at[i] (at may be
 * NULL without a bound), its sums out[i * nv + c]; returns how many were
 * summed. Sonorities first .. first + count - 1 must lie in the space.
 * Allocation-free. Each lane (0 .. PN_ROW_SUMS_LANES - 1) has scratch of
 * its own in s: calls with different lanes may run at the same time, calls
 * with the same lane one at a time.
 *
 * Without a cut (NULL) every sonority is summed, in order (at[i] = i).
 * With one, and lower (lower[r * nv + c] at most every value of rule r)
 * or `prepared`, only the sonorities with a sum below the cut (out[i * nv
 * + c] < cut[c] for some c) are given: a run of the last voice whose sums
 * are certainly >= cut[c] for every c (the exact sum of the rules without
 * the last voice plus lower bounds of the others) is left out without
 * reading its rows, the other runs after summing them. Passes that look
 * for small sums skip most of the space, and their callers read only the
 * few sonorities that can matter.
 *
 * `prepared` (nonzero) says that pn_feature_sums_prepare was called with
 * the same kept, v and nv and that none of them changed since: the bounds
 * are then each rule's least over the run at hand, given the upper
 * voices (for a chord over the bass, the least over the bass's pitch
 * classes under these upper voices), and lower is not read. */
int64_t pn_feature_sums_run(pn_feature_sums *s, int lane, const unsigned char *kept,
                            const double *v, int nv, int64_t first, int64_t count,
                            const double *lower, const double *cut, int prepared, int32_t *at,
                            double *out);

/* Per pass, before the bounded runs of a pass with `prepared` and with no
 * run in flight: takes each kept rule's least values from v (a few
 * thousand reads). Allocation-free. */
void pn_feature_sums_prepare(pn_feature_sums *s, const unsigned char *kept, const double *v,
                             int nv);

#ifdef __cplusplus
}
#endif

#endif
