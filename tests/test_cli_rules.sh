#!/usr/bin/env bash
# Tests of the parnassus command line on rule sets (docs/cli.md): solve and
# path on "parnassus-rules/1" files, --context, solve --plot-errors and
# analyze on a MIDI file and on a chorale JSON file.
#
# usage: test_cli_rules.sh PARNASSUS DATA_DIR
#   DATA_DIR is tests/data (the rule sets are in DATA_DIR/cli-rules).
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 PARNASSUS DATA_DIR" >&2
    exit 2
fi
PN=$1
DATA=$2/cli-rules
PY=/usr/bin/python3
PLAIN=$DATA/plain.json
CONTEXT=$DATA/context.json
FOUR=$DATA/four.json
INSTANCE=$2/cli/three-rules.txt

source "$(dirname "$0")/cli_lib.sh" cli-rules

# bad_input NAME NEEDLE ARGS...: exit 2, NEEDLE in the message, nothing on stdout
bad_input() {
    local name=$1 needle=$2
    shift 2
    run_pn 2 "$name" "$@"
    check "$name: message names '$needle'" has "$ERR" "$needle"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# py NAME SCRIPT [ARGS...]: runs a python check on $OUT
py() {
    local name=$1 script=$2
    shift 2
    if "$PY" -c "$script" "$@" <"$OUT"; then ok; else not_ok "$name"; fi
}


# A Standard MIDI File, one track per voice, each voice a comma-separated
# list of pitches (or R), one quarter note each.
cat >"$TMP/mkmid.py" <<'EOF'
import struct, sys
def vlq(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))
def track(events):
    data = b"".join(events) + b"\x00\xff\x2f\x00"
    return b"MTrk" + struct.pack(">I", len(data)) + data
out, voices = sys.argv[1], sys.argv[2:]
tracks = [track([b"\x00\xff\x51\x03\x07\xa1\x20"])]
for ch, text in enumerate(voices):
    events, wait = [], 0
    for p in text.split(","):
        if p == "R":
            wait += 480
            continue
        events.append(vlq(wait) + bytes([0x90 | ch, int(p), 80]))
        events.append(vlq(480) + bytes([0x80 | ch, int(p), 0]))
        wait = 0
    tracks.append(track(events))
open(out, "wb").write(b"MThd" + struct.pack(">IHHH", 6, 1, len(tracks), 480) + b"".join(tracks))
EOF

# --- help ---------------------------------------------------------------------

run_pn 0 "solve --help" solve --help
check "solve --help: --context" has "$OUT" "--context"
check "solve --help: --plot-errors" has "$OUT" "--plot-errors"
run_pn 0 "path --help" path --help
check "path --help: --context" has "$OUT" "--context"
run_pn 0 "analyze --help" analyze --help
check "analyze --help: usage" has "$OUT" "usage: parnassus analyze RULES PIECE"
run_pn 0 "help analyze" help analyze
check "help analyze: --context-mode" has "$OUT" "--context-mode"

# --- solve and path on a rule set -------------------------------------------

run_pn 0 "solve rule set (report)" solve "$PLAIN"
for word in "rule set        plain: 2 voices, 36 sonorities" "context         none" \
    soprano-pc interval bass span "mod12(diff(w(2,1)))" "abs(diff(w(2,1)))" feature; do
    check "solve rule set report shows '$word'" has "$OUT" "$word"
done
check "solve rule set report: status first" grep -qE '^status +(solved|limit_cycle|max_iterations)$' "$OUT"

