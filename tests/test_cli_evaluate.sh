#!/usr/bin/env bash
# Tests of `parnassus evaluate` and `parnassus baseline` (docs/evaluate.md):
# hand-made MIDI files with known figures, chorale files, the JSON
# document, plots, --save round trips, the reference data and its lookup,
# the baseline's MIDI output, and every error with its status and message.
#
# usage: test_cli_evaluate.sh PARNASSUS DATA_DIR
#   DATA_DIR is tests/data (chorales in DATA_DIR/learn and DATA_DIR/corpus).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 PARNASSUS DATA_DIR" >&2
    exit 2
fi
PN=$1
DATA=$2
PY=/usr/bin/python3
CHORALES=$DATA/learn/chorales.json
SMALL=$DATA/corpus/valid.json

source "$(dirname "$0")/cli_lib.sh" cli-evaluate

# usage_error CMD NAME ARGS...: status 2, a pointer to the help, no stdout.
usage_error() {
    local cmd=$1 name=$2
    shift 2
    run_pn 2 "$name" "$cmd" "$@"
    check "$name: stderr points to help" has "$ERR" "see 'parnassus $cmd --help'"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# bad_input CMD NAME FRAGMENT ARGS...: status 2, the message starts with the
# command and contains FRAGMENT, nothing on stdout.
bad_input() {
    local cmd=$1 name=$2 fragment=$3
    shift 3
    run_pn 2 "$name" "$cmd" "$@"
    check "$name: message" has "$ERR" "$fragment"
    check "$name: starts with the command" has "$ERR" "parnassus $cmd: "
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# py SCRIPT ARGS...: runs a Python check; a failed assertion fails the test.
py() {
    local name=$1
    shift
    if "$PY" - "$@" 2>"$TMP/py.err"; then
        ok
    else
        not_ok "$name"
        sed 's/^/    python: /' "$TMP/py.err" >&2
    fi
}

# Standard MIDI Files written byte by byte: smf.py OUT FORMAT TRACK...
# where each TRACK is "delta:status:key:velocity,..." (decimal).
cat >"$TMP/smf.py" <<'EOF'
import struct, sys
def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))
path, fmt, tracks = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
data = b"MThd" + struct.pack(">IHHH", 6, fmt, len(tracks), 480)
for t in tracks:
    body = b""
    for ev in filter(None, t.split(",")):
        d, s, k, v = (int(x) for x in ev.split(":"))
        body += vlq(d) + bytes([s, k, v])
    body += b"\x00\xff\x2f\x00"
    data += b"MTrk" + struct.pack(">I", len(body)) + body
open(path, "wb").write(data)
EOF

# The length in ticks of a format-1 file (the latest end-of-track) and the
# number of tracks that hold notes.
cat >"$TMP/midi_length.py" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"MThd"
ntracks = struct.unpack(">H", data[10:12])[0]
pos, longest, with_notes = 14, 0, 0
for _ in range(ntracks):
    assert data[pos:pos + 4] == b"MTrk"
    end = pos + 8 + struct.unpack(">I", data[pos + 4:pos + 8])[0]
    pos += 8
    t, running, notes = 0, 0, 0
    while pos < end:
        d = 0
        while True:
            b = data[pos]; pos += 1
            d = d << 7 | (b & 0x7F)
            if not b & 0x80:
                break
        t += d
        s = data[pos]
        if s & 0x80:
            pos += 1
        else:
            s = running
        if s == 0xFF:
            kind, n = data[pos], data[pos + 1]
            pos += 2 + n
            if kind == 0x2F:
                break
        elif s >= 0xF0:
            raise SystemExit("unexpected status")
        else:
            running = s
            if s & 0xF0 == 0x90 and data[pos + 1] > 0:
                notes += 1
            pos += 1 if s & 0xE0 == 0xC0 else 2
    pos = end
    longest = max(longest, t)
    with_notes += notes > 0
print(longest, with_notes)
EOF

# --- help ---------------------------------------------------------------------

run_pn 0 "evaluate help" evaluate --help
check "evaluate help: usage" has "$OUT" "usage: parnassus evaluate INPUT... [options]"
check "evaluate help: --reference" has "$OUT" "--reference R"
run_pn 0 "baseline help" baseline --help
check "baseline help: usage" has "$OUT" "usage: parnassus baseline CORPUS -o OUT.mid [options]"
run_pn 0 "command list" --help
check "command list: evaluate" has "$OUT" "  evaluate "
check "command list: baseline" has "$OUT" "  baseline "
run_pn 0 "help evaluate" help evaluate
check "help evaluate: usage" has "$OUT" "usage: parnassus evaluate"

