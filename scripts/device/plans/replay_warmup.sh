#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 22, the DRAM
# writes of the default kernel replay, a collector change against the one before it, with ncu's
# own run-to-run spread as the floor. The process's first profiled launch counts 18-20 MB more
# DRAM writes than its later launches and than ncu, whichever kernel it is
# (docs/measurements/2026-11-27-h100-first-launch-writes.md): this plan tells whether a change
# removes that, and what it does to the other launches.
# OLD (default $PWD/old): a stage of the collector before the change (OLD/bin/prof-run with OLD/lib).
# SECTIONS (default "warmup floor gpu"):
#   warmup  workloads/python/third_party_kernels.py under prof-run --metrics roofline, the old and the
#           new collector alternating, WU_ROUNDS (default 2) each: $R/wu_{old,new}_r<n>.sqlite
#   floor   ncu with only the DRAM counters (one pass: nothing restored, its other defaults kept),
#           WU_ROUNDS times: ncu's own run-to-run spread per launch, the floor under any agreement;
#           scripts/device/ncu_repeatability.py writes $R/warmup.csv (every capture and every ncu
#           run against ncu's first) and prints per label the launches within 2 % / 1 MiB
#   gpu     gpu_tests --gtest_filter='ProfRunGpu.KernelReplay*' with the new stage, then with OLD's
#           prof-run
# About 2 minutes on an H100 (2026-11-27: 4 captures of 15-27 s, 2 ncu runs of 11 s).
set -u
SECTIONS=${SECTIONS:-"warmup floor gpu"}
. "$PWD/scripts/device/prelude.sh"
OLD=${OLD:-$root/old}
ROUNDS=${WU_ROUNDS:-2}
W=(python3 "$root/workloads/python/third_party_kernels.py" --iters "${ITERS:-3}")
command -v ncu > /dev/null && ncu --version | tail -n 1
cd /tmp || exit 1
if has warmup; then
  for round in $(seq 1 "$ROUNDS"); do
    for v in old new; do
      bin=prof-run
      [ "$v" = old ] && bin="$OLD/bin/prof-run"
      t0=$SECONDS
      "$bin" -o "$R/wu_${v}_r$round.sqlite" --force --metrics roofline -- "${W[@]}" > /dev/null 2> "$R/wu_${v}_r$round.err"
      echo "warmup $v round $round exit $? ($((SECONDS - t0)) s)"
    done
  done
fi
if has floor; then
  for round in $(seq 1 "$ROUNDS"); do
    t0=$SECONDS
    ncu --csv --print-units base --print-kernel-base function \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum "${W[@]}" > "$R/ncu_lone_r$round.csv" 2> /tmp/ncu_lone.err
    echo "ncu lone round $round exit $? ($((SECONDS - t0)) s)"
  done
  (cd "$root" && python3 scripts/device/ncu_repeatability.py --ncu "$R"/ncu_lone_r*.csv \
    --captures "$R"/wu_*_r*.sqlite --out "$R/warmup.csv")
fi
if has gpu; then
  for v in new old; do
    dir="$S/bin"
    [ "$v" = old ] && dir="$OLD/bin"
    (FUSELENS_BIN_DIR="$dir" gpu_tests --gtest_filter='ProfRunGpu.KernelReplay*' > "$R/gpu_$v.txt" 2>&1; echo "gpu_tests ($v prof-run) exit $?")
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure|first launch wrote" "$R/gpu_$v.txt" | head -n 12
  done
fi
date -u
