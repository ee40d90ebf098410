#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "live_synth.h"

#include <dlfcn.h>
#include <fluidsynth.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"

enum {
    DRUM_CHANNEL = 9,
    NUM_CHANNELS = 16,
    CHUNK = 64,             /* fluidsynth's own block: messages land on its boundaries */
    EVENT_RING = 1 << 16,   /* bytes of queued messages */
    AUDIO_FRAMES = 1 << 15, /* rendered frames the ring can hold (a power of two) */
    ALL_NOTES_OFF = 0xFF,   /* a message of our own: every note released */
};

typedef struct synth_event {
    int64_t frame;
    uint8_t size;
    uint8_t bytes[3];
} synth_event;

struct pnl_synth {
    fluid_settings_t *settings;
    fluid_synth_t *synth;
    pnl_synth_settings s;

    pnh_ring events;             /* audio thread -> synth thread */
    float *audio[2];             /* AUDIO_FRAMES per channel */
    atomic_int_fast64_t written; /* frames rendered into audio[] (synth thread) */
    atomic_int_fast64_t read;    /* frames taken out (audio thread) */
    atomic_int_fast64_t posted;  /* stream frames whose messages are all queued */
    atomic_uint_fast64_t underruns;
    int64_t stream_frame; /* audio thread: the next buffer's first frame */

    pthread_t thread;
    int thread_started;
    atomic_int stop;
    synth_event pending; /* synth thread: a message read but not yet due */
    int has_pending;
};

void pnl_synth_settings_default(pnl_synth_settings *s)
{
    s->soundfont = NULL;
    s->sample_rate = 48000.0;
    s->program = PNL_PROGRAM_CHOIR_AAHS;
    s->gain = 0.5;
    s->polyphony = 64;
    s->delay = 512;
}

const char *const *pnl_synth_soundfont_candidates(void)
{
    /* Debian: fluid-soundfont-gm and timgm6mb-soundfont both register
     * default-GM.sf2 through the alternatives system */
    static const char *list[] = {
        NULL, /* $PARNASSUS_SOUNDFONT, filled below */
        "/usr/share/sounds/sf2/default-GM.sf2",
        "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/sounds/sf2/TimGM6mb.sf2",
        "/usr/share/soundfonts/default.sf2",
        "/usr/share/soundfonts/FluidR3_GM.sf2",
        NULL,
    };
    const char *env = getenv("PARNASSUS_SOUNDFONT");
    list[0] = env && *env ? env : list[1];
    return list;
}

const char *pnl_synth_find_soundfont(void)
{
    for (const char *const *p = pnl_synth_soundfont_candidates(); *p; ++p)
        if (access(*p, R_OK) == 0)
            return *p;
    return NULL;
}

/* fluidsynth prints to stderr by default; the app reports errors itself */
static void quiet_log(int level, const char *message, void *data)
{
    (void)level;
    (void)message;
    (void)data;
}

static pn_error no_soundfont(pn_error_info *info)
{
    char places[PN_MESSAGE_SIZE / 2] = "";
    size_t used = 0;
    for (const char *const *p = pnl_synth_soundfont_candidates(); *p && used < sizeof places; ++p)
        used += (size_t)snprintf(places + used, sizeof places - used, "%s%s", used ? ", " : "", *p);
    return pn_fail(info, PN_ERR_IO,
                   "no General MIDI soundfont found (looked for %s); install "
                   "fluid-soundfont-gm, give --soundfont FILE, or play with --no-synth",
                   places);
}

/* ---- the synth thread ---- */

static void apply(fluid_synth_t *fs, const synth_event *ev)
{
    const uint8_t *m = ev->bytes;
    if (m[0] == ALL_NOTES_OFF) {
        fluid_synth_all_notes_off(fs, -1);
        return;
    }
    const int ch = m[0] & 0x0F;
    switch (m[0] & 0xF0) {
    case 0x80:
        fluid_synth_noteoff(fs, ch, m[1] & 0x7F);
        break;
    case 0x90:
        if (m[2] == 0)
            fluid_synth_noteoff(fs, ch, m[1] & 0x7F);
        else
            fluid_synth_noteon(fs, ch, m[1] & 0x7F, m[2] & 0x7F);
        break;
    case 0xB0:
        fluid_synth_cc(fs, ch, m[1] & 0x7F, m[2] & 0x7F);
        break;
    case 0xC0:
        fluid_synth_program_change(fs, ch, m[1] & 0x7F);
        break;
    case 0xE0:
        fluid_synth_pitch_bend(fs, ch, (m[1] & 0x7F) | ((m[2] & 0x7F) << 7));
        break;
    default:
        break;
    }
}