run_pn 0 "solve rule set --json" solve "$PLAIN" --json
py "solve rule set --json: schema" '
import json, sys
d = json.load(sys.stdin)
assert d["format"] == "parnassus-solve/1"
i = d["instance"]
assert i["form"] == "rules" and i["rule_set"] == "plain" and i["voices"] == 2, i
assert i["n"] == 36 and i["num_rules"] == 4 and i["num_rows"] == sum(r["size"] for r in d["rules"])
assert i["context"] is None and i["has_context_rules"] is False
assert [r["name"] for r in d["rules"]] == ["soprano-pc", "interval", "bass", "span"]
assert [r["feature"] for r in d["rules"]] == ["mod12(w(1))", "mod12(diff(w(2,1)))", "w(2)", "abs(diff(w(2,1)))"]
assert all(r["context"] is None for r in d["rules"])
assert "nonselective" not in d
assert d["num_selected"] == sum(r["selected"] for r in d["rules"]) >= 1'

run_pn 0 "solve rule set --solution" solve "$PLAIN" --solution "$TMP/plain.sol"
check "solve rule set --solution: q and w blocks" "$PY" -c '
import sys
lines = open(sys.argv[1]).read().split("\n")[:-1]
assert lines[0].startswith("# q: 36 values"), lines[0]
w = [i for i, l in enumerate(lines) if l.startswith("# w: ")][0]
q = [float(x) for x in lines[1:w]]
assert len(q) == 36 and abs(sum(q) - 1) < 1e-9
assert lines[w] == "# w: %d values, one per rule component" % (len(lines) - w - 1)' "$TMP/plain.sol"

run_pn 0 "path rule set (table)" path "$PLAIN"
check "path rule set: rule set line" has "$OUT" "rule set plain, context none"
check "path rule set: features listed" has "$OUT" "rule 4: span = abs(diff(w(2,1)))"
check "path rule set: rows" grep -qE '^ +-?[0-9]+\.[0-9]+ +[0-9.e+-]+ +[0-9]+  (yes|no) +' "$OUT"

run_pn 0 "path rule set --json --csv --plot" path "$CONTEXT" --json --csv "$TMP/ctx.csv" \
    --plot "$TMP/ctx-path.svg"
py "path rule set --json: names and features" '
import json, sys
d = json.load(sys.stdin)
assert d["format"] == "parnassus-path/1"
assert d["rules"] == ["step", "bass", "octave"], d["rules"]
assert d["rule_features"] == ["w(1)", "w(2)", "mod12(diff(w(2,1)))"]
assert d["instance"]["form"] == "rules" and d["instance"]["has_context_rules"] is True
assert d["instance"]["context"] is None and len(d["points"]) >= 5'
check "path rule set --csv: header names the rules" grep -q '^log2_lambda_w,.*,norm_step,norm_bass,norm_octave,error_step,error_bass,error_octave$' "$TMP/ctx.csv"
check "path rule set --plot svg" check_image "$TMP/ctx-path.svg"

# --- --context ------------------------------------------------------------------

# rule_errors FILE: the per-rule errors of the solve document in $OUT
run_pn 0 "solve without context" solve "$CONTEXT" --json --solution "$TMP/none.sol"
cp "$OUT" "$TMP/none.json"
run_pn 0 "solve --context 60,48" solve "$CONTEXT" --json --context 60,48 --solution "$TMP/c60.sol"
cp "$OUT" "$TMP/c60.json"
py "--context: recorded and changes the step rule" '
import json, sys
d = json.load(sys.stdin)
none = json.load(open(sys.argv[1]))
assert d["instance"]["context"] == [60, 48], d["instance"]["context"]
e = {r["name"]: r["error"] for r in d["rules"]}
e0 = {r["name"]: r["error"] for r in none["rules"]}
# the back-off wants soprano C (60); after C the rule wants D (62)
assert abs(e["step"] - e0["step"]) > 0.1, (e, e0)
# rules without a context keep their targets
assert abs(e["bass"] - e0["bass"]) < 1e-6 and abs(e["octave"] - e0["octave"]) < 1e-6' "$TMP/none.json"
check "--context: a different realization" test "$(cat "$TMP/none.sol")" != "$(cat "$TMP/c60.sol")"

run_pn 0 "solve --context with an unlisted context" solve "$CONTEXT" --json --context=61,48 \
    --solution "$TMP/c61.sol"
