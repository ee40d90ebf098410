#!/usr/bin/env bash
# Hostile inputs on the parnassus command line: numbers at and past the
# bounds of the formats and options, endless and oversized files,
# directories, byte order marks, output files that cannot be written, and
# how numbers are echoed in messages. Each case must end quickly with exit
# 2 and a message naming the file (or option), the field and the limit.
#
# usage: test_cli_inputs.sh PARNASSUS DATA_DIR [SANITIZER]
#   DATA_DIR is tests/data; SANITIZER the build's sanitizers, if any.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 PARNASSUS DATA_DIR [SANITIZER]" >&2
    exit 2
fi
PN=$1
DATA=$2
PY=/usr/bin/python3
PLAIN=$DATA/cli-rules/plain.json
CONTEXT=$DATA/cli-rules/context.json
GROUPED=$DATA/instances/example-grouped.txt
CHORALES=$DATA/learn/chorales.json

source "$(dirname "$0")/cli_lib.sh" cli-inputs

# The sanitizers reserve terabytes of address space, so the memory bound
# (ulimit -v) is only checked on a plain build.
SANITIZED=0
[[ -n ${3:-} ]] && SANITIZED=1

# bad_input NAME NEEDLE ARGS...: exit 2, NEEDLE in the message, nothing on
# stdout. On a plain build also under 200 MB of address space. How fast a
# bounded reader gives up is a benchmark's business, not a test's: the
# test's timeout (CMake) only catches a reader that never stops.
bad_input() {
    local name=$1 needle=$2
    shift 2
    if [[ $SANITIZED -eq 0 ]]; then
        # the subshell's counters are lost: its verdict is counted here
        if (ulimit -v 204800 && failed=0 && run_pn 2 "$name" "$@" && [[ $failed -eq 0 ]]); then
            ok
        else
            not_ok "$name (under 200 MB of address space)"
        fi
    else
        run_pn 2 "$name" "$@"
    fi
    check "$name: message names '$needle'" has "$ERR" "$needle"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# rules_with NAME JSON-OF-ONE-RULE: a rule set over two small voices.
rules_with() {
    printf '{"format": "parnassus-rules/1", "name": "t", "space": {"ranges": [[60, 64], [48, 52]]},\n "rules": [%s]}\n' \
        "$2" >"$TMP/$1"
}

# --- (3) numbers past the bounds of the rule format -------------------------

rules_with smoothing.json '{"name": "a", "feature": "w(1)", "targets": {"60": 0.5, "62": 0.5},
  "context": "w(1)", "smoothing": 1e308,
  "contexts": {"60": {"count": 1e308, "targets": {"62": 1}}}}'
bad_input "smoothing 1e308" \
    "smoothing.json: rules[0].smoothing: must be a number in [0, 1e+12], got 1e+308" \
    solve "$TMP/smoothing.json" --context 60,48
bad_input "smoothing 1e308 (sample)" "smoothing.json: rules[0].smoothing: must be a number in" \
    sample "$TMP/smoothing.json" -o "$TMP/s.mid" --steps 4
check "smoothing 1e308 (sample): no file left" test ! -e "$TMP/s.mid"
rules_with count.json '{"name": "a", "feature": "w(1)", "targets": {"60": 0.5, "62": 0.5},
  "context": "w(1)", "contexts": {"60": {"count": 1e308, "targets": {"62": 1}}}}'
bad_input "count 1e308" \
    "count.json: rules[0].contexts[\"60\"].count: must be a number in [0, 1e+12], got 1e+308" \
    solve "$TMP/count.json" --context 60,48
# at the bounds the smoothed targets are still a distribution: solved, finite
rules_with bounds.json '{"name": "a", "feature": "w(1)", "targets": {"60": 0.5, "62": 0.5},
  "context": "w(1)", "smoothing": 1e12,
  "contexts": {"60": {"count": 1e12, "targets": {"62": 1}}}}'
run_pn 0 "smoothing and count at 1e12" solve "$TMP/bounds.json" --context 60,48 --json
check "at 1e12: finite numbers (no null)" "$PY" -c '
import json, math, sys
d = json.load(sys.stdin)
assert d["status"] == "solved", d["status"]
for key in ("objective", "p_kkt", "w_kkt"):
    assert isinstance(d[key], (int, float)) and math.isfinite(d[key]), key
' <"$OUT"
printf '{"format": "parnassus-rules/1", "name": "t", "lambda_p": 1e308,
 "space": {"ranges": [[60, 64]]}, "rules": [{"name": "a", "feature": "w(1)", "targets": {"60": 1}}]}\n' \
    >"$TMP/lambda.json"
bad_input "rule set lambda_p 1e308" "lambda.json: lambda_p: must be a number in (0, 1], got 1e+308" \
    solve "$TMP/lambda.json"

# --- (7) --lambda-p past its bound: rejected before any work ----------------

