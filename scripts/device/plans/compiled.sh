#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): torch.compile
# against eager (issue 20, part D). SECTIONS (default "captures compare"):
#   captures  transformer_block.py and cnn_step.py (workloads/python), each eager, compiled
#             (default) and compiled (reduce-overhead), 5 warm-up + STEPS (default 10) steps,
#             captured by prof-run into $R/{transformer,cnn}_{eager,compiled,reduce_overhead}.sqlite
#             (for tests/data); the fuselens:inductor marks of each compiled capture counted and
#             the first three printed; the first compiled run also dumps what Inductor generated
#             (TORCH_LOGS=output_code) into $R/output_code_transformer.txt, so the mark parser can
#             be checked against the real wrapper code
#   compare   prof-analyze compare EAGER COMPILED --by op (and --by module where the eager
#             capture has module ranges) for each pair, table and JSON, into $R/compare_*.txt|json;
#             prof-analyze cct of the compiled transformer capture (top-down, depth 14)
# Marks need fuselens_inductor.install(torch): the merged sitecustomize.py (part A) calls it; when
# the staged one does not, each workload is started through a small launcher that calls it first.
set -u
SECTIONS=${SECTIONS:-captures compare}
STEPS=${STEPS:-10}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
wl="$S/share/fuselens/workloads/python"
[ -f "$wl/transformer_block.py" ] || wl="$root/workloads/python"
pydir="$S/share/fuselens/python"
[ -f "$pydir/fuselens_inductor.py" ] || pydir="$root/tools/prof-run/python"
export PYTHONPATH="$pydir${PYTHONPATH:+:$PYTHONPATH}"
export TORCHINDUCTOR_CACHE_DIR=/tmp/fuselens_inductor_cache
boot=()
if ! grep -qs fuselens_inductor "$pydir/sitecustomize.py"; then
  echo "sitecustomize.py does not install fuselens_inductor: starting the workloads through a launcher"
  boot=(-c 'import runpy, sys, torch, fuselens_inductor; fuselens_inductor.install(torch); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")')
fi
marks() {  # FILE: count and show the torch.compile marks (Python's sqlite3: no sqlite3 shell there)
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = "FROM nvtx_mark m JOIN strings s ON s.id = m.text_id WHERE s.value LIKE 'fuselens:inductor:%'"
print(db.execute("SELECT COUNT(*) " + q).fetchone()[0])
for (value,) in db.execute("SELECT substr(s.value, 1, 400) " + q + " LIMIT 3"):
    print(value)
PY
}
if has captures; then
  echo "== captures"
  rm -rf "$TORCHINDUCTOR_CACHE_DIR"
  cd /tmp
  for w in transformer cnn; do
    script="$wl/transformer_block.py"
    [ $w = cnn ] && script="$wl/cnn_step.py"
    for mode in none default reduce-overhead; do
      name=eager
      [ $mode = default ] && name=compiled
      [ $mode = reduce-overhead ] && name=reduce_overhead
      out="$R/${w}_${name}.sqlite"
      if [ $w = transformer ] && [ $mode = default ]; then
        TORCH_LOGS=output_code prof-run -o "$out" --force -- python3 "${boot[@]}" "$script" \
          --compile $mode --steps "$STEPS" 2> "$R/output_code_transformer.txt"
      else
        prof-run -o "$out" --force -- python3 "${boot[@]}" "$script" --compile $mode --steps "$STEPS"
      fi
      echo "$w $mode exit $? size $(stat -c %s "$out" 2>/dev/null)"
      [ $mode = none ] || marks "$out"
      prof-analyze steps "$out" | head -n 3
    done
  done
  grep -c "async_compile.triton(" "$R/output_code_transformer.txt"
  ls -la "$R"
  cd "$root"
fi
if has compare; then
  echo "== compare"
  for w in transformer cnn; do
    for c in compiled reduce_overhead; do
      e="$R/${w}_eager.sqlite" k="$R/${w}_${c}.sqlite"
      prof-analyze compare "$e" "$k" --by op > "$R/compare_${w}_${c}_op.txt" 2>&1
      echo "$w $c by op exit $?"; head -n 40 "$R/compare_${w}_${c}_op.txt"
      prof-analyze compare "$e" "$k" --by op --format json > "$R/compare_${w}_${c}_op.json" 2>&1
      prof-analyze compare "$e" "$k" --by module > "$R/compare_${w}_${c}_module.txt" 2>&1
      echo "$w $c by module exit $?"; head -n 30 "$R/compare_${w}_${c}_module.txt"
    done
  done
  prof-analyze cct "$R/transformer_compiled.sqlite" --depth 14 > "$R/cct_transformer_compiled.txt" 2>&1
  head -n 60 "$R/cct_transformer_compiled.txt"
fi
