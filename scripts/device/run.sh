#!/usr/bin/env bash
# The one entry point on the GPU machine. Run it from the repository root with stage/ carried
# (scripts/device/stage.sh builds stage/ here, with the device preset). A plan is
# scripts/device/plans/NAME.sh; its sections and variables are in its header comment.
#
#   scripts/device/run.sh PLAN...                   runs the plans one after the other, in the
#                                                   foreground; results under $R
#   scripts/device/run.sh --start [--wait S] PLAN...  starts them in their own session (setsid,
#                                                   output in /tmp/bg/log), then waits like --wait
#   scripts/device/run.sh --wait S                  waits until the started plans end or S seconds
#                                                   pass (default 560), then packs /tmp/bg/results
#                                                   into $OUT/results.tar.gz, copies the log to
#                                                   $OUT/log.txt and prints its tail
#   scripts/device/run.sh --list                    the plans and the first line of their header
#
# Each device call is limited to 10 minutes; the machine and its /tmp stay while calls follow each
# other within its idle time, so a long plan is --start-ed in one call and --wait-ed on in the next.
# Plans write what should come back under $R (default /tmp/bg/results); in the foreground R may be
# set to $OUT. Variables (SECTIONS, ROUNDS, ...) pass through the environment:
#   SECTIONS="torch cnn" ROUNDS=8 scripts/device/run.sh --start collector
#
# Plans: gpu_tests (the GPU tests through prof-run), collector (the collector's GPU checks and its
# overhead), replay (counters in application replay vs Nsight Compute), scale (ten million
# launches), budget (the PyTorch step budget), suite (the kernel suite's tests and study runs,
# kernel-argument capture), roofline (ceilings, counters vs ncu, SASS), captures (the real captures
# kept under tests/data), graphs (CUDA graph replays charged to their capture site), ranks (DDP over
# NCCL on one and two GPUs, a slowed rank, peer copies, per-step overhead), cutlass (issue 24: the
# CUTLASS sm90 GEMM-epilogue variants, tests, benchmarks, roofline), cutlass_suite (the combined suite
# run with them), exitpaths (issue 22: _exit, exit_group, exec and a Python worker's os._exit keep
# every kernel through the exit shim), filters (issue 22: the counter launch filters against
# ncu's), ncu_agree (issue 22: the default counters against ncu's defaults on third-party kernels).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
plans_dir="$root/scripts/device/plans"
bg=/tmp/bg

plan_path() {
  local p="$plans_dir/${1%.sh}.sh"
  [ -f "$p" ] || { echo "run.sh: no plan '$1' (scripts/device/run.sh --list)" >&2; return 2; }
  echo "$p"
}

run_plans() {  # PLAN...: each in its own bash, from the repository root; first failure's status
  local rc=0 p
  for name in "$@"; do
    p=$(plan_path "$name") || return 2
    echo "=== plan $name ($(date -u +%H:%M:%S))"
    (cd "$root" && bash "$p") || { r=$?; echo "=== plan $name exit $r"; [ $rc -ne 0 ] || rc=$r; }
  done
  return $rc
}

wait_bg() {  # S: wait for the started plans, then hand back what they wrote
  local end=$((SECONDS + $1))
  while [ ! -f $bg/done ] && [ $SECONDS -lt $end ]; do sleep 5; done
  if [ -f $bg/done ]; then echo "plans finished, exit $(cat $bg/done)"; else echo "plans still running"; fi
  tar -C $bg -czf "${OUT:-/tmp}/results.tar.gz" results 2>/dev/null
  cp $bg/log "${OUT:-/tmp}/log.txt" 2>/dev/null
  tail -c 6000 $bg/log
}

case "${1:-}" in
  ""|-h|--help)
    sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2 ;;
  --list)
    for p in "$plans_dir"/*.sh; do
      printf '%-10s %s\n' "$(basename "$p" .sh)" \
        "$(sed -n '2,3p' "$p" | sed 's/^# //' | tr '\n' ' ' | sed 's/^[^)]*): *//' | cut -c1-88)"
    done ;;
  --wait)
    wait_bg "${2:-560}" ;;
  --start)
    shift
    wait_s=560
    if [ "${1:-}" = --wait ]; then wait_s=$2; shift 2; fi
    [ $# -ge 1 ] || { echo "usage: $0 --start [--wait S] PLAN..." >&2; exit 2; }
    for name in "$@"; do plan_path "$name" > /dev/null || exit 2; done
    mkdir -p $bg/results
    rm -rf $bg/done $bg/results/* $bg/log
    R=$bg/results setsid bash -c "'$0' $* > $bg/log 2>&1; echo \$? > $bg/done" \
      < /dev/null > /dev/null 2>&1 &
    wait_bg "$wait_s" ;;
  *)
    export R=${R:-$bg/results}
    mkdir -p "$R"
    run_plans "$@" ;;
esac
