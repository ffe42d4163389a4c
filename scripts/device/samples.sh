# shellcheck shell=bash
# Sourced by the device scripts (prelude.sh for every plan): one measurement per setting and
# round, appended to FILE as a JSON line
# {"setting": NAME, "value": number or null}, then summarized per setting.

# overhead_sample FILE NAME CMD...: launch_overhead's host_us_per_launch_median (µs per launch).
overhead_sample() {
  local file=$1 name=$2 value
  shift 2
  value=$("$@" 2>/dev/null | grep '^{' | tail -n 1 |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["host_us_per_launch_median"])' 2>/dev/null)
  echo "{\"setting\":\"$name\",\"value\":${value:-null}}" >> "$file"
}

# step_sample FILE NAME CMD...: the "median step time: X us" of an mlp_train.py --time run.
step_sample() {
  local file=$1 name=$2 value
  shift 2
  value=$("$@" 2>/dev/null | sed -n 's/^median step time: \([0-9.]*\) us.*/\1/p')
  echo "{\"setting\":\"$name\",\"value\":${value:-null}}" >> "$file"
}

# summarize_samples FILE [REFERENCE]: per setting the median, quartiles and runs, and with a
# reference setting the difference of the medians (absolute and in percent).
summarize_samples() {
  python3 - "$@" <<'PY'
import collections, json, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
        if r["value"] is not None:
            rows[r["setting"]].append(float(r["value"]))
    except Exception as e:
        print("bad line", line.strip(), e)
ref = statistics.median(rows[sys.argv[2]]) if len(sys.argv) > 2 and rows.get(sys.argv[2]) else None
for k, v in rows.items():
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
    m = statistics.median(v)
    diff = f"  vs {sys.argv[2]} {m - ref:+.2f} ({100 * (m / ref - 1):+.1f} %)" if ref else ""
    print(f"{k:28s} median {m:9.2f}  IQR {q[0]:.2f}-{q[2]:.2f}  n={len(v)}{diff}  runs {[round(x, 2) for x in v]}")
PY
}
