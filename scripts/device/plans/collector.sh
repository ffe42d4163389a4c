#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the collector's
# GPU checks. SECTIONS (default all): probe (CPython struct offsets, PythonLayout.h), reliability
# (tests/reliability/WorkloadFaultsGpuTest.cpp), cct (cct_torch.py with Python frames; the
# capture kept as tests/data/cct_torch.sqlite), metrics (--metrics roofline per fusion_bench op),
# torch (mlp_train.py step time per setting, interleaved rounds), cnn (the same on mlp_train.py
# --model cnn, with torch.profiler with_stack on the same step), batched (launch_overhead
# --batch 100 per setting), cnnparts (the CNN step per trace group), ncuapp (Nsight Compute's DRAM
# bytes in application replay next to FuseLens's counters), gpu (gpu_tests).
set -u
SECTIONS=${SECTIONS:-"probe reliability cct metrics gpu overhead torch"}
. "$PWD/scripts/device/prelude.sh"
if has probe; then
  echo "== CPython layout probe"; python3 collector/bench/python_layout_probe.py
fi
if has reliability; then
  echo "== reliability_gpu_tests"
  (cd /tmp && reliability_gpu_tests > "$R/reliability_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|recorded .* kernels" "$R/reliability_gpu_tests.txt" | head -n 30
fi
if has cct; then
  echo "== cct_torch (default trace: Python frames on CPython 3.11/3.12)"
  (cd /tmp && FUSELENS_CONTEXT_STATS=1 prof-run -o "$R/cct_torch.sqlite" --force -- \
    python3 "$root/workloads/python/cct_torch.py"; echo "exit $?")
  python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); q=lambda s: db.execute(s).fetchone()[0]; print('kernels', q('select count(*) from kernel'), 'python frames', q('select count(*) from frame where kind=2'))" "$R/cct_torch.sqlite"
  prof-analyze cct "$R/cct_torch.sqlite" --view flat --min-percent 3 2>&1 | cut -c1-200 | head -n 30
  prof-analyze cct "$R/cct_torch.sqlite" --filter 'encoder|decoder' --min-percent 1 2>&1 | cut -c1-200 | head -n 40
fi
if has metrics; then
  echo "== --metrics roofline per op"
  for op in swish gemm_bias_relu gemm_bias_relu_fp16 mlp; do
    (cd /tmp && prof-run -o /tmp/m_$op.sqlite --force --metrics roofline -- fusion_bench --quick --only $op \
      --iters 2 --warmup 1 > /tmp/m_$op.out 2>&1; echo "$op exit $?")
    grep -E "fuselens\]|error" /tmp/m_$op.out | head -n 6
  done
  python3 - <<'PY'
import sqlite3
for op in ["swish", "gemm_bias_relu", "gemm_bias_relu_fp16", "mlp"]:
    db = sqlite3.connect(f"/tmp/m_{op}.sqlite")
    rows = db.execute("select s.value, count(*) from kernel k join strings s on s.id = k.short_name_id "
                      "group by k.short_name_id order by min(k.start_ns)").fetchall()
    print(op, [(n[:60], c) for n, c in rows][:12])