# --- a hand-made piece with known figures -------------------------------------

# Two voices on two tracks: C5 D5 over F4 G4, a parallel fifth.
"$PY" "$TMP/smf.py" "$TMP/fifths.mid" 1 \
    "0:144:72:80,480:128:72:0,0:144:74:80,480:128:74:0" \
    "0:145:65:80,480:129:65:0,0:145:67:80,480:129:67:0"
run_pn 0 "fifths: table" evaluate "$TMP/fifths.mid" --reference none
check "fifths: input line" has "$OUT" "fifths.mid: 1 piece, 2 sonorities, 2 voices from tracks"
check "fifths: parallels row" has "$OUT" "parallel 5ths and 8ves         100.00%"
check "fifths: no reference" has "$OUT" "reference   none"
run_pn 0 "fifths: json" evaluate "$TMP/fifths.mid" --reference none --json
py "fifths: figures" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "parnassus-evaluate/1"
assert d["reference"] is None and d["training"] is None
src = d["inputs"][0]
assert src["kind"] == "midi" and src["labels"] == "tracks" and src["voices"] == 2, src
assert d["input"]["sonorities"] == 2 and d["input"]["pieces"] == 1
r = d["rates"]
assert r["parallels"]["input"] == 1.0 and r["parallels"]["input_total"] == 1
assert r["parallel_fifths"]["input"] == 1.0 and r["parallel_octaves"]["input"] == 0.0
assert r["crossing"]["input"] == 0.0 and r["crossing"]["input_total"] == 2
assert r["hidden"]["input"] == 0.0
assert r["copy4"]["input"] is None and r["wide"]["input"] is None
D = d["distributions"]
assert D["chord"]["input"] == {"0,7": 1.0}, D["chord"]
assert D["soprano_motion"]["input"] == {"2": 1.0}
assert D["bass_motion"]["input"] == {"2": 1.0}
assert D["voices"]["input"] == {"2": 1.0}
assert D["chord"]["tv"] is None and D["chord"]["reference"] is None
assert d["ranges"]["soprano"]["input"] == [72, 72, 74]
assert d["ranges"]["alto"]["input"] is None
EOF

# The same notes on one track and one channel: unlabelled, so no crossing.
"$PY" "$TMP/smf.py" "$TMP/plain.mid" 0 \
    "0:144:72:80,0:144:65:80,480:128:72:0,0:128:65:0,0:144:74:80,0:144:67:80,480:128:74:0,0:128:67:0"
run_pn 0 "unlabelled: json" evaluate "$TMP/plain.mid" --reference none --json
py "unlabelled: no crossing" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["inputs"][0]["labels"] == "none"
assert d["rates"]["crossing"]["input"] is None and d["rates"]["crossing"]["input_total"] == 0
assert d["rates"]["parallels"]["input"] == 1.0
EOF

# Crossing voices on two channels of one track: the second voice above.
"$PY" "$TMP/smf.py" "$TMP/crossed.mid" 0 \
    "0:144:60:80,0:145:64:80,480:128:60:0,0:129:64:0,0:144:67:80,0:145:60:80,480:128:67:0,0:129:60:0"
run_pn 0 "crossing: json" evaluate "$TMP/crossed.mid" --reference none --json
py "crossing: one of two" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["inputs"][0]["labels"] == "channels", d["inputs"][0]
c = d["rates"]["crossing"]
assert c["input_count"] == 1 and c["input_total"] == 2, c
EOF

# --- chorale files --------------------------------------------------------------

run_pn 0 "chorales: valid split" evaluate "$CHORALES" --split valid --reference none --json
py "chorales: figures" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
src = d["inputs"][0]
assert src["kind"] == "chorales" and src["pieces"] == 1 and src["sonorities"] == 4, src
D = d["distributions"]
third = 1 / 3
sop = D["soprano_motion"]["input"]
assert set(sop) == {"0", "-1", "1"} and all(abs(v - third) < 1e-12 for v in sop.values()), sop
assert d["input"]["pieces_minor"] == 1
assert abs(sum(D["tonal_minor"]["input"].values()) - 1) < 1e-12
assert D["tonal_major"]["input"] == {}
assert d["rates"]["crossing"]["input_total"] == 4
EOF
run_pn 0 "chorales: mode filter" evaluate "$CHORALES" --split train --mode major --reference none \
    --json