check "unlisted context: same as the first-step targets" cmp -s "$TMP/none.sol" "$TMP/c61.sol"
run_pn 0 "solve --context with rests" solve "$CONTEXT" --context R,r
check "--context with rests: shown" has "$OUT" "context         R,R"
run_pn 0 "path --context" path "$CONTEXT" --context 62,52 --json
py "path --context: recorded" '
import json, sys
d = json.load(sys.stdin)
assert d["instance"]["context"] == [62, 52]'

# a context changes the realization the way the rule says: with the
# octave rule dropped (small lambda_w keeps the largest consistent subset),
# the soprano after E (64) is C (60)
run_pn 0 "solve --context 64,48 report" solve "$CONTEXT" --context 64,48
check "solve --context: report line" has "$OUT" "context         64,48"

bad_input "--context: too few pitches" "expected 2 pitches" solve "$CONTEXT" --context 60
bad_input "--context: too many pitches" "got 3" solve "$CONTEXT" --context 60,48,50
bad_input "--context: above the voice's range" "pitch 70 of voice 1 is outside" \
    solve "$CONTEXT" --context 70,48
bad_input "--context: below the voice's range" "voice 2" path "$CONTEXT" --context 60,20
for junk in 6x,48 60,,48 60,48, ,60 -1,48 128,48 x 60.5,48 "60, 48"; do
    bad_input "--context: junk '$junk'" "--context" solve "$CONTEXT" "--context=$junk"
done
bad_input "--context: more than 8 pitches" "more than 8" solve "$CONTEXT" \
    --context 60,60,60,60,60,60,60,60,60
bad_input "--context on an instance file" "needs a rule set" solve "$INSTANCE" --context 60,48
check "--context usage errors point to help" has "$ERR" "see 'parnassus solve --help'"

# --- bad rule sets --------------------------------------------------------------

printf '{ "format": "parnassus-rules/1", "name": "x", "rules": [ }\n' >"$TMP/syntax.json"
bad_input "solve: rule set with a syntax error" "syntax.json: line 1" solve "$TMP/syntax.json"
printf '  \n{"format": "parnassus-rules/1", "name": "x", "space": {"ranges": [[60,61]]},\n "rules": [{"name": "a", "feature": "w(1)", "targets": {"60": 0.5}}]}\n' \
    >"$TMP/sum.json"
bad_input "path: rule set with a bad sum" "sum.json: rules[0].targets: probabilities sum" \
    path "$TMP/sum.json"
bad_input "solve --context on a bad rule set" "sum.json" solve "$TMP/sum.json" --context 60

# --- solve --plot-errors ----------------------------------------------------------

run_pn 0 "solve --plot-errors png --json" solve "$FOUR" --json --plot-errors "$TMP/errors.png"
check "--plot-errors png" check_image "$TMP/errors.png"
py "--plot-errors: non-selective errors in the document" '
import json, sys
d = json.load(sys.stdin)
assert d["nonselective"]["weights"] == "uniform"
rules = d["rules"]
assert all(r["nonselective_error"] > 0 for r in rules)
sel = [r for r in rules if r["selected"]]
assert sel and len(sel) < len(rules), "expected a real selection"
# the selective realization follows its selected rules much more closely
assert sum(r["error"] for r in sel) < 0.5 * sum(r["nonselective_error"] for r in sel)'
run_pn 0 "solve --plot-errors svg (report)" solve "$PLAIN" --plot-errors="$TMP/errors.svg"
check "--plot-errors svg" check_image "$TMP/errors.svg"
check "--plot-errors report: non-selective column" has "$OUT" "non-selective"
run_pn 0 "solve --plot-errors on an instance file" solve "$INSTANCE" --plot-errors "$TMP/inst.png"
check "--plot-errors on an instance file" check_image "$TMP/inst.png"
bad_input "--plot-errors: unknown format" "must end in .png or .svg" \
    solve "$PLAIN" --plot-errors "$TMP/errors.pdf"
