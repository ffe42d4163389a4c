#!/bin/bash
# A/B of two finalize_benchmark binaries (tools/prof-run/bench/FinalizeBenchmark.cpp: prof-run's
# finalization of an existing capture) on one capture, for issue 21's finalize figure. Each round
# copies CAPTURE, takes back what a finalization left in the copy (the ten capture indexes, the
# stored summary aggregates, steps, cct/flags results, NVTX projections and level of detail, the
# run's end), then finalizes it with each binary in turn, the order reversed every other round;
# one process each, wall and peak RSS by /usr/bin/time, prof-run's "finalized in" line, and the
# stored rows' digest of each copy (the same digest: the same results).
#
# Usage: scripts/bench/finalize_ab.sh BASE NEW CAPTURE [ROUNDS] [WORK_DIR]
#   BASE, NEW: finalize_benchmark binaries (or the same one twice); ROUNDS default 2;
#   WORK_DIR (default a new temporary folder) needs twice CAPTURE's size free.
#   FLOOR=1: then SQLite's own floor under the index builds: CAPTURE's index statements alone,
#   in one transaction out of WAL mode with the same pragmas (python3's sqlite3), on a fresh copy.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
base=$1 new=$2 capture=$3 rounds=${4:-2} work=${5:-$(mktemp -d)}
mkdir -p "$work"
# What prof-run's finalization adds, taken back (python3's sqlite3: the GPU machine has no shell).
reset() {
  python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for (name,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").fetchall():
    c.execute(f'DROP INDEX "{name}"')
derived = ["summary_source", "summary_duration", "summary_nvtx_work", "summary_nvtx_process",
           "step_detection", "step", "stored_analysis_source", "stored_analysis",
           "timeline_lod_source", "timeline_lod"]
have = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
for t in derived:
    if t in have:
        c.execute(f'DELETE FROM "{t}"')
c.execute("UPDATE run SET end_utc_ns = NULL, end_reason = 0, exit_status = NULL")
c.commit()
c.execute("PRAGMA journal_mode = DELETE")
PY
}
# A digest of what finalization stored (the stored results' bodies, the steps, the aggregates).
digest() {
  python3 - "$1" <<'PY'
import hashlib, sqlite3, sys
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
h = hashlib.sha256()
for t, order in [("stored_analysis", "analysis, window_spec"), ("step", "1"), ("summary_duration", "1"),
                 ("timeline_lod", "1")]:
    try:
        for row in c.execute(f'SELECT * FROM "{t}" ORDER BY {order}'):
            h.update(repr(row).encode())
    except sqlite3.Error as e:
        h.update(str(e).encode())
print(h.hexdigest()[:16])
PY
}
cp "$capture" "$work/reset.sqlite"
reset "$work/reset.sqlite"
for round in $(seq 1 "$rounds"); do
  order=(base new)
  [ $((round % 2)) = 0 ] && order=(new base)
  for which in "${order[@]}"; do
    bin=$base
    [ "$which" = new ] && bin=$new
    cp "$work/reset.sqlite" "$work/$which.sqlite"
    sync
    /usr/bin/time -f "round $round $which: %e s wall, %U s user, %S s sys, %M KB" "$bin" \
      "$work/$which.sqlite" 2>"$work/err_${which}_$round.txt" >/dev/null || true
    grep -h "finalized in\|not stored\|cannot" "$work/err_${which}_$round.txt" || true
    tail -1 "$work/err_${which}_$round.txt"
    echo "  stored digest $(digest "$work/$which.sqlite")"
  done
done
if [ "${FLOOR:-0}" = 1 ]; then
  cp "$work/reset.sqlite" "$work/floor.sqlite"
  python3 - "$capture" "$work/floor.sqlite" <<'PY'
import sqlite3, sys, time
src = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
indexes = src.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
                      " ORDER BY rowid").fetchall()
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("PRAGMA journal_mode = DELETE")
c.execute("PRAGMA synchronous = NORMAL")
c.execute("PRAGMA threads = 7")
c.execute("PRAGMA cache_size = -262144")
start = time.time()
c.execute("BEGIN")
for name, sql in indexes:
    t = time.time()
    c.execute(sql)
    print(f"  floor {name}: {time.time() - t:.2f} s")
c.execute("COMMIT")
print(f"floor: {len(indexes)} index builds and their commit {time.time() - start:.1f} s"
      f" (SQLite {sqlite3.sqlite_version})")
PY
fi
rm -f "$work/reset.sqlite" "$work/base.sqlite" "$work/new.sqlite" "$work/floor.sqlite"
