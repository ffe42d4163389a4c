#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): a fleet of 50
# small real captures for issue 23's fleet example (docs/python.md, "Fleets"): 50 processes under
# prof-run's default trace, step_loop with 20 to 69 steps (a training-like loop with NVTX steps),
# so the fleet has runs of different lengths. -> $R/fleet/run-NN.sqlite (a few MB in all),
# then fleet_sizes.txt. The DuckDB queries run on the development machine
# (python3 -m fuselens parquet), where pandas, pyarrow and duckdb are installed.
set -u
SECTIONS=${SECTIONS:-fleet}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R/fleet"
cd /tmp
for i in $(seq 1 "${FLEET_N:-50}"); do
  n=$(printf '%02d' "$i")
  prof-run -o "$R/fleet/run-$n.sqlite" --force -- step_loop --steps $((19 + i)) > /dev/null 2>&1
  echo "run-$n exit $?"
done | sort | uniq -c | sed -n 1,5p
du -ch "$R"/fleet/*.sqlite | tail -1 | tee "$R/fleet_sizes.txt"
cd "$root"
date -u
