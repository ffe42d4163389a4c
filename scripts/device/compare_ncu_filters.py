#!/usr/bin/env python3
"""Which launches FuseLens's launch filters chose, against Nsight Compute's (issue 22).

Usage: compare_ncu_filters.py PLAIN.sqlite FILTERED.sqlite NCU.csv [--label TEXT] [--out CSV]

PLAIN is a `prof-run` capture of the workload without counters (every kernel row, with its grid),
FILTERED a `prof-run --metrics roofline <filters>` capture of the same workload, NCU.csv the output
of `ncu --csv --print-kernel-base function --metrics gpu__time_duration.sum <same filters>` on it.

A launch is identified by its position among the run's kernel launch calls (the api_call rows of
cudaLaunch*, else of cuLaunch*, distinct correlation ids in order): the same program makes the
same calls in both FuseLens runs. A kernel's correlation id is its runtime launch call's or that
of the driver call inside it (numbered after it, before the next launch call), so its position is
that of the last launch call numbered at or before it. FuseLens's chosen launches (the kernels with counters in FILTERED) are mapped
through their positions to PLAIN's kernel name and grid; ncu's profiled results give name and grid
directly, in launch order. The two sequences of (name, grid) must be equal. Prints both and the
verdict; appends one row per launch to --out (label, index, fuselens, ncu, same). Exit status 0 when
they agree, 1 when not, 2 on unreadable input.
"""
import bisect
import csv
import io
import re
import sqlite3
import sys

LAUNCH_CALLS = ("select distinct a.correlation_id from api_call a join strings n on n.id = a.name_id"
                " where n.value like ? and n.value not like '%HostFunc%' order by a.correlation_id")


def positions(db):
    """A function from a kernel's correlation id to its launch position (None: before any)."""
    calls = []
    for pattern in ("cudaLaunch%", "cuLaunch%"):
        calls = [cid for (cid,) in db.execute(LAUNCH_CALLS, (pattern,))]
        if calls:
            break
    return lambda cid: (bisect.bisect_right(calls, cid) - 1) if calls and cid >= calls[0] else None


def plain_launches(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    pos = positions(db)
    out = {}
    for cid, name, gx, gy, gz in db.execute(
            "select k.correlation_id, s.value, k.grid_x, k.grid_y, k.grid_z from kernel k"
            " join strings s on s.id = k.short_name_id"):
        p = pos(cid)
        if p is not None:
            out[p] = (name, (gx, gy, gz))
    return out


def chosen(path, plain):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    pos = positions(db)
    out = []
    for (cid,) in db.execute("select distinct correlation_id from kernel_metric order by correlation_id"):
        p = pos(cid)
        out.append(plain.get(p, ("(no launch at position %s)" % p, None)))
    return out


def ncu_results(path):
    lines = [l for l in open(path, errors="replace") if l.startswith('"')]
    per = {}
    for r in csv.DictReader(io.StringIO("".join(lines))):
        name = r["Kernel Name"].split("(")[0].split()[-1]
        grid = tuple(int(x) for x in re.findall(r"\d+", r.get("Grid Size", ""))[:3]) or None
        per.setdefault(int(r["ID"]), (name, grid))
    return [per[i] for i in sorted(per)]


def main(argv):
    args, label, out = [], "", None
    it = iter(argv[1:])
    for a in it:
        if a == "--label":
            label = next(it, "")
        elif a == "--out":
            out = next(it, None)
        else:
            args.append(a)
    if len(args) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        plain = plain_launches(args[0])
        ours = chosen(args[1], plain)
        theirs = ncu_results(args[2])
    except (OSError, sqlite3.Error, KeyError, ValueError) as e:
        print(f"compare_ncu_filters: cannot read the inputs: {e}", file=sys.stderr)
        return 2
    rows = []
    for i in range(max(len(ours), len(theirs))):
        a = ours[i] if i < len(ours) else None
        b = theirs[i] if i < len(theirs) else None
        rows.append((label, i, a, b, a == b))
    same = len(ours) == len(theirs) and all(r[4] for r in rows)
    print(f"{label}: FuseLens chose {len(ours)} launches, ncu profiled {len(theirs)}:"
          f" {'SAME launches' if same else 'DIFFERENT'}")
    for _, i, a, b, ok in rows:
        print(f"  {i:3d} {'ok ' if ok else 'XX '} fuselens {a}  ncu {b}")
    if out:
        with open(out, "a", newline="") as f:
            w = csv.writer(f)
            for r in rows:
                w.writerow([r[0], r[1], r[2], r[3], int(r[4])])
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
