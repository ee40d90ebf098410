/* The feature language: parsing, evaluation, value enumeration and the
 * cell source for the de-overlap. */
#include "parnassus/feature.h"

#include "feature_internal.h"
#include "parnassus/memory.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum feature_op {
    OP_MOD12,
    OP_DIFF,
    OP_SORT,
    OP_ORDER,
    OP_ABS,
    OP_REL,
} feature_op;

static const struct {
    const char *name;
    feature_op op;
} descriptors[] = {
    {"mod12", OP_MOD12}, {"diff", OP_DIFF}, {"sort", OP_SORT}, {"order", OP_ORDER}, {"abs", OP_ABS},
    {"rel", OP_REL},
};

enum { NUM_DESCRIPTORS = sizeof descriptors / sizeof descriptors[0] };

static const char *op_name(int op)
{
    for (int i = 0; i < NUM_DESCRIPTORS; ++i)
        if ((int)descriptors[i].op == op)
            return descriptors[i].name;
    return "?";
}

struct pn_feature {
    int num_voices;                  /* k the feature was parsed for */
    int window_len;                  /* L */
    int window[PN_SPACE_MAX_VOICES]; /* 0-based voices, in written order */
    int num_ops;                     /* descriptors, innermost first */
    unsigned char ops[PN_FEATURE_MAX_DEPTH];
    int length; /* length of the values */
};

#define R PN_FEATURE_REST

/* Sort key of a value entry: R after every integer. Entries are bounded far
 * below INT_MAX (pitches <= 127, at most 7 nested differences). */
static inline int entry_key(int v)
{
    return v == R ? INT_MAX : v;
}

/* ---- parsing ---- */

typedef struct parser {
    const char *text;
    size_t pos;
    int num_voices;
    pn_error_info *info;
} parser;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static pn_error
parse_fail(const parser *p, size_t pos, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    const size_t len = strlen(p->text);
    return pn_fail(p->info, PN_ERR_PARSE, "%.200s%s: %s at position %zu", p->text,
                   len > 200 ? "..." : "", reason, pos + 1);
}

static void skip_space(parser *p)
{
    while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t')
        p->pos++;
}

/* A short quoted description of the character at pos, for messages. */
static const char *found_at(const parser *p, size_t pos, char *buf, size_t len)
{
    const unsigned char c = (unsigned char)p->text[pos];
    if (c == '\0')
        snprintf(buf, len, "end of text");
    else if (isprint(c))
        snprintf(buf, len, "'%c'", c);
    else
        snprintf(buf, len, "byte 0x%02x", (unsigned)c);
    return buf;
}

static pn_error parse_window(parser *p, pn_feature *f)
{
    char found[32];
    int used[PN_SPACE_MAX_VOICES] = {0};
    skip_space(p);
    if (p->text[p->pos] == ')')
        return parse_fail(p, p->pos, "empty window, expected a voice number 1..%d", p->num_voices);
    for (;;) {
        skip_space(p);
        const size_t start = p->pos;
        if (!isdigit((unsigned char)p->text[p->pos]))
            return parse_fail(p, start, "expected a voice number 1..%d, found %s", p->num_voices,
                              found_at(p, start, found, sizeof found));
        long voice = 0;
        while (isdigit((unsigned char)p->text[p->pos])) {
            if (voice <= 1000)
                voice = voice * 10 + (p->text[p->pos] - '0');
            p->pos++;
        }
        const int digits = (int)(p->pos - start);
        if (voice < 1 || voice > p->num_voices)
            return parse_fail(p, start, "voice %.*s%s out of range 1..%d",
                              digits > 12 ? 12 : digits, p->text + start, digits > 12 ? "..." : "",
                              p->num_voices);
        if (used[voice - 1])
            return parse_fail(p, start, "voice %ld repeated in the window", voice);
        used[voice - 1] = 1;
        f->window[f->window_len++] = (int)voice - 1;
        skip_space(p);
        const char c = p->text[p->pos];
        if (c == ')') {
            p->pos++;
            return PN_OK;
        }
        if (c != ',')
            return parse_fail(p, p->pos, "expected ',' or ')' in the window, found %s",
                              found_at(p, p->pos, found, sizeof found));
        p->pos++;
    }
}

