/* Statistics files: the "parnassus-style/1" reader and writer
 * (docs/evaluate.md). */
#include "parnassus/style.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_messages.h"
#include "text.h"

#include "parnassus/file.h"

static const char FORMAT[] = "parnassus-style/1";

enum {
    HASH_DIGITS = 16,
    HASHES_PER_LINE = 5,
    SHOWN_KEY_BYTES = 40, /* a key of the file in a message is cut after these */
};

/* ------------------------------------------------------------------------ */
/* The file object */

pn_error pn_style_file_create(pn_style_file **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "style file: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out)
        return pn_fail(info, PN_ERR_NOMEM, "style file: out of memory");
    return PN_OK;
}

pn_error pn_style_file_set(char **field, const char *value, pn_error_info *info)
{
    if (!field)
        return pn_fail(info, PN_ERR_INVALID, "style file: field is NULL");
    char *copy = NULL;
    if (value && !(copy = pn_copy_string(value)))
        return pn_fail(info, PN_ERR_NOMEM, "style file: out of memory");
    free(*field);
    *field = copy;
    return PN_OK;
}

void pn_style_file_free(pn_style_file *f)
{
    if (!f)
        return;
    free(f->name);
    free(f->description);
    free(f->mode);
    free(f->training_description);
    pn_style_grams_free(&f->training);
    free(f);
}

/* ------------------------------------------------------------------------ */
/* Reading */

typedef struct reader {
    const char *name;
    pn_error_info *info;
} reader;

static pn_error fail_at(const reader *rd, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static pn_error fail_at(const reader *rd, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const pn_error err = pn_json_vfail_at(rd->info, rd->name, path, fmt, ap);
    va_end(ap);
    return err;
}

static pn_error fail_type(const reader *rd, const char *path, const char *what, const json_t *v)
{
    return pn_json_fail_type(rd->info, rd->name, path, what, v);
}

static pn_error out_of_memory(const reader *rd)
{
    return pn_fail(rd->info, PN_ERR_NOMEM, "%.200s: out of memory", rd->name);
}

/* Rejects keys of obj not in the NULL-terminated list. */
static pn_error check_keys(const reader *rd, const char *path, const json_t *obj,
                           const char *const *allowed)
{
    return pn_json_check_keys(rd->info, rd->name, path, obj, allowed, SHOWN_KEY_BYTES, 64);
}

/* A count: an integer 0..PN_STYLE_MAX_COUNT. */
static pn_error get_count(const reader *rd, const char *path, const json_t *v, int64_t *out)
{
    if (!json_is_integer(v))
        return fail_type(rd, path, "a whole number >= 0", v);
    const json_int_t x = json_integer_value(v);
    if (x < 0 || x > PN_STYLE_MAX_COUNT)
        return fail_at(rd, path, "must be 0..2^50, got %" JSON_INTEGER_FORMAT, x);
    *out = (int64_t)x;
    return PN_OK;
}

/* An optional string field: copied into *out. */
static pn_error get_string(const reader *rd, const char *path, const json_t *v, char **out)
{
    if (!v)
        return PN_OK;
    if (!json_is_string(v))
        return fail_type(rd, path, "a string", v);
    if (!(*out = pn_copy_string(json_string_value(v))))
        return out_of_memory(rd);
    return PN_OK;
}

static pn_error read_distribution(const reader *rd, pn_style_dist d, const json_t *obj,
                                  pn_style_stats *s)
{
    const pn_style_dist_info *di = pn_style_dist_get(d);
    char path[128];
    snprintf(path, sizeof path, "distributions.%s", di->name);
    if (!json_is_object(obj))
        return fail_type(rd, path, "an object {\"value\": count, ...}", obj);
    int64_t *bins = s->bins + di->first;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        char shown[64], here[256];
        pn_json_show_text(key, SHOWN_KEY_BYTES, shown, sizeof shown);
        snprintf(here, sizeof here, "%s[\"%s\"]", path, shown);
        int32_t bin;
        if (pn_style_bin_parse(d, key, &bin) != 0) {
            if (di->label == PN_STYLE_LABEL_PCSET)
                return fail_at(rd, here,
                               "not a chord type (pitch classes 0..11 above the bass, ascending "
                               "from 0, e.g. \"0,4,7\")");
            if (di->label == PN_STYLE_LABEL_KEY)
                return fail_at(rd, here,
                               "not a key area (a degree of the piece's key, upper case for a "
                               "major key, lower for a minor one, e.g. \"V\", \"vi\", "
                               "\"bIII\")");
            return fail_at(rd, here, "not a value of %s (whole numbers %d..%d)", di->name,
                           (int)di->offset, (int)(di->offset + di->size - 1));
        }
        pn_error err = get_count(rd, here, v, &bins[bin]);
        if (err != PN_OK)
            return err;
    }
    return PN_OK;
}

