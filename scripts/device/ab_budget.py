#!/usr/bin/env python3
"""Summarize the in-process A/B settings of plans/budget.sh (names ending in "-ab").

Each such process ran mlp_train.py --ab-block K: blocks of K steps alternately without and with
the profiler (cudaProfilerStart/Stop switching it), and printed its own on/off ratio (the
geometric mean over block pairs of median(on) / median(off), the first 2 steps of each block
left out). This script reads $R/budget.jsonl and $R/steps/ROUND-SETTING.json and prints:

  * per setting: processes, the geometric mean of the per-process ratios as an overhead in %,
    with a 95 % percentile bootstrap interval over processes (10,000 resamples, seed 1);
  * for each setting against `floor-ab`: the difference of the overheads in percentage points,
    paired by round where both ran in it (bootstrap over rounds), the figure issue 20 bounds;
  * for each setting with a "-nomodules" twin (FUSELENS_TORCH_MODULES=0), the difference: the
    PyTorch module view's own cost;
  * the carry-over check: the median step time at each position of an off-block relative to
    that block's median, and the same for on-blocks, pooled over processes. A profiler whose
    on-block work spilled into the following off-block (records reaching its writer late)
    shows as slower first positions of the off-blocks; positions 0-1 are left out of the ratio.

Usage: ab_budget.py RESULTS_DIR   (the $R of the plan)
"""

import json
import math
import random
import statistics
import sys
from pathlib import Path


def bootstrap(values, stat, n=10000, seed=1):
    rng = random.Random(seed)
    out = sorted(stat([rng.choice(values) for _ in values]) for _ in range(n))
    return out[int(0.025 * n)], out[int(0.975 * n) - 1]


def gm_pct(ratios):
    return (math.exp(sum(math.log(r) for r in ratios) / len(ratios)) - 1) * 100


def print_paired(label, a, b):
    """Prints the difference of the overheads of per-round ratios a and b in points, over the
    rounds both have (at least 2), with its bootstrap interval over those rounds."""
    rounds = sorted(set(a) & set(b))
    if len(rounds) < 2:
        return
    pairs = [(a[k], b[k]) for k in rounds]
    diff = lambda ps: gm_pct([x for x, _ in ps]) - gm_pct([y for _, y in ps])  # noqa: E731
    lo, hi = bootstrap(pairs, diff)
    print(f"{label}: {diff(pairs):+.2f} percentage points [{lo:+.2f}, {hi:+.2f}] "
          f"({len(rounds)} rounds, paired by round)")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = Path(sys.argv[1])
    rows = [json.loads(line) for line in (root / "budget.jsonl").read_text().splitlines() if line]
    rows = [r for r in rows if r["setting"].endswith("-ab") and r.get("ab")]
    by_setting = {}
    for r in rows:
        by_setting.setdefault(r["setting"], {})[r["round"]] = r["ab"]
    print("in-process A/B (mlp_train.py --ab-block): overhead of the on-blocks over the off-blocks")
    print(f"{'setting':24} {'n':>3} {'geo. mean':>10} {'95% interval':>18} {'min':>8} {'max':>8}")
    for name, per_round in sorted(by_setting.items()):
        ratios = list(per_round.values())
        lo, hi = bootstrap(ratios, gm_pct)
        print(f"{name:24} {len(ratios):3d} {gm_pct(ratios):+9.2f}% [{lo:+6.2f}, {hi:+6.2f}] "
              f"{(min(ratios) - 1) * 100:+7.2f}% {(max(ratios) - 1) * 100:+7.2f}%")
    floor = by_setting.get("floor-ab", {})
    for name, per_round in sorted(by_setting.items()):
        if name != "floor-ab":
            print_paired(f"{name} minus floor-ab", per_round, floor)
    # the module view's own cost: a setting against its "-nomodules" twin, paired by round
    for name, per_round in sorted(by_setting.items()):
        if not name.endswith("-nomodules-ab"):
            twin = by_setting.get(name.replace("-ab", "-nomodules-ab"), {})
            print_paired(f"{name} minus its -nomodules twin (the module view's own cost)",
                         per_round, twin)
    # carry-over: step time by position in the block, relative to the block's median
    positions = {0: {}, 1: {}}
    for r in rows:
        path = root / "steps" / f"{r['round']}-{r['setting']}.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        wall, on, k = data["wall_us"], data.get("ab_on"), data.get("ab_block")
        if not on or not k:
            continue
        for start in range(0, len(wall) - k + 1, k):
            block = wall[start:start + k]
            mid = statistics.median(block[2:])
            for p, v in enumerate(block):
                positions[on[start]].setdefault((r["setting"], p), []).append(v / mid)
    print("\nstep time at each position of a block / the block's median (median over blocks):")
    for state, label in ((0, "off"), (1, "on")):
        for name in sorted(by_setting):
            cells = [statistics.median(positions[state][(name, p)])
                     for p in range(0, 8) if (name, p) in positions[state]]
            if cells:
                print(f"  {label:3} {name:22} " + " ".join(f"{c:5.3f}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
