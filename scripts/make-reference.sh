#!/usr/bin/env bash
# Regenerates the reference statistics of `parnassus evaluate`
# (docs/evaluate.md) from the JSB chorales:
#   data/reference/chorales-major.json   the valid split's major chorales
#   data/reference/chorales-minor.json   the valid split's minor chorales
# each with the 4-grams of the train split's chorales of the same mode
# (moved to C) as the training set of copy4. The bytes depend only on the
# corpus file and the program: running it twice writes the same files.
#
# usage: [PN_BUILD=DIR] scripts/make-reference.sh CHORALES.json
#   CHORALES.json: the chorales in their common JSON form
#   ({"train": [...], "valid": [...], ...}, 16th-note steps).
#   PN_BUILD: the build tree whose parnassus is used (default build/release;
#   the release preset is configured and built there if it has none).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -ne 1 ]]; then
    echo "usage: $0 CHORALES.json" >&2
    exit 2
fi
CHORALES=$1
BUILD=${PN_BUILD:-build/release}
PN=$BUILD/apps/parnassus/parnassus
if [[ ! -x $PN ]]; then
    if [[ $BUILD == build/release ]]; then
        cmake --preset release >/dev/null
    else
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
    fi
    cmake --build "$BUILD" --target parnassus-cli >&2
fi

mkdir -p data/reference
for mode in major minor; do
    out=data/reference/chorales-$mode.json
    # --reference none: nothing to compare with (the reference is being made)
    "$PN" evaluate "$CHORALES" --split valid --mode "$mode" --reference none \
        --training "$CHORALES" --save "$out" --name "chorales-$mode" >/dev/null
    echo "wrote $out"
done
