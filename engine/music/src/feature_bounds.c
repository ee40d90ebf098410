/* What a feature's values can be over a space before they are
 * enumerated: bounds of each entry by interval arithmetic, and from them
 * the memory a value table will take. */
#include "parnassus/feature.h"

#include "feature_internal.h"
#include "parnassus/memory.h"

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
void pn_feature_value_bounds(const pn_feature *f, const pn_space *space, int64_t *lo, int64_t *hi,
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
        case OP_CLAMP: /* monotone: the bounds are clamped too */
            for (int i = 0; i < len; ++i) {
                lo[i] = pn_feature_clamp(lo[i], f->lo[k], f->hi[k]);
                hi[i] = pn_feature_clamp(hi[i], f->lo[k], f->hi[k]);
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
    pn_feature_value_bounds(f, space, lo, hi, &distinct);
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