PY
fi
if has gpu; then
  echo "== gpu_tests"; (cd /tmp && gpu_tests > "$R/gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$R/gpu_tests.txt" | head
fi
if has overhead; then
  echo "== launch overhead (host us per launch, launch_overhead: 20000 launches, median of 5 loops)"
  : > "$R/overhead.jsonl"
  measure() { overhead_sample "$R/overhead.jsonl" "$@"; }
  pin="taskset -c 2-5"
  for round in $(seq 1 "${OVERHEAD_ROUNDS:-7}"); do
    measure none $pin launch_overhead
    measure cupti_kernel_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" $pin launch_overhead
    measure cupti_cuda_kinds_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" \
      FUSELENS_FLOOR_EXTRA=memcpy,memset,synchronization $pin launch_overhead
    measure cupti_sync_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" \
      FUSELENS_FLOOR_EXTRA=synchronization $pin launch_overhead
    measure trace_cuda $pin prof-run -o /tmp/ov.sqlite --force --trace cuda -- launch_overhead
    measure trace_cuda_api $pin prof-run -o /tmp/ov.sqlite --force --trace cuda,api -- launch_overhead
    measure default_without_context $pin prof-run -o /tmp/ov.sqlite --force --trace -context -- launch_overhead
    measure default $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
  done
  summarize_samples "$R/overhead.jsonl" cupti_kernel_floor
fi
if has torch; then
  echo "== PyTorch step time (us, median of ${STEPS:-300} steps per process after 50 warm-up steps)"
  mlp="$root/workloads/python/mlp_train.py"
  : > "$R/torch_steps.jsonl"
  step() { local name=$1; shift; step_sample "$R/torch_steps.jsonl" "$name" "$@" --steps "${STEPS:-300}" --warmup-steps 50 --time; }
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-5}"); do
    step none $pin python3 "$mlp"
    step cupti_kernel_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" $pin python3 "$mlp"
    step fuselens_default $pin prof-run -o /tmp/t.sqlite --force -- python3 "$mlp"
    step fuselens_no_python_frames env FUSELENS_PYTHON_FRAMES=0 $pin prof-run -o /tmp/t.sqlite --force -- python3 "$mlp"
    [ -n "${TORCH_ALL:-}" ] && step fuselens_every_runtime_call $pin prof-run -o /tmp/t.sqlite --force --trace +runtime -- python3 "$mlp"
    [ -n "${TORCH_ALL:-}" ] && step fuselens_no_context $pin prof-run -o /tmp/t.sqlite --force --trace -context -- python3 "$mlp"
  done
  summarize_samples "$R/torch_steps.jsonl" none
fi
if has batched; then
  # launch_overhead --batch 100: launches timed in batches of 100 with an untimed synchronize
  # between batches, so a GPU slowed by CUPTI's kernel instrumentation does not push back on the
  # host's launch loop (the unbatched figure is bimodal under the floor: 4.4 or 6.5 us).
  echo "== launch overhead, batched (host us per launch, 20000 launches in batches of 100, median of 5 loops)"
  : > "$R/overhead_batched.jsonl"
  bmeasure() { local name=$1; shift; overhead_sample "$R/overhead_batched.jsonl" "$name" "$@" --batch 100; }
  pin="taskset -c 2-5"
  for round in $(seq 1 "${OVERHEAD_ROUNDS:-7}"); do
    bmeasure none $pin launch_overhead
    bmeasure cupti_kernel_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" $pin launch_overhead
    bmeasure trace_cuda $pin prof-run -o /tmp/ov.sqlite --force --trace cuda -- launch_overhead
    bmeasure default_without_context $pin prof-run -o /tmp/ov.sqlite --force --trace -context -- launch_overhead
    bmeasure default $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
    overhead_sample "$R/overhead_batched.jsonl" unbatched_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" $pin launch_overhead
    overhead_sample "$R/overhead_batched.jsonl" unbatched_default $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
  done
  summarize_samples "$R/overhead_batched.jsonl" cupti_kernel_floor
fi
# The small CNN step (mlp_train.py --model cnn) per setting: cnn NAME CMD... appends one sample to
# $cnn_file; cnn_baseline the two every round starts with (no profiler, CUPTI's kernel floor).
mlp="$root/workloads/python/mlp_train.py"
cnn() { local name=$1; shift; step_sample "$cnn_file" "$name" "$@" --model cnn --steps "${STEPS:-200}" --warmup-steps 50 --time; }
cnn_baseline() {
  cnn none taskset -c 2-5 python3 "$mlp"
  cnn cupti_kernel_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" taskset -c 2-5 python3 "$mlp"
}
if has cnn; then
  echo "== small CNN step (us, median of ${STEPS:-200} steps per process after 50 warm-up steps)"
  cnn_file="$R/cnn_steps.jsonl"; : > "$cnn_file"
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-5}"); do
    cnn_baseline
    cnn fuselens_default $pin prof-run -o /tmp/c.sqlite --force -- python3 "$mlp"
    cnn torch_profiler_with_stack $pin python3 "$mlp" --torch-profiler stack
    [ -n "${CNN_ALL:-}" ] && cnn torch_profiler_without_stack $pin python3 "$mlp" --torch-profiler nostack
  done
  summarize_samples "$cnn_file" none
  python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); q=lambda s: db.execute(s).fetchone()[0]; print('cnn capture: kernels', q('select count(*) from kernel'), 'python frames', q('select count(*) from frame where kind=2'))" /tmp/c.sqlite
  FUSELENS_CONTEXT_STATS=1 prof-run -o /tmp/c2.sqlite --force -- python3 "$mlp" --model cnn --steps 50 --warmup-steps 10 2>&1 | grep -i -E "context|cache|fuselens" | head -n 12
  FUSELENS_CONTEXT_STATS=1 prof-run -o /tmp/m2.sqlite --force -- python3 "$mlp" --steps 50 --warmup-steps 10 2>&1 | grep -i -E "context|cache|fuselens" | head -n 12
