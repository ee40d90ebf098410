/* MIDI-learn bindings (live_bindings.h): the sources and targets, the
 * table, and matching incoming MIDI against it. The map file,
 * "parnassus-live-map/1" (docs/live-map.md), is read in
 * live_bindings_read.c and written in live_bindings_write.c. */
#include "live_bindings_internal.h"

#include <string.h>

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

const char *pnl_source_name(pnl_source_kind kind)
{
    for (int i = 0; i < NUM_SOURCES; ++i)
        if (SOURCES[i].kind == kind)
            return SOURCES[i].name;
    return "?";
}

int pnl_source_kind_of(const char *name, pnl_source_kind *kind)
{
    for (int i = 0; i < NUM_SOURCES; ++i) {
        if (strcmp(name, SOURCES[i].name) == 0) {
            *kind = SOURCES[i].kind;
            return 1;
        }
    }
    return 0;
}

int pnl_source_has_number(pnl_source_kind kind)
{
    return kind == PNL_SOURCE_CC || kind == PNL_SOURCE_NOTE;
}

int pnl_source_number_max(pnl_source_kind kind)
{
    return kind == PNL_SOURCE_CC ? CC_BINDABLE_MAX : NOTE_MAX;
}

int pnl_source_valid(pnl_source_kind kind, int channel, int number)
{
    if (channel < -1 || channel >= MIDI_CHANNELS)
        return 0;
    switch (kind) {
    case PNL_SOURCE_CC:
    case PNL_SOURCE_NOTE:
        return number >= 0 && number <= pnl_source_number_max(kind);
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

int pnl_target_valid(const char *t)
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

int pnl_bindings_find_exact(const pnl_bindings *b, pnl_source_kind kind, int channel, int number)
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
    if (!pnl_source_has_number(kind))
        number = 0;
    int i = pnl_bindings_find_exact(b, kind, channel, number);
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
    if (!b || !pnl_source_valid(kind, channel, number) || !pnl_target_valid(target))
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
    if (!b || !pnl_target_valid(target))
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
