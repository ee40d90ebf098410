/* The structural check of a Standard MIDI File before libsmf sees it
 * (midi_check.h, docs/midi.md "Checking before libsmf"): the header, the
 * chunk framing and every event of every track. */
#include "midi_check.h"

#include "parnassus/file.h"

#include <string.h>

/* Longest track: every delta time fits the 4-byte variable-length
 * quantity of the file format. */
enum { MAX_TICKS = 0x0FFFFFFF };

static unsigned be16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* Reads a variable-length quantity of at most 4 bytes from d[*pos..end). */
static int read_vlq(const unsigned char *d, size_t end, size_t *pos, unsigned long *value)
{
    unsigned long v = 0;
    for (int i = 0; i < 4; ++i) {
        if (*pos >= end)
            return 0;
        unsigned char b = d[(*pos)++];
        v = v << 7 | (b & 0x7Fu);
        if (!(b & 0x80)) {
            *value = v;
            return 1;
        }
    }
    return 0;
}

/* Walks the events of the track chunk d[start..end) the way the file format
 * defines them. libsmf 1.3 aborts (assert) on several malformed event
 * streams, so it only ever sees tracks that pass this check: every event
 * inside the chunk, data bytes below 0x80, running status only after a
 * channel message, no System Common/Real-Time bytes or 0xF7 escapes, tempo,
 * time signature and end-of-track metas of their fixed lengths, an
 * end-of-track event, and a track no longer than 0x0FFFFFFF ticks. */
static pn_error check_track(const char *name, unsigned track, const unsigned char *d, size_t start,
                            size_t end, pn_error_info *info)
{
    size_t pos = start;
    unsigned running = 0;
    unsigned long ticks = 0;
    while (pos < end) {
        size_t at = pos;
        unsigned long delta;
        if (!read_vlq(d, end, &pos, &delta))
            goto bad;
        ticks += delta;
        if (ticks > MAX_TICKS)
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: track %u is longer than 0x0FFFFFFF ticks (not supported)", name,
                           track);
        if (pos >= end)
            goto bad;
        unsigned status = d[pos];
        if (status & 0x80)
            pos++;
        else if (running)
            status = running;
        else
            goto bad;
        if (status < 0xF0) {
            unsigned data = (status & 0xE0) == 0xC0 ? 1 : 2; /* program, pressure: 1 */
            for (unsigned i = 0; i < data; ++i, ++pos)
                if (pos >= end || (d[pos] & 0x80))
                    goto bad;
            running = status;
        } else if (status == 0xF0) {
            unsigned long len;
            if (!read_vlq(d, end, &pos, &len) || len >= end - pos)
                goto bad;
            pos += len;
            running = 0;
        } else if (status == 0xFF) {
            unsigned long len;
            if (pos >= end)
                goto bad;
            unsigned type = d[pos++];
            if (!read_vlq(d, end, &pos, &len) || len > end - pos)
                goto bad;
            if ((type == 0x2F && len != 0) || (type == 0x51 && len != 3) ||
                (type == 0x58 && len != 4))
                goto bad;
            pos += len;
            running = 0;
            if (type == 0x2F)
                return PN_OK;
        } else {
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: track %u: status byte 0x%02X at byte %zu is not supported", name,
                           track, status, at);
        }
        continue;
    bad:
        return pn_fail(info, PN_ERR_PARSE, "%s: track %u: malformed event at byte %zu", name, track,
                       at);
    }
    return pn_fail(info, PN_ERR_PARSE, "%s: track %u has no end-of-track event", name, track);
}

/* Checks the header chunk, the chunk framing and every track ourselves (see
 * check_track); shared with the onsets reader through midi_check.h. */
pn_error pn_midi_check_file(const char *name, const unsigned char *d, size_t size,
                            pn_error_info *info)
{
    if (size < 14 || memcmp(d, "MThd", 4) != 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: not a Standard MIDI File (no MThd header)", name);
    unsigned long hlen = be32(d + 4);
    /* libsmf 1.3 accepts exactly 6 (and leaks when it refuses the header). */
    if (hlen != 6)
        return pn_fail(info, PN_ERR_PARSE, "%s: header chunk length %lu is not supported (only 6)",
                       name, hlen);
    unsigned format = be16(d + 8), ntracks = be16(d + 10), division = be16(d + 12);
    if (format > 1)
        return pn_fail(info, PN_ERR_PARSE, "%s: SMF format %u is not supported (only 0 and 1)",
                       name, format);
    if (ntracks == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: the file declares no tracks", name);
    if (format == 0 && ntracks != 1)
        return pn_fail(info, PN_ERR_PARSE, "%s: SMF format 0 with %u tracks (must be 1)", name,
                       ntracks);
    if (division & 0x8000)
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: SMPTE time division is not supported (only ticks per quarter)", name);
    if (division == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: division of 0 ticks per quarter", name);
    size_t off = 8 + hlen;
    unsigned found = 0;
    while (off < size && found < ntracks) {
        if (size - off < 8)
            return pn_fail(info, PN_ERR_PARSE, "%s: truncated chunk header at byte %zu", name, off);
        unsigned long len = be32(d + off + 4);
        if (len > size - off - 8)
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: truncated file: chunk at byte %zu needs %lu bytes, %zu left", name,
                           off, len, size - off - 8);
        /* libsmf counts every chunk after the header as a track. */
        if (memcmp(d + off, "MTrk", 4) != 0)
            return pn_fail(info, PN_ERR_PARSE, "%s: unexpected chunk at byte %zu (not MTrk)", name,
                           off);
        pn_error err = check_track(name, found + 1, d, off + 8, off + 8 + len, info);
        if (err != PN_OK)
            return err;
        found++;
        off += 8 + len;
    }
    if (found < ntracks)
        return pn_fail(info, PN_ERR_PARSE, "%s: truncated file: %u of %u tracks present", name,
                       found, ntracks);
    return PN_OK;
}

pn_error pn_midi_load_smf(const char *name, const void *data, size_t size, smf_t **smf,
                          pn_error_info *info)
{
    *smf = NULL;
    if (size > PN_FILE_MAX_BYTES)
        return pn_fail(info, PN_ERR_PARSE, "%s: larger than the limit of %zu MiB", name,
                       PN_FILE_MAX_BYTES >> 20);
    pn_error err = pn_midi_check_file(name, data, size, info);
    if (err != PN_OK)
        return err;
    /* libsmf reports what it rejects through GLib's log (stderr). */
    *smf = smf_load_from_memory(data, (int)size);
    if (!*smf)
        return pn_fail(info, PN_ERR_PARSE, "%s: malformed MIDI file (libsmf could not parse it)",
                       name);
    return PN_OK;
}

int pn_midi_note_kind(const smf_event_t *ev, int *channel, int *key)
{
    if (!ev || !ev->midi_buffer || ev->midi_buffer_length < 3)
        return -1;
    const int status = ev->midi_buffer[0] & 0xF0;
    if (status != 0x80 && status != 0x90)
        return -1;
    *channel = ev->midi_buffer[0] & 0x0F;
    *key = ev->midi_buffer[1] & 0x7F;
    return status == 0x90 && ev->midi_buffer[2] != 0;
}
