#!/usr/bin/env bash
# Tests of `parnassus learn` (docs/learning.md): learning from chorale JSON
# and from a MIDI file, the written rule set (it reads back, and learning
# again with it as the feature file writes the same bytes), the summary,
# and the errors.
#
# usage: test_cli_learn.sh PARNASSUS DATA_DIR
#   DATA_DIR is tests/data (the files are in DATA_DIR/learn).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 PARNASSUS DATA_DIR" >&2
    exit 2
fi
PN=$1
DATA=$2/learn
PY=/usr/bin/python3
CHORALES=$DATA/chorales.json
FEATURES=$DATA/features.json
MIDI=$DATA/scale.mid

source "$(dirname "$0")/cli_lib.sh" cli-learn

usage_error() {
    local name=$1
    shift
    run_pn 2 "$name" learn "$@"
    check "$name: stderr points to help" has "$ERR" "see 'parnassus learn --help'"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# bad_input NAME FRAGMENT ARGS...: exit 2, the message contains FRAGMENT,
# no output file.
bad_input() {
    local name=$1 fragment=$2
    shift 2
    rm -f "$TMP/never.json"
    run_pn 2 "$name" learn "$@" -o "$TMP/never.json"
    check "$name: message" has "$ERR" "$fragment"
    check "$name: starts with the command" has "$ERR" "parnassus learn: "
    check "$name: no output file" test ! -e "$TMP/never.json"
}

# A structural check of a written rule set: the format, every distribution
# sums to 1, contexts in the expected form.
cat >"$TMP/check_rules.py" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
rules = int(sys.argv[2])
assert d["format"] == "parnassus-rules/1"
assert len(d["rules"]) == rules, len(d["rules"])
contexts = 0
for r in d["rules"]:
    assert set(r) <= {"name", "feature", "description", "targets", "context", "smoothing",
                      "contexts", "refinements", "learn"}, r.keys()
    assert abs(sum(r["targets"].values()) - 1) < 1e-9, r["name"]
    assert all(p > 0 for p in r["targets"].values())
    if "context" in r:
        assert r["smoothing"] >= 0
        for value, entry in r.get("contexts", {}).items():
            assert entry["count"] >= 1 and entry["count"] == int(entry["count"])
            assert abs(sum(entry["targets"].values()) - 1) < 1e-9
            contexts += 1
        for level in r.get("refinements", []):
            assert set(level) <= {"context", "smoothing", "contexts"}, level.keys()
            for value, entry in level.get("contexts", {}).items():
                assert entry["count"] >= 1 and entry["count"] == int(entry["count"])
                assert abs(sum(entry["targets"].values()) - 1) < 1e-9
assert contexts > 0
EOF

# --- help and usage errors --------------------------------------------------

run_pn 0 "help" learn --help
check "help: usage line" has "$OUT" "usage: parnassus learn CORPUS -o RULES.json"
usage_error "no corpus" -o "$TMP/x.json"
usage_error "no output" "$CHORALES"
check "no output: says -o" has "$ERR" "missing -o RULES.json"
usage_error "bad mode" "$CHORALES" -o "$TMP/x.json" --mode dorian
check "bad mode: names it" has "$ERR" "--mode must be major, minor or any (got 'dorian')"
usage_error "bad tonic" "$CHORALES" -o "$TMP/x.json" --tonic H
usage_error "tonic 12" "$CHORALES" -o "$TMP/x.json" --tonic 12
usage_error "bad split" "$CHORALES" -o "$TMP/x.json" --split dev
usage_error "grid too fine" "$CHORALES" -o "$TMP/x.json" --grid 65
check "grid too fine: names the range" has "$ERR" "--grid must be events (or 0) or 1..64 (got '65')"
usage_error "grid past int" "$CHORALES" -o "$TMP/x.json" --grid 99999999999999999999
usage_error "grid not whole" "$CHORALES" -o "$TMP/x.json" --grid 1.5
usage_error "grid negative" "$CHORALES" -o "$TMP/x.json" --grid -1
usage_error "bad grid word" "$CHORALES" -o "$TMP/x.json" --grid beats
usage_error "unknown option" "$CHORALES" -o "$TMP/x.json" --weight 3
usage_error "two corpora" "$CHORALES" "$CHORALES" -o "$TMP/x.json"
# --ranges: the syntax, each range, and the count against the features'
# voices; every message names the bad part
usage_error "ranges: one number" "$CHORALES" -o "$TMP/x.json" --ranges 31
check "ranges: one number: names it" has "$ERR" "--ranges: '31' is not LO-HI (in '31';"
usage_error "ranges: no high" "$CHORALES" -o "$TMP/x.json" --ranges 31-
check "ranges: no high: names it" has "$ERR" "--ranges: '31-' is not LO-HI"
usage_error "ranges: words" "$CHORALES" -o "$TMP/x.json" --ranges a-b
check "ranges: words: names it" has "$ERR" "--ranges: 'a-b' is not LO-HI"
usage_error "ranges: negative" "$CHORALES" -o "$TMP/x.json" --ranges=-5-10
check "ranges: negative: names it" has "$ERR" "--ranges: '-5-10' is not LO-HI"
usage_error "ranges: empty part" "$CHORALES" -o "$TMP/x.json" --ranges 31-84,
check "ranges: empty part: names it" has "$ERR" "--ranges: '' is not LO-HI (in '31-84,';"
usage_error "ranges: separator" "$CHORALES" -o "$TMP/x.json" --ranges "31-84;40-50"
check "ranges: separator: names it" has "$ERR" "--ranges: '31-84;40-50' is not LO-HI"
usage_error "ranges: low above high" "$CHORALES" -o "$TMP/x.json" --ranges 57-83,78-50,45-72,33-67
check "ranges: low above high: names it" has "$ERR" "--ranges: '78-50': low 78 is above high 50"
usage_error "ranges: above 127" "$CHORALES" -o "$TMP/x.json" --ranges 31-128
check "ranges: above 127: names it" has "$ERR" "--ranges: '31-128' is outside the MIDI pitches 0..127"
usage_error "ranges: too many" "$CHORALES" -o "$TMP/x.json" --ranges 1-2,1-2,1-2,1-2,1-2,1-2,1-2,1-2,1-2
check "ranges: too many: says so" has "$ERR" "--ranges: more than 8 ranges"
usage_error "ranges: count" "$CHORALES" -o "$TMP/x.json" --ranges 31-84,40-60
check "ranges: count: names it" has "$ERR" \
    "--ranges gives 2 ranges ('31-84,40-60'), but the space of (built-in features) has 4 voices"
usage_error "ranges: count, feature file" "$CHORALES" -o "$TMP/x.json" --features "$FEATURES" \
    --ranges 57-83,50-78,45-72
check "ranges: count, feature file: names it" has "$ERR" \
    "--ranges gives 3 ranges ('57-83,50-78,45-72'), but the space of $FEATURES has 4 voices"
check "usage errors write nothing" test ! -e "$TMP/x.json"

# --- learning from chorales with the built-in features ---------------------

run_pn 0 "default features" learn "$CHORALES" -o "$TMP/c1.json"
check "default: summary" has "$OUT" \
    "chorales.json: 4 chorales, 3 major kept, moved to C (1 of them an octave further, to fit the space); 1 left out (outside the space); 8 sonority events"
check "default: counts" has "$OUT" "counted    8 sonorities in 2 pieces, 6 transitions"
check "default: rows" has "$OUT" "features   (built-in features): 9 rules, 763 rows"
check "default: rule lines" has "$OUT" "soprano-alto   diff(w(2,1))"
check "default: context column" has "$OUT" \
    "6 of 1008, smoothing 4; then w(4,2,1): 6 listed, smoothing 4; then w(4,3,1): 6 listed, smoothing 4; then w(1,2,3,4): 6 listed, smoothing 2"
check "default: file" $PY "$TMP/check_rules.py" "$TMP/c1.json" 9
check "default: constraints and lambda_p" $PY -c "
import json; d = json.load(open('$TMP/c1.json'))
assert d['lambda_p'] == 3e-05 and [c['kind'] for c in d['constraints']] == ['parallel', 'hidden', 'known'], d
assert d['constraints'][2] == {'name': 'known-chords', 'kind': 'known', 'rule': 'chord',
                               'description': d['constraints'][2]['description']}, d['constraints'][2]"
check "default: name from the file" has "$TMP/c1.json" '"name": "c1",'
check "default: the chorale registers" has "$TMP/c1.json" \
    '"space": { "ranges": [[57, 83], [50, 78], [45, 72], [33, 67]] },'

# The written set is a valid feature file; learning again with it writes
# the same bytes (same name), so writing and reading lose nothing.
run_pn 0 "relearn" learn "$CHORALES" --features "$TMP/c1.json" --name c1 -o "$TMP/c1b.json"
check "relearn: same file" cmp -s "$TMP/c1.json" "$TMP/c1b.json"

# --ranges: the built-in features over the paper's full space (31..84 for
# every voice), then back to the chorale registers with that learned set as
# the feature file: its targets and contexts over the wide space are
# dropped, and the result is byte for byte the set learned directly.
run_pn 0 "ranges: one for all" learn "$CHORALES" --ranges 31-84 -o "$TMP/w1.json"
check "ranges: summary" has "$OUT" \
    "chorales.json: 4 chorales, 3 major kept, moved to C (1 of them an octave further, to fit the space); 1 left out (outside the space); 8 sonority events"
check "ranges: rows" has "$OUT" "features   (built-in features) with --ranges 31-84: 9 rules, 1008 rows"
check "ranges: counts" has "$OUT" "counted    8 sonorities in 2 pieces, 6 transitions"
check "ranges: file" $PY "$TMP/check_rules.py" "$TMP/w1.json" 9
check "ranges: the space written" has "$TMP/w1.json" '"space": { "voices": 4, "low": 31, "high": 84 },'
run_pn 0 "ranges: relearn wide" learn "$CHORALES" --features "$TMP/w1.json" --name w1 -o "$TMP/w1b.json"
check "ranges: relearn wide: same file" cmp -s "$TMP/w1.json" "$TMP/w1b.json"
run_pn 0 "ranges: per voice" learn "$CHORALES" --features "$TMP/w1.json" \
    --ranges 57-83,50-78,45-72,33-67 --name c1 -o "$TMP/c1c.json"
check "ranges: per voice: the built-in set's bytes" cmp -s "$TMP/c1.json" "$TMP/c1c.json"
run_pn 0 "ranges: same as the features'" learn "$CHORALES" --ranges 57-83,50-78,45-72,33-67 \
    --name c1 -o "$TMP/c1d.json"
check "ranges: same as the features': same file" cmp -s "$TMP/c1.json" "$TMP/c1d.json"
# a range that leaves every chorale out
bad_input "ranges: nothing fits" "3 left out (outside the space)" "$CHORALES" --ranges 60-61

# --- a feature file, other options -------------------------------------------

run_pn 0 "features, any mode" learn "$CHORALES" --features "$FEATURES" --mode any \
    --name "small set" -o "$TMP/c2.json"
check "features: summary" has "$OUT" "3 major and 1 minor"
check "features: counts" has "$OUT" "counted    13 sonorities in 3 pieces, 10 transitions"
check "features: file" $PY "$TMP/check_rules.py" "$TMP/c2.json" 4
check "features: name" has "$TMP/c2.json" '"name": "small set",'
check "features: smoothing kept" has "$TMP/c2.json" '"smoothing": 2'
check "features: description kept" has "$TMP/c2.json" 'with \"quotes\" and a back\\slash'
check "features: ranges kept" has "$TMP/c2.json" '"ranges": [[55, 81], [48, 76], [40, 72], [31, 64]]'
# --ranges on a feature file: its own ranges again give the same bytes
run_pn 0 "features, same ranges" learn "$CHORALES" --features "$FEATURES" --mode any \
    --name "small set" --ranges 55-81,48-76,40-72,31-64 -o "$TMP/c2b.json"
check "features, same ranges: same file" cmp -s "$TMP/c2.json" "$TMP/c2b.json"
check "features, same ranges: says so" has "$OUT" \
    "features   $FEATURES with --ranges 55-81,48-76,40-72,31-64: 4 rules"
# the outer interval's targets in the feature file are replaced
check "features: targets learned" $PY -c "
import json; r = json.load(open('$TMP/c2.json'))['rules'][3]
assert r['name'] == 'outer-interval' and r['targets'] != {'7': 1}, r"

run_pn 0 "minor, valid split, grid" learn "$CHORALES" --mode minor --split valid --grid 4 \
    --tonic A -o "$TMP/c3.json"
check "minor: summary" has "$OUT" \
    "chorales.json: 1 chorale (valid), 1 minor kept, moved to A; 0 left out (outside the space); 5 steps (every 4th sixteenth)"
check "minor: file" $PY "$TMP/check_rules.py" "$TMP/c3.json" 9

run_pn 0 "grid events" learn "$CHORALES" --grid events --split train --name g \
    -o "$TMP/grid-events.json"
run_pn 0 "grid 0" learn "$CHORALES" --grid 0 --split train --name g -o "$TMP/grid-0.json"
check "grid 0 learns what events learns" cmp "$TMP/grid-events.json" "$TMP/grid-0.json"
run_pn 0 "grid 1" learn "$CHORALES" --grid 1 --split train --name g -o "$TMP/grid-1.json"
check "grid 1 learns otherwise" bash -c '! cmp -s "$0" "$1"' "$TMP/grid-events.json" \
    "$TMP/grid-1.json"

run_pn 0 "keep keys" learn "$CHORALES" --tonic keep --grid 1 --split train -o "$TMP/c4.json"
check "keep keys: no transposition" test "$(grep -c 'moved to' "$OUT")" = 0
check "keep keys: sixteenths" has "$OUT" "48 sixteenth steps"

run_pn 0 "stdout" learn "$CHORALES" -o - --name piped
check "stdout: the rule set" $PY -c "
import json, sys; d = json.load(open('$OUT')); assert d['name'] == 'piped'"
check "stdout: report on stderr" has "$ERR" "wrote      standard output"

# --- --add: hand-written rules kept as written --------------------------------

cat >"$TMP/hand.json" <<'EOF'
{ "format": "parnassus-rules/1", "name": "hand",
  "space": { "ranges": [[57, 83], [50, 78], [45, 72], [33, 67]] },
  "rules": [ { "name": "tb-bass", "feature": "mod12(w(4))", "targets": { "0": 0.6, "7": 0.4 } } ],
  "constraints": [ { "name": "no-hidden-8ves", "kind": "hidden", "intervals": [0] } ] }
EOF
run_pn 0 "add" learn "$CHORALES" --add "$TMP/hand.json" --name c5 -o "$TMP/c5.json"
check "add: rows" has "$OUT" "features   (built-in features): 10 rules, 776 rows"
check "add: as written" has "$OUT" "(as written)"
check "add: the rule kept, marked" $PY -c "
import json; d = json.load(open('$TMP/c5.json'))
r = d['rules'][9]
assert r['name'] == 'tb-bass' and r['learn'] is False and r['targets'] == {'0': 0.6, '7': 0.4}, r
assert [c['name'] for c in d['constraints']] == ['no-parallels', 'no-hidden-outer', 'known-chords',
                                                  'no-hidden-8ves']
assert 'written by hand' in d['description'], d['description']"
run_pn 0 "add: relearn" learn "$CHORALES" --features "$TMP/c5.json" --name c5 -o "$TMP/c5b.json"
check "add: relearn: same file" cmp -s "$TMP/c5.json" "$TMP/c5b.json"
cat >"$TMP/other-space.json" <<'EOF'
{ "format": "parnassus-rules/1", "name": "o", "space": { "ranges": [[60, 64]] },
  "rules": [ { "name": "a", "feature": "w(1)", "targets": { "60": 1 } } ] }
EOF
usage_error "add: another space" "$CHORALES" -o "$TMP/x.json" --add "$TMP/other-space.json"
check "add: another space: says so" has "$ERR" "its space differs from the space of (built-in features)"
bad_input "add: no such file" "none.json" "$CHORALES" --add "$TMP/none.json"
cat >"$TMP/no-targets.json" <<'EOF'
{ "format": "parnassus-rules/1", "name": "n",
  "space": { "ranges": [[57, 83], [50, 78], [45, 72], [33, 67]] },
  "rules": [ { "name": "a", "feature": "w(1)" } ] }
EOF
bad_input "add: a rule without targets" 'rules[0]: missing field "targets"' "$CHORALES" \
    --add "$TMP/no-targets.json"
cat >"$TMP/same-name.json" <<'EOF'
{ "format": "parnassus-rules/1", "name": "n",
  "space": { "ranges": [[57, 83], [50, 78], [45, 72], [33, 67]] },
  "rules": [ { "name": "chord", "feature": "w(1)", "targets": { "60": 1 } } ] }
EOF
bad_input "add: a name taken" 'duplicate rule name "chord"' "$CHORALES" --add "$TMP/same-name.json"

# --- a MIDI file -------------------------------------------------------------

# the scale leaves the built-in chorale registers; over 31..84 it fits
bad_input "midi: outside the chorale registers" \
    "scale.mid: no piece left to learn from (scale.mid: 1 piece, 4 voices from tracks, 16 sixteenths, C major, 1 major kept, moved to C; 1 left out (outside the space)" \
    "$MIDI" --grid 2
run_pn 0 "midi" learn "$MIDI" -o "$TMP/m.json" --grid 2 --ranges 31-84
check "midi: summary" has "$OUT" "scale.mid: 1 piece, 4 voices from tracks, 16 sixteenths, C major"
check "midi: steps" has "$OUT" "8 steps (every 2nd sixteenth)"
check "midi: file" $PY "$TMP/check_rules.py" "$TMP/m.json" 9

# --- bad input ---------------------------------------------------------------

bad_input "missing corpus" "$TMP/none.json" "$TMP/none.json"
bad_input "missing midi" "$TMP/none.mid" "$TMP/none.mid"
bad_input "malformed json" "bad.json: line 2" "$DATA/bad.json"
bad_input "not a midi file" "features.json" "$FEATURES" --features "$FEATURES" --split all \
    --grid 1 --tonic 0 --mode any --name x
cp "$FEATURES" "$TMP/features.mid"
bad_input "not a midi file" "features.mid" "$TMP/features.mid"
bad_input "missing features" "$TMP/nofeatures.json" "$CHORALES" --features "$TMP/nofeatures.json"
bad_input "malformed features" "bad.json: " "$CHORALES" --features "$DATA/bad.json"
printf '{"format": "parnassus-rules/1", "name": "x", "rules": [{"name": "a", "feature": "w(5)"}]}' \
    >"$TMP/badfeature.json"
bad_input "bad feature" "badfeature.json: rules[0].feature: w(5)" "$CHORALES" \
    --features "$TMP/badfeature.json"
printf '{"format": "parnassus-rules/1", "name": "x", "space": {"voices": 3}, "rules": [{"name": "a", "feature": "w(1)"}]}' \
    >"$TMP/three.json"
bad_input "voices differ" "a chorale file has 4 voices, but the space has 3" "$CHORALES" \
    --features "$TMP/three.json"
bad_input "nothing in the mode" "no piece left to learn from" "$MIDI" --mode minor
bad_input "nothing fits" "1 left out (outside the space)" "$MIDI" --features "$FEATURES"

cli_finish
