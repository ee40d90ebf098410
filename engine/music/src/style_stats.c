/* Style statistics: the table of distributions and rates, pooling, TV
 * distances, quantiles and bin labels (docs/evaluate.md). */
#include "parnassus/style.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    FIRST_CHORD = 0,
    FIRST_MOTION = FIRST_CHORD + PN_STYLE_CHORD_BINS,
    FIRST_SPACING = FIRST_MOTION + 4 * PN_STYLE_MOTION_BINS,
    FIRST_VOICES = FIRST_SPACING + 3 * PN_STYLE_SPACING_BINS,
    FIRST_DOUBLING = FIRST_VOICES + PN_STYLE_VOICES_MAX,
    FIRST_RANGE = FIRST_DOUBLING + PN_STYLE_PC_BINS,
    FIRST_ROOT = FIRST_RANGE + 4 * PN_STYLE_RANGE_BINS,
    FIRST_TONAL = FIRST_ROOT + PN_STYLE_PC_BINS,
    FIRST_SPAN = FIRST_TONAL + 3 * PN_STYLE_PC_BINS,
    FIRST_KEY_AREA = FIRST_SPAN + 4 * PN_STYLE_SPAN_BINS,
    END_BINS = FIRST_KEY_AREA + PN_STYLE_KEY_AREA_BINS,
};

_Static_assert((int)END_BINS == (int)PN_STYLE_NUM_BINS,
               "the bins of the distributions fill the array");

