#!/usr/bin/env bash
# Checks files written by pnmidi with an independent reader, Python's mido:
# tempo, number of tracks, note_on/note_off balance per channel and the
# length in seconds. Exits 77 (skipped) when mido is not installed.
#
# usage: test_midi_mido.sh PN_MIDI_DEMO
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 PN_MIDI_DEMO" >&2
    exit 2
fi
DEMO=$1
PY=/usr/bin/python3
if ! "$PY" -c 'import mido' 2>/dev/null; then
    echo "SKIP: python3 mido is not installed (Debian: python3-mido)"
    exit 77
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pn-test-midi-mido.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# check FILE STEPS DURATION BPM CHANNEL_MODE TIE
check() {
    local out=$TMP/demo.mid
    "$DEMO" "$out" "$2" "$3" "$4" "$5" "$6"
    "$PY" - "$out" "$@" <<'PYEOF'
import sys
from collections import Counter
import mido

path, _, steps, duration, bpm, mode, tie = sys.argv[1:]
steps, duration, bpm, tie = int(steps), int(duration), float(bpm), int(tie)
mid = mido.MidiFile(path)
assert mid.type == 1, mid.type
assert mid.ticks_per_beat == 480, mid.ticks_per_beat
assert len(mid.tracks) == 5, len(mid.tracks)

tempos = [m.tempo for m in mid.tracks[0] if m.type == 'set_tempo']
assert tempos == [round(60e6 / bpm)], tempos
sigs = [(m.numerator, m.denominator) for m in mid.tracks[0] if m.type == 'time_signature']
assert sigs == [(4, 4)], sigs
names = [m.name for t in mid.tracks[1:] for m in t if m.type == 'track_name']
assert names == ['Soprano', 'Alto', 'Tenor', 'Bass'], names

ons, offs = Counter(), Counter()
for i, track in enumerate(mid.tracks[1:]):
    assert track[-1].type == 'end_of_track'
    assert sum(m.time for m in track) == steps * duration, 'track %d length' % i
    for m in track:
        if m.type == 'note_on' and m.velocity > 0:
            ons[m.channel] += 1
        elif m.type == 'note_off' or m.type == 'note_on':
            assert m.type == 'note_off', 'writer uses 0x80 note-offs'
            offs[m.channel] += 1
assert ons == offs, (ons, offs)
expected_channels = [0] if mode == 'one' else [0, 1, 2, 3]
assert sorted(ons) == expected_channels, sorted(ons)

seconds = steps * duration / 480 * 60 / bpm
assert abs(mid.length - seconds) < 1e-3, (mid.length, seconds)
print('ok: %s steps=%d tie=%d mode=%s: %d notes, %.3f s' % (
    path.rsplit('/', 1)[-1], steps, tie, mode, sum(ons.values()), mid.length))
PYEOF
}

check demo 16 240 90 voice 0
check demo 16 240 90 voice 1
check demo 16 120 120 one 0
check demo 37 480 133 one 1
echo "test_midi_mido: all passed"
