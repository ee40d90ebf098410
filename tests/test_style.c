/* Tests of the style statistics (engine/music/src/style*.c, docs/evaluate.md) on
 * hand-made pieces whose every figure is known. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/corpus.h"
#include "parnassus/key.h"
#include "parnassus/style.h"

/* ------------------------------------------------------------------------ */
/* Helpers */

static const pn_key C_MAJOR = {0, PN_MAJOR, 1.0};

static pn_style_acc *new_acc(const pn_style_grams *training, int collect)
{
    pn_style_options o;
    pn_style_options_default(&o);
    o.training = training;
    o.collect_grams = collect;
    pn_style_acc *acc = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_style_acc_create(&o, &acc, &info), PN_OK);
    assert_non_null(acc);
    return acc;
}

/* Adds an unlabelled event of n pitches. */
static void add(pn_style_acc *acc, int n, ...)
{
    int p[16];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; ++i)
        p[i] = va_arg(ap, int);
    va_end(ap);
    pn_error_info info = {PN_OK, ""};
    if (pn_style_add_notes(acc, p, NULL, n, &info) != PN_OK)
        fail_msg("%s", info.message);
}

/* Adds a labelled event: soprano, alto, tenor, bass (PN_REST = silent). */
static void add4(pn_style_acc *acc, int s, int a, int t, int b)
{
    const int p[4] = {s, a, t, b};
    pn_error_info info = {PN_OK, ""};
    if (pn_style_add_voices(acc, p, 4, &info) != PN_OK)
        fail_msg("%s", info.message);
}

static int64_t count_of(const pn_style_stats *s, pn_style_dist d, int value)
{
    const pn_style_dist_info *di = pn_style_dist_get(d);
    const int bin = value - di->offset;
    assert_true(bin >= 0 && bin < di->size);
    return pn_style_counts(s, d)[bin];
}

static int64_t chord_count(const pn_style_stats *s, const char *label)
{
    int32_t bin;
    assert_int_equal(pn_style_bin_parse(PN_STYLE_CHORD, label, &bin), 0);
    return pn_style_counts(s, PN_STYLE_CHORD)[bin];
}

static void assert_near(double x, double want, double tol)
{
    if (!(fabs(x - want) <= tol))
        fail_msg("got %.17g, expected %.17g (tolerance %g)", x, want, tol);
}

/* ------------------------------------------------------------------------ */
/* Tables and labels */

static void test_tables(void **state)
{
    (void)state;
    int32_t total = 0;
    for (int d = 0; d < PN_STYLE_NUM_DISTS; ++d) {
        const pn_style_dist_info *di = pn_style_dist_get((pn_style_dist)d);
        assert_non_null(di);
        assert_int_equal(di->first, total);
        total += di->size;
        /* every label reads back to its bin */
        for (int32_t bin = 0; bin < di->size; ++bin) {
            if (di->label == PN_STYLE_LABEL_PCSET && !(bin & 1))
                continue; /* chord types always hold the bass's pitch class */
            char label[64];
            int32_t back = -1;
            pn_style_bin_label((pn_style_dist)d, bin, label, sizeof label);
            assert_int_equal(pn_style_bin_parse((pn_style_dist)d, label, &back), 0);
            assert_int_equal(back, bin);
        }
    }
    assert_int_equal(total, PN_STYLE_NUM_BINS);
    assert_null(pn_style_dist_get(PN_STYLE_NUM_DISTS));
    assert_null(pn_style_rate_get(PN_STYLE_NUM_RATES));

    int32_t bin;
    static const char *const bad_motion[] = {"13", "-13", "+1", "01", "-0", "", "1 ", "x", "1.0"};
    for (size_t i = 0; i < sizeof bad_motion / sizeof bad_motion[0]; ++i)
        assert_int_equal(pn_style_bin_parse(PN_STYLE_SOPRANO_MOTION, bad_motion[i], &bin), -1);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_SOPRANO_MOTION, "-12", &bin), 0);
    assert_int_equal(bin, 0);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_VOICES, "0", &bin), -1);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_VOICES, "8", &bin), 0);
    assert_int_equal(bin, 7);
    static const char *const bad_chord[] = {"4,7", "0,4,4", "0,7,4", "0,12", "0,", ",0", "", "0;4"};
    for (size_t i = 0; i < sizeof bad_chord / sizeof bad_chord[0]; ++i)
        assert_int_equal(pn_style_bin_parse(PN_STYLE_CHORD, bad_chord[i], &bin), -1);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_CHORD, "0,4,7", &bin), 0);
    assert_int_equal(bin, 1 | 1 << 4 | 1 << 7);
    static const char *const bad_area[] = {"", "v ", "Iv", "IIII", "bI", "#V", "0", "V7"};
    for (size_t i = 0; i < sizeof bad_area / sizeof bad_area[0]; ++i)
        assert_int_equal(pn_style_bin_parse(PN_STYLE_KEY_AREA, bad_area[i], &bin), -1);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_KEY_AREA, "V", &bin), 0);
    assert_int_equal(bin, 7);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_KEY_AREA, "bIII", &bin), 0);
    assert_int_equal(bin, 3);
    assert_int_equal(pn_style_bin_parse(PN_STYLE_KEY_AREA, "vi", &bin), 0);
    assert_int_equal(bin, 12 + 9);
}

/* ------------------------------------------------------------------------ */
/* Voice leading */

