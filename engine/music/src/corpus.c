/* The chorale corpus reader and sonority merging (docs/corpus.md). */
#include "parnassus/corpus.h"

#include <inttypes.h>
#include <jansson.h>

#include "json_messages.h"
#include "text.h"

#include "parnassus/file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest split name quoted in piece names and messages. */
enum { SPLIT_NAME_MAX = 64 };

static void free_piece(pn_piece *p)
{
    free(p->name);
    free(p->pitch);
    free(p->duration);
    memset(p, 0, sizeof *p);
}

void pn_corpus_free(pn_corpus *corpus)
{
    if (!corpus)
        return;
    for (int32_t i = 0; i < corpus->num_pieces; ++i)
        free_piece(&corpus->pieces[i]);
    free(corpus->pieces);
    free(corpus);
}

/* A corpus with room for `num_pieces` zeroed pieces (num_pieces set). */
static pn_corpus *new_corpus(int32_t num_voices, size_t num_pieces)
{
    pn_corpus *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->num_voices = num_voices;
    if (num_pieces > 0) {
        c->pieces = calloc(num_pieces, sizeof *c->pieces);
        if (!c->pieces) {
            free(c);
            return NULL;
        }
    }
    c->num_pieces = (int32_t)num_pieces;
    return c;
}

/* ------------------------------------------------------------------------ */
/* Reading */

/* The split name as shown in messages: cut to SPLIT_NAME_MAX bytes. */
static int split_len(const char *key)
{
    size_t n = strlen(key);
    return (int)(n < SPLIT_NAME_MAX ? n : SPLIT_NAME_MAX);
}

/* Converts one chorale (an array of steps) into *piece. */
static pn_error read_chorale(const char *name, const char *key, size_t index, const json_t *chorale,
                             pn_piece *piece, pn_error_info *info)
{
    char what[64];
    int kl = split_len(key);
    if (!json_is_array(chorale)) {
        pn_json_describe(chorale, what, sizeof what);
        return pn_fail(info, PN_ERR_PARSE, "%s: %.*s[%zu]: expected an array of steps, got %s",
                       name, kl, key, index, what);
    }
    size_t num_steps = json_array_size(chorale);
    if (num_steps > (size_t)INT32_MAX / PN_CHORALE_VOICES)
        return pn_fail(info, PN_ERR_PARSE, "%s: %.*s[%zu]: too many steps (%zu)", name, kl, key,
                       index, num_steps);

    char label[SPLIT_NAME_MAX + 32];
    snprintf(label, sizeof label, "%.*s[%zu]", kl, key, index);
    piece->name = pn_copy_string(label);
    piece->num_voices = PN_CHORALE_VOICES;
    piece->num_steps = (int32_t)num_steps;
    piece->pitch = malloc(num_steps * PN_CHORALE_VOICES + 1);
    if (!piece->name || !piece->pitch)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory reading %s", name, label);

    for (size_t t = 0; t < num_steps; ++t) {
        const json_t *step = json_array_get(chorale, t);
        if (!json_is_array(step)) {
            pn_json_describe(step, what, sizeof what);
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: %s[%zu]: expected an array of %d pitches, got %s", name, label, t,
                           PN_CHORALE_VOICES, what);
        }
        size_t k = json_array_size(step);
        if (k != PN_CHORALE_VOICES)
            return pn_fail(info, PN_ERR_PARSE, "%s: %s[%zu]: step has %zu voices, expected %d",
                           name, label, t, k, PN_CHORALE_VOICES);
        for (size_t v = 0; v < k; ++v) {
            const json_t *p = json_array_get(step, v);
            if (!json_is_integer(p)) {
                pn_json_describe(p, what, sizeof what);
                return pn_fail(info, PN_ERR_PARSE,
                               "%s: %s[%zu][%zu]: expected an integer MIDI pitch or -1, got %s",
                               name, label, t, v, what);
            }
            json_int_t m = json_integer_value(p);
            if (m < PN_REST || m > 127)
                return pn_fail(info, PN_ERR_PARSE,
                               "%s: %s[%zu][%zu]: pitch %" JSON_INTEGER_FORMAT
                               " out of range 0..127 (or -1 for silence)",
                               name, label, t, v, m);
            piece->pitch[t * PN_CHORALE_VOICES + v] = (int8_t)m;
        }
    }
    return PN_OK;
}

