#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 24, the
# CUTLASS tile scheduler's swizzle at 4096³ and 8192³ (kernels/cutlass_gemm, FUSELENS_CUTLASS_SWIZZLE).
# Per round, the settings in a shuffled order, one fusion_microbench process each:
# cutlass_fused and cublaslt_epilogue, FP16 and BF16, 4096³ and 8192³, cold and warm L2, 3
# repetitions (median); the ratio cuBLASLt / CUTLASS is taken inside each process.
#   SWIZZLES (default "1 2 4 8"), ROUNDS (default 2); or SETTINGS="LABEL:BINARY:SWIZZLE[:RASTER] ..."
#   (RASTER: FUSELENS_CUTLASS_RASTER, heuristic, m or n; default heuristic) to compare builds too (e.g. a fusion_microbench of another tile configuration copied into
#   stage/bin). Results under $R: swizzle_<label>_r<n>.json and swizzle_summary.txt
#   (scripts/device/cutlass_swizzle.py). About 10 s a process.
set -u
root=$PWD R=${R:-/tmp/bg/results}
S="$root/${STAGE:-stage}"
SWIZZLES=${SWIZZLES:-1 2 4 8}
ROUNDS=${ROUNDS:-2}
mkdir -p "$R"
export PATH="$S/bin:$PATH" LD_LIBRARY_PATH="$S/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
[ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
SETTINGS=${SETTINGS:-$(for s in $SWIZZLES; do printf 'sw%s:fusion_microbench:%s ' "$s" "$s"; done)}
for round in $(seq 1 "$ROUNDS"); do
  for setting in $(printf '%s\n' $SETTINGS | shuf); do
    IFS=: read -r label binary s raster <<< "$setting"
    FUSELENS_CUTLASS_SWIZZLE=$s FUSELENS_CUTLASS_RASTER=${raster:-heuristic} "$binary" \
      --benchmark_filter='^gemm_bias_relu_(fp16|bf16)/(cutlass_fused|cublaslt_epilogue)/M:(4096|8192)/' \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=${MIN_TIME:-0.05} \
      --benchmark_out="$R/swizzle_${label}_r$round.json" --benchmark_out_format=json > /dev/null 2>&1
    echo "round $round $label ($binary, swizzle $s, raster ${raster:-heuristic}) exit $?"
  done
done
python3 "$root/scripts/device/cutlass_swizzle.py" "$R"/swizzle_*_r*.json | tee "$R/swizzle_summary.txt"
date -u
