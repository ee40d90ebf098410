/* The feature language as text: parsing "mod12(diff(w(1,2)))" into a
 * feature, and writing a feature and its values back. */
#include "parnassus/feature.h"

#include "feature_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    feature_op op;
} descriptors[] = {
    {"mod12", OP_MOD12}, {"diff", OP_DIFF}, {"sort", OP_SORT},   {"order", OP_ORDER},
    {"abs", OP_ABS},     {"rel", OP_REL},   {"clamp", OP_CLAMP},
};

enum { NUM_DESCRIPTORS = sizeof descriptors / sizeof descriptors[0] };

static const char *op_name(int op)
{
    for (int i = 0; i < NUM_DESCRIPTORS; ++i)
        if ((int)descriptors[i].op == op)
            return descriptors[i].name;
    return "?";
}

#define R PN_FEATURE_REST

/* The bounds of clamp(LO,HI,...): far inside int, so no entry overflows. */
#define CLAMP_LIMIT 100000

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

/* One bound of clamp(LO,HI,...): an integer in -CLAMP_LIMIT..CLAMP_LIMIT
 * with an optional sign, then `sep`. */
static pn_error parse_bound(parser *p, const char *which, char sep, int *bound)
{
    char found[32];
    skip_space(p);
    const size_t start = p->pos;
    int neg = 0;
    if (p->text[p->pos] == '-' || p->text[p->pos] == '+')
        neg = p->text[p->pos++] == '-';
    if (!isdigit((unsigned char)p->text[p->pos]))
        return parse_fail(p, start, "expected the %s bound of clamp (an integer), found %s", which,
                          found_at(p, start, found, sizeof found));
    long v = 0;
    while (isdigit((unsigned char)p->text[p->pos])) {
        if (v <= CLAMP_LIMIT)
            v = v * 10 + (p->text[p->pos] - '0');
        p->pos++;
    }
    if (v > CLAMP_LIMIT) {
        const int digits = (int)(p->pos - start);
        return parse_fail(p, start, "%s bound %.*s%s of clamp out of range %d..%d", which,
                          digits > 12 ? 12 : digits, p->text + start, digits > 12 ? "..." : "",
                          -CLAMP_LIMIT, CLAMP_LIMIT);
    }
    *bound = (int)(neg ? -v : v);
    skip_space(p);
    if (p->text[p->pos] != sep)
        return parse_fail(p, p->pos, "expected '%c' after the %s bound of clamp, found %s", sep,
                          which, found_at(p, p->pos, found, sizeof found));
    p->pos++;
    return PN_OK;
}

/* The bounds of clamp(LO,HI,...), after its '(': LO, HI, each followed by
 * a comma, and LO <= HI. */
static pn_error parse_clamp_bounds(parser *p, int *lo, int *hi)
{
    skip_space(p);
    const size_t lo_pos = p->pos;
    pn_error err;
    if ((err = parse_bound(p, "lower", ',', lo)) != PN_OK ||
        (err = parse_bound(p, "upper", ',', hi)) != PN_OK)
        return err;
    if (*lo > *hi)
        return parse_fail(p, lo_pos, "clamp's lower bound %d is above its upper bound %d", *lo,
                          *hi);
    return PN_OK;
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
    int outer_lo[PN_FEATURE_MAX_DEPTH], outer_hi[PN_FEATURE_MAX_DEPTH]; /* clamp bounds */
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
                             " (known: mod12, diff, rel, sort, order, abs, clamp(LO,HI,...); "
                             "a window is w(...))");
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
        outer_lo[depth] = outer_hi[depth] = 0;
        if (op == OP_CLAMP &&
            (err = parse_clamp_bounds(&p, &outer_lo[depth], &outer_hi[depth])) != PN_OK)
            return err;
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
        f.lo[f.num_ops] = outer_lo[i];
        f.hi[f.num_ops] = outer_hi[i];
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
        if (f->ops[i] == OP_CLAMP) {
            out_int(&o, f->lo[i]);
            out_str(&o, ",");
            out_int(&o, f->hi[i]);
            out_str(&o, ",");
        }
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
