# Shared helpers of the command-line test scripts; source it after setting
# PN (the parnassus binary):
#
#   source "$(dirname "$0")/cli_lib.sh" NAME
#
# makes a scratch directory $TMP (removed at exit; NAME is part of its
# name), $OUT and $ERR for the output of run_pn, and the counters that
# cli_finish reports.

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pn-test-$1.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
ERR=$TMP/err

passed=0
failed=0

ok() { passed=$((passed + 1)); }
not_ok() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# check NAME CMD...: CMD must succeed.
check() {
    local name=$1
    shift
    if "$@"; then ok; else not_ok "$name"; fi
}

# run_pn WANT NAME ARGS...: runs parnassus ARGS with stdout in $OUT and
# stderr in $ERR; the exit status must be WANT.
run_pn() {
    local want=$1 name=$2 got=0
    shift 2
    "$PN" "$@" >"$OUT" 2>"$ERR" || got=$?
    if [[ $got -eq $want ]]; then
        ok
    else
        not_ok "$name: exit status $got, expected $want"
        sed 's/^/    stderr: /' "$ERR" >&2
    fi
}

# has FILE TEXT: FILE contains TEXT (fixed string).
has() { grep -qF -- "$2" "$1"; }
# lacks FILE TEXT: FILE does not contain TEXT.
lacks() { ! grep -qF -- "$2" "$1"; }

# check_image FILE: a plot of the CLI: a 900 x 600 PNG or an SVG, not
# trivially small.
check_image() {
    /usr/bin/python3 - "$1" <<'PYEOF'
import sys
path = sys.argv[1]
data = open(path, "rb").read()
assert len(data) > 4000, len(data)
if path.lower().endswith(".png"):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(data[16:20], "big") == 900 and int.from_bytes(data[20:24], "big") == 600
else:
    assert data.startswith(b"<?xml") and b"<svg" in data[:400]
PYEOF
}

# cli_finish: prints the counts; the script's status is 0 when none failed.
cli_finish() {
    echo "$passed passed, $failed failed"
    [[ $failed -eq 0 ]]
}
