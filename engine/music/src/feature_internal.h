/* Inside the feature module: a parsed feature, its value table, and what
 * the files of the module share (feature_parse.c, feature_eval.c,
 * feature_bounds.c, feature_value_set.c, feature_table.c,
 * feature_lookup.c, feature_cells.c) and the row sums (feature_sums.c)
 * read of a table. Internal to the engine. */
#ifndef PN_FEATURE_INTERNAL_H
#define PN_FEATURE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/feature.h"

/* The descriptors of the language. */
typedef enum feature_op {
    OP_MOD12,
    OP_DIFF,
    OP_SORT,
    OP_ORDER,
    OP_ABS,
    OP_REL,
    OP_CLAMP,
} feature_op;

struct pn_feature {
    int num_voices;                  /* k the feature was parsed for */
    int window_len;                  /* L */
    int window[PN_SPACE_MAX_VOICES]; /* 0-based voices, in written order */
    int num_ops;                     /* descriptors, innermost first */
    unsigned char ops[PN_FEATURE_MAX_DEPTH];
    /* the bounds of each clamp (0 for the other descriptors) */
    int lo[PN_FEATURE_MAX_DEPTH], hi[PN_FEATURE_MAX_DEPTH];
    int length; /* length of the values */
};

/* v held to lo..hi: what clamp(LO,HI,...) does to one entry. */
static inline int64_t pn_feature_clamp(int64_t v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

struct pn_feature_table {
    pn_feature feature;
    pn_space space;
    int length;
    int32_t num_cells;
    int *values; /* num_cells x length, in canonical order */
    /* lut index of a sonority = sum over voices of (value index) x
     * vstride[v]; vstride is 0 for voices outside the window */
    int64_t vstride[PN_SPACE_MAX_VOICES];
    int64_t lut_size;
    int32_t *lut;
};

/* Applies the descriptors from first_op on to buf (the window's values,
 * PN_FEATURE_REST for a rest) in place; returns the final length
 * (feature_eval.c). */
int pn_feature_apply_ops(const pn_feature *f, int first_op, int *buf);

/* Bounds lo[i]..hi[i] of each value entry over the space (any entry may
 * also be a rest); with `distinct`, a bound of the number of distinct
 * values (feature_bounds.c). */
void pn_feature_value_bounds(const pn_feature *f, const pn_space *space, int64_t *lo, int64_t *hi,
                             int64_t *distinct);

/* Distinct value vectors of one length, numbered in order of first
 * appearance (feature_value_set.c). */
typedef struct pn_value_set {
    int length;
    int *values; /* count x length */
    size_t count, capacity;
    int32_t *slots; /* -1 = empty */
    size_t mask;
} pn_value_set;

/* 0, or -1 when out of memory. */
int pn_value_set_init(pn_value_set *vs, int length);
void pn_value_set_free(pn_value_set *vs);
/* The id of value v, adding it if new; -1 when out of memory. */
int32_t pn_value_set_get(pn_value_set *vs, const int *v);
/* Stable merge sort of ids (count of them, tmp as scratch) by their value
 * vectors, in canonical order. */
void pn_value_set_sort_ids(const pn_value_set *vs, int32_t *ids, int32_t *tmp, size_t count);

/* The lookup: cell = lut[sum over voices v of (value index of v) *
 * vstride(v)]; vstride is 0 for voices outside the window. */
const int32_t *pn_feature_table_lut(const pn_feature_table *t);
int64_t pn_feature_table_vstride(const pn_feature_table *t, int voice);

/* ---- per-run bounds (feature_run_low.c) ----
 *
 * For the row sums' bounded passes: the least that one rule with the last
 * voice adds over a run of that voice, given the digits of the upper
 * voices in its window (its key). The distinct cells of each key's run
 * are listed once, when the row sums are made; each pass, prepare takes
 * the rule's least value and, for a rule with few keys, the least per key;
 * a rule with many keys whose lists are short is bounded from its list,
 * run by run. */
typedef enum pn_run_low_kind {
    PN_RUN_LOW_RULE,  /* only the rule's least over all its rows */
    PN_RUN_LOW_TABLE, /* the least per key, kept per pass */
    PN_RUN_LOW_LIST,  /* the least of the key's list, when asked */
} pn_run_low_kind;

typedef struct pn_run_low {
    pn_run_low_kind kind;
    int64_t kstride[PN_SPACE_MAX_VOICES]; /* key = sum of upper digits x kstride */
    int64_t num_keys;
    int32_t *list_start; /* num_keys + 1; the cells of key k's run are */
    int32_t *list_cell;  /* list_cell[list_start[k] .. list_start[k + 1]) */
    double *key_low;     /* TABLE: 2 per key, per pass */
    double low[2];       /* the rule's least over all rows, per pass */
} pn_run_low;

/* For table t (its window has the last voice) over space. The lists hold
 * at most half as many entries as t's lookup; without the memory for
 * them, the kind is PN_RUN_LOW_RULE. */
void pn_run_low_init(pn_run_low *rl, const pn_feature_table *t, const pn_space *space);
void pn_run_low_free(pn_run_low *rl);
/* Per pass: rows[cell * nv + c] are the rule's values. */
void pn_run_low_prepare(pn_run_low *rl, const double *rows, int32_t num_rows, int nv);
/* The least value c < nv of the rule over the run whose upper voices have
 * digit[0 .. num_upper - 1], into low[c]; rows as prepared. */
void pn_run_low_at(const pn_run_low *rl, const int *digit, int num_upper, const double *rows,
                   int nv, double *low);

#endif
