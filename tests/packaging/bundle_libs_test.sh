#!/usr/bin/env bash
# bundle_libs_test.sh PREFIX PROGRAMS MAN: the unpacked bundle's layout and shared libraries.
#   PROGRAMS: comma-separated programs bin/ must hold; MAN: "man" when each must have its page in
#   share/man/man1, else "noman".
# For every ELF file in bin/ and lib/ (our programs, the collector, the exit shim, the copied
# libraries), `ldd` with an empty LD_LIBRARY_PATH must show
#   - no library "not found" but the driver's libcuda (which the bundle must not carry);
#   - for our programs and libraries, every library that lib/ holds resolved to lib/'s copy (the
#     RPATH reaches it, also for the libraries those load: libdw's libelf), never the build host's;
#   - every other library one that a GPU host with a driver and no build tools has: glibc's, the
#     compiler runtime, the Essential compression libraries, the driver's (the policy of
#     cmake/FuseLensBundleLibs.cmake).
# Our programs and libraries carry the RPATH $ORIGIN/../lib and nothing else.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PREFIX PROGRAMS MAN" >&2; exit 2; }
prefix=$(realpath "$1") man=$3
IFS=, read -r -a programs <<< "$2"
fail() { echo "FAIL: $*" >&2; exit 1; }

for p in "${programs[@]}"; do
  [ -x "$prefix/bin/$p" ] || fail "bin/$p missing"
  if [ "$man" = man ]; then
    [ -s "$prefix/share/man/man1/$p.1" ] || fail "share/man/man1/$p.1 missing"
  fi
done
for l in libfuselens_collector.so libfuselens_exit_shim.so; do
  [ -f "$prefix/lib/$l" ] || fail "lib/$l missing"
done
[ -f "$prefix/lib/cmake/FuseLens/FuseLensConfig.cmake" ] || fail "no CMake package in lib/cmake/FuseLens"
[ -f "$prefix/include/fuselens/annotate.h" ] || fail "no include/fuselens/annotate.h"

host_libs='^(ld-linux[^ ]*|lib(c|m|dl|pthread|rt|util|resolv|mvec)\.so[.0-9]*|libstdc\+\+\.so[.0-9]*|libgcc_s\.so[.0-9]*|lib(z|lzma|bz2|zstd)\.so[.0-9]*|libcuda\.so[.0-9]*|libnvidia-[^ ]*)$'
checked=0
for f in "$prefix"/bin/* "$prefix"/lib/*.so*; do
  readelf -h "$f" > /dev/null 2>&1 || continue  # ELF files only
  out=$(env LD_LIBRARY_PATH= ldd "$f" 2>&1) || fail "ldd $f: $out"
  case "$f" in "$prefix"/bin/* | "$prefix"/lib/libfuselens_*) ours=1 ;; *) ours=0 ;; esac
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    base=$(basename "$name")
    if [ "$path" = "not" ]; then
      [[ "$base" =~ ^libcuda\.so ]] || fail "$f: $base not found"
    elif [ -e "$prefix/lib/$base" ]; then
      # Ours must reach lib/'s copy; a copied library is only ever loaded through ours (its own
      # ldd, without our RPATH, shows the build host's).
      if [ "$ours" = 1 ]; then
        [ "$(realpath "$path")" = "$(realpath "$prefix/lib/$base")" ] \
          || fail "$f: $base resolves to $path, not to the bundle's lib/$base"
      fi
    else
      [[ "$base" =~ $host_libs ]] || fail "$f needs $base ($path), which the bundle lacks and a GPU host may too"
    fi
  done <<< "$out"
  checked=$((checked + 1))
done
[ "$checked" -ge 5 ] || fail "only $checked ELF files checked"

for f in "$prefix"/bin/* "$prefix"/lib/libfuselens_*.so; do
  paths=$(readelf -d "$f" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')
  # shellcheck disable=SC2016  # the literal $ORIGIN
  [ "$paths" = '$ORIGIN/../lib' ] || fail "$f: RPATH/RUNPATH '$paths', expected \$ORIGIN/../lib"
done
# What the host's glibc and libstdc++ must provide (docs/install.md states it), for the record.
versions=$(for f in "$prefix"/bin/* "$prefix"/lib/*.so*; do objdump -T "$f" 2> /dev/null; done \
  | grep -oE '\((GLIBC|GLIBCXX)_[0-9.]+\)' | tr -d '()' | sort -u)
echo "needs $(grep '^GLIBC_' <<< "$versions" | sort -V | tail -n 1) and $(grep '^GLIBCXX_' <<< "$versions" | sort -V | tail -n 1)"
echo "PASS: $checked ELF files of the bundle resolve their libraries from lib/ or the host's base"
