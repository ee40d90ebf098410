#!/usr/bin/env bash
# Tests of the parnassus command line (docs/cli.md): exit codes, messages,
# the --json documents, --solution, --csv and --plot files.
#
# usage: test_cli.sh PARNASSUS DATA_DIR [PARNASSUS_GEN]
#   DATA_DIR is tests/data; with PARNASSUS_GEN (or a parnassus-gen found in
#   the build tree) the artificial case A1 of the paper is run too.
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 PARNASSUS DATA_DIR [PARNASSUS_GEN]" >&2
    exit 2
fi
PN=$1
DATA=$2
GEN=${3:-$(dirname "$PN")/../../tools/gen/parnassus-gen}
PY=/usr/bin/python3
FULL=$DATA/instances/example-full.txt
GROUPED=$DATA/instances/example-grouped.txt
THREE=$DATA/cli/three-rules.txt

source "$(dirname "$0")/cli_lib.sh" cli

# usage_error NAME COMMAND ARGS...: exit 2 with a message that points to
# the subcommand's help.
usage_error() {
    local name=$1 command=$2
    shift 2
    run_pn 2 "$name" "$command" "$@"
    check "$name: stderr points to help" has "$ERR" "see 'parnassus $command --help'"
    check "$name: nothing on stdout" test ! -s "$OUT"
}

# --- checkers (python) -------------------------------------------------------

cat >"$TMP/validate_solve.py" <<'EOF'
import json, math, sys
K, log2lw, alpha, lambda_p, seed = int(sys.argv[1]), *map(float, sys.argv[2:5]), int(sys.argv[5])
d = json.load(sys.stdin)
num = (int, float)
assert d["format"] == "parnassus-solve/1"
assert d["status"] in ("solved", "limit_cycle", "max_iterations"), d["status"]
for key in ("objective", "weighted_error", "seconds", "p_kkt", "w_kkt", "log2_lambda_w",
            "alpha", "lambda_p", "penalty_p", "penalty_w", "lambda_w"):
    assert isinstance(d[key], num) and not isinstance(d[key], bool), key
    assert math.isfinite(d[key]), key
for key in ("iterations", "starts", "seed", "num_selected", "newton_iterations"):
    assert isinstance(d[key], int) and not isinstance(d[key], bool), key
assert isinstance(d["group_selective"], bool)
assert d["seconds"] >= 0 and d["iterations"] >= 1 and d["starts"] >= 1
assert d["log2_lambda_w"] == log2lw and d["alpha"] == alpha
assert d["lambda_p"] == lambda_p and d["seed"] == seed
assert d["weighted_error"] >= 0 and d["objective"] >= d["weighted_error"] - 1e-15
inst = d["instance"]
assert inst["form"] in ("full", "grouped") and inst["num_rules"] == K
rules = d["rules"]
assert isinstance(rules, list) and len(rules) == K
for r in rules:
    assert isinstance(r["name"], str) and r["name"]
    assert isinstance(r["selected"], bool)
    assert isinstance(r["size"], int) and r["size"] >= 1
    for key in ("group_norm", "error"):
        assert isinstance(r[key], num) and not isinstance(r[key], bool) and r[key] >= 0, key
    assert r["selected"] == (r["group_norm"] > 0)
assert d["num_selected"] == sum(r["selected"] for r in rules)
assert sum(r["size"] for r in rules) == inst["num_rows"]
EOF
cat >"$TMP/check_solution.py" <<'EOF'
import sys
path, groups, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = open(path).read().split("\n")
assert lines[-1] == "", "no final newline"
lines = lines[:-1]
assert len(lines) == groups + rows + 2, len(lines)
assert lines[0] == f"# q: {groups} values, one per group in the file's group order", lines[0]
assert lines[groups + 1] == f"# w: {rows} values, one per rule component", lines[groups + 1]
q = [float(x) for x in lines[1:groups + 1]]
w = [float(x) for x in lines[groups + 2:]]
assert all(x >= 0 for x in q) and abs(sum(q) - 1) < 1e-9, sum(q)
assert all(x >= 0 for x in w) and abs(sum(w) - 1) < 1e-9, sum(w)
EOF
cat >"$TMP/validate_path.py" <<'EOF'
import json, math, sys
K, points_file = int(sys.argv[1]), sys.argv[2]
d = json.load(sys.stdin)
num = (int, float)
assert d["format"] == "parnassus-path/1"
for key in ("alpha", "lambda_p", "seconds"):
    assert isinstance(d[key], num) and not isinstance(d[key], bool), key
