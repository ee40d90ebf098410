#!/usr/bin/env bash
# End to end on the default rule set: 256 steps of sequential generation
# from presets/chorale-major.json at the default knobs, read back with an
# independent reader (Python's mido): 4 voice tracks, the tempo, every
# note-on paired with its note-off, every pitch in its voice's register
# (the preset's space: soprano 57-83, alto 50-78, tenor 45-72, bass 33-67).
# Registered for unsanitized builds only.
# Exits 77 (skipped) when mido is not installed.
#
# usage: test_cli_chorale.sh PARNASSUS PRESETS_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 PARNASSUS PRESETS_DIR" >&2
    exit 2
fi
PN=$1
PRESETS=$2
PY=/usr/bin/python3
if ! "$PY" -c 'import mido' 2>/dev/null; then
    echo "SKIP: python3 mido is not installed (Debian: python3-mido)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pn-test-chorale.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

"$PN" sample "$PRESETS/chorale-major.json" --steps 256 --seed 3 -o "$TMP/c.mid" | tee "$TMP/out.txt"
grep -q "256 sonorities of 4 voices" "$TMP/out.txt"
grep -q "rule set chorale-major: 15 rules" "$TMP/out.txt"

"$PY" - "$TMP/c.mid" <<'PYEOF'
import sys
from collections import Counter
import mido

mid = mido.MidiFile(sys.argv[1])
assert mid.type == 1 and len(mid.tracks) == 5, (mid.type, len(mid.tracks))
assert [m.tempo for m in mid.tracks[0] if m.type == 'set_tempo'] == [500000]
ranges = [(57, 83), (50, 78), (45, 72), (33, 67)]
notes = 0
for v, track in enumerate(mid.tracks[1:]):
    on = Counter()
    for m in track:
        if m.type == 'note_on' and m.velocity > 0:
            assert ranges[v][0] <= m.note <= ranges[v][1], (v, m.note)
            on[m.note] += 1
            notes += 1
        elif m.type == 'note_off' or (m.type == 'note_on' and m.velocity == 0):
            assert on[m.note] == 1, ('note-off without note-on', v, m.note)
            on[m.note] -= 1
    assert sum(on.values()) == 0, ('unbalanced', v)
# 256 eighths at 120 bpm: 64 s, and most steps strike something new
assert abs(mid.length - 64.0) < 1e-6 or mid.length < 64.0, mid.length
assert notes > 256, notes
print("ok:", notes, "notes,", round(mid.length, 2), "s")
PYEOF