static pn_error read_distributions(const reader *rd, const json_t *obj, pn_style_stats *s)
{
    if (!json_is_object(obj))
        return fail_type(rd, "distributions", "an object", obj);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        int found = -1;
        for (int d = 0; d < PN_STYLE_NUM_DISTS && found < 0; ++d)
            if (strcmp(pn_style_dist_get((pn_style_dist)d)->name, key) == 0)
                found = d;
        if (found < 0) {
            char shown[64];
            pn_json_show_text(key, SHOWN_KEY_BYTES, shown, sizeof shown);
            return fail_at(rd, "distributions", "unknown distribution \"%s\"", shown);
        }
        pn_error err = read_distribution(rd, (pn_style_dist)found, v, s);
        if (err != PN_OK)
            return err;
    }
    return PN_OK;
}

static pn_error read_rates(const reader *rd, const json_t *obj, pn_style_stats *s)
{
    if (!json_is_object(obj))
        return fail_type(rd, "rates", "an object", obj);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        int found = -1;
        for (int r = 0; r < PN_STYLE_NUM_RATES && found < 0; ++r)
            if (strcmp(pn_style_rate_get((pn_style_rate)r)->name, key) == 0)
                found = r;
        if (found < 0) {
            char shown[64];
            pn_json_show_text(key, SHOWN_KEY_BYTES, shown, sizeof shown);
            return fail_at(rd, "rates", "unknown rate \"%s\"", shown);
        }
        char path[128], sub[160];
        snprintf(path, sizeof path, "rates.%s", key);
        if (!json_is_object(v))
            return fail_type(rd, path, "an object {\"count\": c, \"total\": t}", v);
        static const char *const keys[] = {"count", "total", NULL};
        pn_error err = check_keys(rd, path, v, keys);
        if (err != PN_OK)
            return err;
        const json_t *count = json_object_get(v, "count"), *total = json_object_get(v, "total");
        if (!count || !total)
            return fail_at(rd, path, "missing \"%s\"", count ? "total" : "count");
        snprintf(sub, sizeof sub, "%s.count", path);
        if ((err = get_count(rd, sub, count, &s->hits[found])) != PN_OK)
            return err;
        snprintf(sub, sizeof sub, "%s.total", path);
        if ((err = get_count(rd, sub, total, &s->total[found])) != PN_OK)
            return err;
        if (s->hits[found] > s->total[found])
            return fail_at(rd, path, "count %" PRId64 " is above total %" PRId64, s->hits[found],
                           s->total[found]);
    }
    return PN_OK;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static pn_error read_training(const reader *rd, const json_t *obj, pn_style_file *f)
{
    if (!json_is_object(obj))
        return fail_type(rd, "training", "an object", obj);
    static const char *const keys[] = {"description", "grams", "hashes", NULL};
    pn_error err = check_keys(rd, "training", obj, keys);
    if (err != PN_OK)
        return err;
    err = get_string(rd, "training.description", json_object_get(obj, "description"),
                     &f->training_description);
    if (err != PN_OK)
        return err;
    const json_t *grams = json_object_get(obj, "grams");
    if (!grams)
        return fail_at(rd, "training", "missing \"grams\"");
    if (!json_is_integer(grams) || json_integer_value(grams) != PN_STYLE_GRAM)
        return fail_at(rd, "training.grams", "only %d-grams are supported", PN_STYLE_GRAM);
    const json_t *hashes = json_object_get(obj, "hashes");
    if (!hashes)
        return fail_at(rd, "training", "missing \"hashes\"");
    if (!json_is_array(hashes))
        return fail_type(rd, "training.hashes", "an array of 16-digit hexadecimal strings", hashes);
    const size_t n = json_array_size(hashes);
    f->training.hash = malloc(n * sizeof *f->training.hash + 1);
    if (!f->training.hash)
        return out_of_memory(rd);
    f->has_training = 1;
    for (size_t i = 0; i < n; ++i) {
        const json_t *h = json_array_get(hashes, i);
        char path[64];
        snprintf(path, sizeof path, "training.hashes[%zu]", i);
        const char *text = json_is_string(h) ? json_string_value(h) : NULL;
        if (!text || json_string_length(h) != HASH_DIGITS)
            return fail_at(rd, path, "expected a string of %d lowercase hexadecimal digits",
                           HASH_DIGITS);
        uint64_t x = 0;
        for (int j = 0; j < HASH_DIGITS; ++j) {
            const int digit = hex_digit(text[j]);
            if (digit < 0)
                return fail_at(rd, path, "expected a string of %d lowercase hexadecimal digits",
                               HASH_DIGITS);
            x = x << 4 | (uint64_t)digit;
        }
        if (i > 0 && x <= f->training.hash[i - 1])
            return fail_at(rd, path,
                           "not above the hash before it (the list must ascend, "
                           "without repeats)");
        f->training.hash[i] = x;
        f->training.count = (int64_t)i + 1;
    }
    return PN_OK;
}

