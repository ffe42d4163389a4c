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
strip --strip-unneeded stage/bin/* stage/lib/*.so* 2>/dev/null || true
du -sh stage
