#!/usr/bin/env bash
# Quick device staging for work on a few targets: builds TARGETS in BUILD_DIR (configured once for
# sm_90, Release, no GUI) and copies the built programs into STAGE_DIR/bin and the shared libraries the
# GPU machine lacks into STAGE_DIR/lib. On the device: LD_LIBRARY_PATH=STAGE_DIR/lib STAGE_DIR/bin/X.
# STAGE_DIR must be a folder inside the repository that git ignores (stage*/), named in `carry`.
#   scripts/device/stage_targets.sh STAGE_DIR BUILD_DIR TARGET...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 STAGE_DIR BUILD_DIR TARGET..." >&2; exit 2; }
stage=$1 build=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DFUSELENS_BUILD_GUI=OFF >/dev/null
fi
cmake --build "$build" --target "$@"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/lib"
for target in "$@"; do
  find "$build" -type f -name "$target" -perm -u+x -exec cp {} "$stage/bin/" \;
done
cuda_lib=${CUDAToolkit_ROOT:-/usr/local/cuda}/lib64
cp -L "$cuda_lib"/libcudart.so.13 "$stage/lib/"
for lib in libunwind.so.8 libdw.so.1 libelf.so.1 libbenchmark.so.1debian; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$stage/lib/"
done
du -sh "$stage"