/* Appends the chorales of one split (an array) to `c`, growing its pieces. */
static pn_error read_split(const char *name, const char *key, const json_t *arr, pn_corpus *c,
                           pn_error_info *info)
{
    int kl = split_len(key);
    if (!json_is_array(arr)) {
        char what[64];
        pn_json_describe(arr, what, sizeof what);
        return pn_fail(info, PN_ERR_PARSE, "%s: %.*s: expected an array of chorales, got %s", name,
                       kl, key, what);
    }
    size_t n = json_array_size(arr);
    if (n > (size_t)(INT32_MAX - c->num_pieces))
        return pn_fail(info, PN_ERR_PARSE, "%s: %.*s: too many chorales", name, kl, key);
    if (n == 0)
        return PN_OK;
    size_t total = (size_t)c->num_pieces + n;
    pn_piece *grown = realloc(c->pieces, total * sizeof *grown);
    if (!grown)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    memset(grown + c->num_pieces, 0, n * sizeof *grown);
    c->pieces = grown;
    for (size_t i = 0; i < n; ++i) {
        /* Counted before filling, so pn_corpus_free cleans up on failure. */
        pn_piece *piece = &c->pieces[c->num_pieces++];
        pn_error err = read_chorale(name, key, i, json_array_get(arr, i), piece, info);
        if (err != PN_OK)
            return err;
    }
    return PN_OK;
}

/* Builds the corpus from a decoded document; `root` stays owned by the caller. */
static pn_error from_json(const char *name, const json_t *root, const char *split, pn_corpus **out,
                          pn_error_info *info)
{
    if (!json_is_object(root)) {
        char what[64];
        pn_json_describe(root, what, sizeof what);
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: top level: expected an object {\"train\": [...], ...}, got %s", name,
                       what);
    }
    pn_corpus *c = new_corpus(PN_CHORALE_VOICES, 0);
    if (!c)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);

    pn_error err = PN_OK;
    if (split) {
        const json_t *arr = json_object_get(root, split);
        if (!arr) {
            char found[256] = "";
            size_t used = 0;
            const char *k;
            const json_t *v;
            json_object_foreach((json_t *)(uintptr_t)root, k, v)
            {
                (void)v;
                int w = snprintf(found + used, sizeof found - used, "%s%.*s", used ? ", " : "",
                                 split_len(k), k);
                if (w < 0 || (size_t)w >= sizeof found - used)
                    break;
                used += (size_t)w;
            }
            err = pn_fail(info, PN_ERR_PARSE, "%s: no \"%.*s\" split (the file has: %s)", name,
                          split_len(split), split, used ? found : "nothing");
        } else {
            err = read_split(name, split, arr, c, info);
        }
    } else {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)(uintptr_t)root, k, v)
        {
            err = read_split(name, k, v, c, info);
            if (err != PN_OK)
                break;
        }
    }
    if (err != PN_OK) {
        pn_corpus_free(c);
        return err;
    }
    *out = c;
    return PN_OK;
}

/* Maps a jansson decoding failure to an error. */
static pn_error decode_failure(const char *name, const json_error_t *je, pn_error_info *info)
{
    switch (json_error_code(je)) {
    case json_error_out_of_memory:
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    default:
        break;
    }
    if (je->line > 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: line %d column %d: %s", name, je->line, je->column,
                       je->text);
    return pn_fail(info, PN_ERR_PARSE, "%s: %s", name, je->text);
}

