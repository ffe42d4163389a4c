#!/usr/bin/env bash
# Runs a long plan on the GPU machine across several `device` calls (each call is limited to
# 10 minutes; the machine and its /tmp stay while calls follow each other within its idle time):
#   scripts/device/bg.sh start PLAN [WAIT_S]  starts `bash PLAN` in its own session (setsid), its
#                                             output in /tmp/bg/log, then waits like `wait`;
#   scripts/device/bg.sh wait WAIT_S          waits until the plan ends or WAIT_S seconds pass,
#                                             then packs /tmp/bg/results into $OUT/results.tar.gz
#                                             and copies the log to $OUT/log.txt.
# The plan writes what should come back under $R (= /tmp/bg/results).
set -u
mkdir -p /tmp/bg/results
verb=${1:-}
case "$verb" in
  start)
    plan=$2; wait_s=${3:-560}
    rm -rf /tmp/bg/done /tmp/bg/results/* /tmp/bg/log
    R=/tmp/bg/results setsid bash -c "bash '$plan' > /tmp/bg/log 2>&1; echo \$? > /tmp/bg/done" \
      < /dev/null > /dev/null 2>&1 &
    ;;
  wait) wait_s=${2:-560} ;;
  *) echo "usage: $0 start PLAN [WAIT_S] | wait WAIT_S" >&2; exit 2 ;;
esac
end=$((SECONDS + wait_s))
while [ ! -f /tmp/bg/done ] && [ $SECONDS -lt $end ]; do sleep 5; done
if [ -f /tmp/bg/done ]; then echo "plan finished, exit $(cat /tmp/bg/done)"; else echo "plan still running"; fi
tar -C /tmp/bg -czf "${OUT:-/tmp}/results.tar.gz" results 2>/dev/null
cp /tmp/bg/log "${OUT:-/tmp}/log.txt" 2>/dev/null
tail -c 6000 /tmp/bg/log