py "chorales: major train" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["input"]["pieces"] == d["input"]["pieces_major"] >= 1
assert d["input"]["pieces_minor"] == 0
EOF

# copy4 against the chorales' own train split: everything is copied.
run_pn 0 "training: chorales" evaluate "$CHORALES" --split train --training "$CHORALES" \
    --reference none --json
py "training: copy4 of the training set itself" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["rates"]["copy4"]
assert c["input"] == 1.0 and c["input_total"] == 3, c
assert d["training"]["grams"] == 3 and "train split of chorales.json" in d["training"]["description"]
EOF

# --- the shipped reference and its lookup ---------------------------------------

run_pn 0 "reference: default major" evaluate "$TMP/fifths.mid"
check "reference: named" has "$OUT" "reference   chorales-major (chorales-major.json): valid split"
check "reference: copy4 set" has "$OUT" "copy4 with  train split of"
run_pn 0 "reference: minor json" evaluate "$CHORALES" --reference minor --json
py "reference: minor figures" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ref = d["reference"]
assert ref["name"] == "chorales-minor" and ref["mode"] == "minor", ref
assert ref["pieces_minor"] == ref["pieces"] > 0 and ref["sonorities"] > 1000
assert d["training"]["grams"] > 1000
# the shipped reference holds the key areas: minor chorales most often in i
areas = d["distributions"]["key_area"]
assert areas["reference_count"] > 1000, areas
assert max(areas["reference"], key=areas["reference"].get) == "i", areas["reference"]
for name, dist in d["distributions"].items():
    tv = dist["tv"]
    assert tv is None or 0 <= tv <= 1, (name, tv)
    if dist["input_count"]:
        assert abs(sum(dist["input"].values()) - 1) < 1e-9, name
    if dist["reference_count"]:
        assert abs(sum(dist["reference"].values()) - 1) < 1e-9, name
for name, r in d["rates"].items():
    for side in ("input", "reference"):
        assert r[side] is None or 0 <= r[side] <= 1, (name, r)
    assert r["reference"] is not None or name == "copy4" or r["reference_total"] == 0
EOF

# --- --save round trips, a reference of one's own, PARNASSUS_DATA_DIR ----------

run_pn 0 "save" evaluate "$CHORALES" --split train --reference none --training "$CHORALES" \
    --save "$TMP/own.json" --name own-set
check "save: file" test -s "$TMP/own.json"
run_pn 0 "save: json of the input" evaluate "$CHORALES" --split train --reference none --json
cp "$OUT" "$TMP/direct.json"
run_pn 0 "save: json of the saved file" evaluate "$TMP/own.json" --reference none --json
cp "$OUT" "$TMP/saved.json"
py "save: the same figures" "$TMP/direct.json" "$TMP/saved.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["input"] == b["input"]
assert a["distributions"] == b["distributions"]
for name in a["rates"]:
    if name != "copy4":
        assert a["rates"][name] == b["rates"][name], name
assert b["inputs"][0]["kind"] == "statistics"
EOF
py "save: the file" "$TMP/own.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "parnassus-style/1" and d["name"] == "own-set"
assert d["description"] == "train split of chorales.json, any mode: 3 chorales", d["description"]
assert len(d["training"]["hashes"]) == 3 and d["training"]["grams"] == 4
assert d["rates"]["copy4"] == {"count": 3, "total": 3}
EOF
run_pn 0 "save: again" evaluate "$CHORALES" --split train --reference none --training "$CHORALES" \
    --save "$TMP/own2.json" --name own-set
check "save: the same bytes" cmp -s "$TMP/own.json" "$TMP/own2.json"
run_pn 0 "own reference" evaluate "$CHORALES" --split train --reference "$TMP/own.json" --json
py "own reference: distance 0" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for name, dist in d["distributions"].items():
    assert dist["tv"] is None or dist["tv"] == 0, (name, dist["tv"])
assert d["rates"]["copy4"]["input"] == 1.0
assert d["reference"]["name"] == "own-set"
EOF
run_pn 0 "training from a statistics file" evaluate "$TMP/fifths.mid" "$CHORALES" --split train \
    --reference none --training "$TMP/own.json" --json