assert isinstance(d["seed"], int) and d["seconds"] >= 0
assert isinstance(d["rules"], list) and len(d["rules"]) == K
assert all(isinstance(n, str) for n in d["rules"])
points = d["points"]
assert isinstance(points, list) and len(points) >= 1
xs = [p["log2_lambda_w"] for p in points]
assert xs == sorted(xs) and len(set(xs)) == len(xs), "points not increasing"
for p in points:
    for key in ("log2_lambda_w", "objective", "weighted_error"):
        assert isinstance(p[key], num) and math.isfinite(p[key]), key
    assert isinstance(p["group_selective"], bool)
    assert isinstance(p["selected"], list)
    assert all(isinstance(r, int) and 1 <= r <= K for r in p["selected"])
    assert p["selected"] == sorted(set(p["selected"]))
    assert isinstance(p["group_norms"], list) and len(p["group_norms"]) == K
    assert all(isinstance(g, num) and g >= 0 for g in p["group_norms"])
    assert p["selected"] == [r + 1 for r in range(K) if p["group_norms"][r] > 0]
    assert p["num_selected"] == len(p["selected"])
open(points_file, "w").write(str(len(points)))
EOF
cat >"$TMP/check_csv.py" <<'EOF'
import csv, json, sys
path, K, npoints = sys.argv[1], int(sys.argv[2]), int(open(sys.argv[3]).read())
names = json.load(open(sys.argv[4]))["rules"]
rows = list(csv.reader(open(path, newline="")))
header = ["log2_lambda_w", "objective", "weighted_error", "num_selected", "group_selective"]
header += ["norm_" + n for n in names] + ["error_" + n for n in names]
assert rows[0] == header, rows[0]
assert len(rows) == npoints + 1, (len(rows), npoints)
for row in rows[1:]:
    assert len(row) == 5 + 2 * K
    [float(x) for x in row]
    assert row[4] in ("0", "1")
EOF

# --- help and version -------------------------------------------------------

run_pn 0 "--version" --version
check "--version prints the version" grep -qE '^parnassus [0-9]+\.[0-9]+\.[0-9]+$' "$OUT"
check "--version names the BLAS kernels" grep -qE '^BLAS: OpenBLAS, [A-Za-z0-9]+ kernels' "$OUT"
# Kernels the user names are kept; otherwise a CPU with AVX2 and FMA runs
# kernels that use them, also where OpenBLAS is older than the CPU (the
# program then starts again with OPENBLAS_CORETYPE set).
# (x86-64 only: elsewhere OpenBLAS has no Prescott kernels to name)
if [[ $(uname -m) == x86_64 ]]; then
OPENBLAS_CORETYPE=Prescott run_pn 0 "--version, Prescott named" --version
check "--version: the named kernels run" has "$OUT" "BLAS: OpenBLAS, Prescott kernels"
fi
if [[ $(uname -m) == x86_64 ]] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    check "--version: the Prescott kernels are said to leave AVX2 unused" \
        has "$OUT" "AVX2 and FMA unused"
    env -u OPENBLAS_CORETYPE "$PN" --version >"$TMP/version-own.out"
    check "--version: a CPU with AVX2 and FMA runs kernels that use them" \
        lacks "$TMP/version-own.out" "unused"
    check "--version: printed once" test "$(grep -c '^parnassus ' "$TMP/version-own.out")" -eq 1
