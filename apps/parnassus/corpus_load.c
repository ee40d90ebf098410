/* Loading the music learn and analyze read: chorale JSON or a Standard MIDI
 * File, filtered by mode, moved to a common tonic and put on a time grid
 * (docs/learning.md). */
#include "corpus_load.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "midi_file.h"
#include "options.h"
#include "parnassus/key.h"

void pn_cli_corpus_options_default(pn_cli_corpus_options *o)
{
    o->split = NULL;
    o->num_voices = PN_CHORALE_VOICES;
    o->grid = 0;
    o->tonic = 0;
    o->mode = PN_CLI_MODE_ANY;
    o->space = NULL;
}

/* ------------------------------------------------------------------------ */
/* The options every command that reads a corpus takes */

int pn_cli_corpus_split(const char *command, const char *text, const char **out)
{
    if (strcmp(text, "all") == 0) {
        *out = NULL;
        return PN_EXIT_OK;
    }
    if (strcmp(text, "train") == 0 || strcmp(text, "valid") == 0 || strcmp(text, "test") == 0) {
        *out = text;
        return PN_EXIT_OK;
    }
    return pn_cli_usage_error(command, "--split must be train, valid, test or all (got '%s')",
                              text);
}

int pn_cli_corpus_grid(const char *command, const char *text, int *out)
{
    if (strcmp(text, "events") == 0) {
        *out = 0;
        return PN_EXIT_OK;
    }
    /* digits only: no sign, no blanks, no fraction, no exponent */
    const size_t len = strlen(text);
    if (len >= 1 && strspn(text, "0123456789") == len) {
        errno = 0;
        const long g = strtol(text, NULL, 10);
        if (errno == 0 && g <= PN_CLI_MAX_GRID) {
            *out = (int)g;
            return PN_EXIT_OK;
        }
    }
    return pn_cli_usage_error(command, "--grid must be events (or 0) or 1..%d (got '%s')",
                              PN_CLI_MAX_GRID, text);
}

int pn_cli_corpus_mode(const char *command, const char *text, pn_cli_mode_filter *out)
{
    static const struct {
        const char *name;
        pn_cli_mode_filter mode;
    } modes[] = {
        {"major", PN_CLI_MODE_MAJOR}, {"minor", PN_CLI_MODE_MINOR}, {"any", PN_CLI_MODE_ANY}};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; ++i)
        if (strcmp(text, modes[i].name) == 0) {
            *out = modes[i].mode;
            return PN_EXIT_OK;
        }
    return pn_cli_usage_error(command, "--mode must be major, minor or any (got '%s')", text);
}

int pn_cli_corpus_tonic(const char *command, const char *text, int *out)
{
    if (pn_cli_tonic(text, 1, out) == 0)
        return PN_EXIT_OK;
    return pn_cli_usage_error(
        command, "--tonic must be a note name (C, F#, Bb, ...), 0..11 or keep (got '%s')", text);
}

/* ------------------------------------------------------------------------ */
/* The summary line */

typedef struct summary_text {
    char *buf;
    size_t size, used;
} summary_text;