static void test_parallel_fifth_and_octave(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 4, 48, 55, 64, 72); /* C3 G3 E4 C5 */
    add(acc, 4, 50, 57, 65, 74); /* D3 A3 F4 D5: everything up, G3-C3 and C5-C3 kept */
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->sonorities, 2);
    assert_int_equal(s->total[PN_STYLE_PARALLELS], 6);
    assert_int_equal(s->hits[PN_STYLE_PARALLELS], 2);
    assert_int_equal(s->hits[PN_STYLE_PARALLEL_FIFTHS], 1);
    assert_int_equal(s->hits[PN_STYLE_PARALLEL_OCTAVES], 1);
    assert_int_equal(s->total[PN_STYLE_PARALLEL_FIFTHS], 6);
    assert_near(pn_style_rate_value(s, PN_STYLE_PARALLELS), 2.0 / 6.0, 1e-15);
    /* motions of the four voices by height */
    assert_int_equal(count_of(s, PN_STYLE_SOPRANO_MOTION, 2), 1);
    assert_int_equal(count_of(s, PN_STYLE_ALTO_MOTION, 1), 1);
    assert_int_equal(count_of(s, PN_STYLE_TENOR_MOTION, 2), 1);
    assert_int_equal(count_of(s, PN_STYLE_BASS_MOTION, 2), 1);
    /* the soprano moves by a step: not hidden, and the octave is kept anyway */
    assert_int_equal(s->total[PN_STYLE_HIDDEN], 1);
    assert_int_equal(s->hits[PN_STYLE_HIDDEN], 0);

    /* a kept fifth whose voices do not move is no parallel */
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 3, 48, 55, 64);
    add(acc, 3, 48, 55, 65);
    assert_int_equal(s->total[PN_STYLE_PARALLELS], 6 + 3);
    assert_int_equal(s->hits[PN_STYLE_PARALLELS], 2);
    /* sonorities of different sizes give no voice-pair transitions */
    add(acc, 4, 48, 55, 65, 72);
    assert_int_equal(s->total[PN_STYLE_PARALLELS], 9);
    pn_style_acc_free(acc);
}

static void test_hidden_octave_and_clamping(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 2, 48, 64); /* C3 E4: a tenth */
    add(acc, 2, 50, 74); /* D3 D5: both up, the soprano leaps to a double octave */
    add(acc, 2, 52, 89); /* E3 F6: the soprano leaps 15, clamped to 12 */
    add(acc, 2, 40, 91); /* E2 G6: contrary motion, bass down 12 */
    add(acc, 2, 28, 92); /* E1 Ab6: bass down 12, soprano up 1 */
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->total[PN_STYLE_HIDDEN], 4);
    assert_int_equal(s->hits[PN_STYLE_HIDDEN], 1);
    assert_int_equal(s->total[PN_STYLE_PARALLELS], 4);
    assert_int_equal(s->hits[PN_STYLE_PARALLELS], 0);
    assert_int_equal(count_of(s, PN_STYLE_SOPRANO_MOTION, 10), 1);
    assert_int_equal(count_of(s, PN_STYLE_SOPRANO_MOTION, 12), 1); /* +15 */
    assert_int_equal(count_of(s, PN_STYLE_SOPRANO_MOTION, 2), 1);
    assert_int_equal(count_of(s, PN_STYLE_SOPRANO_MOTION, 1), 1);
    assert_int_equal(count_of(s, PN_STYLE_BASS_MOTION, -12), 2);
    /* alto and tenor motion only between 4-pitch sonorities */
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_ALTO_MOTION), 0);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_TENOR_MOTION), 0);

    /* a hidden fifth needs the soprano to leap: by a step it is not one */
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 2, 48, 62); /* C3 D4 */
    add(acc, 2, 50, 64); /* D3 E4: a ninth to a ninth */
    add(acc, 2, 53, 65); /* F3 F4: up 3 and 1, octave, soprano by a step */
    add(acc, 2, 48, 67); /* C3 G4: contrary */
    add(acc, 2, 50, 69); /* D3 A4: parallel twelfths, not hidden (the same interval) */
    assert_int_equal(s->total[PN_STYLE_HIDDEN], 8);
    assert_int_equal(s->hits[PN_STYLE_HIDDEN], 1);
    assert_int_equal(s->hits[PN_STYLE_PARALLEL_FIFTHS], 1);
    pn_style_acc_free(acc);
}

static void test_spacing_and_doubling(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 4, 48, 55, 60, 76); /* C3 G3 C4 E5: soprano-alto 16 */
    add(acc, 4, 40, 45, 50, 80); /* soprano-alto 30, clamped to 24 */
    add(acc, 4, 48, 55, 64, 72); /* C3 G3 E4 C5: close, C doubled */
    add(acc, 4, 48, 52, 55, 67); /* C3 E3 G3 G4: G doubled */
    add(acc, 4, 48, 60, 74, 79); /* C3 C4 D5 G5: alto-tenor 14 */
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->total[PN_STYLE_WIDE], 5);
    assert_int_equal(s->hits[PN_STYLE_WIDE], 3);
    assert_int_equal(count_of(s, PN_STYLE_SPACING_SA, 16), 1);
    assert_int_equal(count_of(s, PN_STYLE_SPACING_SA, 24), 1);
    assert_int_equal(count_of(s, PN_STYLE_SPACING_SA, 8), 1);
    assert_int_equal(count_of(s, PN_STYLE_SPACING_AT, 5), 2);
    assert_int_equal(count_of(s, PN_STYLE_SPACING_AT, 14), 1);
    assert_int_equal(count_of(s, PN_STYLE_SPACING_TB, 7), 2);
    /* doubling: C G C E (C), E A D G# (four classes: none), C G E C (C),
     * C E G G (G), C C D G (C) */
    assert_int_equal(count_of(s, PN_STYLE_DOUBLING, 0), 3);
    assert_int_equal(count_of(s, PN_STYLE_DOUBLING, 7), 1);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_DOUBLING), 4);
    /* registers: alto = 2nd highest, tenor = 3rd */
    assert_int_equal(count_of(s, PN_STYLE_RANGE_ALTO, 60), 1);
    assert_int_equal(count_of(s, PN_STYLE_RANGE_TENOR, 55), 2);
    assert_int_equal(count_of(s, PN_STYLE_RANGE_BASS, 48), 4);
    assert_int_equal(count_of(s, PN_STYLE_VOICES, 4), 5);
    pn_style_acc_free(acc);
}

