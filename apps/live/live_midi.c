#include "live_midi.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <smf.h>

#include "parnassus/file.h"

enum { MAX_MIDI_FILE_BYTES = 16 << 20, MAX_FILE_MESSAGES = 1 << 20 };

/* ---- finding ports ---- */

static int contains_nocase(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return 1;
    }
    return 0;
}

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; ++s)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

int pnl_midi_find(pnl_midi_backend *b, int output, const char *spec, pn_error_info *info)
{
    const char *dir = output ? "output" : "input";
    const int n = b->ops->count(b, output);
    if (!spec || !*spec) {
        pn_fail(info, PN_ERR_INVALID, "no MIDI %s named", dir);
        return -1;
    }
    if (all_digits(spec)) {
        const long i = strtol(spec, NULL, 10);
        if (i < n)
            return (int)i;
    } else {
        for (int i = 0; i < n; ++i)
            if (contains_nocase(b->ops->port_name(b, output, i), spec))
                return i;
    }
    char have[PN_MESSAGE_SIZE / 2] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof have; ++i)
        used += (size_t)snprintf(have + used, sizeof have - used, "%s%d: %s", i ? ", " : "", i,
                                 b->ops->port_name(b, output, i));
    pn_fail(info, PN_ERR_INVALID, "no MIDI %s matches '%s' (%s sees %s%s)", dir, spec, b->ops->name,
            n ? "" : "no MIDI devices at all", have);
    return -1;
}

void pnl_midi_list(pnl_midi_backend *b, void *file)
{
    FILE *f = file;
    for (int output = 0; output <= 1; ++output) {
        const int n = b->ops->count(b, output);
        fprintf(f, "MIDI %s (%s):%s\n", output ? "outputs" : "inputs", b->ops->name,
                n ? "" : " none");
        for (int i = 0; i < n; ++i)
            fprintf(f, "  %d: %s\n", i, b->ops->port_name(b, output, i));
    }
}

/* ---- in memory ---- */

typedef struct memory_backend {
    pnl_midi_backend base;
    char input_name[128], output_name[128];
    pnl_midi_msg *input;
    size_t input_count, next;
    int input_open, output_open;
    pnl_midi_msg *sent;
    double *sent_at;
    size_t sent_count, sent_capacity;
    double last_poll; /* the stream time of the last poll: when sends are handed over */
} memory_backend;

static int memory_count(pnl_midi_backend *b, int output)
{
    (void)b;
    (void)output;
    return 1;
}

static const char *memory_port_name(pnl_midi_backend *b, int output, int index)
{
    memory_backend *m = (memory_backend *)b;
    (void)index;
    return output ? m->output_name : m->input_name;
}

static pn_error memory_open(pnl_midi_backend *b, int output, int index, pn_error_info *info)
{
    memory_backend *m = (memory_backend *)b;
    if (index != 0)
        return pn_fail(info, PN_ERR_INVALID, "memory MIDI: no port %d", index);
    if (output)
        m->output_open = 1;
    else
        m->input_open = 1;
    return PN_OK;
}

static size_t memory_poll(pnl_midi_backend *b, double now, pnl_midi_msg *out, size_t max)
{
    memory_backend *m = (memory_backend *)b;
    m->last_poll = now;
    size_t n = 0;
    while (m->input_open && n < max && m->next < m->input_count && m->input[m->next].time <= now)
        out[n++] = m->input[m->next++];
    return n;
}

static void memory_send(pnl_midi_backend *b, const pnl_midi_msg *msg)
{
    memory_backend *m = (memory_backend *)b;
    if (!m->output_open)
        return;
    if (m->sent_count == m->sent_capacity) {
        const size_t cap = m->sent_capacity ? 2 * m->sent_capacity : 1024;
        pnl_midi_msg *s = realloc(m->sent, cap * sizeof *s);
        double *at = realloc(m->sent_at, cap * sizeof *at);
        if (s)
            m->sent = s;
        if (at)
            m->sent_at = at;
        if (!s || !at)
            return;
        m->sent_capacity = cap;
    }
    m->sent[m->sent_count] = *msg;
    m->sent_at[m->sent_count++] = m->last_poll;
}

