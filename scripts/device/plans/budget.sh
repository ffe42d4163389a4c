#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the PyTorch
# overhead budget of issue 4 on the small CNN step (mlp_train.py --model cnn), with every step's
# times kept so that the spread within a process can be told from the spread between processes.
# SECTIONS (default "budget"): suites (gpu_tests and reliability_gpu_tests first, through
# plans/gpu_tests.sh), stats (one profiled CNN run with FUSELENS_CONTEXT_STATS=1: the callback's
# own time per call), auxcalls (launch_overhead --batch 100 with --aux-calls 0 and 9 per setting,
# AUX_ROUNDS rounds, default 4), budget (the rounds below).
#   SETTINGS   the settings per round, run in a shuffled order each round (default
#              "none floor default"): none = no profiler, floor = CUPTI kernel activity alone
#              (libfuselens_cupti_floor.so), default = prof-run's default trace, torchstack =
#              torch.profiler(with_stack=True), and the trace-group variants named in the case
#              below (default-nomodules: the default without the PyTorch module view and
#              backward attribution, FUSELENS_TORCH_MODULES=0; default-hooks: the module view
#              by Python hooks, --torch-modules hooks); a name ending in "-wide" runs on ten cores (2-11) instead of four (2-5)
#              default-filter / default-both: FUSELENS_CONTROL_API=filter / both (how a
#              window switches the API selection, CollectorConfig::window_api); default-ids:
#              FUSELENS_API_SELECT=ids; default-drvids: FUSELENS_CONTROL_API=driver-ids (the
#              driver selection switched by its ids too: no API selection in the off-blocks);
#              a name ending in "-ab" runs the setting in one process with every other block of
#              AB_BLOCK (default 20) steps profiled (mlp_train.py --ab-block; prof-run with
#              --capture-range cudaProfilerApi --capture-range-end repeat, the floor library with
#              FUSELENS_FLOOR_PROFILER_API=1) and records the process's on/off ratio as "ab"
#   UNTIL_S    start no new round after this many seconds (default 480)
#   STEPS      measured steps per process (default 400, after 50 warm-up steps)
# Writes $R/budget.jsonl (one line per process: setting, round, start time, median step) and
# $R/steps/ROUND-SETTING.json (mlp_train.py --step-times), and samples the GPU's clocks every
# 200 ms into $R/clocks.csv. Summarized by scripts/device/step_budget.py.
set -u
SECTIONS=${SECTIONS:-budget}
. "$PWD/scripts/device/prelude.sh"
if has suites; then
  (SECTIONS= EXTRA_SECTIONS= bash "$root/scripts/device/plans/gpu_tests.sh")
fi
mlp="$root/workloads/python/mlp_train.py"
floor="$S/lib/libfuselens_cupti_floor.so"
if has stats; then
  echo "== CNN step under the default trace, FUSELENS_CONTEXT_STATS=1"
  FUSELENS_CONTEXT_STATS=1 taskset -c 2-5 prof-run -o /tmp/stats.sqlite --force -- \
    python3 "$mlp" --model cnn --steps 400 --warmup-steps 50 --time 2>&1 | grep -E "median step|calling contexts"
fi
if has auxcalls; then
  echo "== launch_overhead --batch 100, µs per launch with K runtime calls before each launch"
  f="$R/auxcalls.jsonl"; : > "$f"
  for round in $(seq 1 "${AUX_ROUNDS:-4}"); do
    for aux in 0 9; do
      lo=(launch_overhead --batch 100 --aux-calls $aux)
      overhead_sample "$f" "none/aux$aux" taskset -c 2-5 "${lo[@]}"
      overhead_sample "$f" "floor/aux$aux" env CUDA_INJECTION64_PATH="$floor" taskset -c 2-5 "${lo[@]}"
      overhead_sample "$f" "cuda/aux$aux" taskset -c 2-5 prof-run -o /tmp/a.sqlite --force --trace cuda -- "${lo[@]}"
      overhead_sample "$f" "cuda-api/aux$aux" taskset -c 2-5 prof-run -o /tmp/a.sqlite --force --trace cuda,api -- "${lo[@]}"
      overhead_sample "$f" "default-nocontext/aux$aux" taskset -c 2-5 prof-run -o /tmp/a.sqlite --force --trace -context -- "${lo[@]}"
      overhead_sample "$f" "default/aux$aux" taskset -c 2-5 prof-run -o /tmp/a.sqlite --force -- "${lo[@]}"
    done
  done
  summarize_samples "$f"
