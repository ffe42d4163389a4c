#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): issue 22's
# counters in the default mode against Nsight Compute's defaults on third-party kernels
# (workloads/python/third_party_kernels.py: cuBLAS SGEMM 2048³ FP32 and an FP16 GEMM, a cuDNN
# conv2d, PyTorch add/GELU/sum/softmax, an in-place add, a Triton kernel). Builds nothing: stage/
# from scripts/device/stage.sh as it is (its default targets hold what this plan runs: prof-run,
# fuselens_collector, fuselens_exit_shim, fusion_bench, gpu_tests); ncu on the PATH, PyTorch and
# Triton installed. SECTIONS (default "results counters gpu"):
#   appreplay ncu's application replay (one run of the program per pass, nothing restored) with
#             the same counters, beside its kernel replay, both against FuseLens's default capture:
#             $R/ncu_app.csv, $R/ncu_agreement_{default,app}.csv (whose writes ncu's default counts)
#   results   the workload plain, under prof-run --metrics roofline (default: kernel replay, cache
#             control all: the collector's replay) and with --cache-control none: its checksums
#             must be equal (a replay that left memory modified changes inplace_add's):
#             $R/checksums_*.txt, "checksums equal" or the diff
#   counters  the same two prof-run captures ($R/agree_default.sqlite, $R/agree_none.sqlite) and
#             ncu --csv --print-units base --print-kernel-base function --metrics M (M: the counter
#             names the default capture holds), once with ncu's defaults (kernel replay, cache
#             control all, clock control base) and once with --cache-control none;
#             scripts/device/compare_ncu_counters.py aligns the launches in order and writes
#             $R/ncu_agreement.csv (label "default": prof-run's defaults vs ncu's; "cache_none":
#             both with --cache-control none). Byte and FLOP counters only (ncu locks the clocks to
#             base, FuseLens does not). The lead commits the "default" and "cache_none" rows as
#             tests/data/ncu_agreement.csv (tests/roofline/NcuAgreementTest.cpp asserts "default").
#   gpu       gpu_tests --gtest_filter='ProfRunGpu.*Replay*:ProfRunGpu.Roofline*' (kernel and
#             application replay: flushed caches read each input once; GEMM FLOPs exact)
# About 4 minutes on an H100 (estimated: not run yet). ITERS (default 3): launches per op.
set -u
SECTIONS=${SECTIONS:-"results counters gpu"}
. "$PWD/scripts/device/prelude.sh"
exec 3>&1
timed() { local t0=$SECONDS; "$@"; local rc=$?; echo "  (exit $rc, $((SECONDS - t0)) s)" >&3; return $rc; }
W=(python3 "$root/workloads/python/third_party_kernels.py" --iters "${ITERS:-3}")
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" 2>&1 | tail -n 1
command -v ncu > /dev/null && ncu --version | tail -n 1
cd /tmp || exit 1
if has results || has counters; then
  echo "== the workload plain, under prof-run's default counters and with --cache-control none"
  timed "${W[@]}" > "$R/checksums_plain.txt" 2> /tmp/agree_plain.err
  tail -n 3 /tmp/agree_plain.err
  timed prof-run -o "$R/agree_default.sqlite" --force --metrics roofline -- "${W[@]}" \
    > "$R/checksums_default.txt" 2> /tmp/agree_default.err
  grep -E "fuselens\] counters" /tmp/agree_default.err | head -n 8
  timed prof-run -o "$R/agree_none.sqlite" --force --metrics roofline --cache-control none -- "${W[@]}" \
    > "$R/checksums_none.txt" 2> /tmp/agree_none.err
  grep -E "fuselens\] counters" /tmp/agree_none.err | head -n 4
  cp /tmp/agree_default.err "$R/agree_default.log"
  for v in default none; do
    if diff <(grep '^checksum' "$R/checksums_plain.txt") <(grep '^checksum' "$R/checksums_$v.txt") > /tmp/agree_diff; then
      echo "checksums equal: plain vs prof-run ($v) ($(grep -c '^checksum' "$R/checksums_plain.txt") ops)"
    else
      echo "CHECKSUMS DIFFER: plain vs prof-run ($v)"; cat /tmp/agree_diff
    fi
  done
