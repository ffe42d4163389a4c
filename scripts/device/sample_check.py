#!/usr/bin/env python3
"""Sampled tracing against a full trace (scripts/device/plans/sample.sh; issue 21).

  sample_check.py extract CAPTURE   per kernel name, the count and GPU time of the kernels launched
                                    inside the measured steps, as JSON on stdout
  sample_check.py summarize R       the overhead per setting and the sampled statistics against the
                                    full trace's, from the files plans/sample.sh wrote under R

Steps: a full trace's are its NVTX ranges named like mlp_train.py's ("cnn/step<i>", outermost); a
sampled capture's are the traced rows of its sample_step table (prof-run --sample). A kernel
belongs to a step when the launch call with its correlation id started inside the step (any
thread of the process), as `prof-analyze steps` projects work onto steps (docs/steps.md).
"""
import bisect
import collections
import glob
import json
import math
import os
import random
import re
import sqlite3
import statistics
import sys


def connect(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def step_windows(db):
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    sampling = None
    if "sampling" in tables and db.execute("SELECT COUNT(*) FROM sampling").fetchone()[0]:
        every, seen, lost = db.execute("SELECT every, steps, steps_lost FROM sampling").fetchone()
        per_step = dict(db.execute(
            "SELECT step, SUM(calls) FROM sample_step_api GROUP BY step").fetchall())
        rows = db.execute("SELECT step, start_ns, end_ns, traced FROM sample_step ORDER BY step").fetchall()
        calls = sum(per_step.values())
        traced_calls = sum(per_step.get(s, 0) for s, _, _, t in rows if t)
        sampling = {"every": every, "steps_seen": seen, "steps_lost": lost, "steps": len(rows),
                    "traced_steps": sum(1 for r in rows if r[3]), "calls": calls,
                    "traced_calls": traced_calls,
                    "scale": calls / traced_calls if traced_calls else None}
        windows = [(s, e) for _, s, e, t in rows if t and e is not None]
        return windows, len(rows), sampling
    windows = db.execute(
        "SELECT r.start_ns, r.end_ns FROM nvtx_range r JOIN strings t ON t.id = r.text_id "
        "WHERE t.value GLOB '*/step[0-9]*' AND r.depth = 0 AND r.end_ns IS NOT NULL "
        "ORDER BY r.start_ns").fetchall()
    return windows, len(windows), sampling


def extract(path):
    db = connect(path)
    windows, steps, sampling = step_windows(db)
    starts = [w[0] for w in windows]
    launch = {}
    for pid, corr, start in db.execute(
            "SELECT pid, correlation_id, MIN(start_ns) FROM api_call GROUP BY pid, correlation_id"):
        launch[(pid, corr)] = start
    kernels = collections.defaultdict(lambda: {"count": 0, "total_ns": 0})
    outside = 0
    for pid, corr, name, duration in db.execute(
            "SELECT k.pid, k.correlation_id, s.value, k.end_ns - k.start_ns FROM kernel k "
            "JOIN strings s ON s.id = k.short_name_id"):
        t = launch.get((pid, corr))
        i = bisect.bisect_right(starts, t) - 1 if t is not None else -1
        if i < 0 or t >= windows[i][1]:
            outside += 1
            continue
        kernels[name]["count"] += 1
        kernels[name]["total_ns"] += duration
    dropped = db.execute("SELECT dropped_records FROM run").fetchone()[0]
    print(json.dumps({"capture": path, "steps": steps, "step_windows": len(windows),
                      "kernels_outside_steps": outside, "dropped_records": dropped,
                      "sampling": sampling, "kernels": kernels}))


def geo_interval(ratios, seed=1):
    """Geometric mean and a 95 % bootstrap interval over the given ratios."""
    logs = [math.log(r) for r in ratios]
    mean = math.exp(sum(logs) / len(logs))
    rng = random.Random(seed)
    boots = sorted(math.exp(sum(rng.choice(logs) for _ in logs) / len(logs)) for _ in range(2000))
    return mean, boots[50], boots[1949]


def summarize(root):
    rounds = collections.defaultdict(dict)
    for path in glob.glob(os.path.join(root, "steps", "*.json")):
        m = re.match(r"(\d+)-(\w+)\.json$", os.path.basename(path))
        if not m:
            continue
        wall = json.load(open(path))["wall_us"]
        rounds[int(m.group(1))][m.group(2)] = wall
    print("== whole run: mean step time (every measured step) / none's, per round; geometric mean"
          " [95 % bootstrap over rounds]")
    for setting in ("full", "sample"):
        ratios = [statistics.fmean(r[setting]) / statistics.fmean(r["none"])
                  for r in rounds.values() if setting in r and "none" in r]
        med = [statistics.median(r[setting]) / statistics.median(r["none"])
               for r in rounds.values() if setting in r and "none" in r]
        if ratios:
            g, lo, hi = geo_interval(ratios)
            gm, lom, him = geo_interval(med)
            goal = "  (goal <= 1.03)" if setting == "sample" else ""
            print(f"{setting:7s} mean {g:.4f} [{lo:.4f}, {hi:.4f}]  median step {gm:.4f} "
                  f"[{lom:.4f}, {him:.4f}]  rounds {len(ratios)}{goal}")
    # Inside the sampled processes: traced steps against the others (the same process).
    every = None
    inside = []
    for r in rounds.values():
        if "sample" not in r:
            continue
        if every is None:
            found = glob.glob(os.path.join(root, "kernels", "*-sample.json"))
            every = (json.load(open(found[0]))["sampling"] or {}).get("every", 10) if found else 10
        wall = r["sample"]
        traced = [w for i, w in enumerate(wall) if i % every == every - 1]
        other = [w for i, w in enumerate(wall) if i % every != every - 1]
        if traced and other:
            inside.append(statistics.median(traced) / statistics.median(other))
    if inside:
        g, lo, hi = geo_interval(inside)
        print(f"sampled processes: traced step / untraced step (medians) {g:.4f} [{lo:.4f}, {hi:.4f}]")

    print("\n== sampled statistics against the full trace (kernels with >= 1 % of the GPU time)")
    pooled = {"full": collections.defaultdict(lambda: [0, 0]),
              "sample": collections.defaultdict(lambda: [0, 0])}
    scaled_counts = collections.defaultdict(float)
    full_steps = sample_steps = 0
    for path in sorted(glob.glob(os.path.join(root, "kernels", "*.json"))):
        m = re.match(r"(\d+)-(\w+)\.json$", os.path.basename(path))
        if not m or m.group(2) not in pooled:
            continue
        doc = json.load(open(path))
        scale = 1.0
        if m.group(2) == "sample":
            s = doc.get("sampling") or {}
            if not s.get("scale"):
                print(f"{path}: no sampling rows or no traced launch calls")
                continue
            scale = s["scale"]
            sample_steps += s["steps"]
        else:
            full_steps += doc["steps"]
        for name, k in doc["kernels"].items():
            pooled[m.group(2)][name][0] += k["count"]
            pooled[m.group(2)][name][1] += k["total_ns"]
            if m.group(2) == "sample":
                scaled_counts[name] += k["count"] * scale
    full, sample = pooled["full"], pooled["sample"]
    total = sum(v[1] for v in full.values())
    if not total or not full_steps or not sample_steps:
        print("no full or sampled captures to compare")
        return
    worst_mean = worst_count = 0.0
    print(f"{'kernel':40s} {'share':>6s} {'mean full ns':>12s} {'mean sampled':>12s} {'diff':>7s} "
          f"{'count/step full':>15s} {'scaled sampled':>14s} {'diff':>7s}")
    for name, (count, ns) in sorted(full.items(), key=lambda kv: -kv[1][1]):
        if ns < 0.01 * total:
            continue
        s_count, s_ns = sample.get(name, (0, 0))
        mean_full = ns / count
        mean_s = s_ns / s_count if s_count else float("nan")
        d_mean = mean_s / mean_full - 1 if s_count else float("inf")
        per_step_full = count / full_steps
        per_step_s = scaled_counts.get(name, 0.0) / sample_steps
        d_count = per_step_s / per_step_full - 1
        worst_mean = max(worst_mean, abs(d_mean))
        worst_count = max(worst_count, abs(d_count))
        print(f"{name[:40]:40s} {100 * ns / total:5.1f}% {mean_full:12.0f} {mean_s:12.0f} "
              f"{100 * d_mean:+6.2f}% {per_step_full:15.3f} {per_step_s:14.3f} {100 * d_count:+6.2f}%")
    verdict = "within" if worst_mean <= 0.02 and worst_count <= 0.02 else "NOT within"
    print(f"worst: mean GPU time {100 * worst_mean:.2f} %, scaled count {100 * worst_count:.2f} %: "
          f"{verdict} 2 % (full: {full_steps} steps, sampled: {sample_steps} steps counted)")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "extract":
        extract(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "summarize":
        summarize(sys.argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
