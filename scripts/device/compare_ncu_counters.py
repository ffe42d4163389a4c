#!/usr/bin/env python3
"""FuseLens's counters against Nsight Compute's, launch by launch and metric by metric (issue 22).

Usage: compare_ncu_counters.py CAPTURE.sqlite NCU.csv --out OUT.csv [--label TEXT] [--append]

CAPTURE is a `prof-run --metrics roofline` capture of one process; NCU.csv is `ncu --csv
--print-units base --print-kernel-base function --metrics M` of the same program, M the counters
FuseLens collects (the ones below that ncu was given; `ncu --csv` prints one row per launch and
metric). The two are aligned one to one in launch order (FuseLens: kernel rows with counters by
correlation id; ncu: by its launch ID); a different number of launches is an error (exit 1), a
different kernel name at the same position is reported and the row kept with both names.

OUT.csv (written, or appended to with --append) has one row per launch and compared metric:
  label, kernel, launch_index, metric, kind, fuselens, ncu, ratio, checked
kernel is ncu's function name (FuseLens's after a '|' when they differ), launch_index counts that
kernel's launches from 0, kind is "bytes" (DRAM, L2, L1 bytes) or "flops" (FP thread instructions
and tensor-core operations), ratio = fuselens / ncu (1 when both are 0, "inf" when only ncu's is 0),
checked = 1 unless both values are below the floor (64 KiB for bytes, 0 for flops: counts below a
few sectors per SM are noise, e.g. a reduction's 4-byte result that stays in the L2). Timing
metrics are not compared: ncu locks the clocks to base by default, FuseLens leaves them alone.
Prints per kernel the checked rows within 2 % and the worst ratio; exit 0 when aligned.
"""
import argparse
import collections
import csv
import io
import math
import os
import sqlite3
import sys

BYTES = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum"]
FLOPS = ["smsp__sass_thread_inst_executed_op_" + op + "_pred_on.sum"
         for op in ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma", "hadd", "hmul", "hfma")] + [
    "sm__ops_path_tensor_src_fp16.sum", "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_src_fp8.sum",
    "sm__ops_path_tensor_src_fp64.sum"]
FLOOR = {"bytes": 65536.0, "flops": 0.0}
UNITS = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
         "kibyte": 1024, "mibyte": 1024 ** 2, "gibyte": 1024 ** 3}


def number(text):
    return float(text.replace(",", "")) if text.strip() not in ("", "n/a") else math.nan


def ncu_launches(path):
    """[(kernel, {metric: value in base units})] in ncu's launch order."""
    lines = [line for line in open(path, errors="replace") if line.startswith('"')]
    per = collections.OrderedDict()
    for r in csv.DictReader(io.StringIO("".join(lines))):
        try:
            launch = int(r["ID"])
        except (KeyError, ValueError):
            continue
        d = per.setdefault(launch, (r.get("Kernel Name", "?"), {}))
        scale = UNITS.get(r.get("Metric Unit", "").strip().lower(), 1)
        d[1][r["Metric Name"]] = number(r["Metric Value"]) * scale
    return list(per.values())


def fuselens_launches(path):
    """[(kernel short name, {metric: value})] of the launches with counters, in launch order."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT k.pid, k.correlation_id, s.value FROM kernel k JOIN strings s ON s.id = k.short_name_id"
        " WHERE EXISTS (SELECT 1 FROM kernel_metric m WHERE m.pid = k.pid AND m.correlation_id = k.correlation_id)"
        " ORDER BY k.pid, k.correlation_id").fetchall()
    out = []
    for pid, cid, name in rows:
        values = dict(db.execute(
            "SELECT s.value, m.value FROM kernel_metric m JOIN strings s ON s.id = m.metric_id"
            " WHERE m.pid = ? AND m.correlation_id = ?", (pid, cid)))
        out.append((name, values))
    return out


def bare(name):
    """The bare function name: no return type, namespaces, template arguments or parameters."""
    name = name.split("(")[0].split("<")[0].strip()
    return name.split()[-1].split("::")[-1] if name else "?"


def ratio(f, n):
    if n == 0:
        return 1.0 if f == 0 else math.inf
    return f / n


def compare(capture, ncu_csv, label):
    ncu, ours = ncu_launches(ncu_csv), fuselens_launches(capture)
    if len(ncu) != len(ours):
        print(f"{label}: ncu profiled {len(ncu)} launches, FuseLens {len(ours)}: cannot align", file=sys.stderr)
        return None
    rows, seen = [], collections.Counter()
    for (nname, nvals), (fname, fvals) in zip(ncu, ours):
        nname, fname = bare(nname), bare(fname)
        kernel = nname if nname == fname else f"{nname}|{fname}"
        index = seen[kernel]
        seen[kernel] += 1
        for kind, metrics in (("bytes", BYTES), ("flops", FLOPS)):
            for m in metrics:
                if m not in nvals or m not in fvals or math.isnan(nvals[m]):
                    continue
                f, n = float(fvals[m]), nvals[m]
                checked = int(max(f, n) >= FLOOR[kind]) if FLOOR[kind] else 1
                rows.append({"label": label, "kernel": kernel, "launch_index": index, "metric": m, "kind": kind,
                             "fuselens": f"{f:.6g}", "ncu": f"{n:.6g}", "ratio": f"{ratio(f, n):.6f}",
                             "checked": checked})
    return rows


def summarize(rows):
    by_kernel = collections.OrderedDict()
    for r in rows:
        by_kernel.setdefault(r["kernel"], []).append(r)
    total = ok_total = 0
    for kernel, rs in by_kernel.items():
        checked = [r for r in rs if r["checked"]]
        ok = [r for r in checked if abs(float(r["ratio"]) - 1) <= 0.02]
        worst = max(checked, key=lambda r: abs(float(r["ratio"]) - 1), default=None)
        line = f"  {kernel[:60]:60s} rows {len(checked):4d}, within 2 %: {len(ok):4d}"
        if worst:
            line += f"; worst {worst['metric']} #{worst['launch_index']}: {worst['fuselens']} vs {worst['ncu']}"
        print(line)
        total, ok_total = total + len(checked), ok_total + len(ok)
    print(f"all: {ok_total} of {total} checked rows within 2 % of ncu")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("capture")
    p.add_argument("ncu_csv")
    p.add_argument("--out", required=True)
    p.add_argument("--label", default="")
    p.add_argument("--append", action="store_true")
    a = p.parse_args()
    rows = compare(a.capture, a.ncu_csv, a.label or os.path.basename(a.capture))
    if rows is None:
        return 1
    fields = ["label", "kernel", "launch_index", "metric", "kind", "fuselens", "ncu", "ratio", "checked"]
    append = a.append and os.path.exists(a.out) and os.path.getsize(a.out) > 0
    with open(a.out, "a" if append else "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if not append:
            w.writeheader()
        w.writerows(rows)
    print(f"== {a.label or a.capture}")
    summarize(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
