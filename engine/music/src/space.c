/* The sonority space: validation and mixed-radix indexing. */
#include "parnassus/space.h"

#include <inttypes.h>
#include <string.h>

void pn_space_default(pn_space *space)
{
    memset(space, 0, sizeof *space);
    space->num_voices = PN_SPACE_DEFAULT_VOICES;
    for (int v = 0; v < PN_SPACE_DEFAULT_VOICES; ++v) {
        space->low[v] = PN_SPACE_DEFAULT_LOW;
        space->high[v] = PN_SPACE_DEFAULT_HIGH;
    }
}

pn_error pn_space_init(pn_space *space, int num_voices, const int *low, const int *high,
                       pn_error_info *info)
{
    memset(space, 0, sizeof *space);
    if (num_voices < 1 || num_voices > PN_SPACE_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "space: %d voices, expected 1..%d", num_voices,
                       PN_SPACE_MAX_VOICES);
    space->num_voices = num_voices;
    for (int v = 0; v < num_voices; ++v) {
        space->low[v] = low[v];
        space->high[v] = high[v];
    }
    return pn_space_validate(space, info);
}

pn_error pn_space_validate(const pn_space *space, pn_error_info *info)
{
    if (space->num_voices < 1 || space->num_voices > PN_SPACE_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "space: %d voices, expected 1..%d", space->num_voices,
                       PN_SPACE_MAX_VOICES);
    for (int v = 0; v < space->num_voices; ++v) {
        const int lo = space->low[v], hi = space->high[v];
        if (lo < 0 || hi > 127 || lo > hi)
            return pn_fail(info, PN_ERR_INVALID,
                           "space: voice %d has range %d..%d, expected 0 <= low <= high <= 127",
                           v + 1, lo, hi);
    }
    return PN_OK;
}

int64_t pn_space_size(const pn_space *space)
{
    int64_t n = 1;
    for (int v = 0; v < space->num_voices; ++v)
        n *= pn_space_radix(space, v);
    return n;
}

void pn_space_voice_labels(const pn_space *space, int voice, int32_t *labels)
{
    /* voice 1 is the most significant digit */
    int64_t stride = 1;
    for (int v = space->num_voices - 1; v > voice; --v)
        stride *= pn_space_radix(space, v);
    const int64_t radix = pn_space_radix(space, voice), n = pn_space_size(space);
    for (int64_t x = 0; x < n; ++x)
        labels[x] = (int32_t)((x / stride) % radix);
}

pn_error pn_space_decode(const pn_space *space, int64_t x, int *pitches, pn_error_info *info)
{
    const int64_t n = pn_space_size(space);
    if (x < 0 || x >= n)
        return pn_fail(info, PN_ERR_INVALID, "sonority index %" PRId64 " outside [0, %" PRId64 ")",
                       x, n);
    for (int v = space->num_voices - 1; v >= 0; --v) {
        const int radix = pn_space_radix(space, v);
        const int index = (int)(x % radix);
        x /= radix;
        pitches[v] = index == 0 ? PN_REST : space->low[v] + index - 1;
    }
    return PN_OK;
}

pn_error pn_space_encode(const pn_space *space, const int *pitches, int64_t *x, pn_error_info *info)
{
    int64_t index = 0;
    for (int v = 0; v < space->num_voices; ++v) {
        const int p = pitches[v];
        int digit = 0;
        if (p >= 0) {
            if (p < space->low[v] || p > space->high[v])
                return pn_fail(info, PN_ERR_INVALID, "voice %d: pitch %d outside its range %d..%d",
                               v + 1, p, space->low[v], space->high[v]);
            digit = p - space->low[v] + 1;
        }
        index = index * pn_space_radix(space, v) + digit;
    }
    *x = index;
    return PN_OK;
}
