#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): several GPUs,
# ranks and NCCL (issue 25), on workloads/python/ddp_train.py and p2p_copy. SECTIONS (default all;
# the sections needing two GPUs say so and are skipped with a line on a one-GPU machine):
#   single    torchrun --nproc-per-node 1 ddp_train.py under prof-run into $R/ddp_1rank.sqlite
#             (its --json report $R/ddp_1rank.json), with its process_rank rows and kernel counts;
#   ddp       (2 GPUs) prof-run -- torchrun --standalone --nproc-per-node 2 ddp_train.py --steps 30
#             into $R/ddp_2rank.sqlite, the slowed variant (--slow-rank 1 --slow-ms 5) into
#             $R/ddp_2rank_slow.sqlite, and prof-run --per-process of the plain one into
#             $R/perproc/ddp.<pid>.sqlite; each run's --json report beside it (.json); printed
#             sqlite3 checks: process_rank rows, kernels per pid and device, NCCL kernels per pid;
#             `prof-analyze ranks FILE` (text into $R/<name>_ranks.txt, --format json into
#             $R/<name>_ranks.json) on each when that subcommand exists;
#   p2p       gpu_tests --gtest_filter='PeerCopyGpu.*' ($R/p2p_gpu_tests.txt) and p2p_copy under
#             prof-run into $R/p2p_copy.sqlite (report $R/p2p_copy.json), its memcpy rows by kind
#             and device;
#   overhead  ROUNDS (default 4) rounds, the order of the two settings shuffled in each round, one
#             torchrun each (OVERHEAD_NPROC processes: 2 with two GPUs, else 1): ddp_train.py
#             --steps 60 --warmup 10 --time unprofiled and under prof-run; rank 0's median step
#             time per run into $R/ranks_overhead.jsonl ({"round", "setting", "nproc", "value"}
#             in µs, null when the run failed), every step's time into $R/ranks_overhead_steps/;
#             a summary: per-round ratio profiled / unprofiled, their geometric mean, min and max.
# Runtime: about 5 minutes in all (each torchrun start is ~10 s; NCCL's start-up most of it).
set -u
SECTIONS=${SECTIONS:-"single ddp p2p overhead"}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
py="$S/share/fuselens/workloads/python/ddp_train.py"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if command -v torchrun > /dev/null; then torchrun=(torchrun); else torchrun=(python3 -m torch.distributed.run); fi
say() { echo "[$(date -u +%H:%M:%S)] $*"; }
has_ranks=0
prof-analyze ranks --help > /dev/null 2>&1 && has_ranks=1

# checks FILE: the capture's ranks, kernels per pid and device, NCCL kernels per pid.
checks() {
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def show(title, sql):
    try:
        print(f"  {title}:", db.execute(sql).fetchall())
    except sqlite3.Error as e:
        print(f"  {title}: {e}")
show("process_rank (pid, rank, local_rank, world_size, launcher)",
     "SELECT pid, rank, local_rank, world_size, launcher FROM process_rank ORDER BY rank")
show("kernels per (pid, device)",
     "SELECT pid, device_id, COUNT(*) FROM kernel GROUP BY pid, device_id ORDER BY pid, device_id")
show("nccl kernels per pid",
     "SELECT k.pid, COUNT(*) FROM kernel k JOIN strings s ON s.id = k.short_name_id "
     "WHERE s.value LIKE 'nccl%' GROUP BY k.pid ORDER BY k.pid")
show("step ranges per pid", "SELECT n.pid, COUNT(*) FROM nvtx_range n JOIN strings s ON "
     "s.id = n.text_id WHERE s.value LIKE 'step#%' GROUP BY n.pid ORDER BY n.pid")
show("memcpy per (kind, device)", "SELECT copy_kind, device_id, COUNT(*), SUM(bytes) FROM memcpy "
     "GROUP BY copy_kind, device_id")
PY
}

# ranks NAME FILE: prof-analyze ranks of FILE, text and JSON, into $R/NAME_ranks.*.
ranks() {
  if [ $has_ranks = 0 ]; then echo "  prof-analyze ranks: subcommand absent in this build, skipped"; return; fi
  prof-analyze ranks "$2" > "$R/$1_ranks.txt" 2>&1; echo "  prof-analyze ranks exit $?"
  prof-analyze ranks "$2" --format json > "$R/$1_ranks.json" 2>&1
  head -n 30 "$R/$1_ranks.txt"
}

# profiled NAME NPROC ARGS...: torchrun of ddp_train.py under prof-run into $R/NAME.sqlite.
profiled() {
  local name=$1 nproc=$2
  shift 2
  say "$name: prof-run -- torchrun --nproc-per-node $nproc ddp_train.py $*"
  (cd /tmp && timeout 150 prof-run -o "$R/$name.sqlite" --force -- "${torchrun[@]}" --standalone \
    --nproc-per-node "$nproc" "$py" --json "$R/$name.json" "$@" > "$R/$name.log" 2>&1
   echo "  prof-run exit $?")
  tail -n 3 "$R/$name.log"
  checks "$R/$name.sqlite"
}

