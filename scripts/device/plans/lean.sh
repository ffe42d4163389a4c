#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 21's
# lean trace layout (`prof-run --layout lean`, db/include/fuselens/db/Layout.h) on real runs.
# For each of `launch_overhead --launches N` (default 1,000,000) and `mlp_train.py --steps STEPS`
# (default 200), one run under prof-run with --layout full and one with --layout lean: the wall
# time, the file size and bytes per kernel (file size / kernels, launch calls, contexts and
# indexes included), kernels, API calls and dropped records, and `prof-analyze summary` of each
# (lean_*.txt); then the full capture converted (`prof-analyze convert --layout lean`) and its
# summary compared with the full one's (must be identical: lean_check.txt). Needs the staged
# prof-run, prof-analyze, launch_overhead and share/fuselens/workloads/python/mlp_train.py with
# torch (scripts/device/stage.sh's default targets). About 2 minutes. LAYOUTS=lean runs the lean
# layout alone (no conversion check), e.g. for N=10000000.
set -u
SECTIONS=${SECTIONS:-launch mlp}
N=${N:-1000000}
STEPS=${STEPS:-200}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
mlp="$S/share/fuselens/workloads/python/mlp_train.py"
cd /tmp
: > "$R/lean_check.txt"
sizes() {  # sizes LABEL CAPTURE
  python3 - "$1" "$2" <<'PY' | tee -a "$R/lean_sizes.txt"
import os, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
q = lambda s: db.execute(s).fetchone()[0]
k = q("SELECT COUNT(*) FROM kernel")  # a view over the lean tables in a lean capture
size = os.path.getsize(sys.argv[2])
print(f"{sys.argv[1]}: {size} bytes, {k} kernels, {q('SELECT COUNT(*) FROM api_call')} API calls, "
      f"{q('SELECT COUNT(*) FROM api_context')} contexts, dropped {q('SELECT dropped_records FROM run')}, "
      f"{size / max(k, 1):.1f} bytes per kernel")
PY
}
one() {  # one NAME COMMAND...: the command under prof-run in both layouts
  local name=$1
  shift
  for layout in ${LAYOUTS:-full lean}; do
    local cap="/tmp/lean_${name}_${layout}.sqlite"
    local t0
    t0=$(date +%s.%N)
    prof-run -o "$cap" --force --layout "$layout" -- "$@" > "$R/lean_${name}_${layout}.log" 2>&1
    local status=$?
    echo "$name $layout: exit $status wall $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" \
      | tee -a "$R/lean_sizes.txt"
    sizes "$name $layout" "$cap"
    prof-analyze summary "$cap" > "$R/lean_${name}_${layout}.txt" 2>&1
    echo "$name $layout: summary exit $?" | tee -a "$R/lean_sizes.txt"
  done
  if [ ! -f "/tmp/lean_${name}_full.sqlite" ]; then  # LAYOUTS=lean: nothing to convert
    rm -f /tmp/lean_"${name}"_*.sqlite*
    return
  fi
  prof-analyze convert "/tmp/lean_${name}_full.sqlite" --layout lean -o "/tmp/lean_${name}_conv.sqlite" --force \
    | tee -a "$R/lean_sizes.txt"
  prof-analyze summary "/tmp/lean_${name}_conv.sqlite" > "$R/lean_${name}_conv.txt" 2>&1
  if diff <(sed "s#lean_${name}_conv#X#g" "$R/lean_${name}_conv.txt") \
          <(sed "s#lean_${name}_full#X#g" "$R/lean_${name}_full.txt") > /dev/null; then
    echo "PASS $name: converted capture's summary equals the full one's" | tee -a "$R/lean_check.txt"
  else
    echo "FAIL $name: converted capture's summary differs" | tee -a "$R/lean_check.txt"
  fi
  rm -f /tmp/lean_"${name}"_*.sqlite*
}
has launch && one launch launch_overhead --launches "$N" --repeat 1
has mlp && one mlp python3 "$mlp" --steps "$STEPS"
cat "$R/lean_check.txt"
