#!/usr/bin/env bash
# The memory limit, many rules and Ctrl-C on the command line: the
# reproductions of an outside attack (a 650-byte rule file that took
# gigabytes, a hidden 256-rule limit, a minute-long solve nothing could
# stop) as regression tests.
#   test_cli_memory.sh PARNASSUS [SANITIZER]
# With no SANITIZER the refusals must also fit in 200 MB of address space
# and one second (sanitizers reserve terabytes and run slower).
set -uo pipefail
PN=$1
SANITIZER=${2:-}
source "$(dirname "$0")/cli_lib.sh" memory

# rules FILE COUNT FEATURE [SPACE]: COUNT rules of one feature, each with
# all its mass on one value (given as text), over SPACE (JSON) or the default
rules() {
    /usr/bin/python3 - "$@" <<'PYEOF'
import json, sys
path, count, feature, value = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
doc = {"format": "parnassus-rules/1", "name": "t",
       "rules": [{"name": "r%d" % i, "feature": feature, "targets": {value: 1}}
                 for i in range(count)]}
if len(sys.argv) > 5:
    doc["space"] = json.loads(sys.argv[5])
open(path, "w").write(json.dumps(doc))
PYEOF
}

# uniform FILE FEATURE...: one rule per feature over two voices of the
# default space, uniform over the feature's 55 x 55 values
uniform() {
    /usr/bin/python3 - "$@" <<'PYEOF'
import json, sys
vals = ["R"] + [str(p) for p in range(31, 85)]
rules = [{"name": "r%d" % i, "feature": f,
          "targets": {"(%s,%s)" % (a, b): 1 / 3025 for a in vals for b in vals}}
         for i, f in enumerate(sys.argv[2:])]
json.dump({"format": "parnassus-rules/1", "name": "u", "rules": rules}, open(sys.argv[1], "w"))
PYEOF
}

# refused NAME ARGS...: exit 2 naming the file, rule field and limit, with
# how to raise it; in release within 200 MB of address space (refused
# before any table is built: building one would not fit)
refused() {
    local name=$1
    shift
    if [[ -z $SANITIZER ]]; then
        (ulimit -v 204800 && exec "$PN" "$@") >"$OUT" 2>"$ERR"
        local got=$?
        if [[ $got -eq 2 ]]; then ok; else not_ok "$name: exit $got under 200 MB, expected 2"; sed 's/^/    stderr: /' "$ERR" >&2; fi
    else
        run_pn 2 "$name" "$@"
    fi
    check "$name: names the limit" has "$ERR" "over the memory limit of"
    check "$name: how to raise it" has "$ERR" "--max-memory"
}

# 1. rules over every sonority: one, 8 (647 bytes), 300, 4096
for n in 1 8 300 4096; do
    rules "$TMP/w$n.json" "$n" "w(1,2,3,4)" "(31,31,31,31)"
    refused "solve $n full-space rules" solve "$TMP/w$n.json"
    check "solve $n full-space rules: names the field" has "$ERR" "w$n.json: rules[0].feature: w(1,2,3,4) has up to 9150625 values"
done
refused "sample a full-space rule" sample "$TMP/w8.json" -o "$TMP/w.mid"
check "sample: writes nothing" test ! -e "$TMP/w.mid"
refused "path a full-space rule" path "$TMP/w8.json"

# a raised limit is heard, and checked
run_pn 2 "solve --max-memory 4G" solve "$TMP/w1.json" --max-memory 4G
check "solve --max-memory 4G: the new limit" has "$ERR" "over the memory limit of 4 GiB"
run_pn 2 "--max-memory junk" solve "$TMP/w1.json" --max-memory 12Q
check "--max-memory junk: says so" has "$ERR" "--max-memory: '12Q' is not a size"
run_pn 2 "--max-memory too small" solve "$TMP/w1.json" --max-memory 1K
check "--max-memory too small: the range" has "$ERR" "--max-memory must be within [1M, 1T]"

# 8. uniform targets over 36,300 cells: refused at once under the default
uniform "$TMP/u12.json" "w(1,2)" "w(1,3)" "w(1,4)" "w(2,3)" "w(2,4)" "w(3,4)" \
    "w(2,1)" "w(3,1)" "w(4,1)" "w(3,2)" "w(4,2)" "w(4,3)"
refused "solve 36k uniform cells" solve "$TMP/u12.json"
check "36k cells: names the rule" has "$ERR" "u12.json: rules[3].feature: w(2,3) has up to 3025 values"

# 2. more than 256 rules realize (the merge once stopped at 256)
rules "$TMP/r257.json" 257 "w(1)" "60" '{"ranges":[[60,64],[48,52]]}'
run_pn 0 "solve 257 rules" solve "$TMP/r257.json"
check "257 rules: all kept" has "$OUT" "selected        257 of 257 rules"
check "257 rules: solved" has "$OUT" "status          solved"

# interrupt_when_caught CMD ARGS...: runs parnassus in the background, and
# once it catches SIGINT (its handler is in place: /proc/PID/status) and a
# second more has passed, sends it a Ctrl-C; the exit status is in $got
# (130: it ended itself by SIGINT after saying so, as a shell expects)
interrupt_when_caught() {
    # a script's background job starts with Ctrl-C ignored, which the
    # program then respects: give it the default back
    env --default-signal=INT "$PN" "$@" >"$OUT" 2>"$ERR" &
    local pid=$! tries=0
    while ((tries++ < 600)); do
        local caught
        caught=$(awk '/^SigCgt:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
        [[ -n $caught ]] && (((16#$caught >> 1) & 1)) && break
        sleep 0.1
    done
    sleep 1
    kill -INT "$pid" 2>/dev/null
    got=0
    wait "$pid" || got=$?
}

# Ctrl-C: a solve of minutes (two independent 3025-cell rules, 9 million
# groups) stops at the next Newton iteration and says so; the interrupt
# may come while the file is still being read
uniform "$TMP/u2.json" "w(1,2)" "w(3,4)"
for cmd in solve path; do
    interrupt_when_caught $cmd "$TMP/u2.json" --max-memory 4G
    if [[ $got -eq 130 ]]; then ok; else not_ok "$cmd Ctrl-C: exit $got, expected 130"; fi
    if has "$ERR" "parnassus $cmd: interrupted after"; then ok; else not_ok "$cmd Ctrl-C: says so"; sed 's/^/    stderr: /' "$ERR" >&2; fi
    check "$cmd Ctrl-C: prints no result" test ! -s "$OUT"
done
interrupt_when_caught sample "$TMP/u2.json" --max-memory 4G -o "$TMP/u2.mid"
check "sample Ctrl-C: exit 130" test $got -eq 130
check "sample Ctrl-C: says so" has "$ERR" "interrupted after"
check "sample Ctrl-C: writes nothing" test ! -e "$TMP/u2.mid"

echo "test_cli_memory: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
