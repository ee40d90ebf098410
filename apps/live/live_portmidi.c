/* The PortMidi backend of live_midi.h. On Linux PortMidi's only backend is
 * the ALSA sequencer: where there is none (no sound hardware), it starts
 * and finds no device, which the app reports and plays on without MIDI. */
#include "live_midi.h"

#include <portmidi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live_quiet.h"

enum { PM_BUFFER_EVENTS = 1024 };

typedef struct pm_port {
    PmDeviceID id;
    const char *name; /* PortMidi's */
} pm_port;

typedef struct portmidi_backend {
    pnl_midi_backend base;
    pnl_clock_fn clock;
    void *clock_user;
    double latency;
    pm_port ports[2][PNL_MIDI_MAX_PORTS * 4];
    int num_ports[2];
    PortMidiStream *open[2][PNL_MIDI_MAX_PORTS];
    int num_open[2];
} portmidi_backend;

/* PortMidi asks the time in milliseconds: the stream clock's */
static PmTimestamp stream_ms(void *user)
{
    portmidi_backend *p = user;
    return (PmTimestamp)(1000.0 * p->clock(p->clock_user));
}

static int pm_count(pnl_midi_backend *b, int output)
{
    return ((portmidi_backend *)b)->num_ports[output != 0];
}

static const char *pm_port_name(pnl_midi_backend *b, int output, int index)
{
    portmidi_backend *p = (portmidi_backend *)b;
    return index >= 0 && index < p->num_ports[output != 0] ? p->ports[output != 0][index].name : "";
}

static pn_error pm_open(pnl_midi_backend *b, int output, int index, pn_error_info *info)
{
    portmidi_backend *p = (portmidi_backend *)b;
    const int dir = output != 0;
    if (index < 0 || index >= p->num_ports[dir])
        return pn_fail(info, PN_ERR_INVALID, "PortMidi: no %s %d", dir ? "output" : "input", index);
    if (p->num_open[dir] == PNL_MIDI_MAX_PORTS)
        return pn_fail(info, PN_ERR_INVALID, "PortMidi: at most %d %ss at once", PNL_MIDI_MAX_PORTS,
                       dir ? "output" : "input");
    PortMidiStream *s = NULL;
    const PmDeviceID id = p->ports[dir][index].id;
    /* latency > 0 makes PortMidi honour the timestamps of output */
    const int32_t latency_ms =
        (int32_t)(1000.0 * p->latency) > 0 ? (int32_t)(1000.0 * p->latency) : 1;
    const PmError err =
        dir ? Pm_OpenOutput(&s, id, NULL, PM_BUFFER_EVENTS, stream_ms, p, latency_ms)
            : Pm_OpenInput(&s, id, NULL, PM_BUFFER_EVENTS, stream_ms, p);
    if (err != pmNoError)
        return pn_fail(info, PN_ERR_IO, "PortMidi: cannot open %s '%s': %s",
                       dir ? "output" : "input", p->ports[dir][index].name, Pm_GetErrorText(err));
    p->open[dir][p->num_open[dir]++] = s;
    return PN_OK;
}

static size_t pm_poll(pnl_midi_backend *b, double now, pnl_midi_msg *out, size_t max)
{
    portmidi_backend *p = (portmidi_backend *)b;
    size_t n = 0;
    PmEvent ev[64];
    for (int i = 0; i < p->num_open[0] && n < max; ++i) {
        const int want = (int)(max - n < 64 ? max - n : 64);
        const int got = Pm_Read(p->open[0][i], ev, want);
        for (int j = 0; j < got; ++j) {
            const uint8_t status = (uint8_t)Pm_MessageStatus(ev[j].message);
            if (status < 0x80 || status == 0xF0 || status == 0xF7)
                continue; /* running data of a SysEx: not ours */
            pnl_midi_msg *m = &out[n++];
            m->time = now < ev[j].timestamp / 1000.0 ? now : ev[j].timestamp / 1000.0;
            m->bytes[0] = status;
            m->bytes[1] = (uint8_t)Pm_MessageData1(ev[j].message);
            m->bytes[2] = (uint8_t)Pm_MessageData2(ev[j].message);
            const int hi = status & 0xF0;
            m->size = hi == 0xC0 || hi == 0xD0 || status == 0xF3 ? 2
                      : status >= 0xF8 || status == 0xF6         ? 1
                                                                 : 3;
        }
    }
    return n;
}

static void pm_send(pnl_midi_backend *b, const pnl_midi_msg *msg)
{
    portmidi_backend *p = (portmidi_backend *)b;
    const PmMessage word = Pm_Message(msg->bytes[0], msg->size > 1 ? msg->bytes[1] : 0,
                                      msg->size > 2 ? msg->bytes[2] : 0);
    for (int i = 0; i < p->num_open[1]; ++i)
        Pm_WriteShort(p->open[1][i], (PmTimestamp)(1000.0 * msg->time), word);
}

static void pm_destroy(pnl_midi_backend *b)
{
    portmidi_backend *p = (portmidi_backend *)b;
    for (int dir = 0; dir < 2; ++dir)
        for (int i = 0; i < p->num_open[dir]; ++i)
            Pm_Close(p->open[dir][i]);
    Pm_Terminate();
    free(p);
}

static const pnl_midi_ops portmidi_ops = {
    "PortMidi", pm_count, pm_port_name, pm_open, pm_poll, pm_send, pm_destroy,
};

pn_error pnl_midi_portmidi_create(pnl_clock_fn clock, void *clock_user, double latency,
                                  pnl_midi_backend **out, pn_error_info *info)
{
    *out = NULL;
    const int saved = pnl_stderr_mute();
    const PmError err = Pm_Initialize();
    pnl_stderr_restore(saved);
    if (err != pmNoError)
        return pn_fail(info, PN_ERR_IO, "PortMidi could not start: %s", Pm_GetErrorText(err));
    portmidi_backend *p = calloc(1, sizeof *p);
    if (!p) {
        Pm_Terminate();
        return pn_fail(info, PN_ERR_NOMEM, "PortMidi: out of memory");
    }
    p->base.ops = &portmidi_ops;
    p->clock = clock;
    p->clock_user = clock_user;
    p->latency = latency;
    const int n = Pm_CountDevices();
    for (PmDeviceID id = 0; id < n; ++id) {
        const PmDeviceInfo *d = Pm_GetDeviceInfo(id);
        if (!d)
            continue;
        for (int dir = 0; dir < 2; ++dir) {
            const int has = dir ? d->output : d->input;
            if (has && p->num_ports[dir] < (int)(sizeof p->ports[dir] / sizeof p->ports[dir][0]))
                p->ports[dir][p->num_ports[dir]++] = (pm_port){id, d->name};
        }
    }
    *out = &p->base;
    return PN_OK;
}