pn_error pn_feature_parse(const char *text, int num_voices, pn_feature **out, pn_error_info *info)
{
    *out = NULL;
    if (num_voices < 1 || num_voices > PN_SPACE_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "feature: %d voices, expected 1..%d", num_voices,
                       PN_SPACE_MAX_VOICES);
    if (!text)
        return pn_fail(info, PN_ERR_INVALID, "feature: no text");
    parser p = {text, 0, num_voices, info};
    pn_feature f;
    memset(&f, 0, sizeof f);
    f.num_voices = num_voices;
    int outer[PN_FEATURE_MAX_DEPTH];        /* descriptors, outermost first */
    size_t outer_pos[PN_FEATURE_MAX_DEPTH]; /* where each name starts */
    int depth = 0;
    char found[32];
    pn_error err;

    skip_space(&p);
    if (text[p.pos] == '\0')
        return parse_fail(&p, p.pos, "empty feature, expected a descriptor or a window");
    for (;;) {
        skip_space(&p);
        const size_t start = p.pos;
        const unsigned char c0 = (unsigned char)text[start];
        if (!isalpha(c0) && c0 != '_')
            return parse_fail(&p, start, "expected a descriptor or a window 'w(...)', found %s",
                              found_at(&p, start, found, sizeof found));
        while (isalnum((unsigned char)text[p.pos]) || text[p.pos] == '_')
            p.pos++;
        const size_t name_len = p.pos - start;
        const int shown = name_len > 40 ? 40 : (int)name_len;
        const int is_window = name_len == 1 && text[start] == 'w';
        int op = -1;
        if (!is_window) {
            for (int i = 0; i < NUM_DESCRIPTORS; ++i)
                if (strlen(descriptors[i].name) == name_len &&
                    memcmp(descriptors[i].name, text + start, name_len) == 0)
                    op = (int)descriptors[i].op;
            if (op < 0) {
                err = parse_fail(&p, start, "unknown descriptor '%.*s'", shown, text + start);
                if (info) {
                    const size_t used = strlen(info->message);
                    snprintf(info->message + used, sizeof info->message - used,
                             " (known: mod12, diff, rel, sort, order, abs; a window is w(...))");
                }
                return err;
            }
        }
        skip_space(&p);
        if (text[p.pos] != '(')
            return parse_fail(&p, p.pos, "expected '(' after '%.*s', found %s", shown, text + start,
                              found_at(&p, p.pos, found, sizeof found));
        p.pos++;
        if (is_window)
            break;
        if (depth == PN_FEATURE_MAX_DEPTH)
            return parse_fail(&p, start, "more than %d nested descriptors", PN_FEATURE_MAX_DEPTH);
        outer[depth] = op;
        outer_pos[depth] = start;
        depth++;
    }
    err = parse_window(&p, &f);
    if (err != PN_OK)
        return err;
    for (int i = depth - 1; i >= 0; --i) {
        skip_space(&p);
        if (text[p.pos] != ')')
            return parse_fail(&p, p.pos, "expected ')' closing '%s', found %s", op_name(outer[i]),
                              found_at(&p, p.pos, found, sizeof found));
        p.pos++;
    }
    skip_space(&p);
    if (text[p.pos] != '\0')
        return parse_fail(&p, p.pos, "unexpected %s after the end of the feature",
                          found_at(&p, p.pos, found, sizeof found));

    /* value lengths, innermost descriptor first */
    int length = f.window_len;
    for (int i = depth - 1; i >= 0; --i) {
        if (outer[i] == OP_DIFF || outer[i] == OP_REL) {
            if (length < 2)
                return parse_fail(&p, outer_pos[i],
                                  "%s needs at least 2 voices (its argument has length %d)",
                                  op_name(outer[i]), length);
            length--;
        }
        f.ops[f.num_ops++] = (unsigned char)outer[i];
    }
    f.length = length;

    pn_feature *copy = malloc(sizeof *copy);
    if (!copy)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a feature");
    *copy = f;
    *out = copy;
    return PN_OK;
}

void pn_feature_free(pn_feature *f)
{
    free(f);
}

/* snprintf-style appending: `used` counts every byte, written or not. */
typedef struct text_out {
    char *buf;
    size_t len;
    size_t used;
} text_out;

static void out_str(text_out *o, const char *s)
{
    for (; *s; ++s) {
        if (o->used + 1 < o->len)
            o->buf[o->used] = *s;
        o->used++;
    }
}

static void out_int(text_out *o, int v)
{
    char tmp[16];
    snprintf(tmp, sizeof tmp, "%d", v);
    out_str(o, tmp);
}

static size_t out_finish(text_out *o)
{
    if (o->len > 0)
        o->buf[o->used < o->len ? o->used : o->len - 1] = '\0';
    return o->used;
}

size_t pn_feature_to_string(const pn_feature *f, char *buf, size_t len)
{
    text_out o = {buf, len, 0};
    for (int i = f->num_ops - 1; i >= 0; --i) {
        out_str(&o, op_name(f->ops[i]));
        out_str(&o, "(");
    }
    out_str(&o, "w(");
    for (int i = 0; i < f->window_len; ++i) {
        if (i > 0)
            out_str(&o, ",");
        out_int(&o, f->window[i] + 1);
    }
    out_str(&o, ")");
    for (int i = 0; i < f->num_ops; ++i)
        out_str(&o, ")");
    return out_finish(&o);
}

int pn_feature_length(const pn_feature *f)
{
    return f->length;
}

int pn_feature_num_voices(const pn_feature *f)
{
    return f->num_voices;
}

/* ---- evaluation ---- */

/* Applies the descriptors to buf (the window's values, R for a rest) in
 * place; returns the final length. */