if has single; then
  say "== single: one rank on one GPU"
  profiled ddp_1rank 1 --steps 30
  ranks ddp_1rank "$R/ddp_1rank.sqlite"
fi

if has ddp; then
  if [ "$gpus" -lt 2 ]; then
    say "== ddp: skipped, needs 2 GPUs (this machine has $gpus)"
  else
    say "== ddp: two ranks"
    profiled ddp_2rank 2 --steps 30
    ranks ddp_2rank "$R/ddp_2rank.sqlite"
    say "== ddp: rank 1 slowed by 5 ms per step"
    profiled ddp_2rank_slow 2 --steps 30 --slow-rank 1 --slow-ms 5
    ranks ddp_2rank_slow "$R/ddp_2rank_slow.sqlite"
    say "== ddp: --per-process"
    mkdir -p "$R/perproc"
    (cd /tmp && timeout 150 prof-run --per-process -o "$R/perproc/ddp.sqlite" --force -- \
      "${torchrun[@]}" --standalone --nproc-per-node 2 "$py" --steps 30 \
      --json "$R/perproc/ddp.json" > "$R/perproc/ddp.log" 2>&1; echo "  prof-run exit $?")
    tail -n 3 "$R/perproc/ddp.log"
    for f in "$R"/perproc/ddp.*.sqlite; do
      [ -f "$f" ] || { echo "  no per-process capture"; break; }
      echo "  $(basename "$f")"; checks "$f"
      ranks "perproc_$(basename "$f" .sqlite)" "$f"
    done
  fi
fi

if has p2p; then
  say "== p2p: gpu_tests PeerCopyGpu.* and p2p_copy under prof-run"
  (cd /tmp && timeout 120 gpu_tests --gtest_filter='PeerCopyGpu.*' > "$R/p2p_gpu_tests.txt" 2>&1; echo "  gpu_tests exit $?")
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|Failure|Expected|Which is|skipped" \
    "$R/p2p_gpu_tests.txt" | head -n 20
  (cd /tmp && timeout 60 prof-run -o "$R/p2p_copy.sqlite" --force -- p2p_copy --copies 4 \
    --json "$R/p2p_copy.json"; echo "  prof-run p2p_copy exit $?")
  cat "$R/p2p_copy.json" 2>/dev/null
  checks "$R/p2p_copy.sqlite"
fi

if has overhead; then
  nproc=${OVERHEAD_NPROC:-$([ "$gpus" -ge 2 ] && echo 2 || echo 1)}
  rounds=${ROUNDS:-4}
  say "== overhead: $rounds rounds, $nproc process(es), ddp_train.py --steps 60 --warmup 10 --time"
  out="$R/ranks_overhead.jsonl"; : > "$out"
  mkdir -p "$R/ranks_overhead_steps"
  for round in $(seq 1 "$rounds"); do
    for setting in $(printf 'unprofiled\nprofiled\n' | shuf); do
      steps="$R/ranks_overhead_steps/${setting}_$round.json"
      cmd=("${torchrun[@]}" --standalone --nproc-per-node "$nproc" "$py" --steps 60 --warmup 10
           --time --step-times "$steps")
      [ "$setting" = profiled ] && cmd=(prof-run -o /tmp/ranks_ov.sqlite --force -- "${cmd[@]}")
      value=$(cd /tmp && timeout 120 "${cmd[@]}" 2>/dev/null |
        sed -n 's/^median step time: \([0-9.]*\) us.*/\1/p')
      echo "{\"round\":$round,\"setting\":\"$setting\",\"nproc\":$nproc,\"value\":${value:-null}}" >> "$out"
      say "  round $round $setting: ${value:-failed} us"
    done
  done
  python3 - "$out" <<'PY'
import collections, json, math, sys
by_round = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    row = json.loads(line)
    by_round[row["round"]][row["setting"]] = row["value"]
ratios = []
for r in sorted(by_round):
    u, p = by_round[r].get("unprofiled"), by_round[r].get("profiled")
    if u and p:
        ratios.append(p / u)
        print(f"round {r}: unprofiled {u:.1f} us, profiled {p:.1f} us, ratio {p / u:.3f}")
    else:
        print(f"round {r}: incomplete ({by_round[r]})")
if ratios:
    g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"per-step overhead: geometric mean ratio {g:.3f} ({(g - 1) * 100:+.1f} %), "
          f"min {min(ratios):.3f}, max {max(ratios):.3f}, over {len(ratios)} rounds")
else:
    print("per-step overhead: no complete round")
PY
fi
say "== ranks plan done"
