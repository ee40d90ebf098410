/* Style statistics of polyphonic music (docs/evaluate.md): what a piece or a
 * generated run does, as distributions and rates that can be compared with
 * those of a reference corpus.
 *
 * A piece is a sequence of events, one per onset: the notes sounding after
 * the onset, each a MIDI pitch, optionally with a voice label (0 = the first
 * voice, the soprano of a chorale). The distinct pitches of an event form
 * its sonority; voices are taken by height (soprano = highest pitch, bass =
 * lowest; in a sonority of four pitches the 2nd and 3rd highest are alto
 * and tenor). Empty sonorities are skipped and consecutive equal sonorities
 * are merged, so transitions are between consecutive different sonorities
 * of one piece.
 *
 * An accumulator (pn_style_acc) counts; the counts (pn_style_stats) pool by
 * addition and normalise into distributions and rates. Statistics files
 * ("parnassus-style/1") keep the counts and, for a reference, the 4-grams
 * of its training corpus. */
#ifndef PARNASSUS_STYLE_H
#define PARNASSUS_STYLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "parnassus/corpus.h"
#include "parnassus/error.h"
#include "parnassus/key.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PN_STYLE_MAX_NOTES = 1024,   /* notes (pitch, voice) of one event */
    PN_STYLE_MOTION_CLAMP = 12,  /* motions are clamped to [-12, 12] */
    PN_STYLE_SPACING_CLAMP = 24, /* spacings are clamped to [0, 24] */
    PN_STYLE_VOICES_MAX = 8,     /* the voices bin 8 counts 8 or more pitches */
    PN_STYLE_GRAM = 4,           /* copy4: 4-grams of consecutive sonorities */
    PN_STYLE_SPAN_WINDOW = 16,   /* a phrase: the sonorities a voice's span is taken over */
    PN_STYLE_SPAN_CLAMP = 24,    /* spans are clamped to [0, 24] */

    PN_STYLE_CHORD_BINS = 4096, /* pitch-class sets relative to the bass, as 12-bit masks */
    PN_STYLE_MOTION_BINS = 2 * PN_STYLE_MOTION_CLAMP + 1,
    PN_STYLE_SPACING_BINS = PN_STYLE_SPACING_CLAMP + 1,
    PN_STYLE_PC_BINS = 12,
    PN_STYLE_RANGE_BINS = 128,
    PN_STYLE_SPAN_BINS = PN_STYLE_SPAN_CLAMP + 1,
    PN_STYLE_KEY_AREA_BINS = 24, /* the local key: 12 major degrees, then 12 minor */
    PN_STYLE_NUM_BINS = PN_STYLE_CHORD_BINS + 4 * PN_STYLE_MOTION_BINS + 3 * PN_STYLE_SPACING_BINS +
                        PN_STYLE_VOICES_MAX + 4 * PN_STYLE_RANGE_BINS + 5 * PN_STYLE_PC_BINS +
                        4 * PN_STYLE_SPAN_BINS + PN_STYLE_KEY_AREA_BINS,
};

/* The distributions, in the order of the statistics files and reports. */
typedef enum pn_style_dist {
    PN_STYLE_CHORD,          /* chord type: pitch classes relative to the bass */
    PN_STYLE_SOPRANO_MOTION, /* soprano's move between consecutive sonorities */
    PN_STYLE_ALTO_MOTION,    /* between two consecutive 4-pitch sonorities */
    PN_STYLE_TENOR_MOTION,   /* between two consecutive 4-pitch sonorities */
    PN_STYLE_BASS_MOTION,
    PN_STYLE_SPACING_SA, /* 4-pitch sonorities: soprano - alto */
    PN_STYLE_SPACING_AT, /* alto - tenor */
    PN_STYLE_SPACING_TB, /* tenor - bass */
    PN_STYLE_VOICES,     /* distinct pitches per sonority, 1..8 (8: 8 or more) */
    PN_STYLE_DOUBLING,   /* 4 pitches, 3 pitch classes: the doubled one above the bass */
    PN_STYLE_RANGE_SOPRANO,
    PN_STYLE_RANGE_ALTO,  /* 4-pitch sonorities */
    PN_STYLE_RANGE_TENOR, /* 4-pitch sonorities */
    PN_STYLE_RANGE_BASS,
    PN_STYLE_ROOT_MOTION,  /* root motion (interval mod 12) between different roots */
    PN_STYLE_TONAL,        /* pitch classes relative to the piece's tonic, all pieces */
    PN_STYLE_TONAL_MAJOR,  /* the same over pieces in a major key */
    PN_STYLE_TONAL_MINOR,  /* the same over pieces in a minor key */
    PN_STYLE_SPAN_SOPRANO, /* semitones the soprano covers within the last 16 sonorities */
    PN_STYLE_SPAN_ALTO,    /* the same over the last 16 sonorities of four pitches */
    PN_STYLE_SPAN_TENOR,   /* the same over the last 16 sonorities of four pitches */
    PN_STYLE_SPAN_BASS,
    PN_STYLE_KEY_AREA, /* the key of the last 16 sonorities, as a degree of the piece's key */
    PN_STYLE_NUM_DISTS
} pn_style_dist;