static void test_crossing_labelled(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add4(acc, 72, 67, 64, 48);                /* in order */
    add4(acc, 60, 64, 55, 48);                /* the alto above the soprano */
    add4(acc, 60, 64, 55, 48);                /* repeated: merged */
    add4(acc, 64, 60, 55, 48);                /* the same pitches, voices in order */
    add4(acc, 67, PN_REST, 67, 48);           /* a unison of soprano and tenor: no crossing */
    add4(acc, PN_REST, PN_REST, PN_REST, 48); /* one voice: not counted */
    add4(acc, 60, PN_REST, PN_REST, 62);      /* the bass above the soprano */
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->total[PN_STYLE_CROSSING], 5);
    assert_int_equal(s->hits[PN_STYLE_CROSSING], 2);
    /* sonorities by height: the crossed and the uncrossed event sound the
     * same pitches, so they merge */
    assert_int_equal(s->sonorities, 5);
    assert_int_equal(count_of(s, PN_STYLE_VOICES, 2), 2);
    assert_int_equal(count_of(s, PN_STYLE_VOICES, 1), 1);

    /* the same music unlabelled: crossing is not measured */
    pn_style_acc *plain = new_acc(NULL, 0);
    pn_style_begin_piece(plain, C_MAJOR);
    add(plain, 4, 72, 67, 64, 48);
    add(plain, 4, 60, 64, 55, 48);
    assert_int_equal(pn_style_acc_stats(plain)->total[PN_STYLE_CROSSING], 0);
    assert_true(isnan(pn_style_rate_value(pn_style_acc_stats(plain), PN_STYLE_CROSSING)));
    pn_style_acc_free(plain);
    pn_style_acc_free(acc);
}

static void test_merging_unisons_and_rests(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add4(acc, 67, 67, 60, 48);                     /* a unison: 3 pitches */
    add4(acc, 67, 60, 60, 48);                     /* another voicing, the same pitches */
    add4(acc, PN_REST, PN_REST, PN_REST, PN_REST); /* a rest: skipped */
    add(acc, 3, 48, 60, 67);                       /* the same again: merged */
    add(acc, 0);                                   /* nothing sounds */
    add(acc, 3, 48, 60, 69);
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->sonorities, 2);
    assert_int_equal(count_of(s, PN_STYLE_VOICES, 3), 2);
    assert_int_equal(chord_count(s, "0,7"), 1);
    assert_int_equal(chord_count(s, "0,9"), 1);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SOPRANO_MOTION), 1);
    assert_int_equal(count_of(s, PN_STYLE_SOPRANO_MOTION, 2), 1);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SPACING_SA), 0);

    /* ten pitches count as 8 or more; a new piece starts afresh */
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 10, 40, 43, 47, 50, 53, 57, 60, 64, 67, 71);
    add(acc, 3, 48, 60, 69); /* the last sonority of the piece before: not merged */
    assert_int_equal(count_of(s, PN_STYLE_VOICES, 8), 1);
    assert_int_equal(s->sonorities, 4);
    assert_int_equal(s->pieces, 2);
    pn_style_acc_free(acc);
}

static void test_chords_roots_and_cadences(void **state)
{
    (void)state;
    int root;
#define MASK3(a, b, c)    ((1u << (a)) | (1u << (b)) | (1u << (c)))
#define MASK4(a, b, c, d) (MASK3(a, b, c) | (1u << (d)))
    assert_int_equal(pn_style_root(MASK3(0, 4, 7), 0, &root), PN_STYLE_MAJOR_TRIAD);
    assert_int_equal(root, 0);
    assert_int_equal(pn_style_root(MASK3(0, 4, 7), 4, &root), PN_STYLE_MAJOR_TRIAD); /* 6 */
    assert_int_equal(root, 0);
    assert_int_equal(pn_style_root(MASK3(9, 0, 4), 0, &root), PN_STYLE_MINOR_TRIAD);
    assert_int_equal(root, 9);
    assert_int_equal(pn_style_root(MASK3(11, 2, 5), 2, &root), PN_STYLE_DIMINISHED_TRIAD);
    assert_int_equal(root, 11);
    assert_int_equal(pn_style_root(MASK4(7, 11, 2, 5), 11, &root), PN_STYLE_DOMINANT_SEVENTH);
    assert_int_equal(root, 7);
    assert_int_equal(pn_style_root(MASK4(0, 4, 7, 11), 0, &root), PN_STYLE_MAJOR_SEVENTH);
    assert_int_equal(root, 0);
    assert_int_equal(pn_style_root(MASK4(2, 5, 9, 0), 2, &root), PN_STYLE_MINOR_SEVENTH);
    assert_int_equal(root, 2);
    /* A C E G read from C: C6 is no template, A minor seventh is */
    assert_int_equal(pn_style_root(MASK4(9, 0, 4, 7), 0, &root), PN_STYLE_MINOR_SEVENTH);
    assert_int_equal(root, 9);
    assert_int_equal(pn_style_root(MASK4(11, 2, 5, 9), 11, &root),
                     PN_STYLE_HALF_DIMINISHED_SEVENTH);
    assert_int_equal(root, 11);
    /* symmetric chords: the first root at or above the bass */
    assert_int_equal(pn_style_root(MASK4(0, 3, 6, 9), 3, &root), PN_STYLE_DIMINISHED_SEVENTH);
    assert_int_equal(root, 3);
    assert_int_equal(pn_style_root(MASK3(0, 4, 8), 8, &root), PN_STYLE_AUGMENTED_TRIAD);
    assert_int_equal(root, 8);
    assert_int_equal(pn_style_root(MASK3(0, 4, 8), 5, &root), PN_STYLE_AUGMENTED_TRIAD);
    assert_int_equal(root, 8);
    /* no root: an open fifth, a cluster, a triad with an added note */
    assert_int_equal(pn_style_root(MASK3(0, 7, 0), 0, &root), PN_STYLE_NO_ROOT);
    assert_int_equal(root, -1);
    assert_int_equal(pn_style_root(MASK3(0, 1, 2), 0, &root), PN_STYLE_NO_ROOT);
    assert_int_equal(pn_style_root(MASK4(0, 2, 4, 7), 0, &root), PN_STYLE_NO_ROOT);
#undef MASK3
#undef MASK4

    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add4(acc, 65, 62, 59, 43); /* G7 */
    add4(acc, 64, 60, 55, 48); /* C: V7-I */
    add4(acc, 65, 60, 57, 53); /* F: I-IV, a major triad down a fifth too */
    add4(acc, 64, 60, 55, 48); /* C: IV-I */
    add4(acc, 67, 64, 60, 48); /* C again, another voicing: no root motion */
    add4(acc, 67, 62, 55, 50); /* G/D, no: D G D G has no third, no root */
    add4(acc, 69, 64, 60, 45); /* A minor */
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->total[PN_STYLE_AUTHENTIC], 3);
    assert_int_equal(s->hits[PN_STYLE_AUTHENTIC], 2);
    assert_int_equal(count_of(s, PN_STYLE_ROOT_MOTION, 5), 2);
    assert_int_equal(count_of(s, PN_STYLE_ROOT_MOTION, 7), 1);
    assert_int_equal(chord_count(s, "0,4,7,10"), 1);
    assert_int_equal(chord_count(s, "0,4,7"), 4);
    assert_int_equal(chord_count(s, "0,5"), 1);
    assert_int_equal(chord_count(s, "0,3,7"), 1);
    pn_style_acc_free(acc);
}

