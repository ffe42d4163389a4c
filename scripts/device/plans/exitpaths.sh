#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the exit paths
# that skip exit() (issue 22: _exit, syscall(SYS_exit_group), execv, a failed exec, a forked
# child's _exit, a Python multiprocessing worker's os._exit) keep every kernel through the exit
# shim prof-run preloads (collector/shim/ExitShim.h). Builds nothing; needs stage/ from
# scripts/device/stage.sh (targets prof-run fuselens_collector fuselens_exit_shim prof-analyze
# exit_paths exit_paths_lib exit_paths_gpu_tests, and reliability_gpu_tests fault_workload for the
# "reliability" section). SECTIONS (default "tests demo reliability"):
#   tests        exit_paths_gpu_tests -> $R/exit_paths_gpu_tests.txt (and .xml)
#   demo         exit_paths _exit under prof-run with the shim and with FUSELENS_EXIT_SHIM=0, and
#                the Python worker: kernels recorded of 1,200, the process row's end, dropped
#                records -> $R/exitpaths_demo.txt, the captures $R/exit_{shim,noshim,python}.sqlite
#   reliability  reliability_gpu_tests (the signal and fork paths ExitGuard shares with the shim)
#                -> $R/reliability_gpu_tests.txt
# About 2 minutes on the H100.
set -u
SECTIONS=${SECTIONS:-tests demo reliability}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
if has tests; then
  echo "== exit_paths_gpu_tests"
  (cd /tmp && exit_paths_gpu_tests --gtest_output="xml:$R/exit_paths_gpu_tests.xml" \
    > "$R/exit_paths_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|OK \]|recorded .* kernels|Failure|Expected|Which is" \
    "$R/exit_paths_gpu_tests.txt" | head -n 60
fi
if has demo; then
  echo "== demo" | tee "$R/exitpaths_demo.txt"
  count() {  # CAPTURE: kernels, dropped records and whether the final flush closed each process
    python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for pid, end, dropped in db.execute("SELECT pid, end_utc_ns, dropped_records FROM process"):
    n = db.execute("SELECT COUNT(*) FROM kernel WHERE pid = ?", (pid,)).fetchone()[0]
    print(f"  pid {pid}: {n} kernels, dropped {dropped}, final flush {'yes' if end else 'NO'}")
PY
  }
  cd /tmp
  for mode in shim noshim; do
    env=""
    [ $mode = noshim ] && env="FUSELENS_EXIT_SHIM=0"
    out="$R/exit_$mode.sqlite"
    echo "-- exit_paths _exit, $mode" | tee -a "$R/exitpaths_demo.txt"
    env $env prof-run -o "$out" --force -- exit_paths _exit 1200 2>&1 | tee -a "$R/exitpaths_demo.txt"
    echo "  status ${PIPESTATUS[0]}" | tee -a "$R/exitpaths_demo.txt"
    count "$out" | tee -a "$R/exitpaths_demo.txt"
  done
  echo "-- exit_paths_worker.py (multiprocessing fork, os._exit)" | tee -a "$R/exitpaths_demo.txt"
  prof-run -o "$R/exit_python.sqlite" --force -- python3 \
    "$S/share/fuselens/workloads/exit_code/exit_paths_worker.py" "$S/lib/libexit_paths_lib.so" 1200 \
    2>&1 | tee -a "$R/exitpaths_demo.txt"
  count "$R/exit_python.sqlite" | tee -a "$R/exitpaths_demo.txt"
  cd "$root"
fi
if has reliability; then
  echo "== reliability_gpu_tests"
  (cd /tmp && reliability_gpu_tests > "$R/reliability_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|recorded .* kernels" \
    "$R/reliability_gpu_tests.txt" | head -n 30
fi