pn_error pn_corpus_parse_chorales(const char *name, const char *text, size_t len, const char *split,
                                  pn_corpus **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_parse_chorales: out is NULL");
    *out = NULL;
    if (!name)
        name = "input";
    if (!text && len > 0)
        return pn_fail(info, PN_ERR_INVALID, "%s: text is NULL", name);
    const size_t bom = pn_file_bom_length(text, len);
    json_error_t je;
    json_t *root = json_loadb(text ? text + bom : "", len - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return decode_failure(name, &je, info);
    pn_error err = from_json(name, root, split, out, info);
    json_decref(root);
    return err;
}

pn_error pn_corpus_read_chorales(const char *path, const char *split, pn_corpus **out,
                                 pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_read_chorales: out is NULL");
    *out = NULL;
    if (!path)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_read_chorales: path is NULL");
    char *text = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, 0, &text, &len, info);
    if (err != PN_OK)
        return err;
    err = pn_corpus_parse_chorales(path, text, len, split, out, info);
    free(text);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Copying and merging */

pn_error pn_corpus_copy(const pn_corpus *in, pn_corpus **out, pn_error_info *info)
{
    if (!in || !out)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_copy: NULL argument");
    *out = NULL;
    pn_corpus *c = new_corpus(in->num_voices, (size_t)in->num_pieces);
    if (!c)
        return pn_fail(info, PN_ERR_NOMEM, "corpus copy: out of memory");
    for (int32_t i = 0; i < in->num_pieces; ++i) {
        const pn_piece *s = &in->pieces[i];
        pn_piece *d = &c->pieces[i];
        size_t cells = (size_t)s->num_steps * (size_t)s->num_voices;
        d->num_voices = s->num_voices;
        d->num_steps = s->num_steps;
        d->name = pn_copy_string(s->name ? s->name : "");
        d->pitch = malloc(cells + 1);
        if (s->duration)
            d->duration = malloc((size_t)s->num_steps * sizeof *d->duration + 1);
        if (!d->name || !d->pitch || (s->duration && !d->duration)) {
            pn_corpus_free(c);
            return pn_fail(info, PN_ERR_NOMEM, "corpus copy: out of memory");
        }
        if (cells)
            memcpy(d->pitch, s->pitch, cells);
        if (s->duration && s->num_steps)
            memcpy(d->duration, s->duration, (size_t)s->num_steps * sizeof *d->duration);
    }
    *out = c;
    return PN_OK;
}

pn_error pn_corpus_sonorities(const pn_corpus *in, pn_corpus **out, pn_error_info *info)
{
    if (!in || !out)
        return pn_fail(info, PN_ERR_INVALID, "pn_corpus_sonorities: NULL argument");
    pn_error err = pn_corpus_copy(in, out, info);
    if (err != PN_OK)
        return err;
    pn_corpus *c = *out;
    for (int32_t i = 0; i < c->num_pieces; ++i) {
        pn_piece *p = &c->pieces[i];
        size_t k = (size_t)p->num_voices;
        const pn_piece *src = &in->pieces[i];
        int32_t *dur = malloc((size_t)p->num_steps * sizeof *dur + 1);
        if (!dur) {
            pn_corpus_free(c);
            *out = NULL;
            return pn_fail(info, PN_ERR_NOMEM, "sonorities: out of memory");
        }
        int32_t n = 0;
        for (int32_t t = 0; t < src->num_steps; ++t) {
            const int8_t *step = src->pitch + (size_t)t * k;
            int32_t d = pn_piece_duration(src, t);
            if (n > 0 && memcmp(p->pitch + (size_t)(n - 1) * k, step, k) == 0 &&
                dur[n - 1] <= INT32_MAX - d) {
                dur[n - 1] += d;
            } else {
                memmove(p->pitch + (size_t)n * k, step, k);
                dur[n++] = d;
            }
        }
        free(p->duration);
        p->duration = dur;
        p->num_steps = n;
    }
    return PN_OK;
}
