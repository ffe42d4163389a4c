#!/usr/bin/env python3
"""Summarizes a plans/budget.sh run: the CNN step's cost per setting against no profiler.

Usage: step_budget.py SOURCE [SOURCE ...] [--reference none] [--seed 1]

A SOURCE is a plan's results directory or a JSONL file of processes. A directory holds
budget.jsonl (one line per process: setting, round, start, end, value = median step µs),
steps/ROUND-SETTING.json (every step's wall_us, issue_us, cpu_us and threads from mlp_train.py
--step-times) and optionally clocks.csv (nvidia-smi timestamp, SM clock, memory clock,
utilization, power every 200 ms). A JSONL file (docs/measurements/*-cnn-budget-*.jsonl) has the
same lines with each process's step times under "steps". Several sources are pooled, a round
being a round of one source.

Prints, per setting: the median over processes of the per-process median step, its quartiles,
the difference from the reference setting (pooled: ratio of the medians; paired: median of the
per-round ratios; and the geometric mean of the per-round ratios), each with a 95 %
percentile-bootstrap interval (resampling processes, or rounds for the paired figures, 2000
times, fixed seed); then where the spread comes from (for
each setting, the spread of process medians between processes against the spread of 50-step
block medians within a process) and the host's issue time and CPU time per step, the part of the
step a host-side profiler lengthens.
"""

import argparse
import collections
import csv
import datetime
import json
import math
import pathlib
import random
import statistics
import sys


def load(source: pathlib.Path):
    """The processes of one source, each with its step times under "steps" (or None)."""
    if source.is_dir():
        procs = [json.loads(line) for line in (source / "budget.jsonl").read_text().splitlines()]
        for row in procs:
            steps_file = source / "steps" / f"{row['round']}-{row['setting']}.json"
            row["steps"] = json.loads(steps_file.read_text()) if steps_file.exists() else None
    else:
        procs = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    kept = []
    for row in procs:
        if row.get("value") is None:
            print(f"no step time: {source} {row['setting']} round {row['round']}", file=sys.stderr)
            continue
        row["round"] = (str(source), row["round"])
        kept.append(row)
    return kept


def bootstrap(values, statistic, rng, reps=2000):
    """95 % percentile interval of statistic over resamples of values (with replacement)."""
    out = sorted(statistic([rng.choice(values) for _ in values]) for _ in range(reps))
    return out[int(0.025 * reps)], out[int(0.975 * reps) - 1]