fi
has budget || exit 0
mkdir -p "$R/steps"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,utilization.gpu,power.draw \
  --format=csv,noheader -lms 200 > "$R/clocks.csv" 2>/dev/null &
sampler=$!
run_setting() {  # run_setting NAME ROUND
  local name=$1 round=$2 cmd pin="taskset -c 2-5" ab=0
  case "$name" in *-ab) ab=1; name=${name%-ab} ;; esac
  case "$name" in *-wide) pin="taskset -c 2-11"; name=${name%-wide} ;; esac
  local args=(--model cnn --steps "${STEPS:-400}" --warmup-steps 50 --time --step-times "$R/steps/$round-$1.json")
  local pr=(prof-run -o /tmp/c.sqlite --force) fenv=()
  if [ "$ab" = 1 ]; then
    args+=(--ab-block "${AB_BLOCK:-20}")
    pr+=(--capture-range cudaProfilerApi --capture-range-end repeat)
    fenv=(FUSELENS_FLOOR_PROFILER_API=1)
  fi
  case "$name" in
    none) cmd=($pin python3 "$mlp") ;;
    floor) cmd=(env CUDA_INJECTION64_PATH="$floor" "${fenv[@]}" $pin python3 "$mlp") ;;
    default) cmd=($pin "${pr[@]}" -- python3 "$mlp") ;;
    default-nomodules) cmd=(env FUSELENS_TORCH_MODULES=0 $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-hooks) cmd=($pin "${pr[@]}" --torch-modules hooks -- python3 "$mlp") ;;
    default-nopython) cmd=(env FUSELENS_PYTHON_FRAMES=0 $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-nocontext) cmd=($pin "${pr[@]}" --trace -context -- python3 "$mlp") ;;
    cuda) cmd=($pin "${pr[@]}" --trace cuda -- python3 "$mlp") ;;
    cuda-api) cmd=($pin "${pr[@]}" --trace cuda,api -- python3 "$mlp") ;;
    default-filter) cmd=(env FUSELENS_CONTROL_API=filter $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-drvids) cmd=(env FUSELENS_CONTROL_API=driver-ids $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-drvids-nomodules) cmd=(env FUSELENS_CONTROL_API=driver-ids FUSELENS_TORCH_MODULES=0 $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-both) cmd=(env FUSELENS_CONTROL_API=both $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-ids) cmd=(env FUSELENS_API_SELECT=ids $pin "${pr[@]}" -- python3 "$mlp") ;;
    default-nooverhead) cmd=($pin "${pr[@]}" --trace -overhead -- python3 "$mlp") ;;
    torchstack) cmd=($pin python3 "$mlp"); args+=(--torch-profiler stack) ;;
    *) echo "unknown setting $name"; return ;;
  esac
  local t0 value out abr
  t0=$(date +%s.%N)
  out=$("${cmd[@]}" "${args[@]}" 2>/dev/null)
  value=$(sed -n 's/^median step time: \([0-9.]*\) us.*/\1/p' <<< "$out")
  abr=$(sed -n 's/^ab ratio: \([0-9.]*\) .*/\1/p' <<< "$out")
  echo "{\"setting\":\"$1\",\"round\":$round,\"start\":$t0,\"end\":$(date +%s.%N),\"value\":${value:-null},\"ab\":${abr:-null}}" \
    >> "$R/budget.jsonl"
}
python3 -c "import os, sys; sys.path.insert(0, '$root/workloads/python')
from thread_counters import ThreadCounters
c = ThreadCounters([os.getpid()]); print('hardware counters:', c.error or 'available')"
echo "== CNN step budget: settings ${SETTINGS:-none floor default}, rounds until ${UNTIL_S:-480} s"
round=0
while [ $SECONDS -lt "${UNTIL_S:-480}" ]; do
  round=$((round + 1))
  for name in $(printf '%s\n' ${SETTINGS:-none floor default} | shuf); do run_setting "$name" "$round"; done
done
kill "$sampler" 2>/dev/null
echo "rounds: $round"
python3 "$root/scripts/device/step_budget.py" "$R" | tee "$R/summary.txt"
case " ${SETTINGS:-} " in *-ab\ *) python3 "$root/scripts/device/ab_budget.py" "$R" | tee "$R/ab_summary.txt" ;; esac
date -u
