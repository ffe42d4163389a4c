#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the kernel
# suite's GPU tests and study runs (issue #3), the kernel-argument capture (issue #6), gpu_tests.
set -u
root=$PWD R=${R:-/tmp/bg/results}
export PATH="$root/stage/bin:$PATH" LD_LIBRARY_PATH="$root/stage/lib" FUSELENS_BIN_DIR="$root/stage/bin"
export PYTHONUNBUFFERED=1
S="$root/stage"
# tests/data/fusion_bench_args.sqlite: fusion_bench --quick with kernel arguments (--trace +args),
# from /tmp, and what the flags rules say about its chains (was flags_args_session.sh).
# fusion_bench links cuBLAS (its peer variants): the machine's own libcublas is put on the path.
kernel_args_capture() (
  export LD_LIBRARY_PATH="$S/lib:/usr/local/cuda/lib64"
  cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
  [ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"
  nvidia-smi -L
  cd /tmp
  "$S/bin/prof-run" --trace +args -o "$R/fusion_bench_args.sqlite" -- \
    "$S/bin/fusion_bench" --quick 2>&1 | tee "$R/run.log" | tail -20
  python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); q=lambda s: db.execute(s).fetchone(); print('kernels', q('select count(*) from kernel'), 'kernel_arg rows', q('select count(*) from kernel_arg'), 'launches with args', q('select count(distinct correlation_id) from kernel_arg'), 'memory events', q('select count(*) from memory_event'), 'trace', q('select trace from run'))" "$R/fusion_bench_args.sqlite"
  "$S/bin/prof-analyze" flags "$R/fusion_bench_args.sqlite" --rules fusion_chain --limit 0 \
    > "$R/flags.txt" 2>&1
  grep -E "^ +[0-9]+\.|called from|Output feeds" "$R/flags.txt" | cut -c1-300
)
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
echo "== kernel_tests"; kernel_tests > "$R/kernel_tests.txt" 2>&1; echo "exit $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  " "$R/kernel_tests.txt" | tail -n 20
echo "== kernel arguments capture"; kernel_args_capture 2>&1 | tail -n 30
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
