/* Value tables: every value a feature takes over a space, numbered in
 * canonical order, and the lookup from a sonority to its cell. */
#include "parnassus/feature.h"

#include "feature_internal.h"
#include "parnassus/memory.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define R PN_FEATURE_REST

void pn_feature_table_free(pn_feature_table *t)
{
    if (!t)
        return;
    free(t->values);
    free(t->lut);
    free(t);
}

int64_t pn_feature_table_bytes(const pn_feature_table *t)
{
    return t->lut_size * 4 + (int64_t)t->num_cells * t->length * (int64_t)sizeof *t->values;
}

/* A descriptor that acts entry by entry (it keeps the length). */
static int is_elementwise(int op)
{
    return op == OP_MOD12 || op == OP_ABS || op == OP_CLAMP;
}

/* Descriptor k of f (elementwise) on one entry. */
static int elementwise(const pn_feature *f, int k, int v)
{
    if (v == R)
        return R;
    switch ((feature_op)f->ops[k]) {
    case OP_MOD12:
        return ((v % 12) + 12) % 12;
    case OP_CLAMP:
        return (int)pn_feature_clamp(v, f->lo[k], f->hi[k]);
    default:
        return v < 0 ? -v : v; /* OP_ABS */
    }
}

/* The enumeration of one feature's values over a space, phase by phase:
 * the window's layout, the numbering of values, the symbol reduction, the
 * odometer over the window, the canonical numbering, the lut. */
typedef struct enumeration {
    const pn_feature *f;
    int L, len; /* window length, value length */

    /* the window's voices in space order (the lut's mixed radix), each
     * with its position in the window */
    int voice[PN_SPACE_MAX_VOICES], pos[PN_SPACE_MAX_VOICES];
    int radix[PN_SPACE_MAX_VOICES], low[PN_SPACE_MAX_VOICES];
    int64_t combos;

    /* value keys: mixed radix over the entries; direct numbering by key
     * when the range is small, else a hash set and a sort */
    int64_t lo[PN_FEATURE_MAX_LENGTH], hi[PN_FEATURE_MAX_LENGTH], key_radix[PN_FEATURE_MAX_LENGTH];
    int64_t keys;
    int direct;

    /* symbols of each window voice (see plan_symbols) */
    int num_sym[PN_SPACE_MAX_VOICES];
    unsigned char sym_of[PN_SPACE_MAX_VOICES][130]; /* symbol of each value index */
    int sym_val[PN_SPACE_MAX_VOICES][130];          /* value of each symbol */
    int64_t sym_combos, sym_stride[PN_SPACE_MAX_VOICES];
    int reduce;     /* evaluate per combination of symbols */
    int first_op;   /* the descriptors left to apply to a combination */
    int64_t ecount; /* combinations evaluated */

    pn_feature_table *t;
    pn_value_set vs;   /* !direct */
    int32_t *key_cell; /* direct: the cell of each key, -1 = none */
    int32_t *elut;     /* key, id or cell per combination evaluated */
} enumeration;

/* The window's voices in space order; fails when they have too many
 * combinations of values to enumerate. */
static pn_error window_layout(enumeration *e, const pn_space *space, const char *ftext,
                              pn_error_info *info)
{
    const pn_feature *f = e->f;
    e->combos = 1;
    int i = 0;
    for (int v = 0; v < space->num_voices; ++v)
        for (int q = 0; q < e->L; ++q)
            if (f->window[q] == v) {
                e->voice[i] = v;
                e->pos[i] = q;
                e->radix[i] = pn_space_radix(space, v);
                e->low[i] = space->low[v];
                e->combos *= e->radix[i];
                i++;
                if (e->combos > PN_FEATURE_MAX_COMBINATIONS)
                    return pn_fail(info, PN_ERR_INVALID,
                                   "feature %s: its window has more than %" PRId64
                                   " combinations of values to enumerate",
                                   ftext, PN_FEATURE_MAX_COMBINATIONS);
            }
    return PN_OK;
}

