#!/usr/bin/env bash
# The main job: set up, build, then profile the bundled workload (fusion_bench) on the GPU and
# print its summary. Without a usable CUDA GPU it says why and prints the summary of a real H100
# capture bundled in tests/data instead (building only what that needs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
reason=""
if ! command -v nvidia-smi >/dev/null 2>&1; then
  reason="nvidia-smi not found (no NVIDIA driver on this machine)"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  reason="nvidia-smi lists no GPU"
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset default >/dev/null
bin=build/default
if [ -z "$reason" ]; then
  cmake --build --preset default -j "$jobs" --target prof-run prof-analyze fusion_bench fuselens_collector
  out=${FUSELENS_DEMO_OUTPUT:-fusion_bench.fuselens.sqlite}
  # --quick: every op of the suite at its smallest shapes, 5 iterations per range (the full study,
  # up to 8192³ GEMMs, is `fusion_bench` without options).
  "$bin/tools/prof-run/prof-run" -o "$out" --force -- "$bin/workloads/fusion_bench/fusion_bench" --quick
  "$bin/tools/prof-analyze/prof-analyze" summary "$out"
  "$bin/tools/prof-analyze/prof-analyze" compare "$out" --baseline '*/unfused/*' --candidate '*/fused/*'
else
  cmake --build --preset default -j "$jobs" --target prof-analyze
  echo "[fuselens] no GPU to profile here: $reason."
  echo "[fuselens] showing the summary of a real capture of fusion_bench made on an H100 (tests/data/fusion_bench.sqlite)."
  "$bin/tools/prof-analyze/prof-analyze" summary tests/data/fusion_bench.sqlite
  "$bin/tools/prof-analyze/prof-analyze" compare tests/data/fusion_bench.sqlite --baseline '*/unfused/*' --candidate '*/fused/*'
fi