static const pn_style_dist_info DISTS[PN_STYLE_NUM_DISTS] = {
    [PN_STYLE_CHORD] = {"chord", "chord types", PN_STYLE_CHORD_BINS, 0, PN_STYLE_LABEL_PCSET,
                        FIRST_CHORD},
    [PN_STYLE_SOPRANO_MOTION] = {"soprano_motion", "soprano motion", PN_STYLE_MOTION_BINS,
                                 -PN_STYLE_MOTION_CLAMP, PN_STYLE_LABEL_INT, FIRST_MOTION},
    [PN_STYLE_ALTO_MOTION] = {"alto_motion", "alto motion", PN_STYLE_MOTION_BINS,
                              -PN_STYLE_MOTION_CLAMP, PN_STYLE_LABEL_INT,
                              FIRST_MOTION + PN_STYLE_MOTION_BINS},
    [PN_STYLE_TENOR_MOTION] = {"tenor_motion", "tenor motion", PN_STYLE_MOTION_BINS,
                               -PN_STYLE_MOTION_CLAMP, PN_STYLE_LABEL_INT,
                               FIRST_MOTION + 2 * PN_STYLE_MOTION_BINS},
    [PN_STYLE_BASS_MOTION] = {"bass_motion", "bass motion", PN_STYLE_MOTION_BINS,
                              -PN_STYLE_MOTION_CLAMP, PN_STYLE_LABEL_INT,
                              FIRST_MOTION + 3 * PN_STYLE_MOTION_BINS},
    [PN_STYLE_SPACING_SA] = {"spacing_sa", "spacing soprano-alto", PN_STYLE_SPACING_BINS, 0,
                             PN_STYLE_LABEL_INT, FIRST_SPACING},
    [PN_STYLE_SPACING_AT] = {"spacing_at", "spacing alto-tenor", PN_STYLE_SPACING_BINS, 0,
                             PN_STYLE_LABEL_INT, FIRST_SPACING + PN_STYLE_SPACING_BINS},
    [PN_STYLE_SPACING_TB] = {"spacing_tb", "spacing tenor-bass", PN_STYLE_SPACING_BINS, 0,
                             PN_STYLE_LABEL_INT, FIRST_SPACING + 2 * PN_STYLE_SPACING_BINS},
    [PN_STYLE_VOICES] = {"voices", "pitches per sonority", PN_STYLE_VOICES_MAX, 1,
                         PN_STYLE_LABEL_INT, FIRST_VOICES},
    [PN_STYLE_DOUBLING] = {"doubling", "doubled pitch class", PN_STYLE_PC_BINS, 0,
                           PN_STYLE_LABEL_INT, FIRST_DOUBLING},
    [PN_STYLE_RANGE_SOPRANO] = {"range_soprano", "soprano range", PN_STYLE_RANGE_BINS, 0,
                                PN_STYLE_LABEL_INT, FIRST_RANGE},
    [PN_STYLE_RANGE_ALTO] = {"range_alto", "alto range", PN_STYLE_RANGE_BINS, 0, PN_STYLE_LABEL_INT,
                             FIRST_RANGE + PN_STYLE_RANGE_BINS},
    [PN_STYLE_RANGE_TENOR] = {"range_tenor", "tenor range", PN_STYLE_RANGE_BINS, 0,
                              PN_STYLE_LABEL_INT, FIRST_RANGE + 2 * PN_STYLE_RANGE_BINS},
    [PN_STYLE_RANGE_BASS] = {"range_bass", "bass range", PN_STYLE_RANGE_BINS, 0, PN_STYLE_LABEL_INT,
                             FIRST_RANGE + 3 * PN_STYLE_RANGE_BINS},
    [PN_STYLE_ROOT_MOTION] = {"root_motion", "root motion", PN_STYLE_PC_BINS, 0, PN_STYLE_LABEL_INT,
                              FIRST_ROOT},
    [PN_STYLE_TONAL] = {"tonal", "tonal profile", PN_STYLE_PC_BINS, 0, PN_STYLE_LABEL_INT,
                        FIRST_TONAL},
    [PN_STYLE_TONAL_MAJOR] = {"tonal_major", "tonal profile (major keys)", PN_STYLE_PC_BINS, 0,
                              PN_STYLE_LABEL_INT, FIRST_TONAL + PN_STYLE_PC_BINS},
    [PN_STYLE_TONAL_MINOR] = {"tonal_minor", "tonal profile (minor keys)", PN_STYLE_PC_BINS, 0,
                              PN_STYLE_LABEL_INT, FIRST_TONAL + 2 * PN_STYLE_PC_BINS},
    [PN_STYLE_SPAN_SOPRANO] = {"span_soprano", "soprano span in a phrase", PN_STYLE_SPAN_BINS, 0,
                               PN_STYLE_LABEL_INT, FIRST_SPAN},
    [PN_STYLE_SPAN_ALTO] = {"span_alto", "alto span in a phrase", PN_STYLE_SPAN_BINS, 0,
                            PN_STYLE_LABEL_INT, FIRST_SPAN + PN_STYLE_SPAN_BINS},
    [PN_STYLE_SPAN_TENOR] = {"span_tenor", "tenor span in a phrase", PN_STYLE_SPAN_BINS, 0,
                             PN_STYLE_LABEL_INT, FIRST_SPAN + 2 * PN_STYLE_SPAN_BINS},
    [PN_STYLE_SPAN_BASS] = {"span_bass", "bass span in a phrase", PN_STYLE_SPAN_BINS, 0,
                            PN_STYLE_LABEL_INT, FIRST_SPAN + 3 * PN_STYLE_SPAN_BINS},
    [PN_STYLE_KEY_AREA] = {"key_area", "key areas in a phrase", PN_STYLE_KEY_AREA_BINS, 0,
                           PN_STYLE_LABEL_KEY, FIRST_KEY_AREA},
};

/* A key as a degree of the piece's key, by bin: the major keys (upper case)
 * on each of the twelve degrees, then the minor keys (lower case). */
static const char *const KEY_AREA_LABEL[PN_STYLE_KEY_AREA_BINS] = {
    "I", "bII", "II", "bIII", "III", "IV", "#IV", "V", "bVI", "VI", "bVII", "VII",
    "i", "bii", "ii", "biii", "iii", "iv", "#iv", "v", "bvi", "vi", "bvii", "vii",
};

static const pn_style_rate_info RATES[PN_STYLE_NUM_RATES] = {
    [PN_STYLE_PARALLELS] = {"parallels", "parallel 5ths and 8ves"},
    [PN_STYLE_PARALLEL_FIFTHS] = {"parallel_fifths", "parallel 5ths"},
    [PN_STYLE_PARALLEL_OCTAVES] = {"parallel_octaves", "parallel 8ves and unisons"},
    [PN_STYLE_HIDDEN] = {"hidden", "hidden 5ths and 8ves"},
    [PN_STYLE_WIDE] = {"wide", "wide spacing"},
    [PN_STYLE_CROSSING] = {"crossing", "voice crossing"},
    [PN_STYLE_AUTHENTIC] = {"authentic", "authentic root motion"},
    [PN_STYLE_COPY4] = {"copy4", "4-grams copied"},
};