/* The rates: hits out of a total. */
typedef enum pn_style_rate {
    PN_STYLE_PARALLELS,        /* parallel 5ths and 8ves among voice-pair transitions */
    PN_STYLE_PARALLEL_FIFTHS,  /* of which fifths (same total) */
    PN_STYLE_PARALLEL_OCTAVES, /* of which octaves (same total) */
    PN_STYLE_HIDDEN,           /* hidden 5ths/8ves among outer-voice transitions */
    PN_STYLE_WIDE,             /* 4-pitch sonorities with s-a or a-t above an octave */
    PN_STYLE_CROSSING,         /* labelled events with a voice crossing */
    PN_STYLE_AUTHENTIC,        /* V(7) -> I/i root motions among root motions */
    PN_STYLE_COPY4,            /* 4-grams found in the training set */
    PN_STYLE_NUM_RATES
} pn_style_rate;

typedef enum pn_style_label {
    PN_STYLE_LABEL_INT,   /* the value is bin + offset, written in decimal */
    PN_STYLE_LABEL_PCSET, /* the bin is a 12-bit pitch-class mask, written "0,4,7" */
    PN_STYLE_LABEL_KEY,   /* a key as a degree of the piece's key: "I", "V", "vi", "bIII" */
} pn_style_label;

typedef struct pn_style_dist_info {
    const char *name;  /* as in the files: "chord", "soprano_motion", ... */
    const char *title; /* for people: "chord types", "soprano motion", ... */
    int32_t size;      /* number of bins */
    int32_t offset;    /* value of bin 0 (PN_STYLE_LABEL_INT) */
    pn_style_label label;
    int32_t first; /* where its bins start in pn_style_stats.bins */
} pn_style_dist_info;

typedef struct pn_style_rate_info {
    const char *name;  /* as in the files: "parallels", ... */
    const char *title; /* for people */
} pn_style_rate_info;

/* Descriptions of a distribution and of a rate (NULL for an unknown id). */
const pn_style_dist_info *pn_style_dist_get(pn_style_dist d);
const pn_style_rate_info *pn_style_rate_get(pn_style_rate r);

/* Counts: plain data, pooled by addition. */
typedef struct pn_style_stats {
    int64_t bins[PN_STYLE_NUM_BINS];    /* every distribution's counts, see pn_style_dist_info */
    int64_t hits[PN_STYLE_NUM_RATES];   /* per rate: what it counts ... */
    int64_t total[PN_STYLE_NUM_RATES];  /* ... out of how many */
    int64_t pieces;                     /* pieces counted */
    int64_t pieces_major, pieces_minor; /* by the mode of their key */
    int64_t sonorities;                 /* after merging */
} pn_style_stats;

/* Largest count a statistics file may hold (sums of counts stay exact). */
#define PN_STYLE_MAX_COUNT ((int64_t)1 << 50)

void pn_style_stats_clear(pn_style_stats *s);

/* dst += src, saturating at INT64_MAX. */
void pn_style_stats_add(pn_style_stats *dst, const pn_style_stats *src);

/* The counts of one distribution (pn_style_dist_get(d)->size of them). */
const int64_t *pn_style_counts(const pn_style_stats *s, pn_style_dist d);

/* Sum of a distribution's counts (saturating). */
int64_t pn_style_dist_total(const pn_style_stats *s, pn_style_dist d);

/* Share of bin `bin` in distribution d: 0 when the distribution is empty. */
double pn_style_share(const pn_style_stats *s, pn_style_dist d, int32_t bin);

/* Share of distribution d's counts that lie in the listed bins (a bin
 * listed twice counts once; bins outside the distribution are ignored):
 * e.g. root-position triads as the chord-type bins of {0,4,7} and {0,3,7}.
 * NAN when the distribution is empty. */
