#!/bin/bash
# A/B of two prof-analyze binaries on the reads of the rows at one and ten million kernels (issue
# 21, docs/measurements/2026-11-27-window-reads-h.md): a wide window, the steps from the rows, a
# default steady window and a summary without stored aggregates. Two rounds, the binaries' order
# reversed in the second, one process per command; outputs left in OUT_DIR to compare with cmp.
#
# Usage: scripts/bench/window_reads_ab.sh BASE NEW BIG10M S1M S1M_NO_AGGREGATES [OUT_DIR]
#   BIG10M: synthetic_capture --kernels 10000000 (no stored steps);
#   S1M: synthetic_capture --kernels 1000000, with --store-aggregates run on it (stored steps);
#   S1M_NO_AGGREGATES: the same capture before --store-aggregates.
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
base=$1 new=$2 big=$3 s1m=$4 rows=$5 out=${6:-$(mktemp -d)}
mkdir -p "$out"
run() { # label binary args...
  local label=$1 bin=$2
  shift 2
  /usr/bin/time -f "$label %e s wall %U s user %M KB" "$bin" "$@" >"$out/out_$label.txt" \
    2>"$out/err_$label.txt" || true
  tail -1 "$out/err_$label.txt"
}
for round in 1 2; do
  order=(base new)
  [ "$round" = 2 ] && order=(new base)
  for which in "${order[@]}"; do
    bin=$base
    [ "$which" = new ] && bin=$new
    run "wide10m_${which}_$round" "$bin" summary "$big" --window time:0-200
    run "steps10m_${which}_$round" "$bin" steps "$big"
    run "steady1m_${which}_$round" "$bin" summary "$s1m"
    run "rows1m_${which}_$round" "$bin" summary "$rows" --window all
  done
done
uptime
echo "outputs in $out"