/* Values are numbered directly by a key (mixed radix over the entries,
 * digit hi - lo + 1 for R, first entry most significant: key order is the
 * canonical order) when the key range is small; otherwise they are hashed
 * and sorted. */
static void plan_keys(enumeration *e, const pn_space *space)
{
    pn_feature_value_bounds(e->f, space, e->lo, e->hi, NULL);
    e->keys = 1;
    const int64_t combos = e->combos;
    const int64_t direct_limit = combos < ((int64_t)1 << 21) ? ((int64_t)1 << 22) : 2 * combos;
    for (int i = 0; i < e->len; ++i) {
        e->key_radix[i] = e->hi[i] - e->lo[i] + 2;
        if (e->keys <= direct_limit)
            e->keys *= e->key_radix[i];
    }
    e->direct = e->keys <= direct_limit;
}

/* The table's strides and lut, and the key table or the hash set; -1 when
 * out of memory. */
static int alloc_numbering(enumeration *e)
{
    pn_feature_table *t = e->t;
    int64_t stride = 1;
    for (int i = e->L - 1; i >= 0; --i) {
        t->vstride[e->voice[i]] = stride;
        stride *= e->radix[i];
    }
    t->lut = malloc((size_t)e->combos * sizeof *t->lut);
    if (!t->lut)
        return -1;
    if (e->direct) {
        e->key_cell = malloc((size_t)e->keys * sizeof *e->key_cell);
        if (!e->key_cell)
            return -1;
        memset(e->key_cell, 0xff, (size_t)e->keys * sizeof *e->key_cell);
        return 0;
    }
    return pn_value_set_init(&e->vs, e->len);
}

/* Symbol reduction. Leading elementwise descriptors (mod12, abs, clamp) map
 * each window voice's values to fewer symbols (mod12: 12 classes and R); the
 * rest of the feature is then evaluated once per combination of symbols,
 * and the lut gathers from that smaller table. Likewise a mod12 after
 * leading diffs (or rels) only sees the pitches mod 12 (differences
 * commute with reduction mod 12, and R propagates the same way), so the
 * whole feature can be evaluated on pitch classes. */
static void plan_symbols(enumeration *e)
{
    const pn_feature *f = e->f;
    int prefix = 0;
    while (prefix < f->num_ops && is_elementwise(f->ops[prefix]))
        prefix++;
    int num_diffs = 0; /* leading differences: diff or rel */
    while (num_diffs < f->num_ops && (f->ops[num_diffs] == OP_DIFF || f->ops[num_diffs] == OP_REL))
        num_diffs++;
    const int mod_after_diffs =
        prefix == 0 && num_diffs > 0 && num_diffs < f->num_ops && f->ops[num_diffs] == OP_MOD12;
    /* the descriptors applied to each voice's values: the leading
     * elementwise ones, or that mod12 alone */
    const int first_sym_op = mod_after_diffs ? num_diffs : 0;
    const int num_sym_ops = mod_after_diffs ? 1 : prefix;
    e->sym_combos = 1;
    for (int i = 0; i < e->L; ++i) {
        e->num_sym[i] = 0;
        for (int d = 0; d < e->radix[i]; ++d) {
            int v = d == 0 ? R : e->low[i] + d - 1;
            for (int k = first_sym_op; k < first_sym_op + num_sym_ops; ++k)
                v = elementwise(f, k, v);
            int sym = 0;
            while (sym < e->num_sym[i] && e->sym_val[i][sym] != v)
                sym++;
            if (sym == e->num_sym[i])
                e->sym_val[i][e->num_sym[i]++] = v;
            e->sym_of[i][d] = (unsigned char)sym;
        }
        e->sym_combos *= e->num_sym[i];
    }
    for (int i = e->L - 1, stride = 1; i >= 0; --i) {
        e->sym_stride[i] = stride;
        stride *= e->num_sym[i];
    }
    e->reduce = num_sym_ops > 0 && e->sym_combos < e->combos;
    e->first_op = e->reduce ? prefix : 0; /* 0 when diffs come first */
    e->ecount = e->reduce ? e->sym_combos : e->combos;
}