static int apply_ops_from(const pn_feature *f, int first_op, int *buf)
{
    int len = f->window_len;
    int tmp[PN_FEATURE_MAX_LENGTH];
    for (int k = first_op; k < f->num_ops; ++k) {
        switch ((feature_op)f->ops[k]) {
        case OP_MOD12:
            for (int i = 0; i < len; ++i)
                if (buf[i] != R)
                    buf[i] = ((buf[i] % 12) + 12) % 12;
            break;
        case OP_ABS:
            for (int i = 0; i < len; ++i)
                if (buf[i] != R && buf[i] < 0)
                    buf[i] = -buf[i];
            break;
        case OP_DIFF:
            for (int i = 0; i + 1 < len; ++i)
                buf[i] = (buf[i] == R || buf[i + 1] == R) ? R : buf[i + 1] - buf[i];
            len--;
            break;
        case OP_REL: {
            const int first = buf[0];
            for (int i = 0; i + 1 < len; ++i)
                buf[i] = (first == R || buf[i + 1] == R) ? R : buf[i + 1] - first;
            len--;
            break;
        }
        case OP_SORT:
            for (int i = 1; i < len; ++i) {
                const int v = buf[i], key = entry_key(v);
                int j = i;
                while (j > 0 && entry_key(buf[j - 1]) > key) {
                    buf[j] = buf[j - 1];
                    j--;
                }
                buf[j] = v;
            }
            break;
        case OP_ORDER:
            memcpy(tmp, buf, (size_t)len * sizeof *tmp);
            for (int i = 0; i < len; ++i) {
                if (tmp[i] == R)
                    continue; /* a rest stays R */
                int rank = 0;
                for (int j = 0; j < len; ++j)
                    if (tmp[j] != R && (tmp[j] < tmp[i] || (tmp[j] == tmp[i] && j < i)))
                        rank++;
                buf[i] = rank;
            }
            break;
        }
    }
    return len;
}

int pn_feature_eval(const pn_feature *f, const int *pitches, int *value)
{
    int buf[PN_FEATURE_MAX_LENGTH];
    for (int i = 0; i < f->window_len; ++i) {
        const int p = pitches[f->window[i]];
        buf[i] = p < 0 ? R : p;
    }
    const int len = apply_ops_from(f, 0, buf);
    memcpy(value, buf, (size_t)len * sizeof *value);
    return len;
}

int pn_feature_value_compare(const int *a, const int *b, int length)
{
    for (int i = 0; i < length; ++i) {
        const int ka = entry_key(a[i]), kb = entry_key(b[i]);
        if (ka != kb)
            return ka < kb ? -1 : 1;
    }
    return 0;
}

size_t pn_feature_format_value(const int *value, int length, char *buf, size_t len)
{
    text_out o = {buf, len, 0};
    if (length > 1)
        out_str(&o, "(");
    for (int i = 0; i < length; ++i) {
        if (i > 0)
            out_str(&o, ",");
        if (value[i] == R)
            out_str(&o, "R");
        else
            out_int(&o, value[i]);
    }
    if (length > 1)
        out_str(&o, ")");
    return out_finish(&o);
}

/* ---- value tables ---- */

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

/* Distinct value vectors, numbered in order of first appearance. */
typedef struct value_set {
    int length;
    int *values; /* count x length */
    size_t count, capacity;
    int32_t *slots; /* -1 = empty */
    size_t mask;
} value_set;

static uint64_t hash_value(const int *v, int length)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < length; ++i) {
        h ^= (uint32_t)v[i];
        h *= 0xbf58476d1ce4e5b9u;
        h ^= h >> 31;
    }
    return h;
}

static int value_set_init(value_set *vs, int length)
{
    memset(vs, 0, sizeof *vs);
    vs->length = length;
    vs->capacity = 64;
    vs->values = malloc(vs->capacity * (size_t)length * sizeof *vs->values);
    vs->mask = 127;
    vs->slots = malloc((vs->mask + 1) * sizeof *vs->slots);
    if (!vs->values || !vs->slots)
        return -1;
    memset(vs->slots, 0xff, (vs->mask + 1) * sizeof *vs->slots);
    return 0;
}

static void value_set_free(value_set *vs)
{
    free(vs->values);
    free(vs->slots);
}

static int value_set_grow(value_set *vs)
{
    const size_t cap = 2 * (vs->mask + 1);
    int32_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t i = 0; i < vs->count; ++i) {
        size_t s = hash_value(vs->values + i * (size_t)vs->length, vs->length) & (cap - 1);
        while (slots[s] >= 0)
            s = (s + 1) & (cap - 1);
        slots[s] = (int32_t)i;
    }
    free(vs->slots);
    vs->slots = slots;
    vs->mask = cap - 1;
    return 0;
}

