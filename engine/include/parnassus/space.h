/* The sonority space X = Omega_1 x ... x Omega_k.
 *
 * k voices (1..8; default 4: soprano, alto, tenor, bass = voices 1..4,
 * highest first). Voice v takes a rest or a MIDI pitch in [low_v, high_v];
 * its value index is 0 for the rest and 1 + pitch - low_v for a pitch, so
 * it has R_v = high_v - low_v + 2 values. A sonority is indexed by mixed
 * radix with voice 1 most significant:
 *
 *     x = ((i_1 * R_2 + i_2) * R_3 + i_3) ...,   n = R_1 * ... * R_k.
 *
 * In the C API voices are 0-based array positions (pitches[0] = voice 1);
 * a rest is PN_REST (any negative pitch is read as a rest). */
#ifndef PARNASSUS_SPACE_H
#define PARNASSUS_SPACE_H

#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PN_SPACE_MAX_VOICES = 8,
    PN_REST = -1, /* a rest in a pitch array */
    PN_SPACE_DEFAULT_VOICES = 4,
    PN_SPACE_DEFAULT_LOW = 31,  /* G1 */
    PN_SPACE_DEFAULT_HIGH = 84, /* C6 */
};

/* A plain value: fill it with pn_space_default() or pn_space_init(), or by
 * hand and check it with pn_space_validate(). Entries past num_voices are
 * ignored (the init functions set them to 0). */
typedef struct pn_space {
    int num_voices;                /* k, 1..PN_SPACE_MAX_VOICES */
    int low[PN_SPACE_MAX_VOICES];  /* lowest MIDI pitch of each voice */
    int high[PN_SPACE_MAX_VOICES]; /* highest MIDI pitch, low <= high <= 127 */
} pn_space;

/* 4 voices, each 31..84 (n = 55^4 = 9,150,625). */
void pn_space_default(pn_space *space);

/* k voices with per-voice ranges low[v]..high[v] (v = 0..k-1); validates. */
pn_error pn_space_init(pn_space *space, int num_voices, const int *low, const int *high,
                       pn_error_info *info);

/* Checks 1 <= k <= 8 and 0 <= low_v <= high_v <= 127 for every voice. */
pn_error pn_space_validate(const pn_space *space, pn_error_info *info);

/* R_v = high_v - low_v + 2 values of voice v (0-based), the rest included. */
static inline int pn_space_radix(const pn_space *space, int voice)
{
    return space->high[voice] - space->low[voice] + 2;
}

/* n = product of the radices. */
int64_t pn_space_size(const pn_space *space);

/* The pitches of sonority x (k entries, PN_REST for a rest). Returns
 * PN_ERR_INVALID when x is outside [0, n). */
pn_error pn_space_decode(const pn_space *space, int64_t x, int *pitches, pn_error_info *info);

/* Voice `voice`'s value index in every sonority: labels[x] = 0 for a rest,
 * 1 + pitch - low otherwise, for x = 0..n-1 (the voice's mixed-radix
 * digit; e.g. the labels of conditional draws with that voice fixed). */
void pn_space_voice_labels(const pn_space *space, int voice, int32_t *labels);

/* The index of a sonority (k pitches, negative = rest). Returns
 * PN_ERR_INVALID, naming the voice, when a pitch is outside its voice's
 * range. */
pn_error pn_space_encode(const pn_space *space, const int *pitches, int64_t *x,
                         pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
