/* What `parnassus evaluate` measures and compares with: MIDI files,
 * chorale files and statistics files read into style statistics, the
 * reference statistics and the training set of copy4 (docs/evaluate.md). */
#ifndef PARNASSUS_CLI_STYLE_INPUT_H
#define PARNASSUS_CLI_STYLE_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "corpus_load.h"
#include "parnassus/error.h"
#include "parnassus/style.h"

typedef enum pn_cli_style_kind {
    PN_CLI_STYLE_MIDI = 0,
    PN_CLI_STYLE_CHORALES = 1,
    PN_CLI_STYLE_STATISTICS = 2,
} pn_cli_style_kind;

/* What one input gave, for the report. */
typedef struct pn_cli_style_source {
    const char *file; /* as given */
    pn_cli_style_kind kind;
    int64_t pieces, sonorities;
    const char *labels; /* MIDI: "tracks", "channels" or "none"; else NULL */
    int num_voices;     /* MIDI: labels in use */
    char key[32];       /* MIDI: the key found; else "" */
    char summary[640];  /* one line for people */
} pn_cli_style_source;

typedef struct pn_cli_style_filter {
    const char *split;       /* chorale files: "train", "valid", "test", NULL = every split */
    pn_cli_mode_filter mode; /* chorale files: keep pieces whose key has this mode */
} pn_cli_style_filter;

/* "midi", "chorales" or "statistics". */
const char *pn_cli_style_kind_name(pn_cli_style_kind kind);

/* Reads one input: a file ending in ".json" is a statistics file
 * ("format": "parnassus-style/1", pooled into *pooled) or a chorale file
 * (filtered, then counted in acc, keys kept); anything else a Standard
 * MIDI File (one piece, counted in acc). Errors name the file. */
pn_error pn_cli_style_add_input(const char *path, const pn_cli_style_filter *filter,
                                pn_style_acc *acc, pn_style_stats *pooled, pn_cli_style_source *src,
                                pn_error_info *info);

/* The reference: "major" or "minor" name the shipped statistics
 * (reference/chorales-MODE.json, found by pn_cli_find_data), anything else
 * is a statistics file. path receives the file read. */
pn_error pn_cli_style_reference(const char *which, pn_style_file **out, char *path, size_t size,
                                pn_error_info *info);

/* The training set of copy4 from `path`: a statistics file that holds one,
 * or a chorale file (its "train" split, pieces of the given mode, moved to
 * C). description receives one line saying what it is. */
pn_error pn_cli_style_training(const char *path, pn_cli_mode_filter mode, pn_style_grams *out,
                               char *description, size_t size, pn_error_info *info);

#endif