/* The id of value v, adding it if new; -1 when out of memory. */
static int32_t value_set_get(value_set *vs, const int *v)
{
    const int L = vs->length;
    size_t s = hash_value(v, L) & vs->mask;
    for (;;) {
        const int32_t id = vs->slots[s];
        if (id < 0)
            break;
        if (memcmp(vs->values + (size_t)id * (size_t)L, v, (size_t)L * sizeof *v) == 0)
            return id;
        s = (s + 1) & vs->mask;
    }
    if (vs->count == vs->capacity) {
        const size_t cap = 2 * vs->capacity;
        int *p = realloc(vs->values, cap * (size_t)L * sizeof *p);
        if (!p)
            return -1;
        vs->values = p;
        vs->capacity = cap;
    }
    if (vs->count >= (size_t)INT32_MAX)
        return -1;
    const int32_t id = (int32_t)vs->count++;
    memcpy(vs->values + (size_t)id * (size_t)L, v, (size_t)L * sizeof *v);
    vs->slots[s] = id;
    if (2 * vs->count > vs->mask + 1 && value_set_grow(vs) != 0)
        return -1;
    return id;
}

/* Stable merge sort of ids by their value vectors. */
static void sort_ids(const value_set *vs, int32_t *ids, int32_t *tmp, size_t count)
{
    const int L = vs->length;
    for (size_t width = 1; width < count; width *= 2) {
        for (size_t lo = 0; lo < count; lo += 2 * width) {
            const size_t mid = lo + width < count ? lo + width : count;
            const size_t hi = lo + 2 * width < count ? lo + 2 * width : count;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                const int *a = vs->values + (size_t)ids[i] * (size_t)L;
                const int *b = vs->values + (size_t)ids[j] * (size_t)L;
                tmp[k++] = pn_feature_value_compare(b, a, L) < 0 ? ids[j++] : ids[i++];
            }
            while (i < mid)
                tmp[k++] = ids[i++];
            while (j < hi)
                tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, count * sizeof *ids);
    }
}

static int same_space(const pn_space *a, const pn_space *b)
{
    if (a->num_voices != b->num_voices)
        return 0;
    for (int v = 0; v < a->num_voices; ++v)
        if (a->low[v] != b->low[v] || a->high[v] != b->high[v])
            return 0;
    return 1;
}

void pn_feature_table_free(pn_feature_table *t)
{
    if (!t)
        return;
    free(t->values);
    free(t->lut);
    free(t);
}

/* A descriptor that acts entry by entry (it keeps the length). */
static int is_elementwise(int op)
{
    return op == OP_MOD12 || op == OP_ABS;
}

static int elementwise(int op, int v)
{
    if (v == R)
        return R;
    if (op == OP_MOD12)
        return ((v % 12) + 12) % 12;
    return v < 0 ? -v : v; /* OP_ABS */
}

/* Distinct values len entries in [lo, hi] or R can take: all of them, or
 * after a sort only the multisets, C(V + len - 1, len) of V = hi - lo + 2
 * symbols. Saturates at INT64_MAX. */
static int64_t stage_values(const int64_t *lo, const int64_t *hi, int len, int sorted)
{
    if (sorted) {
        const double v = (double)(hi[0] - lo[0] + 2);
        double c = 1.0;
        for (int i = 1; i <= len; ++i)
            c = c * (v + i - 1) / i;
        return c >= 9.2e18 ? INT64_MAX : (int64_t)(c + 0.5);
    }
    int64_t count = 1;
    for (int i = 0; i < len; ++i)
        count = pn_bytes_mul(count, hi[i] - lo[i] + 2);
    return count;
}

/* Bounds lo[i]..hi[i] of each value entry over the space, by interval
 * arithmetic through the descriptors; any entry may also be R. With
 * `distinct`, also a bound of the number of distinct values: no stage of
 * the descriptors can have more values than the one before it. */
static void value_bounds(const pn_feature *f, const pn_space *space, int64_t *lo, int64_t *hi,
                         int64_t *distinct)
{
    int len = f->window_len;
    for (int i = 0; i < len; ++i) {
        lo[i] = space->low[f->window[i]];
        hi[i] = space->high[f->window[i]];
    }
    int64_t values = INT64_MAX;
    for (int k = 0; k < f->num_ops; ++k) {
        switch ((feature_op)f->ops[k]) {
        case OP_MOD12:
            for (int i = 0; i < len; ++i) {
                lo[i] = 0;
                hi[i] = 11;
            }
            break;
        case OP_ABS:
            for (int i = 0; i < len; ++i) {
                if (hi[i] <= 0) {
                    const int64_t l = lo[i];
                    lo[i] = -hi[i];
                    hi[i] = -l;
                } else if (lo[i] < 0) {
                    hi[i] = -lo[i] > hi[i] ? -lo[i] : hi[i];
                    lo[i] = 0;
                }
            }
            break;
        case OP_DIFF:
            for (int i = 0; i + 1 < len; ++i) {
                const int64_t l = lo[i + 1] - hi[i], h = hi[i + 1] - lo[i];
                lo[i] = l;
                hi[i] = h;
            }
            len--;
            break;
        case OP_REL: {
            const int64_t l0 = lo[0], h0 = hi[0];
            for (int i = 0; i + 1 < len; ++i) {
                const int64_t l = lo[i + 1] - h0, h = hi[i + 1] - l0;
                lo[i] = l;
                hi[i] = h;
            }
            len--;
            break;
        }
        case OP_SORT: {
            int64_t l = lo[0], h = hi[0];
            for (int i = 1; i < len; ++i) {
                l = lo[i] < l ? lo[i] : l;
                h = hi[i] > h ? hi[i] : h;
            }
            for (int i = 0; i < len; ++i) {
                lo[i] = l;
                hi[i] = h;
            }
            break;
        }
        case OP_ORDER:
            for (int i = 0; i < len; ++i) {
                lo[i] = 0;
                hi[i] = len - 1;
            }
            break;
        }
        if (distinct) {
            const int64_t stage = stage_values(lo, hi, len, f->ops[k] == OP_SORT);
            values = stage < values ? stage : values;
        }
    }
    if (distinct) {
        const int64_t last = stage_values(lo, hi, len, 0);
        *distinct = last < values ? last : values;
    }
}

