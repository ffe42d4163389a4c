#!/usr/bin/env bash
# Builds what the GPU machine runs (device preset, sm_90, no GUI: the GPU machine has no Qt) and
# installs it into stage/ with the shared libraries the GPU machine lacks (the CUDA runtime), so
# stage/ can be carried to the H100. Only the installed targets are built, not the CPU test suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset device -DFUSELENS_BUILD_GUI=OFF >/dev/null
cmake --build --preset device -j "$(nproc)" --target prof-run fuselens_collector prof-analyze \
  prof-ceilings cct_paths cct_paths_lib fusion_bench exit_with launch_overhead step_loop graph_replay p2p_copy fuselens_cupti_floor \
  fusion_microbench fmnist_train kernel_tests fmnist_gpu_tests gpu_tests fault_workload reliability_gpu_tests \
  fuselens_exit_shim exit_paths exit_paths_lib exit_paths_gpu_tests \
  ${STAGE_EXTRA_TARGETS:-}
rm -rf stage
cmake --install build/device >/dev/null
cuda_lib=${CUDAToolkit_ROOT:-/usr/local/cuda}/lib64
cp -L "$cuda_lib"/libcudart.so.13 stage/lib/
# CUPTI's checkpoint API: the collector's kernel replay dlopens it (collector/src/DeviceCheckpoint.h).
cp -L "$cuda_lib"/libcheckpoint.so stage/lib/ 2>/dev/null || echo "stage.sh: no libcheckpoint.so in $cuda_lib" >&2
# The collector's own dependencies that the GPU machine may lack (Debian 12's builds).
for lib in libunwind.so.8 libdw.so.1 libelf.so.1 libbenchmark.so.1debian libre2.so.9; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" stage/lib/
done
# Not stripped: the calling-context tests need the workloads' symbols and line tables.
du -sh stage