const pn_style_dist_info *pn_style_dist_get(pn_style_dist d)
{
    return (unsigned)d < PN_STYLE_NUM_DISTS ? &DISTS[d] : NULL;
}

const pn_style_rate_info *pn_style_rate_get(pn_style_rate r)
{
    return (unsigned)r < PN_STYLE_NUM_RATES ? &RATES[r] : NULL;
}

void pn_style_stats_clear(pn_style_stats *s)
{
    memset(s, 0, sizeof *s);
}

static int64_t add_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

void pn_style_stats_add(pn_style_stats *dst, const pn_style_stats *src)
{
    for (int i = 0; i < PN_STYLE_NUM_BINS; ++i)
        dst->bins[i] = add_sat(dst->bins[i], src->bins[i]);
    for (int r = 0; r < PN_STYLE_NUM_RATES; ++r) {
        dst->hits[r] = add_sat(dst->hits[r], src->hits[r]);
        dst->total[r] = add_sat(dst->total[r], src->total[r]);
    }
    dst->pieces = add_sat(dst->pieces, src->pieces);
    dst->pieces_major = add_sat(dst->pieces_major, src->pieces_major);
    dst->pieces_minor = add_sat(dst->pieces_minor, src->pieces_minor);
    dst->sonorities = add_sat(dst->sonorities, src->sonorities);
}

const int64_t *pn_style_counts(const pn_style_stats *s, pn_style_dist d)
{
    return s->bins + DISTS[d].first;
}

static int64_t total_of(const int64_t *c, int32_t n)
{
    int64_t t = 0;
    for (int32_t i = 0; i < n; ++i)
        t = add_sat(t, c[i]);
    return t;
}

int64_t pn_style_dist_total(const pn_style_stats *s, pn_style_dist d)
{
    return total_of(pn_style_counts(s, d), DISTS[d].size);
}

double pn_style_share(const pn_style_stats *s, pn_style_dist d, int32_t bin)
{
    if (bin < 0 || bin >= DISTS[d].size)
        return 0.0;
    const int64_t t = pn_style_dist_total(s, d);
    return t > 0 ? (double)pn_style_counts(s, d)[bin] / (double)t : 0.0;
}

double pn_style_share_bins(const pn_style_stats *s, pn_style_dist d, const int32_t *bins,
                           int num_bins)
{
    const int64_t t = pn_style_dist_total(s, d);
    if (t <= 0)
        return NAN;
    const int64_t *c = pn_style_counts(s, d);
    int64_t in = 0;
    for (int i = 0; i < num_bins; ++i) {
        const int32_t b = bins[i];
        int seen = b < 0 || b >= DISTS[d].size;
        for (int j = 0; j < i && !seen; ++j)
            seen = bins[j] == b;
        if (!seen)
            in = add_sat(in, c[b]);
    }
    return (double)in / (double)t;
}

double pn_style_share_magnitude(const pn_style_stats *s, pn_style_dist d, int32_t lo, int32_t hi)
{
    const int64_t t = pn_style_dist_total(s, d);
    if (t <= 0)
        return NAN;
    const int64_t *c = pn_style_counts(s, d);
    int64_t in = 0;
    for (int32_t b = 0; b < DISTS[d].size; ++b) {
        const int64_t v = (int64_t)b + DISTS[d].offset;
        const int64_t m = v < 0 ? -v : v;
        if (m >= lo && m <= hi)
            in = add_sat(in, c[b]);
    }
    return (double)in / (double)t;
}

double pn_style_tv_counts(const int64_t *p, const int64_t *q, int32_t n)
{
    const int64_t tp = total_of(p, n), tq = total_of(q, n);
    if (tp <= 0 || tq <= 0)
        return NAN;
    double sum = 0.0;
    for (int32_t i = 0; i < n; ++i)
        sum += fabs((double)p[i] / (double)tp - (double)q[i] / (double)tq);
    return 0.5 * sum;
}

