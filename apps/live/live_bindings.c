/* MIDI-learn bindings and their map file, "parnassus-live-map/1"
 * (live_bindings.h, docs/live-map.md). */
#include "live_bindings.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "parnassus/file.h"

static const char FORMAT[] = "parnassus-live-map/1";

enum {
    MIDI_CHANNELS = 16,
    CC_BINDABLE_MAX = 119, /* 120..127 are channel mode messages */
    NOTE_MAX = 127,
    BEND_MAX = 16383,
    MAP_FILE_MAX_BYTES = 1024 * 1024,
    SHOWN_MAX = 40, /* bytes of a file's string quoted in a message */
};

/* ------------------------------------------------------------------------ */
/* Sources and targets */

static const struct {
    pnl_source_kind kind;
    const char *name;
} SOURCES[] = {
    {PNL_SOURCE_CC, "cc"},
    {PNL_SOURCE_NOTE, "note"},
    {PNL_SOURCE_PITCH_BEND, "pitch_bend"},
    {PNL_SOURCE_PROGRAM, "program"},
};

enum { NUM_SOURCES = (int)(sizeof SOURCES / sizeof SOURCES[0]) };

static const char *source_name(pnl_source_kind kind)
{
    for (int i = 0; i < NUM_SOURCES; ++i)
        if (SOURCES[i].kind == kind)
            return SOURCES[i].name;
    return "?";
}

/* Only CCs and notes tell their sources apart by a number. */
static int has_number(pnl_source_kind kind)
{
    return kind == PNL_SOURCE_CC || kind == PNL_SOURCE_NOTE;
}

static int number_max(pnl_source_kind kind)
{
    return kind == PNL_SOURCE_CC ? CC_BINDABLE_MAX : NOTE_MAX;
}

static int valid_source(pnl_source_kind kind, int channel, int number)
{
    if (channel < -1 || channel >= MIDI_CHANNELS)
        return 0;
    switch (kind) {
    case PNL_SOURCE_CC:
    case PNL_SOURCE_NOTE:
        return number >= 0 && number <= number_max(kind);
    case PNL_SOURCE_PITCH_BEND:
    case PNL_SOURCE_PROGRAM:
        return 1;
    }
    return 0;
}

/* ASCII only, whatever the locale. */
static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

/* A port symbol or action name: [A-Za-z_][A-Za-z0-9_]*, shorter than
 * PNL_TARGET_MAX. Reads at most PNL_TARGET_MAX bytes. */
static int valid_target(const char *t)
{
    if (!t || !is_name_start(t[0]))
        return 0;
    size_t n = 1;
    while (n < PNL_TARGET_MAX && t[n] != '\0') {
        if (!is_name_char(t[n]))
            return 0;
        ++n;
    }
    return n < PNL_TARGET_MAX;
}

/* ------------------------------------------------------------------------ */
/* The table */

void pnl_bindings_init(pnl_bindings *b)
{
    if (b)
        memset(b, 0, sizeof *b);
}

static int find_exact(const pnl_bindings *b, pnl_source_kind kind, int channel, int number)
{
    for (int i = 0; i < b->count; ++i) {
        const pnl_binding *x = &b->binding[i];
        if (x->kind == kind && x->channel == channel && x->number == number)
            return i;
    }
    return -1;
}

/* Adds or replaces a binding of valid arguments; returns its index, or -1
 * when the table is full. */
static int put_binding(pnl_bindings *b, pnl_source_kind kind, int channel, int number,
                       const char *target)
{
    if (!has_number(kind))
        number = 0;
    int i = find_exact(b, kind, channel, number);
    if (i < 0) {
        if (b->count >= PNL_BINDINGS_MAX)
            return -1;
        i = b->count++;
        b->binding[i].kind = kind;
        b->binding[i].channel = channel;
        b->binding[i].number = number;
    }
    /* target is valid: its terminator lies within PNL_TARGET_MAX bytes */
    memcpy(b->binding[i].target, target, strlen(target) + 1);
    return i;
}

