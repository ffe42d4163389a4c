#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 21's
# finalize on the 16-core GPU host, before and after the finalize's index builds use SQLite's
# sorter threads and a 256 MiB cache (db/src/Writer.cpp, finalize_open). synthetic_capture
# --kernels N --no-aggregates of both builds (stage/bin/synthetic_capture_old, _new; the same
# rows, seeded), interleaved ABBA; each prints its finalize time. Then one prof-run default trace
# of launch_overhead --launches N --repeat 1 with the new prof-run (the "finalized in" line).
# Variables: N (default 10000000), ROUNDS (ABBA pairs, default 1).
set -u
SECTIONS=${SECTIONS:-all}  # no sections: prelude.sh's `has` is not used here
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
cd /tmp
N=${N:-10000000}
ROUNDS=${ROUNDS:-1}
nproc
python3 -c "import sqlite3; print('sqlite', sqlite3.sqlite_version)"
one() {  # old|new
  rm -f /tmp/syn.sqlite
  /usr/bin/time -f "$1: %e s wall, %U s user, %S s sys, %M KB" "$S/bin/synthetic_capture_$1" /tmp/syn.sqlite \
    --kernels "$N" --no-aggregates 2>&1 | tail -2
}
for r in $(seq "$ROUNDS"); do one old; one new; one new; one old; done
rm -f /tmp/syn.sqlite
echo "== prof-run (new), launch_overhead --launches $N --repeat 1"
/usr/bin/time -f "unprofiled: %e s" launch_overhead --launches "$N" --repeat 1 > /dev/null
/usr/bin/time -f "prof-run: %e s wall, %M KB" prof-run -o /tmp/big.sqlite --force -- launch_overhead --launches "$N" --repeat 1 2>&1 > /dev/null | tail -6
