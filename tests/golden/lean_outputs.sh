#!/usr/bin/env bash
# The golden outputs (golden_outputs.sh) on the lean trace layout (issue 21): every capture of
# tests/data rewritten by `prof-analyze convert --layout lean`, then every analysis and export of
# golden_outputs.sh compared with the committed tests/golden/outputs.sha256, i.e. with the same
# analyses of the full-layout originals. Runs golden_outputs.sh from a copy whose ../data folder
# holds the lean captures under their original names.
#
#   lean_outputs.sh PROF_ANALYZE
#
# Exit status: 0 every output identical, 1 a conversion failed or an output differs, 2 bad usage.
set -uo pipefail

if [ $# -lt 1 ]; then
  echo "usage: lean_outputs.sh PROF_ANALYZE" >&2
  exit 2
fi
tool=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/fuselens-golden-lean.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/golden" "$work/data"
cp "$here/golden_outputs.sh" "$here/outputs.sha256" "$work/golden/"
for f in "$here"/../data/*.sqlite; do
  name=$(basename "$f")
  if ! "$tool" convert "$f" --layout lean -o "$work/data/$name" >"$work/convert.out" 2>&1; then
    echo "lean_outputs.sh: converting $name failed:" >&2
    cat "$work/convert.out" >&2
    exit 1
  fi
  # The conversion did happen: the capture now has no kernel table (its kernel is a view).
  if ! grep -q "in the lean layout" "$work/convert.out"; then
    echo "lean_outputs.sh: $name: no conversion reported" >&2
    exit 1
  fi
done
bash "$work/golden/golden_outputs.sh" "$tool" check
