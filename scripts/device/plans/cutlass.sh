#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 24, the
# CUTLASS sm90 variants of GEMM + bias + ReLU (kernels/cutlass_gemm) against the hand-written pair
# and the cuBLAS / cuBLASLt peers, FP16 and BF16.
#   check     the staged binaries carry the CUTLASS variants (built where setup.sh installed CUTLASS)
#   tests     kernel_tests, the CUTLASS cases and the related GEMM ones (gemm_tc, peers)
#   bench     fusion_bench --only gemm_bias_relu_{fp16,bf16}: every shape (the seed shapes, 4096³,
#             8192³), 50 back-to-back iterations after 5 warm-up, median; ROUNDS rounds (default 2)
#   micro     fusion_microbench gemm_bias_relu_{fp16,bf16}/*: warm and cold L2, 3 repetitions
#             (median), bytes, FLOPs, percent of the ceilings it measures first
#   roofline  prof-run --measure-ceilings --metrics roofline on fusion_bench --only
#             gemm_bias_relu_fp16 (3 iterations per range), then prof-analyze roofline --peaks
#             measured: counted FLOPs of the CUTLASS kernels against 2·M·N·K + M·N declared
#   heatmap   prof-run (default trace) of fusion_bench --only gemm_bias_relu_fp16 --iters 20, and
#             prof-analyze compare / export html of the hand-written pair and of the CUTLASS pair
#   tables    scripts/device/cutlass_tables.py: the markdown tables of docs/BENCHMARKS.md
# SECTIONS (space or comma separated) picks some; default all, about 6 minutes. Results under $R:
# kernel_tests_cutlass.txt, fusion_bench_<dtype>_r<N>.txt, microbench_gemm.{json,txt},
# cutlass_roofline.sqlite (+ roofline_measured.txt/.csv), cutlass_heatmap.sqlite (+ compare_*.csv,
# report_*.html), tables.md, and timing.txt (seconds per section).
set -u
root=$PWD R=${R:-/tmp/bg/results}
S="$root/${STAGE:-stage}"
SECTIONS=${SECTIONS:-check tests bench micro roofline heatmap tables}
ROUNDS=${ROUNDS:-2}
mkdir -p "$R"
export PATH="$S/bin:$PATH" LD_LIBRARY_PATH="$S/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FUSELENS_BIN_DIR="$S/bin"
# fusion_bench and fusion_microbench link cuBLAS (the peers): the machine's own libcublas.
cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
[ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"
on() { [[ " ${SECTIONS//,/ } " == *" $1 "* ]]; }
t_start=$SECONDS
section() { echo "== $1 ($(date -u +%H:%M:%S))"; t_section=$SECONDS; }
done_section() { echo "$1 $((SECONDS - t_section)) s" | tee -a "$R/timing.txt"; }

date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv

if on check; then
  section check
  n=$(fusion_microbench --benchmark_list_tests 2>/dev/null | grep -c '/cutlass_')
  echo "fusion_microbench CUTLASS cases: $n"
  if [ "$n" = 0 ]; then
    echo "stage/ has no CUTLASS variants: build it where scripts/setup.sh installed nvidia-cutlass" \
         "(cmake prints 'FuseLens: CUTLASS 4.2.0 ...' at configure)"
    exit 3
  fi
  done_section check
fi

if on tests; then
  section tests
  kernel_tests --gtest_filter='*Cutlass*:*GemmTensorCore*:*Peers*' > "$R/kernel_tests_cutlass.txt" 2>&1
  echo "exit $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  |GPU test skipped" "$R/kernel_tests_cutlass.txt" | tail -n 25
  done_section tests
fi

if on bench; then
  section bench
  for round in $(seq 1 "$ROUNDS"); do
    for dtype in fp16 bf16; do
      (cd /tmp && fusion_bench --only "gemm_bias_relu_$dtype" > "$R/fusion_bench_${dtype}_r$round.txt" 2>&1)
      echo "round $round $dtype exit $?"
      grep -E "MISMATCH|skipped" "$R/fusion_bench_${dtype}_r$round.txt" | head -n 5
    done
  done
  grep -E "^gemm_bias_relu_fp16 +M(4096|8192)" "$R/fusion_bench_fp16_r1.txt"
  done_section bench
fi

if on micro; then
  section micro
  fusion_microbench --benchmark_filter='^gemm_bias_relu_(fp16|bf16)/' --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 \
    --benchmark_out="$R/microbench_gemm.json" --benchmark_out_format=json \
    > "$R/microbench_gemm.txt" 2>&1
  echo "exit $?"
  grep -E "ceilings|ERROR" "$R/microbench_gemm.txt" | head -n 5
  grep -E "cutlass_fused/M:(4096|8192).*median" "$R/microbench_gemm.txt" | head -n 8
  done_section micro
fi

if on roofline; then
  section roofline
  (cd /tmp && prof-run -o "$R/cutlass_roofline.sqlite" --force --measure-ceilings --metrics roofline -- \
    fusion_bench --only gemm_bias_relu_fp16 --iters 3 --warmup 1 > "$R/roofline_fusion_bench.txt" 2>&1)
  echo "prof-run exit $?"
  prof-analyze roofline "$R/cutlass_roofline.sqlite" --peaks measured > "$R/roofline_measured.txt" 2>&1
  echo "roofline exit $?"
  prof-analyze roofline "$R/cutlass_roofline.sqlite" --peaks measured --format csv > "$R/roofline_measured.csv" 2>&1
  head -n 12 "$R/roofline_measured.txt"
  grep -iE "cutlass" "$R/roofline_measured.txt" | cut -c1-240 | head -n 40
  done_section roofline
fi

if on heatmap; then
  section heatmap
  (cd /tmp && prof-run -o "$R/cutlass_heatmap.sqlite" --force -- \
    fusion_bench --only gemm_bias_relu_fp16 --iters 20 > "$R/heatmap_fusion_bench.txt" 2>&1)
  echo "prof-run exit $?"
  db="$R/cutlass_heatmap.sqlite" op=gemm_bias_relu_fp16
  for pair in "unfused fused" "cutlass_unfused cutlass_fused" "cublaslt_epilogue cutlass_fused" \
              "cublas_unfused_epilogue cutlass_fused"; do
    set -- $pair
    prof-analyze compare "$db" --baseline "$op/$1/*" --candidate "$op/$2/*" --format csv \
      > "$R/compare_${1}_vs_$2.csv" 2>&1
    echo "compare $1 -> $2 exit $?"
  done
  prof-analyze export "$db" --format html -o "$R/report_handwritten.html"; echo "export hand-written exit $?"
  prof-analyze export "$db" --format html --baseline "$op/cutlass_unfused/*" \
    --candidate "$op/cutlass_fused/*" -o "$R/report_cutlass.html"; echo "export cutlass exit $?"
  done_section heatmap
fi

if on tables; then
  section tables
  micro_json=()
  [ -f "$R/microbench_gemm.json" ] && micro_json=(--micro "$R/microbench_gemm.json")
  python3 "$root/scripts/device/cutlass_tables.py" --bench "$R"/fusion_bench_*_r*.txt \
    "${micro_json[@]}" > "$R/tables.md" 2>&1
  echo "exit $?"
  grep -E "^\*\*|4096³|8192³" "$R/tables.md" | cut -c1-260
  done_section tables
fi
echo "total $((SECONDS - t_start)) s" | tee -a "$R/timing.txt"
date -u
ls -la "$R"