void pn_feature_cost(const pn_feature *f, const pn_space *space, int64_t *bytes, int64_t *max_cells)
{
    int64_t combos = 1, keys = 1, distinct;
    for (int q = 0; q < f->window_len; ++q)
        combos = pn_bytes_mul(combos, pn_space_radix(space, f->window[q]));
    int64_t lo[PN_FEATURE_MAX_LENGTH], hi[PN_FEATURE_MAX_LENGTH];
    value_bounds(f, space, lo, hi, &distinct);
    for (int i = 0; i < f->length; ++i)
        keys = pn_bytes_mul(keys, hi[i] - lo[i] + 2);
    const int64_t cells = distinct < combos ? distinct : combos;
    /* the lut and its reduced copy; the direct key table or the hash set
     * (values with room to grow, slots); the sort's three index arrays and
     * the final values */
    const int64_t per_cell = (int64_t)f->length * 4 * 3 + 16 + 12;
    const int64_t direct_limit = combos < ((int64_t)1 << 21) ? ((int64_t)1 << 22) : 2 * combos;
    int64_t b = pn_bytes_mul(combos, 2 * 4);
    b = pn_bytes_add(b, pn_bytes_mul(keys <= direct_limit ? keys : 0, 4));
    *bytes = pn_bytes_add(b, pn_bytes_mul(cells, per_cell));
    *max_cells = cells;
}