double pn_style_tv(const pn_style_stats *a, const pn_style_stats *b, pn_style_dist d)
{
    return pn_style_tv_counts(pn_style_counts(a, d), pn_style_counts(b, d), DISTS[d].size);
}

double pn_style_rate_value(const pn_style_stats *s, pn_style_rate r)
{
    return s->total[r] > 0 ? (double)s->hits[r] / (double)s->total[r] : NAN;
}

int32_t pn_style_quantile(const pn_style_stats *s, pn_style_dist d, double q)
{
    const int64_t *c = pn_style_counts(s, d);
    const int64_t t = pn_style_dist_total(s, d);
    if (t <= 0)
        return INT32_MIN;
    /* the smallest bin whose cumulative count reaches q * t (at least one) */
    double want = q * (double)t;
    if (want < 1.0)
        want = 1.0;
    int64_t cum = 0;
    for (int32_t i = 0; i < DISTS[d].size; ++i) {
        cum = add_sat(cum, c[i]);
        if ((double)cum >= want)
            return i + DISTS[d].offset;
    }
    return DISTS[d].size - 1 + DISTS[d].offset;
}

int32_t pn_style_mode_bin(const pn_style_stats *s, pn_style_dist d)
{
    const int64_t *c = pn_style_counts(s, d);
    int32_t best = -1;
    for (int32_t i = 0; i < DISTS[d].size; ++i)
        if (c[i] > 0 && (best < 0 || c[i] > c[best]))
            best = i;
    return best;
}

void pn_style_bin_label(pn_style_dist d, int32_t bin, char *buf, size_t size)
{
    if (size == 0)
        return;
    if (DISTS[d].label == PN_STYLE_LABEL_INT) {
        snprintf(buf, size, "%d", (int)(bin + DISTS[d].offset));
        return;
    }
    if (DISTS[d].label == PN_STYLE_LABEL_KEY) {
        snprintf(buf, size, "%s",
                 bin >= 0 && bin < PN_STYLE_KEY_AREA_BINS ? KEY_AREA_LABEL[bin] : "?");
        return;
    }
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < 12; ++c) {
        if (!((unsigned)bin & (1u << c)))
            continue;
        int n = snprintf(buf + used, size - used, used ? ",%d" : "%d", c);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
}

/* A decimal integer in canonical form ("0", "7", "-12"; no "+", no leading
 * zeros, no "-0"), at most 4 digits. */
static int parse_canonical_int(const char *s, const char **end, int *out)
{
    int neg = 0, v = 0, digits = 0;
    if (*s == '-') {
        neg = 1;
        ++s;
    }
    if (*s < '0' || *s > '9')
        return -1;
    if (*s == '0' && (neg || (s[1] >= '0' && s[1] <= '9')))
        return -1;
    while (*s >= '0' && *s <= '9') {
        if (++digits > 4)
            return -1;
        v = 10 * v + (*s - '0');
        ++s;
    }
    *end = s;
    *out = neg ? -v : v;
    return 0;
}

