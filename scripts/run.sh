#!/usr/bin/env bash
# Sets up a fresh machine, builds Parnassus (release) and runs the main job:
# the lambda_w solution path of the shipped example rule system
# (examples/a1.txt, the paper's Case A1), printed and plotted like the
# paper's Fig. 2.   scripts/run.sh [INSTANCE] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."

instance=${1:-examples/a1.txt}
outdir=${2:-out}

scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target parnassus-cli >/dev/null
mkdir -p "$outdir"
name=$(basename "${instance%.*}")
build/release/apps/parnassus/parnassus path "$instance" \
  --csv "$outdir/$name-path.csv" --plot "$outdir/$name-path.png"
build/release/apps/parnassus/parnassus path "$instance" --plot "$outdir/$name-path.svg" >/dev/null
echo
echo "plot: $outdir/$name-path.png (and .svg), table: $outdir/$name-path.csv"