static void test_tonal_profile(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    const pn_key d_major = {2, PN_MAJOR, 0.9}, e_minor = {4, PN_MINOR, 0.9};
    pn_style_begin_piece(acc, d_major);
    add(acc, 3, 50, 54, 57); /* D F# A: 1, 3, 5 */
    add(acc, 2, 61, 62);     /* C# D: 7, 1 */
    pn_style_begin_piece(acc, e_minor);
    add(acc, 3, 52, 55, 59); /* E G B: 1, b3, 5 */
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MAJOR, 0), 2);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MAJOR, 4), 1);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MAJOR, 7), 1);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MAJOR, 11), 1);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MINOR, 0), 1);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MINOR, 3), 1);
    assert_int_equal(count_of(s, PN_STYLE_TONAL_MINOR, 7), 1);
    assert_int_equal(count_of(s, PN_STYLE_TONAL, 0), 3);
    assert_int_equal(count_of(s, PN_STYLE_TONAL, 7), 2);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_TONAL), 8);
    assert_int_equal(s->pieces_major, 1);
    assert_int_equal(s->pieces_minor, 1);
    pn_style_acc_free(acc);
}

/* Each voice's span over the last 16 sonorities: counted once the window
 * holds a phrase, per piece, clamped to two octaves; the inner voices only
 * over sonorities of four pitches. */
static void test_phrase_span(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    /* 20 sonorities: the soprano climbs a semitone a step (60..79), the alto
     * alternates between 55 and 57, the tenor holds 52, the bass leaps
     * between 50 and 24 (26 semitones, clamped to 24). */
    for (int i = 0; i < 20; ++i)
        add4(acc, 60 + i, i % 2 ? 57 : 55, 52, i % 2 ? 24 : 50);
    const pn_style_stats *s = pn_style_acc_stats(acc);
    /* five full windows (sonorities 16 to 20), each 15 semitones of climb */
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SPAN_SOPRANO), 5);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_SOPRANO, 15), 5);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_ALTO, 2), 5);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_TENOR, 0), 5);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_BASS, PN_STYLE_SPAN_CLAMP), 5);

    /* a new piece starts an empty window: 15 sonorities count nothing, and
     * a sonority of three pitches moves the outer voices' windows only */
    pn_style_begin_piece(acc, C_MAJOR);
    for (int i = 0; i < 15; ++i)
        add4(acc, 72, 67, 64 - (i % 2), 48);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SPAN_SOPRANO), 5);
    add(acc, 3, 48, 64, 79); /* the 16th: bass 48, soprano 79 */
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SPAN_SOPRANO), 6);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_SOPRANO, 7), 1);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_BASS, 0), 1);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SPAN_TENOR), 5);
    add4(acc, 72, 67, 62, 48); /* the tenor's 16th of four pitches: 62..64 */
    assert_int_equal(count_of(s, PN_STYLE_SPAN_TENOR, 2), 1);
    assert_int_equal(count_of(s, PN_STYLE_SPAN_ALTO, 0), 1);
    /* the soprano's window now runs from the second sonority: 72 .. 79 */
    assert_int_equal(count_of(s, PN_STYLE_SPAN_SOPRANO, 7), 2);
    pn_style_acc_free(acc);
}

static int64_t area_count(const pn_style_stats *s, const char *label)
{
    int32_t bin;
    assert_int_equal(pn_style_bin_parse(PN_STYLE_KEY_AREA, label, &bin), 0);
    return pn_style_counts(s, PN_STYLE_KEY_AREA)[bin];
}

/* Plays n sonorities of a four-chord cycle, each chord moved up by shift. */
static void play_cycle(pn_style_acc *acc, const int cycle[4][4], int n, int shift)
{
    for (int i = 0; i < n; ++i) {
        const int *c = cycle[i % 4];
        add4(acc, c[0] + shift, c[1] + shift, c[2] + shift, c[3] + shift);
    }
}

/* The key of the last 16 sonorities, as a degree of the piece's key:
 * counted once the window holds a phrase, per piece, the same in every
 * transposition. */
static void test_key_areas(void **state)
{
    (void)state;
    /* C major: I IV V7 I (two voicings of I, so no two neighbours merge) */
    static const int home[4][4] = {
        {72, 67, 64, 48}, {72, 69, 65, 53}, {71, 67, 65, 55}, {67, 64, 60, 48}};
    /* G major: I V7 I IV, with its F# */
    static const int dominant[4][4] = {
        {74, 71, 67, 55}, {72, 66, 62, 50}, {71, 67, 62, 43}, {72, 67, 64, 48}};
    pn_style_acc *acc = new_acc(NULL, 0);
    const pn_style_stats *s = pn_style_acc_stats(acc);
    pn_style_begin_piece(acc, C_MAJOR);
    play_cycle(acc, home, 15, 0);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_KEY_AREA), 0);
    play_cycle(acc, home, 16, 0); /* 31 sonorities: windows 16..31 */
    assert_int_equal(area_count(s, "I"), 16);
    /* sixteen sonorities in G major: the window ends in the dominant's key */
    play_cycle(acc, dominant, 16, 0);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_KEY_AREA), 32);
    const int64_t v = area_count(s, "V");
    assert_true(v >= 1);
    add4(acc, 74, 71, 67, 55); /* one more G major sonority: still V */
    assert_int_equal(area_count(s, "V"), v + 1);

    /* a new piece starts an empty window: its first 15 count nothing */
    const pn_key g_major = {7, PN_MAJOR, 0.9}, e_minor = {4, PN_MINOR, 0.9};
    pn_style_begin_piece(acc, g_major);
    play_cycle(acc, dominant, 15, 0);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_KEY_AREA), 33);
    pn_style_acc_free(acc);

    /* a degree counts from the piece's key: the home cycle moved to G reads
     * I in G major, and bIII in E minor (its relative major) */
    acc = new_acc(NULL, 0);
    s = pn_style_acc_stats(acc);
    pn_style_begin_piece(acc, g_major);
    play_cycle(acc, home, 20, 7);
    assert_int_equal(area_count(s, "I"), 5);
    pn_style_begin_piece(acc, e_minor);
    play_cycle(acc, home, 20, 7);
    assert_int_equal(area_count(s, "bIII"), 5);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_KEY_AREA), 10);
    pn_style_acc_free(acc);
}

