#!/usr/bin/env python3
"""DRAM counters of several ncu runs and FuseLens captures of one program, against ncu's first run (issue 22).

Usage: ncu_repeatability.py --ncu RUN1.csv [RUN2.csv ...] --captures CAP.sqlite [...] --out OUT.csv

Every ncu run (`ncu --csv --print-units base --print-kernel-base function --metrics
dram__bytes_read.sum,dram__bytes_write.sum PROGRAM`) and every `prof-run --metrics roofline`
capture of the same program is aligned launch by launch with the first ncu run (in launch order,
as compare_ncu_counters.py does). ncu against itself is the floor under any agreement: what two
runs of the reference differ by on the same launches. OUT.csv: label, kernel, launch_index,
metric, value, reference, difference (bytes), ratio, checked (either value >= 64 KiB). Prints
per label and metric the checked launches within 2 %, within 1 MiB, the largest difference and
the first launch's pair; then per kernel (the issue's "within 2 % per kernel") the median over its
launches of each side, within 2 % or not, with the ncu runs' own spread beside it. Exit 1 when
some input cannot be aligned.
"""
import argparse
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ncu_counters import FLOOR, bare, fuselens_launches, ncu_launches  # noqa: E402

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum"]


def align(label, launches, reference):
    if len(launches) != len(reference):
        print(f"{label}: {len(launches)} launches against {len(reference)} in the reference", file=sys.stderr)
        return None
    rows, seen = [], {}
    for (name, values), (rname, rvalues) in zip(launches, reference):
        kernel = bare(rname)
        index = seen.get(kernel, 0)
        seen[kernel] = index + 1
        for m in METRICS:
            if m not in values or m not in rvalues or math.isnan(rvalues[m]):
                continue
            v, r = float(values[m]), float(rvalues[m])
            rows.append({"label": label, "kernel": kernel if bare(name) == kernel else f"{kernel}|{bare(name)}",
                         "launch_index": index, "metric": m, "value": f"{v:.6g}", "reference": f"{r:.6g}",
                         "difference": f"{v - r:.6g}", "ratio": f"{(v / r) if r else (1.0 if v == 0 else math.inf):.6f}",
                         "checked": int(max(v, r) >= FLOOR["bytes"])})
    return rows


def summarize(label, rows):
    for m in METRICS:
        rs = [r for r in rows if r["metric"] == m and r["checked"]]
        if not rs:
            continue
        pct = sum(abs(float(r["ratio"]) - 1) <= 0.02 for r in rs)
        mib = sum(abs(float(r["difference"])) <= 1024 * 1024 for r in rs)
        big = [r for r in rs if float(r["reference"]) >= 4e6]
        big_pct = sum(abs(float(r["ratio"]) - 1) <= 0.02 for r in big)
        worst = max(rs, key=lambda r: abs(float(r["difference"])))
        first = rs[0]
        print(f"  {label:14s} {m.split('__')[1]:15s} checked {len(rs):3d}: within 2 % {pct:3d}, within 1 MiB {mib:3d};"
              f" of {len(big)} over 4 MB within 2 % {big_pct}; largest difference {float(worst['difference']) / 1e6:+.3f} MB"
              f" ({worst['kernel'][:30]} #{worst['launch_index']}); first launch {float(first['value']) / 1e6:.3f}"
              f" vs {float(first['reference']) / 1e6:.3f} MB")


def per_kernel(label, rows):
    """Per kernel and metric: the medians over its checked launches, and whether they agree within 2 %."""
    groups = {}
    for r in rows:
        if r["checked"]:
            groups.setdefault((r["metric"], r["kernel"]), []).append(r)
    out = []
    for (m, kernel), rs in sorted(groups.items()):
        v = statistics.median(float(r["value"]) for r in rs)
        ref = statistics.median(float(r["reference"]) for r in rs)
        ratio = v / ref if ref else (1.0 if v == 0 else math.inf)
        out.append((m, kernel, len(rs), v, ref, ratio))
    for m in METRICS:
        ks = [k for k in out if k[0] == m]
        if not ks:
            continue
        ok = [k for k in ks if abs(k[5] - 1) <= 0.02]
        off = ", ".join(f"{k[1][:28]} {k[3] / 1e6:.3f} vs {k[4] / 1e6:.3f} MB" for k in ks if abs(k[5] - 1) > 0.02)
        print(f"  {label:14s} {m.split('__')[1]:15s} per kernel (median of launches): {len(ok)} of {len(ks)} within 2 %"
              + (f"; off: {off}" if off else ""))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ncu", nargs="+", required=True)
    p.add_argument("--captures", nargs="*", default=[])
    p.add_argument("--out", required=True)
    a = p.parse_args()
    reference = ncu_launches(a.ncu[0])
    inputs = [(f"ncu_{os.path.splitext(os.path.basename(n))[0]}", ncu_launches(n)) for n in a.ncu[1:]]
    inputs += [(os.path.splitext(os.path.basename(c))[0], fuselens_launches(c)) for c in a.captures]
    fields = ["label", "kernel", "launch_index", "metric", "value", "reference", "difference", "ratio", "checked"]
    status = 0
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        print(f"reference: {a.ncu[0]} ({len(reference)} launches)")
        for label, launches in inputs:
            rows = align(label, launches, reference)
            if rows is None:
                status = 1
                continue
            w.writerows(rows)
            summarize(label, rows)
            per_kernel(label, rows)
    return status


if __name__ == "__main__":
    sys.exit(main())
