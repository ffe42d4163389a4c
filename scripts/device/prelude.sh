# shellcheck shell=bash
# Sourced by the plans for scripts/device/run.sh (plans/collector.sh, plans/replay.sh, ...) once they have
# set SECTIONS's default, from the repository root on the GPU machine: the staged tools on PATH
# (stage/ carried), the samplers of samples.sh, `has SECTION`, and the date and device line.
root=$PWD R=${R:-/tmp/bg/results}
S="$root/stage"
export PATH="$S/bin:$PATH" LD_LIBRARY_PATH="$S/lib" FUSELENS_BIN_DIR="$S/bin" PYTHONUNBUFFERED=1
. "$root/scripts/device/samples.sh"
has() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