static void test_quantiles_and_modes(void **state)
{
    (void)state;
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    for (int p = 60; p < 80; ++p)
        add(acc, 1, p);
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(pn_style_quantile(s, PN_STYLE_RANGE_SOPRANO, 0.05), 60);
    assert_int_equal(pn_style_quantile(s, PN_STYLE_RANGE_SOPRANO, 0.50), 69);
    assert_int_equal(pn_style_quantile(s, PN_STYLE_RANGE_SOPRANO, 0.95), 78);
    assert_int_equal(pn_style_quantile(s, PN_STYLE_RANGE_BASS, 1.0), 79);
    assert_int_equal(pn_style_quantile(s, PN_STYLE_RANGE_ALTO, 0.5), INT32_MIN);
    /* every step up one: the soprano motion is always +1 */
    assert_int_equal(pn_style_mode_bin(s, PN_STYLE_SOPRANO_MOTION), 1 + PN_STYLE_MOTION_CLAMP);
    assert_int_equal(pn_style_mode_bin(s, PN_STYLE_ALTO_MOTION), -1);
    assert_near(pn_style_share(s, PN_STYLE_SOPRANO_MOTION, 1 + PN_STYLE_MOTION_CLAMP), 1.0, 0);
    pn_style_acc_free(acc);
}

/* ------------------------------------------------------------------------ */
/* Distances and pooling */

static void test_tv(void **state)
{
    (void)state;
    const int64_t a[3] = {1, 1, 0}, b[3] = {0, 1, 1}, c[3] = {2, 2, 0}, d[3] = {0, 0, 5},
                  zero[3] = {0, 0, 0}, e[3] = {3, 1, 0};
    assert_near(pn_style_tv_counts(a, b, 3), 0.5, 1e-15);
    assert_near(pn_style_tv_counts(a, c, 3), 0.0, 0);
    assert_near(pn_style_tv_counts(a, d, 3), 1.0, 1e-15);
    assert_near(pn_style_tv_counts(e, a, 3), 0.25, 1e-15);
    assert_true(isnan(pn_style_tv_counts(a, zero, 3)));
    assert_true(isnan(pn_style_tv_counts(zero, zero, 3)));

    /* TV of statistics, and pooling equals counting everything at once */
    pn_style_acc *x = new_acc(NULL, 0), *y = new_acc(NULL, 0), *both = new_acc(NULL, 0);
    pn_style_begin_piece(x, C_MAJOR);
    pn_style_begin_piece(both, C_MAJOR);
    add(x, 2, 48, 60);
    add(both, 2, 48, 60);
    add(x, 2, 48, 64);
    add(both, 2, 48, 64);
    pn_style_begin_piece(y, C_MAJOR);
    pn_style_begin_piece(both, C_MAJOR);
    add(y, 2, 48, 67);
    add(both, 2, 48, 67);
    add(y, 2, 50, 70);
    add(both, 2, 50, 70);
    const pn_style_stats *sx = pn_style_acc_stats(x), *sy = pn_style_acc_stats(y);
    /* chord types: x {0, 0,4}, y {0,7, 0,8}: nothing in common */
    assert_near(pn_style_tv(sx, sy, PN_STYLE_CHORD), 1.0, 1e-15);
    assert_near(pn_style_tv(sx, sx, PN_STYLE_CHORD), 0.0, 0);
    pn_style_stats pooled;
    pn_style_stats_clear(&pooled);
    pn_style_stats_add(&pooled, sx);
    pn_style_stats_add(&pooled, sy);
    assert_memory_equal(&pooled, pn_style_acc_stats(both), sizeof pooled);
    pn_style_comparison cmp;
    pn_style_compare(sx, sy, &cmp);
    assert_near(cmp.tv[PN_STYLE_CHORD], 1.0, 1e-15);
    assert_true(isnan(cmp.tv[PN_STYLE_SPACING_SA]));
    assert_near(cmp.rate[0][PN_STYLE_HIDDEN], 0.0, 0);
    assert_near(cmp.rate[1][PN_STYLE_HIDDEN], 0.0, 0);
    assert_true(isnan(cmp.rate[0][PN_STYLE_WIDE]));
    /* saturation instead of overflow */
    pooled.bins[0] = INT64_MAX - 1;
    pn_style_stats_add(&pooled, &pooled);
    assert_true(pooled.bins[0] == INT64_MAX);
    pn_style_acc_free(x);
    pn_style_acc_free(y);
    pn_style_acc_free(both);
}