double pn_style_share_bins(const pn_style_stats *s, pn_style_dist d, const int32_t *bins,
                           int num_bins);

/* Share of distribution d's counts whose value v (bin + offset) has
 * lo <= |v| <= hi: e.g. steps of a voice (|motion| 1..2) or its leaps
 * (|motion| >= 5). 0 when lo > hi; NAN when the distribution is empty. */
double pn_style_share_magnitude(const pn_style_stats *s, pn_style_dist d, int32_t lo, int32_t hi);

/* Total variation distance between two count vectors of n bins, each
 * normalised: 1/2 sum |p - q|. NAN when either is empty. */
double pn_style_tv_counts(const int64_t *p, const int64_t *q, int32_t n);

/* TV distance between distribution d of a and of b (NAN if either is empty). */
double pn_style_tv(const pn_style_stats *a, const pn_style_stats *b, pn_style_dist d);

/* hits / total of a rate; NAN when its total is 0 (nothing to count, e.g.
 * crossing in unlabelled music or copy4 without a training set). */
double pn_style_rate_value(const pn_style_stats *s, pn_style_rate r);

/* The value (bin + offset) at quantile q in [0, 1] of an integer
 * distribution: the smallest value whose cumulative share reaches q.
 * Returns INT32_MIN when the distribution is empty. */
int32_t pn_style_quantile(const pn_style_stats *s, pn_style_dist d, double q);

/* The most common bin of a distribution (the lowest among ties), -1 if
 * it is empty. */
int32_t pn_style_mode_bin(const pn_style_stats *s, pn_style_dist d);

/* The label of a bin: "0,4,7" for a chord type, "-3" for a motion, "V" for
 * a key area. */
void pn_style_bin_label(pn_style_dist d, int32_t bin, char *buf, size_t size);

/* The bin of a label as written by pn_style_bin_label (canonical form only:
 * no sign on positive numbers, no leading zeros, pitch classes ascending
 * from 0 for a chord type, the exact case for a key area). Returns 0, or
 * -1 when text is no label of d. */
int pn_style_bin_parse(pn_style_dist d, const char *text, int32_t *bin);

/* Two sets of statistics side by side. */
typedef struct pn_style_comparison {
    double tv[PN_STYLE_NUM_DISTS];      /* NAN where either side is empty */
    double rate[2][PN_STYLE_NUM_RATES]; /* [0]: a, [1]: b; NAN where nothing was counted */
} pn_style_comparison;

void pn_style_compare(const pn_style_stats *a, const pn_style_stats *b, pn_style_comparison *out);

/* ---- The root finder ---- */

typedef enum pn_style_chord_kind {
    PN_STYLE_NO_ROOT = 0,
    PN_STYLE_MAJOR_TRIAD,
    PN_STYLE_MINOR_TRIAD,
    PN_STYLE_DIMINISHED_TRIAD,
    PN_STYLE_AUGMENTED_TRIAD,
    PN_STYLE_DOMINANT_SEVENTH,
    PN_STYLE_MAJOR_SEVENTH,
    PN_STYLE_MINOR_SEVENTH,
    PN_STYLE_HALF_DIMINISHED_SEVENTH,
    PN_STYLE_DIMINISHED_SEVENTH,
} pn_style_chord_kind;

/* The root of a set of pitch classes (bit c of mask = pitch class c): the
 * set must equal one of the templates of pn_style_chord_kind transposed to
 * some root. Roots are tried from the bass's pitch class upwards, so a
 * symmetric chord (augmented triad, diminished seventh) takes the first
 * candidate at or above the bass. Sets *root (0..11) and returns the kind,
 * or returns PN_STYLE_NO_ROOT (and sets *root to -1). */
pn_style_chord_kind pn_style_root(unsigned mask, int bass_pc, int *root);

/* ---- 4-grams ----
 *
 * A 4-gram is four consecutive sonorities of one piece, moved so that the
 * lowest pitch of its first sonority is 0 (so equal up to transposition
 * means equal). Its hash is 64-bit FNV-1a over, for each sonority in
 * order, the byte n (its number of pitches) followed by its pitches from
 * the lowest, each as the byte pitch + 128 after the move, then passed
 * through the splitmix64 finaliser. */

typedef struct pn_style_grams {
    int64_t count;  /* distinct hashes */
    uint64_t *hash; /* ascending */
} pn_style_grams;

/* 1 when h is in the set (binary search), else 0. */
int pn_style_grams_contains(const pn_style_grams *g, uint64_t h);

