/* parnassus-live's MIDI: the files or devices the options name, the MIDI
 * thread between them and the engine, and the record of what was sent. */
#include "live_app_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static double engine_clock(void *user)
{
    return pnl_engine_clock(user);
}

void *pnl_app_midi_main(void *user)
{
    pnl_app *a = user;
    /* the notes it hands over are due within the MIDI latency: real-time
     * priority under the audio thread's where the system allows it */
    struct sched_param p = {0};
    p.sched_priority = 45;
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
    pnl_midi_msg batch[MIDI_BATCH];
    while (atomic_load(&a->midi_running)) {
        const double now = pnl_engine_clock(a->engine);
        const size_t got = a->midi->ops->poll(a->midi, now, batch, MIDI_BATCH);
        for (size_t i = 0; i < got; ++i) {
            pnl_engine_midi_in(a->engine, &batch[i]);
            pnh_ring_write(&a->to_main, &batch[i], sizeof batch[i]);
        }
        size_t n;
        while ((n = pnl_engine_drain_midi_out(a->engine, batch, MIDI_BATCH)) > 0)
            for (size_t i = 0; i < n; ++i)
                a->midi->ops->send(a->midi, &batch[i]);
        pnl_app_sleep(0.001);
    }
    return NULL;
}

static void add_name(char *list, size_t size, const char *name)
{
    const size_t used = strlen(list);
    snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
}

int pnl_app_open_midi(pnl_app *a)
{
    pn_error_info info = {PN_OK, ""};
    const pnl_app_options *o = a->o;
    if (o->midi_in_file || o->midi_out_file) {
        pnl_midi_msg *msgs = NULL;
        size_t count = 0;
        if (o->midi_in_file && pnl_midi_read_file(o->midi_in_file, &msgs, &count, &info) != PN_OK) {
            fprintf(stderr, "parnassus-live: %s\n", info.message);
            return -1;
        }
        const pn_error rc = pnl_midi_memory_create(o->midi_in_file ? o->midi_in_file : "no input",
                                                   msgs, count, "file", &a->midi, &info);
        free(msgs);
        if (rc != PN_OK) {
            fprintf(stderr, "parnassus-live: %s\n", info.message);
            return -1;
        }
        if (o->midi_in_file) {
            a->midi->ops->open(a->midi, 0, 0, NULL);
            add_name(a->midi_in_names, sizeof a->midi_in_names, o->midi_in_file);
        }
        if (o->midi_out_file) {
            a->midi->ops->open(a->midi, 1, 0, NULL);
            add_name(a->midi_out_names, sizeof a->midi_out_names, o->midi_out_file);
        }
        return 0;
    }
    if (pnl_midi_portmidi_create(engine_clock, a->engine, o->midi_latency, &a->midi, &info) !=
        PN_OK) {
        fprintf(stderr, "parnassus-live: %s; playing without MIDI devices\n", info.message);
        return 0;
    }
    for (int i = 0; i < o->num_midi_in; ++i) {
        const int port = pnl_midi_find(a->midi, 0, o->midi_in[i], &info);
        if (port < 0 || a->midi->ops->open(a->midi, 0, port, &info) != PN_OK)
            fprintf(stderr, "parnassus-live: %s; playing on without it\n", info.message);
        else
            add_name(a->midi_in_names, sizeof a->midi_in_names,
                     a->midi->ops->port_name(a->midi, 0, port));
    }
    if (o->midi_out) {
        const int port = pnl_midi_find(a->midi, 1, o->midi_out, &info);
        if (port < 0 || a->midi->ops->open(a->midi, 1, port, &info) != PN_OK)
            fprintf(stderr, "parnassus-live: %s; playing on without it\n", info.message);
        else
            add_name(a->midi_out_names, sizeof a->midi_out_names,
                     a->midi->ops->port_name(a->midi, 1, port));
    }
    return 0;
}

int pnl_app_write_midi_out_file(pnl_app *a)
{
    if (!a->o->midi_out_file || !a->midi)
        return 0;
    const pnl_midi_msg *msgs;
    const double *at;
    const size_t n = pnl_midi_memory_sent(a->midi, &msgs, &at);
    FILE *f = fopen(a->o->midi_out_file, "w");
    if (!f) {
        fprintf(stderr, "parnassus-live: %s: %s\n", a->o->midi_out_file, strerror(errno));
        return -1;
    }
    fprintf(f, "# time_s sent_at_s bytes (hex), stream clock\n");
    for (size_t i = 0; i < n; ++i) {
        fprintf(f, "%.6f %.6f", msgs[i].time, at[i]);
        for (int b = 0; b < msgs[i].size; ++b)
            fprintf(f, " %02x", msgs[i].bytes[b]);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}
