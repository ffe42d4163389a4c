#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the GPU tests
# that go through prof-run and the collector (gpu_tests, reliability_gpu_tests), then, with
# SCALE=1, the ten-million-launch capture of plans/scale.sh (its "big" section), for a change to
# prof-run, the collector or the capture's finalization. EXTRA_SECTIONS adds sections of
# plans/collector.sh to the same run.
set -u
root=$PWD
SECTIONS="reliability gpu ${EXTRA_SECTIONS:-}" bash "$root/scripts/device/plans/collector.sh"
if [ -n "${SCALE:-}" ]; then
  SECTIONS=big bash "$root/scripts/device/plans/scale.sh"
fi