int pnl_bindings_set(pnl_bindings *b, pnl_source_kind kind, int channel, int number,
                     const char *target)
{
    if (!b || !valid_source(kind, channel, number) || !valid_target(target))
        return -1;
    return put_binding(b, kind, channel, number, target) < 0 ? -1 : 0;
}

int pnl_bindings_remove_target(pnl_bindings *b, const char *target)
{
    if (!b || !target)
        return 0;
    int kept = 0;
    for (int i = 0; i < b->count; ++i) {
        if (strcmp(b->binding[i].target, target) == 0)
            continue;
        if (kept != i)
            b->binding[kept] = b->binding[i];
        ++kept;
    }
    const int removed = b->count - kept;
    b->count = kept;
    return removed;
}

int pnl_bindings_learn(pnl_bindings *b, const char *target)
{
    if (!b || !valid_target(target))
        return -1;
    memcpy(b->learn_target, target, strlen(target) + 1);
    b->learning = 1;
    return 0;
}

void pnl_bindings_cancel_learn(pnl_bindings *b)
{
    if (!b)
        return;
    b->learning = 0;
    b->learn_target[0] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Matching */

/* A bindable message: where it comes from and where it puts the control. */
typedef struct midi_source {
    pnl_source_kind kind;
    int channel;
    int number;
    double value;
    int is_program;
} midi_source;

/* The status byte and `needed` data bytes below 0x80. */
static int well_formed(const uint8_t *msg, int size, int needed)
{
    if (size < 1 + needed)
        return 0;
    for (int i = 1; i <= needed; ++i)
        if (msg[i] & 0x80)
            return 0;
    return 1;
}

/* Decodes a message into its source; 0 when it is not bindable. */
static int decode_source(const uint8_t *msg, int size, midi_source *s)
{
    if (!msg || size < 1 || !(msg[0] & 0x80))
        return 0;
    const int status = msg[0] & 0xF0;
    s->channel = msg[0] & 0x0F;
    s->number = 0;
    s->is_program = 0;
    switch (status) {
    case 0xB0:
        if (!well_formed(msg, size, 2) || msg[1] > CC_BINDABLE_MAX)
            return 0;
        s->kind = PNL_SOURCE_CC;
        s->number = msg[1];
        s->value = msg[2] / 127.0;
        return 1;
    case 0x90:
        if (!well_formed(msg, size, 2) || msg[2] == 0) /* velocity 0: a note-off */
            return 0;
        s->kind = PNL_SOURCE_NOTE;
        s->number = msg[1];
        s->value = msg[2] / 127.0;
        return 1;
    case 0xE0:
        if (!well_formed(msg, size, 2))
            return 0;
        s->kind = PNL_SOURCE_PITCH_BEND;
        s->value = (msg[2] << 7 | msg[1]) / (double)BEND_MAX;
        return 1;
    case 0xC0:
        if (!well_formed(msg, size, 1))
            return 0;
        s->kind = PNL_SOURCE_PROGRAM;
        s->value = msg[1];
        s->is_program = 1;
        return 1;
    default:
        return 0;
    }
}

/* The binding on the message's own channel, else an "any channel" one. */
static int find_match(const pnl_bindings *b, const midi_source *s)
{
    int any = -1;
    for (int i = 0; i < b->count; ++i) {
        const pnl_binding *x = &b->binding[i];
        if (x->kind != s->kind || x->number != s->number)
            continue;
        if (x->channel == s->channel)
            return i;
        if (x->channel == -1 && any < 0)
            any = i;
    }
    return any;
}

static int learn_from(pnl_bindings *b, const midi_source *s, pnl_binding_hit *hit, int *learned)
{
    const int i = put_binding(b, s->kind, s->channel, s->number, b->learn_target);
    pnl_bindings_cancel_learn(b);
    if (i < 0)
        return 0; /* a new source and the table is full */
    if (hit) {
        hit->target = NULL;
        hit->value = 0.0;
        hit->is_program = 0;
    }
    if (learned)
        *learned = i;
    return 1;
}

int pnl_bindings_handle(pnl_bindings *b, const uint8_t *msg, int size, pnl_binding_hit *hit,
                        int *learned)
{
    if (learned)
        *learned = -1;
    midi_source s;
    if (!b || !decode_source(msg, size, &s))
        return 0;
    if (b->learning)
        return learn_from(b, &s, hit, learned);
    const int i = find_match(b, &s);
    if (i < 0)
        return 0;
    if (hit) {
        hit->target = b->binding[i].target;
        hit->value = s.value;
        hit->is_program = s.is_program;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Reading a map file */

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
    if (has_number(x->kind))
        snprintf(number, sizeof number, " %d", x->number);
    if (x->channel >= 0)
        snprintf(channel, sizeof channel, "channel %d", x->channel + 1);
    snprintf(buf, size, "%s%s on %s", source_name(x->kind), number, channel);
}

static pn_error read_source(const map_reader *rd, const char *where, const json_t *v,
                            pnl_source_kind *kind)
{
    static const char expected[] = "\"cc\", \"note\", \"pitch_bend\" or \"program\"";
    if (!v)
        return fail_at(rd, where, "missing (%s)", expected);
    for (int i = 0; i < NUM_SOURCES && json_is_string(v); ++i) {
        if (strcmp(json_string_value(v), SOURCES[i].name) == 0) {
            *kind = SOURCES[i].kind;
            return PN_OK;
        }
    }
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
    if (!has_number(kind)) {
        if (v)
            return fail_at(rd, where, "not used by %s (remove it)", source_name(kind));
        return PN_OK;
    }
    const int max = number_max(kind);
    const char *why = kind == PNL_SOURCE_CC ? " (120..127 are channel mode messages)" : "";
    if (!v)
        return fail_at(rd, where, "missing (%s needs a number 0..%d)", source_name(kind), max);
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= max) {
        *number = (int)json_integer_value(v);
        return PN_OK;
    }
    char d[2 * SHOWN_MAX + 16];
    describe(v, d, sizeof d);
    return fail_at(rd, where, "must be 0..%d for %s%s, got %s", max, source_name(kind), why, d);
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
    if (!valid_target(t)) {
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
    const int same = find_exact(table, x.kind, x.channel, x.number);
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
        return fail_at(rd, "format", "missing (expected \"%s\")", FORMAT);
    if (!json_is_string(format))
        return fail_type(rd, "format", "a string", format);
    if (strcmp(json_string_value(format), FORMAT) != 0) {
        char shown[2 * SHOWN_MAX + 8];
        show_string(json_string_value(format), shown, sizeof shown);
        return fail_at(rd, "format", "\"%s\" is not supported (expected \"%s\")", shown, FORMAT);
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

/* ------------------------------------------------------------------------ */
/* Writing a map file */

/* What save writes must load again: the bindings set accepts, one per
 * source. */
static pn_error check_table(const pnl_bindings *b, const char *path, pn_error_info *info)
{
    if (b->count < 0 || b->count > PNL_BINDINGS_MAX)
        return pn_fail(info, PN_ERR_INVALID, "%.200s: the table holds %d bindings (0..%d)", path,
                       b->count, PNL_BINDINGS_MAX);
    for (int i = 0; i < b->count; ++i) {
        const pnl_binding *x = &b->binding[i];
        if (!valid_source(x->kind, x->channel, x->number) || !valid_target(x->target) ||
            (!has_number(x->kind) && x->number != 0))
            return pn_fail(info, PN_ERR_INVALID, "%.200s: binding %d is not valid", path, i);
        if (find_exact(b, x->kind, x->channel, x->number) != i)
            return pn_fail(info, PN_ERR_INVALID, "%.200s: bindings %d and %d have one source", path,
                           find_exact(b, x->kind, x->channel, x->number), i);
    }
    return PN_OK;
}

static json_t *binding_to_json(const pnl_binding *x)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int failed = json_object_set_new(o, "source", json_string(source_name(x->kind)));
    failed |= json_object_set_new(
        o, "channel", x->channel < 0 ? json_string("any") : json_integer(x->channel + 1));
    if (has_number(x->kind))
        failed |= json_object_set_new(o, "number", json_integer(x->number));
    failed |= json_object_set_new(o, "target", json_string(x->target));
    if (failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The file's text, NUL-terminated and malloc'ed; NULL when out of memory. */
static char *map_text(const pnl_bindings *b)
{
    json_t *root = json_object(), *list = json_array();
    int failed = !root || !list;
    for (int i = 0; i < b->count && !failed; ++i)
        failed = json_array_append_new(list, binding_to_json(&b->binding[i])) != 0;
    char *text = NULL;
    if (!failed && json_object_set_new(root, "format", json_string(FORMAT)) == 0 &&
        json_object_set(root, "bindings", list) == 0)
        text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(list);
    json_decref(root);
    return text;
}

/* mkdir -p of the directory that holds path. */
static pn_error make_parent_directories(const char *path, pn_error_info *info)
{
    char *dir = strdup(path);
    if (!dir)
        return pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", path);
    char *slash = strrchr(dir, '/');
    pn_error err = PN_OK;
    if (slash && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1; err == PN_OK; ++p) {
            if (*p != '/' && *p != '\0')
                continue;
            const char end = *p;
            *p = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST)
                err = pn_fail(info, PN_ERR_IO, "%.200s: cannot create directory %.200s: %s", path,
                              dir, strerror(errno));
            *p = end;
            if (end == '\0')
                break;
        }
    }
    free(dir);
    return err;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        const ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Writes text and a newline to a new temporary file next to path, which
 * on success is named in *tmp_out (malloc'ed). */
static pn_error write_temporary(const char *path, const char *text, char **tmp_out,
                                pn_error_info *info)
{
    static const char suffix[] = ".XXXXXX";
    const size_t len = strlen(path);
    char *tmp = malloc(len + sizeof suffix);
    if (!tmp)
        return pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", path);
    memcpy(tmp, path, len);
    memcpy(tmp + len, suffix, sizeof suffix);
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        const pn_error err = pn_fail(info, PN_ERR_IO, "%.200s: cannot create a temporary file: %s",
                                     path, strerror(errno));
        free(tmp);
        return err;
    }
    struct stat old;
    if (stat(path, &old) == 0)
        (void)fchmod(fd, old.st_mode & 07777); /* a replaced file keeps its mode */
    int failed =
        write_all(fd, text, strlen(text)) != 0 || write_all(fd, "\n", 1) != 0 || fsync(fd) != 0;
    int reason = failed ? errno : 0;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        reason = errno;
    }
    if (failed) {
        const pn_error err = pn_fail(info, PN_ERR_IO, "%.200s: cannot write: %s", path,
                                     strerror(reason ? reason : EIO));
        unlink(tmp);
        free(tmp);
        return err;
    }
    *tmp_out = tmp;
    return PN_OK;
}

pn_error pnl_bindings_save(const pnl_bindings *b, const char *path, pn_error_info *info)
{
    if (!b || !path || !path[0])
        return pn_fail(info, PN_ERR_INVALID, "pnl_bindings_save: NULL argument or empty path");
    pn_error err = check_table(b, path, info);
    if (err != PN_OK)
        return err;
    char *text = map_text(b);
    if (!text)
        return pn_fail(info, PN_ERR_NOMEM, "%.200s: out of memory", path);
    char *tmp = NULL;
    err = make_parent_directories(path, info);
    if (err == PN_OK)
        err = write_temporary(path, text, &tmp, info);
    free(text);
    if (err != PN_OK)
        return err;
    if (rename(tmp, path) != 0) {
        err = pn_fail(info, PN_ERR_IO, "%.200s: cannot replace: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return err;
}

/* ------------------------------------------------------------------------ */
/* The default path */

/* The path under base, measured first so a short buffer stays untouched. */
static int path_under(char *out, size_t cap, const char *base, const char *rest)
{
    const int n = snprintf(NULL, 0, "%s/%s", base, rest);
    if (!out || n <= 0 || (size_t)n >= cap)
        return 0;
    return snprintf(out, cap, "%s/%s", base, rest);
}

int pnl_bindings_default_path(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (xdg && xdg[0] == '/') /* the XDG spec ignores relative ones */
        return path_under(out, cap, xdg, "parnassus/live-map.json");
    if (home && home[0])
        return path_under(out, cap, home, ".config/parnassus/live-map.json");
    return 0;
}