check "--plot-errors: nothing written" test ! -e "$TMP/errors.pdf"
run_pn 2 "--plot-errors into a missing directory" solve "$PLAIN" --plot-errors "$TMP/no/dir.png"
check "--plot-errors unwritable: named" has "$ERR" "$TMP/no/dir.png"

# --- analyze ----------------------------------------------------------------------

# A piece that follows "step" (soprano C D E C D E ...) and "bass" (48 and
# 52 equally often) of context.json, but not "octave".
soprano=$("$PY" -c 'print(",".join(["60,62,64"] * 8))')
bass=$("$PY" -c 'print(",".join(["48,52,48,52,48,52"] * 4))')
"$PY" "$TMP/mkmid.py" "$TMP/follow.mid" "$soprano" "$bass"

run_pn 0 "analyze a MIDI file" analyze "$CONTEXT" "$TMP/follow.mid" --tonic keep
for word in "analysis of" "followed" "|A_r q - b_r|_2" "targets         context" step bass octave; do
    check "analyze report shows '$word'" has "$OUT" "$word"
done
check "analyze report: 24 steps in the space" has "$OUT" "24 in the space, 0 outside"

cat >"$TMP/validate_analyze.py" <<'EOF'
import json, math, sys
d = json.load(sys.stdin)
num = (int, float)
assert d["format"] == "parnassus-analyze/1"
for key in ("rules_file", "rule_set", "context_mode"):
    assert isinstance(d[key], str), key
assert d["context_mode"] in ("context", "unconditional")
for key in ("log2_lambda_w", "lambda_w", "alpha", "weighted_error"):
    assert isinstance(d[key], num) and not isinstance(d[key], bool) and math.isfinite(d[key]), key
c = d["corpus"]
for key in ("pieces", "steps", "steps_counted", "steps_outside", "grid"):
    assert isinstance(c[key], int) and c[key] >= 0, key
assert c["steps"] == c["steps_counted"] + c["steps_outside"]
assert isinstance(d["group_selective"], bool)
rules = d["rules"]
assert [r["number"] for r in rules] == list(range(1, len(rules) + 1))
for r in rules:
    assert isinstance(r["name"], str) and isinstance(r["feature"], str)
    assert r["context"] is None or isinstance(r["context"], str)
    assert isinstance(r["followed"], bool) and isinstance(r["size"], int)
    assert r["error"] >= 0 and r["group_norm"] >= 0
    assert r["followed"] == (r["group_norm"] > 0)
assert d["num_followed"] == sum(r["followed"] for r in rules)
EOF
validate_analyze() { "$PY" "$TMP/validate_analyze.py" <"$OUT"; }

run_pn 0 "analyze --json (MIDI)" analyze "$CONTEXT" "$TMP/follow.mid" --tonic keep --json
check "analyze --json: schema" validate_analyze
py "analyze: the piece follows step and bass exactly, not octave" '
import json, sys
d = json.load(sys.stdin)
assert d["context_mode"] == "context"
assert d["corpus"]["steps_counted"] == 24 and d["corpus"]["steps_outside"] == 0
r = {x["name"]: x for x in d["rules"]}
assert r["step"]["error"] < 1e-9 and r["bass"]["error"] < 1e-9, r
assert r["step"]["followed"] and r["bass"]["followed"]
assert r["octave"]["error"] > 0.5 and not r["octave"]["followed"]'

run_pn 0 "analyze --context-mode unconditional" analyze "$CONTEXT" "$TMP/follow.mid" \
    --tonic keep --json --context-mode unconditional
check "analyze unconditional: schema" validate_analyze
py "analyze unconditional: step is far from its first-step target" '
import json, sys
d = json.load(sys.stdin)
assert d["context_mode"] == "unconditional"
r = {x["name"]: x for x in d["rules"]}
assert r["step"]["error"] > 0.5 and r["bass"]["error"] < 1e-9
assert r["bass"]["followed"]'

run_pn 0 "analyze --sort error --plot-errors" analyze "$CONTEXT" "$TMP/follow.mid" \
    --tonic keep --sort error --plot-errors "$TMP/analyze.png" --alpha 0.5 --log2-lambda-w=-2
