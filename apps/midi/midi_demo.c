/* pn-midi-demo: writes a 4-voice demo sequence as a Standard MIDI File.
 *
 * usage: pn-midi-demo OUT.mid [STEPS [DURATION [BPM [MODE [TIE]]]]]
 *   STEPS     number of sonorities (default 16)
 *   DURATION  ticks per sonority at 480 ticks per quarter (default 240)
 *   BPM       tempo (default 90)
 *   MODE      "voice" (a channel per voice, default) or "one" (channel 1)
 *   TIE       1 to hold repeated pitches, 0 to re-strike them (default 0)
 * Every fourth step of the alto is a rest and the bass repeats its pitch in
 * pairs, so both rests and ties appear. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "midi_file.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 7) {
        fprintf(stderr, "usage: %s OUT.mid [STEPS [DURATION [BPM [MODE [TIE]]]]]\n", argv[0]);
        return 2;
    }
    int steps = argc > 2 ? atoi(argv[2]) : 16;
    int duration = argc > 3 ? atoi(argv[3]) : 240;
    pn_midi_writer_settings s;
    pn_midi_writer_settings_default(&s);
    s.tempo_bpm = argc > 4 ? atof(argv[4]) : 90.0;
    if (argc > 5 && strcmp(argv[5], "one") == 0)
        s.channel_mode = PN_MIDI_ONE_CHANNEL;
    s.tie_repeats = argc > 6 ? atoi(argv[6]) != 0 : 0;

    pn_error_info info;
    pn_midi_writer *w = NULL;
    if (pn_midi_writer_create(&s, &w, &info) != PN_OK) {
        fprintf(stderr, "pn-midi-demo: %s\n", info.message);
        return 1;
    }
    static const int scale[8] = {0, 2, 4, 5, 7, 9, 11, 12};
    for (int i = 0; i < steps; ++i) {
        int pitches[4] = {72 + scale[i % 8], i % 4 == 3 ? PN_MIDI_REST : 64 + scale[(i + 2) % 8],
                          55 + scale[(i + 4) % 8], 36 + scale[(i / 2) % 8]};
        if (pn_midi_add_sonority(w, pitches, duration, 80, &info) != PN_OK) {
            fprintf(stderr, "pn-midi-demo: %s\n", info.message);
            pn_midi_writer_free(w);
            return 1;
        }
    }
    pn_error err = pn_midi_write(w, argv[1], &info);
    pn_midi_writer_free(w);
    if (err != PN_OK) {
        fprintf(stderr, "pn-midi-demo: %s\n", info.message);
        return 1;
    }
    return 0;
}
