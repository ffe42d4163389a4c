#!/usr/bin/env bash
# bundle_run_test.sh PREFIX BUILD_PROF_ANALYZE CAPTURE VERSION WORK: the unpacked bundle's programs
# run from PREFIX with an empty LD_LIBRARY_PATH:
#   - prof-run --version and prof-analyze --version print VERSION;
#   - prof-analyze summary of the capture the bundle carries equals the build tree's prof-analyze
#     summary of CAPTURE (the committed file it was copied from), both read under the same name;
#   - prof-run starts a program (no CUDA: /usr/bin/env) with the bundle's collector and CUPTI
#     injected, its exit shim preloaded and its Python instrumentation on PYTHONPATH: it loads the
#     collector first, so this proves the collector's libraries resolve from the bundle.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 PREFIX BUILD_PROF_ANALYZE CAPTURE VERSION WORK" >&2; exit 2; }
prefix=$(realpath "$1") build_analyze=$2 capture=$3 version=$4 work=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
run() { env LD_LIBRARY_PATH= "$@"; }

for tool in prof-run prof-analyze; do
  got=$(run "$prefix/bin/$tool" --version) || fail "$tool --version exited $?"
  [ "$got" = "$version" ] || fail "$tool --version printed '$got', expected '$version'"
done

example="$prefix/share/fuselens/examples/$(basename "$capture")"
[ -f "$example" ] || fail "the bundle carries no $(basename "$capture")"
bundled=$(cd "$(dirname "$example")" && run "$prefix/bin/prof-analyze" summary "$(basename "$example")") \
  || fail "bundled prof-analyze summary exited $?"
reference=$(cd "$(dirname "$capture")" && "$build_analyze" summary "$(basename "$capture")") \
  || fail "build-tree prof-analyze summary exited $?"
[ -n "$reference" ] || fail "empty reference summary"
grep -q "CUDA GPU Kernel Summary" <<< "$bundled" || fail "no kernel summary in: $bundled"
[ "$bundled" = "$reference" ] || { diff <(echo "$reference") <(echo "$bundled") >&2; fail "summaries differ"; }

env_out=$(cd "$work" && run "$prefix/bin/prof-run" -o "$work/env.sqlite" --force -- /usr/bin/env 2> "$work/prof-run.err") \
  || { cat "$work/prof-run.err" >&2; fail "prof-run -- /usr/bin/env exited $?"; }
[ -f "$work/env.sqlite" ] || fail "prof-run wrote no capture"
expect_var() {  # NAME PATTERN: the first entry of the workload's NAME (resolved) matches PATTERN
  local value
  value=$(grep "^$1=" <<< "$env_out" | head -n 1 | cut -d= -f2- | cut -d: -f1 | cut -d' ' -f1)
  [ -n "$value" ] || fail "the workload saw no $1"
  # shellcheck disable=SC2053  # PATTERN is a glob
  [[ "$(realpath "$value")" == $2 ]] || fail "$1=$value, expected $2"
}
expect_var CUDA_INJECTION64_PATH "$prefix/lib/libfuselens_collector.so"
expect_var NVTX_INJECTION64_PATH "$prefix/lib/libcupti.so.*"
expect_var LD_PRELOAD "$prefix/lib/libfuselens_exit_shim.so"
expect_var PYTHONPATH "$prefix/share/fuselens/python"
echo "PASS: the bundle runs from $prefix with an empty LD_LIBRARY_PATH"