fi
for args in "--help" "help" "-h"; do
    run_pn 0 "$args" $args
    check "$args prints usage" has "$OUT" "usage: parnassus COMMAND"
done
for command in solve path; do
    run_pn 0 "$command --help" "$command" --help
    check "$command --help prints usage" has "$OUT" "usage: parnassus $command FILE"
    run_pn 0 "help $command" help "$command"
    check "help $command prints usage" has "$OUT" "usage: parnassus $command FILE"
    run_pn 0 "$command FILE --bogus --help" "$command" "$FULL" --bogus --help
done
run_pn 2 "no arguments"
check "no arguments: usage on stderr" has "$ERR" "usage: parnassus"
run_pn 2 "unknown command" frobnicate
check "unknown command: named" has "$ERR" "unknown command 'frobnicate'"
run_pn 2 "help for an unknown command" help frobnicate
run_pn 2 "unknown global option" --frobnicate

# --- usage errors -------------------------------------------------------------

usage_error "unknown option" solve "$FULL" --bogus
check "unknown option: named" has "$ERR" "'--bogus'"
usage_error "short unknown option" solve "$FULL" -x
usage_error "missing value" solve "$FULL" --alpha
check "missing value: named" has "$ERR" "missing value for option '--alpha'"
usage_error "empty value" solve "$FULL" --alpha=
usage_error "option as value" solve "$FULL" --solution --json
usage_error "flag with a value" solve "$FULL" --json=yes
usage_error "missing FILE" solve --alpha 0.5
check "missing FILE: named" has "$ERR" "missing FILE"
usage_error "extra argument" solve "$FULL" "$GROUPED"
check "extra argument: named" has "$ERR" "unexpected argument"
for bad in 0.5x x "" " 0.5" 0.5, nan NaN inf -inf 1e999 0x; do
    usage_error "bad number '$bad'" solve "$FULL" --alpha "$bad"
done
check "bad number: named" has "$ERR" "--alpha"
usage_error "alpha above 1" solve "$FULL" --alpha 1.5
check "alpha out of range: named" has "$ERR" "--alpha must be within [0, 1]"
usage_error "alpha below 0" solve "$FULL" --alpha=-0.1
usage_error "negative lambda-p" solve "$FULL" --lambda-p -1
usage_error "log2-lambda-w above 60" solve "$FULL" --log2-lambda-w 60.5
usage_error "log2-lambda-w below -60" solve "$FULL" --log2-lambda-w=-61
for bad in -1 1.5 +3 1e3 18446744073709551616 9223372036854775808; do
    usage_error "bad seed '$bad'" solve "$FULL" --seed "$bad"
done
usage_error "path: no --log2-lambda-w" path "$FULL" --log2-lambda-w 0
usage_error "path: no --solution" path "$FULL" --solution x.txt
usage_error "path: bad alpha" path "$FULL" --alpha 2
usage_error "path: plot format" path "$FULL" --plot "$TMP/plot.pdf"
check "plot format: nothing written" test ! -e "$TMP/plot.pdf"
usage_error "path: missing FILE" path --json

# --- bad input files ----------------------------------------------------------

run_pn 2 "file that does not exist" solve "$TMP/no-such-file.txt"
check "missing file: named" has "$ERR" "no-such-file.txt"

printf 'parnasus-instance 1\nn 4\n' >"$TMP/bad-header.txt"
printf 'parnassus-instance 1\nn 4\nrules 1\nrule r 2\nassign 0 1 0 5\ntarget 0.5 0.5\n' \
    >"$TMP/bad-cell.txt"
printf 'parnassus-grouped 1\nn 2\nrules 1\nrule r 2\ntarget 0.5 0.4\ngroups 2\n1 0\n1 1\n' \
    >"$TMP/bad-sum.txt"
printf 'parnassus-instance 1\nn 4\nrules 1\nrule r 2\nassign 0 1\n' >"$TMP/bad-short.txt"
printf 'parnassus-instance 1\nn 2\nrules 1\nrule r 2\nassign 0 1\ntarget 0.5 abc\n' \
    >"$TMP/bad-number.txt"
