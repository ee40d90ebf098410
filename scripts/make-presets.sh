#!/usr/bin/env bash
# Regenerates the learned presets (docs/presets.md) from the JSB chorales:
#   presets/chorale-major.json, presets/chorale-minor.json, presets/mixed.json,
#   presets/chorale-major-beats.json, presets/chorale-minor-beats.json
# Only the chorales' train split is learned from: the valid split stays the
# reference they are measured against (parnassus evaluate). The textbook
# rules (presets/textbook-major.json, textbook-minor.json) and
# presets/pedagogical.json are written by hand and left alone.
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

# The style core (the built-in features of `parnassus learn`: the chord
# above the bass, every voice's pitch, the spacing of neighbouring voices,
# all given the previous sonority; no parallel or hidden fifths and
# octaves), learned from one mode, with the hand-written textbook rules of
# that mode added as written: the rules the Style knob lets in towards its
# liberal end.
"$PN" learn "$CHORALES" --split train --mode major --tonic C --name chorale-major \
    --add presets/textbook-major.json -o presets/chorale-major.json
"$PN" learn "$CHORALES" --split train --mode minor --tonic C --name chorale-minor \
    --add presets/textbook-minor.json -o presets/chorale-minor.json
# mixed: the major core with the minor textbook rules: towards the liberal
# end the music borrows the third, sixth and leading tone of C minor.
"$PN" learn "$CHORALES" --split train --mode major --tonic C --name mixed \
    --add presets/textbook-minor.json -o presets/mixed.json
# the same read on the quarter notes (one step every 4 sixteenths, held
# chords counted): for harmonizing a melody one chord a quarter note
"$PN" learn "$CHORALES" --split train --mode major --tonic C --grid 4 --name chorale-major-beats \
    --add presets/textbook-major.json -o presets/chorale-major-beats.json
"$PN" learn "$CHORALES" --split train --mode minor --tonic C --grid 4 --name chorale-minor-beats \
    --add presets/textbook-minor.json -o presets/chorale-minor-beats.json
echo "wrote presets/chorale-major.json presets/chorale-minor.json presets/mixed.json" \
    "presets/chorale-major-beats.json presets/chorale-minor-beats.json" >&2
