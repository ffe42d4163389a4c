#!/usr/bin/env bash
# A plan for scripts/device/bg.sh (GPU machine, repository root, stage/ carried): the kernel
# suite's GPU tests and study runs (issue #3), the kernel-argument capture (issue #6), gpu_tests.
set -u
root=$PWD R=${R:-/tmp/bg/results}
export PATH="$root/stage/bin:$PATH" LD_LIBRARY_PATH="$root/stage/lib" FUSELENS_BIN_DIR="$root/stage/bin"
export PYTHONUNBUFFERED=1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
echo "== kernel_tests"; kernel_tests > "$R/kernel_tests.txt" 2>&1; echo "exit $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  " "$R/kernel_tests.txt" | tail -n 20
echo "== kernel arguments capture"; STAGE=stage OUT="$R" bash scripts/device/flags_args_session.sh 2>&1 | tail -n 30
echo "== gpu_tests"; gpu_tests > "$R/gpu_tests.txt" 2>&1; echo "exit $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  |OK \]" "$R/gpu_tests.txt" | tail -n 20
echo "== fusion_bench full"; (cd /tmp && fusion_bench > "$R/fusion_bench_full.txt" 2>&1; echo "exit $?")
grep -c . "$R/fusion_bench_full.txt"; grep -E "MISMATCH|swish" "$R/fusion_bench_full.txt" | head -n 20
echo "== fusion_microbench"
fusion_microbench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_min_time=0.05 --benchmark_format=console --benchmark_out="$R/fusion_microbench.json" \
  --benchmark_out_format=json > "$R/fusion_microbench.txt" 2>&1; echo "exit $?"
grep -E "ceilings|ERROR" "$R/fusion_microbench.txt" | head
echo "== torch_ops GEMM, torch.compile default mode"
for op in gemm_bias_relu gemm_bias_relu_fp16 gemm_bias_relu_bf16; do
  python3 workloads/python/torch_ops.py --only "$op" --compile-mode default --budget-s 150 \
    --json "$R/torch_$op.json" > "$R/torch_$op.txt" 2>&1; echo "$op exit $?"
  tail -n 5 "$R/torch_$op.txt"
done
date -u