static pn_error read_root(const reader *rd, const json_t *root, pn_style_file *f)
{
    if (!json_is_object(root))
        return fail_type(rd, "top level", "an object {\"format\": \"parnassus-style/1\", ...}",
                         root);
    const json_t *format = json_object_get(root, "format");
    if (!format)
        return fail_at(rd, "format", "missing (expected \"%s\")", FORMAT);
    if (!json_is_string(format))
        return fail_type(rd, "format", "a string", format);
    if (strcmp(json_string_value(format), FORMAT) != 0) {
        char shown[64];
        pn_json_show_text(json_string_value(format), SHOWN_KEY_BYTES, shown, sizeof shown);
        return fail_at(rd, "format", "\"%s\" is not supported (only \"%s\")", shown, FORMAT);
    }
    static const char *const keys[] = {
        "format",       "name",       "description",   "mode",  "pieces",   "pieces_major",
        "pieces_minor", "sonorities", "distributions", "rates", "training", NULL};
    pn_error err = check_keys(rd, "top level", root, keys);
    if (err != PN_OK)
        return err;
    if ((err = get_string(rd, "name", json_object_get(root, "name"), &f->name)) != PN_OK ||
        (err = get_string(rd, "description", json_object_get(root, "description"),
                          &f->description)) != PN_OK)
        return err;
    const json_t *mode = json_object_get(root, "mode");
    if (mode) {
        const char *m = json_is_string(mode) ? json_string_value(mode) : "";
        if (strcmp(m, "major") != 0 && strcmp(m, "minor") != 0 && strcmp(m, "any") != 0)
            return fail_at(rd, "mode", "expected \"major\", \"minor\" or \"any\"");
        if ((err = get_string(rd, "mode", mode, &f->mode)) != PN_OK)
            return err;
    }
    static const char *const counts[] = {"pieces", "pieces_major", "pieces_minor", "sonorities"};
    int64_t *slots[] = {&f->stats.pieces, &f->stats.pieces_major, &f->stats.pieces_minor,
                        &f->stats.sonorities};
    for (int i = 0; i < 4; ++i) {
        const json_t *v = json_object_get(root, counts[i]);
        if (v && (err = get_count(rd, counts[i], v, slots[i])) != PN_OK)
            return err;
    }
    const json_t *v;
    if ((v = json_object_get(root, "distributions")) &&
        (err = read_distributions(rd, v, &f->stats)) != PN_OK)
        return err;
    if ((v = json_object_get(root, "rates")) && (err = read_rates(rd, v, &f->stats)) != PN_OK)
        return err;
    if ((v = json_object_get(root, "training")) && (err = read_training(rd, v, f)) != PN_OK)
        return err;
    return PN_OK;
}

static pn_error decode_failure(const reader *rd, const json_error_t *je)
{
    if (json_error_code(je) == json_error_out_of_memory)
        return out_of_memory(rd);
    if (je->line > 0)
        return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: line %d column %d: %s", rd->name, je->line,
                       je->column, je->text);
    return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: %s", rd->name, je->text);
}

