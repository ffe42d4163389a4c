#!/usr/bin/env python3
"""Markdown tables of the GEMM + bias + ReLU variants (issue 24) from fusion_bench's output and
fusion_microbench's JSON, in the layout of docs/BENCHMARKS.md.

  cutlass_tables.py --bench FILE [FILE...] [--micro FILE.json]

--bench: fusion_bench outputs (its final table: op, shape, variant, kernels/iter, median_us,
speedup). Several files (rounds) give, per cell, the median over the files, and the spread (min-max)
in a second table line when there are several. --micro: Google Benchmark JSON of fusion_microbench
(aggregates: the median of the repetitions is used), one table per dtype and L2 mode (cold, warm).

Columns: µs per call of unfused, fused (hand-written), cutlass_unfused, cutlass_fused,
cublas_unfused_epilogue (cuBLAS + bias + ReLU), cublaslt_epilogue; then fused/unfused of the
hand-written pair and of the CUTLASS pair (unfused time / fused time), cutlass_fused vs cuBLASLt
(cuBLASLt time / CUTLASS time, i.e. CUTLASS's throughput as a percent of cuBLASLt's; target >= 95 %
at 4096^3 and 8192^3) and cutlass_fused vs the cuBLAS chain (> 1: CUTLASS is faster; target > 1 at
every seed shape). A missing variant (skipped, or not built) is "-". Exit 2 on unreadable input.
"""
import argparse
import json
import re
import statistics
import sys
from collections import defaultdict

VARIANTS = ["unfused", "fused", "cutlass_unfused", "cutlass_fused", "cublas_unfused_epilogue",
            "cublaslt_epilogue"]
HEAD = ["unfused", "fused", "CUTLASS unfused", "CUTLASS fused", "cuBLAS + bias + ReLU",
        "cuBLASLt epilogue", "fused/unfused", "CUTLASS fused/unfused", "CUTLASS fused vs cuBLASLt",
        "CUTLASS fused vs cuBLAS chain"]
SEED_SHAPES = {(64, 128, 256), (128, 256, 256), (1024, 1024, 1024)}  # seed 002's, as M, N, K


def shape_key(m, n, k):
    return (int(m), int(n), int(k))


def shape_label(key):
    m, n, k = key
    if m == n == k and m >= 1024:
        return f"{m}³" + (" (seed 002)" if key in SEED_SHAPES else "")
    return f"{m}×{n}×{k}" + (" (seed 002)" if key in SEED_SHAPES else "")


def parse_bench(path):
    """{(op, shape): {variant: median_us}} from fusion_bench's final table."""
    rows = defaultdict(dict)
    line_re = re.compile(r"^(gemm_bias_relu_(?:fp16|bf16))\s+M(\d+)_N(\d+)_K(\d+)\s+(\S+)\s+(\d+)"
                         r"\s+([0-9.]+)\s+\S+\s*$")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = line_re.match(line)
            if m:
                rows[(m.group(1), shape_key(m.group(2), m.group(3), m.group(4)))][m.group(5)] = \
                    float(m.group(7))
    return rows


def parse_micro(path):
    """{(op, cold, shape): {variant: median_us}} from fusion_microbench's JSON aggregates."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    rows = defaultdict(dict)
    name_re = re.compile(r"^(gemm_bias_relu_(?:fp16|bf16))/([a-z_]+)/M:(\d+)/N:(\d+)/K:(\d+)/"
                         r"cold:(\d)/manual_time")
    for b in doc.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        agg = b.get("aggregate_name")
        if agg not in (None, "median"):
            continue
        m = name_re.match(b.get("run_name", b.get("name", "")))
        if not m:
            continue
        scale = {"us": 1.0, "ms": 1e3, "ns": 1e-3, "s": 1e6}[b.get("time_unit", "us")]
        key = (m.group(1), m.group(6) == "1", shape_key(m.group(3), m.group(4), m.group(5)))
        # A median aggregate wins over a plain run of the same name (without repetitions).
        if agg == "median" or m.group(2) not in rows[key]:
            rows[key][m.group(2)] = b["real_time"] * scale
    return rows


def fmt_us(v):
    if v is None:
        return "-"
    return f"{v:.1f}" if v < 1000 else f"{v:.0f}"


def ratio(num, den, percent=False):
    if num is None or den is None or den <= 0:
        return "-"
    return f"{100.0 * num / den:.1f} %" if percent else f"{num / den:.2f}×"


def table_row(label, cells):
    g = cells.get
    return "| " + " | ".join([
        label, *(fmt_us(g(v)) for v in VARIANTS),
        ratio(g("unfused"), g("fused")), ratio(g("cutlass_unfused"), g("cutlass_fused")),
        ratio(g("cublaslt_epilogue"), g("cutlass_fused"), percent=True),
        ratio(g("cublas_unfused_epilogue"), g("cutlass_fused"))]) + " |"


def print_table(title, rows):
    print(f"\n**{title}** (µs per call)\n")
    print("| M×N×K | " + " | ".join(HEAD) + " |")
    print("|" + "---|" * (len(HEAD) + 1))
    for key in sorted(rows, key=lambda k: (k[0] * k[1] * k[2], k)):
        print(table_row(shape_label(key), rows[key]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", nargs="*", default=[])
    ap.add_argument("--micro")
    args = ap.parse_args()
    try:
        rounds = [parse_bench(p) for p in args.bench]
        micro = parse_micro(args.micro) if args.micro else {}
    except (OSError, ValueError, KeyError) as e:
        print(f"cutlass_tables: {e}", file=sys.stderr)
        return 2
    for op in ("gemm_bias_relu_fp16", "gemm_bias_relu_bf16"):
        merged = defaultdict(lambda: defaultdict(list))
        for r in rounds:
            for (o, shape), cells in r.items():
                if o == op:
                    for v, us in cells.items():
                        merged[shape][v].append(us)
        if merged:
            medians = {s: {v: statistics.median(x) for v, x in c.items()} for s, c in merged.items()}
            n = len(rounds)
            print_table(f"{op}, fusion_bench (median of 50 back-to-back iterations"
                        + (f", median over {n} rounds" if n > 1 else "") + ")", medians)
            if n > 1:
                print("\nspread over the rounds (min–max µs):\n")
                for s in sorted(merged, key=lambda k: (k[0] * k[1] * k[2], k)):
                    parts = [f"{v} {min(x):.1f}–{max(x):.1f}" for v, x in merged[s].items()
                             if v in VARIANTS]
                    print(f"- {shape_label(s)}: " + ", ".join(parts))
        for cold in (True, False):
            rows = {k[2]: c for k, c in micro.items() if k[0] == op and k[1] == cold}
            if rows:
                print_table(f"{op}, fusion_microbench, {'cold' if cold else 'warm'} L2 "
                            "(median of the repetitions)", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
