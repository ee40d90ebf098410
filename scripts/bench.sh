#!/usr/bin/env bash
# Builds the release configuration and runs the engine benchmarks
# (docs/benchmarks.md). Arguments go to parnassus-bench:
#   scripts/bench.sh                      full run (about 3 minutes on 2 cores)
#   scripts/bench.sh --quick              3 runs per row, 1 for the rule-set cold solve,
#                                         no default-search music solve
#   scripts/bench.sh --markdown           the table in Markdown
#   scripts/bench.sh --only a|music|rules one part
#   scripts/bench.sh --only rules --rules presets/mixed.json
#                                         the rule-set part on another set
#                                         (default presets/chorale-major.json)
# The exit status is 0 whether the targets are met or not (see the table).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x scripts/bootstrap.sh ]; then
  scripts/bootstrap.sh >&2
fi
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target parnassus-bench >&2
exec build/release/bench/parnassus-bench "$@"
