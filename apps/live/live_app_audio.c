/* parnassus-live's audio stream: PortAudio's devices, the stream on the
 * chosen one, and its callback, which runs the engine. */
#include "live_app_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "live_quiet.h"

static int audio_callback(const void *input, void *output, unsigned long frames,
                          const PaStreamCallbackTimeInfo *time, PaStreamCallbackFlags flags,
                          void *user)
{
    (void)input;
    (void)time;
    (void)flags;
    pnl_app *a = user;
    float **out = output;
    unsigned long done = 0;
    while (done < frames) {
        const uint32_t n = (uint32_t)(frames - done < a->max_block ? frames - done : a->max_block);
        pnl_engine_process(a->engine, out[0] + done, out[1] + done, n);
        done += n;
    }
    return paContinue;
}

PaError pnl_app_pa_initialize(void)
{
    const int saved = pnl_stderr_mute();
    const PaError err = Pa_Initialize();
    pnl_stderr_restore(saved);
    return err;
}

void pnl_app_list_audio(FILE *f)
{
    const int n = Pa_GetDeviceCount();
    fprintf(f, "audio outputs (PortAudio):%s\n", n > 0 ? "" : " none");
    for (int i = 0; i < n; ++i) {
        const PaDeviceInfo *d = Pa_GetDeviceInfo(i);
        if (d && d->maxOutputChannels > 0)
            fprintf(f, "  %d: %s (%s, %d channels, %.0f Hz)%s\n", i, d->name,
                    Pa_GetHostApiInfo(d->hostApi)->name, d->maxOutputChannels, d->defaultSampleRate,
                    i == Pa_GetDefaultOutputDevice() ? " [default]" : "");
    }
}

static int contains_nocase(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; ++hay)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

static PaDeviceIndex find_audio_device(const char *spec)
{
    const int n = Pa_GetDeviceCount();
    if (!spec)
        return Pa_GetDefaultOutputDevice();
    char *end;
    const long i = strtol(spec, &end, 10);
    if (*spec && !*end)
        return i >= 0 && i < n && Pa_GetDeviceInfo((int)i)->maxOutputChannels > 0 ? (int)i
                                                                                  : paNoDevice;
    for (int d = 0; d < n; ++d)
        if (Pa_GetDeviceInfo(d)->maxOutputChannels > 0 &&
            contains_nocase(Pa_GetDeviceInfo(d)->name, spec))
            return d;
    return paNoDevice;
}

int pnl_app_open_audio(pnl_app *a)
{
    const PaDeviceIndex dev = find_audio_device(a->o->audio_device);
    if (dev == paNoDevice) {
        if (a->o->audio_device)
            fprintf(stderr, "parnassus-live: no audio output matches '%s'\n", a->o->audio_device);
        else
            fprintf(stderr, "parnassus-live: no audio output device: PortAudio found none (connect "
                            "a sound card, or start a JACK server)\n");
        pnl_app_list_audio(stderr);
        return -1;
    }
    const PaDeviceInfo *info = Pa_GetDeviceInfo(dev);
    snprintf(a->audio_name, sizeof a->audio_name, "%s, %.0f Hz, %d frames", info->name, a->o->rate,
             a->o->buffer);
    PaStreamParameters out = {
        .device = dev,
        .channelCount = 2,
        .sampleFormat = paFloat32 | paNonInterleaved,
        .suggestedLatency = info->defaultLowOutputLatency,
        .hostApiSpecificStreamInfo = NULL,
    };
    PaError err = Pa_OpenStream(&a->stream, NULL, &out, a->o->rate, (unsigned long)a->o->buffer,
                                paNoFlag, audio_callback, a);
    if (err != paNoError) {
        fprintf(stderr, "parnassus-live: cannot open audio output '%s' at %.0f Hz, %d frames: %s\n",
                info->name, a->o->rate, a->o->buffer, Pa_GetErrorText(err));
        a->stream = NULL;
        return -1;
    }
    return 0;
}
