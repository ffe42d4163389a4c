#!/usr/bin/env bash
# Installs the dependencies, builds FuseLens and runs every test. GPU tests (label `gpu`) skip
# with a reason when no CUDA device is present. Usage: scripts/test.sh [PRESET] (default: ci).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