for command in solve path; do
    bad_input "$command --lambda-p 1e308" "--lambda-p must be within [0, 1] (got 1e308)" \
        "$command" "$PLAIN" --lambda-p 1e308
done
bad_input "sample --lambda-p 1e308" "--lambda-p must be within [0, 1] (got 1e308)" \
    sample "$PLAIN" -o "$TMP/x.mid" --lambda-p 1e308
bad_input "sweep --lambda-p 2" "--lambda-p must be within [0, 1] (got 2)" \
    sweep "$PLAIN" --knob alpha --lambda-p 2
# the bound itself works and reports finite residuals
run_pn 0 "solve --lambda-p 1" solve "$PLAIN" --lambda-p 1 --json
check "--lambda-p 1: finite residuals" "$PY" -c '
import json, math, sys
d = json.load(sys.stdin)
assert d["lambda_p"] == 1
for key in ("objective", "p_kkt", "w_kkt"):
    assert isinstance(d[key], (int, float)) and math.isfinite(d[key]), key
' <"$OUT"

# --- (5) endless and oversized files stop at 64 MiB -------------------------

bad_input "solve /dev/zero" "/dev/zero: larger than the limit of 64 MiB" solve /dev/zero
bad_input "sample /dev/zero" "/dev/zero: larger than the limit of 64 MiB" \
    sample /dev/zero -o "$TMP/x.mid"
bad_input "analyze /dev/zero (rules)" "/dev/zero: larger than the limit of 64 MiB" \
    analyze /dev/zero "$CHORALES"
bad_input "analyze /dev/zero (piece)" "/dev/zero: larger than the limit of 64 MiB" \
    analyze "$PLAIN" /dev/zero
bad_input "learn /dev/zero" "/dev/zero: larger than the limit of 64 MiB" \
    learn /dev/zero -o "$TMP/l.json"
bad_input "learn --features /dev/zero" "/dev/zero: larger than the limit of 64 MiB" \
    learn "$CHORALES" --features /dev/zero -o "$TMP/l.json"
bad_input "evaluate /dev/zero" "/dev/zero: larger than the limit of 64 MiB" evaluate /dev/zero
bad_input "evaluate --reference /dev/zero" "/dev/zero: larger than the limit of 64 MiB" \
    evaluate "$CHORALES" --reference /dev/zero
# a sparse regular file over the limit is refused without being read
truncate -s 65M "$TMP/big.json"
bad_input "a 65 MiB file" "big.json: larger than the limit of 64 MiB" solve "$TMP/big.json"
# an endless stream of white space is not taken for a rule set for ever
bad_input "endless white space" "larger than the limit of 64 MiB" \
    solve <(yes ' ' | tr -d '\n')

# --- (7) a directory is named as one -----------------------------------------

mkdir "$TMP/dir.json"
bad_input "solve a directory" "dir.json: is a directory" solve "$TMP/dir.json"
bad_input "sample a directory" "dir.json: is a directory" sample "$TMP/dir.json" -o "$TMP/x.mid"
bad_input "analyze a directory" "dir.json: is a directory" analyze "$TMP/dir.json" "$CHORALES"
bad_input "learn a directory" "dir.json: is a directory" learn "$TMP/dir.json" -o "$TMP/l.json"
bad_input "learn --features a directory" "dir.json: is a directory" \
    learn "$CHORALES" --features "$TMP/dir.json" -o "$TMP/l.json"
bad_input "evaluate a directory" "dir.json: is a directory" evaluate "$TMP/dir.json"
bad_input "sweep a directory" "dir.json: is a directory" sweep "$TMP/dir.json" --knob alpha

# --- (7) a UTF-8 byte order mark is skipped ----------------------------------

bom() { printf '\xef\xbb\xbf' >"$2" && cat "$1" >>"$2"; }
bom "$PLAIN" "$TMP/bom-rules.json"
run_pn 0 "solve: rules with a BOM" solve "$TMP/bom-rules.json" --json
check "rules with a BOM: read as a rule set" "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["instance"]["num_rules"] == 4, d["instance"]
' <"$OUT"
run_pn 0 "sample: rules with a BOM" sample "$TMP/bom-rules.json" -o "$TMP/bom.mid" --steps 4
check "sample: rules with a BOM: MIDI written" test -s "$TMP/bom.mid"
bom "$GROUPED" "$TMP/bom-instance.txt"
run_pn 0 "solve: instance with a BOM" solve "$TMP/bom-instance.txt"
check "instance with a BOM: solved" has "$OUT" "status          solved"
bom "$CHORALES" "$TMP/bom-chorales.json"
run_pn 0 "learn: chorales with a BOM" learn "$TMP/bom-chorales.json" -o "$TMP/bom-learned.json"
check "learn: chorales with a BOM: written" test -s "$TMP/bom-learned.json"
bom "$DATA/learn/features.json" "$TMP/bom-features.json"
run_pn 0 "learn: features with a BOM" learn "$CHORALES" --features "$TMP/bom-features.json" \
    -o "$TMP/bom-learned2.json"
