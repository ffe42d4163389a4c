#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried, and stage-old/
# carried for the overhead section): checks a structural change of the collector or the launchers
# (issue 18). SECTIONS (default "tests overhead"):
#   tests     gpu_tests, reliability_gpu_tests, kernel_tests and fmnist_gpu_tests of stage/;
#   overhead  launch_overhead's host µs per launch in interleaved rounds (OVERHEAD_ROUNDS, default
#             8), the settings shuffled in each round, one process each: no profiler, CUPTI's kernel
#             floor, prof-run's default from stage-old/ (the build before the change: bin/prof-run,
#             lib/libfuselens_collector.so) and from stage/, unbatched and --batch 100. Written to
#             $R/overhead_ab.jsonl ({"round", "setting", "value"}); summarized per round as
#             µs above the floor and new minus old, with 95 % bootstrap intervals of the median.
set -u
SECTIONS=${SECTIONS:-"tests overhead"}
. "$PWD/scripts/device/prelude.sh"
if has tests; then
  for t in gpu_tests reliability_gpu_tests kernel_tests fmnist_gpu_tests; do
    echo "== $t"
    (cd /tmp && timeout 400 "$t" > "$R/$t.txt" 2>&1; echo "exit $?")
    grep -E "^\[  (PASSED|FAILED) +\] [0-9]+ test|FAILED  \]|^\[  SKIPPED \] [0-9]+ test" "$R/$t.txt" | head -n 12
  done
fi
if has overhead; then
  old="$root/stage-old"
  echo "== launch overhead, old vs new collector (host us per launch, ${OVERHEAD_ROUNDS:-8} shuffled rounds)"
  : > "$R/overhead_ab.jsonl"
  pin="taskset -c 2-5"
  floor="$S/lib/libfuselens_cupti_floor.so"
  sample() {  # ROUND SETTING CMD...
    local round=$1 name=$2 value
    shift 2
    value=$("$@" 2>/dev/null | grep '^{' | tail -n 1 |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["host_us_per_launch_median"])' 2>/dev/null)
    echo "{\"round\":$round,\"setting\":\"$name\",\"value\":${value:-null}}" >> "$R/overhead_ab.jsonl"
  }
  run_setting() {  # ROUND SETTING
    local b=""
    case "$2" in *_batched) b="--batch 100" ;; esac
    case "$2" in
      none*) sample "$1" "$2" $pin launch_overhead $b ;;
      floor*) sample "$1" "$2" env CUDA_INJECTION64_PATH="$floor" $pin launch_overhead $b ;;
      old*) sample "$1" "$2" env LD_LIBRARY_PATH="$old/lib:$S/lib" $pin "$old/bin/prof-run" -o /tmp/ov.sqlite --force -- "$S/bin/launch_overhead" $b ;;
      new*) sample "$1" "$2" $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead $b ;;
    esac
  }
  for round in $(seq 1 "${OVERHEAD_ROUNDS:-8}"); do
    for s in $(printf '%s\n' none floor old new none_batched floor_batched old_batched new_batched | shuf); do
      run_setting "$round" "$s"
    done
    echo "round $round done $(date -u +%H:%M:%S)"
  done
  python3 - "$R/overhead_ab.jsonl" <<'PY'
import collections, json, random, statistics, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["value"] is not None:
        rows[r["round"]][r["setting"]] = float(r["value"])
def boot(xs, n=4000):
    random.seed(1)
    meds = sorted(statistics.median(random.choices(xs, k=len(xs))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n)]
for suffix in ["", "_batched"]:
    print(f"-- {'batched (--batch 100)' if suffix else 'unbatched'}")
    for s in ["none", "floor", "old", "new"]:
        v = [r[s + suffix] for r in rows.values() if s + suffix in r]
        if v:
            print(f"{s:6s} median {statistics.median(v):6.2f} us  runs {[round(x, 2) for x in v]}")
    for name, f in [("old above floor", lambda r: r["old" + suffix] - r["floor" + suffix]),
                    ("new above floor", lambda r: r["new" + suffix] - r["floor" + suffix]),
                    ("new minus old", lambda r: r["new" + suffix] - r["old" + suffix])]:
        d = [f(r) for r in rows.values() if all(k + suffix in r for k in ("floor", "old", "new"))]
        if d:
            lo, hi = boot(d)
            print(f"{name:16s} per-round median {statistics.median(d):+.2f} us  95 % CI [{lo:+.2f}, {hi:+.2f}]  n={len(d)}")
PY
fi
