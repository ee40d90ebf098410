#!/usr/bin/env bash
# Installs the Debian packages that building, testing and benchmarking
# Parnassus need. Idempotent: does nothing when everything is present.
# Runs apt-get as root (directly, or through sudo when not root).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  clang libclang-rt-14-dev            # libFuzzer and sanitizer runtimes
  clang-format                        # .ci/run checks the formatting (bookworm: 14)
  libopenblas-serial-dev              # serial static OpenBLAS (LAPACK potrf)
  libcmocka-dev                       # unit tests
  libjansson-dev                      # JSON output and rule files
  libcairo2-dev                       # plots
  python3                             # test scripts check JSON output
  libsmf-dev                          # MIDI files (apps/midi)
  python3-mido                        # tests read MIDI files independently
  lv2-dev                             # LV2 headers (plugin), lv2_validate
  sordi                               # sord_validate, which lv2_validate runs
  serdi                               # Turtle syntax check of the bundle
  lilv-utils                          # lv2ls, lv2info (bundle test)
  liblilv-dev                         # LV2 hosts (lilv)
  portaudio19-dev                     # parnassus-live: audio stream
  libportmidi-dev                     # parnassus-live: hardware MIDI
  libfluidsynth-dev                   # parnassus-live: built-in synth
  libncurses-dev                      # parnassus-live: terminal interface
  timgm6mb-soundfont                  # a small General MIDI soundfont for it
  fluidsynth                          # run.sh renders the main job's MIDI to a WAV
  jackd2                              # tests: a JACK server with the dummy backend
)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "bootstrap: done"