/* Shares of sets of chord types and of ranges of motion sizes. */
static void test_share_helpers(void **state)
{
    (void)state;
    pn_style_stats *s = calloc(1, sizeof *s);
    assert_non_null(s);
    const int32_t major = 1 | 1 << 4 | 1 << 7, minor = 1 | 1 << 3 | 1 << 7,
                  first_inversion = 1 | 1 << 3 | 1 << 8;
    const int32_t triads[2] = {major, minor};
    /* empty distributions have no share */
    assert_true(isnan(pn_style_share_bins(s, PN_STYLE_CHORD, triads, 2)));
    assert_true(isnan(pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 1, 2)));

    int64_t *chord = s->bins + pn_style_dist_get(PN_STYLE_CHORD)->first;
    chord[major] = 3;
    chord[minor] = 1;
    chord[first_inversion] = 4;
    assert_near(pn_style_share_bins(s, PN_STYLE_CHORD, triads, 2), 0.5, 0);
    assert_near(pn_style_share_bins(s, PN_STYLE_CHORD, triads, 1), 0.375, 0);
    /* a bin listed twice counts once; bins outside the distribution count nothing */
    const int32_t twice[4] = {major, major, -1, PN_STYLE_CHORD_BINS};
    assert_near(pn_style_share_bins(s, PN_STYLE_CHORD, twice, 4), 0.375, 0);
    assert_near(pn_style_share_bins(s, PN_STYLE_CHORD, NULL, 0), 0.0, 0);

    /* soprano motions -2, -1, 0, 0, +1, +3, +7, +7, +12, -12: 10 moves */
    static const int moves[10] = {-2, -1, 0, 0, 1, 3, 7, 7, 12, -12};
    int64_t *motion = s->bins + pn_style_dist_get(PN_STYLE_SOPRANO_MOTION)->first;
    for (int i = 0; i < 10; ++i)
        motion[moves[i] + PN_STYLE_MOTION_CLAMP]++;
    assert_near(pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 1, 2), 0.3, 1e-15);
    assert_near(pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 5, INT32_MAX), 0.4, 1e-15);
    assert_near(pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 0, 0), 0.2, 1e-15);
    assert_near(pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 0, 12), 1.0, 0);
    assert_near(pn_style_share_magnitude(s, PN_STYLE_SOPRANO_MOTION, 3, 1), 0.0, 0);
    /* other distributions are left alone */
    assert_true(isnan(pn_style_share_magnitude(s, PN_STYLE_BASS_MOTION, 1, 2)));

    /* from events: the soprano steps up 2, leaps up 5, steps down 1 */
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_style_begin_piece(acc, C_MAJOR);
    add4(acc, 72, 67, 64, 48); /* C major, root position */
    add4(acc, 74, 71, 62, 55); /* G major, root position */
    add4(acc, 79, 71, 62, 55); /* G major again, other voicing */
    add4(acc, 78, 69, 62, 50); /* D major, root position */
    add4(acc, 76, 67, 60, 52); /* C major over E: first inversion */
    const pn_style_stats *st = pn_style_acc_stats(acc);
    assert_int_equal(st->sonorities, 5);
    assert_near(pn_style_share_bins(st, PN_STYLE_CHORD, triads, 2), 0.8, 1e-15);
    assert_near(pn_style_share_magnitude(st, PN_STYLE_SOPRANO_MOTION, 1, 2), 0.75, 1e-15);
    assert_near(pn_style_share_magnitude(st, PN_STYLE_SOPRANO_MOTION, 5, INT32_MAX), 0.25, 1e-15);
    pn_style_acc_free(acc);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* copy4 */

static void add_piece(pn_style_acc *acc, const int (*son)[3], int n, int shift)
{
    pn_style_begin_piece(acc, C_MAJOR);
    for (int i = 0; i < n; ++i)
        add(acc, 3, son[i][0] + shift, son[i][1] + shift, son[i][2] + shift);
}

static void test_copy4(void **state)
{
    (void)state;
    static const int train[6][3] = {{48, 55, 64}, {47, 55, 62}, {48, 55, 64},
                                    {45, 57, 60}, {43, 55, 62}, {48, 52, 60}};
    pn_style_acc *t = new_acc(NULL, 1);
    add_piece(t, train, 6, 0);
    add_piece(t, train, 5, 0); /* the same grams again: no new hash */
    pn_style_grams g = {0, NULL};
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_style_acc_grams(t, &g, &info), PN_OK);
    assert_int_equal(g.count, 3);
    for (int64_t i = 1; i < g.count; ++i)
        assert_true(g.hash[i] > g.hash[i - 1]);
    /* no training set given: copy4 not counted */
    assert_int_equal(pn_style_acc_stats(t)->total[PN_STYLE_COPY4], 0);

    pn_style_acc *acc = new_acc(&g, 0);
    add_piece(acc, train, 4, 5); /* transposed: found */
    static const int other[5][3] = {
        {48, 55, 64}, {47, 55, 62}, {48, 55, 64}, {45, 57, 61}, {43, 55, 62}};
    add_piece(acc, other, 5, -3); /* one note changed: neither 4-gram found */
    /* grams never cross pieces: the first two here and two more there */
    add_piece(acc, train, 2, 0);
    add_piece(acc, train + 2, 2, 0);
    /* repeated sonorities are merged before grams are taken */
    pn_style_begin_piece(acc, C_MAJOR);
    add(acc, 3, 48, 55, 64);
    add(acc, 3, 48, 55, 64);
    add(acc, 3, 47, 55, 62);
    add(acc, 3, 48, 55, 64);
    add(acc, 3, 45, 57, 60);
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->total[PN_STYLE_COPY4], 1 + 2 + 1);
    assert_int_equal(s->hits[PN_STYLE_COPY4], 2);

    /* the hash moves with transposition only */
    const uint8_t a0[3] = {48, 55, 64}, a1[3] = {47, 55, 62}, a2[3] = {48, 55, 64},
                  a3[3] = {45, 57, 60};
    const uint8_t b0[3] = {50, 57, 66}, b1[3] = {49, 57, 64}, b2[3] = {50, 57, 66},
                  b3[3] = {47, 59, 62};
    const uint8_t *sa[4] = {a0, a1, a2, a3}, *sb[4] = {b0, b1, b2, b3}, *sc[4] = {a0, a1, a2, a2};
    const int n[4] = {3, 3, 3, 3};
    assert_true(pn_style_gram_hash(sa, n) == pn_style_gram_hash(sb, n));
    assert_true(pn_style_gram_hash(sa, n) != pn_style_gram_hash(sc, n));
    assert_true(pn_style_grams_contains(&g, pn_style_gram_hash(sa, n)));
    assert_false(pn_style_grams_contains(&g, pn_style_gram_hash(sc, n)));
    pn_style_grams empty = {0, NULL};
    assert_false(pn_style_grams_contains(&empty, 0));

    uint64_t h[6] = {5, 3, 5, 1, 3, 9};
    assert_int_equal(pn_style_grams_normalize(h, 6), 4);
    assert_true(h[0] == 1 && h[1] == 3 && h[2] == 5 && h[3] == 9);
    pn_style_grams_free(&g);
    assert_null(g.hash);
    pn_style_acc_free(acc);
    pn_style_acc_free(t);
}

