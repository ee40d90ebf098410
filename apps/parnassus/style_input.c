/* Reading the inputs, the reference and the training set of `parnassus
 * evaluate` (see style_input.h). */
#include "style_input.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "data_dir.h"
#include "midi_onsets.h"
#include "options.h"
#include "parnassus/file.h"
#include "parnassus/key.h"

const char *pn_cli_style_kind_name(pn_cli_style_kind kind)
{
    switch (kind) {
    case PN_CLI_STYLE_MIDI:
        return "midi";
    case PN_CLI_STYLE_CHORALES:
        return "chorales";
    default:
        return "statistics";
    }
}

static int ends_with_json(const char *path)
{
    const size_t n = strlen(path);
    if (n < 5)
        return 0;
    static const char want[] = ".json";
    for (int i = 0; i < 5; ++i)
        if (tolower((unsigned char)path[n - 5 + i]) != want[i])
            return 0;
    return 1;
}

/* 1 when the JSON file is a statistics file (a top-level object with a
 * "format" member), 0 when it is something else or does not parse (the
 * chorale reader then says why). The text read is returned in *text. */
static pn_error sniff_statistics(const char *path, char **text, size_t *len, int *is_style,
                                 pn_error_info *info)
{
    *is_style = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, text, len, info);
    if (err != PN_OK)
        return err;
    const size_t bom = pn_file_bom_length(*text, *len);
    json_t *root = json_loadb(*text + bom, *len - bom, 0, NULL);
    *is_style = json_is_object(root) && json_object_get(root, "format") != NULL;
    json_decref(root);
    return PN_OK;
}

/* ------------------------------------------------------------------------ */
/* MIDI files */

/* The key of the whole file: every sounding note weighted by how long it
 * sounds (a piece of one voice, one step per note of every segment). */
static pn_error midi_key(const char *path, const pn_midi_onsets *o, pn_key *key,
                         pn_error_info *info)
{
    const size_t n = (size_t)o->num_notes;
    int8_t *pitch = malloc(n + 1);
    int32_t *duration = malloc((n + 1) * sizeof *duration);
    if (!pitch || !duration) {
        free(pitch);
        free(duration);
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
    }
    int32_t steps = 0;
    for (int32_t s = 0; s < o->num_segments; ++s) {
        const pn_midi_segment *seg = &o->segments[s];
        for (int32_t j = 0; j < seg->count && seg->length > 0; ++j) {
            pitch[steps] = (int8_t)o->notes[seg->first + j].key;
            duration[steps++] = seg->length;
        }
    }
    pn_piece piece = {NULL, 1, steps, pitch, duration};
    *key = pn_key_find(&piece);
    free(pitch);
    free(duration);
    return PN_OK;
}

