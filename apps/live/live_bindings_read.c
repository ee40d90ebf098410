/* Reading a MIDI-learn map file, "parnassus-live-map/1"
 * (docs/live-map.md): every field checked, messages naming the file and
 * the field. */
#include "live_bindings_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "parnassus/file.h"

typedef struct map_reader {
    const char *name; /* the file, as messages show it */
    pn_error_info *info;
} map_reader;

static pn_error fail_at(const map_reader *rd, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static pn_error fail_at(const map_reader *rd, const char *where, const char *fmt, ...)
{
    char reason[PN_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: %s: %s", rd->name, where, reason);
}

/* A string of the file as a message quotes it: quotes and backslashes
 * escaped, control bytes as '?', cut after SHOWN_MAX bytes. */
static void show_string(const char *s, char *buf, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; s[i] != '\0'; ++i) {
        if (i >= SHOWN_MAX || o + 6 >= size) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        const unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            buf[o++] = '\\';
        buf[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    buf[o] = '\0';
}

/* A JSON value as a message shows it: "an object", "\"abc\"", "17", ... */
static void describe(const json_t *v, char *buf, size_t size)
{
    char shown[2 * SHOWN_MAX + 8];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        snprintf(buf, size, "an object");
        break;
    case JSON_ARRAY:
        snprintf(buf, size, "an array");
        break;
    case JSON_STRING:
        show_string(json_string_value(v), shown, sizeof shown);
        snprintf(buf, size, "\"%s\"", shown);
        break;
    case JSON_INTEGER:
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL: /* as written: 1.0 is not the integer 1 */
        pn_format_real(json_real_value(v), 1, buf, size);
        break;
    case JSON_TRUE:
        snprintf(buf, size, "true");
        break;
    case JSON_FALSE:
        snprintf(buf, size, "false");
        break;
    case JSON_NULL:
        snprintf(buf, size, "null");
        break;
    }
}

static pn_error fail_type(const map_reader *rd, const char *where, const char *what,
                          const json_t *v)
{
    char d[2 * SHOWN_MAX + 16];
    describe(v, d, sizeof d);
    return fail_at(rd, where, "expected %s, got %s", what, d);
}

static pn_error check_keys(const map_reader *rd, const char *where, const json_t *obj,
                           const char *const *allowed)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)(uintptr_t)obj, key, v)
    {
        int known = 0;
        for (const char *const *a = allowed; *a && !known; ++a)
            known = strcmp(*a, key) == 0;
        if (!known) {
            char shown[2 * SHOWN_MAX + 8];
            show_string(key, shown, sizeof shown);
            return fail_at(rd, where, "unknown field \"%s\"", shown);
        }
    }
    return PN_OK;
}

/* "cc 74 on channel 3", "pitch_bend on any channel". */
static void describe_source(const pnl_binding *x, char *buf, size_t size)
{
    char number[24] = "", channel[24] = "any channel";
    if (pnl_source_has_number(x->kind))
        snprintf(number, sizeof number, " %d", x->number);
    if (x->channel >= 0)
        snprintf(channel, sizeof channel, "channel %d", x->channel + 1);
    snprintf(buf, size, "%s%s on %s", pnl_source_name(x->kind), number, channel);
}

static pn_error read_source(const map_reader *rd, const char *where, const json_t *v,
                            pnl_source_kind *kind)
{
    static const char expected[] = "\"cc\", \"note\", \"pitch_bend\" or \"program\"";
    if (!v)
        return fail_at(rd, where, "missing (%s)", expected);
    if (json_is_string(v) && pnl_source_kind_of(json_string_value(v), kind))
        return PN_OK;
    return fail_type(rd, where, expected, v);
}