int pn_style_bin_parse(pn_style_dist d, const char *text, int32_t *bin)
{
    if ((unsigned)d >= PN_STYLE_NUM_DISTS || !text)
        return -1;
    const char *end = NULL;
    int v;
    if (DISTS[d].label == PN_STYLE_LABEL_INT) {
        if (parse_canonical_int(text, &end, &v) != 0 || *end != '\0')
            return -1;
        v -= DISTS[d].offset;
        if (v < 0 || v >= DISTS[d].size)
            return -1;
        *bin = v;
        return 0;
    }
    if (DISTS[d].label == PN_STYLE_LABEL_KEY) {
        for (int32_t i = 0; i < PN_STYLE_KEY_AREA_BINS; ++i)
            if (strcmp(text, KEY_AREA_LABEL[i]) == 0) {
                *bin = i;
                return 0;
            }
        return -1;
    }
    /* "0,c1,c2,...": strictly ascending pitch classes starting with 0 */
    unsigned mask = 0;
    int last = -1;
    const char *p = text;
    for (;;) {
        if (parse_canonical_int(p, &end, &v) != 0 || v < 0 || v > 11 || v <= last)
            return -1;
        if (last < 0 && v != 0)
            return -1;
        mask |= 1u << v;
        last = v;
        if (*end == '\0')
            break;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
    *bin = (int32_t)mask;
    return 0;
}

void pn_style_compare(const pn_style_stats *a, const pn_style_stats *b, pn_style_comparison *out)
{
    for (int d = 0; d < PN_STYLE_NUM_DISTS; ++d)
        out->tv[d] = pn_style_tv(a, b, (pn_style_dist)d);
    for (int r = 0; r < PN_STYLE_NUM_RATES; ++r) {
        out->rate[0][r] = pn_style_rate_value(a, (pn_style_rate)r);
        out->rate[1][r] = pn_style_rate_value(b, (pn_style_rate)r);
    }
}

/* ------------------------------------------------------------------------ */
/* The root finder */

/* Templates from the root, as pitch-class masks, in the order of
 * pn_style_chord_kind. */
#define PCS3(a, b, c)    ((1u << (a)) | (1u << (b)) | (1u << (c)))
#define PCS4(a, b, c, d) (PCS3(a, b, c) | (1u << (d)))
static const unsigned TEMPLATES[] = {
    0,
    PCS3(0, 4, 7),     /* major triad */
    PCS3(0, 3, 7),     /* minor triad */
    PCS3(0, 3, 6),     /* diminished triad */
    PCS3(0, 4, 8),     /* augmented triad */
    PCS4(0, 4, 7, 10), /* dominant seventh */
    PCS4(0, 4, 7, 11), /* major seventh */
    PCS4(0, 3, 7, 10), /* minor seventh */
    PCS4(0, 3, 6, 10), /* half-diminished seventh */
    PCS4(0, 3, 6, 9),  /* diminished seventh */
};
#undef PCS3
#undef PCS4

/* The mask moved down by r semitones (pitch class r becomes 0). */
static unsigned rotate_down(unsigned mask, int r)
{
    mask &= 0xFFFu;
    return ((mask >> r) | (mask << (12 - r))) & 0xFFFu;
}

pn_style_chord_kind pn_style_root(unsigned mask, int bass_pc, int *root)
{
    *root = -1;
    mask &= 0xFFFu;
    bass_pc = ((bass_pc % 12) + 12) % 12;
    for (int i = 0; i < 12; ++i) {
        const int r = (bass_pc + i) % 12;
        if (!(mask & (1u << r)))
            continue;
        const unsigned rel = rotate_down(mask, r);
        for (int k = PN_STYLE_MAJOR_TRIAD; k <= PN_STYLE_DIMINISHED_SEVENTH; ++k)
            if (rel == TEMPLATES[k]) {
                *root = r;
                return (pn_style_chord_kind)k;
            }
    }
    return PN_STYLE_NO_ROOT;
}

/* ------------------------------------------------------------------------ */
/* 4-gram sets */

int pn_style_grams_contains(const pn_style_grams *g, uint64_t h)
{
    int64_t lo = 0, hi = g ? g->count : 0;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (g->hash[mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return g && lo < g->count && g->hash[lo] == h;
}

static int compare_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int64_t pn_style_grams_normalize(uint64_t *hash, int64_t count)
{
    if (count <= 0)
        return 0;
    qsort(hash, (size_t)count, sizeof *hash, compare_u64);
    int64_t kept = 1;
    for (int64_t i = 1; i < count; ++i)
        if (hash[i] != hash[kept - 1])
            hash[kept++] = hash[i];
    return kept;
}

void pn_style_grams_free(pn_style_grams *g)
{
    if (!g)
        return;
    free(g->hash);
    g->hash = NULL;
    g->count = 0;
}

uint64_t pn_style_gram_hash(const uint8_t *const s[PN_STYLE_GRAM], const int n[PN_STYLE_GRAM])
{
    const uint64_t prime = 0x100000001B3ull;
    uint64_t h = 0xCBF29CE484222325ull;
    const int base = s[0][0];
    for (int i = 0; i < PN_STYLE_GRAM; ++i) {
        h = (h ^ (uint64_t)(n[i] & 0xFF)) * prime;
        for (int j = 0; j < n[i]; ++j)
            h = (h ^ (uint64_t)((s[i][j] - base + 128) & 0xFF)) * prime;
    }
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}