run_pn 0 "evaluate --save (for a BOM)" evaluate "$CHORALES" --reference none --save "$TMP/stats.json"
bom "$TMP/stats.json" "$TMP/bom-stats.json"
run_pn 0 "evaluate: reference with a BOM" evaluate "$CHORALES" --reference "$TMP/bom-stats.json" --json
check "reference with a BOM: read as statistics" "$PY" -c '
import json, sys
d = json.load(sys.stdin)
ref = d["reference"]
assert ref["file"].endswith("bom-stats.json") and ref["sonorities"] == 16, ref
' <"$OUT"

# --- (7) output files are checked before the work ----------------------------

NOWHERE=$TMP/no/such/dir
bad_input "sample -o unwritable" "--output $NOWHERE/x.mid: cannot write: No such file or directory" \
    sample "$PLAIN" -o "$NOWHERE/x.mid"
bad_input "solve --solution unwritable" "--solution $NOWHERE/q.txt: cannot write" \
    solve "$PLAIN" --solution "$NOWHERE/q.txt"
bad_input "solve --plot-errors unwritable" "--plot-errors $NOWHERE/e.png: cannot write" \
    solve "$PLAIN" --plot-errors "$NOWHERE/e.png"
bad_input "path --csv unwritable" "--csv $NOWHERE/p.csv: cannot write" \
    path "$PLAIN" --csv "$NOWHERE/p.csv"
bad_input "path --plot unwritable" "--plot $NOWHERE/p.svg: cannot write" \
    path "$PLAIN" --plot "$NOWHERE/p.svg"
bad_input "learn -o unwritable" "--output $NOWHERE/l.json: cannot write" \
    learn "$CHORALES" -o "$NOWHERE/l.json"
bad_input "analyze --plot-errors unwritable" "--plot-errors $NOWHERE/a.png: cannot write" \
    analyze "$PLAIN" "$CHORALES" --plot-errors "$NOWHERE/a.png"
bad_input "evaluate --save unwritable" "--save $NOWHERE/s.json: cannot write" \
    evaluate "$CHORALES" --save "$NOWHERE/s.json"
bad_input "evaluate --plot unwritable" "--plot $NOWHERE/e.svg: cannot write" \
    evaluate "$CHORALES" --plot "$NOWHERE/e.svg"
bad_input "baseline -o unwritable" "--output $NOWHERE/b.mid: cannot write" \
    baseline "$CHORALES" -o "$NOWHERE/b.mid"
bad_input "sweep --csv unwritable" "--csv $NOWHERE/w.csv: cannot write" \
    sweep "$PLAIN" --knob alpha --csv "$NOWHERE/w.csv"
bad_input "sweep --plot unwritable" "--plot $NOWHERE/w.png: cannot write" \
    sweep "$PLAIN" --knob alpha --plot "$NOWHERE/w.png"
bad_input "render -o unwritable" "--output $NOWHERE/r.mid: cannot write" \
    render -o "$NOWHERE/r.mid" --bundle "$NOWHERE"
bad_input "-o a directory" "--output $TMP/dir.json: cannot write: is a directory" \
    sample "$PLAIN" -o "$TMP/dir.json"
# the check leaves nothing behind, and an existing file as it was
bad_input "new output, bad input" "smoothing.json: rules[0].smoothing" \
    sample "$TMP/smoothing.json" -o "$TMP/new.mid"
check "new output, bad input: no file left" test ! -e "$TMP/new.mid"
printf 'keep' >"$TMP/old.mid"
bad_input "old output, bad input" "smoothing.json: rules[0].smoothing" \
    sample "$TMP/smoothing.json" -o "$TMP/old.mid"
check "old output, bad input: untouched" test "$(cat "$TMP/old.mid")" = keep

# --- (7) numbers echoed as written -------------------------------------------

printf '{"train": [[[72.0, 67, 64, 48]]]}\n' >"$TMP/real-pitch.json"
bad_input "chorale pitch 72.0" \
    "real-pitch.json: train[0][0][0]: expected an integer MIDI pitch or -1, got 72.0" \
    learn "$TMP/real-pitch.json" -o "$TMP/l.json"
rules_with long-voice.json '{"name": "a", "feature": "w(12345678901234567890)", "targets": {"60": 1}}'
bad_input "a long voice number is cut with ..." "voice 123456789012... out of range 1..2" \
    solve "$TMP/long-voice.json"
bad_input "a long --context pitch is cut with ..." \
    "--context: '1234567890123456789012345678901234567890...' is not a MIDI pitch" \
    solve "$CONTEXT" --context 12345678901234567890123456789012345678901234567890,48
bad_input "an integer range as integers" "--seed must be within [0, 16777215] (got 99999999)" \
    render -o "$TMP/r.mid" --seed 99999999
bad_input "steps range as integers" "--steps must be within [1, 100000] (got 1e9)" \
    sample "$PLAIN" -o "$TMP/x.mid" --steps 1e9

cli_finish
