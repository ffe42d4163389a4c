#!/usr/bin/env python3
"""Summarizes plans/cutlass_swizzle.sh: per swizzle, per dtype, size and L2 state, the CUTLASS fused
kernel's median time and cuBLASLt's epilogue / CUTLASS (percent; >= 95 is the issue's target),
one value per process (round), then the median over rounds.

Usage: cutlass_swizzle.py swizzle_<label>_r<n>.json...
"""
import collections
import json
import re
import statistics
import sys


def main(paths):
    # (swizzle, dtype, size, cold) -> list of (cutlass_us, percent)
    cells = collections.defaultdict(list)
    for path in paths:
        m = re.search(r"swizzle_([\w.-]+)_r(\d+)\.json$", path)
        if not m:
            continue
        swizzle = m.group(1)
        medians = {}
        with open(path) as f:
            for b in json.load(f)["benchmarks"]:
                if b.get("aggregate_name") != "median":
                    continue
                n = re.match(r"gemm_bias_relu_(\w+)/(\w+)/M:(\d+)/N:\d+/K:\d+/cold:(\d)", b["name"])
                if n:
                    medians[(n.group(1), n.group(2), int(n.group(3)), int(n.group(4)))] = b["real_time"]
        for (dtype, variant, size, cold), t in medians.items():
            if variant != "cutlass_fused":
                continue
            lt = medians.get((dtype, "cublaslt_epilogue", size, cold))
            if lt:
                cells[(swizzle, dtype, size, cold)].append((t, 100.0 * lt / t))
    print("setting      dtype size L2   rounds  CUTLASS fused us (median)  cuBLASLt/CUTLASS % (median; per round)")
    for key in sorted(cells):
        swizzle, dtype, size, cold = key
        v = cells[key]
        print(f"{swizzle:12s} {dtype:5s} {size:4d} {'cold' if cold else 'warm'} {len(v):6d}"
              f"  {statistics.median(t for t, _ in v):24.1f}  {statistics.median(p for _, p in v):6.1f}"
              f"  ({', '.join(f'{p:.1f}' for _, p in v)})")


if __name__ == "__main__":
    main(sys.argv[1:])
