#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): how a capture
# window switches the API activity selection (Collector::set_recording; FUSELENS_CONTROL_API
# runtime (default), filter, both; CollectorConfig::window_api). For each mode: step_loop --steps 20 --profiler-api 5-14 under
# prof-run --capture-range cudaProfilerApi, then the kernels and launch calls recorded and how
# many kernels have their launch call (same correlation id) -> $R/window_api.txt.
set -u
SECTIONS=${SECTIONS:-check}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
for mode in ${MODES:-runtime filter both}; do
  FUSELENS_CONTROL_API=$mode prof-run -o "/tmp/w-$mode.sqlite" --force \
    --capture-range cudaProfilerApi -- step_loop --steps 20 --profiler-api 5-14 > /dev/null 2>&1
  echo "mode $mode exit $?"
  python3 - "/tmp/w-$mode.sqlite" "$mode" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda s: c.execute(s).fetchone()[0]
print(f"  {sys.argv[2]}: kernels {q('SELECT COUNT(*) FROM kernel')}, api calls {q('SELECT COUNT(*) FROM api_call')}, "
      f"kernels with their launch call {q('SELECT COUNT(*) FROM kernel k WHERE EXISTS (SELECT 1 FROM api_call a WHERE a.correlation_id = k.correlation_id)')}")
PY
done 2>&1 | tee "$R/window_api.txt"
# Without windows: the launch calls recorded by the default selection (the selected calls alone)
# and by FUSELENS_API_SELECT=kind (the runtime kind, the rest switched off), by name.
for select in ids kind; do
  FUSELENS_API_SELECT=$select prof-run -o "/tmp/s-$select.sqlite" --force -- step_loop --steps 20 > /dev/null 2>&1
  python3 - "/tmp/s-$select.sqlite" "$select" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("SELECT s.value, COUNT(*) FROM api_call a JOIN strings s ON s.id = a.name_id GROUP BY 1 ORDER BY 1").fetchall()
k = c.execute("SELECT COUNT(*) FROM kernel").fetchone()[0]
print(f"  select {sys.argv[2]}: kernels {k}, calls " + ", ".join(f"{n} {v}" for n, v in rows))
PY
done 2>&1 | tee -a "$R/window_api.txt"
