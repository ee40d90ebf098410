#!/usr/bin/env bash
# A melody played into the plugin and into the Markov baseline
# (--midi-in-file of `parnassus render` and `parnassus baseline`,
# docs/cli.md): a hand-made melody in quarter notes, with a rest and a note
# above the soprano's range, harmonized one sonority a quarter. Every step
# with a key held has the key on top (moved by octaves into the range),
# four voices, and the rest is silent (also with the preset Harmonize
# major, which sets it all up); a melody in G with --key / the key
# port G comes out in G; without input mode the plugin plays on and says
# so; bad files and options get their status and message. Read back with
# Python's mido.
#
# usage: test_cli_harmonize.sh PARNASSUS BUNDLE_DIR DATA_DIR
# Exits 77 (skipped) when mido is not installed.
set -euo pipefail

if [[ $# -lt 3 ]]; then
    echo "usage: $0 PARNASSUS BUNDLE_DIR DATA_DIR" >&2
    exit 2
fi
PN=$1
BUNDLE=$2
DATA=$3
PY=/usr/bin/python3
CHORALES=$DATA/learn/chorales.json
if ! "$PY" -c 'import mido' 2>/dev/null; then
    echo "SKIP: python3 mido is not installed (Debian: python3-mido)"
    exit 77
fi
source "$(dirname "$0")/cli_lib.sh" harmonize

# melody.mid: quarters 72 71 69 67, a quarter's rest, 88 (above the
# soprano's range: sounds as 76), 74 72, then the same a fifth lower
# (in G: the key moves it to C and the music back) as melody-g.mid.
# Ticks per quarter 384, another than the writers' 480 and 960.
"$PY" - "$TMP/melody.mid" "$TMP/melody-g.mid" <<'PYEOF'
import sys, mido
for path, move in ((sys.argv[1], 0), (sys.argv[2], -5)):
    mid = mido.MidiFile(ticks_per_beat=384)
    tr = mido.MidiTrack(); mid.tracks.append(tr)
    wait = 0
    for key in (72, 71, 69, 67, None, 88, 74, 72):
        if key is None:
            wait += 384
            continue
        tr.append(mido.Message('note_on', note=key + move, velocity=90, time=wait))
        tr.append(mido.Message('note_off', note=key + move, velocity=0, time=384))
        wait = 0
    mid.save(path)
PYEOF
# the keys each quarter should sound on top (None: silence)
WANT="72 71 69 67 None 76 74 72"
WANT_G="67 66 64 62 None 71 69 67"

# check_take NAME FILE WANT TPQ: at every quarter the highest key sounding
# is WANT's, four voices sound under a key and none in the rest.
check_take() {
    local name=$1 file=$2 want=$3
    if "$PY" - "$file" "$want" >"$TMP/take.txt" 2>&1 <<'PYEOF'; then ok; else not_ok "$name: $(cat "$TMP/take.txt")"; fi
import sys, mido
mid = mido.MidiFile(sys.argv[1])
want = [None if w == "None" else int(w) for w in sys.argv[2].split()]
changes = []
for track in mid.tracks:
    tick = 0
    for msg in track:
        tick += msg.time
        if msg.type in ("note_on", "note_off"):
            changes.append((tick, msg.type == "note_on" and msg.velocity > 0, msg.channel, msg.note))
changes.sort(key=lambda c: (c[0], c[1]))
sounding, i = {}, 0
for beat, key in enumerate(want):
    at = beat * mid.ticks_per_beat
    while i < len(changes) and changes[i][0] <= at:
        tick, on, ch, note = changes[i]
        sounding[(ch, note)] = sounding.get((ch, note), 0) + (1 if on else -1)
        if sounding[(ch, note)] <= 0:
            del sounding[(ch, note)]
        i += 1
    notes = sorted(n for _, n in sounding)
    if key is None:
        assert not notes, f"beat {beat}: {notes} sound in the rest"
        continue
    assert notes and notes[-1] == key, f"beat {beat}: {notes}, expected {key} on top"
    assert len(sounding) == 4, f"beat {beat}: {len(sounding)} voices"
PYEOF
}

# --- the plugin (render) ---
run_pn 0 "render the melody" render --bundle "$BUNDLE" --midi-in-file "$TMP/melody.mid" \
    --set input_mode=1 --set division=2 --set channel_per_voice=1 --seed 3 -o "$TMP/plugin.mid"
check "render: the length of the melody (2 bars)" has "$OUT" "rendered 2 bars of 4 beats"
check "render: every note played in" has "$OUT" "played 7 of the 7 notes of $TMP/melody.mid into the control port"
check "render: no late step" has "$OUT" "late_steps: 0"
check "render: nothing on stderr" test ! -s "$ERR"
check_take "render: the melody on top" "$TMP/plugin.mid" "$WANT"

run_pn 0 "render the melody in G" render --bundle "$BUNDLE" --midi-in-file "$TMP/melody-g.mid" \
    --set input_mode=1 --set division=2 --set key=7 --set channel_per_voice=1 --seed 3 \
    -o "$TMP/plugin-g.mid"
check_take "render in G: the melody on top" "$TMP/plugin-g.mid" "$WANT_G"

# the preset sets it all up: input mode, quarter notes, the quarter-note set
run_pn 0 "render with the preset Harmonize major" render --bundle "$BUNDLE" --preset "Harmonize major" \
    --midi-in-file "$TMP/melody.mid" --set channel_per_voice=1 --seed 3 -o "$TMP/preset.mid"
check "the preset: no note about input mode" test ! -s "$ERR"
check_take "the preset: the melody on top" "$TMP/preset.mid" "$WANT"

run_pn 0 "render one bar" render --bundle "$BUNDLE" --midi-in-file "$TMP/melody.mid" --bars 1 \
    --set input_mode=1 --set division=2 -o "$TMP/one.mid"
check "render one bar: the notes after it are not played" has "$OUT" "played 4 of the 7 notes of $TMP/melody.mid into the control port (the others start after the last bar)"

run_pn 0 "render without input mode" render --bundle "$BUNDLE" --midi-in-file "$TMP/melody.mid" \
    -o "$TMP/free.mid"
check "render without input mode: says so" has "$ERR" "input_mode is off"

run_pn 2 "render: a missing file" render --bundle "$BUNDLE" --midi-in-file "$TMP/none.mid" -o "$TMP/x.mid"
check "render: a missing file is named" has "$ERR" "parnassus render: --midi-in-file: $TMP/none.mid"
printf 'MThd not really' >"$TMP/bad.mid"
run_pn 2 "render: not a MIDI file" render --bundle "$BUNDLE" --midi-in-file "$TMP/bad.mid" -o "$TMP/x.mid"
check "render: a bad file is named" has "$ERR" "parnassus render: --midi-in-file: $TMP/bad.mid: "
check "render: nothing written for a bad file" test ! -e "$TMP/x.mid"

# --- the Markov baseline ---
run_pn 0 "baseline harmonizes" baseline "$CHORALES" --mode any --midi-in-file "$TMP/melody.mid" \
    --division 4 --seed 2 -o "$TMP/markov.mid"
check "baseline: steps" has "$OUT" "wrote $TMP/markov.mid: 8 sonorities of 4 voices, 1/4 notes"
check "baseline: the keys held" has "$OUT" "harmonized $TMP/melody.mid: 7 of the steps with a key held (the soprano)"
# check_soprano NAME FILE WANT: the first track's key at every quarter has
# WANT's pitch class (the key moved by octaves into the chain's range),
# nothing sounds in the rest
check_soprano() {
    local name=$1 file=$2 want=$3
    if "$PY" - "$file" "$want" >"$TMP/sop.txt" 2>&1 <<'PYEOF'; then ok; else not_ok "$name: $(cat "$TMP/sop.txt")"; fi
import sys, mido
mid = mido.MidiFile(sys.argv[1])
want = [None if w == "None" else int(w) for w in sys.argv[2].split()]
tracks = [t for t in mid.tracks if any(m.type == "note_on" for m in t)]
def at_beats(track):
    tick, on, out = 0, {}, []
    events = []
    for m in track:
        tick += m.time
        if m.type in ("note_on", "note_off"):
            events.append((tick, m.type == "note_on" and m.velocity > 0, m.note))
    events.sort(key=lambda e: (e[0], e[1]))
    i, sounding = 0, set()
    for beat in range(len(want)):
        while i < len(events) and events[i][0] <= beat * mid.ticks_per_beat:
            (sounding.add if events[i][1] else sounding.discard)(events[i][2])
            i += 1
        out.append(sorted(sounding))
    return out
soprano = at_beats(tracks[0])
others = [at_beats(t) for t in tracks[1:]]
for beat, key in enumerate(want):
    if key is None:
        assert not soprano[beat] and not any(o[beat] for o in others), f"beat {beat}: sound in the rest"
        continue
    assert len(soprano[beat]) == 1 and soprano[beat][0] % 12 == key % 12, f"beat {beat}: {soprano[beat]}, expected {key} or an octave of it"
PYEOF
}
check_soprano "baseline: the melody in the soprano" "$TMP/markov.mid" "$WANT"
run_pn 0 "baseline in G" baseline "$CHORALES" --mode any --midi-in-file "$TMP/melody-g.mid" \
    --division 4 --key G --seed 2 -o "$TMP/markov-g.mid"
check "baseline in G: harmonized" has "$OUT" "harmonized $TMP/melody-g.mid: 7 of the steps"
check_soprano "baseline in G: the melody in the soprano" "$TMP/markov-g.mid" "$WANT_G"

run_pn 2 "baseline: --key alone" baseline "$CHORALES" --key G -o "$TMP/x.mid"
check "baseline: --key alone: message" has "$ERR" "--input-voice, --key and --octave go with --midi-in-file"
run_pn 2 "baseline: --tonic keep" baseline "$CHORALES" --tonic keep --midi-in-file "$TMP/melody.mid" -o "$TMP/x.mid"
check "baseline: --tonic keep: message" has "$ERR" "--midi-in-file needs the corpus moved to one tonic"
run_pn 2 "baseline: a bad voice" baseline "$CHORALES" --midi-in-file "$TMP/melody.mid" --input-voice alto -o "$TMP/x.mid"
check "baseline: a bad voice: message" has "$ERR" "--input-voice: expected soprano or bass, got 'alto'"
run_pn 2 "baseline: a bad file" baseline "$CHORALES" --midi-in-file "$TMP/bad.mid" -o "$TMP/x.mid"
check "baseline: a bad file is named" has "$ERR" "parnassus baseline: --midi-in-file: $TMP/bad.mid: "
check "baseline: nothing written" test ! -e "$TMP/x.mid"

cli_finish
