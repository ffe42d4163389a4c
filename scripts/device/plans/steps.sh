#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the captures of
# issue 19 (steps and windows) kept under tests/data, made with the current collector, and a look
# at their steps. SECTIONS (default captures):
#   captures  train_steps.sqlite (PyTorch CNN training with a real start-up, 65 ProfilerStep#N
#             steps), no_repetition.sqlite (cct_paths: no steps), step_loop.sqlite (a C++ loop of
#             40 NVTX steps "step#i" in an outer range "train", start-up and tail outside) and
#             step_loop_schedule.sqlite (the same under --steps 5:2:3:2: steps 8-10 and 18-20 only)
set -u
SECTIONS=${SECTIONS:-captures}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
train="$S/share/fuselens/workloads/python/train_steps.py"
if has captures; then
  echo "== captures"
  cd /tmp
  prof-run -o "$R/train_steps.sqlite" --force -- python3 "$train" --steps 60; echo "train_steps exit $?"
  prof-run -o "$R/no_repetition.sqlite" --force -- cct_paths > /dev/null; echo "cct_paths exit $?"
  prof-run -o "$R/step_loop.sqlite" --force -- step_loop --steps 40 --json "$R/step_loop.json"
  echo "step_loop exit $?"
  prof-run -o "$R/step_loop_schedule.sqlite" --force --steps 5:2:3:2 -- \
    step_loop --steps 40 --json "$R/step_loop_schedule.json"
  echo "step_loop --steps exit $?"
  for c in train_steps no_repetition step_loop step_loop_schedule; do
    echo "-- $c"
    prof-analyze steps "$R/$c.sqlite" | head -n 3
    prof-analyze steps "$R/$c.sqlite" --auto | head -n 3
    [ "$c" = step_loop ] && prof-analyze steps "$R/$c.sqlite" --step-function train_step | head -n 4
    sqlite3 "$R/$c.sqlite" "SELECT method, note FROM step_detection; SELECT COUNT(*) FROM step;
      SELECT pid, start_ns, end_ns, reason FROM capture_window;" 2>/dev/null | head -n 12
  done
  prof-analyze flags "$R/train_steps.sqlite" --limit 5 | head -n 25
  ls -la "$R"
  cd "$root"
fi
