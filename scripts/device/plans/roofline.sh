#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried, or $STAGE):
# the roofline proof of docs/BENCHMARKS.md (was roofline_session.sh).
#   ceilings  prof-ceilings: the H100's measured ceilings (compare with ANCHORS.md).
#   run       fusion_bench --quick under prof-run --measure-ceilings --metrics roofline (counters
#             and annotations; kept), the same with other trace sets (exit status and records), and
#             wall-clock times without FuseLens and with the default trace, for the cost.
#   ncu       Nsight Compute on the same workload, counters of every kernel, for the 2 % comparison
#             (--clock-control none: the card's clocks are left alone; caches as CUPTI leaves them,
#             and flushed before every pass, ncu's default).
#   tensor    prof-run --metrics roofline on cuBLASLt GEMMs (prof-ceilings --only tensor --quick):
#             what the tensor-path counters count per FLOP.
#   sass      the FP instructions of each kernel in fusion_bench's SASS (cuobjdump).
#   analyze   prof-analyze roofline against auto, measured and t4 peaks.
# STEPS (comma separated) picks some; default all. Results under $R.
set -u
R=${R:-/tmp/bg/results}
STAGE=${STAGE:-stage}
STEPS=${STEPS:-ceilings,run,ncu,tensor,sass,analyze}
mkdir -p "$R"
root=$PWD
export PATH="$root/$STAGE/bin:$PATH"
export LD_LIBRARY_PATH="$root/$STAGE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f} s')" "$1" "$2"; }
step() { [[ ",$STEPS," == *",$1,"* ]]; }
counts() {
  python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); q=lambda t: db.execute('select count(*) from '+t).fetchone()[0]; print('kernels', q('kernel'), 'kernel_metric', q('kernel_metric'), 'nvtx_mark', q('nvtx_mark'), 'sessions', db.execute('select ranges, unattributed_ranges, status from metric_session').fetchall())" "$1"
}

echo "== device"; date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv

if step ceilings; then
  echo "== prof-ceilings"
  prof-ceilings
fi

cd /tmp
if step run; then
  echo "== fusion_bench --quick: plain, default trace, counters"
  t0=$(now); fusion_bench --quick > /dev/null; t1=$(now); echo "plain fusion_bench --quick: $(elapsed "$t0" "$t1")"
  t0=$(now); prof-run -o /tmp/default.sqlite --force -- fusion_bench --quick > /dev/null; t1=$(now)
  echo "prof-run (default trace): $(elapsed "$t0" "$t1")"
  t0=$(now); prof-run -o /tmp/m.sqlite --force --metrics roofline -- fusion_bench --quick > /dev/null; rc=$?; t1=$(now)
  echo "prof-run --metrics roofline (default trace): exit $rc, $(elapsed "$t0" "$t1")"; counts /tmp/m.sqlite
  prof-run -o "$R/fusion_bench_roofline.sqlite" --force --measure-ceilings --metrics roofline -- fusion_bench --quick
  rc=$?; echo "exit $rc"; counts "$R/fusion_bench_roofline.sqlite"
  if [ "$rc" != 0 ]; then  # fall back to the trace groups seen to work with counters
    prof-run -o "$R/fusion_bench_roofline.sqlite" --force --trace api,nvtx,memory,overhead --measure-ceilings \
      --metrics roofline -- fusion_bench --quick > /dev/null
    echo "fallback exit $?"; counts "$R/fusion_bench_roofline.sqlite"
  fi
fi

if step ncu; then
  echo "== ncu"
  M=smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,gpu__time_duration.sum
  ncu --version | tail -n 1
  ncu --clock-control none --cache-control none --metrics "$M" --csv fusion_bench --quick > "$R/ncu_cache_none.csv" 2> /tmp/ncu1.err
  echo "ncu cache-control none: exit $?"; tail -n 3 /tmp/ncu1.err
  ncu --clock-control none --cache-control all --metrics "$M" --csv fusion_bench --quick > "$R/ncu_cache_all.csv" 2> /tmp/ncu2.err
  echo "ncu cache-control all: exit $?"; tail -n 3 /tmp/ncu2.err
fi

if step tensor; then
  echo "== tensor counters on cuBLASLt GEMMs"
  prof-run -o "$R/tensor_gemm.sqlite" --force --trace cuda,api --metrics roofline -- prof-ceilings --only tensor --quick
  echo "exit $?"
fi

if step sass; then
  echo "== FP instructions in the kernels' SASS (cuobjdump)"
  cuobjdump -sass "$root/$STAGE/bin/fusion_bench" | awk '/Function :/{f=$3} {for(i=1;i<=NF;i++) if($i ~ /^(FFMA|FADD|FMUL|HFMA2|HFMA2\.MMA|HADD2|HMUL2|MUFU)/){split($i,a,"."); c[f" "$i]++}} END{for(k in c) print k, c[k]}' | sort
fi

if step analyze; then
  echo "== prof-analyze roofline"
  cd "$root"
  for peaks in auto measured t4; do
    echo "-- --peaks $peaks"
    prof-analyze roofline "$R/fusion_bench_roofline.sqlite" --peaks "$peaks" | tee "$R/roofline_$peaks.txt"
  done
  prof-analyze roofline "$R/fusion_bench_roofline.sqlite" --peaks measured --format csv > "$R/roofline_measured.csv"
fi
ls -la "$R"
