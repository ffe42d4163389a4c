#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): what a launch
# costs while a profiler is attached but not recording (the off-blocks of mlp_train.py --ab-block)
# and while it records, on launch_overhead --batch 100 (µs per launch, host side), settings
# shuffled per round, one process each, ROUNDS (default 6):
#   none; floor-off (the floor library with FUSELENS_FLOOR_PROFILER_API=1, never started);
#   window-off (prof-run --capture-range nvtx:never, FUSELENS_CONTROL_API=runtime: the runtime
#   selection switched, the driver selection left on); drvids-off (the same with
#   FUSELENS_CONTROL_API=driver-ids: no API selection while off); floor (kernel activity on); default
#   (prof-run's default); default-ids (FUSELENS_API_SELECT=ids: the selected runtime calls alone).
# -> $R/offstate.jsonl and the summary.
set -u
SECTIONS=${SECTIONS:-offstate}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
floor="$S/lib/libfuselens_cupti_floor.so"
f="$R/offstate.jsonl"; : > "$f"
lo=(launch_overhead --batch 100)
for round in $(seq 1 "${ROUNDS:-6}"); do
  for s in $(printf '%s\n' none floor-off window-off drvids-off floor default | shuf); do
    case $s in
      none) overhead_sample "$f" $s taskset -c 2-5 "${lo[@]}" ;;
      floor-off) overhead_sample "$f" $s env CUDA_INJECTION64_PATH="$floor" FUSELENS_FLOOR_PROFILER_API=1 taskset -c 2-5 "${lo[@]}" ;;
      window-off) overhead_sample "$f" $s env FUSELENS_CONTROL_API=runtime taskset -c 2-5 prof-run -o /tmp/o.sqlite --force --capture-range nvtx:never -- "${lo[@]}" ;;
      drvids-off) overhead_sample "$f" $s env FUSELENS_CONTROL_API=driver-ids taskset -c 2-5 prof-run -o /tmp/o.sqlite --force --capture-range nvtx:never -- "${lo[@]}" ;;
      floor) overhead_sample "$f" $s env CUDA_INJECTION64_PATH="$floor" taskset -c 2-5 "${lo[@]}" ;;
      default) overhead_sample "$f" $s taskset -c 2-5 prof-run -o /tmp/o.sqlite --force -- "${lo[@]}" ;;
      default-ids) overhead_sample "$f" $s env FUSELENS_API_SELECT=ids taskset -c 2-5 prof-run -o /tmp/o.sqlite --force -- "${lo[@]}" ;;
    esac
  done
done
summarize_samples "$f" none | tee "$R/offstate_summary.txt"
date -u