static void test_corpus_and_errors(void **state)
{
    (void)state;
    /* a two-piece corpus read as labelled events */
    int8_t p1[3 * 4] = {72, 67, 64, 48, 72, 67, 64, 48, 71, 67, 62, 55};
    int8_t p2[2 * 4] = {69, 64, 60, 45, 64, 69, 60, 45};
    pn_piece pieces[2] = {{NULL, 4, 3, p1, NULL}, {NULL, 4, 2, p2, NULL}};
    pn_corpus c = {4, 2, pieces};
    pn_style_acc *acc = new_acc(NULL, 0);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_style_add_corpus(acc, &c, &info), PN_OK);
    const pn_style_stats *s = pn_style_acc_stats(acc);
    assert_int_equal(s->pieces, 2);
    assert_int_equal(s->sonorities, 3); /* C, G, Am; the crossed Am merges by height */
    assert_int_equal(s->total[PN_STYLE_CROSSING], 4);
    assert_int_equal(s->hits[PN_STYLE_CROSSING], 1);
    assert_int_equal(pn_style_dist_total(s, PN_STYLE_SOPRANO_MOTION), 1);

    /* bad arguments count nothing */
    const int high[1] = {128}, ok[2] = {60, 64}, neg[2] = {0, -1};
    pn_style_stats before = *s;
    assert_int_equal(pn_style_add_notes(acc, high, NULL, 1, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "128"));
    assert_int_equal(pn_style_add_notes(acc, ok, neg, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_style_add_notes(acc, ok, NULL, PN_STYLE_MAX_NOTES + 1, &info),
                     PN_ERR_INVALID);
    assert_int_equal(pn_style_add_notes(acc, NULL, NULL, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_style_add_voices(acc, ok, 0, &info), PN_ERR_INVALID);
    assert_memory_equal(&before, s, sizeof before);
    pn_style_acc *fresh = new_acc(NULL, 0);
    assert_int_equal(pn_style_add_notes(fresh, ok, NULL, 2, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "before the first piece"));
    pn_style_acc_free(fresh);
    pn_style_acc_free(acc);
    assert_int_equal(pn_style_acc_create(NULL, NULL, &info), PN_ERR_INVALID);
}

/* ------------------------------------------------------------------------ */
/* Statistics files */

static pn_style_file *sample_file(void)
{
    pn_style_file *f = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_style_file_create(&f, &info), PN_OK);
    pn_style_grams g = {0, NULL};
    pn_style_acc *acc = new_acc(NULL, 1);
    pn_style_begin_piece(acc, C_MAJOR);
    add4(acc, 65, 62, 59, 43);
    add4(acc, 64, 60, 55, 48);
    add4(acc, 65, 60, 57, 53);
    add4(acc, 60, 64, 55, 48);
    add4(acc, 74, 67, 59, 43);
    assert_int_equal(pn_style_acc_grams(acc, &g, &info), PN_OK);
    f->stats = *pn_style_acc_stats(acc);
    f->has_training = 1;
    f->training = g;
    assert_int_equal(pn_style_file_set(&f->name, "tiny \"set\"", &info), PN_OK);
    assert_int_equal(pn_style_file_set(&f->description, "five chords\nof C", &info), PN_OK);
    assert_int_equal(pn_style_file_set(&f->mode, "major", &info), PN_OK);
    assert_int_equal(pn_style_file_set(&f->training_description, "itself", &info), PN_OK);
    pn_style_acc_free(acc);
    return f;
}

/* Writes f into a memory buffer (a temporary file); returns the text. */
static char *write_text(const pn_style_file *f, size_t *len)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_style_write(f, tmp, "tmp", &info), PN_OK);
    long n = ftell(tmp);
    assert_true(n > 0);
    rewind(tmp);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, tmp), (size_t)n);
    text[n] = '\0';
    fclose(tmp);
    *len = (size_t)n;
    return text;
}

