#!/usr/bin/env python3
"""DRAM bytes of FuseLens's counters against Nsight Compute's, launch by launch, summed per kernel.

Usage: compare_ncu_dram.py CAPTURE.sqlite NCU.csv [NCU.csv ...]

CAPTURE is a `prof-run --metrics roofline` capture; each NCU.csv is `ncu --csv --metrics
dram__bytes_read.sum,dram__bytes_write.sum,...` of the same workload with the same kernel filter
(launches align one to one in launch order: FuseLens's kernels are taken in start order and
restricted to the names ncu profiled). Prints, per kernel name and per size class (launches that
read more or less than 32 MB: streaming versus L2-resident), the bytes FuseLens counted and its
difference from each ncu file for reads, writes and their total.
"""
import collections
import csv
import io
import sqlite3
import sys


def ncu_launches(path):
    lines = [l for l in open(path) if l.startswith('"')]
    per = collections.OrderedDict()
    for r in csv.DictReader(io.StringIO("".join(lines))):
        d = per.setdefault(int(r["ID"]), {"kernel": r["Kernel Name"].split("(")[0].split()[-1]})
        d[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return list(per.values())


def fuselens_launches(path, names):
    db = sqlite3.connect(path)
    metric = dict(db.execute("select value, id from strings where value like 'dram__bytes_%'"))
    rows = db.execute(
        "select k.pid, k.correlation_id, s.value from kernel k join strings s on s.id = k.short_name_id"
        " order by k.start_ns").fetchall()
    out = []
    for pid, cid, name in rows:
        if name not in names:
            continue
        get = lambda m: db.execute("select value from kernel_metric where pid=? and correlation_id=? and metric_id=?",
                                   (pid, cid, metric[m])).fetchone()
        r, w = get("dram__bytes_read.sum"), get("dram__bytes_write.sum")
        out.append({"kernel": name, "r": r[0] if r else 0.0, "w": w[0] if w else 0.0})
    return out


def pct(a, b):
    return f"{100 * (a / b - 1):+.2f} %" if b else "n/a"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    ncu = {p: ncu_launches(p) for p in sys.argv[2:]}
    names = {d["kernel"] for runs in ncu.values() for d in runs}
    ours = fuselens_launches(sys.argv[1], names)
    for p, runs in ncu.items():
        if len(runs) != len(ours) or any(a["kernel"] != b["kernel"] for a, b in zip(runs, ours)):
            print(f"{p}: {len(runs)} launches do not align with FuseLens's {len(ours)}", file=sys.stderr)
            return 1
    for streaming in (True, False):
        print("streaming launches (> 32 MB read)" if streaming else "L2-resident launches (<= 32 MB read)")
        for name in sorted(names):
            idx = [i for i, f in enumerate(ours) if f["kernel"] == name and (f["r"] > 32e6) == streaming]
            if not idx:
                continue
            fr, fw = sum(ours[i]["r"] for i in idx), sum(ours[i]["w"] for i in idx)
            line = f"  {name:18s} n={len(idx):2d}  FuseLens read {fr / 1e6:9.2f} MB, write {fw / 1e6:9.2f} MB"
            for p, runs in ncu.items():
                nr = sum(runs[i]["dram__bytes_read.sum"] for i in idx)
                nw = sum(runs[i]["dram__bytes_write.sum"] for i in idx)
                line += f"\n      vs {p}: read {pct(fr, nr)}, write {pct(fw, nw)}, total {pct(fr + fw, nr + nw)}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