for spec in bad-header.txt:1 bad-cell.txt:5 bad-sum.txt:5 bad-short.txt:5 bad-number.txt:6; do
    file=${spec%:*}
    line=${spec##*:}
    for command in solve path; do
        run_pn 2 "$command $file" "$command" "$TMP/$file"
        check "$command $file: stderr names $file:$line" has "$ERR" "$file:$line:"
        check "$command $file: nothing on stdout" test ! -s "$OUT"
    done
done

# --- solve --------------------------------------------------------------------

run_pn 0 "solve (report)" solve "$FULL"
for word in status objective "weighted error" alternations starts seconds "KKT residuals" \
    parity low-high "|w_r|_2" "|A_r p - b_r|_2"; do
    check "solve report shows '$word'" has "$OUT" "$word"
done
check "solve report: status first" grep -qE '^status +(solved|limit_cycle|max_iterations)$' "$OUT"
check "solve report: no stderr" test ! -s "$ERR"

# validate_solve K LOG2LW ALPHA LAMBDA_P SEED: checks the solve document in $OUT
validate_solve() { "$PY" "$TMP/validate_solve.py" "$@" <"$OUT"; }

run_pn 0 "solve --json" solve "$GROUPED" --json
check "solve --json: schema" validate_solve 2 0 0.8 0.0001 1
check "solve --json: no stderr" test ! -s "$ERR"
run_pn 0 "solve --json, --opt=value" solve "$FULL" --json --alpha=0.5 --lambda-p=0 \
    --log2-lambda-w=-2.5 --seed=7
check "solve --opt=value: values taken" validate_solve 2 -2.5 0.5 0 7
run_pn 0 "solve --json, --opt value" solve --log2-lambda-w -3 --alpha 1 --lambda-p 1e-3 \
    --seed 0 --json "$FULL"
check "solve --opt value: values taken" validate_solve 2 -3 1 0.001 0
run_pn 0 "solve after --" solve --json -- "$FULL"
check "solve after --: schema" validate_solve 2 0 0.8 0.0001 1
run_pn 0 "solve, repeated option keeps the last" solve "$FULL" --json --alpha 0.2 --alpha 0.6
check "repeated option: last value" validate_solve 2 0 0.6 0.0001 1
run_pn 0 "solve three rules --json" solve "$THREE" --json
check "three rules: schema" validate_solve 3 0 0.8 0.0001 1

# check_solution FILE GROUPS ROWS: comment lines, counts, q and w on simplices
check_solution() { "$PY" "$TMP/check_solution.py" "$@"; }

run_pn 0 "solve --solution (full)" solve "$FULL" --solution "$TMP/full.sol"
check "solve --solution: report still printed" has "$OUT" "status"
check "solution (full): format" check_solution "$TMP/full.sol" 4 4
run_pn 0 "solve --solution --json (grouped)" solve "$GROUPED" --json --solution="$TMP/grouped.sol"
check "solution (grouped): format" check_solution "$TMP/grouped.sol" 4 4
check "solution: --json output intact" validate_solve 2 0 0.8 0.0001 1
check "solution: full and grouped forms agree" cmp -s "$TMP/full.sol" "$TMP/grouped.sol"
run_pn 0 "solve --solution (three rules)" solve "$THREE" --solution "$TMP/three.sol"
check "solution (three rules): format" check_solution "$TMP/three.sol" 4 6
run_pn 2 "solve --solution into a missing directory" solve "$FULL" --solution "$TMP/no/dir.sol"
check "unwritable solution: named" has "$ERR" "$TMP/no/dir.sol"

# --- path ---------------------------------------------------------------------

# validate_path K: checks the path document in $OUT, writes the number of
# points to $TMP/points
validate_path() { "$PY" "$TMP/validate_path.py" "$@" "$TMP/points" <"$OUT"; }

# check_csv FILE K: header and one row per point of the last validate_path
check_csv() { "$PY" "$TMP/check_csv.py" "$@" "$TMP/points" "$OUT"; }


run_pn 0 "path (table)" path "$FULL"
check "path table: header" has "$OUT" "log2(lambda_w)"
check "path table: seconds" grep -qE '^seconds [0-9.]+$' "$OUT"
check "path table: rows" grep -qE '^ +-?[0-9]+\.[0-9]+ +[0-9.e+-]+ +[0-9]+  (yes|no) +' "$OUT"

run_pn 0 "path --json --csv --plot png" path "$THREE" --json --csv "$TMP/three.csv" \
    --plot "$TMP/three.png"
check "path --json: schema" validate_path 3
check "path --json: rule names" has "$OUT" '"low,high"'
check "path --csv: header and rows" check_csv "$TMP/three.csv" 3
check "path --plot png" check_image "$TMP/three.png"
run_pn 0 "path --opt=value, svg" path "$GROUPED" --json --alpha=0.7 --lambda-p=0 --seed=3 \
    --csv="$TMP/grouped.csv" --plot="$TMP/grouped.svg"
check "path --opt=value: schema" validate_path 2
check "path --opt=value: values taken" "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["alpha"] == 0.7 and d["lambda_p"] == 0 and d["seed"] == 3' <"$OUT"
check "path --csv (grouped)" check_csv "$TMP/grouped.csv" 2
check "path --plot svg" check_image "$TMP/grouped.svg"
run_pn 2 "path --csv into a missing directory" path "$FULL" --csv "$TMP/no/dir.csv"
run_pn 2 "path --plot into a missing directory" path "$FULL" --plot "$TMP/no/dir.png"
check "unwritable plot: named" has "$ERR" "$TMP/no/dir.png"

# names that are not UTF-8: escaped in JSON, replaced in plots
printf 'parnassus-instance 1\nn 2\nrules 2\nrule caf\xc3\xa9 2\nassign 0 1\ntarget 0.5 0.5\nrule bad\xff 1\nassign 0 0\ntarget 1\n' \
    >"$TMP/names.txt"
run_pn 0 "names not UTF-8" path "$TMP/names.txt" --json --plot "$TMP/names.png"
check "names not UTF-8: JSON" "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["rules"] == ["caf\u00e9", "bad\\xff"], d["rules"]' <"$OUT"
check "names not UTF-8: plot" check_image "$TMP/names.png"

# --- the artificial case A1 of the paper ------------------------------------

if [[ -x "$GEN" ]]; then
    "$GEN" a1 --seed 1 -o "$TMP/a1.txt"
    # at a small lambda_w the selection is rules 1 and 2, realized exactly
    run_pn 0 "A1 solve" solve "$TMP/a1.txt" --log2-lambda-w -6 --json \
        --solution "$TMP/a1.sol"
    check "A1 solve: schema" validate_solve 5 -6 0.8 0.0001 1
    check "A1 solve: rules 1 and 2" "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert [r["selected"] for r in d["rules"]] == [True, True, False, False, False]
assert d["weighted_error"] < 1e-6 and d["group_selective"]' <"$OUT"
    groups=$(awk '$1 == "groups" { print $2 }' "$TMP/a1.txt")
    check "A1 solution: format" check_solution "$TMP/a1.sol" "$groups" 310
    run_pn 0 "A1 path" path "$TMP/a1.txt" --json --csv "$TMP/a1.csv" --plot "$TMP/a1.png"
    check "A1 path: schema" validate_path 5
    check "A1 path: selects {1,2} exactly somewhere" "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert any(p["selected"] == [1, 2] and p["weighted_error"] < 1e-6 for p in d["points"])
assert d["points"][-1]["selected"] == [1, 2, 3, 4, 5]' <"$OUT"
    check "A1 path --csv" check_csv "$TMP/a1.csv" 5
    check "A1 path --plot" check_image "$TMP/a1.png"
else
    echo "note: parnassus-gen not found at $GEN, A1 skipped" >&2
fi

cli_finish
