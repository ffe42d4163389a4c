#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried; builds nothing):
# issue 21's per-launch overhead of aggregate mode and the lean trace against CUPTI's
# kernel-activity floor, in interleaved rounds (settings shuffled per round, one process each,
# pinned to cores 2-5):
#   none       no profiler
#   floor      CUPTI's kernel activity alone (libfuselens_cupti_floor.so)
#   default    prof-run's default trace (full layout)
#   lean       prof-run --layout lean
#   aggregate  prof-run --mode aggregate
# SECTIONS (default "launch mlp"):
#   launch  launch_overhead --launches LAUNCHES (default 1,000,000) --batch 100: host µs a launch
#           (host_us_per_launch_median), ROUNDS rounds (default 5)
#   mlp     mlp_train.py --steps MLP_STEPS (default 5000) --time: median step (µs), ROUNDS rounds;
#           the captures' size and dropped records of the last round
# -> $R/overhead21_{launch,mlp}.jsonl and their summaries (vs none and vs floor).
set -u
SECTIONS=${SECTIONS:-launch mlp}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
floor="$S/lib/libfuselens_cupti_floor.so"
mlp="$root/workloads/python/mlp_train.py"
settings=${SETTINGS:-none floor default lean aggregate}
wrap() {  # wrap SETTING: the command prefix of a setting
  case $1 in
    none) echo "taskset -c 2-5" ;;
    floor) echo "env CUDA_INJECTION64_PATH=$floor taskset -c 2-5" ;;
    default) echo "taskset -c 2-5 prof-run -o /tmp/o21-$1.sqlite --force --" ;;
    lean) echo "taskset -c 2-5 prof-run -o /tmp/o21-$1.sqlite --force --layout lean --" ;;
    aggregate) echo "taskset -c 2-5 prof-run -o /tmp/o21-$1.sqlite --force --mode aggregate --" ;;
  esac
}
rows() {  # rows FILE: kernels, dropped and bytes of the last round's captures
  for s in default lean aggregate; do
    [ -f "/tmp/o21-$s.sqlite" ] || continue
    python3 - "$s" "/tmp/o21-$s.sqlite" <<'PY' | tee -a "$1"
import os, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
one = lambda q: db.execute(q).fetchone()[0]
names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
k = one("SELECT COUNT(*) FROM kernel") if "kernel" in names else None
if "aggregate_kernel" in names and one("SELECT COUNT(*) FROM aggregate_kernel"):
    k = one("SELECT SUM(count) FROM aggregate_kernel")  # an aggregate capture
print(f"{sys.argv[1]}: {os.path.getsize(sys.argv[2])} bytes, kernels {k}, dropped {one('SELECT dropped_records FROM run')}")
PY
  done
}
for round in $(seq 1 "${ROUNDS:-5}"); do
  for s in $(printf '%s\n' $settings | shuf); do
    # shellcheck disable=SC2046
    has launch && overhead_sample "$R/overhead21_launch.jsonl" "$s" $(wrap "$s") launch_overhead --launches "${LAUNCHES:-1000000}" --batch 100
    # shellcheck disable=SC2046
    has mlp && step_sample "$R/overhead21_mlp.jsonl" "$s" $(wrap "$s") python3 "$mlp" --steps "${MLP_STEPS:-5000}" --time
  done
  echo "round $round done ($(date -u +%T))"
done
for sec in launch mlp; do
  has "$sec" || continue
  echo "== $sec"
  summarize_samples "$R/overhead21_$sec.jsonl" none | tee "$R/overhead21_${sec}_summary.txt"
  summarize_samples "$R/overhead21_$sec.jsonl" floor | grep -v "^floor\|^none" | sed 's/^/vs floor: /' | tee -a "$R/overhead21_${sec}_summary.txt"
done
rows "$R/overhead21_sizes.txt"
date -u