fi
if has cnnparts; then
  # Which trace group costs what on the CNN step: groups added one at a time, interleaved rounds.
  echo "== CNN step per trace group (us, median of ${STEPS:-200} steps per process)"
  lscpu -e 2>/dev/null | head -n 20
  cnn_file="$R/cnn_parts.jsonl"; : > "$cnn_file"
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-6}"); do
    cnn_baseline
    [ -z "${PARTS_SYNC:-}" ] && cnn cupti_cuda_kinds_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" \
      FUSELENS_FLOOR_EXTRA=memcpy,memset,synchronization $pin python3 "$mlp"
    if [ -n "${PARTS_SYNC:-}" ]; then  # the default against the default without "sync"
      cnn default $pin prof-run -o /tmp/p.sqlite --force -- python3 "$mlp"
      cnn default_without_sync $pin prof-run -o /tmp/p.sqlite --force --trace -sync -- python3 "$mlp"
      continue
    fi
    if [ -n "${PARTS_KINDS:-}" ]; then  # CUPTI's own cost of each of those kinds
      cnn cupti_sync_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" \
        FUSELENS_FLOOR_EXTRA=synchronization $pin python3 "$mlp"
      cnn cupti_copy_set_floor env CUDA_INJECTION64_PATH="$S/lib/libfuselens_cupti_floor.so" \
        FUSELENS_FLOOR_EXTRA=memcpy,memset $pin python3 "$mlp"
      continue
    fi
    cnn trace_cuda $pin prof-run -o /tmp/p.sqlite --force --trace cuda -- python3 "$mlp"
    cnn trace_cuda_api $pin prof-run -o /tmp/p.sqlite --force --trace cuda,api -- python3 "$mlp"
    [ -n "${PARTS_SHORT:-}" ] && continue
    cnn default_without_context $pin prof-run -o /tmp/p.sqlite --force --trace -context -- python3 "$mlp"
    cnn default_without_python env FUSELENS_PYTHON_FRAMES=0 $pin prof-run -o /tmp/p.sqlite --force -- python3 "$mlp"
    cnn default $pin prof-run -o /tmp/p.sqlite --force -- python3 "$mlp"
  done
  summarize_samples "$cnn_file" none
fi
if has ncuapp; then
  echo "== DRAM bytes at 4096^2: ncu application replay vs kernel replay vs FuseLens"
  M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,gpu__time_duration.sum
  K="regex:sigmoid|multiply|swish"
  (cd /tmp && ncu --replay-mode application --cache-control none --clock-control none --metrics "$M" \
    --kernel-name "$K" --csv fusion_bench --quick --only swish > "$R/ncu_app_none.csv" 2> /tmp/ncu_a.err; echo "ncu app/none exit $?"; tail -n 2 /tmp/ncu_a.err)
  (cd /tmp && ncu --replay-mode application --cache-control all --clock-control none --metrics "$M" \
    --kernel-name "$K" --csv fusion_bench --quick --only swish > "$R/ncu_app_all.csv" 2> /tmp/ncu_b.err; echo "ncu app/all exit $?"; tail -n 2 /tmp/ncu_b.err)
  (cd /tmp && ncu --cache-control none --clock-control none --metrics "$M" \
    --kernel-name "$K" --csv fusion_bench --quick --only swish > "$R/ncu_kernel_none.csv" 2> /tmp/ncu_c.err; echo "ncu kernel/none exit $?"; tail -n 2 /tmp/ncu_c.err)
  (cd /tmp && prof-run -o "$R/swish_roofline.sqlite" --force --metrics roofline -- fusion_bench --quick --only swish > /tmp/sw.out 2>&1; echo "prof-run exit $?")
fi
date -u