fi
if has counters; then
  M=$(python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print(','.join(r[0] for r in db.execute('SELECT DISTINCT s.value FROM kernel_metric m JOIN strings s ON s.id = m.metric_id ORDER BY 1')))" \
      "$R/agree_default.sqlite")
  echo "== ncu (defaults, then --cache-control none) with the counters FuseLens collected: $M"
  timed ncu --csv --print-units base --print-kernel-base function --metrics "$M" "${W[@]}" \
    > "$R/ncu_default.csv" 2> /tmp/ncu_default.err
  tail -n 2 /tmp/ncu_default.err
  timed ncu --cache-control none --csv --print-units base --print-kernel-base function --metrics "$M" "${W[@]}" \
    > "$R/ncu_none.csv" 2> /tmp/ncu_none.err
  tail -n 2 /tmp/ncu_none.err
  for v in default none; do
    if diff <(grep '^checksum' "$R/checksums_plain.txt") <(grep '^checksum' "$R/ncu_$v.csv") > /dev/null; then
      echo "checksums equal: plain vs ncu ($v)"
    else
      echo "checksums differ: plain vs ncu ($v)"
    fi
  done
  cd "$root" || exit 1
  python3 scripts/device/compare_ncu_counters.py "$R/agree_default.sqlite" "$R/ncu_default.csv" \
    --label default --out "$R/ncu_agreement.csv"
  python3 scripts/device/compare_ncu_counters.py "$R/agree_none.sqlite" "$R/ncu_none.csv" \
    --label cache_none --out "$R/ncu_agreement.csv" --append
  # The issue's figure: FuseLens's old default (CUPTI's replay, now --cache-control none) vs ncu's default.
  python3 scripts/device/compare_ncu_counters.py "$R/agree_none.sqlite" "$R/ncu_default.csv" \
    --label none_vs_ncu_default --out "$R/ncu_none_vs_default.csv"
  cd /tmp || exit 1
fi
if has appreplay; then
  # Whose writes: ncu's kernel replay (its default) saves device memory before the first pass and
  # restores it before every other; its application replay runs the program once per pass with
  # nothing to restore. The same counters in both modes against FuseLens's default capture.
  [ -f "$R/agree_default.sqlite" ] || timed prof-run -o "$R/agree_default.sqlite" --force --metrics roofline -- "${W[@]}" \
    > "$R/checksums_default.txt" 2> /tmp/agree_default.err
  M=$(python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); print(','.join(r[0] for r in db.execute('SELECT DISTINCT s.value FROM kernel_metric m JOIN strings s ON s.id = m.metric_id ORDER BY 1')))" \
      "$R/agree_default.sqlite")
  echo "== ncu --replay-mode application with the counters FuseLens collected"
  [ -f "$R/ncu_default.csv" ] || timed ncu --csv --print-units base --print-kernel-base function --metrics "$M" "${W[@]}" \
    > "$R/ncu_default.csv" 2> /tmp/ncu_default.err
  timed ncu --replay-mode application --csv --print-units base --print-kernel-base function --metrics "$M" "${W[@]}" \
    > "$R/ncu_app.csv" 2> /tmp/ncu_app.err
  tail -n 2 /tmp/ncu_app.err
  cd "$root" || exit 1
  for v in default app; do
    python3 scripts/device/compare_ncu_counters.py "$R/agree_default.sqlite" "$R/ncu_$v.csv" \
      --label "ncu_$v" --out "$R/ncu_agreement_$v.csv"
  done
  cd /tmp || exit 1
fi
if has gpu; then
  echo "== gpu_tests: ProfRunGpu.*Replay*:ProfRunGpu.Roofline*"
  (gpu_tests --gtest_filter='ProfRunGpu.*Replay*:ProfRunGpu.Roofline*' > "$R/agree_gpu_tests.txt" 2>&1; echo "exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED|  OK) |FAILED  \]|Failure|Expected|Which is" "$R/agree_gpu_tests.txt" | head -n 40
fi
cd "$root" || exit 1
date -u
