#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried; builds nothing):
# issue 21's aggregate mode (prof-run --mode aggregate, docs/aggregate.md) against the default
# trace on the same workloads. Stage targets (scripts/device/stage.sh builds them all; or
# stage_targets.sh): prof-run, fuselens_collector, fuselens_exit_shim, prof-analyze,
# launch_overhead, step_loop, gpu_tests; mlp_train.py (workloads/python) needs PyTorch on the GPU
# machine. Under 8 minutes at the defaults (the 10M-launch runs take about 30-100 s each).
# SECTIONS (default "launch mlp gpu"):
#   launch  launch_overhead --launches N (default 10,000,000) unprofiled, under --mode aggregate,
#           under the default trace, and under --mode aggregate with FUSELENS_AGGREGATE_KEEP_TRACE=1
#           (aggregates and every row, the same run): wall time and peak RSS (/usr/bin/time -v, else Python's resource module),
#           capture size, dropped records; compare_aggregate.py on the same run (counts exact,
#           totals within 1 %) and across the aggregate and trace runs
#   mlp     python3 mlp_train.py --steps STEPS (default 5000) likewise, --steps 100:0:20:1 on the
#           aggregate runs (the trace of steps 101-120 beside the whole run's statistics)
#   gpu     gpu_tests --gtest_filter='Aggregate*' (the GPU test of aggregate mode)
# Results in $R: aggregate_*.txt (one per run: time -v, size, rows), aggregate_compare_*.txt
# (PASS/FAIL lines), aggregate_launch.sqlite and aggregate_mlp.sqlite (the small aggregate
# captures, for tests/data), aggregate_summary_*.txt and aggregate_cct_mlp.txt.
set -u
SECTIONS=${SECTIONS:-launch mlp gpu}
N=${N:-10000000}
STEPS=${STEPS:-5000}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
W=/tmp/aggregate-work
rm -rf "$W" && mkdir -p "$W"
compare="$root/scripts/device/compare_aggregate.py"
mlp="$root/workloads/python/mlp_train.py"
[ -f "$S/share/fuselens/workloads/python/mlp_train.py" ] && mlp="$S/share/fuselens/workloads/python/mlp_train.py"
timed() {  # timed NAME COMMAND...: wall time, peak RSS of its process tree, exit status, the
  # output's last lines into $R/aggregate_NAME.txt (/usr/bin/time -v where the machine has it)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v "${@:2}" > "$W/$1.out" 2> "$R/aggregate_$1.txt"
    echo "exit $?" >> "$R/aggregate_$1.txt"
  else
    python3 -c '
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.PIPE, text=True)
print(r.stderr[-2000:])
print(f"Elapsed (wall clock) time: {time.time() - t:.2f} s")
print(f"Maximum resident set size (kbytes): {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
print(f"exit {r.returncode}")
' "$W/$1.out" "${@:2}" > "$R/aggregate_$1.txt" 2>&1
  fi
  tail -n 3 "$W/$1.out" >> "$R/aggregate_$1.txt"
  grep -E "Elapsed|Maximum resident|^exit|prof-run:" "$R/aggregate_$1.txt" | sed "s/^/$1: /"
}
describe() {  # describe NAME CAPTURE: size, rows, dropped into $R/aggregate_NAME.txt
  python3 - "$2" <<'PY' | tee -a "$R/aggregate_$1.txt"
import os, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
q = lambda s: db.execute(s).fetchone()[0]
has = lambda t: q(f"select count(*) from sqlite_master where name = '{t}'") > 0
size = os.path.getsize(sys.argv[1])
agg = q("select count(*) from aggregate_kernel") if has("aggregate_kernel") else 0
launches = q("select coalesce(sum(count), 0) from aggregate_kernel") if has("aggregate_kernel") else 0
kernels = q("select count(*) from kernel")
print(f"capture {size} bytes; kernel rows {kernels}; aggregate_kernel rows {agg} covering {launches} "
      f"launches; api rows {q('select count(*) from api_call')}; dropped {q('select dropped_records from run')}; "
      f"windows {q('select count(*) from capture_window')}; bytes per launch "
      f"{size / max(launches, kernels, 1):.2f}")
PY
}
if has launch; then
  echo "== launch_overhead --launches $N"
  timed launch_none launch_overhead --launches "$N" --repeat 1
  timed launch_aggregate prof-run -o "$W/agg.sqlite" --force --mode aggregate -- launch_overhead --launches "$N" --repeat 1
  describe launch_aggregate "$W/agg.sqlite"
  timed launch_trace prof-run -o "$W/trace.sqlite" --force -- launch_overhead --launches "$N" --repeat 1
  describe launch_trace "$W/trace.sqlite"
  timed launch_both env FUSELENS_AGGREGATE_KEEP_TRACE=1 prof-run -o "$W/both.sqlite" --force --mode aggregate -- launch_overhead --launches "$N" --repeat 1
  describe launch_both "$W/both.sqlite"
  python3 "$compare" "$W/both.sqlite" > "$R/aggregate_compare_launch_same_run.txt"; tail -n 2 "$R/aggregate_compare_launch_same_run.txt"
  python3 "$compare" "$W/agg.sqlite" "$W/trace.sqlite" --tolerance 0.05 > "$R/aggregate_compare_launch_two_runs.txt"; tail -n 2 "$R/aggregate_compare_launch_two_runs.txt"
  prof-analyze summary "$W/agg.sqlite" > "$R/aggregate_summary_launch.txt" 2>&1
  cp "$W/agg.sqlite" "$R/aggregate_launch.sqlite"
  rm -f "$W/trace.sqlite" "$W/both.sqlite"