static void say(summary_text *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void say(summary_text *s, const char *fmt, ...)
{
    if (!s->buf || s->used + 1 >= s->size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->buf + s->used, s->size - s->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        s->used = s->used + (size_t)n < s->size ? s->used + (size_t)n : s->size - 1;
}

/* "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st" */
static const char *ordinal_suffix(int n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    switch (n % 10) {
    case 1:
        return "st";
    case 2:
        return "nd";
    case 3:
        return "rd";
    default:
        return "th";
    }
}

/* ------------------------------------------------------------------------ */
/* Reading */

static int ends_with_json(const char *path)
{
    size_t n = strlen(path);
    if (n < 5)
        return 0;
    const char *ext = path + n - 5;
    static const char want[] = ".json";
    for (int i = 0; i < 5; ++i)
        if (tolower((unsigned char)ext[i]) != want[i])
            return 0;
    return 1;
}

static pn_error no_memory(const char *path, pn_error_info *info)
{
    return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
}

/* A Standard MIDI File as a one-piece corpus on the 16th grid. */
static pn_error read_midi(const char *path, int k, pn_corpus **out, summary_text *sum,
                          pn_error_info *info)
{
    if (k < 1 || k > PN_MIDI_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "%s: cannot read %d voices from a MIDI file", path, k);
    int *steps = NULL, n = 0;
    pn_midi_read_meta meta;
    pn_error err = pn_midi_read_voices(path, k, 0, &steps, &n, &meta, info);
    if (err != PN_OK)
        return err;
    pn_corpus *c = calloc(1, sizeof *c);
    pn_piece *piece = calloc(1, sizeof *piece);
    const char *base = pn_cli_basename(path);
    char *name = malloc(strlen(base) + 1);
    int8_t *pitch = malloc((size_t)n * (size_t)k + 1);
    if (!c || !piece || !name || !pitch) {
        free(steps);
        free(c);
        free(piece);
        free(name);
        free(pitch);
        return no_memory(path, info);
    }
    strcpy(name, base);
    for (int t = 0; t < n; ++t)
        for (int v = 0; v < k; ++v) {
            int p = steps[(size_t)v * (size_t)n + (size_t)t];
            pitch[(size_t)t * (size_t)k + (size_t)v] = (int8_t)(p < 0 ? PN_REST : p);
        }
    free(steps);
    piece->name = name;
    piece->num_voices = k;
    piece->num_steps = n;
    piece->pitch = pitch;
    c->num_voices = k;
    c->num_pieces = 1;
    c->pieces = piece;
    *out = c;
    say(sum, "%s: 1 piece, %d voices from %s, %d sixteenths, %s", base, k,
        meta.source == PN_MIDI_VOICES_FROM_TRACKS ? "tracks" : "channels", n,
        pn_key_name(pn_key_find(piece)));
    return PN_OK;
}

static pn_error read_chorales(const char *path, const pn_cli_corpus_options *o, pn_corpus **out,
                              summary_text *sum, pn_error_info *info)
{
    if (o->num_voices != PN_CHORALE_VOICES)
        return pn_fail(info, PN_ERR_INVALID,
                       "%s: a chorale file has %d voices, but the space has %d", path,
                       PN_CHORALE_VOICES, o->num_voices);
    pn_error err = pn_corpus_read_chorales(path, o->split, out, info);
    if (err != PN_OK)
        return err;
    const pn_corpus *c = *out;
    say(sum, "%s: %d chorale%s", pn_cli_basename(path), (int)c->num_pieces,
        c->num_pieces == 1 ? "" : "s");
    if (o->split)
        say(sum, " (%s)", o->split);
    if (o->mode == PN_CLI_MODE_ANY) {
        int minor = 0;
        for (int32_t i = 0; i < c->num_pieces; ++i)
            minor += pn_key_find(&c->pieces[i]).mode == PN_MINOR;
        say(sum, ", %d major and %d minor", (int)c->num_pieces - minor, minor);
    }
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* Mode, tonic, grid */

static void drop_piece(pn_piece *p)
{
    free(p->name);
    free(p->pitch);
    free(p->duration);
    memset(p, 0, sizeof *p);
}

/* 1 when piece p moved by `shift` keeps every sounding voice inside its
 * range (the space's, or 0..127 without one). */
static int fits(const pn_piece *p, int shift, const pn_space *space)
{
    const size_t k = (size_t)p->num_voices;
    for (int32_t t = 0; t < p->num_steps; ++t)
        for (size_t v = 0; v < k; ++v) {
            const int x = p->pitch[(size_t)t * k + v];
            if (x < 0)
                continue;
            const int lo = space ? space->low[v] : 0, hi = space ? space->high[v] : 127;
            if (x + shift < lo || x + shift > hi)
                return 0;
        }
    return 1;
}

/* Moves every piece's key to `tonic`: the shift in -6..+5 semitones
 * (pn_corpus_transpose_to's), or else the octave above or below it,
 * whichever is nearer first, that keeps the piece inside the space. Pieces
 * that fit none are left out; *left_out counts them, *other_octave the
 * pieces that needed the octave above or below. */
static void move_to_tonic(pn_corpus *c, int tonic, const pn_space *space, int *left_out,
                          int *other_octave)
{
    int32_t kept = 0;
    *left_out = 0;
    *other_octave = 0;
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        pn_piece *p = &c->pieces[i];
        const pn_key key = pn_key_find(p);
        const int d = ((tonic - key.tonic) % 12 + 12) % 12;
        const int base = d > 5 ? d - 12 : d;
        const int candidates[3] = {base, base >= 0 ? base - 12 : base + 12,
                                   base >= 0 ? base + 12 : base - 12};
        int shift = 0, found = 0;
        for (int j = 0; j < 3 && !found; ++j)
            if (fits(p, candidates[j], space)) {
                shift = candidates[j];
                found = 1;
            }
        if (!found) {
            drop_piece(p);
            ++*left_out;
            continue;
        }
        *other_octave += shift != base;
        const size_t cells = (size_t)p->num_steps * (size_t)p->num_voices;
        for (size_t j = 0; j < cells; ++j)
            if (p->pitch[j] >= 0)
                p->pitch[j] = (int8_t)(p->pitch[j] + shift);
        c->pieces[kept++] = *p;
    }
    c->num_pieces = kept;
}

/* Keeps every g-th step (g >= 2) of every piece, each lasting g grid units
 * (the last one what is left of the piece). */
static pn_error subsample(pn_corpus *c, int g, const char *path, pn_error_info *info)
{
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        pn_piece *p = &c->pieces[i];
        const size_t k = (size_t)p->num_voices;
        const int32_t n = p->num_steps, kept = n == 0 ? 0 : (n - 1) / g + 1;
        int32_t *duration = malloc((size_t)kept * sizeof *duration + 1);
        if (!duration)
            return no_memory(path, info);
        for (int32_t j = 0; j < kept; ++j) {
            int32_t length = 0;
            for (int32_t t = j * g; t < n && t < (j + 1) * g; ++t)
                length += pn_piece_duration(p, t);
            memmove(p->pitch + (size_t)j * k, p->pitch + (size_t)j * (size_t)g * k, k);
            duration[j] = length;
        }
        free(p->duration);
        p->duration = duration;
        p->num_steps = kept;
    }
    return PN_OK;
}

static int64_t total_steps(const pn_corpus *c)
{
    int64_t n = 0;
    for (int32_t i = 0; i < c->num_pieces; ++i)
        n += c->pieces[i].num_steps;
    return n;
}

pn_error pn_cli_load_corpus(const char *path, const pn_cli_corpus_options *o, pn_corpus **out,
                            char *summary, size_t summary_size, pn_error_info *info)
{
    summary_text sum = {summary, summary_size, 0};
    if (summary && summary_size > 0)
        summary[0] = '\0';
    *out = NULL;
    if (o->space && o->space->num_voices != o->num_voices)
        return pn_fail(info, PN_ERR_INVALID, "%s: %d voices asked for, but the space has %d", path,
                       o->num_voices, o->space->num_voices);
    if (o->grid < 0)
        return pn_fail(info, PN_ERR_INVALID, "%s: grid %d is negative", path, o->grid);
    if (o->tonic > 11)
        return pn_fail(info, PN_ERR_INVALID, "%s: tonic %d is not a pitch class", path, o->tonic);
    pn_corpus *c = NULL;
    pn_error err = ends_with_json(path) ? read_chorales(path, o, &c, &sum, info)
                                        : read_midi(path, o->num_voices, &c, &sum, info);
    if (err != PN_OK)
        return err;

    if (o->mode != PN_CLI_MODE_ANY) {
        const pn_mode mode = o->mode == PN_CLI_MODE_MAJOR ? PN_MAJOR : PN_MINOR;
        pn_corpus *kept = NULL;
        err = pn_corpus_filter_mode(c, mode, &kept, info);
        pn_corpus_free(c);
        if (err != PN_OK)
            return err;
        c = kept;
        say(&sum, ", %d %s kept", (int)c->num_pieces, mode == PN_MAJOR ? "major" : "minor");
    }
    if (o->tonic >= 0) {
        int left_out = 0, other_octave = 0;
        static const char *const names[12] = {"C",  "C#", "D",  "Eb", "E",  "F",
                                              "F#", "G",  "Ab", "A",  "Bb", "B"};
        move_to_tonic(c, o->tonic, o->space, &left_out, &other_octave);
        say(&sum, ", moved to %s", names[o->tonic]);
        if (other_octave > 0)
            say(&sum, " (%d of them an octave further, to fit the space)", other_octave);
        if (o->space)
            say(&sum, "; %d left out (outside the space)", left_out);
    }
    if (o->grid == 0) {
        pn_corpus *events = NULL;
        err = pn_corpus_sonorities(c, &events, info);
        pn_corpus_free(c);
        if (err != PN_OK)
            return err;
        c = events;
        say(&sum, "; %lld sonority events", (long long)total_steps(c));
    } else {
        if (o->grid > 1 && (err = subsample(c, o->grid, path, info)) != PN_OK) {
            pn_corpus_free(c);
            return err;
        }
        if (o->grid == 1)
            say(&sum, "; %lld sixteenth steps", (long long)total_steps(c));
        else
            say(&sum, "; %lld steps (every %d%s sixteenth)", (long long)total_steps(c), o->grid,
                ordinal_suffix(o->grid));
    }
    *out = c;
    return PN_OK;
}