static pn_error add_midi(const char *path, pn_style_acc *acc, pn_cli_style_source *src,
                         pn_error_info *info)
{
    pn_midi_onsets *o = NULL;
    pn_error err = pn_midi_read_onsets(path, &o, info);
    if (err != PN_OK)
        return err;
    pn_key key;
    if ((err = midi_key(path, o, &key, info)) != PN_OK) {
        pn_midi_onsets_free(o);
        return err;
    }
    const int64_t before = pn_style_acc_stats(acc)->sonorities;
    const int labelled = o->labels != PN_MIDI_UNLABELLED;
    int pitch[PN_MIDI_MAX_SOUNDING], voice[PN_MIDI_MAX_SOUNDING];
    pn_style_begin_piece(acc, key);
    for (int32_t s = 0; s < o->num_segments && err == PN_OK; ++s) {
        const pn_midi_segment *seg = &o->segments[s];
        if (!seg->onset)
            continue;
        for (int32_t j = 0; j < seg->count; ++j) {
            pitch[j] = o->notes[seg->first + j].key;
            voice[j] = o->notes[seg->first + j].voice;
        }
        err = pn_style_add_notes(acc, pitch, labelled ? voice : NULL, seg->count, info);
    }
    if (err == PN_OK) {
        src->pieces = 1;
        src->sonorities = pn_style_acc_stats(acc)->sonorities - before;
        src->labels = o->labels == PN_MIDI_LABELS_FROM_TRACKS     ? "tracks"
                      : o->labels == PN_MIDI_LABELS_FROM_CHANNELS ? "channels"
                                                                  : "none";
        src->num_voices = o->num_voices;
        snprintf(src->key, sizeof src->key, "%s", pn_key_name(key));
        if (labelled)
            snprintf(src->summary, sizeof src->summary,
                     "%s: 1 piece, %" PRId64 " sonorities, %d voices from %s, %s",
                     pn_cli_basename(path), src->sonorities, o->num_voices, src->labels, src->key);
        else
            snprintf(src->summary, sizeof src->summary,
                     "%s: 1 piece, %" PRId64 " sonorities, voices by height only, %s",
                     pn_cli_basename(path), src->sonorities, src->key);
    }
    pn_midi_onsets_free(o);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Chorale and statistics files */

static pn_error add_chorales(const char *path, const pn_cli_style_filter *filter, pn_style_acc *acc,
                             pn_cli_style_source *src, pn_error_info *info)
{
    pn_cli_corpus_options co;
    pn_cli_corpus_options_default(&co);
    co.split = filter->split;
    co.mode = filter->mode;
    co.tonic = -1; /* keys as they are: ranges are registers */
    co.grid = 0;
    pn_corpus *c = NULL;
    char summary[512];
    pn_error err = pn_cli_load_corpus(path, &co, &c, summary, sizeof summary, info);
    summary[sizeof summary - 1] = '\0';
    if (err != PN_OK)
        return err;
    const int64_t before = pn_style_acc_stats(acc)->sonorities;
    err = pn_style_add_corpus(acc, c, info);
    if (err == PN_OK) {
        src->pieces = c->num_pieces;
        src->sonorities = pn_style_acc_stats(acc)->sonorities - before;
        snprintf(src->summary, sizeof src->summary, "%.500s; %" PRId64 " sonorities by height",
                 summary, src->sonorities);
    }
    pn_corpus_free(c);
    return err;
}

static pn_error add_statistics(const char *path, const char *text, size_t len,
                               pn_style_stats *pooled, pn_cli_style_source *src,
                               pn_error_info *info)
{
    pn_style_file *f = NULL;
    pn_error err = pn_style_parse(path, text, len, &f, info);
    if (err != PN_OK)
        return err;
    pn_style_stats_add(pooled, &f->stats);
    src->pieces = f->stats.pieces;
    src->sonorities = f->stats.sonorities;
    snprintf(src->summary, sizeof src->summary,
             "%s: statistics%s%s, %" PRId64 " pieces, %" PRId64 " sonorities",
             pn_cli_basename(path), f->name ? " " : "", f->name ? f->name : "", f->stats.pieces,
             f->stats.sonorities);
    pn_style_file_free(f);
    return PN_OK;
}

pn_error pn_cli_style_add_input(const char *path, const pn_cli_style_filter *filter,
                                pn_style_acc *acc, pn_style_stats *pooled, pn_cli_style_source *src,
                                pn_error_info *info)
{
    memset(src, 0, sizeof *src);
    src->file = path;
    if (!ends_with_json(path)) {
        src->kind = PN_CLI_STYLE_MIDI;
        return add_midi(path, acc, src, info);
    }
    char *text = NULL;
    size_t len = 0;
    int is_style = 0;
    pn_error err = sniff_statistics(path, &text, &len, &is_style, info);
    if (err == PN_OK && is_style) {
        src->kind = PN_CLI_STYLE_STATISTICS;
        err = add_statistics(path, text, len, pooled, src, info);
    } else if (err == PN_OK) {
        src->kind = PN_CLI_STYLE_CHORALES;
        err = add_chorales(path, filter, acc, src, info);
    }
    free(text);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Reference and training set */

pn_error pn_cli_style_reference(const char *which, pn_style_file **out, char *path, size_t size,
                                pn_error_info *info)
{
    *out = NULL;
    if (strcmp(which, "major") == 0 || strcmp(which, "minor") == 0) {
        char relative[64], tried[2048];
        snprintf(relative, sizeof relative, "reference/chorales-%s.json", which);
        if (pn_cli_find_data(relative, path, size, tried, sizeof tried) != 0)
            return pn_fail(info, PN_ERR_IO,
                           "the reference statistics %s were not found (looked for %s; set "
                           "PARNASSUS_DATA_DIR to the directory that holds reference/)",
                           relative, tried);
    } else {
        snprintf(path, size, "%s", which);
    }
    return pn_style_read(path, out, info);
}

pn_error pn_cli_style_training(const char *path, pn_cli_mode_filter mode, pn_style_grams *out,
                               char *description, size_t size, pn_error_info *info)
{
    out->count = 0;
    out->hash = NULL;
    char *text = NULL;
    size_t len = 0;
    int is_style = 0;
    pn_error err = ends_with_json(path) ? sniff_statistics(path, &text, &len, &is_style, info)
                                        : pn_fail(info, PN_ERR_PARSE,
                                                  "%s: a training set is a chorale file or a "
                                                  "statistics file (.json)",
                                                  path);
    if (err != PN_OK)
        return err;
    if (is_style) {
        pn_style_file *f = NULL;
        err = pn_style_parse(path, text, len, &f, info);
        free(text);
        if (err != PN_OK)
            return err;
        if (!f->has_training) {
            pn_style_file_free(f);
            return pn_fail(info, PN_ERR_PARSE, "%s: holds no training set (no \"training\" field)",
                           path);
        }
        *out = f->training;
        f->training.hash = NULL;
        f->training.count = 0;
        snprintf(description, size, "%s", f->training_description ? f->training_description : "");
        if (description[0] == '\0')
            snprintf(description, size, "the training set of %s", pn_cli_basename(path));
        pn_style_file_free(f);
        return PN_OK;
    }
    free(text);
    pn_cli_corpus_options co;
    pn_cli_corpus_options_default(&co);
    co.split = "train";
    co.mode = mode;
    co.tonic = 0;
    co.grid = 0;
    pn_corpus *c = NULL;
    char summary[512];
    if ((err = pn_cli_load_corpus(path, &co, &c, summary, sizeof summary, info)) != PN_OK)
        return err;
    pn_style_options so;
    pn_style_options_default(&so);
    so.collect_grams = 1;
    pn_style_acc *acc = NULL;
    if ((err = pn_style_acc_create(&so, &acc, info)) == PN_OK &&
        (err = pn_style_add_corpus(acc, c, info)) == PN_OK)
        err = pn_style_acc_grams(acc, out, info);
    if (err == PN_OK)
        snprintf(description, size,
                 "train split of %s, %s: %d chorales moved to C, %" PRId64 " distinct 4-grams",
                 pn_cli_basename(path),
                 mode == PN_CLI_MODE_MAJOR   ? "major"
                 : mode == PN_CLI_MODE_MINOR ? "minor"
                                             : "any mode",
                 (int)c->num_pieces, out->count);
    pn_style_acc_free(acc);
    pn_corpus_free(c);
    return err;
}