/* Sorts hash[0..count) ascending and removes duplicates, in place;
 * returns the number kept. */
int64_t pn_style_grams_normalize(uint64_t *hash, int64_t count);

/* Frees the hashes and empties the set; NULL is allowed. */
void pn_style_grams_free(pn_style_grams *g);

/* The hash of the 4-gram of sonorities s[0..3], each pitches (ascending,
 * distinct, 0..127) with n[i] of them (1..128). */
uint64_t pn_style_gram_hash(const uint8_t *const s[PN_STYLE_GRAM], const int n[PN_STYLE_GRAM]);

/* ---- The accumulator ---- */

typedef struct pn_style_options {
    const pn_style_grams *training; /* copy4 against this set; NULL: copy4 not counted */
    int collect_grams;              /* keep the input's own 4-grams (pn_style_acc_grams) */
} pn_style_options;

void pn_style_options_default(pn_style_options *o);

typedef struct pn_style_acc pn_style_acc;

/* o may be NULL for the defaults; the training set must outlive acc. */
pn_error pn_style_acc_create(const pn_style_options *o, pn_style_acc **out, pn_error_info *info);
void pn_style_acc_free(pn_style_acc *acc);

/* Starts a piece in the given key (the tonal profile counts pitch classes
 * relative to its tonic, and the piece counts as major or minor). Nothing
 * carries over from the previous piece. */
void pn_style_begin_piece(pn_style_acc *acc, pn_key key);

/* Adds the event of one onset: count (0..PN_STYLE_MAX_NOTES) notes with
 * pitch[i] in 0..127 and, when voice is not NULL, voice[i] >= 0 their
 * voice labels (0 = the first voice). A labelled event that repeats the
 * previous labelled event is merged with it. PN_ERR_INVALID for bad
 * arguments (then nothing is counted) or before pn_style_begin_piece. */
pn_error pn_style_add_notes(pn_style_acc *acc, const int *pitch, const int *voice, int count,
                            pn_error_info *info);

/* Adds an event given voice by voice: pitch[v] (0..127, or PN_REST for a
 * silent voice) is voice v's pitch; num_voices 1..PN_STYLE_MAX_NOTES. */
pn_error pn_style_add_voices(pn_style_acc *acc, const int *pitch, int num_voices,
                             pn_error_info *info);

/* Adds every piece of a corpus: each in the key pn_key_find gives it, its
 * steps as labelled events (voice v of the corpus = label v). */
pn_error pn_style_add_corpus(pn_style_acc *acc, const pn_corpus *corpus, pn_error_info *info);

/* The counts so far. */
const pn_style_stats *pn_style_acc_stats(const pn_style_acc *acc);

/* The distinct 4-grams of the input so far (options.collect_grams), as a
 * new set owned by the caller (free with pn_style_grams_free). */
pn_error pn_style_acc_grams(const pn_style_acc *acc, pn_style_grams *out, pn_error_info *info);

/* ---- Statistics files ("parnassus-style/1", docs/evaluate.md) ---- */

typedef struct pn_style_file {
    char *name;        /* may be NULL */
    char *description; /* may be NULL */
    char *mode;        /* "major", "minor", "any" or NULL: which pieces were kept */
    pn_style_stats stats;
    int has_training;           /* the file holds a training set of 4-grams */
    char *training_description; /* may be NULL */
    pn_style_grams training;    /* empty unless has_training */
} pn_style_file;

/* A new, empty file (every count 0, no strings, no training set). */
pn_error pn_style_file_create(pn_style_file **out, pn_error_info *info);

/* Sets one of the strings of f (a copy; NULL clears it). */
pn_error pn_style_file_set(char **field, const char *value, pn_error_info *info);

void pn_style_file_free(pn_style_file *f);

/* Parses len bytes of JSON. Messages start with `name` and give the place:
 * "NAME: line 3 column 5: ...", "NAME: distributions.chord[\"0,4,x\"]: ...".
 * PN_ERR_PARSE for anything malformed; *out is NULL on failure. */
pn_error pn_style_parse(const char *name, const char *text, size_t len, pn_style_file **out,
                        pn_error_info *info);

/* Reads a file (at most 64 MiB) and parses it; PN_ERR_IO if it cannot be read. */
pn_error pn_style_read(const char *path, pn_style_file **out, pn_error_info *info);

/* Writes f as JSON; the bytes depend only on f. `name` is used in messages. */
pn_error pn_style_write(const pn_style_file *f, FILE *out, const char *name, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
