#!/usr/bin/env bash
# Issue 21's analyses at ten million kernels, timed against the sqlite3 shell's own queries on
# the same file (the floor: what reading the rows once costs SQLite itself). Development machine.
#
#   scripts/bench/analyses_at_scale.sh CAPTURE [PROF_ANALYZE] [GUI_BENCHMARK]
#
# CAPTURE: e.g. `synthetic_capture big.sqlite --kernels 10000000`, then `synthetic_capture
# big.sqlite --store-aggregates` (what prof-run stores when a run ends, at any size). Each command
# runs once under /usr/bin/time; one line each: wall s, CPU s (user + system), peak RSS MB, exit
# status, command. Outputs go to a temporary folder (removed at the end); the capture is not
# changed except by the "no stored extent" rows, which delete the stored extent and put it back.
set -u
cap=${1:?usage: analyses_at_scale.sh CAPTURE [PROF_ANALYZE] [GUI_BENCHMARK]}
pa=${2:-build/ci/tools/prof-analyze/prof-analyze}
gui=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # run LABEL CMD...
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S %M %x" -o "$out/time" "$@" > "$out/stdout" 2> "$out/stderr"
  read -r wall user sys rss status < <(tail -n 1 "$out/time")
  printf '%-34s %7.2f s wall %7.2f s CPU %7.0f MB  exit %s\n' "$label" "$wall" \
    "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)" "$status"
}
echo "capture: $cap ($(du -h "$cap" | cut -f1)); $(uptime | sed 's/.*load/load/')"
echo "== floors: the sqlite3 shell"
run "sqlite3: kernels, one pass" sqlite3 "$cap" "SELECT count(*), sum(end_ns - start_ns) FROM kernel"
run "sqlite3: calls, one pass" sqlite3 "$cap" "SELECT count(*), sum(end_ns - start_ns) FROM api_call"
run "sqlite3: extent (4 tables)" sqlite3 "$cap" "SELECT min(start_ns), max(end_ns) FROM kernel; SELECT min(start_ns), max(end_ns) FROM api_call; SELECT min(start_ns), max(end_ns) FROM memcpy; SELECT min(start_ns), max(end_ns) FROM memset"
run "sqlite3: kernels as CSV" sh -c "sqlite3 -csv '$cap' 'SELECT * FROM kernel' > /dev/null"
run "sqlite3: stored results" sqlite3 "$cap" "SELECT analysis, length(body) FROM stored_analysis"
echo "== prof-analyze"
run "summary" "$pa" summary "$cap"
run "cct" "$pa" cct "$cap"
run "flags" "$pa" flags "$cap"
run "steps" "$pa" steps "$cap"
run "compare (the capture with itself)" "$pa" compare "$cap" "$cap"
run "export json" "$pa" export "$cap" --format json -o "$out/a.json"
run "export csv" "$pa" export "$cap" --format csv -o "$out/a.csv"
run "export html" "$pa" export "$cap" --format html -o "$out/a.html"
run "export chrome-trace (steady window)" "$pa" export "$cap" --format chrome-trace -o "$out/a.trace.json"
run "export chrome-trace --window all" "$pa" export "$cap" --format chrome-trace --window all -o "$out/b.trace.json"
if [ -n "$gui" ]; then
  run "prof-gui first paint (gui_benchmark)" env QT_QPA_PLATFORM=offscreen "$gui" --open "$cap"
fi
body=$(sqlite3 "$cap" "SELECT body FROM stored_analysis WHERE analysis = 'extent'")
if [ -n "$body" ]; then
  echo "== without the stored extent (deleted, then put back: '$body')"
  sqlite3 "$cap" "DELETE FROM stored_analysis WHERE analysis = 'extent'"
  run "cct, no stored extent" "$pa" cct "$cap"
  run "flags, no stored extent" "$pa" flags "$cap"
  sqlite3 "$cap" "INSERT INTO stored_analysis VALUES ('extent', '', '', '$body')"
fi
