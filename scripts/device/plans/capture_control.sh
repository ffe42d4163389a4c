#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): capture control
# (docs/capture-control.md). SECTIONS (default all):
#   test  gpu_tests' CaptureControlGpu cases (tests/gpu/CaptureControlGpuTest.cpp);
#   cost  host ns per launch of step_loop's tight loop (--tiny: empty kernels inside NVTX steps)
#         in ROUNDS interleaved rounds (default 8), the settings shuffled per round, one process
#         each: none (unprofiled), full (prof-run, whole run), outside (a capture range that never
#         opens), inside (a capture range open for the whole loop). Raw samples in
#         $R/capture_cost.jsonl; per round the ratio of each setting to none, then the geometric
#         mean of the ratios with a 95 % bootstrap interval (2000 resamples of the rounds).
#         CONTROL_AB=1 adds outside_filter and inside_filter: the same with FUSELENS_CONTROL_API=filter
#         (API activity left on and filtered by the writer instead of switched with the windows).
# Runtime: about 2 minutes for cost at the defaults (32 processes of ~2 s), plus the test.
set -u
SECTIONS=${SECTIONS:-"test cost"}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
if has test; then
  echo "== gpu_tests --gtest_filter=CaptureControlGpu.*"
  (cd /tmp && gpu_tests --gtest_filter='CaptureControlGpu.*' > "$R/capture_control_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|Which is" "$R/capture_control_gpu_tests.txt" | head -n 40
fi
if has cost; then
  steps=${STEPS:-200} tiny=${TINY:-100}
  echo "== per-launch host cost, step_loop --steps $steps --tiny $tiny, ${ROUNDS:-8} rounds"
  : > "$R/capture_cost.jsonl"
  pin="taskset -c 2-5"
  sample() {  # sample ROUND NAME CMD...: step_loop's loop_ns / loop_launches
    local round=$1 name=$2 json=/tmp/cc_launched.json
    shift 2
    rm -f "$json"
    "$@" > /dev/null 2>> "$R/capture_cost.stderr"
    python3 - "$json" "$round" "$name" >> "$R/capture_cost.jsonl" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1])); v = d["loop_ns"] / d["loop_launches"]
except Exception:
    v = None
print(json.dumps({"round": int(sys.argv[2]), "setting": sys.argv[3], "value": v}))
PY
  }
  loop="step_loop --steps $steps --tiny $tiny --json /tmp/cc_launched.json"
  for round in $(seq 1 "${ROUNDS:-8}"); do
    settings="none full outside inside"
    [ -n "${CONTROL_AB:-}" ] && settings="$settings outside_filter inside_filter"
    for setting in $(printf '%s\n' $settings | shuf); do
      case $setting in
        none) sample "$round" none $pin $loop ;;
        full) sample "$round" full $pin prof-run -o /tmp/cc.sqlite --force -- $loop ;;
        outside) sample "$round" outside $pin prof-run -o /tmp/cc.sqlite --force \
          --capture-range nvtx:never-opens -- $loop ;;
        inside) sample "$round" inside $pin prof-run -o /tmp/cc.sqlite --force \
          --capture-range nvtx:train -- $loop ;;
        outside_filter) FUSELENS_CONTROL_API=filter sample "$round" outside_filter $pin prof-run \
          -o /tmp/cc.sqlite --force --capture-range nvtx:never-opens -- $loop ;;
        inside_filter) FUSELENS_CONTROL_API=filter sample "$round" inside_filter $pin prof-run \
          -o /tmp/cc.sqlite --force --capture-range nvtx:train -- $loop ;;
      esac
    done
  done
  summarize_samples "$R/capture_cost.jsonl" none
  python3 - "$R/capture_cost.jsonl" <<'PY'
import collections, json, math, random, sys
by_round = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["value"] is not None:
        by_round[r["round"]][r["setting"]] = r["value"]
random.seed(19)
for setting in ["full", "outside", "inside", "outside_filter", "inside_filter"]:
    ratios = [v[setting] / v["none"] for v in by_round.values() if setting in v and "none" in v]
    if not ratios:
        print(f"{setting:8s} no complete rounds"); continue
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    boot = sorted(gm([random.choice(ratios) for _ in ratios]) for _ in range(2000))
    print(f"{setting:8s} per-round ratio to none {[round(x, 3) for x in ratios]}  geomean {gm(ratios):.3f}"
          f"  95% bootstrap [{boot[50]:.3f}, {boot[1949]:.3f}]  n={len(ratios)}")
PY
fi