check "analyze --sort error: octave last" "$PY" -c '
import sys
rows = [l.split() for l in open(sys.argv[1]) if l[:4].strip().isdigit()]
assert [r[1] for r in rows][-1] == "octave", rows' "$OUT"
check "analyze --plot-errors png" check_image "$TMP/analyze.png"
check "analyze: settings shown" has "$OUT" "log2(lambda_w) -2, alpha 0.5"

# keys: follow.mid is in C major, so the default (move to C) changes nothing,
# while Bb leaves no octave that fits the narrow space: the piece is left out
run_pn 0 "analyze, default tonic" analyze "$CONTEXT" "$TMP/follow.mid" --json
py "analyze, default tonic: same result" '
import json, sys
d = json.load(sys.stdin)
assert d["corpus"]["tonic"] == 0 and d["corpus"]["steps_counted"] == 24
r = {x["name"]: x for x in d["rules"]}
assert r["step"]["error"] < 1e-9 and r["bass"]["error"] < 1e-9 and not r["octave"]["followed"]'
bad_input "analyze: no piece fits after --tonic" "no piece left to analyze" \
    analyze "$CONTEXT" "$TMP/follow.mid" --tonic Bb
bad_input "analyze: no piece of that mode" "no piece left to analyze" \
    analyze "$CONTEXT" "$TMP/follow.mid" --mode minor

# A chorale JSON file for the four-voice set: "train" follows soprano-step,
# bass and alto, not outer-octave; its last step leaves the space.
"$PY" - "$TMP/chorales.json" <<'EOF'
import json, sys
cycle = [[60, 55, 52, 48], [62, 55, 52, 43], [64, 55, 52, 48],
         [60, 55, 52, 43], [62, 55, 52, 48], [64, 55, 52, 43]]
train = cycle * 3 + [[70, 55, 52, 48]]
valid = [[65, 56, 53, 45], [61, 57, 51, 44]] * 3
json.dump({"train": [train], "valid": [valid]}, open(sys.argv[1], "w"))
EOF
run_pn 0 "analyze a chorale file --split train" analyze "$FOUR" "$TMP/chorales.json" \
    --split train --tonic keep --json
check "analyze chorales: schema" validate_analyze
py "analyze chorales: follows the rules it was written to follow" '
import json, sys
d = json.load(sys.stdin)
c = d["corpus"]
assert c["pieces"] == 1 and c["split"] == "train", c
assert c["steps_counted"] == 18 and c["steps_outside"] == 1, c
r = {x["name"]: x for x in d["rules"]}
for name in ("soprano-step", "bass", "alto"):
    assert r[name]["error"] < 1e-9 and r[name]["followed"], (name, r[name])
assert r["outer-octave"]["error"] > 0.5 and not r["outer-octave"]["followed"]'
check "analyze chorales: steps outside reported" "$PY" -c '
import subprocess, sys
out = subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout
assert "18 in the space, 1 outside it" in out, out' \
    "$PN" analyze "$FOUR" "$TMP/chorales.json" --split train --tonic keep
run_pn 0 "analyze chorales, every split" analyze "$FOUR" "$TMP/chorales.json" --tonic keep --json
py "analyze every split: two pieces" '
import json, sys
d = json.load(sys.stdin)
assert d["corpus"]["pieces"] == 2 and d["corpus"]["steps_counted"] == 24, d["corpus"]'
run_pn 0 "analyze chorales --split all" analyze "$FOUR" "$TMP/chorales.json" --split all \
    --tonic keep --json
py "analyze --split all: every split, as without --split" '
import json, sys
d = json.load(sys.stdin)
c = d["corpus"]
assert c["pieces"] == 2 and c["steps_counted"] == 24 and c["split"] is None, c'

# --- analyze: bad usage and bad input -------------------------------------------------