py "pooled inputs" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["kind"] for s in d["inputs"]] == ["midi", "chorales"]
assert d["input"]["pieces"] == 4 and d["input"]["sonorities"] == 2 + 12
assert d["rates"]["copy4"]["input_total"] == 3
EOF
mkdir -p "$TMP/data/reference"
cp "$TMP/own.json" "$TMP/data/reference/chorales-major.json"
PARNASSUS_DATA_DIR=$TMP/data run_pn 0 "PARNASSUS_DATA_DIR" evaluate "$TMP/fifths.mid"
check "PARNASSUS_DATA_DIR: its reference" has "$OUT" "reference   own-set (chorales-major.json)"
PARNASSUS_DATA_DIR=$TMP/nowhere run_pn 0 "PARNASSUS_DATA_DIR elsewhere" evaluate "$TMP/fifths.mid"
check "PARNASSUS_DATA_DIR elsewhere: the shipped one" has "$OUT" "reference   chorales-major ("

# --- plots ------------------------------------------------------------------------

run_pn 0 "plot png" evaluate "$TMP/fifths.mid" "$CHORALES" --plot "$TMP/style.png"
py "plot png: a 1600 x 1730 PNG" "$TMP/style.png" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
assert int.from_bytes(data[16:20], "big") == 1600 and int.from_bytes(data[20:24], "big") == 1730
EOF
run_pn 0 "plot svg" evaluate "$TMP/fifths.mid" --reference none --plot "$TMP/style.SVG"
py "plot svg: an SVG" "$TMP/style.SVG" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
assert data.startswith(b"<?xml") and b"<svg" in data[:400] and len(data) > 20000
EOF

# --- baseline -----------------------------------------------------------------------

run_pn 0 "baseline" baseline "$CHORALES" --mode any --steps 16 --seed 3 -o "$TMP/b.mid"
check "baseline: summary" has "$OUT" "wrote $TMP/b.mid: 16 sonorities of 4 voices, 1/8 notes at 120 bpm, seed 3"
check "baseline: chain" has "$OUT" "chain: "
check "baseline: corpus" has "$OUT" "corpus: chorales.json: 3 chorales (train)"
check "baseline: 16 eighths long, 4 voices" test "$("$PY" "$TMP/midi_length.py" "$TMP/b.mid")" = "3840 4"
run_pn 0 "baseline: same seed" baseline "$CHORALES" --mode any --steps 16 --seed 3 -o "$TMP/b2.mid"
check "baseline: same seed, same file" cmp -s "$TMP/b.mid" "$TMP/b2.mid"
run_pn 0 "baseline: division" baseline "$SMALL" --mode any --split all --steps 5 --division 4 \
    --bpm 90 --kappa 0 --tonic keep -o "$TMP/b3.mid"
check "baseline: 5 quarters" test "$("$PY" "$TMP/midi_length.py" "$TMP/b3.mid")" = "2400 4"
run_pn 0 "baseline: evaluated" evaluate "$TMP/b.mid" --json
py "baseline: a labelled run" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
src = d["inputs"][0]
assert src["labels"] == "tracks" and src["voices"] == 4 and 1 <= src["sonorities"] <= 16, src
assert d["rates"]["copy4"]["input"] is not None
EOF

# --- errors ---------------------------------------------------------------------------

usage_error evaluate "no input"
check "no input: says so" has "$ERR" "missing INPUT"
usage_error evaluate "bad split" "$CHORALES" --split dev
usage_error evaluate "bad mode" "$CHORALES" --mode dorian
check "bad mode: names it" has "$ERR" "--mode must be major, minor or any (got 'dorian')"
usage_error evaluate "bad plot name" "$CHORALES" --plot out.pdf
check "bad plot name: says why" has "$ERR" "--plot: 'out.pdf' must end in .png or .svg"
usage_error evaluate "name without save" "$CHORALES" --name x
usage_error evaluate "unknown option" "$CHORALES" --colour red
usage_error evaluate "missing value" "$CHORALES" --reference

bad_input evaluate "missing file" "$TMP/nope.mid" "$TMP/nope.mid" --reference none
echo "not midi" >"$TMP/text.mid"
bad_input evaluate "not MIDI" "$TMP/text.mid: not a Standard MIDI File" "$TMP/text.mid"
"$PY" "$TMP/smf.py" "$TMP/silent.mid" 1 ""
bad_input evaluate "no notes" "$TMP/silent.mid: the file holds no notes" "$TMP/silent.mid"
printf '{"train": [[[60, 64, 67]]]}' >"$TMP/three.json"
bad_input evaluate "bad chorales" "three.json: train[0][0]: step has 3 voices, expected 4" \
    "$TMP/three.json"
