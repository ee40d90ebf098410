#!/usr/bin/env bash
# Sets up a fresh machine and runs every test: the release build, the
# ASan+UBSan build and the TSan build (each with warnings as errors), then
# the fuzz targets for FUZZ_SECONDS (default 60) each.
#   scripts/test.sh            everything
#   scripts/test.sh release    one configuration (release, asan, tsan, fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh

configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(release asan tsan fuzz)
fuzz_seconds=${FUZZ_SECONDS:-60}
jobs=$(nproc)

run_ctest() {
  local preset=$1
  echo "== $preset: configure and build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: tests"
  ctest --preset "$preset" -j "$jobs"
}

run_fuzz() {
  echo "== fuzz: configure and build (clang, libFuzzer, ASan+UBSan)"
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz -j "$jobs"
  local target corpus work
  for target in build/fuzz/fuzz/fuzz_*; do
    [ -x "$target" ] || continue
    name=$(basename "$target")
    corpus=fuzz/corpus/${name#fuzz_}
    work=$(mktemp -d)
    [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
    echo "== fuzz: $name for ${fuzz_seconds}s"
    # a finding makes libFuzzer exit non-zero and leaves a crash-* file
    (cd "$work" && "$OLDPWD/$target" -max_total_time="$fuzz_seconds" -print_final_stats=1 \
       -artifact_prefix="$work/" . 2>&1 | tail -n 12)
    if ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* >/dev/null 2>&1; then
      echo "fuzz: $name found a failing input:" "$work"/crash-* "$work"/leak-* "$work"/timeout-* >&2
      exit 1
    fi
    rm -rf "$work"
  done
}

for c in "${configs[@]}"; do
  case "$c" in
    release|asan|tsan) run_ctest "$c" ;;
    fuzz) run_fuzz ;;
    *) echo "unknown configuration '$c' (release, asan, tsan, fuzz)" >&2; exit 2 ;;
  esac
done
echo "== all configurations passed: ${configs[*]}"
