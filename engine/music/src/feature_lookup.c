/* Reading a value table: its size and values, the cell of a sonority,
 * and the cell of a value written as text ("(-7,R)"). */
#include "parnassus/feature.h"

#include "feature_internal.h"

#include <ctype.h>

#define R PN_FEATURE_REST

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
