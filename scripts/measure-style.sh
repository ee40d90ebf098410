#!/usr/bin/env bash
# Measures how close the shipped chorale sets sound to the chorales they
# were not learned from (docs/presets.md): for each mode, 2000 steps of
#   - the plugin's output (`parnassus render`, default knobs, 1/8 notes,
#     one voice per channel; major: the built-in set, minor: chorale-minor),
#   - the engine's sequential generation (`parnassus sample`),
#   - the first-order Markov baseline over whole sonorities learned from
#     the same training split (`parnassus baseline`),
# with seeds 1, 2 and 3 (or those of SEEDS), each measured against the
# validation split of its mode (`parnassus evaluate`, the shipped
# reference), one by one and all seeds pooled. Prints a Markdown table per
# mode; the MIDI files and the JSON reports stay in OUTDIR.
#
# usage: [PN_BUILD=DIR] [SEEDS="4 5 ..."] scripts/measure-style.sh CHORALES.json [OUTDIR]
#   CHORALES.json: the JSB chorales ({"train": [...], "valid": [...]}), for
#   the baseline (the rule sets were learned from its train split).
#   SEEDS: the seeds, separated by spaces (default "1 2 3"). With more than
#   three, each generator's seeds are shown as mean ± standard deviation:
#   a run's chord row moves by about 0.01 between seeds, so small
#   differences need many seeds to be seen.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 CHORALES.json [OUTDIR]" >&2
    exit 2
fi
CHORALES=$1
OUT=${2:-out/measure}
BUILD=${PN_BUILD:-build/release}
PN=$BUILD/apps/parnassus/parnassus
[[ -x $PN ]] || { echo "$PN is not built (cmake --build --preset release)" >&2; exit 2; }
SEEDS=${SEEDS:-1 2 3}
read -r -a seeds <<<"$SEEDS"
declare -A seen=()
for seed in "${seeds[@]}"; do
    [[ $seed =~ ^[0-9]+$ ]] || { echo "SEEDS: '$seed' is not a seed (a whole number)" >&2; exit 2; }
    [[ -z ${seen[$seed]:-} ]] || { echo "SEEDS: seed $seed is given twice" >&2; exit 2; }
    seen[$seed]=1
done
[[ ${#seeds[@]} -gt 0 ]] || { echo "SEEDS: no seed given" >&2; exit 2; }
mkdir -p "$OUT"
STEPS=2000
BARS=$((STEPS / 8)) # 1/8 notes in 4/4

run_mode() {
    local mode=$1 rules=()
    [[ $mode == minor ]] && rules=(--rules presets/chorale-minor.json)
    for seed in "${seeds[@]}"; do
        "$PN" render "${rules[@]}" --bars "$BARS" --seed "$seed" --set channel_per_voice=1 \
            -o "$OUT/render-$mode-$seed.mid" >"$OUT/render-$mode-$seed.log"
        "$PN" sample "presets/chorale-$mode.json" --steps "$STEPS" --seed "$seed" \
            -o "$OUT/sample-$mode-$seed.mid" >"$OUT/sample-$mode-$seed.log"
        "$PN" baseline "$CHORALES" --split train --mode "$mode" --steps "$STEPS" --seed "$seed" \
            -o "$OUT/markov-$mode-$seed.mid" >"$OUT/markov-$mode-$seed.log"
    done
    for kind in render sample markov; do
        local files=()
        for seed in "${seeds[@]}"; do
            "$PN" evaluate "$OUT/$kind-$mode-$seed.mid" --reference "$mode" --json \
                >"$OUT/$kind-$mode-$seed.json"
            files+=("$OUT/$kind-$mode-$seed.mid")
        done
        "$PN" evaluate "${files[@]}" --reference "$mode" --json >"$OUT/$kind-$mode-pooled.json"
    done
}

# the two modes side by side, one per core
run_mode major &
major=$!
run_mode minor
wait "$major"

/usr/bin/env python3 - "$OUT" "${seeds[@]}" <<'EOF'
import json, statistics, sys
out, seeds = sys.argv[1], sys.argv[2:]
rows = [("chord types (TV)", "chord", None), ("soprano motion (TV)", "soprano_motion", None),
        ("alto motion (TV)", "alto_motion", None), ("tenor motion (TV)", "tenor_motion", None),
        ("bass motion (TV)", "bass_motion", None), ("root motion (TV)", "root_motion", None),
        ("soprano span in a phrase (TV)", "span_soprano", None),
        ("bass span in a phrase (TV)", "span_bass", None),
        ("key areas in a phrase (TV)", "key_area", None),
        ("parallel 5ths/8ves (%)", None, "parallels"), ("hidden 5ths/8ves (%)", None, "hidden"),
        ("upper voices over an octave apart (%)", None, "wide"),
        ("voice crossing (%)", None, "crossing"), ("4-grams copied (%)", None, "copy4")]

def load(path):
    return json.load(open(path))

def value(doc, dist, rate, side="input"):
    if dist:
        return doc["distributions"][dist]["tv"]
    r = doc["rates"][rate][side]
    return None if r is None else 100.0 * r

def fmt(v, pct):
    return "–" if v is None else (f"{v:.2f}" if pct else f"{v:.3f}")

def per_seed(vals, pct):
    """The seeds one by one, or as mean ± standard deviation beyond three
    (of the seeds that have the statistic, as the header says)."""
    if len(vals) <= 3:
        return " / ".join(fmt(v, pct) for v in vals)
    have = [v for v in vals if v is not None]
    if len(have) < 2:
        return fmt(have[0] if have else None, pct)
    return f"{fmt(statistics.mean(have), pct)} ± {fmt(statistics.stdev(have), pct)}"

def seed_list(seeds):
    """'4–13' for a run of consecutive seeds, else the seeds one by one."""
    n = [int(s) for s in seeds]
    if n == list(range(n[0], n[0] + len(n))):
        return f"{n[0]}–{n[-1]}"
    return ", ".join(seeds)

each = ("seeds " + " / ".join(seeds)) if len(seeds) <= 3 else \
    f"{len(seeds)} seeds ({seed_list(seeds)}), mean ± sd"
for mode in ("major", "minor"):
    docs = {k: [load(f"{out}/{k}-{mode}-{s}.json") for s in seeds] +
               [load(f"{out}/{k}-{mode}-pooled.json")] for k in ("render", "sample", "markov")}
    print(f"\n### chorale-{mode} against the {mode} validation chorales\n")
    print(f"| statistic | plugin (render) {each} | pooled | sample {each} | pooled "
          f"| Markov {each} | pooled | chorales |")
    print("|---|---|---:|---|---:|---|---:|---:|")
    for label, dist, rate in rows:
        pct = rate is not None
        cells = []
        for k in ("render", "sample", "markov"):
            vals = [value(d, dist, rate) for d in docs[k]]
            cells.append(per_seed(vals[:-1], pct))
            cells.append(fmt(vals[-1], pct))
        ref = "0" if dist else fmt(value(docs["render"][-1], None, rate, "reference"), True)
        print(f"| {label} | " + " | ".join(cells) + f" | {ref} |")
EOF
