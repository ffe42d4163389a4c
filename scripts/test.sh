#!/usr/bin/env bash
# Installs the dependencies, builds FuseLens and runs every test, then the fuzzer for a bounded time
# (scripts/fuzz.sh; FUSELENS_FUZZ_SECONDS, default 60). GPU tests (label `gpu`) skip with a reason
# when no CUDA device is present. Then the analysis side alone (the `viewer` preset: db, analyzer,
# prof-analyze, prof-gui) is configured, built and tested with the CUDA toolkit hidden, which proves
# it needs none (FUSELENS_SKIP_VIEWER=1 skips that step). Usage: scripts/test.sh [PRESET] (default: ci).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
# The analysis side without CUDA: nvcc off PATH and find_package(CUDAToolkit) disabled (the preset
# sets CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit). It builds only the viewer's targets, through ccache.
if [ "$preset" != viewer ] && [ "${FUSELENS_SKIP_VIEWER:-0}" != 1 ]; then
  no_cuda_path=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -i cuda | paste -sd: -)
  env -u CUDACXX PATH="$no_cuda_path" cmake --preset viewer -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
  env PATH="$no_cuda_path" cmake --build --preset viewer -j "$jobs"
  env PATH="$no_cuda_path" ctest --preset viewer -j "$jobs"
fi
# The capture loader and analyses under libFuzzer with ASan and UBSan, bounded (issue #9).
scripts/fuzz.sh "${FUSELENS_FUZZ_SECONDS:-60}"
