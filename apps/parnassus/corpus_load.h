/* Loading the music a command learns from or analyzes: a chorale JSON file
 * or a Standard MIDI File, turned into a pn_corpus of sonority steps,
 * optionally moved to a common tonic and filtered by mode (docs/cli.md);
 * and the options that say how, parsed alike by every such command. */
#ifndef PARNASSUS_CLI_CORPUS_LOAD_H
#define PARNASSUS_CLI_CORPUS_LOAD_H

#include "parnassus/corpus.h"
#include "parnassus/error.h"
#include "parnassus/space.h"

typedef enum pn_cli_mode_filter {
    PN_CLI_MODE_ANY = 0,
    PN_CLI_MODE_MAJOR = 1,
    PN_CLI_MODE_MINOR = 2,
} pn_cli_mode_filter;

typedef struct pn_cli_corpus_options {
    const char *split;       /* chorale JSON: "train", "valid", "test" or NULL for every split */
    int num_voices;          /* voices of the space (a MIDI file must hold at least this many) */
    int grid;                /* 0: one step per change of sonority (events);
                              * g > 0: one step every g sixteenth notes */
    int tonic;               /* -1: keep keys; 0..11: move every piece's key to this tonic */
    pn_cli_mode_filter mode; /* keep only pieces whose key has this mode */
    const pn_space *space;   /* with tonic >= 0: prefer the octave that stays inside it */
} pn_cli_corpus_options;

void pn_cli_corpus_options_default(pn_cli_corpus_options *o);

/* --split: "train", "valid" or "test" (*out = text), or "all" (*out =
 * NULL, every part). Returns PN_EXIT_OK, or prints a usage error for
 * `command` and returns PN_EXIT_USAGE. */
int pn_cli_corpus_split(const char *command, const char *text, const char **out);

/* The coarsest --grid, in sixteenth notes (four bars of 4/4). */
enum { PN_CLI_MAX_GRID = 64 };

/* --grid: "events" or 0 (*out = 0, one step per change of sonority), or a
 * whole number 1..PN_CLI_MAX_GRID in decimal digits (one step every so
 * many sixteenth notes). Returns as pn_cli_corpus_split() does. */
int pn_cli_corpus_grid(const char *command, const char *text, int *out);

/* --mode: "major", "minor" or "any". Returns PN_EXIT_OK, or prints a
 * usage error for `command` and returns PN_EXIT_USAGE. */
int pn_cli_corpus_mode(const char *command, const char *text, pn_cli_mode_filter *out);

/* --tonic: a note name, 0..11 or "keep" (pn_cli_tonic). Returns as
 * pn_cli_corpus_mode() does. */
int pn_cli_corpus_tonic(const char *command, const char *text, int *out);

/* Reads `path`: ".json" is a chorale file (corpus.h), anything else a
 * Standard MIDI File (one voice per track or channel, 16th grid). Errors
 * name the file and what is wrong. `summary`, if not NULL, receives a line
 * for the user: pieces read, kept, keys, pieces left out and why. */
pn_error pn_cli_load_corpus(const char *path, const pn_cli_corpus_options *o, pn_corpus **out,
                            char *summary, size_t summary_size, pn_error_info *info);

#endif