int64_t pn_feature_table_bytes(const pn_feature_table *t)
{
    return t->lut_size * 4 + (int64_t)t->num_cells * t->length * (int64_t)sizeof *t->values;
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
    const int L = f->window_len, len = f->length;
    /* the window's voices in space order (the lut's mixed radix), each with
     * its position in the window */
    int voice[PN_SPACE_MAX_VOICES], pos[PN_SPACE_MAX_VOICES];
    int radix[PN_SPACE_MAX_VOICES], low[PN_SPACE_MAX_VOICES];
    int64_t combos = 1;
    {
        int i = 0;
        for (int v = 0; v < space->num_voices; ++v)
            for (int q = 0; q < L; ++q)
                if (f->window[q] == v) {
                    voice[i] = v;
                    pos[i] = q;
                    radix[i] = pn_space_radix(space, v);
                    low[i] = space->low[v];
                    combos *= radix[i];
                    i++;
                    if (combos > PN_FEATURE_MAX_COMBINATIONS)
                        return pn_fail(info, PN_ERR_INVALID,
                                       "feature %s: its window has more than %" PRId64
                                       " combinations of values to enumerate",
                                       ftext, PN_FEATURE_MAX_COMBINATIONS);
                }
    }

    /* Values are numbered directly by a key (mixed radix over the entries,
     * digit hi - lo + 1 for R, first entry most significant: key order is
     * the canonical order) when the key range is small; otherwise they are
     * hashed and sorted. */
    int64_t lo[PN_FEATURE_MAX_LENGTH], hi[PN_FEATURE_MAX_LENGTH], key_radix[PN_FEATURE_MAX_LENGTH];
    value_bounds(f, space, lo, hi, NULL);
    int64_t keys = 1;
    const int64_t direct_limit = combos < ((int64_t)1 << 21) ? ((int64_t)1 << 22) : 2 * combos;
    for (int i = 0; i < len; ++i) {
        key_radix[i] = hi[i] - lo[i] + 2;
        if (keys <= direct_limit)
            keys *= key_radix[i];
    }
    const int direct = keys <= direct_limit;

    pn_feature_table *t = calloc(1, sizeof *t);
    value_set vs;
    int32_t *ids = NULL, *tmp = NULL, *rank = NULL, *key_cell = NULL, *elut = NULL;
    memset(&vs, 0, sizeof vs);
    if (!t)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for the values of %s", ftext);
    t->feature = *f;
    t->space = *space;
    t->length = len;
    t->lut_size = combos;
    {
        int64_t stride = 1;
        for (int i = L - 1; i >= 0; --i) {
            t->vstride[voice[i]] = stride;
            stride *= radix[i];
        }
    }
    t->lut = malloc((size_t)combos * sizeof *t->lut);
    if (!t->lut)
        goto nomem;
    if (direct) {
        key_cell = malloc((size_t)keys * sizeof *key_cell);
        if (!key_cell)
            goto nomem;
        memset(key_cell, 0xff, (size_t)keys * sizeof *key_cell);
    } else if (value_set_init(&vs, len) != 0) {
        goto nomem;
    }

    /* Symbol reduction. Leading elementwise descriptors (mod12, abs) map
     * each window voice's values to fewer symbols (mod12: 12 classes and
     * R); the rest of the feature is then evaluated once per combination
     * of symbols, and the lut gathers from that smaller table. Likewise a
     * mod12 after leading diffs (or rels) only sees the pitches mod 12 (differences
     * commute with reduction mod 12, and R propagates the same way), so
     * the whole feature can be evaluated on pitch classes. */
    int prefix = 0;
    while (prefix < f->num_ops && is_elementwise(f->ops[prefix]))
        prefix++;
    int num_diffs = 0; /* leading differences: diff or rel */
    while (num_diffs < f->num_ops && (f->ops[num_diffs] == OP_DIFF || f->ops[num_diffs] == OP_REL))
        num_diffs++;
    const int mod_after_diffs =
        prefix == 0 && num_diffs > 0 && num_diffs < f->num_ops && f->ops[num_diffs] == OP_MOD12;
    const unsigned char mod12_only[1] = {OP_MOD12};
    const unsigned char *sym_ops = mod_after_diffs ? mod12_only : f->ops;
    const int num_sym_ops = mod_after_diffs ? 1 : prefix;
    int num_sym[PN_SPACE_MAX_VOICES];
    unsigned char sym_of[PN_SPACE_MAX_VOICES][130]; /* symbol of each value index */
    int sym_val[PN_SPACE_MAX_VOICES][130];          /* value of each symbol */
    int64_t sym_combos = 1, sym_stride[PN_SPACE_MAX_VOICES];
    for (int i = 0; i < L; ++i) {
        num_sym[i] = 0;
        for (int d = 0; d < radix[i]; ++d) {
            int v = d == 0 ? R : low[i] + d - 1;
            for (int k = 0; k < num_sym_ops; ++k)
                v = elementwise(sym_ops[k], v);
            int sym = 0;
            while (sym < num_sym[i] && sym_val[i][sym] != v)
                sym++;
            if (sym == num_sym[i])
                sym_val[i][num_sym[i]++] = v;
            sym_of[i][d] = (unsigned char)sym;
        }
        sym_combos *= num_sym[i];
    }
    for (int i = L - 1, stride = 1; i >= 0; --i) {
        sym_stride[i] = stride;
        stride *= num_sym[i];
    }
    const int reduce = num_sym_ops > 0 && sym_combos < combos;
    const int first_op = reduce ? prefix : 0; /* 0 when diffs come first */
    const int64_t ecount = reduce ? sym_combos : combos;
    if (reduce) {
        elut = malloc((size_t)sym_combos * sizeof *elut);
        if (!elut)
            goto nomem;
    } else {
        elut = t->lut;
    }

    /* odometer over the window's value indices (or symbols) in space
     * order, so the index into elut runs 0, 1, 2, ... */
    int digit[PN_SPACE_MAX_VOICES] = {0}, count[PN_SPACE_MAX_VOICES];
    int win[PN_SPACE_MAX_VOICES], buf[PN_FEATURE_MAX_LENGTH];
    for (int i = 0; i < L; ++i) {
        count[i] = reduce ? num_sym[i] : radix[i];
        win[pos[i]] = reduce ? sym_val[i][0] : R;
    }
    for (int64_t x = 0; x < ecount; ++x) {
        memcpy(buf, win, (size_t)L * sizeof *buf);
        apply_ops_from(f, first_op, buf);
        if (direct) {
            int64_t key = 0;
            for (int i = 0; i < len; ++i)
                key = key * key_radix[i] + (buf[i] == R ? key_radix[i] - 1 : buf[i] - lo[i]);
            key_cell[key] = 0;
            elut[x] = (int32_t)key;
        } else {
            const int32_t id = value_set_get(&vs, buf);
            if (id < 0)
                goto nomem;
            elut[x] = id;
        }
        for (int i = L - 1; i >= 0; --i) {
            if (++digit[i] < count[i]) {
                win[pos[i]] = reduce ? sym_val[i][digit[i]] : low[i] + digit[i] - 1;
                break;
            }
            digit[i] = 0;
            win[pos[i]] = reduce ? sym_val[i][0] : R;
        }
    }

    if (direct) {
        /* number the keys that occur, in key order */
        int32_t m = 0;
        for (int64_t key = 0; key < keys; ++key)
            if (key_cell[key] == 0)
                key_cell[key] = m++;
        t->values = malloc((size_t)m * (size_t)len * sizeof *t->values);
        if (!t->values)
            goto nomem;
        for (int64_t key = 0; key < keys; ++key) {
            if (key_cell[key] < 0)
                continue;
            int *v = t->values + (size_t)key_cell[key] * (size_t)len;
            int64_t rest = key;
            for (int i = len - 1; i >= 0; --i) {
                const int64_t d = rest % key_radix[i];
                rest /= key_radix[i];
                v[i] = d == key_radix[i] - 1 ? R : (int)(lo[i] + d);
            }
        }
        for (int64_t x = 0; x < ecount; ++x)
            elut[x] = key_cell[elut[x]];
        t->num_cells = m;
    } else {
        /* canonical numbering: sort the distinct values */
        const size_t m = vs.count;
        ids = malloc(m * sizeof *ids);
        tmp = malloc(m * sizeof *tmp);
        rank = malloc(m * sizeof *rank);
        t->values = malloc(m * (size_t)len * sizeof *t->values);
        if (!ids || !tmp || !rank || !t->values)
            goto nomem;
        for (size_t i = 0; i < m; ++i)
            ids[i] = (int32_t)i;
        sort_ids(&vs, ids, tmp, m);
        for (size_t c = 0; c < m; ++c) {
            rank[ids[c]] = (int32_t)c;
            memcpy(t->values + c * (size_t)len, vs.values + (size_t)ids[c] * (size_t)len,
                   (size_t)len * sizeof *t->values);
        }
        for (int64_t x = 0; x < ecount; ++x)
            elut[x] = rank[elut[x]];
        t->num_cells = (int32_t)m;
    }

    if (reduce) {
        /* expand: lut[x] = elut[symbols of x], the last voice in runs */
        memset(digit, 0, sizeof digit);
        int64_t base = 0;
        const int lastv = L - 1;
        const unsigned char *last_sym = sym_of[lastv];
        const int64_t last_stride = sym_stride[lastv];
        for (int64_t x = 0; x < combos; x += radix[lastv]) {
            int32_t *dst = t->lut + x;
            for (int d = 0; d < radix[lastv]; ++d)
                dst[d] = elut[base + last_sym[d] * last_stride];
            for (int i = lastv - 1; i >= 0; --i) {
                const int old = sym_of[i][digit[i]];
                if (++digit[i] == radix[i])
                    digit[i] = 0;
                base += (sym_of[i][digit[i]] - old) * sym_stride[i];
                if (digit[i] != 0)
                    break;
            }
        }
        free(elut);
        elut = NULL;
    }
    free(key_cell);
    free(ids);
    free(tmp);
    free(rank);
    value_set_free(&vs);
    *out = t;
    return PN_OK;

nomem:
    if (elut != t->lut)
        free(elut);
    free(key_cell);
    free(ids);
    free(tmp);
    free(rank);
    value_set_free(&vs);
    pn_feature_table_free(t);
    return pn_fail(info, PN_ERR_NOMEM, "out of memory enumerating the values of %s", ftext);
}

