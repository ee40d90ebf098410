/* Note tracking (notes.h). */
#include "notes.h"

void pnp_notes_init(pnp_notes *n)
{
    n->count = 0;
}

void pnp_notes_clear(pnp_notes *n)
{
    n->count = 0;
}

int pnp_notes_find(const pnp_notes *n, int channel, int pitch)
{
    for (int i = 0; i < n->count; ++i)
        if (n->note[i].channel == channel && n->note[i].pitch == pitch)
            return i;
    return -1;
}

static int send_off(pnp_midi_sink sink, void *ctx, int64_t frame, const pnp_note *note)
{
    const uint8_t msg[3] = {(uint8_t)(0x80 | note->channel), note->pitch, 64};
    return sink(ctx, frame, msg, 3);
}

static void drop(pnp_notes *n, int i)
{
    n->note[i] = n->note[--n->count];
}

int pnp_notes_on(pnp_notes *n, pnp_midi_sink sink, void *ctx, int64_t frame, int channel, int pitch,
                 int velocity, int64_t off_frame)
{
    if (channel < 0 || channel > 15 || pitch < 0 || pitch > 127)
        return 0;
    if (velocity < 1)
        velocity = 1;
    if (velocity > 127)
        velocity = 127;
    const int i = pnp_notes_find(n, channel, pitch);
    if (i >= 0) {
        if (!send_off(sink, ctx, frame, &n->note[i]))
            return 0;
        drop(n, i);
    }
    if (n->count == PNP_MAX_NOTES)
        return 0;
    const uint8_t msg[3] = {(uint8_t)(0x90 | channel), (uint8_t)pitch, (uint8_t)velocity};
    if (!sink(ctx, frame, msg, 3))
        return 0;
    n->note[n->count++] = (pnp_note){(uint8_t)channel, (uint8_t)pitch, off_frame};
    return 1;
}

void pnp_notes_extend(pnp_notes *n, int index, int64_t off_frame)
{
    if (index >= 0 && index < n->count)
        n->note[index].off_frame = off_frame;
}

void pnp_notes_due(pnp_notes *n, pnp_midi_sink sink, void *ctx, int64_t frame, int64_t not_before)
{
    /* earliest first, so the output stays in time order */
    for (;;) {
        int best = -1;
        for (int i = 0; i < n->count; ++i)
            if (n->note[i].off_frame <= frame &&
                (best < 0 || n->note[i].off_frame < n->note[best].off_frame))
                best = i;
        if (best < 0)
            return;
        const int64_t at =
            n->note[best].off_frame < not_before ? not_before : n->note[best].off_frame;
        if (!send_off(sink, ctx, at, &n->note[best]))
            return; /* no room: stays tracked, goes out next block */
        not_before = at;
        drop(n, best);
    }
}

int64_t pnp_notes_next_off(const pnp_notes *n)
{
    int64_t next = INT64_MAX;
    for (int i = 0; i < n->count; ++i)
        if (n->note[i].off_frame < next)
            next = n->note[i].off_frame;
    return next;
}

void pnp_notes_panic(pnp_notes *n, pnp_midi_sink sink, void *ctx, int64_t frame)
{
    while (n->count > 0) {
        if (!send_off(sink, ctx, frame, &n->note[n->count - 1]))
            return;
        --n->count;
    }
}
