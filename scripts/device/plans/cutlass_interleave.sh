#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 24, does
# the order in which fusion_microbench times cuBLASLt's epilogue and the CUTLASS fused kernel move
# their ratio? Google Benchmark runs every repetition of one benchmark before the next (cuBLASLt
# first: it is registered first); --benchmark_enable_random_interleaving=true runs the
# repetitions of all selected benchmarks in a random order instead, so both see the same thermal
# and clock states. Per round, "seq" (the default order) and "ri" (random interleaving) in a
# shuffled order, one process each, the same filter as plans/cutlass_swizzle.sh (FP16 and BF16,
# 4096³ and 8192³, cold and warm L2), REPS repetitions of MIN_TIME s (median per process).
# Variables: ROUNDS (default 3), REPS (default 9), MIN_TIME (default 0.05). Results under $R:
# swizzle_{seq,ri}_r<n>.json and swizzle_summary.txt (scripts/device/cutlass_swizzle.py).
set -u
root=$PWD R=${R:-/tmp/bg/results}
S="$root/${STAGE:-stage}"
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-9}
mkdir -p "$R"
export PATH="$S/bin:$PATH" LD_LIBRARY_PATH="$S/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
[ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
sha256sum "$S/bin/fusion_microbench" | cut -c1-16
for round in $(seq 1 "$ROUNDS"); do
  for label in $(printf '%s\n' seq ri | shuf); do
    interleave=false
    [ "$label" = ri ] && interleave=true
    fusion_microbench \
      --benchmark_filter='^gemm_bias_relu_(fp16|bf16)/(cutlass_fused|cublaslt_epilogue)/M:(4096|8192)/' \
      --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=$interleave \
      --benchmark_report_aggregates_only=true --benchmark_min_time=${MIN_TIME:-0.05} \
      --benchmark_out="$R/swizzle_${label}_r$round.json" --benchmark_out_format=json > /dev/null 2>"$R/err_${label}_r$round.txt"
    echo "round $round $label exit $?"
  done
done
python3 "$root/scripts/device/cutlass_swizzle.py" "$R"/swizzle_*_r*.json | tee "$R/swizzle_summary.txt"
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv
date -u
