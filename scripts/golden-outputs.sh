#!/usr/bin/env bash
# Writes the outputs of prof-analyze (summary, cct, flags, roofline, compare and every export
# format, each kernel-name kind where it takes one) on every capture in tests/data into DIR, so
# that two builds can be compared byte for byte: run it before and after a change, then
# `diff -r BEFORE AFTER`, or give BEFORE as the third argument to have the script diff and fail
# on any difference. Usage: scripts/golden-outputs.sh PROF_ANALYZE DIR [BEFORE]
set -u
P=$1
OUT=$2
BEFORE=${3:-}
mkdir -p "$OUT"
data=$(dirname "$0")/../tests/data
# A fixed copy folder: messages name the file, and must read the same in both runs.
tmp=${GOLDEN_CAPTURES:-/tmp/fuselens-golden-captures}
rm -rf "$tmp" && mkdir -p "$tmp"
for f in "$data"/*.sqlite; do
  # Copied: the analyses never write, but the copy keeps tests/data safe whatever happens.
  b=$(basename "$f" .sqlite)
  cp "$f" "$tmp/$b.sqlite"
  c=$tmp/$b.sqlite
  run() { local name=$1; shift; "$P" "$@" >"$OUT/$b.$name" 2>&1; echo "rc=$?" >>"$OUT/$b.$name"; }
  for n in demangled short mangled; do
    run summary.$n summary --names $n "$c"
    run summary-json.$n summary --names $n --format json "$c"
    run roofline.$n roofline --names $n "$c"
    run roofline-json.$n roofline --names $n --format json "$c"
    run flags.$n flags --names $n --format json "$c"
    for fmt in json csv chrome-trace html; do
      run export-$fmt.$n export --format $fmt --names $n -o - "$c"
    done
  done
  run flags flags "$c"
  for v in top-down bottom-up flat; do
    for m in gpu_time launches bytes; do run cct.$v.$m cct --view $v --metric $m "$c"; done
  done
  run cct-json cct --format json "$c"
  run cct-phase cct --split-phase "$c"
  run compare-self compare --format json "$c" "$c"
  run compare-ranges compare --format json --baseline '*unfused*' --candidate '*fused*' "$c"
done
cp "$data/fusion_bench.sqlite" "$tmp/a.sqlite"
for n in demangled short mangled; do
  "$P" compare --names $n "$tmp/a.sqlite" "$data/fusion_bench_roofline.sqlite" >"$OUT/compare-two.$n" 2>&1
  "$P" compare --names $n --format json "$data/pytorch_mlp.sqlite" "$data/fmnist_epoch.sqlite" >"$OUT/compare-torch.$n" 2>&1
done
if [ -n "$BEFORE" ]; then
  diff -r "$BEFORE" "$OUT" && echo "byte-identical to $BEFORE"
fi
