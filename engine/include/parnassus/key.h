/* Key finding (Krumhansl-Schmuckler) and transposition of a corpus to a
 * common tonic (docs/corpus.md). */
#ifndef PARNASSUS_KEY_H
#define PARNASSUS_KEY_H

#include <stdint.h>

#include "parnassus/corpus.h"
#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pn_mode {
    PN_MAJOR = 0,
    PN_MINOR = 1,
} pn_mode;

enum { PN_NUM_KEYS = 24 };

typedef struct pn_key {
    int tonic; /* pitch class 0..11, 0 = C */
    pn_mode mode;
    double score; /* Pearson correlation with the key's profile, -1..1 */
} pn_key;

/* Correlations of the piece's pitch-class durations with the 24 key
 * profiles, indexed mode * 12 + tonic (C major .. B major, C minor .. B
 * minor). A piece with no notes, or with every pitch class equally long,
 * has no defined correlation: all 24 scores are 0. */
void pn_key_scores(const pn_piece *piece, double scores[PN_NUM_KEYS]);

/* The best key: the highest score; among equal scores the first in the
 * order of pn_key_scores (so major before minor, then lowest tonic). Scores
 * are computed so that transposing a piece by s semitones transposes its
 * scores exactly, hence the result too, up to ties. */
pn_key pn_key_find(const pn_piece *piece);

/* The same two for counts per pitch class (0 = C) instead of a piece: a
 * piece's scores are those of the durations its voices spend on each
 * pitch class. Counts must be non-negative and sum to at most 2^53. */
void pn_key_scores_of_counts(const int64_t count[12], double scores[PN_NUM_KEYS]);
pn_key pn_key_of_counts(const int64_t count[12]);

/* "C major", "F# minor", "Bb major": a static string. Tonic names follow
 * the usual key signatures (Db major but C# minor). */
const char *pn_key_name(pn_key key);

/* What a transposition did to each input piece. */
typedef struct pn_transpose_report {
    int32_t num_pieces; /* of the input corpus */
    int32_t num_kept;   /* pieces in the output */
    pn_key *key;        /* per input piece: its key before transposition */
    int32_t *shift;     /* per input piece: semitones added */
    /* Per input piece: -1 if the transposed piece stays in [low, high];
     * otherwise the first step and voice that would leave it (the piece is
     * then left out of the output, not clipped). */
    int32_t *bad_step;
    int32_t *bad_voice;
} pn_transpose_report;

/* Transposes piece i of `in` by shift[i] semitones. Pieces in which a
 * sounding voice would leave [low, high] (0 <= low <= high <= 127) are left
 * out of *out and marked in `report` (may be NULL; free it with
 * pn_transpose_report_free). The output corpus may have fewer pieces. */
pn_error pn_corpus_transpose_by(const pn_corpus *in, const int32_t *shift, int low, int high,
                                pn_corpus **out, pn_transpose_report *report, pn_error_info *info);

/* Transposes each piece so that its key (pn_key_find) gets the given tonic
 * (0..11), keeping its mode, by the shift in -6..+5 semitones that keeps it
 * closest to its original register. Range handling as pn_corpus_transpose_by. */
pn_error pn_corpus_transpose_to(const pn_corpus *in, int tonic, int low, int high, pn_corpus **out,
                                pn_transpose_report *report, pn_error_info *info);

/* Frees the arrays of a report (not the struct); NULL is allowed. */
void pn_transpose_report_free(pn_transpose_report *report);

/* Copies the pieces of `in` whose key (pn_key_find) has the given mode. */
pn_error pn_corpus_filter_mode(const pn_corpus *in, pn_mode mode, pn_corpus **out,
                               pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