static void memory_destroy(pnl_midi_backend *b)
{
    memory_backend *m = (memory_backend *)b;
    free(m->input);
    free(m->sent);
    free(m->sent_at);
    free(m);
}

static const pnl_midi_ops memory_ops = {
    "memory MIDI", memory_count, memory_port_name, memory_open,
    memory_poll,   memory_send,  memory_destroy,
};

pn_error pnl_midi_memory_create(const char *input_name, const pnl_midi_msg *msgs, size_t count,
                                const char *output_name, pnl_midi_backend **out,
                                pn_error_info *info)
{
    *out = NULL;
    memory_backend *m = calloc(1, sizeof *m);
    if (!m || (count && !(m->input = malloc(count * sizeof *m->input)))) {
        free(m);
        return pn_fail(info, PN_ERR_NOMEM, "memory MIDI: out of memory");
    }
    m->base.ops = &memory_ops;
    snprintf(m->input_name, sizeof m->input_name, "%s", input_name ? input_name : "memory in");
    snprintf(m->output_name, sizeof m->output_name, "%s", output_name ? output_name : "memory out");
    if (count)
        memcpy(m->input, msgs, count * sizeof *msgs);
    m->input_count = count;
    *out = &m->base;
    return PN_OK;
}

size_t pnl_midi_memory_sent(pnl_midi_backend *b, const pnl_midi_msg **msgs, const double **sent_at)
{
    memory_backend *m = (memory_backend *)b;
    if (msgs)
        *msgs = m->sent;
    if (sent_at)
        *sent_at = m->sent_at;
    return m->sent_count;
}

/* ---- reading a file as a keyboard ---- */

static int channel_message_size(uint8_t status)
{
    switch (status & 0xF0) {
    case 0xC0:
    case 0xD0:
        return 2;
    case 0x80:
    case 0x90:
    case 0xA0:
    case 0xB0:
    case 0xE0:
        return 3;
    default:
        return 0;
    }
}

pn_error pnl_midi_read_file(const char *path, pnl_midi_msg **msgs, size_t *count,
                            pn_error_info *info)
{
    *msgs = NULL;
    *count = 0;
    char *data = NULL;
    size_t len = 0;
    pn_error rc = pn_file_read(path, MAX_MIDI_FILE_BYTES, &data, &len, info);
    if (rc != PN_OK)
        return rc;
    smf_t *smf = len > 0 ? smf_load_from_memory(data, (int)len) : NULL;
    free(data);
    if (!smf)
        return pn_fail(info, PN_ERR_PARSE, "%s: not a Standard MIDI File libsmf can read", path);
    size_t cap = 256, n = 0;
    pnl_midi_msg *out = malloc(cap * sizeof *out);
    smf_event_t *ev;
    while (out && (ev = smf_get_next_event(smf)) != NULL) {
        if (smf_event_is_metadata(ev) || ev->midi_buffer_length < 1)
            continue;
        const int size = channel_message_size(ev->midi_buffer[0]);
        if (size == 0 || ev->midi_buffer_length < size)
            continue;
        if (n == MAX_FILE_MESSAGES) {
            free(out);
            smf_delete(smf);
            return pn_fail(info, PN_ERR_PARSE, "%s: more than %d messages", path,
                           MAX_FILE_MESSAGES);
        }
        if (n == cap) {
            pnl_midi_msg *grown = realloc(out, 2 * cap * sizeof *out);
            if (!grown) {
                free(out);
                out = NULL;
                break;
            }
            out = grown;
            cap *= 2;
        }
        out[n].time = ev->time_seconds;
        out[n].size = (uint8_t)size;
        memcpy(out[n].bytes, ev->midi_buffer, (size_t)size);
        ++n;
    }
    smf_delete(smf);
    if (!out)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
    *msgs = out;
    *count = n;
    return PN_OK;
}
