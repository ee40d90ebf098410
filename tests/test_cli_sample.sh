#!/usr/bin/env bash
# parnassus sample: files that an independent reader (Python's mido) plays,
# with note-ons and note-offs balanced, the tempo and length asked for, the
# key shift applied, the same file for the same seed; bad usage exits 2.
# Exits 77 (skipped) when mido is not installed.
#
# usage: test_cli_sample.sh PARNASSUS DATA_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 PARNASSUS DATA_DIR" >&2
    exit 2
fi
PN=$1
DATA=$2
PY=/usr/bin/python3
if ! "$PY" -c 'import mido' 2>/dev/null; then
    echo "SKIP: python3 mido is not installed (Debian: python3-mido)"
    exit 77
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pn-test-sample.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
RULES=$DATA/generate/three-voices.json

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# check FILE STEPS DIVISION BPM SHIFT TIES: parses the file with mido and
# checks it against what was asked (the space of three-voices.json).
check() {
    "$PY" - "$@" <<'PYEOF'
import sys
from collections import Counter
import mido

path, steps, division, bpm, shift, ties = sys.argv[1:]
steps, division, bpm, shift, ties = int(steps), int(division), float(bpm), int(shift), int(ties)
ranges = [(67, 72), (60, 65), (48, 53)]
mid = mido.MidiFile(path)
assert mid.type == 1, mid.type
assert len(mid.tracks) == 1 + len(ranges), len(mid.tracks)
tempos = [m.tempo for t in mid.tracks for m in t if m.type == 'set_tempo']
assert tempos == [round(60e6 / bpm)], tempos
step_ticks = mid.ticks_per_beat * 4 // division
notes = 0
for v, track in enumerate(mid.tracks[1:]):
    on = Counter()
    now = 0
    last_end = 0
    for m in track:
        now += m.time
        if m.type == 'note_on' and m.velocity > 0:
            lo, hi = ranges[v]
            assert lo + shift <= m.note <= hi + shift, (v, m.note)
            assert on[m.note] == 0, ('overlapping note', v, m.note)
            on[m.note] += 1
            assert m.channel == v, (v, m.channel)
            assert now % step_ticks == 0, ('off the grid', now)
            notes += 1
        elif m.type == 'note_off' or (m.type == 'note_on' and m.velocity == 0):
            assert on[m.note] == 1, ('note-off without note-on', v, m.note)
            on[m.note] -= 1
            last_end = max(last_end, now)
    assert sum(on.values()) == 0, ('unbalanced', v, on)
    assert last_end <= steps * step_ticks, (last_end, steps * step_ticks)
seconds = mid.length
expect = steps * (60.0 / bpm) * 4 / division
assert abs(seconds - expect) < 1e-3 or seconds < expect, (seconds, expect)
# without ties every step strikes every sounding voice
if not ties:
    assert notes >= steps, (notes, steps)
print("ok", path, notes, "notes", round(seconds, 3), "s")
PYEOF
}

# 256 steps of sequential generation end to end
"$PN" sample "$RULES" -o "$TMP/a.mid" --steps 256 --seed 5 >"$TMP/out.txt" ||
    fail "sample exited $?"
grep -q "wrote $TMP/a.mid: 256 sonorities of 3 voices" "$TMP/out.txt" || fail "summary: $(cat "$TMP/out.txt")"
check "$TMP/a.mid" 256 8 120 0 1 || fail "a.mid"

# the same seed gives the same file; another seed another one
"$PN" sample "$RULES" -o "$TMP/b.mid" --steps 256 --seed 5 >/dev/null
cmp -s "$TMP/a.mid" "$TMP/b.mid" || fail "same seed, different files"
"$PN" sample "$RULES" -o "$TMP/c.mid" --steps 256 --seed 6 >/dev/null
cmp -s "$TMP/a.mid" "$TMP/c.mid" && fail "different seeds, same file"

# tempo, note value, key and re-struck repeats
"$PN" sample "$RULES" --output="$TMP/d.mid" --steps 40 --bpm 90 --division 16 --key Eb \
    --no-ties --log2-lambda-w 2 --alpha 0.5 >/dev/null || fail "d.mid"
check "$TMP/d.mid" 40 16 90 3 0 || fail "d.mid"
"$PN" sample "$RULES" -o "$TMP/e.mid" --steps 10 --key A --division 4 >/dev/null || fail "e.mid"
check "$TMP/e.mid" 10 4 120 -3 1 || fail "e.mid"

# independent draws from the first realization
"$PN" sample "$RULES" -o "$TMP/f.mid" --steps 500 --independent >"$TMP/out.txt" || fail "f.mid"
grep -q "per step" "$TMP/out.txt" && fail "independent draws re-realized"
check "$TMP/f.mid" 500 8 120 0 1 || fail "f.mid"

# bad usage and bad input: exit 2 with a message naming the problem
expect_usage() {
    local what=$1
    shift
    local rc=0
    "$PN" sample "$@" >"$TMP/o.txt" 2>"$TMP/e.txt" || rc=$?
    [[ $rc -eq 2 ]] || fail "$what: exit $rc, expected 2"
    grep -q "$what" "$TMP/e.txt" || fail "$what: message was: $(cat "$TMP/e.txt")"
}
expect_usage "missing -o" "$RULES"
expect_usage "missing RULES" -o "$TMP/x.mid"
expect_usage "steps must be within" "$RULES" -o "$TMP/x.mid" --steps 0
expect_usage "expected 1, 2, 4, 8, 16 or 32" "$RULES" -o "$TMP/x.mid" --division 6
expect_usage "expected a tonic" "$RULES" -o "$TMP/x.mid" --key H
expect_usage "bpm must be within" "$RULES" -o "$TMP/x.mid" --bpm 0
expect_usage "nothere.json" "$TMP/nothere.json" -o "$TMP/x.mid"
printf '{"format": "parnassus-rules/1", "name": "x", "rules": []}' >"$TMP/bad.json"
expect_usage "bad.json: rules: empty list" "$TMP/bad.json" -o "$TMP/x.mid"
[[ ! -e "$TMP/x.mid" ]] || fail "a failed run left x.mid behind"
echo "all sample checks passed"
