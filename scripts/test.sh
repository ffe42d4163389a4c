#!/usr/bin/env bash
# Installs the dependencies, builds FuseLens and runs every test, then the fuzzer for a bounded time
# (scripts/fuzz.sh; FUSELENS_FUZZ_SECONDS, default 60). GPU tests (label `gpu`) skip with a reason
# when no CUDA device is present. Usage: scripts/test.sh [PRESET] (default: ci).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
# The capture loader and analyses under libFuzzer with ASan and UBSan, bounded (issue #9).
scripts/fuzz.sh "${FUSELENS_FUZZ_SECONDS:-60}"
