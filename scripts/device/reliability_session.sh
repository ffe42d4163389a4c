#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with the staged tree carried ($STAGE, default
# stage/; scripts/device/stage.sh builds it, reliability_gpu_tests and fault_workload included):
# issue #9's faults in the workload, processes, threads, streams, graphs and devices
# (tests/reliability/WorkloadFaultsGpuTest.cpp). Writes to $OUT:
#   reliability_gpu_tests.log   the gtest output (each loss-bound test prints recorded vs launched)
#   reliability_gpu_tests.xml   the same as JUnit XML
#   session.log                 this script's own output (device, exit statuses)
# GTEST_FILTER narrows the tests (default all). Exit status: the test binary's.
set -u
OUT=${OUT:-/tmp/fuselens-out}
STAGE=${STAGE:-stage}
mkdir -p "$OUT"
root=$PWD
export FUSELENS_BIN_DIR="$root/$STAGE/bin"
export LD_LIBRARY_PATH="$root/$STAGE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec > >(tee -a "$OUT/session.log") 2>&1
echo "== device"; date -u
nvidia-smi --query-gpu=index,name,driver_version --format=csv
cd /tmp  # the workloads' default capture names land here, not in the carried tree
"$FUSELENS_BIN_DIR/reliability_gpu_tests" --gtest_filter="${GTEST_FILTER:-*}" \
  --gtest_output="xml:$OUT/reliability_gpu_tests.xml" 2>&1 | tee "$OUT/reliability_gpu_tests.log"
rc=${PIPESTATUS[0]}
echo "== reliability_gpu_tests exit $rc"
exit "$rc"
