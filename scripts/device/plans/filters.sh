#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 22's
# counter launch filters (prof-run -k/--kernel-name, -s/--launch-skip, -c/--launch-count,
# --launch-skip-before-match, --nvtx-include) against Nsight Compute's options of the same names.
# Needs stage/ from scripts/device/stage.sh as it is (its default targets hold what this plan
# runs: prof-run, fuselens_collector, fuselens_exit_shim, fusion_bench, gpu_tests; stage_targets.sh
# does not copy the collector library); ncu on the PATH. SECTIONS (default "gpu compare cost"):
#   gpu      gpu_tests --gtest_filter='CounterFilterGpu.*' (the filter GPU tests)
#   compare  fusion_bench --quick --only gemm_bias_relu --iters 2 --warmup 1: a plain prof-run,
#            then per CASE prof-run --metrics roofline with the case's filters and ncu --csv with
#            the same options; scripts/device/compare_ncu_filters.py checks that both chose the
#            same launches (kernel name and grid, in launch order): $R/filters_compare.csv
#   cost     wall time of the same workload under prof-run --metrics roofline without filters and
#            with -k gemm_bias_relu_fused_kernel -c 1 (replaying one launch instead of all)
# Takes about 4 minutes on an H100 (estimated: not run yet).
set -u
SECTIONS=${SECTIONS:-"gpu compare cost"}
. "$PWD/scripts/device/prelude.sh"
exec 3>&1
timed() { local t0=$SECONDS; "$@"; local rc=$?; echo "  (exit $rc, $((SECONDS - t0)) s)" >&3; }
W=(fusion_bench --quick --only gemm_bias_relu --iters 2 --warmup 1)
if has gpu; then
  echo "== gpu_tests: CounterFilterGpu.*"
  (cd /tmp && gpu_tests --gtest_filter='CounterFilterGpu.*' > "$R/filters_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED|  OK) |FAILED  \]|Failure|Expected|Which is" "$R/filters_gpu_tests.txt" | head -n 40
fi
if has compare; then
  echo "== launches chosen: prof-run vs ncu (same options)"
  cd /tmp
  timed prof-run -o "$R/filters_plain.sqlite" --force -- "${W[@]}" > /tmp/filters_plain.out 2>&1
  : > "$R/filters_compare.csv"
  cases=("-k regex:relu -s 1 -c 2" "-k gemm_kernel -c 3" "-k regex:^gemm -s 4 -c 5" "-s 7 -c 4"
         "-k add_bias_kernel --kernel-name-base function -s 2"
         "--launch-skip-before-match 3 -k regex:relu -c 2")
  n=0 bad=0
  for c in "${cases[@]}"; do
    n=$((n + 1))
    read -r -a opts <<< "$c"
    echo "-- case $n: $c"
    timed prof-run -o "$R/filters_$n.sqlite" --force --metrics roofline "${opts[@]}" -- "${W[@]}" \
      > "/tmp/filters_$n.out" 2>&1
    grep -E "fuselens\] counters" "/tmp/filters_$n.out" | head -n 3
    timed ncu --csv --print-kernel-base function --metrics gpu__time_duration.sum "${opts[@]}" "${W[@]}" \
      > "$R/filters_ncu_$n.csv" 2> "/tmp/filters_ncu_$n.err"
    tail -n 2 "/tmp/filters_ncu_$n.err"
    python3 "$root/scripts/device/compare_ncu_filters.py" "$R/filters_plain.sqlite" "$R/filters_$n.sqlite" \
      "$R/filters_ncu_$n.csv" --label "$c" --out "$R/filters_compare.csv" || bad=$((bad + 1))
  done
  echo "== $((n - bad)) of $n cases chose the same launches as ncu"
  cd "$root"
fi
if has cost; then
  echo "== cost: every launch replayed vs one"
  cd /tmp
  timed "${W[@]}" > /dev/null 2>&1
  timed prof-run -o /tmp/filters_all.sqlite --force --metrics roofline -- "${W[@]}" > /tmp/filters_all.out 2>&1
  timed prof-run -o /tmp/filters_one.sqlite --force --metrics roofline -k gemm_bias_relu_fused_kernel -c 1 \
    -- "${W[@]}" > /tmp/filters_one.out 2>&1
  grep -hE "fuselens\] counters" /tmp/filters_all.out /tmp/filters_one.out | head -n 4
  cd "$root"
fi
date -u
