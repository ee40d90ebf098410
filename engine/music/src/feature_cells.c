/* Feature tables as the cell source of the de-overlap: the cells of a run
 * of raw inputs (sonorities in space order) under one rule's table. */
#include "parnassus/feature.h"

#include "feature_internal.h"

#include <string.h>

static int same_space(const pn_space *a, const pn_space *b)
{
    if (a->num_voices != b->num_voices)
        return 0;
    for (int v = 0; v < a->num_voices; ++v)
        if (a->low[v] != b->low[v] || a->high[v] != b->high[v])
            return 0;
    return 1;
}

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