/* Odometer over the window's value indices (or symbols) in space order,
 * so the index into elut runs 0, 1, 2, ...: elut gets each combination's
 * key (direct) or value id. -1 when out of memory. */
static int enumerate(enumeration *e)
{
    /* locals, so the stores into elut and key_cell need no reloads */
    const pn_feature *f = e->f;
    const int L = e->L, len = e->len, reduce = e->reduce, direct = e->direct;
    const int first_op = e->first_op;
    const int64_t ecount = e->ecount;
    const int64_t *key_radix = e->key_radix, *lo = e->lo;
    int32_t *elut = e->elut, *key_cell = e->key_cell;
    int digit[PN_SPACE_MAX_VOICES] = {0}, count[PN_SPACE_MAX_VOICES];
    int pos[PN_SPACE_MAX_VOICES], low[PN_SPACE_MAX_VOICES];
    int win[PN_SPACE_MAX_VOICES], buf[PN_FEATURE_MAX_LENGTH];
    for (int i = 0; i < L; ++i) {
        count[i] = reduce ? e->num_sym[i] : e->radix[i];
        pos[i] = e->pos[i];
        low[i] = e->low[i];
        win[pos[i]] = reduce ? e->sym_val[i][0] : R;
    }
    for (int64_t x = 0; x < ecount; ++x) {
        memcpy(buf, win, (size_t)L * sizeof *buf);
        pn_feature_apply_ops(f, first_op, buf);
        if (direct) {
            int64_t key = 0;
            for (int i = 0; i < len; ++i)
                key = key * key_radix[i] + (buf[i] == R ? key_radix[i] - 1 : buf[i] - lo[i]);
            key_cell[key] = 0;
            elut[x] = (int32_t)key;
        } else {
            const int32_t id = pn_value_set_get(&e->vs, buf);
            if (id < 0)
                return -1;
            elut[x] = id;
        }
        for (int i = L - 1; i >= 0; --i) {
            if (++digit[i] < count[i]) {
                win[pos[i]] = reduce ? e->sym_val[i][digit[i]] : low[i] + digit[i] - 1;
                break;
            }
            digit[i] = 0;
            win[pos[i]] = reduce ? e->sym_val[i][0] : R;
        }
    }
    return 0;
}

/* Direct numbering: the keys that occur, in key order, are the cells;
 * their values are decoded from the keys. -1 when out of memory. */
static int number_keys(enumeration *e)
{
    pn_feature_table *t = e->t;
    const int len = e->len;
    int32_t m = 0;
    for (int64_t key = 0; key < e->keys; ++key)
        if (e->key_cell[key] == 0)
            e->key_cell[key] = m++;
    t->values = malloc((size_t)m * (size_t)len * sizeof *t->values);
    if (!t->values)
        return -1;
    for (int64_t key = 0; key < e->keys; ++key) {
        if (e->key_cell[key] < 0)
            continue;
        int *v = t->values + (size_t)e->key_cell[key] * (size_t)len;
        int64_t rest = key;
        for (int i = len - 1; i >= 0; --i) {
            const int64_t d = rest % e->key_radix[i];
            rest /= e->key_radix[i];
            v[i] = d == e->key_radix[i] - 1 ? R : (int)(e->lo[i] + d);
        }
    }
    for (int64_t x = 0; x < e->ecount; ++x)
        e->elut[x] = e->key_cell[e->elut[x]];
    t->num_cells = m;
    return 0;
}

/* Canonical numbering of hashed values: sort the distinct values. -1 when
 * out of memory. */