pn_error pn_style_parse(const char *name, const char *text, size_t len, pn_style_file **out,
                        pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_style_parse: out is NULL");
    *out = NULL;
    reader rd = {name ? name : "statistics", info};
    if (!text && len > 0)
        return pn_fail(info, PN_ERR_INVALID, "%.200s: text is NULL", rd.name);
    const size_t bom = pn_file_bom_length(text, len);
    json_error_t je;
    json_t *root = json_loadb(text ? text + bom : "", len - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return decode_failure(&rd, &je);
    pn_style_file *f = calloc(1, sizeof *f);
    pn_error err = f ? read_root(&rd, root, f) : out_of_memory(&rd);
    json_decref(root);
    if (err != PN_OK) {
        pn_style_file_free(f);
        return err;
    }
    *out = f;
    return PN_OK;
}

pn_error pn_style_read(const char *path, pn_style_file **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_style_read: out is NULL");
    *out = NULL;
    if (!path)
        return pn_fail(info, PN_ERR_INVALID, "pn_style_read: path is NULL");
    char *text = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, &text, &len, info);
    if (err != PN_OK)
        return err;
    err = pn_style_parse(path, text, len, out, info);
    free(text);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Writing */

/* A JSON string literal for s (escaped by jansson), or -1 when s is not
 * valid UTF-8 or memory ran out. */
static int put_string(FILE *out, const char *s)
{
    json_t *j = json_string(s);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (!text)
        return -1;
    fputs(text, out);
    free(text);
    return 0;
}

/* `  "key": "value",` for an optional string. */
static int put_field(FILE *out, const char *key, const char *value)
{
    if (!value)
        return 0;
    fprintf(out, "  \"%s\": ", key);
    if (put_string(out, value) != 0)
        return -1;
    fputs(",\n", out);
    return 0;
}

static void put_distribution(FILE *out, const pn_style_stats *s, pn_style_dist d, int last)
{
    const pn_style_dist_info *di = pn_style_dist_get(d);
    const int64_t *c = pn_style_counts(s, d);
    fprintf(out, "    \"%s\": {", di->name);
    int first = 1;
    for (int32_t i = 0; i < di->size; ++i) {
        if (c[i] == 0)
            continue;
        char label[64];
        pn_style_bin_label(d, i, label, sizeof label);
        fprintf(out, "%s\"%s\": %" PRId64, first ? "" : ", ", label, c[i]);
        first = 0;
    }
    fprintf(out, "}%s\n", last ? "" : ",");
}

pn_error pn_style_write(const pn_style_file *f, FILE *out, const char *name, pn_error_info *info)
{
    if (!name)
        name = "statistics";
    if (!f || !out)
        return pn_fail(info, PN_ERR_INVALID, "%s: NULL argument", name);
    const pn_style_stats *s = &f->stats;
    const char *strings[] = {f->name, f->description, f->mode, f->training_description};
    for (int i = 0; i < 4; ++i) {
        json_t *j = strings[i] ? json_string(strings[i]) : NULL;
        if (strings[i] && !j)
            return pn_fail(info, PN_ERR_INVALID, "%s: the %s is not valid UTF-8", name,
                           i == 0   ? "name"
                           : i == 1 ? "description"
                           : i == 2 ? "mode"
                                    : "training description");
        json_decref(j);
    }
    for (int64_t i = 1; f->has_training && i < f->training.count; ++i)
        if (f->training.hash[i] <= f->training.hash[i - 1])
            return pn_fail(info, PN_ERR_INVALID,
                           "%s: the training hashes are not ascending without repeats", name);
    fprintf(out, "{\n  \"format\": \"%s\",\n", FORMAT);
    if (put_field(out, "name", f->name) != 0 ||
        put_field(out, "description", f->description) != 0 || put_field(out, "mode", f->mode) != 0)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    fprintf(out,
            "  \"pieces\": %" PRId64 ",\n  \"pieces_major\": %" PRId64
            ",\n  \"pieces_minor\": %" PRId64 ",\n  \"sonorities\": %" PRId64 ",\n",
            s->pieces, s->pieces_major, s->pieces_minor, s->sonorities);
    fputs("  \"distributions\": {\n", out);
    for (int d = 0; d < PN_STYLE_NUM_DISTS; ++d)
        put_distribution(out, s, (pn_style_dist)d, d == PN_STYLE_NUM_DISTS - 1);
    fputs("  },\n  \"rates\": {\n", out);
    for (int r = 0; r < PN_STYLE_NUM_RATES; ++r)
        fprintf(out, "    \"%s\": {\"count\": %" PRId64 ", \"total\": %" PRId64 "}%s\n",
                pn_style_rate_get((pn_style_rate)r)->name, s->hits[r], s->total[r],
                r == PN_STYLE_NUM_RATES - 1 ? "" : ",");
    fprintf(out, "  }%s\n", f->has_training ? "," : "");
    if (f->has_training) {
        fputs("  \"training\": {\n", out);
        if (f->training_description) {
            fputs("    \"description\": ", out);
            if (put_string(out, f->training_description) != 0)
                return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
            fputs(",\n", out);
        }
        fprintf(out, "    \"grams\": %d,\n    \"hashes\": [", PN_STYLE_GRAM);
        for (int64_t i = 0; i < f->training.count; ++i)
            fprintf(out, "%s\"%016" PRIx64 "\"%s", i % HASHES_PER_LINE == 0 ? "\n      " : " ",
                    f->training.hash[i], i + 1 < f->training.count ? "," : "");
        fputs(f->training.count > 0 ? "\n    ]\n  }\n" : "]\n  }\n", out);
    }
    fputs("}\n", out);
    if (ferror(out))
        return pn_fail(info, PN_ERR_IO, "%s: cannot write", name);
    return PN_OK;
}
