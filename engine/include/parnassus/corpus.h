/* A corpus of polyphonic pieces on a regular time grid (docs/corpus.md):
 * each piece is a sequence of steps, each step one pitch per voice.
 *
 * The reader takes the JSB chorales in their common JSON form
 * {"train": [...], "valid": [...]}: each chorale a list of 16th-note steps,
 * each step [soprano, alto, tenor, bass] as MIDI note numbers, -1 meaning
 * the voice is silent. Held and repeated notes are not distinguished in that
 * form: a quarter note and four repeated 16ths look the same. */
#ifndef PARNASSUS_CORPUS_H
#define PARNASSUS_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"
#include "parnassus/space.h" /* PN_REST */

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PN_CHORALE_VOICES = 4, /* soprano, alto, tenor, bass */
};

typedef struct pn_piece {
    char *name;         /* where it came from, e.g. "train[3]" */
    int32_t num_voices; /* k */
    int32_t num_steps;  /* may be 0 */
    int8_t *pitch;      /* num_steps * num_voices, step-major: MIDI 0..127 or PN_REST */
    int32_t *duration;  /* per step, in grid units (16ths); NULL = every step lasts 1 */
} pn_piece;

typedef struct pn_corpus {
    int32_t num_voices; /* of every piece */
    int32_t num_pieces;
    pn_piece *pieces;
} pn_corpus;

/* Duration of step t of a piece (1 when the piece has no durations). */
static inline int32_t pn_piece_duration(const pn_piece *piece, int32_t t)
{
    return piece->duration ? piece->duration[t] : 1;
}

/* Parses chorales from `len` bytes of JSON text. `name` is used in messages
 * ("NAME: train[3][17][2]: reason", "NAME: line 12 column 5: reason").
 * `split` picks one member of the top-level object ("train", "valid", ...);
 * NULL takes every member, in file order. Every step must have
 * PN_CHORALE_VOICES pitches, each an integer 0..127 or -1. On success *out
 * owns the corpus (pieces named "SPLIT[i]"); on failure *out is NULL and the
 * error is PN_ERR_PARSE (or PN_ERR_NOMEM, PN_ERR_INVALID for bad arguments). */
pn_error pn_corpus_parse_chorales(const char *name, const char *text, size_t len, const char *split,
                                  pn_corpus **out, pn_error_info *info);

/* Reads a file and parses it as above; messages name the file by `path`.
 * PN_ERR_IO if it cannot be opened or read. */
pn_error pn_corpus_read_chorales(const char *path, const char *split, pn_corpus **out,
                                 pn_error_info *info);

/* Frees a corpus and its pieces; NULL is allowed. */
void pn_corpus_free(pn_corpus *corpus);

/* A deep copy of `in`. */
pn_error pn_corpus_copy(const pn_corpus *in, pn_corpus **out, pn_error_info *info);

/* Merges runs of consecutive identical steps into single sonority events
 * whose duration is the sum of the run's durations: each piece of *out lists
 * its distinct consecutive sonorities with their lengths in grid units. As
 * the chorale data do not tell held from repeated notes, neither can this. */
pn_error pn_corpus_sonorities(const pn_corpus *in, pn_corpus **out, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
