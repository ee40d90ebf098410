/* Evaluating a feature on one sonority, and the canonical order of its
 * values. */
#include "parnassus/feature.h"

#include "feature_internal.h"

#include <limits.h>
#include <string.h>

#define R PN_FEATURE_REST

/* Sort key of a value entry: R after every integer. Entries are bounded far
 * below INT_MAX (pitches <= 127, at most 7 nested differences). */
static inline int entry_key(int v)
{
    return v == R ? INT_MAX : v;
}

int pn_feature_apply_ops(const pn_feature *f, int first_op, int *buf)
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
        case OP_CLAMP:
            for (int i = 0; i < len; ++i)
                if (buf[i] != R)
                    buf[i] = (int)pn_feature_clamp(buf[i], f->lo[k], f->hi[k]);
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
    const int len = pn_feature_apply_ops(f, 0, buf);
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
