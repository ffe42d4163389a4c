#!/usr/bin/env python3
"""Compares the aggregates of an aggregate-mode capture (docs/aggregate.md) with the statistics
computed from a trace: per kernel (demangled name), the count (exact) and the total GPU time
(within --tolerance, default 1 %); per copy kind and for memsets, count and bytes (exact).

  compare_aggregate.py AGGREGATE.sqlite [TRACE.sqlite] [--tolerance 0.01]

Without TRACE, the trace rows of AGGREGATE itself are used (a run with
FUSELENS_AGGREGATE_KEEP_TRACE=1, which stores every record as a row too: the same run). With
TRACE (a default-mode run of the same workload), the comparison is across two runs: counts must
still match for a deterministic workload; totals differ by the runs' own variation.
Prints one PASS/FAIL line per check and a last line "RESULT PASS|FAIL"; exit status 0 or 1.
Python's sqlite3 only (the GPU machine has no sqlite3 shell)."""
import argparse
import sqlite3
import sys


def aggregates(db):
    kernels = {}
    for name, count, total in db.execute(
            "SELECT s.value, SUM(k.count), SUM(k.total_ns) FROM aggregate_kernel k "
            "JOIN strings s ON s.id = k.demangled_name_id GROUP BY s.value"):
        kernels[name] = (count, total)
    transfers = {}
    for op, kind, count, nbytes in db.execute(
            "SELECT operation, copy_kind, SUM(count), SUM(bytes) FROM aggregate_transfer "
            "GROUP BY operation, copy_kind"):
        transfers[(op, kind if op == 1 else 0)] = (count, nbytes)
    return kernels, transfers


def trace(db):
    kernels = {}
    for name, count, total in db.execute(
            "SELECT s.value, COUNT(*), SUM(k.end_ns - k.start_ns) FROM kernel k "
            "JOIN strings s ON s.id = k.demangled_name_id GROUP BY s.value"):
        kernels[name] = (count, total)
    transfers = {}
    for kind, count, nbytes in db.execute(
            "SELECT copy_kind, COUNT(*), SUM(bytes) FROM memcpy GROUP BY copy_kind"):
        transfers[(1, kind)] = (count, nbytes)
    for count, nbytes in db.execute("SELECT COUNT(*), SUM(bytes) FROM memset"):
        if count:
            transfers[(2, 0)] = (count, nbytes)
    return kernels, transfers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("aggregate")
    parser.add_argument("trace", nargs="?")
    parser.add_argument("--tolerance", type=float, default=0.01)
    args = parser.parse_args()
    agg_db = sqlite3.connect(f"file:{args.aggregate}?mode=ro", uri=True)
    trace_db = sqlite3.connect(f"file:{args.trace or args.aggregate}?mode=ro", uri=True)
    a_kernels, a_transfers = aggregates(agg_db)
    t_kernels, t_transfers = trace(trace_db)
    failed = 0

    def check(ok, line):
        nonlocal failed
        failed += 0 if ok else 1
        print(("PASS " if ok else "FAIL ") + line)

    check(bool(a_kernels), f"aggregate kernels present: {len(a_kernels)} names")
    check(set(a_kernels) == set(t_kernels),
          f"same kernel names ({len(a_kernels)} aggregated, {len(t_kernels)} traced)")
    worst = 0.0
    for name in sorted(set(a_kernels) & set(t_kernels)):
        (ac, at), (tc, tt) = a_kernels[name], t_kernels[name]
        rel = abs(at - tt) / tt if tt else (0.0 if at == 0 else 1.0)
        worst = max(worst, rel)
        check(ac == tc, f"count {name[:80]}: aggregate {ac} trace {tc}")
        check(rel <= args.tolerance,
              f"total {name[:80]}: aggregate {at} ns trace {tt} ns ({100 * rel:.3f} %)")
    for key in sorted(set(a_transfers) | set(t_transfers)):
        a, t = a_transfers.get(key, (0, 0)), t_transfers.get(key, (0, 0))
        what = "memset" if key[0] == 2 else f"memcpy kind {key[1]}"
        check(a == t, f"{what}: aggregate count/bytes {a} trace {t}")
    dropped = [r[0] for r in agg_db.execute("SELECT dropped_records FROM run")]
    print(f"dropped records (aggregate run): {dropped}; worst total difference {100 * worst:.3f} %")
    print("RESULT " + ("PASS" if failed == 0 else f"FAIL ({failed} checks)"))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
