#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the real
# captures kept under tests/data (tests/data/README.md): fusion_bench, the PyTorch MLP
# (mlp_train.py) and cct_paths under prof-run's default trace, with a look at their calling
# contexts (was the "captures" section of h100_session.sh; its tests, suite, overhead and torch
# sections are the plans gpu_tests, suite and collector).
set -u
SECTIONS=${SECTIONS:-captures}
. "$PWD/scripts/device/prelude.sh"
mlp="$S/share/fuselens/workloads/python/mlp_train.py"
if has captures; then
  echo "== captures"
  cd /tmp
  prof-run -o "$R/fusion_bench.sqlite" --force -- fusion_bench; echo "fusion_bench exit $?"
  prof-run -o "$R/pytorch_mlp.sqlite" --force -- python3 "$mlp"; echo "mlp_train exit $?"
  prof-run -o "$R/cct_paths.sqlite" --force -- cct_paths; echo "cct_paths exit $?"
  prof-analyze cct "$R/cct_paths.sqlite" --min-percent 1 | head -n 40
  prof-analyze cct "$R/pytorch_mlp.sqlite" --view bottom-up --depth 3 --min-percent 5 | head -n 30
  cd "$root"
fi

