#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried; builds nothing):
# where the untraced steps of a sampled run (prof-run --sample 1/N) spend their time, against
# CUPTI's own floor for sampled tracing. The small host-bound CNN step (mlp_train.py --model cnn,
# STEPS measured steps, default 600, after 50 warm-up steps), settings shuffled per round, one
# process each, pinned to cores 2-5, rounds until UNTIL_S seconds (default 240):
#   none            no profiler
#   floor-idle      CUPTI's floor library injected (FUSELENS_FLOOR_PROFILER_API=1), never started:
#                   CUPTI present, no activity kind ever enabled
#   floor-sampled   the same library switched on for 1 step in EVERY (default 10) by
#                   mlp_train.py --profiler-every (cudaProfilerStart/Stop inside the timed steps):
#                   kernel activity alone, sampled as prof-run --sample samples
#   sample          prof-run --sample 1/EVERY (the default, FUSELENS_CONTROL_API=runtime)
#   sample-drvids   the same with FUSELENS_CONTROL_API=driver-ids (the driver API selection and
#                   the NVTX kinds switched off between traced steps too)
#   never           prof-run --capture-range nvtx:never: FuseLens's off state alone, no counting
# Every step's wall time is kept (mlp_train.py --step-times). Summary: per setting the whole run's
# mean step time over none's of the same round (geometric mean over rounds, 95 % bootstrap), and
# for the sampled settings the untraced steps' and the traced steps' mean over none's mean.
# Writes $R/sampleoff.jsonl and $R/sampleoff_steps/ROUND-SETTING.json, $R/sampleoff_summary.txt.
set -u
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R/sampleoff_steps"
every=${EVERY:-10}
steps=${STEPS:-600}
floor="$S/lib/libfuselens_cupti_floor.so"
mlp="$root/workloads/python/mlp_train.py"
f="$R/sampleoff.jsonl"; : > "$f"
one() {  # one NAME ROUND
  local name=$1 round=$2 cmd extra=()
  case $name in
    none) cmd=(taskset -c 2-5 python3 "$mlp") ;;
    floor-idle) cmd=(env CUDA_INJECTION64_PATH="$floor" FUSELENS_FLOOR_PROFILER_API=1 taskset -c 2-5 python3 "$mlp") ;;
    floor-sampled) cmd=(env CUDA_INJECTION64_PATH="$floor" FUSELENS_FLOOR_PROFILER_API=1 taskset -c 2-5 python3 "$mlp")
                   extra=(--profiler-every "$every") ;;
    sample) cmd=(taskset -c 2-5 prof-run -o /tmp/so.sqlite --force --sample "1/$every" -- python3 "$mlp") ;;
    sample-drvids) cmd=(env FUSELENS_CONTROL_API=driver-ids taskset -c 2-5 prof-run -o /tmp/so.sqlite --force --sample "1/$every" -- python3 "$mlp") ;;
    never) cmd=(taskset -c 2-5 prof-run -o /tmp/so.sqlite --force --capture-range nvtx:never -- python3 "$mlp") ;;
  esac
  "${cmd[@]}" --model cnn --steps "$steps" --warmup-steps 50 --time \
    --step-times "$R/sampleoff_steps/$round-$name.json" "${extra[@]}" > /tmp/so.out 2> /tmp/so.err ||
    { echo "$name round $round failed"; tail -n 3 /tmp/so.err; }
  echo "{\"setting\":\"$name\",\"round\":$round}" >> "$f"
}
echo "== CNN step, off state of sampled tracing, 1/$every, $steps steps, rounds until ${UNTIL_S:-240} s"
start=$SECONDS round=0
while [ $((SECONDS - start)) -lt "${UNTIL_S:-240}" ]; do
  round=$((round + 1))
  for s in $(printf '%s\n' ${SETTINGS:-none floor-idle floor-sampled sample sample-drvids never} | shuf); do
    one "$s" "$round"
  done
done
echo "rounds: $round"
python3 - "$R/sampleoff_steps" "$every" <<'PY' | tee "$R/sampleoff_summary.txt"
import collections, glob, json, math, os, random, statistics, sys
d, every = sys.argv[1], int(sys.argv[2])
runs = collections.defaultdict(dict)
for p in glob.glob(os.path.join(d, "*.json")):
    rnd, name = os.path.basename(p)[:-5].split("-", 1)
    runs[int(rnd)][name] = json.load(open(p))["wall_us"]
def boot(v):
    if len(v) < 2: return (float("nan"),) * 2
    m = [math.exp(statistics.mean(math.log(x) for x in random.choices(v, k=len(v)))) for _ in range(2000)]
    m.sort(); return m[50], m[1949]
random.seed(1)
names = sorted({n for r in runs.values() for n in r} - {"none"})
print("setting        whole run / none [95 %]        untraced / none   traced / none   rounds")
for n in names:
    whole, untr, tr = [], [], []
    for r in runs.values():
        if "none" not in r or n not in r: continue
        base = statistics.mean(r["none"]); s = r[n]
        whole.append(statistics.mean(s) / base)
        u = [x for i, x in enumerate(s) if (i + 1) % every]
        t = [x for i, x in enumerate(s) if (i + 1) % every == 0]
        untr.append(statistics.mean(u) / base); tr.append(statistics.mean(t) / base)
    if not whole: continue
    g = lambda v: math.exp(statistics.mean(math.log(x) for x in v))
    lo, hi = boot(whole)
    print(f"{n:14s} {g(whole):.4f} [{lo:.4f}, {hi:.4f}]        {g(untr):.4f}          {g(tr):.4f}          {len(whole)}")
PY
date -u
