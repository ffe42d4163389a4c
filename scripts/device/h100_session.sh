#!/usr/bin/env bash
# Runs on the GPU machine from the repository root with stage/ carried (scripts/device/stage.sh):
# GPU tests, the real captures kept under tests/data, the launch-overhead measurement and the
# PyTorch step overhead, the kernel suite's study (fusion_bench full, fusion_microbench, the PyTorch
# eager / torch.compile peers). SECTIONS picks what runs (default: all but suite). Everything it
# produces goes to $OUT.
set -u
OUT=${OUT:-/tmp/fuselens-out}
SECTIONS=${SECTIONS:-"tests captures overhead torch"}
mkdir -p "$OUT"
root=$PWD
export PATH="$root/stage/bin:$PATH"
export LD_LIBRARY_PATH="$root/stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FUSELENS_BIN_DIR="$root/stage/bin"
mlp="$root/stage/share/fuselens/workloads/python/mlp_train.py"
exec > >(tee -a "$OUT/session.log") 2>&1
. "$root/scripts/device/samples.sh"
has() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }

echo "== device"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv

if has tests; then
  echo "== gpu tests"
  gpu_tests 2>&1 | tail -n 30
  echo "== kernel tests"
  kernel_tests 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|FAILED" | tail -n 40
fi

if has suite; then
  echo "== fusion_bench (all shapes, 50 iterations per range)"
  (cd /tmp && fusion_bench > "$OUT/fusion_bench_full.txt" 2>&1; echo "fusion_bench exit $?")
  grep -E "MISMATCH|^op |^[a-z_0-9]+ +[A-Za-z0-9_x]+ +[a-z_]+ +[0-9]+ " "$OUT/fusion_bench_full.txt" | head -n 200
  echo "== fusion_microbench (warm and cold, 3 repetitions, medians)"
  fusion_microbench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=${MICROBENCH_MIN_TIME:-0.05} --benchmark_format=console \
    --benchmark_out="$OUT/fusion_microbench.json" --benchmark_out_format=json 2>&1 \
    | grep -E "median|ceilings|ERROR" | head -n 400
  echo "== PyTorch eager and torch.compile peers"
  python3 "$root/workloads/python/torch_ops.py" --json "$OUT/torch_ops.json" > "$OUT/torch_ops.txt" 2>&1
  echo "torch_ops exit $?"; tail -n 120 "$OUT/torch_ops.txt"
fi

if has captures; then
  echo "== captures"
  cd /tmp
  prof-run -o "$OUT/fusion_bench.sqlite" --force -- fusion_bench; echo "fusion_bench exit $?"
  prof-run -o "$OUT/pytorch_mlp.sqlite" --force -- python3 "$mlp"; echo "mlp_train exit $?"
  prof-run -o "$OUT/cct_paths.sqlite" --force -- cct_paths; echo "cct_paths exit $?"
  prof-analyze cct "$OUT/cct_paths.sqlite" --min-percent 1 | head -n 40
  prof-analyze cct "$OUT/pytorch_mlp.sqlite" --view bottom-up --depth 3 --min-percent 5 | head -n 30
  cd "$root"
fi


if has overhead; then
  echo "== launch overhead (host us per launch, 20000 launches, median of 5 loops per process)"
  floor="$root/stage/lib/libfuselens_cupti_floor.so"
  : > "$OUT/overhead.jsonl"
  measure() { overhead_sample "$OUT/overhead.jsonl" "$@"; }
  # Interleaved rounds, every setting pinned to the same four cores.
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-7}"); do
    measure none $pin launch_overhead
    measure cupti_kernel_floor env CUDA_INJECTION64_PATH="$floor" $pin launch_overhead
    measure fuselens_cuda $pin prof-run -o /tmp/ov.sqlite --force --trace cuda -- launch_overhead
    measure fuselens_no_context $pin prof-run -o /tmp/ov.sqlite --force --trace cuda,memory,api,nvtx,overhead -- launch_overhead
    measure fuselens_default $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
  done
  summarize_samples "$OUT/overhead.jsonl" cupti_kernel_floor
  python3 - /tmp/ov.sqlite <<'PY'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
k = db.execute("select count(*) from kernel").fetchone()[0]
print("default capture: kernels", k, "api by domain", db.execute("select domain, count(*) from api_call group by domain").fetchall(),
      "contexts", db.execute("select count(*) from api_context").fetchone()[0],
      "cct nodes", db.execute("select count(*) from cct_node").fetchone()[0],
      "dropped", db.execute("select dropped_records from run").fetchone()[0],
      "bytes per kernel", round(os.path.getsize(sys.argv[1]) / max(1, k), 1))
PY
fi

if has torch; then
  echo "== PyTorch step time (us, median of 50 steps per process)"
  : > "$OUT/torch_steps.jsonl"
  step() { local name=$1; shift; step_sample "$OUT/torch_steps.jsonl" "$name" "$@" --steps 50 --time; }
  for round in $(seq 1 "${ROUNDS:-5}"); do
    step none python3 "$mlp"
    step fuselens_no_context prof-run -o /tmp/t.sqlite --force --trace cuda,memory,api,nvtx,overhead -- python3 "$mlp"
    step fuselens_default prof-run -o /tmp/t.sqlite --force -- python3 "$mlp"
  done
  summarize_samples "$OUT/torch_steps.jsonl" none
fi
ls -la "$OUT"
