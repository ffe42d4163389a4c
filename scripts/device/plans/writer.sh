#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 21's
# "writer and finalize" on the H100 host. Ten million empty-kernel launches (launch_overhead)
# without and under prof-run (default trace), ROUNDS rounds interleaved: the workload's wall time,
# prof-run's, and prof-run's own "finalized in X s" line (the indexes, the summary's aggregates
# and the steps, after the workload ended), with its progress lines (stderr is not a terminal:
# one line at most every 2 s); kernels recorded and dropped. Needs only the staged prof-run,
# prof-analyze and launch_overhead (scripts/device/stage.sh's default targets). About 4 minutes
# per round at ten million launches.
set -u
SECTIONS=${SECTIONS:-all}  # no sections: prelude.sh's `has` is not used here
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
cd /tmp
N=${N:-10000000}
ROUNDS=${ROUNDS:-1}
timed() {  # label command...: runs it, prints its stderr's fuselens lines and its wall time
  python3 -c '
import subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[2:], capture_output=True, text=True)
lines = [l for l in r.stderr.splitlines() if l.startswith("[fuselens]") or "error" in l]
print("\n".join(lines[-12:]))
print(f"{sys.argv[1]}: exit {r.returncode}  wall {time.time() - t:.1f} s")
' "$@"
}
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round: launch_overhead --launches $N, no profiler"
  timed unprofiled launch_overhead --launches "$N" --repeat 1
  echo "== round $round: the same under prof-run (default trace)"
  timed profiled prof-run -o /tmp/writer.sqlite --force -- launch_overhead --launches "$N" --repeat 1
  python3 -c "
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); q = lambda s: db.execute(s).fetchone()[0]
k = q('select count(*) from kernel')
print('kernels', k, 'dropped', q('select dropped_records from run'), 'api', q('select count(*) from api_call'),
      'bytes per kernel', round(os.path.getsize(sys.argv[1]) / max(k, 1), 1))
" /tmp/writer.sqlite
done 2>&1 | tee "$R/writer.log"
rm -f /tmp/writer.sqlite /tmp/writer.sqlite-wal /tmp/writer.sqlite-shm /tmp/writer.sqlite-journal
