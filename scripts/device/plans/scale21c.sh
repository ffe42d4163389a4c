#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 21,
# cct and flags on a real ten-million-launch capture once prof-run stores cct above 2 M records
# (CctStream.cpp). launch_overhead --launches N --repeat 1 unprofiled, then under prof-run's
# default trace (finalize time and its lines), then prof-analyze on the capture: cct (the stored
# result), cct --window all (streamed from the rows), flags (the rows), each with its wall time and
# peak RSS. Variables: N (default 10000000).
set -u
SECTIONS=${SECTIONS:-all}  # no sections: prelude.sh's `has` is not used here
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
cd /tmp
N=${N:-10000000}
peak() {  # LABEL command...: runs it, prints the tail of its stderr, wall time and peak RSS (MiB)
  python3 -c '
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[2:], capture_output=True, text=True)
print(r.stderr.strip()[-900:])
print(f"{sys.argv[1]}: exit {r.returncode}  wall {time.time() - t:.1f} s  peak RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB")
' "$@"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc
echo "== unprofiled"
peak unprofiled launch_overhead --launches "$N" --repeat 1
echo "== prof-run default trace"
peak prof-run prof-run -o /tmp/big.sqlite --force -- launch_overhead --launches "$N" --repeat 1
ls -l /tmp/big.sqlite
sqlite3 /tmp/big.sqlite "select analysis, length(body) from stored_analysis" 2>/dev/null ||
  python3 -c "import sqlite3; print(sqlite3.connect('/tmp/big.sqlite').execute('select analysis, length(body) from stored_analysis').fetchall())"
echo "== prof-analyze (one process each)"
peak "cct (stored)" bash -c 'prof-analyze cct /tmp/big.sqlite > /tmp/cct.txt'
peak "cct --window all (streamed)" bash -c 'prof-analyze cct /tmp/big.sqlite --window all > /tmp/cct_all.txt'
cmp /tmp/cct.txt /tmp/cct_all.txt >/dev/null && echo "cct stored = streamed (bytes)" ||
  diff <(tail -n +2 /tmp/cct.txt) <(tail -n +2 /tmp/cct_all.txt) | head -5
peak "flags (rows)" bash -c 'prof-analyze flags /tmp/big.sqlite > /tmp/flags.txt'
head -n 30 /tmp/cct.txt | cut -c1-160 > "$R/cct_head.txt"
head -n 40 /tmp/flags.txt | cut -c1-160 > "$R/flags_head.txt"