int32_t pn_feature_table_size(const pn_feature_table *t)
{
    return t->num_cells;
}

const pn_feature *pn_feature_table_feature(const pn_feature_table *t)
{
    return &t->feature;
}

const pn_space *pn_feature_table_space(const pn_feature_table *t)
{
    return &t->space;
}

const int *pn_feature_table_value(const pn_feature_table *t, int32_t cell)
{
    if (cell < 0 || cell >= t->num_cells)
        return NULL;
    return t->values + (size_t)cell * (size_t)t->length;
}

size_t pn_feature_value_text(const pn_feature_table *t, int32_t cell, char *buf, size_t len)
{
    const int *v = pn_feature_table_value(t, cell);
    if (!v) {
        if (len > 0)
            buf[0] = '\0';
        return 0;
    }
    return pn_feature_format_value(v, t->length, buf, len);
}

const int32_t *pn_feature_table_lut(const pn_feature_table *t)
{
    return t->lut;
}

int64_t pn_feature_table_vstride(const pn_feature_table *t, int voice)
{
    return voice >= 0 && voice < PN_SPACE_MAX_VOICES ? t->vstride[voice] : 0;
}

pn_error pn_feature_cell_of(const pn_feature_table *t, const int *pitches, int32_t *cell,
                            pn_error_info *info)
{
    const pn_feature *f = &t->feature;
    int64_t index = 0;
    for (int i = 0; i < f->window_len; ++i) {
        const int v = f->window[i];
        const int p = pitches[v];
        int digit = 0;
        if (p >= 0) {
            if (p < t->space.low[v] || p > t->space.high[v])
                return pn_fail(info, PN_ERR_INVALID, "voice %d: pitch %d outside its range %d..%d",
                               v + 1, p, t->space.low[v], t->space.high[v]);
            digit = p - t->space.low[v] + 1;
        }
        index += digit * t->vstride[v];
    }
    *cell = t->lut[index];
    return PN_OK;
}

