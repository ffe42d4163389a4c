#!/usr/bin/env bash
# deb_test.sh CPACK CPACK_CONFIG WORK VERSION MAN PROGRAM...: the viewer's Debian package (cpack -G DEB
# from the built tree into WORK):
#   - one .deb, Package fuselens-viewer, Version VERSION;
#   - it holds usr/bin/<each PROGRAM> (prof-analyze, prof-gui where built), their man pages in
#     usr/share/man/man1 when MAN is "man", peaks.json, and nothing of the GPU side (no prof-run, no
#     collector, no copied libraries in usr/lib);
#   - its Depends names the Debian package of every library each PROGRAM links (NEEDED, resolved
#     on this host and looked up with dpkg -S), so dpkg pulls what the programs load;
#   - unpacked (dpkg-deb -x), its prof-analyze runs and prints VERSION.
set -euo pipefail
[ $# -ge 6 ] || { echo "usage: $0 CPACK CPACK_CONFIG WORK VERSION MAN PROGRAM..." >&2; exit 2; }
cpack=$1 config=$2 work=$3 version=$4 man=$5
shift 5
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work/out"
if ! "$cpack" -G DEB --config "$config" -B "$work/out" > "$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  fail "cpack -G DEB failed"
fi
shopt -s nullglob
debs=("$work"/out/*.deb)
[ ${#debs[@]} -eq 1 ] || fail "expected one .deb in $work/out, found ${#debs[@]}"
deb=${debs[0]}

info=$(dpkg-deb -f "$deb")
field() { sed -n "s/^$1: //p" <<< "$info"; }
[ "$(field Package)" = fuselens-viewer ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), expected $version"
depends=$(field Depends)
[ -n "$depends" ] || fail "no Depends"

files=$(dpkg-deb -c "$deb" | awk '{print $NF}')
checked=0
has() { grep -qx "./usr/$1" <<< "$files" || fail "the package lacks /usr/$1"; }
has share/fuselens/peaks.json
for program in "$@"; do
  name=$(basename "$program")
  has "bin/$name"
  if [ "$man" = man ]; then has "share/man/man1/$name.1"; fi
  # The Debian package of each library the program links (its NEEDED entries, resolved by ldd).
  resolved=$(ldd "$program")
  for soname in $(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [[ "$soname" == ld-linux* ]] && continue  # the dynamic loader: libc6's
    path=$(awk -v s="$soname" '$1 == s && $2 == "=>" {print $3}' <<< "$resolved")
    if [ -z "$path" ] || [ ! -e "$path" ]; then fail "$name: $soname does not resolve here"; fi
    pkg=$(dpkg -S "$(realpath "$path")" 2> /dev/null | head -n 1 | cut -d: -f1) \
      || pkg=$(dpkg -S "$path" 2> /dev/null | head -n 1 | cut -d: -f1) || true
    [ -n "$pkg" ] || continue  # not from a Debian package here (nothing to depend on)
    tr ',' '\n' <<< "$depends" | awk '{print $1}' | grep -qxF -- "$pkg" \
      || fail "$name links $soname ($pkg) but Depends is: $depends"
    checked=$((checked + 1))
  done
done
if grep -E '/(prof-run|prof-ceilings|libfuselens_collector\.so|libfuselens_exit_shim\.so|libcupti[^/]*)$' <<< "$files"; then
  fail "the viewer package holds GPU-side files"
fi
if grep -E '^\./usr/lib/.+\.so' <<< "$files"; then fail "the viewer package carries shared libraries"; fi

mkdir -p "$work/root"
dpkg-deb -x "$deb" "$work/root"
got=$("$work/root/usr/bin/prof-analyze" --version) || fail "the packaged prof-analyze exited $?"
[ "$got" = "$version" ] || fail "the packaged prof-analyze printed '$got'"
[ "$checked" -gt 0 ] || fail "no linked library could be matched to a Debian package"
echo "PASS: $(basename "$deb"): $(wc -l <<< "$files") entries, $checked linked libraries in Depends: $depends"
