#!/usr/bin/env bash
# Regenerates the learned presets (docs/presets.md) from the JSB chorales:
#   presets/chorale-major.json, presets/chorale-minor.json, presets/mixed.json,
#   presets/chorale-major-wide.json
# presets/pedagogical.json is written by hand and left alone.
#
# usage: [PN_BUILD=DIR] scripts/make-presets.sh CHORALES.json
#   CHORALES.json: the chorales in their common JSON form
#   ({"train": [...], "valid": [...], "test": [...]}, 16th-note steps).
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

# the built-in feature set of `parnassus learn` (docs/learning.md), over its
# own space: the chorale registers in C (soprano 57-83, alto 50-78, tenor
# 45-72, bass 33-67)
"$PN" learn "$CHORALES" --mode major --tonic C --name chorale-major -o presets/chorale-major.json
"$PN" learn "$CHORALES" --mode minor --tonic C --name chorale-minor -o presets/chorale-minor.json
# the same features over the paper's full space: every voice 31..84
"$PN" learn "$CHORALES" --mode major --tonic C --ranges 31-84 --name chorale-major-wide \
    -o presets/chorale-major-wide.json

# mixed: the pitch-class rules of both modes side by side (both on tonic C),
# so they disagree on the third, sixth and seventh degrees and the knobs
# decide which mode the music follows.
PC_RULES=soprano-pc,alto-pc,tenor-pc,bass-pc,outer-pcs,upper-pc-set
/usr/bin/env python3 scripts/merge_rules.py --name mixed \
    --description "The pitch-class rules of chorale-major and chorale-minor side by side, both on tonic C. They disagree on the third, sixth and seventh degrees, so which mode the music follows depends on the knobs." \
    -o presets/mixed.json \
    "presets/chorale-major.json:major-:$PC_RULES" \
    "presets/chorale-minor.json:minor-:$PC_RULES"
echo "wrote presets/chorale-major.json presets/chorale-minor.json presets/mixed.json presets/chorale-major-wide.json" >&2
