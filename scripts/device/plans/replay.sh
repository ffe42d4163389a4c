#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): counters under
# application replay against Nsight Compute's, and CUPTI attribute variants of the kernel-activity
# floor on the small CNN step. SECTIONS (default "suites replay cnnattrs"):
#   suites    the GPU tests that go through prof-run (plans/gpu_tests.sh: reliability_gpu_tests,
#             gpu_tests); gpu: gpu_tests alone
#   replay    fusion_bench --quick under prof-run --metrics roofline with --replay application
#             (cache control all, then none) and with kernel replay, and under ncu in application
#             replay with --cache-control all and none; compared launch by launch
#             (scripts/device/compare_ncu_dram.py --per-launch); wall time of each.
#   cnnattrs  mlp_train.py --model cnn step time: unprofiled, the CUPTI kernel floor library plain
#             and with FUSELENS_FLOOR_ATTRS pinned / devbuf32m / zeroed, and prof-run's default;
#             ROUNDS interleaved rounds.
set -u
SECTIONS=${SECTIONS:-"suites replay cnnattrs"}
. "$PWD/scripts/device/prelude.sh"
if has suites; then
  (SECTIONS= EXTRA_SECTIONS= bash "$root/scripts/device/plans/gpu_tests.sh")
fi
if has gpu; then  # gpu_tests alone
  echo "== gpu_tests"; (cd /tmp && gpu_tests > "$R/gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" "$R/gpu_tests.txt" | head
fi
exec 3>&1  # timed's line reaches the log also when the command's output is redirected
timed() { local t0=$SECONDS; "$@"; local rc=$?; echo "  (exit $rc, $((SECONDS - t0)) s)" >&3; }
if has replay; then
  echo "== counters: FuseLens application / kernel replay vs ncu application replay (fusion_bench --quick)"
  M=dram__bytes_read.sum,dram__bytes_write.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,gpu__time_duration.sum
  cd /tmp
  echo "-- plain"; timed fusion_bench --quick > /tmp/plain.out 2>&1
  for cc in all none; do
    echo "-- prof-run --replay application --cache-control $cc"
    timed prof-run -o "$R/app_$cc.sqlite" --force --metrics roofline --replay application --cache-control $cc \
      -- fusion_bench --quick > /tmp/app_$cc.out 2>&1
    grep -E "fuselens\]" /tmp/app_$cc.out | grep -v "capture:" | head -n 12
    echo "-- ncu --replay-mode application --cache-control $cc"
    timed ncu --replay-mode application --cache-control $cc --clock-control none --metrics "$M" --csv \
      fusion_bench --quick > "$R/ncu_app_$cc.csv" 2> /tmp/ncu_$cc.err
    tail -n 2 /tmp/ncu_$cc.err
  done
  echo "-- prof-run --metrics roofline (kernel replay)"
  timed prof-run -o "$R/kernel.sqlite" --force --metrics roofline -- fusion_bench --quick > /tmp/kernel.out 2>&1
  grep -E "fuselens\]" /tmp/kernel.out | grep -v "capture:" | head -n 6
  cd "$root"
  for cc in all none; do
    echo "== FuseLens application replay, cache control $cc, vs ncu application replay, cache control $cc"
    python3 scripts/device/compare_ncu_dram.py --per-launch "$R/app_$cc.sqlite" "$R/ncu_app_$cc.csv"
  done
  echo "== FuseLens kernel replay vs ncu application replay, cache control none"
  python3 scripts/device/compare_ncu_dram.py --per-launch "$R/kernel.sqlite" "$R/ncu_app_none.csv"
  prof-analyze roofline "$R/app_all.sqlite" --peaks measured 2>&1 | grep -E "^Counters" | head -n 3
fi
if has cnnattrs; then
  echo "== CNN step (us, median of ${STEPS:-200} steps per process), CUPTI attribute variants"
  mlp="$root/workloads/python/mlp_train.py"
  floor="$S/lib/libfuselens_cupti_floor.so"
  f="$R/cnn_attrs.jsonl"; : > "$f"
  cnn() { local name=$1; shift; step_sample "$f" "$name" "$@" --model cnn --steps "${STEPS:-200}" --warmup-steps 50 --time; }
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-8}"); do
    cnn none $pin python3 "$mlp"
    cnn cupti_kernel_floor env CUDA_INJECTION64_PATH="$floor" $pin python3 "$mlp"
    cnn floor_pinned env CUDA_INJECTION64_PATH="$floor" FUSELENS_FLOOR_ATTRS=pinned $pin python3 "$mlp"
    cnn floor_devbuf32m env CUDA_INJECTION64_PATH="$floor" FUSELENS_FLOOR_ATTRS=devbuf32m $pin python3 "$mlp"
    cnn floor_zeroed env CUDA_INJECTION64_PATH="$floor" FUSELENS_FLOOR_ATTRS=zeroed $pin python3 "$mlp"
    cnn default $pin prof-run -o /tmp/c.sqlite --force -- python3 "$mlp"
  done
  summarize_samples "$f" none
fi
date -u