/* 1..16 in the file, 0..15 in the table; "any" is -1. */
static pn_error read_channel(const map_reader *rd, const char *where, const json_t *v, int *channel)
{
    static const char expected[] = "1..16 or \"any\"";
    if (!v)
        return fail_at(rd, where, "missing (%s)", expected);
    if (json_is_string(v) && strcmp(json_string_value(v), "any") == 0) {
        *channel = -1;
        return PN_OK;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 1 &&
        json_integer_value(v) <= MIDI_CHANNELS) {
        *channel = (int)json_integer_value(v) - 1;
        return PN_OK;
    }
    char d[2 * SHOWN_MAX + 16];
    describe(v, d, sizeof d);
    return fail_at(rd, where, "must be %s, got %s", expected, d);
}

static pn_error read_number(const map_reader *rd, const char *where, pnl_source_kind kind,
                            const json_t *v, int *number)
{
    *number = 0;
    if (!pnl_source_has_number(kind)) {
        if (v)
            return fail_at(rd, where, "not used by %s (remove it)", pnl_source_name(kind));
        return PN_OK;
    }
    const int max = pnl_source_number_max(kind);
    const char *why = kind == PNL_SOURCE_CC ? " (120..127 are channel mode messages)" : "";
    if (!v)
        return fail_at(rd, where, "missing (%s needs a number 0..%d)", pnl_source_name(kind), max);
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= max) {
        *number = (int)json_integer_value(v);
        return PN_OK;
    }
    char d[2 * SHOWN_MAX + 16];
    describe(v, d, sizeof d);
    return fail_at(rd, where, "must be 0..%d for %s%s, got %s", max, pnl_source_name(kind), why, d);
}

static pn_error read_target(const map_reader *rd, const char *where, const json_t *v, char *target)
{
    if (!v)
        return fail_at(rd, where, "missing (a control's port symbol or an action name)");
    if (!json_is_string(v))
        return fail_type(rd, where, "a string", v);
    const char *t = json_string_value(v);
    if (t[0] == '\0')
        return fail_at(rd, where, "empty");
    if (json_string_length(v) >= PNL_TARGET_MAX)
        return fail_at(rd, where, "longer than %d bytes", PNL_TARGET_MAX - 1);
    if (!pnl_target_valid(t)) {
        char shown[2 * SHOWN_MAX + 8];
        show_string(t, shown, sizeof shown);
        return fail_at(rd, where,
                       "\"%s\" is not a name (letters, digits and '_', not starting with a "
                       "digit)",
                       shown);
    }
    memcpy(target, t, strlen(t) + 1);
    return PN_OK;
}

/* Reads bindings[index] and adds it to the table (which has room). */
static pn_error read_binding(const map_reader *rd, size_t index, const json_t *obj,
                             pnl_bindings *table)
{
    char where[48], field[64];
    snprintf(where, sizeof where, "bindings[%zu]", index);
    if (!json_is_object(obj))
        return fail_type(rd, where, "an object {\"source\": ..., \"target\": ...}", obj);
    static const char *const keys[] = {"source", "channel", "number", "target", NULL};
    pn_error err = check_keys(rd, where, obj, keys);
    if (err != PN_OK)
        return err;
    pnl_binding x;
    memset(&x, 0, sizeof x);
    snprintf(field, sizeof field, "%s.source", where);
    if ((err = read_source(rd, field, json_object_get(obj, "source"), &x.kind)) != PN_OK)
        return err;
    snprintf(field, sizeof field, "%s.channel", where);
    if ((err = read_channel(rd, field, json_object_get(obj, "channel"), &x.channel)) != PN_OK)
        return err;
    snprintf(field, sizeof field, "%s.number", where);
    if ((err = read_number(rd, field, x.kind, json_object_get(obj, "number"), &x.number)) != PN_OK)
        return err;
    snprintf(field, sizeof field, "%s.target", where);
    if ((err = read_target(rd, field, json_object_get(obj, "target"), x.target)) != PN_OK)
        return err;
    const int same = pnl_bindings_find_exact(table, x.kind, x.channel, x.number);
    if (same >= 0) {
        char source[80];
        describe_source(&x, source, sizeof source);
        return fail_at(rd, where, "same source as bindings[%d] (%s)", same, source);
    }
    table->binding[table->count++] = x;
    return PN_OK;
}

