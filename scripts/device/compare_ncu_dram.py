#!/usr/bin/env python3
"""DRAM bytes of FuseLens's counters against Nsight Compute's, launch by launch, summed per kernel.

Usage: compare_ncu_dram.py CAPTURE.sqlite NCU.csv [NCU.csv ...]
       compare_ncu_dram.py --per-launch CAPTURE.sqlite NCU.csv

--per-launch compares every launch (all kernels both tools profiled, aligned one to one in launch
order; names are checked and mismatches listed): per kernel name the launches whose DRAM bytes
(read + write) and FP32 FLOPs (fadd + fmul + 2 ffma) are within 2 % of ncu's, and the largest
differences; then the totals. ncu must have collected dram__bytes_read.sum, dram__bytes_write.sum
and the three smsp__sass_thread_inst_executed_op_f{add,mul,fma}_pred_on.sum counters.

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


FP32 = {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 1,
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 1,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 2}


def all_launches(path):
    """Every launch with counters, in start order: kernel short name and {metric: value}."""
    db = sqlite3.connect(path)
    rows = db.execute(
        "select k.pid, k.correlation_id, s.value from kernel k join strings s on s.id = k.short_name_id"
        " where exists (select 1 from kernel_metric m where m.pid = k.pid and m.correlation_id = k.correlation_id)"
        " order by k.start_ns").fetchall()
    out = []
    for pid, cid, name in rows:
        values = dict(db.execute("select s.value, m.value from kernel_metric m join strings s on s.id = m.metric_id"
                                 " where m.pid = ? and m.correlation_id = ?", (pid, cid)))
        out.append({"kernel": name, **values})
    return out


def within(a, b, tolerance=0.02):
    return abs(a - b) <= tolerance * abs(b) if b else a == 0


def per_launch(capture, ncu_csv):
    ncu, ours = ncu_launches(ncu_csv), all_launches(capture)
    if len(ncu) != len(ours):
        print(f"{ncu_csv}: {len(ncu)} launches, FuseLens {len(ours)}: cannot align", file=sys.stderr)
        return 1
    renamed = [(i, a["kernel"], b["kernel"]) for i, (a, b) in enumerate(zip(ncu, ours))
               if a["kernel"].split("::")[-1] != b["kernel"] and not a["kernel"].endswith(">")]
    if renamed:
        print(f"{len(renamed)} launches name their kernel differently (first: {renamed[:3]})")
    groups = collections.OrderedDict()
    for n, f in zip(ncu, ours):
        dn = n["dram__bytes_read.sum"] + n["dram__bytes_write.sum"]
        df = f.get("dram__bytes_read.sum", 0) + f.get("dram__bytes_write.sum", 0)
        fn = sum(k * n.get(m, 0) for m, k in FP32.items())
        ff = sum(k * f.get(m, 0) for m, k in FP32.items())
        g = groups.setdefault(f["kernel"], [])
        g.append((df, dn, ff, fn))
    total = dram_ok = flop_ok = 0
    for name, rows in groups.items():
        ok_d = sum(within(df, dn) for df, dn, _, _ in rows)
        ok_f = sum(within(ff, fn) for _, _, ff, fn in rows)
        worst = max(rows, key=lambda r: abs(r[0] / r[1] - 1) if r[1] else 0)
        print(f"  {name[:48]:48s} n={len(rows):3d}  DRAM within 2 %: {ok_d:3d}, worst {pct(worst[0], worst[1])}"
              f" ({worst[0] / 1e6:.3f} vs {worst[1] / 1e6:.3f} MB)  FP32 FLOPs within 2 %: {ok_f:3d}")
        total, dram_ok, flop_ok = total + len(rows), dram_ok + ok_d, flop_ok + ok_f
    print(f"all: {total} launches, DRAM bytes within 2 % of ncu: {dram_ok}, FP32 FLOPs within 2 %: {flop_ok}")
    return 0


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
    if len(sys.argv) == 4 and sys.argv[1] == "--per-launch":
        return per_launch(sys.argv[2], sys.argv[3])
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