printf '{"train": [' >"$TMP/cut.json"
bad_input evaluate "cut JSON" "cut.json: line 1 column" "$TMP/cut.json"
bad_input evaluate "nothing left" "no sonorities to measure" "$CHORALES" --split valid --mode major
printf '{"format": "parnassus-style/9"}' >"$TMP/v9.json"
bad_input evaluate "statistics version" \
    "v9.json: format: \"parnassus-style/9\" is not supported (only \"parnassus-style/1\")" \
    "$TMP/v9.json"
printf '{"format": "parnassus-style/1", "distributions": {"chord": {"0,13": 1}}}' >"$TMP/badbin.json"
bad_input evaluate "statistics field" "badbin.json: distributions.chord[\"0,13\"]: not a chord type" \
    "$TMP/badbin.json"
bad_input evaluate "bad reference" "badbin.json: distributions.chord" "$CHORALES" \
    --reference "$TMP/badbin.json"
bad_input evaluate "missing reference" "$TMP/none.json" "$CHORALES" --reference "$TMP/none.json"
printf '{"format": "parnassus-style/1"}' >"$TMP/bare.json"
bad_input evaluate "training without a set" "bare.json: holds no training set" "$CHORALES" \
    --training "$TMP/bare.json"
bad_input evaluate "training from MIDI" "fifths.mid: a training set is a chorale file" "$CHORALES" \
    --training "$TMP/fifths.mid"
printf '{"valid": []}' >"$TMP/notrain.json"
bad_input evaluate "training without train split" "notrain.json: no \"train\" split" "$CHORALES" \
    --training "$TMP/notrain.json"
run_pn 2 "save unwritable" evaluate "$CHORALES" --reference none --save "$TMP/no/dir/s.json"
check "save unwritable: names it" has "$ERR" "--save $TMP/no/dir/s.json: cannot write"
check "save unwritable: nothing on stdout" test ! -s "$OUT"
run_pn 2 "plot unwritable" evaluate "$CHORALES" --reference none --plot "$TMP/no/dir/p.png"
check "plot unwritable: names it" has "$ERR" "$TMP/no/dir/p.png"

usage_error baseline "baseline: no corpus" -o "$TMP/x.mid"
usage_error baseline "baseline: no output" "$CHORALES"
check "baseline: no output: says so" has "$ERR" "missing -o OUT.mid"
usage_error baseline "baseline: bad kappa" "$CHORALES" -o "$TMP/x.mid" --kappa -1
check "baseline: bad kappa: range" has "$ERR" "--kappa must be within [0, 1e+12] (got -1)"
usage_error baseline "baseline: bad steps" "$CHORALES" -o "$TMP/x.mid" --steps 0
usage_error baseline "baseline: fractional steps" "$CHORALES" -o "$TMP/x.mid" --steps 2.5
usage_error baseline "baseline: bad division" "$CHORALES" -o "$TMP/x.mid" --division 3
usage_error baseline "baseline: bad seed" "$CHORALES" -o "$TMP/x.mid" --seed -1
usage_error baseline "baseline: bad tonic" "$CHORALES" -o "$TMP/x.mid" --tonic H
usage_error baseline "baseline: too long" "$CHORALES" -o "$TMP/x.mid" --steps 1000000 --division 1
check "baseline: too long: says why" has "$ERR" "longer than a MIDI file holds"
usage_error baseline "baseline: bad split" "$CHORALES" -o "$TMP/x.mid" --split dev
bad_input baseline "baseline: missing corpus" "$TMP/nope.json" "$TMP/nope.json" -o "$TMP/x.mid"
bad_input baseline "baseline: no piece of the mode" "no piece left to learn from" "$CHORALES" \
    --split valid --mode major -o "$TMP/x.mid"
check "baseline: no file written" test ! -e "$TMP/x.mid"
run_pn 2 "baseline: unwritable" baseline "$CHORALES" --mode any -o "$TMP/no/dir/b.mid"
check "baseline: unwritable: names it" has "$ERR" "$TMP/no/dir/b.mid: cannot write"

cli_finish