static pn_error read_format(const map_reader *rd, const json_t *format)
{
    if (!format)
        return fail_at(rd, "format", "missing (expected \"%s\")", PNL_MAP_FORMAT);
    if (!json_is_string(format))
        return fail_type(rd, "format", "a string", format);
    if (strcmp(json_string_value(format), PNL_MAP_FORMAT) != 0) {
        char shown[2 * SHOWN_MAX + 8];
        show_string(json_string_value(format), shown, sizeof shown);
        return fail_at(rd, "format", "\"%s\" is not supported (expected \"%s\")", shown,
                       PNL_MAP_FORMAT);
    }
    return PN_OK;
}

static pn_error read_root(const map_reader *rd, const json_t *root, pnl_bindings *table)
{
    if (!json_is_object(root))
        return fail_type(rd, "top level", "an object {\"format\": ..., \"bindings\": [...]}", root);
    pn_error err = read_format(rd, json_object_get(root, "format"));
    if (err != PN_OK)
        return err;
    static const char *const keys[] = {"format", "bindings", NULL};
    if ((err = check_keys(rd, "top level", root, keys)) != PN_OK)
        return err;
    const json_t *list = json_object_get(root, "bindings");
    if (!list)
        return fail_at(rd, "bindings", "missing (an array, possibly empty)");
    if (!json_is_array(list))
        return fail_type(rd, "bindings", "an array", list);
    const size_t n = json_array_size(list);
    if (n > PNL_BINDINGS_MAX)
        return fail_at(rd, "bindings", "%zu entries, at most %d", n, PNL_BINDINGS_MAX);
    for (size_t i = 0; i < n; ++i)
        if ((err = read_binding(rd, i, json_array_get(list, i), table)) != PN_OK)
            return err;
    return PN_OK;
}

static pn_error decode_failure(const map_reader *rd, const json_error_t *je)
{
    if (json_error_code(je) == json_error_out_of_memory)
        return pn_fail(rd->info, PN_ERR_NOMEM, "%.200s: out of memory", rd->name);
    if (je->line > 0)
        return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: line %d column %d: %s", rd->name, je->line,
                       je->column, je->text);
    return pn_fail(rd->info, PN_ERR_PARSE, "%.200s: %s", rd->name, je->text);
}

pn_error pnl_bindings_load(pnl_bindings *b, const char *path, pn_error_info *info)
{
    if (!b || !path)
        return pn_fail(info, PN_ERR_INVALID, "pnl_bindings_load: NULL argument");
    char *text = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, MAP_FILE_MAX_BYTES, &text, &len, info);
    if (err != PN_OK)
        return err;
    err = pnl_bindings_parse(b, path, text, len, info);
    free(text);
    return err;
}

pn_error pnl_bindings_parse(pnl_bindings *b, const char *name, const char *text, size_t len,
                            pn_error_info *info)
{
    if (!b || !name || (!text && len))
        return pn_fail(info, PN_ERR_INVALID, "pnl_bindings_parse: NULL argument");
    if (len > MAP_FILE_MAX_BYTES)
        return pn_fail(info, PN_ERR_PARSE, "%.200s: larger than the limit of %d MiB", name,
                       (int)(MAP_FILE_MAX_BYTES >> 20));
    const map_reader rd = {name, info};
    const size_t bom = pn_file_bom_length(text, len);
    json_error_t je;
    json_t *root = json_loadb(text ? text + bom : "", len - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return decode_failure(&rd, &je);
    pnl_bindings *table = calloc(1, sizeof *table);
    pn_error err = table ? read_root(&rd, root, table)
                         : pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", name);
    json_decref(root);
    if (err == PN_OK) {
        b->count = table->count;
        memcpy(b->binding, table->binding, (size_t)table->count * sizeof table->binding[0]);
    }
    free(table);
    return err;
}