/* Applies the messages due before `until` (stream frames). */
static void apply_due(pnl_synth *s, int64_t until)
{
    for (;;) {
        if (!s->has_pending) {
            uint32_t size;
            if (!pnh_ring_read(&s->events, &s->pending, sizeof s->pending, &size))
                return;
            s->has_pending = size == sizeof s->pending;
            if (!s->has_pending)
                continue;
        }
        if (s->pending.frame >= until)
            return;
        apply(s->synth, &s->pending);
        s->has_pending = 0;
    }
}

/* Renders what the stream has posted, in fluidsynth-sized chunks, as far
 * as the ring has room. */
static void render_posted(pnl_synth *s)
{
    const int64_t delay = s->s.delay;
    for (;;) {
        const int64_t written = atomic_load(&s->written);
        /* frame f of the output ring sounds at stream frame f: its
         * messages were posted with stream frames f - delay */
        const int64_t stream = written - delay;
        const int64_t posted = atomic_load(&s->posted);
        const int64_t room = AUDIO_FRAMES - (written - atomic_load(&s->read));
        int64_t n = posted - stream;
        n = n > CHUNK ? CHUNK : n;
        n = n > room ? room : n;
        if (n <= 0)
            return;
        apply_due(s, stream + n);
        const int64_t at = written & (AUDIO_FRAMES - 1);
        const int64_t first = n < AUDIO_FRAMES - at ? n : AUDIO_FRAMES - at;
        fluid_synth_write_float(s->synth, (int)first, s->audio[0], (int)at, 1, s->audio[1], (int)at,
                                1);
        if (first < n)
            fluid_synth_write_float(s->synth, (int)(n - first), s->audio[0], 0, 1, s->audio[1], 0,
                                    1);
        atomic_store(&s->written, written + n);
    }
}

