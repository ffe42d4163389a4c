#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue #9's
# collector side of scale. Ten million empty-kernel launches (launch_overhead) with and without
# the collector: peak memory of the workload process (ru_maxrss of prof-run's children), kernels
# recorded, dropped records, capture size per kernel; then a deliberately small buffer pool
# (2 x 64 KiB) on a million launches: recorded + dropped must equal launched.
set -u
root=$PWD R=${R:-/tmp/bg/results}
S="$root/stage"
export PATH="$S/bin:$PATH" LD_LIBRARY_PATH="$S/lib"
cd /tmp
peak() {  # command... : runs it, prints its output and the peak RSS (MiB) of its process tree
  python3 -c '
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(r.stdout.strip()[-300:]); print(r.stderr.strip()[-600:])
print(f"exit {r.returncode}  wall {time.time() - t:.1f} s  peak RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")
' "$@"
}
count() {
  python3 -c "
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); q = lambda s: db.execute(s).fetchone()[0]
k = q('select count(*) from kernel')
print('kernels', k, 'dropped', q('select dropped_records from run'), 'api', q('select count(*) from api_call'),
      'size', os.path.getsize(sys.argv[1]), 'bytes per kernel', round(os.path.getsize(sys.argv[1]) / max(k, 1), 1))
" "$1"
}
N=${N:-10000000}
SECTIONS=${SECTIONS:-"big pool"}
has() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }
if has big; then
echo "== launch_overhead --launches $N, no profiler"; peak launch_overhead --launches "$N" --repeat 1
echo "== the same under prof-run (default trace)"; peak prof-run -o /tmp/big.sqlite --force -- launch_overhead --launches "$N" --repeat 1
count /tmp/big.sqlite
sqlite3 /tmp/big.sqlite "select 'stored aggregates', table_name, row_count from summary_source" 2>/dev/null ||
  python3 -c "import sqlite3; print(sqlite3.connect('/tmp/big.sqlite').execute('select * from summary_source').fetchall())"
echo "== prof-analyze summary on it (16-core GPU host, one thread): stored aggregates, then --names short (rows)"
peak bash -c 'prof-analyze summary /tmp/big.sqlite > /tmp/summary.txt'
peak bash -c 'prof-analyze summary /tmp/big.sqlite --names short > /tmp/summary_short.txt'
head -n 16 /tmp/summary.txt | cut -c1-150
fi
if has pool; then
echo "== small pool: --max-buffers 2 --buffer-kib 64, 1M launches"
for round in 1 2; do
  peak prof-run -o /tmp/small.sqlite --force --max-buffers 2 --buffer-kib 64 -- launch_overhead --launches 1000000 --repeat 1 | tee /tmp/small.log
  count /tmp/small.sqlite
  python3 - /tmp/small.sqlite /tmp/small.log <<'PY'
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); k = db.execute("select count(*) from kernel").fetchone()[0]
m = re.search(r"records dropped: (\d+) kernel, (\d+) API, (\d+) other.*?(\d+) more reported", open(sys.argv[2]).read())
if m:
    dk, da, do, dc = map(int, m.groups())
    print(f"kernels recorded {k} + kernel records dropped {dk} = {k + dk} (launched 1000100); API dropped {da}, other {do}, CUPTI-reported {dc}")
else:
    print("no drop line in the log")
PY
done
fi
