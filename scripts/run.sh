#!/usr/bin/env bash
# Sets up a fresh machine, builds Parnassus (release) and runs the main job
# on the default rule set, presets/chorale-major.json: 64 sonorities of
# sequential generation into a MIDI file. Then, as a quick picture of rule
# selection, the lambda_w solution path of the paper's Case A1
# (examples/a1.txt), printed and plotted like the paper's Fig. 2.
#   scripts/run.sh [RULES] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."

rules=${1:-presets/chorale-major.json}
outdir=${2:-out}

scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target parnassus-cli >/dev/null
mkdir -p "$outdir"
pn=build/release/apps/parnassus/parnassus

name=$(basename "${rules%.*}")
echo "== sampling 64 sonorities from $rules (about 20 s: de-overlap, first realization, 64 steps)"
$pn sample "$rules" --steps 64 --seed 1 -o "$outdir/$name.mid"

echo
echo "== the lambda_w path of Case A1 (examples/a1.txt)"
$pn path examples/a1.txt --csv "$outdir/a1-path.csv" --plot "$outdir/a1-path.png"
$pn path examples/a1.txt --plot "$outdir/a1-path.svg" >/dev/null
echo
echo "music: $outdir/$name.mid; plot: $outdir/a1-path.png (and .svg), table: $outdir/a1-path.csv"
