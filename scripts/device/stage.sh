#!/usr/bin/env bash
# Builds the device preset (sm_90) here and installs it into stage/ with the shared libraries the
# GPU machine lacks (the CUDA runtime), so stage/ can be carried to the H100.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset device >/dev/null
cmake --build --preset device -j "$(nproc)"
rm -rf stage
cmake --install build/device >/dev/null
cuda_lib=${CUDAToolkit_ROOT:-/usr/local/cuda}/lib64
cp -L "$cuda_lib"/libcudart.so.13 stage/lib/
# The collector's own dependencies that the GPU machine may lack (Debian 12's builds).
for lib in libunwind.so.8 libdw.so.1 libelf.so.1 libbenchmark.so.1debian; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" stage/lib/
done
# Not stripped: the calling-context tests need the workloads' symbols and line tables.
du -sh stage