pn_error pn_feature_find_value(const pn_feature_table *t, const char *text, int32_t *cell,
                               pn_error_info *info)
{
    char ftext[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(&t->feature, ftext, sizeof ftext);
    int value[PN_FEATURE_MAX_LENGTH];
    int count = 0;
    const char *s = text;
    while (*s == ' ' || *s == '\t')
        s++;
    const int paren = *s == '(';
    if (paren)
        s++;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        int v;
        if (*s == 'R') {
            v = R;
            s++;
        } else {
            const char *start = s;
            int neg = 0;
            if (*s == '-' || *s == '+')
                neg = *s++ == '-';
            if (!isdigit((unsigned char)*s))
                return pn_fail(info, PN_ERR_PARSE,
                               "value '%.100s' of %s: expected an integer or R at position %d",
                               text, ftext, (int)(start - text) + 1);
            long mag = 0;
            while (isdigit((unsigned char)*s)) {
                if (mag < 100000000)
                    mag = mag * 10 + (*s - '0');
                s++;
            }
            v = (int)(neg ? -mag : mag);
        }
        if (count < PN_FEATURE_MAX_LENGTH)
            value[count] = v;
        count++;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!paren || *s != ',')
            break;
        s++;
    }
    if (paren) {
        if (*s != ')')
            return pn_fail(info, PN_ERR_PARSE,
                           "value '%.100s' of %s: expected ',' or ')' at position %d", text, ftext,
                           (int)(s - text) + 1);
        s++;
        while (*s == ' ' || *s == '\t')
            s++;
    }
    if (*s != '\0')
        return pn_fail(info, PN_ERR_PARSE,
                       "value '%.100s' of %s: unexpected text at position %d (a vector is "
                       "written in parentheses, e.g. (-7,R))",
                       text, ftext, (int)(s - text) + 1);
    if (count != t->length)
        return pn_fail(
            info, PN_ERR_PARSE,
            "value '%.100s' of %s: it has length %d, the feature's values have length %d", text,
            ftext, count, t->length);
    int32_t lo = 0, hi = t->num_cells - 1;
    while (lo <= hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        const int c =
            pn_feature_value_compare(t->values + (size_t)mid * (size_t)t->length, value, t->length);
        if (c == 0) {
            *cell = mid;
            return PN_OK;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return pn_fail(info, PN_ERR_INVALID, "feature %s never takes the value '%.100s' over the space",
                   ftext, text);
}

/* ---- cell source ---- */

pn_error pn_feature_set_check(const pn_feature_set *set, pn_error_info *info)
{
    pn_error err = pn_space_validate(&set->space, info);
    if (err != PN_OK)
        return err;
    if (set->num_tables < 0 || (set->num_tables > 0 && !set->tables))
        return pn_fail(info, PN_ERR_INVALID, "feature set: no tables");
    for (int32_t r = 0; r < set->num_tables; ++r) {
        if (!set->tables[r])
            return pn_fail(info, PN_ERR_INVALID, "feature set: table %d missing", (int)r);
        if (!same_space(&set->tables[r]->space, &set->space)) {
            char ftext[PN_FEATURE_TEXT_MAX];
            pn_feature_to_string(&set->tables[r]->feature, ftext, sizeof ftext);
            return pn_fail(info, PN_ERR_INVALID,
                           "feature set: table %d (%s) was built for another space", (int)r, ftext);
        }
    }
    return PN_OK;
}

int pn_feature_cells(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const pn_feature_set *set = ctx;
    if (!set || rule < 0 || rule >= set->num_tables || !set->tables[rule])
        return 1;
    const pn_feature_table *t = set->tables[rule];
    if (!same_space(&t->space, &set->space))
        return 1;
    const pn_space *s = &t->space;
    const int k = s->num_voices;
    if (first < 0 || count < 0 || first > pn_space_size(s) - count)
        return 1;
    if (count == 0)
        return 0;

    /* decode `first` once; then walk the last voice in runs and carry */
    int digit[PN_SPACE_MAX_VOICES], radix[PN_SPACE_MAX_VOICES];
    int64_t rest = first, base = 0;
    for (int v = k - 1; v >= 0; --v) {
        radix[v] = pn_space_radix(s, v);
        digit[v] = (int)(rest % radix[v]);
        rest /= radix[v];
    }
    for (int v = 0; v < k - 1; ++v)
        base += digit[v] * t->vstride[v];
    const int last = k - 1, r_last = radix[last];
    const int64_t vs_last = t->vstride[last];
    const int32_t *lut = t->lut;
    int d = digit[last];
    int64_t j = 0;
    while (j < count) {
        const int64_t run = r_last - d < count - j ? r_last - d : count - j;
        const int32_t *p = lut + base;
        int32_t *dst = cells + j;
        if (vs_last == 0) {
            const int32_t c = p[0];
            for (int64_t i = 0; i < run; ++i)
                dst[i] = c;
        } else if (vs_last == 1) {
            memcpy(dst, p + d, (size_t)run * sizeof *dst);
        } else {
            const int32_t *q = p + d * vs_last;
            for (int64_t i = 0; i < run; ++i)
                dst[i] = q[i * vs_last];
        }
        j += run;
        d += (int)run;
        if (d == r_last) {
            d = 0;
            for (int v = last - 1; v >= 0; --v) {
                base += t->vstride[v];
                if (++digit[v] < radix[v])
                    break;
                base -= radix[v] * t->vstride[v];
                digit[v] = 0;
            }
        }
    }
    return 0;
}
