#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried; builds nothing):
# issue 21's sampled tracing (prof-run --sample 1/N; docs/capture-control.md, "Sampled tracing").
# SECTIONS (default "tests offstate sample"):
#   tests     gpu_tests --gtest_filter='CaptureControlGpu.*' (the windows and --sample on step_loop:
#             the traced steps' kernels exactly, every step's launch calls counted).
#   offstate  what a launch costs between sampled steps, on launch_overhead --batch 100 (µs a
#             launch, host side; it has no step ranges, so a sampled run never traces: the off
#             state for the whole run), OFF_ROUNDS rounds (default 4), settings shuffled per round,
#             one process each: none; drvids-off (prof-run --capture-range nvtx:never with
#             FUSELENS_CONTROL_API=driver-ids, the 0.15 µs idle of docs/pytorch-step-budget.md);
#             sample-off (prof-run --sample 1/10: the same plus the launch-counting callbacks).
#   sample    the small host-bound CNN step (mlp_train.py --model cnn, ~54 kernels in 2.5 ms on the
#             H100) for STEPS measured steps (default 600, after 50 unannotated warm-up steps),
#             rounds until UNTIL_S seconds (default 300), settings shuffled per round, one process
#             each, pinned to cores 2-5: none (no profiler), full (prof-run's default trace),
#             sample (prof-run --sample 1/${EVERY:-10}). Every step's wall time is kept
#             (mlp_train.py --step-times); after each profiled process, its capture's per-kernel
#             statistics are extracted (scripts/device/sample_check.py extract): count and mean
#             GPU time per kernel name in the measured steps, and for the sampled capture the
#             stored sampling (steps, traced steps, launch calls of all and of the traced steps).
# Then scripts/device/sample_check.py summarize: the whole run's overhead per setting (mean step
# time over every measured step, as a ratio to none's, geometric mean over rounds with a 95 %
# bootstrap interval; the goal: sample <= 1.03), and the sampled statistics against the full
# trace's (per kernel name with >= 1 % of the GPU time: mean GPU time, and count scaled by the
# launch calls of all steps over those of the traced steps; the goal: each within 2 %).
# Writes $R/offstate.jsonl, $R/sample.jsonl (one line per process), $R/kernels/ROUND-SETTING.json,
# $R/steps/ROUND-SETTING.json, $R/summary.txt and $R/sampled_summary.txt (prof-analyze summary of
# the last sampled capture: the "sampled:" line). About 7 minutes with the defaults.
set -u
SECTIONS=${SECTIONS:-tests offstate sample}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R/kernels" "$R/steps"
check="$root/scripts/device/sample_check.py"
every=${EVERY:-10}
if has tests; then
  echo "== gpu_tests: capture control and --sample"
  gpu_tests --gtest_filter='CaptureControlGpu.*' 2>&1 | tail -n 30 | tee "$R/gpu_tests.txt"
fi
if has offstate; then
  echo "== off state: launch_overhead --batch 100, µs per launch"
  f="$R/offstate.jsonl"; : > "$f"
  lo=(launch_overhead --batch 100)
  for round in $(seq 1 "${OFF_ROUNDS:-4}"); do
    for s in $(printf '%s\n' none drvids-off sample-off | shuf); do
      case $s in
        none) overhead_sample "$f" $s taskset -c 2-5 "${lo[@]}" ;;
        drvids-off) overhead_sample "$f" $s env FUSELENS_CONTROL_API=driver-ids taskset -c 2-5 prof-run -o /tmp/o.sqlite --force --capture-range nvtx:never -- "${lo[@]}" ;;
        sample-off) overhead_sample "$f" $s taskset -c 2-5 prof-run -o /tmp/o.sqlite --force --sample "1/$every" -- "${lo[@]}" ;;
      esac
    done
  done
  summarize_samples "$f" none | tee "$R/offstate_summary.txt"
fi
has sample || exit 0
mlp="$root/workloads/python/mlp_train.py"
steps=${STEPS:-600}
run_setting() {  # run_setting NAME ROUND
  local name=$1 round=$2 cmd out value t0
  local args=(--model cnn --steps "$steps" --warmup-steps 50 --time --step-times "$R/steps/$round-$name.json")
  local capture="/tmp/sample-$name.sqlite"
  case "$name" in
    none) cmd=(taskset -c 2-5 python3 "$mlp") ;;
    full) cmd=(taskset -c 2-5 prof-run -o "$capture" --force -- python3 "$mlp") ;;
    sample) cmd=(taskset -c 2-5 prof-run -o "$capture" --force --sample "1/$every" -- python3 "$mlp") ;;
  esac
  t0=$(date +%s.%N)
  out=$("${cmd[@]}" "${args[@]}" 2>/dev/null)
  value=$(sed -n 's/^median step time: \([0-9.]*\) us.*/\1/p' <<< "$out")
  echo "{\"setting\":\"$name\",\"round\":$round,\"start\":$t0,\"end\":$(date +%s.%N),\"median_us\":${value:-null}}" >> "$R/sample.jsonl"
  if [ "$name" != none ]; then
    python3 "$check" extract "$capture" > "$R/kernels/$round-$name.json" || echo "extract failed: $round $name"
  fi
}
echo "== CNN step, settings none full sample (1/$every), $steps steps, rounds until ${UNTIL_S:-300} s"
: > "$R/sample.jsonl"
start=$SECONDS round=0
while [ $((SECONDS - start)) -lt "${UNTIL_S:-300}" ]; do
  round=$((round + 1))
  for name in $(printf '%s\n' none full sample | shuf); do run_setting "$name" "$round"; done
done
echo "rounds: $round"
prof-analyze summary /tmp/sample-sample.sqlite > "$R/sampled_summary.txt" 2>&1
head -4 "$R/sampled_summary.txt"
python3 "$check" summarize "$R" | tee "$R/summary.txt"
date -u
