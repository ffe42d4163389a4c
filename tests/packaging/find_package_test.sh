#!/usr/bin/env bash
# find_package_test.sh CMAKE CXX PREFIX CONSUMER_SRC WORK VERSION [CUDA_BIN_DIR]: the CMake package in
# the unpacked bundle (PREFIX) serves a project outside FuseLens (tests/packaging/consumer):
#   - find_package(FuseLens VERSION CONFIG) finds PREFIX/lib/cmake/FuseLens and reports VERSION;
#   - the consumer builds against fuselens::annotate (its header from PREFIX/include) and runs;
#   - asking for a version the package is not compatible with (the next major) fails to configure.
# CUDA_BIN_DIR (the toolkit's nvcc folder) lets find_dependency(CUDAToolkit) find NVTX3.
set -euo pipefail
[ $# -ge 6 ] || { echo "usage: $0 CMAKE CXX PREFIX CONSUMER_SRC WORK VERSION [CUDA_BIN_DIR]" >&2; exit 2; }
cmake=$1 cxx=$2 prefix=$(realpath "$3") src=$4 work=$5 version=$6 cuda_bin=${7:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
if [ -n "$cuda_bin" ]; then export PATH="$cuda_bin:$PATH"; fi
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)

configure() {  # BUILD_DIR WANT_VERSION
  "$cmake" -S "$src" -B "$1" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" -DFUSELENS_WANT_VERSION="$2" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
}

configure "$work/ok" "$version" > "$work/ok.log" 2>&1 || { cat "$work/ok.log"; fail "configure against $prefix"; }
line=$(grep "consumer: FuseLens" "$work/ok.log") || fail "no consumer line in the configure log"
[ "$line" = "-- consumer: FuseLens $version from $prefix/lib/cmake/FuseLens" ] || fail "configure said: $line"
"$cmake" --build "$work/ok" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
# The header came from the prefix, not from a source tree.
grep -rq -- "$prefix/include" "$work/ok" --include=*.ninja --include=flags.make --include=*.txt \
  || fail "the consumer's include path does not name $prefix/include"
out=$("$work/ok/consumer") || fail "the consumer exited $?"
[ "$out" = "consumer: declared tensor work" ] || fail "the consumer printed '$out'"

next_major="$(( ${version%%.*} + 1 )).0"
if configure "$work/bad" "$next_major" > "$work/bad.log" 2>&1; then
  fail "find_package(FuseLens $next_major) succeeded against version $version"
fi
grep -q "compatible with requested version" "$work/bad.log" || { cat "$work/bad.log"; fail "no version mismatch reported"; }
echo "PASS: find_package(FuseLens $version CONFIG) from $prefix gives fuselens::annotate"