usage() {
    local name=$1 needle=$2
    shift 2
    bad_input "$name" "$needle" analyze "$@"
    check "$name: points to help" has "$ERR" "see 'parnassus analyze --help'"
}
usage "analyze: missing everything" "missing RULES and PIECE"
usage "analyze: missing PIECE" "missing PIECE" "$CONTEXT"
usage "analyze: extra argument" "unexpected argument" "$CONTEXT" "$TMP/follow.mid" x
usage "analyze: bad --context-mode" "--context-mode" "$CONTEXT" "$TMP/follow.mid" --context-mode x
usage "analyze: bad --mode" "--mode must be major, minor or any (got 'dorian')" \
    "$CONTEXT" "$TMP/follow.mid" --mode dorian
usage "analyze: bad --tonic" "--tonic must be a note name (C, F#, Bb, ...), 0..11 or keep (got 'H')" \
    "$CONTEXT" "$TMP/follow.mid" --tonic H
usage "analyze: --tonic 12" "--tonic" "$CONTEXT" "$TMP/follow.mid" --tonic 12
usage "analyze: bad --split" "--split must be train, valid, test or all (got 'training')" \
    "$CONTEXT" "$TMP/chorales.json" --split training
usage "analyze: bad --grid" "--grid must be events (or 0) or 1..64 (got '1.5')" \
    "$CONTEXT" "$TMP/follow.mid" --grid 1.5
usage "analyze: bad --sort" "--sort" "$CONTEXT" "$TMP/follow.mid" --sort name
usage "analyze: bad --alpha" "--alpha" "$CONTEXT" "$TMP/follow.mid" --alpha 2
usage "analyze: --plot-errors format" "--plot-errors" "$CONTEXT" "$TMP/follow.mid" \
    --plot-errors "$TMP/a.gif"
# tonic names are accepted: the error is then about the missing piece
for tonic in Bb c "F#" 11 keep; do
    bad_input "analyze --tonic $tonic accepted" "no-such.mid" \
        analyze "$CONTEXT" "$TMP/no-such.mid" --tonic "$tonic"
done
run_pn 0 "analyze --grid events" analyze "$CONTEXT" "$TMP/follow.mid" --tonic keep \
    --grid events --json
py "analyze --grid events: one step per change of sonority, as by default" '
import json, sys
d = json.load(sys.stdin)
assert d["corpus"]["steps_counted"] == 24 and d["corpus"]["grid"] == 0, d["corpus"]'
run_pn 0 "analyze --tonic 0 --mode any --grid 4" analyze "$CONTEXT" "$TMP/follow.mid" \
    --tonic 0 --mode any --grid 4 --json
check "analyze --grid 4: schema" validate_analyze

bad_input "analyze: rule set missing" "no-such.json" analyze "$TMP/no-such.json" "$TMP/follow.mid"
bad_input "analyze: rule set with a syntax error" "syntax.json" \
    analyze "$TMP/syntax.json" "$TMP/follow.mid"
bad_input "analyze: piece missing" "no-such.mid" analyze "$CONTEXT" "$TMP/no-such.mid"
printf 'not a midi file at all\n' >"$TMP/junk.mid"
bad_input "analyze: piece not MIDI" "junk.mid" analyze "$CONTEXT" "$TMP/junk.mid"
printf '{"train": [[[60, 55, 52]]]}\n' >"$TMP/three-voices.json"
bad_input "analyze: chorale with 3 voices" "three-voices.json" \
    analyze "$FOUR" "$TMP/three-voices.json" --tonic keep
printf '{"train": [[[60, 55, 52, 48]' >"$TMP/truncated.json"
bad_input "analyze: truncated chorale file" "truncated.json" \
    analyze "$FOUR" "$TMP/truncated.json" --tonic keep
"$PY" "$TMP/mkmid.py" "$TMP/outside.mid" 80,81,82 30,31,32
bad_input "analyze: no step in the space" "outside.mid" \
    analyze "$CONTEXT" "$TMP/outside.mid" --tonic keep

cli_finish