fi
if has mlp; then
  echo "== mlp_train.py --steps $STEPS"
  timed mlp_none python3 "$mlp" --steps "$STEPS" --time
  timed mlp_aggregate prof-run -o "$W/mlp_agg.sqlite" --force --mode aggregate --steps 100:0:20:1 -- python3 "$mlp" --steps "$STEPS" --time
  describe mlp_aggregate "$W/mlp_agg.sqlite"
  timed mlp_trace prof-run -o "$W/mlp_trace.sqlite" --force -- python3 "$mlp" --steps "$STEPS" --time
  describe mlp_trace "$W/mlp_trace.sqlite"
  timed mlp_both env FUSELENS_AGGREGATE_KEEP_TRACE=1 prof-run -o "$W/mlp_both.sqlite" --force --mode aggregate -- python3 "$mlp" --steps "$STEPS" --time
  describe mlp_both "$W/mlp_both.sqlite"
  python3 "$compare" "$W/mlp_both.sqlite" > "$R/aggregate_compare_mlp_same_run.txt"; tail -n 2 "$R/aggregate_compare_mlp_same_run.txt"
  python3 "$compare" "$W/mlp_agg.sqlite" "$W/mlp_trace.sqlite" --tolerance 0.05 > "$R/aggregate_compare_mlp_two_runs.txt"; tail -n 2 "$R/aggregate_compare_mlp_two_runs.txt"
  prof-analyze summary "$W/mlp_agg.sqlite" > "$R/aggregate_summary_mlp.txt" 2>&1
  prof-analyze cct "$W/mlp_agg.sqlite" --limit 40 > "$R/aggregate_cct_mlp.txt" 2>&1
  prof-analyze flags "$W/mlp_agg.sqlite" > "$R/aggregate_flags_mlp.txt" 2>&1
  prof-analyze steps "$W/mlp_agg.sqlite" > "$R/aggregate_steps_mlp.txt" 2>&1
  cp "$W/mlp_agg.sqlite" "$R/aggregate_mlp.sqlite"
  rm -f "$W/mlp_trace.sqlite" "$W/mlp_both.sqlite"
fi
if has gpu; then
  echo "== gpu_tests Aggregate*"
  gpu_tests --gtest_filter='Aggregate*' > "$R/aggregate_gpu_tests.txt" 2>&1; echo "gpu_tests exit $?"
  tail -n 5 "$R/aggregate_gpu_tests.txt"
fi
rm -rf "$W"
