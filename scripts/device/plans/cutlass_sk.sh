#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ and stage-sk/ carried):
# issue 24, the CUTLASS large configuration with CUTLASS's stream-K tile scheduler
# (-DFUSELENS_CUTLASS_SCHEDULER=streamk, kernels/cutlass_gemm/README.md "Stream-K") against the
# default persistent one. Builds nothing. stage-sk/ holds kernel_tests_sk and fusion_microbench_sk
# of a build/device-sk (device preset, -DFUSELENS_CUTLASS_SCHEDULER=streamk); stage/bin the
# default build's fusion_microbench.
#   tests    kernel_tests_sk --gtest_filter='*Cutlass*' (the CUTLASS cases against the CPU
#            reference, CUTLASS's decomposition heuristic), then the GPU cases again with
#            FUSELENS_CUTLASS_DECOMPOSITION=streamk (stream-K units forced wherever a tile has more
#            than 8 k-tiles to share); each run limited to TEST_LIMIT seconds (default 240): a
#            stream-K barrier left set would hang, not fail
#   bench    scripts/device/plans/cutlass_swizzle.sh with SETTINGS="persist:fusion_microbench:8
#            sk:fusion_microbench_sk:8", ROUNDS rounds (default 3): one process per setting and
#            round, shuffled; cuBLASLt / CUTLASS fused inside each process; results under
#            $R/sk_heuristic. CUTLASS's heuristic keeps whole tiles when the tail wave is at least
#            half full, as at 4096³ (116 of 132 tiles) and 8192³ (68 of 132): there the stream-K
#            kernel runs data-parallel, hence
#   forced   the same with FUSELENS_CUTLASS_DECOMPOSITION=streamk (the persistent binary ignores
#            it); results under $R/sk_forced
# SECTIONS (space or comma separated) picks some; default all, about 4 minutes on the H100. Each
# fusion_microbench_sk process is limited to BENCH_LIMIT seconds (default 90) through a wrapper.
# Results under $R: binaries.txt, kernel_tests_sk.txt, kernel_tests_sk_forced.txt, sk_heuristic/
# and sk_forced/ (swizzle_*.json, swizzle_summary.txt), timing.txt.
set -u
root=$PWD R=${R:-/tmp/bg/results}
S="$root/${STAGE:-stage}"
SK="$root/${STAGE_SK:-stage-sk}"
SECTIONS=${SECTIONS:-tests bench forced}
SECTIONS=${SECTIONS//,/ }
ROUNDS=${ROUNDS:-3}
TEST_LIMIT=${TEST_LIMIT:-240}
BENCH_LIMIT=${BENCH_LIMIT:-90}
mkdir -p "$R"
export LD_LIBRARY_PATH="$S/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
[ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"

rc=0
for f in "$SK/kernel_tests_sk" "$SK/fusion_microbench_sk" "$S/bin/fusion_microbench"; do
  if [ -x "$f" ]; then
    printf '%s %s bytes sha256 %s\n' "$f" "$(stat -c %s "$f")" "$(sha256sum < "$f" | cut -c1-16)"
  else
    echo "cutlass_sk: missing $f (carry stage/ and stage-sk/)"
  fi
done | tee "$R/binaries.txt"
grep -q missing "$R/binaries.txt" && exit 2

# cutlass_swizzle.sh runs the binaries by name (PATH, its own stage/bin first): fusion_microbench_sk
# is found as a wrapper that limits each run (a stream-K barrier left set would hang, not fail).
wrap=$(mktemp -d)
printf '#!/usr/bin/env bash\nexec timeout %s "%s" "$@"\n' "$BENCH_LIMIT" "$SK/fusion_microbench_sk" \
  > "$wrap/fusion_microbench_sk"
chmod +x "$wrap/fusion_microbench_sk"
export PATH="$wrap:$SK:$S/bin:$PATH"

date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
for section in $SECTIONS; do
  start=$SECONDS
  echo "--- $section ($(date -u +%H:%M:%S))"
  case $section in
    tests)
      timeout "$TEST_LIMIT" "$SK/kernel_tests_sk" --gtest_filter='*Cutlass*' > "$R/kernel_tests_sk.txt" 2>&1
      s=$?; echo "kernel_tests_sk (heuristic decomposition) exit $s"; [ $s -eq 0 ] || rc=1
      tail -n 4 "$R/kernel_tests_sk.txt"
      FUSELENS_CUTLASS_DECOMPOSITION=streamk timeout "$TEST_LIMIT" "$SK/kernel_tests_sk" \
        --gtest_filter='CutlassGemm.*:CutlassGemmReuse.*:CutlassGemmLaunches.*' \
        > "$R/kernel_tests_sk_forced.txt" 2>&1
      s=$?; echo "kernel_tests_sk (FUSELENS_CUTLASS_DECOMPOSITION=streamk) exit $s"; [ $s -eq 0 ] || rc=1
      tail -n 4 "$R/kernel_tests_sk_forced.txt"
      ;;
    bench)
      R="$R/sk_heuristic" SETTINGS="persist:fusion_microbench:8 sk:fusion_microbench_sk:8" \
        ROUNDS=$ROUNDS bash "$root/scripts/device/plans/cutlass_swizzle.sh" || rc=1
      ;;
    forced)
      FUSELENS_CUTLASS_DECOMPOSITION=streamk R="$R/sk_forced" \
        SETTINGS="persist:fusion_microbench:8 sk_forced:fusion_microbench_sk:8" \
        ROUNDS=$ROUNDS bash "$root/scripts/device/plans/cutlass_swizzle.sh" || rc=1
      ;;
    *)
      echo "cutlass_sk: unknown section '$section' (tests, bench, forced)"
      rc=2
      ;;
  esac
  echo "$section $((SECONDS - start)) s" >> "$R/timing.txt"
done
rm -rf "$wrap"
date -u
exit $rc
