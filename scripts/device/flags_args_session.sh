#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with a staged tree carried ($STAGE, default
# stage-flags/; build it here with scripts/device/stage_targets.sh STAGE BUILD prof-run
# fuselens_collector fusion_bench prof-analyze, then copy libfuselens_collector.so into
# STAGE/lib): records tests/data/fusion_bench_args.sqlite, fusion_bench --quick with kernel
# arguments (--trace +args), and prints what the flags rules say about its chains.
# fusion_bench links cuBLAS (its peer variants): the machine's own libcublas is put on the path.
set -u
OUT=${OUT:-/tmp/fuselens-out}
STAGE=${STAGE:-stage-flags}
mkdir -p "$OUT"
root=$PWD
export LD_LIBRARY_PATH="$root/$STAGE/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cublas=$(find /usr/local /opt -name libcublas.so.13 2>/dev/null | head -1)
[ -n "$cublas" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cublas")"
nvidia-smi -L
cd /tmp
"$root/$STAGE/bin/prof-run" --trace +args -o "$OUT/fusion_bench_args.sqlite" -- \
  "$root/$STAGE/bin/fusion_bench" --quick 2>&1 | tee "$OUT/run.log" | tail -20
python3 -c "import sqlite3,sys; db=sqlite3.connect(sys.argv[1]); q=lambda s: db.execute(s).fetchone(); print('kernels', q('select count(*) from kernel'), 'kernel_arg rows', q('select count(*) from kernel_arg'), 'launches with args', q('select count(distinct correlation_id) from kernel_arg'), 'memory events', q('select count(*) from memory_event'), 'trace', q('select trace from run'))" "$OUT/fusion_bench_args.sqlite"
"$root/$STAGE/bin/prof-analyze" flags "$OUT/fusion_bench_args.sqlite" --rules fusion_chain --limit 0 \
  > "$OUT/flags.txt" 2>&1
grep -E "^ +[0-9]+\.|called from|Output feeds" "$OUT/flags.txt" | cut -c1-300
