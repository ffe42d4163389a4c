#!/usr/bin/env bash
# bundle_pack.sh CPACK CPACK_CONFIG WORK: makes the bundle (cpack -G TGZ) from the built tree into
# WORK/out and unpacks its one archive into the empty prefix WORK/prefix (without the archive's
# top-level folder), as a user does on a GPU host. Fixture of the packaging_bundle_* tests.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 CPACK CPACK_CONFIG WORK" >&2; exit 2; }
cpack=$1 config=$2 work=$3
rm -rf "$work"
mkdir -p "$work/out" "$work/prefix"
if ! "$cpack" -G TGZ --config "$config" -B "$work/out" > "$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  echo "FAIL: cpack -G TGZ failed" >&2
  exit 1
fi
shopt -s nullglob
archives=("$work"/out/*.tar.gz)
[ ${#archives[@]} -eq 1 ] || { echo "FAIL: expected one archive in $work/out, found ${#archives[@]}" >&2; exit 1; }
# One top-level folder, named after the archive.
top=$(tar -tzf "${archives[0]}" | cut -d/ -f1 | sort -u)
[ "$top" = "$(basename "${archives[0]}" .tar.gz)" ] || { echo "FAIL: top-level entries '$top'" >&2; exit 1; }
tar -xzf "${archives[0]}" -C "$work/prefix" --strip-components=1
echo "bundle: ${archives[0]} ($(du -h "${archives[0]}" | cut -f1)), unpacked into $work/prefix"
