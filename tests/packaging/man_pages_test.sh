#!/usr/bin/env bash
# man_pages_test.sh PROGRAM PAGE [PROGRAM PAGE...]: each man page (help2man, cmake/FuseLensManPages.cmake),
# rendered by groff as man(1) would, has a NAME section that names PROGRAM, a SYNOPSIS section, and
# every long option that `PROGRAM --help` lists, and, for a program with subcommands (a
# "Subcommands:" block), every subcommand and every long option of `PROGRAM SUB --help`.
set -euo pipefail
if [ $# -lt 2 ] || [ $(($# % 2)) -ne 0 ]; then
  echo "usage: $0 PROGRAM PAGE [PROGRAM PAGE...]" >&2
  exit 2
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v groff > /dev/null || fail "groff not found (it renders man pages: package groff-base)"

options_of() {  # HELP: the long options defined on its option lines (CLI11's and Qt's layouts)
  grep -E '^ +(-[A-Za-z0-9], ?)?--[A-Za-z]' <<< "$1" | sed -E 's/^ +(-[A-Za-z0-9], ?)?(--[A-Za-z][A-Za-z0-9-]*).*/\2/' | sort -u
}

while [ $# -gt 0 ]; do
  program=$1 page=$2
  shift 2
  name=$(basename "$program")
  [ -s "$page" ] || fail "$page missing or empty"
  # One line per paragraph (a very long line length), no hyphenation: options stay whole.
  text=$(groff -man -Tascii -rLL=4000n -rHY=0 -P-c -P-b -P-o -P-u "$page" 2> /dev/null) \
    || fail "groff cannot render $page"
  grep -qx 'NAME' <<< "$text" || fail "$page: no NAME section"
  grep -qx 'SYNOPSIS' <<< "$text" || fail "$page: no SYNOPSIS section"
  grep -A1 -x 'NAME' <<< "$text" | tail -n 1 | grep -q "^ *$name - " || fail "$page: NAME does not name $name"
  grep -A1 -x 'SYNOPSIS' <<< "$text" | tail -n 1 | grep -q "^ *$name" || fail "$page: SYNOPSIS does not start with $name"

  help=$("$program" --help) || fail "$program --help exited $?"
  helps=("$help")
  block=$(sed -n '/^Subcommands:/,/^[^ ]/p' <<< "$help" | grep -E '^  [A-Za-z0-9]' | awk '{print $1}' || true)
  for sub in $block; do
    grep -qE "^ +$sub\$" <<< "$text" || fail "$page: no section for the subcommand $sub"
    helps+=("$("$program" "$sub" --help)")
  done
  count=0
  for h in "${helps[@]}"; do
    while read -r option; do
      [ -n "$option" ] || continue
      grep -qF -- "$option" <<< "$text" || fail "$page: option $option of $name's help is missing"
      count=$((count + 1))
    done <<< "$(options_of "$h")"
  done
  [ "$count" -gt 0 ] || fail "$name --help lists no long option (cannot check $page)"
  echo "ok: $page ($count options${block:+, subcommands $(echo "$block" | tr '\n' ' ')})"
done
echo "PASS: man pages"
