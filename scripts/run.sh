#!/usr/bin/env bash
# Sets up a fresh machine, builds Parnassus (release) and runs the main job:
# the LV2 plugin, hosted through lilv as a DAW would (`parnassus render`),
# plays 16 bars of its built-in rule set (chorale-major) into a MIDI file
# and reports the rules it kept. Then, as a quick picture of rule
# selection, the lambda_w solution path of the paper's Case A1
# (examples/a1.txt), printed and plotted like the paper's Fig. 2.
#   scripts/run.sh [OUTDIR] [render options...]
set -euo pipefail
cd "$(dirname "$0")/.."

outdir=${1:-out}
shift $(( $# > 0 ? 1 : 0 ))

scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target parnassus-cli parnassus-live parnassus_lv2 parnassus_lv2_bundle >/dev/null
mkdir -p "$outdir"
pn=build/release/apps/parnassus/parnassus

echo "== the plugin plays 16 bars of its built-in rule set (chorale-major), 120 bpm, 1/8"
$pn render --bars 16 --seed 1 "$@" -o "$outdir/parnassus-16-bars.mid"

echo
echo "== the lambda_w path of Case A1 (examples/a1.txt)"
$pn path examples/a1.txt --csv "$outdir/a1-path.csv" --plot "$outdir/a1-path.png"
$pn path examples/a1.txt --plot "$outdir/a1-path.svg" >/dev/null
echo
echo "music: $outdir/parnassus-16-bars.mid; plot: $outdir/a1-path.png (and .svg), table: $outdir/a1-path.csv"
# Hear it: a General MIDI render of the 16 bars when fluidsynth and a GM
# soundfont are installed (Debian: fluidsynth and fluid-soundfont-gm, or the
# smaller timgm6mb-soundfont that bootstrap.sh installs).
soundfont=
for sf in /usr/share/sounds/sf2/FluidR3_GM.sf2 /usr/share/sounds/sf2/default-GM.sf2 \
          /usr/share/sounds/sf2/TimGM6mb.sf2; do
  [ -f "$sf" ] && { soundfont=$sf; break; }
done
if command -v fluidsynth >/dev/null && [ -n "$soundfont" ]; then
  fluidsynth -n -i -q -r 48000 -T wav -F "$outdir/parnassus-16-bars.wav" "$soundfont" \
    "$outdir/parnassus-16-bars.mid" >/dev/null 2>&1 &&
    echo "audio: $outdir/parnassus-16-bars.wav (fluidsynth, $(basename "$soundfont"))" ||
    echo "audio: fluidsynth could not render $outdir/parnassus-16-bars.mid" >&2
  echo "listen: fluidsynth -a pulseaudio $soundfont $outdir/parnassus-16-bars.mid"
else
  echo "listen: install fluidsynth and fluid-soundfont-gm (Debian) to get a WAV next time, or play"
  echo "        $outdir/parnassus-16-bars.mid with any MIDI player"
fi
echo "live: build/release/apps/live/parnassus-live plays it with a MIDI keyboard and a synth (docs/live.md)"
