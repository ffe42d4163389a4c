#!/usr/bin/env bash
# Calling-context measurements on the GPU machine (issue 4, docs/BENCHMARKS.md): run from the
# repository root with the staged build carried as $STAGE (default stage-cct/; the full stage/ of
# scripts/device/stage.sh holds everything it needs too). SECTIONS (default all):
#   captures  cct_paths and workloads/python/cct_torch.py captured into $OUT, checked with
#             prof-analyze (cct_torch.sqlite is the one kept under tests/data);
#   overhead  launch_overhead, interleaved rounds (ROUNDS, default 4), pinned to cores 2-5: no
#             profiler, CUPTI floor, FuseLens without contexts, FUSELENS_CONTEXT_METHOD=none and
#             =unwind, the previous collector (stage-cct/old), the default;
#   torch     workloads/python/mlp_train.py step time (TORCH_ROUNDS, default 3) in the same kind
#             of settings, with and without Python frames.
# Staging (on the development machine; stage-cct/ is git-ignored):
#   cmake -S . -B /tmp/h-cct-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
#     -DFUSELENS_BUILD_GUI=OFF && ninja -C /tmp/h-cct-dev prof-run fuselens_collector prof-analyze \
#     launch_overhead fuselens_cupti_floor cct_paths
#   stage-cct/bin: prof-run prof-analyze launch_overhead cct_paths; stage-cct/lib:
#   libfuselens_collector.so libfuselens_cupti_floor.so libcct_paths_lib.so libcudart.so.13
#   libunwind.so.8 libdw.so.1 libelf.so.1; stage-cct/old/{bin/prof-run,lib/libfuselens_collector.so}:
#   the collector to compare with (optional).
set -u
OUT=${OUT:-/tmp/cct-out}
SECTIONS=${SECTIONS:-"captures overhead torch"}
mkdir -p "$OUT"
root=$PWD
S="$root/${STAGE:-stage-cct}"
export PATH="$S/bin:$PATH"
export LD_LIBRARY_PATH="$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FUSELENS_BIN_DIR="$S/bin"
export PYTHONUNBUFFERED=1
mlp="$root/workloads/python/mlp_train.py"
exec > >(tee -a "$OUT/session.log") 2>&1
. "$root/scripts/device/samples.sh"
has() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }

echo "== device"; date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)'

if has captures; then
  echo "== captures"
  cd /tmp
  FUSELENS_CONTEXT_STATS=1 prof-run -o "$OUT/cct_paths.sqlite" --force -- cct_paths; echo "cct_paths exit $?"
  FUSELENS_PYTHON_FRAMES=1 FUSELENS_CONTEXT_STATS=1 prof-run -o "$OUT/cct_torch.sqlite" --force -- python3 "$root/workloads/python/cct_torch.py"; echo "cct_torch exit $?"
  for f in cct_paths cct_torch; do
    python3 - "$OUT/$f.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = lambda s: db.execute(s).fetchone()[0]
print(sys.argv[1].split('/')[-1], "kernels", q("select count(*) from kernel"),
      "without context", q("select count(*) from kernel k where not exists (select 1 from api_context a where a.pid=k.pid and a.correlation_id=k.correlation_id)"),
      "contexts", q("select count(*) from api_context"), "nodes", q("select count(*) from cct_node"),
      "python frames", q("select count(*) from frame where kind=2"), "nvtx", q("select count(*) from nvtx_range"))
PY
  done
  prof-analyze cct "$OUT/cct_paths.sqlite" --min-percent 1 | head -n 40
  prof-analyze cct "$OUT/cct_torch.sqlite" --min-percent 0.5 | head -n 120
  prof-analyze cct "$OUT/cct_torch.sqlite" --view flat --min-percent 2 | head -n 40
  cd "$root"
fi


if has overhead; then
  echo "== launch overhead (host us per launch, 20000 launches, median of 5 loops per process)"
  floor="$S/lib/libfuselens_cupti_floor.so"
  : > "$OUT/overhead.jsonl"
  measure() { overhead_sample "$OUT/overhead.jsonl" "$@"; }
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-4}"); do
    measure none $pin launch_overhead
    measure cupti_kernel_floor env CUDA_INJECTION64_PATH="$floor" $pin launch_overhead
    measure fuselens_no_context $pin prof-run -o /tmp/ov.sqlite --force --trace cuda,memory,api,nvtx,overhead -- launch_overhead
    measure ctx_callback_only env FUSELENS_CONTEXT_METHOD=none $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
    measure ctx_unwind_every_call env FUSELENS_CONTEXT_METHOD=unwind $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
    [ -x "$S/old/bin/prof-run" ] && measure old_default $pin "$S/old/bin/prof-run" -o /tmp/ov_old.sqlite --force -- launch_overhead
    measure fuselens_default $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
  done
  summarize_samples "$OUT/overhead.jsonl" cupti_kernel_floor
  FUSELENS_CONTEXT_STATS=1 prof-run -o /tmp/ov.sqlite --force -- launch_overhead --repeat 1 | tail -n 1
fi

if has torch; then
  echo "== PyTorch step time (us, median of 50 steps per process)"
  : > "$OUT/torch_steps.jsonl"
  step() { local name=$1; shift; step_sample "$OUT/torch_steps.jsonl" "$name" "$@" --steps 50 --time; }
  pin="taskset -c 2-5"
  for round in $(seq 1 "${TORCH_ROUNDS:-3}"); do
    step none $pin python3 "$mlp"
    step cupti_kernel_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" $pin python3 "$mlp"
    step fuselens_cuda_only $pin prof-run -o /tmp/t.sqlite --force --trace cuda -- python3 "$mlp"
    step fuselens_every_runtime_call env FUSELENS_PYTHON_FRAMES=0 $pin prof-run -o /tmp/t.sqlite --force --trace +runtime -- python3 "$mlp"
    step fuselens_no_context $pin prof-run -o /tmp/t.sqlite --force --trace cuda,memory,api,nvtx,overhead -- python3 "$mlp"
    [ -x "$S/old/bin/prof-run" ] && step old_default $pin "$S/old/bin/prof-run" -o /tmp/t_old.sqlite --force -- python3 "$mlp"
    step fuselens_no_python env FUSELENS_PYTHON_FRAMES=0 $pin prof-run -o /tmp/t.sqlite --force -- python3 "$mlp"
    step fuselens_default $pin prof-run -o /tmp/t.sqlite --force -- python3 "$mlp"
    step fuselens_python_frames env FUSELENS_PYTHON_FRAMES=1 $pin prof-run -o /tmp/t.sqlite --force -- python3 "$mlp"
  done
  summarize_samples "$OUT/torch_steps.jsonl" none
  FUSELENS_CONTEXT_STATS=1 prof-run -o /tmp/t.sqlite --force -- python3 "$mlp" --steps 50 2>&1 | tail -n 2
fi
ls -la "$OUT"
