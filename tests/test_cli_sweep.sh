#!/usr/bin/env bash
# Tests of `parnassus sweep` (docs/evaluate.md, "Sweeping the knobs") on a
# small four-voice rule set made here, whose rules disagree so that the
# number of rules kept grows with log2_lambda_w: the JSON document, the
# table, the CSV file, PNG and SVG plots, determinism per seed, a reference
# of our own, and every usage error with its status and message.
#
# usage: test_cli_sweep.sh PARNASSUS
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 PARNASSUS" >&2
    exit 2
fi
PN=$1
PY=/usr/bin/python3

source "$(dirname "$0")/cli_lib.sh" cli-sweep

# usage_error NAME FRAGMENT ARGS...: status 2, the message names the problem
# and points to the help, nothing on stdout.
usage_error() {
    local name=$1 fragment=$2
    shift 2
    run_pn 2 "$name" sweep "$@"
    check "$name: message" has "$ERR" "$fragment"
    check "$name: starts with the command" has "$ERR" "parnassus sweep: "
    check "$name: stderr points to help" has "$ERR" "see 'parnassus sweep --help'"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# bad_input NAME FRAGMENT ARGS...: status 2 with FRAGMENT in the message.
bad_input() {
    local name=$1 fragment=$2
    shift 2
    run_pn 2 "$name" sweep "$@"
    check "$name: message" has "$ERR" "$fragment"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# py NAME ARGS... < SCRIPT: a Python check; a failed assertion fails the test.
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

# Four narrow voices (7 x 9 x 9 x 9 = 5103 sonorities). "bass" and
# "bass-pc" cannot both hold, nor can "chord" and the others exactly: at
# small lambda_w the realization keeps only "chord", at large it keeps four.
RULES=$TMP/small.json
cat >"$RULES" <<'EOF'
{
  "format": "parnassus-rules/1",
  "name": "sweep-small",
  "space": { "ranges": [[67, 72], [60, 67], [55, 62], [48, 55]] },
  "rules": [
    { "name": "chord", "feature": "sort(mod12(w(1,2,3,4)))",
      "targets": { "(0,0,4,7)": 0.5, "(0,4,7,7)": 0.2, "(2,5,7,11)": 0.3 } },
    { "name": "soprano", "feature": "w(1)", "context": "w(1)",
      "targets": { "67": 0.3, "69": 0.2, "71": 0.2, "72": 0.3 },
      "contexts": {
        "67": { "count": 10, "targets": { "69": 0.7, "67": 0.3 } },
        "72": { "count": 10, "targets": { "71": 0.6, "72": 0.4 } }
      } },
    { "name": "bass", "feature": "w(4)", "targets": { "48": 0.6, "55": 0.4 } },
    { "name": "bass-pc", "feature": "mod12(w(4))", "targets": { "2": 0.5, "5": 0.5 } },
    { "name": "alto-tenor", "feature": "mod12(diff(w(3,2)))",
      "targets": { "3": 0.5, "4": 0.5 } }
  ]
}
EOF

# The rule set does what the test needs: solve keeps fewer rules at the
# conservative end than at the liberal end.
kept_by_solve() {
    "$PN" solve "$RULES" --log2-lambda-w "$1" --json |
        "$PY" -c 'import json, sys; print(sum(r["selected"] for r in json.load(sys.stdin)["rules"]))'
}
lo=$(kept_by_solve -10)
hi=$(kept_by_solve 6)
check "solve keeps fewer rules at log2 lambda_w -10 ($lo) than at 6 ($hi)" test "$lo" -lt "$hi"

# --- the JSON document, the CSV file and a PNG plot ---
SWEEP=(sweep "$RULES" --knob log2_lambda_w --from -10 --to 6 --points 3 --steps 40 --seeds 1,2)
run_pn 0 "sweep --json" "${SWEEP[@]}" --json --csv "$TMP/s.csv" --plot "$TMP/s.png"
cp "$OUT" "$TMP/a.json"
py "the JSON document" "$TMP/a.json" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
names = ["chord", "soprano", "bass", "bass-pc", "alto-tenor"]
assert d["format"] == "parnassus-sweep/1", d["format"]
assert d["rule_set"] == "sweep-small" and d["num_rules"] == 5
assert d["knob"] == "log2_lambda_w", d["knob"]
assert d["from"] == -10 and d["to"] == 6
assert d["fixed"] == {"name": "alpha", "value": 0.8}, d["fixed"]
assert d["steps"] == 40 and d["seeds"] == [1, 2], (d["steps"], d["seeds"])
assert d["reference"]["name"] == "chorales-major", d["reference"]
assert d["reference"]["sonorities"] > 1000
pts = d["points"]
assert len(pts) == 3, len(pts)
assert [p["value"] for p in pts] == [-10, -2, 6], [p["value"] for p in pts]
for p in pts:
    assert p["log2_lambda_w"] == p["value"] and p["alpha"] == 0.8
    assert p["pieces"] == 2 and p["steps"] == 80, (p["pieces"], p["steps"])
    assert 1 < p["sonorities"] <= 80, p["sonorities"]
    k = p["rules_kept"]
    assert 0 <= k["min"] <= k["median"] <= k["max"] <= 5, k
    assert [r["name"] for r in p["rules"]] == names
    for r in p["rules"]:
        assert 0 <= r["kept_steps"] <= 80 and abs(r["kept_share"] - r["kept_steps"] / 80) < 1e-12
    kept = {r["name"]: r["kept_steps"] for r in p["rules"]}
    assert sorted(p["most_kept"], key=lambda n: -kept[n]) == p["most_kept"], p["most_kept"]
    assert set(p["most_kept"]) == {n for n in names if kept[n] > 0}
    assert "chord" in p["most_kept"]
    # the rules kept after each step add up to what the min..max allow
    total = sum(kept.values())
    assert 80 * k["min"] <= total <= 80 * k["max"], (total, k)
    for name in ["chord", "soprano_motion", "alto_motion", "tenor_motion", "bass_motion"]:
        tv = p["tv"][name]
        assert tv is not None and 0 <= tv <= 1, (name, tv)
    for group in ("shares", "rates"):
        for name, v in p[group].items():
            assert v is None or 0 <= v <= 1, (name, v)
    assert set(p["shares"]) == {"root_position", "stepwise_soprano", "soprano_leaps",
                                "primary_bass", "consonant"}
    assert set(p["rates"]) == {"parallels", "hidden", "wide", "crossing"}
    assert p["median_step_seconds"] >= 0 and p["setup_seconds"] >= 0
    # each seed's run alone: the pooled sonorities are theirs added up, and
    # the standard error of two seeds is half their difference
    runs = p["by_seed"]
    assert [s["seed"] for s in runs] == [1, 2], runs
    assert sum(s["sonorities"] for s in runs) == p["sonorities"], (runs, p["sonorities"])
    se = p["standard_error"]
    for group, name in [("tv", "chord"), ("tv", "bass_motion"), ("shares", "primary_bass"),
                        ("shares", "consonant"), ("shares", "stepwise_soprano")]:
        a, b = runs[0][group][name], runs[1][group][name]
        assert abs(se[group][name] - abs(a - b) / 2) < 1e-12, (group, name, a, b, se[group][name])
        if group == "shares":  # a pooled share lies between the seeds' own
            assert min(a, b) - 1e-12 <= p[group][name] <= max(a, b) + 1e-12, (name, a, b, p[group][name])
# the knob does something: more rules kept on the liberal side
med = [p["rules_kept"]["median"] for p in pts]
assert all(a <= b for a, b in zip(med, med[1:])), med
assert med[0] < med[-1], med
assert pts[0]["rules_kept"]["max"] < pts[-1]["rules_kept"]["max"], pts
# and the music follows: the "bass" rule (C or G) is kept only at the
# liberal end, where the bass sits on C, F or G nearly always (by chance,
# 3 of the bass's 8 pitches, at the conservative end)
bass = [p["shares"]["primary_bass"] for p in pts]
assert bass[0] < 0.6 and bass[-1] > 0.8, bass
# the reference's own shares, as in evaluate's statistics of the chorales
ref = d["reference"]
assert 0.2 < ref["shares"]["root_position"] < 0.6, ref["shares"]
# the chorales are in many keys: no bass degrees of C for them; most of
# their sonorities are consonant, not all (passing sevenths and fourths)
assert ref["shares"]["primary_bass"] is None, ref["shares"]
assert 0.4 < ref["shares"]["consonant"] < 0.9, ref["shares"]
assert 0 < ref["rates"]["parallels"] < 0.01, ref["rates"]
EOF
check "CSV: 1 + 3 lines" test "$(wc -l <"$TMP/s.csv")" -eq 4
check "CSV header" has "$TMP/s.csv" "log2_lambda_w,alpha,kept_min,kept_median,kept_max,tv_chord,"
check "CSV header: rules" has "$TMP/s.csv" ",kept_chord,kept_soprano,kept_bass,kept_bass-pc,kept_alto-tenor"
py "CSV rows match the JSON" "$TMP/s.csv" "$TMP/a.json" <<'EOF'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert len(rows) == len(d["points"]) == 3
for row, p in zip(rows, d["points"]):
    assert float(row["log2_lambda_w"]) == p["log2_lambda_w"]
    assert int(row["kept_median"]) == p["rules_kept"]["median"]
    assert float(row["tv_chord"]) == p["tv"]["chord"]
    assert int(row["sonorities"]) == p["sonorities"]
    assert float(row["kept_chord"]) == p["rules"][0]["kept_share"]
EOF
py "PNG plot" "$TMP/s.png" <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
assert int.from_bytes(data[16:20], "big") == 900 and int.from_bytes(data[20:24], "big") == 1000
assert len(data) > 20000, len(data)
EOF

# --- the same seeds give the same document (timing aside); others another ---
run_pn 0 "sweep again" "${SWEEP[@]}" --json
cp "$OUT" "$TMP/b.json"
grep -v 'seconds"' "$TMP/a.json" >"$TMP/a.notime"
grep -v 'seconds"' "$TMP/b.json" >"$TMP/b.notime"
check "timing fields were left out" test "$(wc -l <"$TMP/a.notime")" -lt "$(wc -l <"$TMP/a.json")"
check "same seeds, same JSON" cmp -s "$TMP/a.notime" "$TMP/b.notime"
run_pn 0 "sweep, other seeds" sweep "$RULES" --knob log2_lambda_w --from -10 --to 6 --points 3 \
    --steps 40 --seeds 3,4 --json
grep -v 'seconds"' "$OUT" >"$TMP/c.notime"
check "other seeds, other JSON" test -n "$(diff "$TMP/a.notime" "$TMP/c.notime" | head -1)"

# --- a seed's run in a sweep of two seeds is the sweep of that seed alone ---
run_pn 0 "sweep, seed 2 alone" sweep "$RULES" --knob log2_lambda_w --from -10 --to 6 --points 3 \
    --steps 40 --seeds 2 --json
py "by_seed = the seed's own sweep" "$OUT" "$TMP/a.json" <<'EOF'
import json, sys
alone = json.load(open(sys.argv[1]))["points"]
both = json.load(open(sys.argv[2]))["points"]
for p, q in zip(alone, both):
    (only,) = p["by_seed"]
    assert only["seed"] == 2 and only["sonorities"] == p["sonorities"]
    for group in ("tv", "shares", "rates"):
        assert only[group] == p[group] == q["by_seed"][1][group], (group, only[group], q["by_seed"])
    # one seed has no spread
    for group in ("tv", "shares", "rates"):
        assert all(v is None for v in p["standard_error"][group].values()), p["standard_error"]
EOF

# --- a point is what `parnassus sample` writes, measured by `evaluate` ---
for x in -10 6; do
    run_pn 0 "sample at $x" sample "$RULES" --steps 40 --seed 3 --log2-lambda-w "$x" -o "$TMP/run.mid"
    run_pn 0 "evaluate the sample at $x" evaluate "$TMP/run.mid" --json
    cp "$OUT" "$TMP/evaluate.json"
    run_pn 0 "sweep one point at $x" sweep "$RULES" --knob log2_lambda_w --from "$x" --to "$x" \
        --points 1 --steps 40 --seeds 3 --json
    py "sweep at $x = sample + evaluate" "$OUT" "$TMP/evaluate.json" <<'EOF2'
import json, sys
s = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
(p,) = s["points"]
assert p["sonorities"] == e["input"]["sonorities"], (p["sonorities"], e["input"])
for name, tv in p["tv"].items():
    assert tv == e["distributions"][name]["tv"], (name, tv, e["distributions"][name]["tv"])
for name, v in p["rates"].items():
    assert v == e["rates"][name]["input"], (name, v, e["rates"][name]["input"])
# the shares, counted again from evaluate's distributions: the bass's
# pitches on C, F or G; chord types of the bass and consonances above it
bass = e["distributions"]["range_bass"]["input"]
primary = sum(v for k, v in bass.items() if int(k) % 12 in (0, 5, 7))
assert 0 < primary <= 1 and abs(p["shares"]["primary_bass"] - primary) < 1e-12, (p["shares"], primary)
chords = e["distributions"]["chord"]["input"]
consonant = sum(v for k, v in chords.items() if set(map(int, k.split(","))) <= {0, 3, 4, 7, 8, 9})
assert 0 < consonant < 1 and abs(p["shares"]["consonant"] - consonant) < 1e-12, (p["shares"], consonant)
EOF2
done

# --- the table ---
run_pn 0 "sweep table" sweep "$RULES" --knob=log2_lambda_w --from=-10 --to=6 --points=2 \
    --steps=20 --plot "$TMP/s.svg"
check "table: heading" has "$OUT" "sweep of log2_lambda_w over rule set sweep-small"
check "table: settings" has "$OUT" "2 points from -10 to 6; alpha 0.8"
check "table: reference" has "$OUT" "reference chorales-major (chorales-major.json"
check "table: reference row" grep -qE '^ +reference +[0-9]' "$OUT"
check "table: rules kept most often" has "$OUT" "rules kept most often"
check "table: one row per point" test "$(grep -cE '^ +(-10|6)  ' "$OUT")" -eq 4
check "table: no standard error with one seed" test -z "$(grep "standard error over" "$OUT")"
run_pn 0 "sweep table, two seeds" sweep "$RULES" --knob=log2_lambda_w --from=-10 --to=6 --points=2 \
    --steps=20 --seeds=1,2
check "table: standard error over two seeds" has "$OUT" "standard error over the 2 seeds"
check "table: a point's rows, of figures and errors" test "$(grep -cE '^ +(-10|6)  ' "$OUT")" -eq 6
check "SVG plot" grep -q "<svg" "$TMP/s.svg"
check "SVG plot starts as XML" test "$(head -c 5 "$TMP/s.svg")" = "<?xml"

# --- sweeping alpha: the elastic net keeps every rule at alpha 0 and
# selects at alpha 1 ---
run_pn 0 "sweep alpha" sweep "$RULES" --knob alpha --points 2 --steps 20 --log2-lambda-w 4 \
    --lambda-p 0.001 --json
py "alpha sweep" "$OUT" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["knob"] == "alpha" and d["fixed"] == {"name": "log2_lambda_w", "value": 4.0}
assert d["lambda_p"] == 0.001 and d["seeds"] == [1] and d["steps"] == 20
pts = d["points"]
assert [p["alpha"] for p in pts] == [0, 1] and all(p["log2_lambda_w"] == 4 for p in pts)
assert pts[0]["rules_kept"]["median"] > pts[1]["rules_kept"]["median"], pts
EOF

# --- a reference of our own: a statistics file ---
cat >"$TMP/tiny.json" <<'EOF'
{
  "format": "parnassus-style/1",
  "name": "tiny",
  "sonorities": 6,
  "distributions": {
    "chord": {"0,4,7": 3, "0,3,8": 1, "0,4,7,10": 1, "0,5,9": 1},
    "soprano_motion": {"2": 1, "0": 2, "7": 1}
  }
}
EOF
run_pn 0 "sweep --reference FILE" sweep "$RULES" --knob log2_lambda_w --from 0 --to 0 \
    --points 1 --steps 10 --reference "$TMP/tiny.json" --json
py "reference FILE" "$OUT" "$TMP/tiny.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ref = d["reference"]
assert ref["name"] == "tiny" and ref["file"] == sys.argv[2], ref
# root position 3 of 6; consonant 4 of 6 (a seventh, a fourth above the bass)
assert ref["shares"] == {"root_position": 0.5, "stepwise_soprano": 0.25, "soprano_leaps": 0.25,
                         "primary_bass": None, "consonant": 4 / 6}, ref["shares"]
assert ref["rates"] == {"parallels": None, "hidden": None, "wide": None, "crossing": None}
(p,) = d["points"]
assert p["value"] == 0 and p["tv"]["chord"] is not None
assert p["tv"]["alto_motion"] is None  # the reference has none
EOF
run_pn 0 "sweep --reference minor" sweep "$RULES" --knob alpha --from 0.8 --to 0.8 --points 1 \
    --steps 5 --reference minor
check "reference minor" has "$OUT" "reference chorales-minor"

# --- help ---
run_pn 0 "sweep --help" sweep --help
check "help: usage" has "$OUT" "usage: parnassus sweep RULES --knob log2_lambda_w|alpha"
run_pn 0 "parnassus --help" --help
check "the command list names sweep" grep -qE '^  sweep +' "$OUT"
run_pn 0 "help sweep" help sweep
check "help sweep" has "$OUT" "--seeds S1,S2"

# --- usage errors: status 2, the option named ---
usage_error "missing RULES" "missing RULES" --knob log2_lambda_w
usage_error "missing knob" "missing --knob" "$RULES"
usage_error "unknown knob" "--knob must be log2_lambda_w or alpha (got 'beta')" "$RULES" --knob beta
usage_error "from above to" "--from 2 is above --to 1" "$RULES" --knob log2_lambda_w --from 2 --to 1
usage_error "one point, two settings" "--points 1 sweeps a single setting" "$RULES" \
    --knob log2_lambda_w --from -2 --to 2 --points 1
usage_error "points, from = to" "--from and --to are both 3" "$RULES" --knob log2_lambda_w \
    --from 3 --to 3
usage_error "points 0" "--points must be within [1, 100] (got 0)" "$RULES" --knob alpha --points 0
usage_error "points not whole" "--points: expected a whole number" "$RULES" --knob alpha --points 2.5
usage_error "steps 0" "--steps must be within [1, 100000] (got 0)" "$RULES" --knob alpha --steps 0
usage_error "steps not a number" "--steps: 'many' is not a number" "$RULES" --knob alpha --steps many
usage_error "seeds: empty item" "--seeds: expected comma-separated seeds" "$RULES" --knob alpha \
    --seeds 1,,2
usage_error "seeds: trailing comma" "--seeds: expected comma-separated seeds" "$RULES" --knob alpha \
    --seeds 1,2,
usage_error "seeds: not a number" "--seeds: 'x' is not a non-negative integer" "$RULES" \
    --knob alpha --seeds 1,x
usage_error "seeds: negative" "--seeds: '-1' is not a non-negative integer" "$RULES" \
    --knob alpha --seeds=-1
usage_error "seeds: twice" "--seeds: seed 2 is listed twice" "$RULES" --knob alpha --seeds 2,3,2
usage_error "alpha range" "--from must be within [0, 1] (got 2)" "$RULES" --knob alpha --from 2
usage_error "log2 range" "--to must be within [-60, 60] (got 99)" "$RULES" --knob log2_lambda_w \
    --to 99
usage_error "swept knob fixed too" "--alpha is the knob being swept" "$RULES" --knob alpha \
    --alpha 0.5
usage_error "swept knob fixed too (lw)" "--log2-lambda-w is the knob being swept" "$RULES" \
    --knob log2_lambda_w --log2-lambda-w 1
usage_error "fixed alpha range" "--alpha must be within [0, 1] (got 1.5)" "$RULES" \
    --knob log2_lambda_w --alpha 1.5
usage_error "lambda-p" "--lambda-p: 'x' is not a number" "$RULES" --knob alpha --lambda-p x
usage_error "plot extension" "--plot: '$TMP/p.pdf' must end in .png or .svg" "$RULES" \
    --knob alpha --plot "$TMP/p.pdf"
usage_error "reference none" "--reference none" "$RULES" --knob alpha --reference none
usage_error "unknown option" "unknown option '--bogus'" "$RULES" --knob alpha --bogus
usage_error "missing value" "missing value for option '--from'" "$RULES" --knob alpha --from
bad_input "unreadable rules" "$TMP/nothere.json" "$TMP/nothere.json" --knob alpha
printf '{"format": "parnassus-rules/1", "name": "x", "rules": []}' >"$TMP/bad.json"
bad_input "bad rule set" "bad.json: rules: empty list" "$TMP/bad.json" --knob alpha
bad_input "unreadable reference" "$TMP/noref.json" "$RULES" --knob alpha --reference "$TMP/noref.json"
cat >"$TMP/huge.json" <<'EOF'
{"format": "parnassus-rules/1", "name": "huge", "space": {"voices": 8, "low": 0, "high": 127},
 "rules": [{"name": "a", "feature": "w(1)", "targets": {"60": 1}}]}
EOF
bad_input "a space too large" "huge.json: rule set huge, alpha 1, seed 1: setup:" \
    "$TMP/huge.json" --knob alpha --from 1 --to 1 --points 1 --steps 3

# --- an output file that cannot be written: found before the sweep, status 2 ---
run_pn 2 "unwritable CSV" sweep "$RULES" --knob alpha --from 1 --to 1 --points 1 --steps 5 \
    --csv "$TMP/no/such/dir.csv"
check "unwritable CSV: message" has "$ERR" "--csv $TMP/no/such/dir.csv: cannot write"
check "unwritable CSV: nothing on stdout" test ! -s "$OUT"
run_pn 2 "unwritable plot" sweep "$RULES" --knob alpha --from 1 --to 1 --points 1 --steps 5 \
    --plot "$TMP/no/such/dir.png" --json
check "unwritable plot: nothing on stdout" test ! -s "$OUT"
check "unwritable plot: no file" test ! -e "$TMP/no/such/dir.png"

cli_finish
