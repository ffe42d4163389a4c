#!/usr/bin/env bash
# Golden outputs of prof-analyze: runs summary, cct (three views), flags, roofline, ranks, compare and every
# export format, in every output format, on every capture in tests/data, and compares a SHA-256 of
# each output (stdout, stderr and exit status together; export files too) with the committed list
# tests/golden/outputs.sha256. A refactoring that must not change behaviour keeps this list as it is.
#
#   golden_outputs.sh PROF_ANALYZE check           compare with the committed list (ctest runs this)
#   golden_outputs.sh PROF_ANALYZE update          rewrite the committed list (behaviour changed on purpose)
#   golden_outputs.sh PROF_ANALYZE dump DIR        write every output into DIR, to diff two builds
#
# Outputs are made from a copy of tests/data in a temporary folder with relative file names (exports
# too), so no absolute path reaches them; LC_ALL=C and TZ=UTC fix the environment.
# Exit status: 0 all equal (or list written), 1 an output differs (each one named), 2 bad usage.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: golden_outputs.sh PROF_ANALYZE check|update|dump DIR" >&2
  exit 2
fi
tool=$(realpath "$1")
mode=$2
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../data"
list="$here/outputs.sha256"
work=$(mktemp -d "${TMPDIR:-/tmp}/fuselens-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT
case "$mode" in
  check | update) out="$work/out" ;;
  dump)
    [ $# -ge 3 ] || { echo "golden_outputs.sh: dump needs DIR" >&2; exit 2; }
    out=$(realpath -m "$3")
    ;;
  *) echo "golden_outputs.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
mkdir -p "$out" "$work/data"
cp "$data"/*.sqlite "$work/data/"
export LC_ALL=C TZ=UTC NO_COLOR=1

# run NAME ARGS...: prof-analyze ARGS from the copy of tests/data; NAME.out holds stdout, stderr and the status.
run() {
  local name=$1
  shift
  (cd "$work/data" && "$tool" "$@" >"$out/$name.stdout" 2>"$out/$name.stderr"
   echo "exit $?" >"$out/$name.status")
  cat "$out/$name.stdout" "$out/$name.stderr" "$out/$name.status" >"$out/$name.out"
  rm -f "$out/$name.stdout" "$out/$name.stderr" "$out/$name.status"
}

# export_to NAME FORMAT ARGS...: an export written to a file; the file is the output.
export_to() {
  local name=$1 format=$2
  shift 2
  rm -f "$work/data/export.out"
  run "$name" export "$@" --format "$format" -o export.out
  [ -f "$work/data/export.out" ] && mv "$work/data/export.out" "$out/$name.file"
}

captures=()
for f in "$data"/*.sqlite; do captures+=("$(basename "$f")"); done

for cap in "${captures[@]}"; do
  c=${cap%.sqlite}
  for fmt in table csv json; do
    run "$c.summary.$fmt" summary "$cap" --format "$fmt"
    run "$c.flags.$fmt" flags "$cap" --format "$fmt"
    run "$c.roofline.$fmt" roofline "$cap" --format "$fmt"
    run "$c.ranks.$fmt" ranks "$cap" --format "$fmt"
    for view in top-down bottom-up flat; do
      run "$c.cct-$view.$fmt" cct "$cap" --view "$view" --format "$fmt"
    done
  done
  run "$c.summary.short" summary "$cap" --names short
  run "$c.roofline.t4" roofline "$cap" --peaks t4
  for fmt in html json csv chrome-trace; do
    export_to "$c.export.$fmt" "$fmt" "$cap"
  done
done

# compare: NVTX ranges of one capture, and two captures.
for fmt in table csv json; do
  run "compare-ranges.$fmt" compare fusion_bench.sqlite --baseline '*/unfused/*' \
    --candidate '*/fused/*' --format "$fmt"
  run "compare-fmnist.$fmt" compare fmnist_epoch.sqlite --baseline 'fmnist/unfused/*' \
    --candidate 'fmnist/fused/*' --format "$fmt"
  run "compare-two.$fmt" compare fusion_bench_schema_v1.sqlite fusion_bench.sqlite --format "$fmt"
done
run "compare-span.table" compare fusion_bench.sqlite --baseline '*/unfused/*' \
  --candidate '*/fused/*' --time span
# the CI gate over range instances (docs/compare-gate.md): fmnist_epoch's forward, backward and
# update ranges have 199 instances in the steady window, so they get intervals and verdicts.
run "compare-gate.table" compare fmnist_epoch.sqlite fmnist_epoch.sqlite --fail-if-slower 5
run "compare-gate.csv" compare fmnist_epoch.sqlite fmnist_epoch.sqlite --fail-if-slower 5 \
  --time span --confidence 0.9 --format csv
for fmt in html json; do
  export_to "export-ranges.$fmt" "$fmt" fusion_bench.sqlite --baseline '*/unfused/*' \
    --candidate '*/fused/*'
done
for fmt in html json csv chrome-trace; do
  export_to "export-two.$fmt" "$fmt" fusion_bench_schema_v1.sqlite fusion_bench.sqlite
done

(cd "$out" && find . -type f -printf '%P\n' | LC_ALL=C sort | xargs sha256sum) >"$work/now.sha256"

case "$mode" in
  dump) echo "golden_outputs.sh: $(wc -l <"$work/now.sha256") outputs in $out" ;;
  update)
    cp "$work/now.sha256" "$list"
    echo "golden_outputs.sh: wrote $(wc -l <"$list") hashes to $list"
    ;;
  check)
    if diff -u "$list" "$work/now.sha256" >"$work/diff"; then
      echo "golden_outputs.sh: $(wc -l <"$list") outputs identical to tests/golden/outputs.sha256"
    else
      echo "golden_outputs.sh: outputs differ from tests/golden/outputs.sha256:" >&2
      grep -E '^[-+][0-9a-f]' "$work/diff" >&2
      echo "(dump both builds with 'golden_outputs.sh PROF_ANALYZE dump DIR' and diff the folders)" >&2
      exit 1
    fi
    ;;
esac
exit 0
