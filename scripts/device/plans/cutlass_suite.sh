#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 24's combined
# suite run with the CUTLASS variants in: kernel_tests, fusion_bench full, fusion_microbench (all ops),
# the PyTorch peers of the GEMM ops, in one session.
#   tests   kernel_tests, every case (the CUTLASS ones included)                  about 1 minute
#   bench   fusion_bench, every op and shape (50 iterations after 5 warm-up)     about 1-2 minutes
#   micro   fusion_microbench, every benchmark, 3 repetitions, min time 0.05 s    about 4-5 minutes
#   capture prof-run (default trace) of fusion_bench, every op, 20 iterations: the heatmap of the
#           run (prof-analyze export html: every variant per op and shape) and compares of the
#           hand-written and the CUTLASS pairs                                    about 1-2 minutes
#   roofline the roofline section of plans/cutlass.sh (counters on gemm_bias_relu_fp16, ceilings
#           measured)                                                             about 1-2 minutes
#   torch   workloads/python/torch_ops.py for the three GEMM ops, torch.compile
#           default mode, eager (--budget-s 150 each)                             up to 7.5 minutes
#   tables  scripts/device/cutlass_tables.py on bench and micro
# More than one device call's 10 minutes in all: start it in the background and wait on it,
#   scripts/device/run.sh --start cutlass_suite     then     scripts/device/run.sh --wait 560
# (or two calls in the foreground: SECTIONS="tests bench micro tables", then SECTIONS=torch).
# SECTIONS (space or comma separated) picks; default all. Results under $R: kernel_tests.txt,
# fusion_bench_full.txt, fusion_microbench.{json,txt}, suite.sqlite, suite_report.html,
# compare_<baseline>_vs_<candidate>.csv, cutlass_roofline.sqlite, roofline_measured.{txt,csv},
# torch_<op>.{json,txt}, tables.md, timing.txt.
set -u
root=$PWD R=${R:-/tmp/bg/results}
S="$root/${STAGE:-stage}"
SECTIONS=${SECTIONS:-tests bench micro capture roofline torch tables}
mkdir -p "$R"
export PATH="$S/bin:$PATH" LD_LIBRARY_PATH="$S/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FUSELENS_BIN_DIR="$S/bin" PYTHONUNBUFFERED=1
cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
[ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"
on() { [[ " ${SECTIONS//,/ } " == *" $1 "* ]]; }
t_start=$SECONDS
section() { echo "== $1 ($(date -u +%H:%M:%S))"; t_section=$SECONDS; }
done_section() { echo "$1 $((SECONDS - t_section)) s" | tee -a "$R/timing.txt"; }

date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv

if on tests; then
  section tests
  kernel_tests > "$R/kernel_tests.txt" 2>&1; echo "exit $?"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  " "$R/kernel_tests.txt" | tail -n 20
  done_section tests
fi

if on bench; then
  section bench
  (cd /tmp && fusion_bench > "$R/fusion_bench_full.txt" 2>&1; echo "exit $?")
  grep -E "MISMATCH|skipped" "$R/fusion_bench_full.txt" | head -n 20
  done_section bench
fi

if on micro; then
  section micro
  fusion_microbench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.05 --benchmark_format=console --benchmark_out="$R/fusion_microbench.json" \
    --benchmark_out_format=json > "$R/fusion_microbench.txt" 2>&1; echo "exit $?"
  grep -E "ceilings|ERROR" "$R/fusion_microbench.txt" | head
  done_section micro
fi

if on capture; then
  section capture
  (cd /tmp && prof-run -o "$R/suite.sqlite" --force -- fusion_bench --iters 20 \
    > "$R/suite_fusion_bench.txt" 2>&1; echo "prof-run exit $?")
  prof-analyze export "$R/suite.sqlite" --format html -o "$R/suite_report.html"; echo "export exit $?"
  for op in gemm_bias_relu_fp16 gemm_bias_relu_bf16; do
    for pair in "unfused fused" "cutlass_unfused cutlass_fused" "cublas_unfused_epilogue cutlass_fused"; do
      set -- $pair
      prof-analyze compare "$R/suite.sqlite" --baseline "$op/$1/*" --candidate "$op/$2/*" \
        --format csv > "$R/compare_${op}_${1}_vs_$2.csv" 2>&1; echo "compare $op $1 -> $2 exit $?"
    done
  done
  ls -la "$R/suite.sqlite"
  done_section capture
fi

if on roofline; then
  SECTIONS=roofline bash "$root/scripts/device/plans/cutlass.sh" | grep -vE "^(total|-r|d|l)" | head -n 60
fi

if on torch; then
  section torch
  for op in gemm_bias_relu gemm_bias_relu_fp16 gemm_bias_relu_bf16; do
    python3 workloads/python/torch_ops.py --only "$op" --compile-mode default --budget-s 150 \
      --json "$R/torch_$op.json" > "$R/torch_$op.txt" 2>&1; echo "$op exit $?"
    tail -n 5 "$R/torch_$op.txt"
  done
  done_section torch
fi

if on tables; then
  section tables
  micro_json=()
  [ -f "$R/fusion_microbench.json" ] && micro_json=(--micro "$R/fusion_microbench.json")
  python3 "$root/scripts/device/cutlass_tables.py" --bench "$R/fusion_bench_full.txt" \
    "${micro_json[@]}" > "$R/tables.md" 2>&1; echo "exit $?"
  grep -E "^\*\*|4096³|8192³" "$R/tables.md" | cut -c1-260
  done_section tables
fi
echo "total $((SECONDS - t_start)) s" | tee -a "$R/timing.txt"
date -u
ls -la "$R"
