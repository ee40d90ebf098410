#!/usr/bin/env bash
# parnassus-live as a musician starts it, headless, on a JACK server with
# the dummy backend (no sound card needed): it plays, its MIDI leaves on
# the stream clock, capture writes a file mido reads, a fed melody is
# harmonized, MIDI learn binds a controller and the map round-trips, and
# bad input gets a clear message. Exits 77 (skipped) without jackd or mido.
#
# usage: test_live_app.sh PARNASSUS_LIVE BUNDLE_DIR
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 PARNASSUS_LIVE BUNDLE_DIR" >&2
    exit 2
fi
LIVE=$1
BUNDLE=$2
PY=/usr/bin/python3

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pn-test-live.XXXXXX")
# a server of our own, never started behind our back
export JACK_DEFAULT_SERVER=pn-test-live-$$
export JACK_NO_START_SERVER=1
JACKD_PID=
cleanup() {
    [[ -n $JACKD_PID ]] && kill "$JACKD_PID" 2>/dev/null && wait "$JACKD_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- --version names the BLAS kernels (checked before any skip); a CPU
# with AVX2 and FMA runs kernels that use them unless the user names others ---
OPENBLAS_CORETYPE=Prescott "$LIVE" --version >"$TMP/version.out"
grep -qE '^parnassus-live [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/version.out" || fail "--version: $(cat "$TMP/version.out")"
if [[ $(uname -m) == x86_64 ]]; then
    grep -q '^BLAS: OpenBLAS, Prescott kernels' "$TMP/version.out" || fail "named kernels: $(cat "$TMP/version.out")"
fi
if [[ $(uname -m) == x86_64 ]] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    env -u OPENBLAS_CORETYPE "$LIVE" --version >"$TMP/version.out"
    grep -q "unused" "$TMP/version.out" && fail "kernels left AVX2 unused: $(cat "$TMP/version.out")"
    [[ $(grep -c '^parnassus-live ' "$TMP/version.out") -eq 1 ]] || fail "--version printed twice"
fi

command -v jackd >/dev/null || { echo "SKIP: jackd is not installed (Debian: jackd2)"; exit 77; }
"$PY" -c 'import mido' 2>/dev/null || { echo "SKIP: python3 mido is not installed"; exit 77; }

live() { "$LIVE" --bundle "$BUNDLE" --headless "$@"; }

# live_session NAME ARGS...: runs the app with commands from a pipe; once
# it plays, `say` sends a command
live_session() {
    local name=$1
    shift
    rm -f "$TMP/cmd"
    mkfifo "$TMP/cmd"
    live "$@" <"$TMP/cmd" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SESSION_PID=$!
    exec 3>"$TMP/cmd"
    # starting loads the plugin and realizes its set: over 20 s under TSan
    # on a busy machine, so up to two minutes
    for _ in $(seq 1200); do
        grep -q "playing at" "$TMP/$name.out" && return 0
        kill -0 "$SESSION_PID" 2>/dev/null || break
        sleep 0.1
    done
    fail "$name: the app did not start playing: $(cat "$TMP/$name.err")"
}
say() { echo "$1" >&3; }
end_session() {
    say quit
    exec 3>&-
    wait "$SESSION_PID" || fail "$1 exited with an error: $(cat "$TMP/$1.err")"
}

# --- no audio device at all: a clear message, non-zero exit ---
if live --no-synth --seconds 1 </dev/null >"$TMP/none.out" 2>"$TMP/none.err"; then
    fail "played without an audio device"
fi
grep -q "no audio output device" "$TMP/none.err" || fail "no-device message: $(cat "$TMP/none.err")"

# --- usage errors ---
set +e
"$LIVE" --bpm 1000 >/dev/null 2>"$TMP/usage.err"; rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q -- "--bpm" "$TMP/usage.err" || fail "--bpm 1000: rc $rc"

jackd -n "$JACK_DEFAULT_SERVER" --no-realtime -d dummy -r 48000 -p 256 >"$TMP/jackd.log" 2>&1 &
JACKD_PID=$!
# ready when its playback ports are there
for _ in $(seq 50); do
    jack_lsp -s "$JACK_DEFAULT_SERVER" 2>/dev/null | grep -q "system:playback" && break
    sleep 0.2
done
jack_lsp -s "$JACK_DEFAULT_SERVER" 2>/dev/null | grep -q "system:playback" ||
    fail "jackd did not start: $(cat "$TMP/jackd.log")"

# --- four seconds of the built-in set: on time, balanced, captured ---
# The onsets below are the steps: at gate 90 % every step strikes, also a
# late one (it sounds the last sonority again), which the default gate of
# 100 % ties over; a sanitizer's slow worker makes many steps late.
live --seconds 4 --capture "$TMP/take.mid" --midi-out-file "$TMP/out.txt" \
    --set log2_lambda_w=-1 --set gate=90 </dev/null >"$TMP/play.out" 2>"$TMP/play.err" ||
    fail "play: $(cat "$TMP/play.err")"
"$PY" - "$TMP/out.txt" "$TMP/take.mid" <<'PYEOF'
import sys
import mido
out, take = sys.argv[1:]
rows = [l.split() for l in open(out) if not l.startswith('#')]
assert rows, "nothing was sent to MIDI out"
latency = 0.010
buffer = 256 / 48000  # the app's --buffer (default 256 frames) at 48 kHz
step = 0.25  # 1/8 at 120 bpm
ons = []
balance = {}
for r in rows:
    t, sent_at, status = float(r[0]), float(r[1]), int(r[2], 16)
    key, vel = int(r[3], 16), int(r[4], 16)
    # handed over on the stream clock, never before its buffer was made
    # (how soon before it is due is a timing target: parnassus-bench-live
    # measures it, a loaded machine cannot promise it)
    assert t - latency - buffer - 1e-6 <= sent_at, (t, sent_at)
    if status & 0xF0 == 0x90 and vel > 0:
        ons.append(t)
        balance[(status & 15, key)] = balance.get((status & 15, key), 0) + 1
    elif status & 0xF0 in (0x80, 0x90):
        balance[(status & 15, key)] = balance.get((status & 15, key), 0) - 1
assert all(v == 0 for v in balance.values()), balance
onsets = sorted(set(ons))
assert len(onsets) >= 12, len(onsets)
for t in onsets:  # exactly on the grid of the stream clock (48 kHz frames)
    k = round((t - latency) / step)
    assert abs((t - latency) - k * step) * 48000 < 0.5, t
mid = mido.MidiFile(take)
names = [t.name for t in mid.tracks[1:]]
assert names == ['soprano', 'alto', 'tenor', 'bass', 'input'], names
notes = sum(1 for t in mid.tracks[1:5] for m in t if m.type == 'note_on' and m.velocity > 0)
# every step strikes one note or more, four at most (at 90 % all four; at
# the default gate a voice that keeps its pitch is tied over)
assert len(onsets) <= notes <= 4 * len(onsets), (notes, len(onsets))
for t in mid.tracks[1:]:
    on = {}
    for m in t:
        if m.type == 'note_on' and m.velocity > 0:
            on[m.note] = on.get(m.note, 0) + 1
        elif m.type in ('note_off', 'note_on'):
            on[m.note] = on.get(m.note, 0) - 1
    assert all(v == 0 for v in on.values()), (t.name, on)
PYEOF
grep -q "captured the last 16 bars" "$TMP/play.out" || fail "no capture line: $(cat "$TMP/play.out")"

# --- the built-in synth sounds ---
live_session synth
sleep 1.5
say status
sleep 0.3
end_session synth
level=$(sed -n 's/.*| level \(-\{0,1\}[0-9]*\) dBFS.*/\1/p' "$TMP/synth.out" | tail -1)
[[ -n $level && $level -gt -60 ]] || fail "the synth is silent (level '$level' dBFS): $(cat "$TMP/synth.out")"

# --- as the clock master, MIDI clock goes out with the notes ---
live --no-synth --seconds 2 --clock-out --midi-out-file "$TMP/clock.txt" </dev/null >/dev/null 2>"$TMP/clock.err" ||
    fail "clock out: $(cat "$TMP/clock.err")"
[[ $(grep -c " fa$" "$TMP/clock.txt") -eq 1 ]] || fail "no single Start sent"
pulses=$(grep -c " f8$" "$TMP/clock.txt")
[[ $pulses -ge 90 && $pulses -le 100 ]] || fail "$pulses clock pulses in 2 s at 120 bpm, want about 96"
grep -q " fc$" "$TMP/clock.txt" || fail "no Stop sent when the app stopped"

# --- a melody fed as the keyboard is harmonized: the soprano is the key ---
"$PY" - "$TMP/melody.mid" <<'PYEOF'
import sys
import mido
mid = mido.MidiFile(ticks_per_beat=480)
tr = mido.MidiTrack(); mid.tracks.append(tr)
tr.append(mido.MetaMessage('set_tempo', tempo=500000, time=0))
tr.append(mido.Message('note_on', note=72, velocity=90, time=0))
tr.append(mido.Message('note_off', note=72, velocity=0, time=480 * 8))
mid.save(sys.argv[1])
PYEOF
live --no-synth --seconds 3 --set input_mode=1 --midi-in-file "$TMP/melody.mid" \
    --midi-out-file "$TMP/harm.txt" --capture "$TMP/harm.mid" </dev/null >/dev/null 2>"$TMP/harm.err" ||
    fail "harmonize: $(cat "$TMP/harm.err")"
"$PY" - "$TMP/harm.txt" "$TMP/harm.mid" <<'PYEOF'
import sys
import mido
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
by_time = {}
for r in rows:
    status, key, vel = int(r[2], 16), int(r[3], 16), int(r[4], 16)
    if status & 0xF0 == 0x90 and vel > 0:
        by_time.setdefault(float(r[0]), []).append(key)
times = sorted(by_time)
assert len(times) >= 6, times
# the soprano is the key from the second step on (the key arrives during
# the first; a repeated pitch is held, so it may strike once); another
# voice may cross above it, as in the chorales
sop = next(t for t in mido.MidiFile(sys.argv[2]).tracks if t.name == 'soprano')
ons = [m.note for m in sop if m.type == 'note_on' and m.velocity > 0]
assert ons and ons[-1] == 72 and all(n == 72 for n in ons[1:]), ons
inp = mido.MidiFile(sys.argv[2]).tracks[5]
assert any(m.type == 'note_on' and m.note == 72 for m in inp), "the input was not captured"
PYEOF

# --- MIDI learn: "learn", a controller moves, the knob follows; the map is kept ---
"$PY" - "$TMP/cc.mid" <<'PYEOF'
import sys
import mido
mid = mido.MidiFile(ticks_per_beat=480)
tr = mido.MidiTrack(); mid.tracks.append(tr)
tr.append(mido.MetaMessage('set_tempo', tempo=500000, time=0))
tr.append(mido.Message('control_change', channel=2, control=74, value=64, time=960))  # 1 s
tr.append(mido.Message('control_change', channel=2, control=74, value=0, time=960))   # 2 s
mid.save(sys.argv[1])
PYEOF
live_session learn --no-synth --map "$TMP/cfg/map.json" --midi-in-file "$TMP/cc.mid"
say "learn log2_lambda_w"
sleep 1.5
say status # before the second CC (at 2 s): the default knobs
sleep 1.0
say status
sleep 0.3
# the realization follows the knob: at log2 lambda_w -12 fewer rules are kept
for _ in $(seq 40); do
    grep -q "rules kept [0-7] (.*log2_lambda_w -12 " "$TMP/learn.out" && break
    say status
    sleep 0.5
done
end_session learn
grep -q "learned: log2_lambda_w" "$TMP/learn.out" || fail "nothing learned: $(cat "$TMP/learn.out" "$TMP/learn.err")"
grep -q "log2_lambda_w -12 " "$TMP/learn.out" || fail "the knob did not follow CC 74 = 0: $(cat "$TMP/learn.out")"
# at the default knobs the eight style rules are kept, and in some
# contexts a textbook rule as well (which depends on the sonority drawn)
grep -qE "rules kept (8|9|1[0-4]) \(.*log2_lambda_w 0 " "$TMP/learn.out" ||
    fail "the default knobs did not keep 8 rules or more: $(cat "$TMP/learn.out")"
grep -q "rules kept [0-7] (.*log2_lambda_w -12 " "$TMP/learn.out" ||
    fail "the realization did not follow the learned knob: $(cat "$TMP/learn.out")"
"$PY" - "$TMP/cfg/map.json" <<'PYEOF'
import json, sys
m = json.load(open(sys.argv[1]))
b = [x for x in m["bindings"] if x["target"] == "log2_lambda_w"]
assert b and b[0]["source"] == "cc" and b[0]["number"] == 74 and b[0]["channel"] == 3, m
PYEOF
# the saved map binds at the next start, without learning: CC 74 = 64 at
# 1 s puts the knob at the middle of its range (-12..6)
live_session map --no-synth --map "$TMP/cfg/map.json" --midi-in-file "$TMP/cc.mid"
sleep 1.5
say status
sleep 0.3
end_session map
grep -q "log2_lambda_w -2.9" "$TMP/map.out" || fail "the saved binding did not move the knob: $(cat "$TMP/map.out")"

# --- presets: by label and number, and by Program Change through the map ---
cat >"$TMP/pc-map.json" <<'JSON'
{"format": "parnassus-live-map/1", "bindings": [{"source": "program", "channel": "any", "target": "preset"}]}
JSON
"$PY" - "$TMP/pc.mid" <<'PYEOF'
import sys
import mido
mid = mido.MidiFile(ticks_per_beat=480)
tr = mido.MidiTrack(); mid.tracks.append(tr)
tr.append(mido.MetaMessage('set_tempo', tempo=500000, time=0))
tr.append(mido.Message('program_change', channel=0, program=1, time=960))  # 1 s: preset 2
mid.save(sys.argv[1])
PYEOF
live_session presets --no-synth --map "$TMP/pc-map.json" --midi-in-file "$TMP/pc.mid"
say presets
say "preset Strict"
sleep 0.3
say status
sleep 1.2
say "preset no such thing"
say "preset 99"
sleep 0.2
end_session presets
grep -q "Chorale minor" "$TMP/presets.out" || fail "presets not listed: $(cat "$TMP/presets.out")"
grep -q "preset [0-9]*: Strict" "$TMP/presets.out" || fail "Strict not applied: $(cat "$TMP/presets.out")"
grep -q "log2_lambda_w -8 alpha 1 " "$TMP/presets.out" || fail "Strict's knobs not set: $(cat "$TMP/presets.out")"
grep -q "^preset 2: " "$TMP/presets.out" || fail "Program Change 1 did not select preset 2: $(cat "$TMP/presets.out")"
grep -q "no such preset" "$TMP/presets.err" || fail "an unknown preset was not reported"
grep -q "preset 99: expected 1\.\." "$TMP/presets.err" || fail "preset 99 was not reported"

# --- bad input: clear messages, never a crash ---
echo '{"format": "parnassus-live-map/1", "bindings": [{"source": "cc"' >"$TMP/bad-map.json"
echo quit | live --no-synth --map "$TMP/bad-map.json" >/dev/null 2>"$TMP/badmap.err" ||
    fail "a bad map stopped the app: $(cat "$TMP/badmap.err")"
grep -q "bad-map.json" "$TMP/badmap.err" || fail "bad map not named: $(cat "$TMP/badmap.err")"
if echo quit | live --no-synth --rules "$TMP/missing.json" >/dev/null 2>"$TMP/rules.err"; then
    fail "a missing rule set was accepted"
fi
grep -q "missing.json" "$TMP/rules.err" || fail "missing rules not named: $(cat "$TMP/rules.err")"
printf '{ "format": "parnassus-rules/1",\n  "rules": [ oops ] }\n' >"$TMP/broken.json"
if echo quit | live --no-synth --rules "$TMP/broken.json" >/dev/null 2>"$TMP/broken.err"; then
    fail "a broken rule set was accepted"
fi
grep -q "broken.json: line 2" "$TMP/broken.err" || fail "broken rules not named: $(cat "$TMP/broken.err")"
if echo quit | live --no-synth --midi-in-file "$TMP/missing.mid" >/dev/null 2>"$TMP/mid.err"; then
    fail "a missing MIDI file was accepted"
fi
grep -q "missing.mid" "$TMP/mid.err" || fail "missing MIDI file not named: $(cat "$TMP/mid.err")"
echo quit | live --no-synth --midi-in nothing-like-this >/dev/null 2>"$TMP/dev.err" ||
    fail "a missing MIDI device stopped the app: $(cat "$TMP/dev.err")"
grep -q "nothing-like-this" "$TMP/dev.err" || fail "device not named: $(cat "$TMP/dev.err")"
if live --no-synth --set nope=1 </dev/null >/dev/null 2>"$TMP/set.err"; then
    fail "an unknown knob was accepted"
fi
grep -q "nope" "$TMP/set.err" || fail "unknown knob not named"
if live --no-synth --set seed=soon </dev/null >/dev/null 2>"$TMP/set.err"; then
    fail "a knob value that is not a number was accepted"
fi
grep -q "seed=soon" "$TMP/set.err" || fail "the bad knob value not named: $(cat "$TMP/set.err")"
# --- the audio device goes away while playing (last: it takes the server) ---
live_session gone --no-synth --midi-out-file "$TMP/gone.txt"
sleep 1.2
kill "$JACKD_PID"
wait "$JACKD_PID" 2>/dev/null || true
JACKD_PID=
for _ in $(seq 100); do
    kill -0 "$SESSION_PID" 2>/dev/null || break
    sleep 0.1
done
exec 3>&-
if wait "$SESSION_PID"; then
    fail "the app went on as if nothing happened when its device went away"
fi
grep -q "audio stream stopped" "$TMP/gone.err" || fail "device loss not reported: $(cat "$TMP/gone.err")"
"$PY" - "$TMP/gone.txt" <<'PYEOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith('#')]
balance = {}
for r in rows:
    status, key, vel = int(r[2], 16), int(r[3], 16), int(r[4], 16)
    if status & 0xF0 == 0x90 and vel > 0:
        balance[(status & 15, key)] = balance.get((status & 15, key), 0) + 1
    elif status & 0xF0 in (0x80, 0x90):
        balance[(status & 15, key)] = balance.get((status & 15, key), 0) - 1
assert rows, "nothing was played"
assert all(v == 0 for v in balance.values()), ("notes left hanging", balance)
PYEOF

echo "parnassus-live: all checks passed"