static void test_file_round_trip(void **state)
{
    (void)state;
    pn_style_file *f = sample_file();
    size_t len = 0, len2 = 0;
    char *text = write_text(f, &len);
    assert_non_null(strstr(text, "\"format\": \"parnassus-style/1\""));
    pn_style_file *g = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_style_parse("round", text, len, &g, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_memory_equal(&f->stats, &g->stats, sizeof f->stats);
    assert_string_equal(g->name, "tiny \"set\"");
    assert_string_equal(g->description, "five chords\nof C");
    assert_string_equal(g->mode, "major");
    assert_string_equal(g->training_description, "itself");
    assert_int_equal(g->has_training, 1);
    assert_int_equal(g->training.count, 2);
    assert_memory_equal(g->training.hash, f->training.hash, 2 * sizeof(uint64_t));
    /* and again: the same bytes */
    char *text2 = write_text(g, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, text2, len);

    /* a minimal file: only the format */
    pn_style_file *m = NULL;
    const char *minimal = "{\"format\": \"parnassus-style/1\"}";
    assert_int_equal(pn_style_parse("min", minimal, strlen(minimal), &m, &info), PN_OK);
    assert_int_equal(m->stats.sonorities, 0);
    assert_int_equal(m->has_training, 0);
    assert_null(m->name);

    /* a training set that does not ascend cannot be written */
    FILE *sink = tmpfile();
    assert_non_null(sink);
    uint64_t swap = f->training.hash[0];
    f->training.hash[0] = f->training.hash[1];
    f->training.hash[1] = swap;
    assert_int_equal(pn_style_write(f, sink, "sink", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "sink: the training hashes"));
    fclose(sink);

    pn_style_file_free(m);
    free(text);
    free(text2);
    pn_style_file_free(f);
    pn_style_file_free(g);
}

/* The text must fail to parse with a message holding `fragment`. */
static void parse_bad(const char *text, const char *fragment)
{
    pn_style_file *f = (pn_style_file *)&f; /* must become NULL */
    pn_error_info info = {PN_OK, ""};
    pn_error err = pn_style_parse("bad.json", text, strlen(text), &f, &info);
    if (err != PN_ERR_PARSE)
        fail_msg("accepted (%d): %s", (int)err, text);
    assert_null(f);
    if (strncmp(info.message, "bad.json: ", 10) != 0 || !strstr(info.message, fragment))
        fail_msg("message '%s' lacks '%s'", info.message, fragment);
}

#define FMT "\"format\": \"parnassus-style/1\""

static void test_file_errors(void **state)
{
    (void)state;
    parse_bad("{\"format\": ", "line 1 column");
    parse_bad("[1, 2]", "top level: expected an object");
    parse_bad("{\"name\": \"x\"}", "format: missing (expected \"parnassus-style/1\")");
    parse_bad("{\"format\": \"parnassus-style/2\"}", "format: \"parnassus-style/2\" is not "
                                                     "supported");
    parse_bad("{\"format\": 1}", "format: expected a string, got 1");
    parse_bad("{" FMT ", \"colour\": 1}", "top level: unknown field \"colour\"");
    parse_bad("{" FMT ", \"name\": 3}", "name: expected a string, got 3");
    parse_bad("{" FMT ", \"mode\": \"dorian\"}", "mode: expected \"major\", \"minor\" or \"any\"");
    parse_bad("{" FMT ", \"pieces\": -1}", "pieces: must be 0..2^50, got -1");
    parse_bad("{" FMT ", \"sonorities\": 1.5}",
              "sonorities: expected a whole number >= 0, got 1.5");
    parse_bad("{" FMT ", \"sonorities\": 3.0}",
              "sonorities: expected a whole number >= 0, got 3.0");
    parse_bad("{" FMT ", \"sonorities\": 1e308}",
              "sonorities: expected a whole number >= 0, got 1e+308");
    parse_bad("{" FMT ", \"distributions\": []}",
              "distributions: expected an object, got an array");
    parse_bad("{" FMT ", \"distributions\": {\"chords\": {}}}",
              "distributions: unknown distribution \"chords\"");
    parse_bad("{" FMT ", \"distributions\": {\"soprano_motion\": {\"13\": 1}}}",
              "distributions.soprano_motion[\"13\"]: not a value of soprano_motion (whole numbers "
              "-12..12)");
    parse_bad("{" FMT ", \"distributions\": {\"chord\": {\"4,7\": 1}}}",
              "distributions.chord[\"4,7\"]: not a chord type");
    parse_bad("{" FMT ", \"distributions\": {\"key_area\": {\"V7\": 1}}}",
              "distributions.key_area[\"V7\"]: not a key area");
    parse_bad("{" FMT ", \"distributions\": {\"voices\": {\"4\": -2}}}",
              "distributions.voices[\"4\"]: must be 0..2^50, got -2");
    parse_bad("{" FMT ", \"distributions\": {\"voices\": {\"4\": \"many\"}}}",
              "distributions.voices[\"4\"]: expected a whole number >= 0, got a string");
    parse_bad("{" FMT ", \"distributions\": {\"voices\": 4}}",
              "distributions.voices: expected an object");
    parse_bad("{" FMT ", \"rates\": {\"wide\": {\"count\": 5, \"total\": 3}}}",
              "rates.wide: count 5 is above total 3");
    parse_bad("{" FMT ", \"rates\": {\"wide\": {\"count\": 5}}}", "rates.wide: missing \"total\"");
    parse_bad("{" FMT ", \"rates\": {\"wide\": {\"count\": 1, \"total\": 3, \"x\": 0}}}",
              "rates.wide: unknown field \"x\"");
    parse_bad("{" FMT ", \"rates\": {\"narrow\": {}}}", "rates: unknown rate \"narrow\"");
    parse_bad("{" FMT ", \"training\": {\"grams\": 3, \"hashes\": []}}",
              "training.grams: only 4-grams are supported");
    parse_bad("{" FMT ", \"training\": {\"grams\": 4}}", "training: missing \"hashes\"");
    parse_bad("{" FMT ", \"training\": {\"grams\": 4, \"hashes\": [\"00000000000000zz\"]}}",
              "training.hashes[0]: expected a string of 16 lowercase hexadecimal digits");
    parse_bad("{" FMT ", \"training\": {\"grams\": 4, \"hashes\": [\"0000000000000001\", "
              "\"0000000000000001\"]}}",
              "training.hashes[1]: not above the hash before it");
    parse_bad("{" FMT ", \"format\": \"parnassus-style/1\"}", "duplicate");

    pn_style_file *f = (pn_style_file *)&f;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_style_read("/nonexistent/style.json", &f, &info), PN_ERR_IO);
    assert_null(f);
    assert_non_null(strstr(info.message, "/nonexistent/style.json"));
    assert_int_equal(pn_style_read("/dev/zero", &f, &info), PN_ERR_PARSE);
    assert_string_equal(info.message, "/dev/zero: larger than the limit of 64 MiB");

    /* a UTF-8 byte order mark is skipped */
    static const char marked[] = "\xEF\xBB\xBF{" FMT ", \"sonorities\": 7}";
    assert_int_equal(pn_style_parse("bom.json", marked, strlen(marked), &f, &info), PN_OK);
    assert_int_equal(f->stats.sonorities, 7);
    pn_style_file_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_parallel_fifth_and_octave),
        cmocka_unit_test(test_hidden_octave_and_clamping),
        cmocka_unit_test(test_spacing_and_doubling),
        cmocka_unit_test(test_crossing_labelled),
        cmocka_unit_test(test_merging_unisons_and_rests),
        cmocka_unit_test(test_chords_roots_and_cadences),
        cmocka_unit_test(test_tonal_profile),
        cmocka_unit_test(test_phrase_span),
        cmocka_unit_test(test_key_areas),
        cmocka_unit_test(test_quantiles_and_modes),
        cmocka_unit_test(test_tv),
        cmocka_unit_test(test_share_helpers),
        cmocka_unit_test(test_copy4),
        cmocka_unit_test(test_corpus_and_errors),
        cmocka_unit_test(test_file_round_trip),
        cmocka_unit_test(test_file_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
