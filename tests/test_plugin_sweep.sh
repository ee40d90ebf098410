#!/usr/bin/env bash
# The style knob heard from the notes: the plugin, hosted by `parnassus
# render`, plays the pedagogical rule set at log2_lambda_w from -12 to 6.
# The selected-rule count on its output port must change along the sweep
# (few rules when conservative, more when liberal), and the per-rule errors
# measured from the rendered notes (`parnassus analyze` of each .mid) must
# follow it: the liberal rendering follows the rules more closely overall.
#   test_plugin_sweep.sh PARNASSUS BUNDLE_DIR RULES.json
set -euo pipefail
PN=$1
BUNDLE=$2
RULES=$3
source "$(dirname "$0")/cli_lib.sh" sweep

declare -A selected
for lw in -12 -8 -4 0 3 6; do
    run_pn 0 "render at log2_lambda_w $lw" render --bundle "$BUNDLE" --rules "$RULES" --bars 8 \
        --seed 5 --set log2_lambda_w=$lw --set channel_per_voice=1 -o "$TMP/lw$lw.mid"
    selected[$lw]=$(sed -n 's/^rules_selected: *//p' "$OUT")
    [[ ${selected[$lw]} =~ ^[0-9]+$ ]] || not_ok "no rules_selected line at $lw"
    # the names the plugin reported on its notify port: as many as the count
    names=$(sed -n 's/^rules kept at the end: \(.*\) (the selection.*/\1/p' "$OUT")
    named=$(tr ',' '\n' <<<"$names" | grep -c .)
    check "rules named at $lw ($names)" test "$named" -eq "${selected[$lw]}"
done
echo "rules selected along the sweep: -12:${selected[-12]} -8:${selected[-8]} -4:${selected[-4]} 0:${selected[0]} 3:${selected[3]} 6:${selected[6]}"
check "fewer rules at -12 than at 6" test "${selected[-12]}" -lt "${selected[6]}"
distinct=$(printf '%s\n' "${selected[@]}" | sort -u | wc -l)
check "the count changes along the sweep" test "$distinct" -ge 2

# per-rule errors of what was played, at both ends
for lw in -12 6; do
    run_pn 0 "analyze the rendering at $lw" analyze "$RULES" "$TMP/lw$lw.mid" --tonic keep --json
    cp "$OUT" "$TMP/analysis$lw.json"
done
verdict=$(/usr/bin/python3 - "$TMP/analysis-12.json" "$TMP/analysis6.json" "${selected[-12]}" "${selected[6]}" <<'PY'
import json, sys
strict = json.load(open(sys.argv[1]))["rules"]
liberal = json.load(open(sys.argv[2]))["rules"]
s_err = [r["error"] for r in strict]
l_err = [r["error"] for r in liberal]
print("errors at -12:", " ".join(f"{e:.3f}" for e in s_err), file=sys.stderr)
print("errors at  6:", " ".join(f"{e:.3f}" for e in l_err), file=sys.stderr)
ok = sum(l_err) < 0.7 * sum(s_err) and max(l_err) < max(s_err)
# the notes follow more rules closely when the plugin keeps more rules
close = lambda errs: sum(e < 0.1 for e in errs)
ok = ok and close(l_err) > close(s_err)
print("ok" if ok else "no")
PY
)
check "the rendered notes' per-rule errors follow the selection" test "$verdict" = ok
cli_finish
