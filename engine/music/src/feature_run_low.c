/* The least one rule with the last voice adds over a run of that voice,
 * given the upper voices (feature_internal.h, "per-run bounds"). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "feature_internal.h"

/* Rules with at most this many keys get a least value per key at each
 * prepare (a tenor-bass interval: one per tenor pitch); rules with more
 * are bounded run by run from their list, when that is at most half a
 * run long (a chord relative to the bass: the bass's twelve pitch
 * classes, against 30-odd pitches). */
enum { TABLE_KEYS = 4096 };

void pn_run_low_free(pn_run_low *rl)
{
    free(rl->list_start);
    free(rl->list_cell);
    free(rl->key_low);
    rl->list_start = rl->list_cell = NULL;
    rl->key_low = NULL;
    rl->kind = PN_RUN_LOW_RULE;
}

/* The digits of the upper window voices of key, at their strides: the
 * lookup offset of the key's first run. */
static int64_t key_base(const pn_feature_table *t, const pn_space *space, const int64_t *kstride,
                        int64_t key)
{
    int64_t base = 0;
    for (int v = space->num_voices - 2; v >= 0; --v) {
        if (!kstride[v])
            continue;
        const int radix = pn_space_radix(space, v);
        base += (key / kstride[v]) % radix * t->vstride[v];
    }
    return base;
}

/* Walks the distinct cells of every key's run (seen: num_cells stamps);
 * writes them to cell when given, with each key's first at start[key].
 * Returns how many there are. */
static int64_t list_cells(pn_run_low *rl, const pn_feature_table *t, const pn_space *space,
                          int64_t *seen, int32_t *start, int32_t *cell)
{
    const int last = space->num_voices - 1, run = pn_space_radix(space, last);
    for (int32_t c = 0; c < t->num_cells; ++c)
        seen[c] = -1;
    int64_t entries = 0;
    for (int64_t key = 0; key < rl->num_keys; ++key) {
        if (start)
            start[key] = (int32_t)entries;
        const int32_t *lut = t->lut + key_base(t, space, rl->kstride, key);
        for (int d = 0; d < run; ++d) {
            const int32_t c = lut[d * t->vstride[last]];
            if (seen[c] == key)
                continue;
            seen[c] = key;
            if (cell)
                cell[entries] = c;
            ++entries;
        }
    }
    if (start)
        start[rl->num_keys] = (int32_t)entries;
    return entries;
}

void pn_run_low_init(pn_run_low *rl, const pn_feature_table *t, const pn_space *space)
{
    *rl = (pn_run_low){.kind = PN_RUN_LOW_RULE};
    const int last = space->num_voices - 1;
    int64_t keys = 1;
    for (int v = last - 1; v >= 0; --v) {
        if (!t->vstride[v])
            continue;
        rl->kstride[v] = keys;
        keys *= pn_space_radix(space, v);
    }
    rl->num_keys = keys;
    int64_t *seen = malloc((size_t)t->num_cells * sizeof *seen);
    if (!seen)
        return; /* the rule's least serves: the bounds are a shortcut */
    const int64_t entries = list_cells(rl, t, space, seen, NULL, NULL);
    const pn_run_low_kind kind = entries > INT32_MAX  ? PN_RUN_LOW_RULE /* beyond list_start */
                                 : keys <= TABLE_KEYS ? PN_RUN_LOW_TABLE
                                 : 2 * entries <= keys * pn_space_radix(space, last)
                                     ? PN_RUN_LOW_LIST
                                     : PN_RUN_LOW_RULE; /* no cheaper than summing the run */
    if (kind != PN_RUN_LOW_RULE) {
        rl->list_start = malloc((size_t)(keys + 1) * sizeof *rl->list_start);
        rl->list_cell = malloc((size_t)entries * sizeof *rl->list_cell);
        if (kind == PN_RUN_LOW_TABLE)
            rl->key_low = malloc((size_t)keys * 2 * sizeof *rl->key_low);
        if (rl->list_start && rl->list_cell && (kind == PN_RUN_LOW_LIST || rl->key_low)) {
            list_cells(rl, t, space, seen, rl->list_start, rl->list_cell);
            rl->kind = kind;
        } else {
            pn_run_low_free(rl);
        }
    }
    free(seen);
}

/* The least of rows[cell * nv + c] over the cells of one key's list. */
static void list_least(const pn_run_low *rl, int64_t key, const double *rows, int nv, double *low)
{
    low[0] = low[1] = INFINITY;
    for (int32_t e = rl->list_start[key]; e < rl->list_start[key + 1]; ++e) {
        const double *x = rows + (int64_t)rl->list_cell[e] * nv;
        low[0] = x[0] < low[0] ? x[0] : low[0];
        if (nv == 2)
            low[1] = x[1] < low[1] ? x[1] : low[1];
    }
}

void pn_run_low_prepare(pn_run_low *rl, const double *rows, int32_t num_rows, int nv)
{
    rl->low[0] = rl->low[1] = INFINITY;
    for (int32_t i = 0; i < num_rows; ++i)
        for (int c = 0; c < nv; ++c)
            rl->low[c] = rows[i * nv + c] < rl->low[c] ? rows[i * nv + c] : rl->low[c];
    if (rl->kind == PN_RUN_LOW_TABLE)
        for (int64_t key = 0; key < rl->num_keys; ++key)
            list_least(rl, key, rows, nv, rl->key_low + 2 * key);
}

void pn_run_low_at(const pn_run_low *rl, const int *digit, int num_upper, const double *rows,
                   int nv, double *low)
{
    int64_t key = 0;
    for (int v = 0; v < num_upper; ++v)
        key += digit[v] * rl->kstride[v];
    if (rl->kind == PN_RUN_LOW_TABLE) {
        low[0] = rl->key_low[2 * key];
        low[1] = rl->key_low[2 * key + 1];
    } else {
        list_least(rl, key, rows, nv, low);
    }
}
