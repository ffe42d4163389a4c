#!/usr/bin/env bash
# Runs on the GPU machine from the repository root with stage/ carried (scripts/device/stage.sh):
# GPU tests, the real captures kept under tests/data, and the launch-overhead measurement.
# Everything it produces goes to $OUT (at most 8 files come back).
set -u
OUT=${OUT:-/tmp/fuselens-out}
mkdir -p "$OUT"
root=$PWD
export PATH="$root/stage/bin:$PATH"
export LD_LIBRARY_PATH="$root/stage/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FUSELENS_BIN_DIR="$root/stage/bin"
log="$OUT/session.log"
exec > >(tee -a "$log") 2>&1

echo "== device"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv
echo "== gpu tests"
gpu_tests 2>&1 | tail -n 25

if [ "${SKIP_CAPTURES:-0}" != 1 ]; then
  echo "== captures"
  cd /tmp
  prof-run -o "$OUT/fusion_bench.sqlite" --force -- fusion_bench; echo "fusion_bench exit $?"
  prof-run -o "$OUT/pytorch_mlp.sqlite" --force -- python3 "$root/stage/share/fuselens/workloads/python/mlp_train.py"; echo "mlp_train exit $?"
  cd "$root"
fi

if [ "${SKIP_OVERHEAD:-0}" != 1 ]; then
  echo "== launch overhead (host us per launch, 20000 launches, median of 5 loops per process)"
  floor="$root/stage/lib/libfuselens_cupti_floor.so"
  : > "$OUT/overhead.jsonl"
  measure() {  # name, command...
    local name=$1; shift
    local line
    line=$("$@" 2>/dev/null | grep '^{' | tail -n 1)
    echo "{\"setting\":\"$name\",\"result\":$line}" | tee -a "$OUT/overhead.jsonl"
  }
  # Interleaved rounds, every setting pinned to the same four cores, so drift and placement
  # affect all settings alike.
  pin="taskset -c 2-5"
  for round in $(seq 1 "${ROUNDS:-7}"); do
    measure none $pin launch_overhead
    measure cupti_kernel_floor env CUDA_INJECTION64_PATH="$floor" $pin launch_overhead
    measure fuselens_cuda $pin prof-run -o /tmp/ov.sqlite --force --trace cuda -- launch_overhead
    measure fuselens_all $pin prof-run -o /tmp/ov_all.sqlite --force --trace all -- launch_overhead
    measure fuselens_default $pin prof-run -o /tmp/ov.sqlite --force -- launch_overhead
  done
  python3 - "$OUT/overhead.jsonl" <<'PY'
import json, statistics, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
        rows[r["setting"]].append(r["result"]["host_us_per_launch_median"])
    except Exception as e:
        print("bad line", line.strip(), e)
for k, v in rows.items():
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    print(f"{k:22s} median {statistics.median(v):6.2f} us/launch  IQR {q[0]:.2f}-{q[2]:.2f}  runs {['%.2f' % x for x in v]}")
PY
  python3 - /tmp/ov.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("default capture: kernels", db.execute("select count(*) from kernel").fetchone()[0],
      "api by domain", db.execute("select domain, count(*) from api_call group by domain").fetchall(),
      "dropped", db.execute("select dropped_records from run").fetchone()[0])
import os; print("bytes per kernel record (whole file / kernels):", os.path.getsize(sys.argv[1]) / max(1, db.execute("select count(*) from kernel").fetchone()[0]))
PY
fi
ls -la "$OUT"