static int number_sorted(enumeration *e)
{
    pn_feature_table *t = e->t;
    const int len = e->len;
    const size_t m = e->vs.count;
    int32_t *ids = malloc(m * sizeof *ids);
    int32_t *tmp = malloc(m * sizeof *tmp);
    int32_t *rank = malloc(m * sizeof *rank);
    t->values = malloc(m * (size_t)len * sizeof *t->values);
    int ok = ids && tmp && rank && t->values;
    if (ok) {
        for (size_t i = 0; i < m; ++i)
            ids[i] = (int32_t)i;
        pn_value_set_sort_ids(&e->vs, ids, tmp, m);
        for (size_t c = 0; c < m; ++c) {
            rank[ids[c]] = (int32_t)c;
            memcpy(t->values + c * (size_t)len, e->vs.values + (size_t)ids[c] * (size_t)len,
                   (size_t)len * sizeof *t->values);
        }
        for (int64_t x = 0; x < e->ecount; ++x)
            e->elut[x] = rank[e->elut[x]];
        t->num_cells = (int32_t)m;
    }
    free(ids);
    free(tmp);
    free(rank);
    return ok ? 0 : -1;
}

/* After a symbol reduction: lut[x] = elut[symbols of x], the last voice in
 * runs. Frees elut. */
static void expand_lut(enumeration *e)
{
    const int L = e->L;
    int32_t *lut = e->t->lut;
    int digit[PN_SPACE_MAX_VOICES] = {0};
    int64_t base = 0;
    const int lastv = L - 1;
    const unsigned char *last_sym = e->sym_of[lastv];
    const int64_t last_stride = e->sym_stride[lastv];
    for (int64_t x = 0; x < e->combos; x += e->radix[lastv]) {
        int32_t *dst = lut + x;
        for (int d = 0; d < e->radix[lastv]; ++d)
            dst[d] = e->elut[base + last_sym[d] * last_stride];
        for (int i = lastv - 1; i >= 0; --i) {
            const int old = e->sym_of[i][digit[i]];
            if (++digit[i] == e->radix[i])
                digit[i] = 0;
            base += (e->sym_of[i][digit[i]] - old) * e->sym_stride[i];
            if (digit[i] != 0)
                break;
        }
    }
    free(e->elut);
    e->elut = NULL;
}

/* The phases after the layout and the key plan; -1 when out of memory. */
static int fill_table(enumeration *e)
{
    if (alloc_numbering(e) != 0)
        return -1;
    plan_symbols(e);
    if (e->reduce) {
        e->elut = malloc((size_t)e->sym_combos * sizeof *e->elut);
        if (!e->elut)
            return -1;
    } else {
        e->elut = e->t->lut;
    }
    if (enumerate(e) != 0)
        return -1;
    if ((e->direct ? number_keys(e) : number_sorted(e)) != 0)
        return -1;
    if (e->reduce)
        expand_lut(e);
    return 0;
}

pn_error pn_feature_values(const pn_feature *f, const pn_space *space, pn_feature_table **out,
                           pn_error_info *info)
{
    *out = NULL;
    pn_error err = pn_space_validate(space, info);
    if (err != PN_OK)
        return err;
    char ftext[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(f, ftext, sizeof ftext);
    if (f->num_voices != space->num_voices)
        return pn_fail(info, PN_ERR_INVALID,
                       "feature %s was parsed for %d voices, the space has %d", ftext,
                       f->num_voices, space->num_voices);
    enumeration e;
    memset(&e, 0, sizeof e);
    e.f = f;
    e.L = f->window_len;
    e.len = f->length;
    if ((err = window_layout(&e, space, ftext, info)) != PN_OK)
        return err;
    plan_keys(&e, space);

    pn_feature_table *t = calloc(1, sizeof *t);
    if (!t)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for the values of %s", ftext);
    t->feature = *f;
    t->space = *space;
    t->length = e.len;
    t->lut_size = e.combos;
    e.t = t;
    const int filled = fill_table(&e);
    if (e.elut != t->lut)
        free(e.elut);
    free(e.key_cell);
    pn_value_set_free(&e.vs);
    if (filled != 0) {
        pn_feature_table_free(t);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory enumerating the values of %s", ftext);
    }
    *out = t;
    return PN_OK;
}