static void *synth_main(void *arg)
{
    pnl_synth *s = arg;
    /* it feeds the audio thread: real-time priority just under an audio
     * thread's where the system allows it, else the normal one */
    struct sched_param p = {0};
    p.sched_priority = 40;
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
    /* it looks for posted frames every millisecond rather than being woken:
     * a wake-up would be a system call on the audio thread, and the delay
     * leaves room for the wait */
    const struct timespec pause = {0, 1000000};
    while (!atomic_load(&s->stop)) {
        render_posted(s);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* ---- setting up ---- */

static pn_error check(const pnl_synth_settings *s, pn_error_info *info)
{
    if (!(s->sample_rate > 0) || s->program < 0 || s->program > 127 || !(s->gain >= 0) ||
        s->gain > 10 || s->polyphony < 16 || s->polyphony > 4096 || s->delay < 64 ||
        s->delay > 16384)
        return pn_fail(info, PN_ERR_INVALID,
                       "synth: sample rate > 0, program 0..127, gain 0..10, polyphony 16..4096, "
                       "delay 64..16384 frames");
    return PN_OK;
}

/* fluidsynth parallelises with OpenMP. The synth renders on a thread of its
 * own, and OpenMP's helper threads would spin on a core the solver needs
 * (and their hand-offs are invisible to ThreadSanitizer): one thread. */
static void one_openmp_thread(void)
{
    void (*set_threads)(int);
    void *symbol = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (symbol) {
        memcpy(&set_threads, &symbol, sizeof set_threads);
        set_threads(1);
    }
}

static pn_error load_synth(pnl_synth *synth, const char *path, pn_error_info *info)
{
    one_openmp_thread();
    synth->settings = new_fluid_settings();
    if (!synth->settings)
        return pn_fail(info, PN_ERR_NOMEM, "synth: out of memory");
    fluid_settings_setnum(synth->settings, "synth.sample-rate", synth->s.sample_rate);
    fluid_settings_setnum(synth->settings, "synth.gain", synth->s.gain);
    fluid_settings_setint(synth->settings, "synth.polyphony", synth->s.polyphony);
    /* only the synth thread drives it: no mutex */
    fluid_settings_setint(synth->settings, "synth.threadsafe-api", 0);
    synth->synth = new_fluid_synth(synth->settings);
    if (!synth->synth)
        return pn_fail(info, PN_ERR_NOMEM, "synth: fluidsynth could not be created");
    if (fluid_synth_sfload(synth->synth, path, 1) == FLUID_FAILED)
        return pn_fail(info, PN_ERR_IO, "%s: not a soundfont fluidsynth can load", path);
    for (int ch = 0; ch < NUM_CHANNELS; ++ch)
        if (ch != DRUM_CHANNEL)
            fluid_synth_program_change(synth->synth, ch, synth->s.program);
    return PN_OK;
}

pn_error pnl_synth_create(const pnl_synth_settings *s, pnl_synth **out, pn_error_info *info)
{
    *out = NULL;
    pn_error rc = check(s, info);
    if (rc != PN_OK)
        return rc;
    const char *path = s->soundfont ? s->soundfont : pnl_synth_find_soundfont();
    if (!path)
        return no_soundfont(info);
    if (access(path, R_OK) != 0)
        return pn_fail(info, PN_ERR_IO, "%s: cannot read the soundfont", path);
    for (int level = FLUID_PANIC; level < LAST_LOG_LEVEL; ++level)
        fluid_set_log_function(level, quiet_log, NULL);

    pnl_synth *synth = calloc(1, sizeof *synth);
    if (!synth)
        return pn_fail(info, PN_ERR_NOMEM, "synth: out of memory");
    synth->s = *s;
    synth->audio[0] = calloc(AUDIO_FRAMES, sizeof(float));
    synth->audio[1] = calloc(AUDIO_FRAMES, sizeof(float));
    if (!synth->audio[0] || !synth->audio[1] || !pnh_ring_init(&synth->events, EVENT_RING)) {
        free(synth->audio[0]);
        free(synth->audio[1]);
        pnh_ring_free(&synth->events);
        free(synth);
        return pn_fail(info, PN_ERR_NOMEM, "synth: out of memory");
    }
    /* the first `delay` frames heard are silence */
    atomic_init(&synth->written, s->delay);
    atomic_init(&synth->read, 0);
    atomic_init(&synth->posted, 0);
    atomic_init(&synth->underruns, 0);
    atomic_init(&synth->stop, 0);
    if ((rc = load_synth(synth, path, info)) != PN_OK) {
        pnl_synth_free(synth);
        return rc;
    }
    if (pthread_create(&synth->thread, NULL, synth_main, synth) != 0) {
        pnl_synth_free(synth);
        return pn_fail(info, PN_ERR_NOMEM, "synth: cannot start its thread");
    }
    synth->thread_started = 1;
    *out = synth;
    return PN_OK;
}

void pnl_synth_free(pnl_synth *synth)
{
    if (!synth)
        return;
    if (synth->thread_started) {
        atomic_store(&synth->stop, 1);
        pthread_join(synth->thread, NULL);
    }
    if (synth->synth)
        delete_fluid_synth(synth->synth);
    if (synth->settings)
        delete_fluid_settings(synth->settings);
    pnh_ring_free(&synth->events);
    free(synth->audio[0]);
    free(synth->audio[1]);
    free(synth);
}

/* ---- the audio thread ---- */

int pnl_synth_midi(pnl_synth *synth, int64_t frame, const uint8_t *msg, uint32_t size)
{
    if (size < 1 || size > 3 || msg[0] < 0x80 || msg[0] >= 0xF0)
        return 0;
    synth_event ev = {.frame = frame, .size = (uint8_t)size};
    memcpy(ev.bytes, msg, size);
    return pnh_ring_write(&synth->events, &ev, sizeof ev) ? 0 : -1;
}

int pnl_synth_all_notes_off(pnl_synth *synth, int64_t frame)
{
    const synth_event ev = {.frame = frame, .size = 1, .bytes = {ALL_NOTES_OFF, 0, 0}};
    return pnh_ring_write(&synth->events, &ev, sizeof ev) ? 0 : -1;
}

void pnl_synth_render(pnl_synth *synth, float *left, float *right, uint32_t nframes)
{
    const int64_t read = atomic_load(&synth->read);
    const int64_t available = atomic_load(&synth->written) - read;
    if (available < (int64_t)nframes) {
        /* behind: silence now, and skip what is late so the delay holds */
        memset(left, 0, nframes * sizeof *left);
        memset(right, 0, nframes * sizeof *right);
        atomic_fetch_add(&synth->underruns, 1);
        atomic_store(&synth->read, read + (available > 0 ? available : 0));
    } else {
        for (uint32_t i = 0; i < nframes; ++i) {
            const int64_t at = (read + i) & (AUDIO_FRAMES - 1);
            left[i] = synth->audio[0][at];
            right[i] = synth->audio[1][at];
        }
        atomic_store(&synth->read, read + nframes);
    }
    synth->stream_frame += nframes;
    atomic_store(&synth->posted, synth->stream_frame);
}

uint64_t pnl_synth_underruns(const pnl_synth *synth)
{
    return atomic_load(&synth->underruns);
}
