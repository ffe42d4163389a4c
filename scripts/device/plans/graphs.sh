#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): CUDA graph
# replays charged to their capture site (docs/calling-context.md, "CUDA graphs"). SECTIONS
# (default all):
#   test     gpu_tests' GraphReplayGpu case (tests/gpu/GraphReplayGpuTest.cpp) and the
#            graph_replay workload alone;
#   capture  the C++ capture kept under tests/data: prof-run of graph_replay --replays 20 into
#            $R/graph_replay.sqlite (with its --json report $R/graph_replay.launched.json), its
#            graph_node rows, and prof-analyze cct --window all (top-down, bottom-up) into $R;
#   torch    workloads/python/graph_torch.py under prof-run: torch.cuda.graph ($R/graph_torch.sqlite)
#            and torch.compile(mode="reduce-overhead") ($R/graph_torch_compile.sqlite), with
#            prof-analyze cct --window all of each into $R/graph_torch*_cct.txt and .json, and a
#            check of the JSON (CHECK PASSED/FAILED: every replayed operation under the capturing
#            function, the replay rows naming the replaying one).
# Runtime: about a minute (the compile run is most of it).
set -u
SECTIONS=${SECTIONS:-"test capture torch"}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
py="$S/share/fuselens/workloads/python/graph_torch.py"
if has test; then
  echo "== gpu_tests --gtest_filter=GraphReplayGpu.*"
  (cd /tmp && gpu_tests --gtest_filter='GraphReplayGpu.*' > "$R/graph_replay_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|Which is|not under" \
    "$R/graph_replay_gpu_tests.txt" | head -n 40
  (cd /tmp && graph_replay --replays 4 > /dev/null; echo "graph_replay alone exit $?")
fi
if has capture; then
  echo "== graph_replay capture"
  (cd /tmp && prof-run -o "$R/graph_replay.sqlite" --force -- graph_replay --replays 20 \
    --json "$R/graph_replay.launched.json"; echo "prof-run graph_replay exit $?")
  python3 - "$R/graph_replay.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
try:
    print("graph_node rows (all, made by a call, clones):", db.execute(
        "SELECT COUNT(*), SUM(correlation_id != 0), SUM(original_node_id != 0) FROM graph_node").fetchone())
except sqlite3.Error as e:
    print("graph_node:", e)
print("graph kernels (rows, distinct nodes):", db.execute(
    "SELECT COUNT(*), COUNT(DISTINCT graph_node_id) FROM kernel WHERE graph_node_id IS NOT NULL").fetchone())
PY
  prof-analyze cct "$R/graph_replay.sqlite" --window all > "$R/graph_replay_cct.txt" 2>&1
  prof-analyze cct "$R/graph_replay.sqlite" --window all --view bottom-up > "$R/graph_replay_cct_bottom_up.txt" 2>&1
  head -n 40 "$R/graph_replay_cct.txt"
fi
if has torch; then
  for mode in graph compile; do
    name=graph_torch; [ "$mode" = compile ] && name=graph_torch_compile
    echo "== $name (graph_torch.py --mode $mode)"
    (cd /tmp && prof-run -o "$R/$name.sqlite" --force -- python3 "$py" --mode "$mode" \
      --replays 50 --json "$R/$name.json" > "$R/$name.log" 2>&1; echo "prof-run $name exit $?")
    tail -n 5 "$R/$name.log"
    prof-analyze cct "$R/$name.sqlite" --window all --min-percent 1 > "$R/${name}_cct.txt" 2>&1
    prof-analyze cct "$R/$name.sqlite" --window all --format json > "$R/${name}_cct.json" 2>&1
    grep -E "CUDA graphs:|Calling context" "$R/${name}_cct.txt"
    grep -n -E "<graph replay>|capture_forward|run_compiled" "$R/${name}_cct.txt" | head -n 20
    # Every replayed operation under its capture site; the replay rows name the replaying function,
    # and (graph mode) capture_forward is an ancestor of each.
    python3 - "$R/${name}_cct.json" "$R/$name.json" <<'PY'
import json, sys
try:
    cct, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
except Exception as e:
    print("CHECK FAILED: cannot read", e); sys.exit(0)
rows = {r["id"]: r for r in cct["rows"]}
g = cct.get("graphs", {})
replays = [r for r in cct["rows"] if r["kind"] == "graph_replay"]
def ancestors(r):
    while r["parent"] > 0:
        r = rows[r["parent"]]; yield r["label"]
# The replay row names the innermost frame of the replay site: the replaying function itself
# (graph mode), or Inductor's generated Runner.call under it (reduce-overhead): either way the
# replaying function is the row or one of its ancestors.
bad_site = [r["label"] for r in replays if run["replay_function"] not in r["label"]
            and not any(run["replay_function"] in a for a in ancestors(r))]
bad_capture = [r["label"] for r in replays
               if not any(run["capture_function"] in a for a in ancestors(r))]
ok = g and g["replayed_operations"] > 0 and g["at_replay_site"] == 0 and not bad_site and \
    (run["mode"] != "graph" or not bad_capture)
print("CHECK", "PASSED" if ok else "FAILED", run["mode"], "graphs:", g, "replay rows:", len(replays),
      "not naming", run["replay_function"] + ":", bad_site[:3], "not under",
      run["capture_function"] + ":", bad_capture[:3])
PY
  done
fi