def clocks_by_time(results: pathlib.Path):
    path = results / "clocks.csv"
    if not path.exists():
        return []
    samples = []
    for row in csv.reader(path.open()):
        try:
            when = datetime.datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f")
            samples.append((when.replace(tzinfo=datetime.timezone.utc).timestamp(),
                            float(row[1].split()[0])))
        except (ValueError, IndexError):
            continue
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", type=pathlib.Path, nargs="+")
    parser.add_argument("--reference", default="none")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    procs = [p for source in args.sources for p in load(source)]
    by_setting = collections.defaultdict(list)
    for p in procs:
        by_setting[p["setting"]].append(p)
    if args.reference not in by_setting:
        print(f"step_budget.py: no '{args.reference}' processes", file=sys.stderr)
        return 1
    ref_values = [p["value"] for p in by_setting[args.reference]]
    ref_median = statistics.median(ref_values)
    ref_by_round = {p["round"]: p["value"] for p in by_setting[args.reference]}

    print(f"{'setting':20s} {'n':>3s} {'median':>8s} {'IQR':>15s}  {'pooled vs ' + args.reference:>28s}"
          f"  {'paired: median ratio':>28s}  {'geometric mean ratio':>28s}")
    for name, rows in by_setting.items():
        values = [p["value"] for p in rows]
        q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
        line = f"{name:20s} {len(values):3d} {statistics.median(values):8.1f} {q[0]:7.1f}-{q[2]:<7.1f}"
        if name != args.reference:
            pooled = 100 * (statistics.median(values) / ref_median - 1)
            # Resample both groups' processes independently for the pooled ratio's interval.
            reps = sorted(100 * (statistics.median([rng.choice(values) for _ in values]) /
                                 statistics.median([rng.choice(ref_values) for _ in ref_values]) - 1)
                          for _ in range(2000))
            lo, hi = reps[50], reps[1949]
            ratios = [100 * (p["value"] / ref_by_round[p["round"]] - 1)
                      for p in rows if p["round"] in ref_by_round]
            plo, phi = bootstrap(ratios, statistics.median, rng)
            logs = [math.log1p(r / 100) for r in ratios]
            to_pct = lambda x: 100 * math.expm1(x)
            glo, ghi = bootstrap(logs, statistics.mean, rng)
            line += (f"  {pooled:+6.1f} % [{lo:+6.1f}, {hi:+6.1f}]"
                     f"     {statistics.median(ratios):+6.1f} % [{plo:+6.1f}, {phi:+6.1f}]"
                     f"     {to_pct(statistics.mean(logs)):+6.1f} % [{to_pct(glo):+6.1f}, {to_pct(ghi):+6.1f}]")
        print(line)

    print("\nWhere the spread comes from (coefficient of variation, %):")
    print(f"{'setting':20s} {'between processes':>18s} {'within (50-step blocks)':>24s}"
          f" {'issue us':>9s} {'cpu us':>8s} {'issue/wall':>10s}")
    for name, rows in by_setting.items():
        values = [p["value"] for p in rows]
        between = 100 * statistics.pstdev(values) / statistics.mean(values) if len(values) > 1 else 0
        within, issue, cpu, share = [], [], [], []
        for p in rows:
            s = p["steps"]
            if not s:
                continue
            wall = s["wall_us"]
            blocks = [statistics.median(wall[i:i + 50]) for i in range(0, len(wall) - 49, 50)]
            if len(blocks) > 1:
                within.append(100 * statistics.pstdev(blocks) / statistics.mean(blocks))
            issue.append(statistics.median(s["issue_us"]))
            cpu.append(statistics.median(s["cpu_us"]))
            share.append(statistics.median(s["issue_us"]) / statistics.median(wall))
        if within:
            print(f"{name:20s} {between:18.1f} {statistics.median(within):24.1f} "
                  f"{statistics.median(issue):9.1f} {statistics.median(cpu):8.1f} "
                  f"{statistics.median(share):10.2f}")

    print("\nPer step, by thread name (median over processes): CPU µs, voluntary switches"
          " (waits), involuntary switches (preemptions), user-space cycles and instructions"
          " (thousands) where the host counts them:")
    for name, rows in by_setting.items():
        per_name = collections.defaultdict(list)
        for p in rows:
            s = p["steps"]
            if not s or "threads" not in s:
                continue
            steps = len(s["wall_us"])
            totals = collections.defaultdict(lambda: [0.0, 0, 0, None, None])
            for t in s["threads"]:
                total = totals[t["name"]]
                total[0] += t["cpu_s"] * 1e6 / steps
                total[1] += t["voluntary"] / steps
                total[2] += t["involuntary"] / steps
                for i, event in ((3, "cycles"), (4, "instructions")):
                    if t.get(event) is not None:
                        total[i] = (total[i] or 0) + t[event] / steps / 1e3
            for thread_name, total in totals.items():
                per_name[thread_name].append(total)
        parts = []
        for thread_name, totals in sorted(per_name.items(), key=lambda kv: -statistics.median(
                t[0] for t in kv[1])):
            cpu = statistics.median(t[0] for t in totals)
            if cpu < 1 and thread_name != "(main)":
                continue
            part = (f"{thread_name} {cpu:.0f} us {statistics.median(t[1] for t in totals):.1f}v "
                    f"{statistics.median(t[2] for t in totals):.2f}i")
            counted = [t for t in totals if t[3] is not None and t[4] is not None]
            if counted:
                part += (f" {statistics.median(t[3] for t in counted):.0f}k cycles"
                         f" {statistics.median(t[4] for t in counted):.0f}k instr")
            parts.append(part)
        if parts:
            print(f"  {name:20s} " + "; ".join(parts))

    clocks = [c for source in args.sources if source.is_dir() for c in clocks_by_time(source)]
    if clocks:
        medians = []
        for p in procs:
            inside = [c for t, c in clocks if p["start"] <= t <= p["end"]]
            if inside:
                medians.append(statistics.median(inside))
        if medians:
            print(f"\nSM clock while the processes ran (median per process, MHz): "
                  f"{min(medians):.0f}-{max(medians):.0f} over {len(medians)} processes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
