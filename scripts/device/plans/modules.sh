#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the PyTorch
# module view of issue 20 (docs/calling-context.md, "Modules") with real torch. SECTIONS (default
# "view compile cost"):
#   view  prof-run on workloads/python/train_steps.py (the CNN: nn.Sequential "model" of conv /
#         batch-norm / ReLU blocks, and "loss_fn"), module view on (the default) and off; checks
#         that the capture holds fuselens:module ranges, that `prof-analyze modules` shows the
#         CNN's modules (model, model.0 = Conv2d, ...) with forward and backward GPU time and
#         prints the attributed share, that the NVTX summary hides them, that cct links backward
#         work, and that --torch-modules off records none (modules exits 1). Files:
#         modules_cnn.sqlite, modules_cnn_off.sqlite, modules_cnn.txt (table, steady window),
#         modules_cnn_all.txt, modules_cnn.json, modules_cnn.csv, modules_cct.txt, modules_nvtx.txt,
#         modules_check.txt (PASS/FAIL lines), modules_stderr.txt (the workload's stderr: a
#         "fuselens:" line there means a hook failed)
#   compile  a small torch.compile'd model trained under prof-run with TORCH_LOGS=graph_breaks:
#         the module hooks must cause no graph break (modules_compile_log.txt), and the wrapper
#         module's ranges appear (modules_compile.txt)
#   cost  the module view's own cost: mlp_train.py --model cnn --steps 50 --time under prof-run
#         with --torch-modules on and off, ROUNDS (default 5) interleaved rounds; median step
#         times in modules_cost.txt
set -u
SECTIONS=${SECTIONS:-view compile cost}
ROUNDS=${ROUNDS:-5}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
train="$S/share/fuselens/workloads/python/train_steps.py"
mlp="$S/share/fuselens/workloads/python/mlp_train.py"
check() {  # check NAME CONDITION-EXIT-STATUS
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; fi | tee -a "$R/modules_check.txt"
}
if has view; then
  echo "== view"
  : > "$R/modules_check.txt"
  ls "$S/share/fuselens/python" || echo "FAIL no share/fuselens/python in stage/" | tee -a "$R/modules_check.txt"
  cd /tmp
  prof-run -o "$R/modules_cnn.sqlite" --force -- python3 "$train" --steps 20 --warmup 3 \
    2> "$R/modules_stderr.txt"
  check "workload exit 0" $?
  grep -q '^fuselens:' "$R/modules_stderr.txt"; check "no hook failure on stderr" $((1 - $?))
  # Python's sqlite3: the GPU machine has no sqlite3 shell.
  n=$(python3 - "$R/modules_cnn.sqlite" "$R/modules_ranges.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
q = ("FROM nvtx_range r JOIN strings t ON t.id = r.text_id WHERE t.value GLOB 'fuselens:module:*'")
with open(sys.argv[2], "w") as out:
    for value, count in db.execute("SELECT t.value, COUNT(*) " + q + " GROUP BY t.value ORDER BY 2 DESC LIMIT 30"):
        out.write(f"{value}|{count}\n")
print(db.execute("SELECT COUNT(*) " + q).fetchone()[0])
PY
)
  echo "module ranges: $n"; [ "${n:-0}" -gt 0 ]; check "module ranges recorded" $?
  prof-analyze modules "$R/modules_cnn.sqlite" > "$R/modules_cnn.txt"; check "modules (steady) exit 0" $?
  prof-analyze modules "$R/modules_cnn.sqlite" --window all > "$R/modules_cnn_all.txt"
  prof-analyze modules "$R/modules_cnn.sqlite" --format json > "$R/modules_cnn.json"
  prof-analyze modules "$R/modules_cnn.sqlite" --format csv > "$R/modules_cnn.csv"
  cat "$R/modules_cnn.txt"
  grep -q 'Backward GPU time in modules: ' "$R/modules_cnn.txt"; check "attributed share printed" $?
  python3 - "$R/modules_cnn.json" <<'PY' | tee -a "$R/modules_check.txt"
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {r["path"]: r for r in doc["rows"]}
def check(name, ok):
    print(("PASS " if ok else "FAIL ") + name)
check("a root named model", "model" in rows)
conv = rows.get("model.0", {})
check("model.0 (Conv2d) has forward GPU time", conv.get("fwd_incl_gpu_time_ns", 0) > 0)
check("model.0 (Conv2d) has backward GPU time", conv.get("bwd_incl_gpu_time_ns", 0) > 0)
check("model has backward GPU time", rows.get("model", {}).get("bwd_incl_gpu_time_ns", 0) > 0)
share = doc["backward_attributed_share"]
print(f"backward attributed share: {100 * share:.1f} % (goal > 95 %)")
check("backward share > 0", share > 0)
PY
  prof-analyze summary "$R/modules_cnn.sqlite" > "$R/modules_nvtx.txt"
  grep -q 'fuselens:module' "$R/modules_nvtx.txt"; check "summary hides fuselens ranges" $((1 - $?))
  prof-analyze cct "$R/modules_cnn.sqlite" --depth 12 > "$R/modules_cct.txt"
  grep -m1 '^Phases' "$R/modules_cct.txt"
  prof-run -o "$R/modules_cnn_off.sqlite" --force --torch-modules off -- python3 "$train" \
    --steps 5 --warmup 2 > /dev/null
  prof-analyze modules "$R/modules_cnn_off.sqlite" --window all; check "off: modules exits 1" $(($? == 1 ? 0 : 1))
  cd "$root"
fi
if has compile; then
  echo "== compile"
  cd /tmp
  cat > /tmp/modules_compile.py <<'PY'
import torch
from torch import nn
net = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
compiled = torch.compile(net)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(5):
    x = torch.randn(64, 256, device="cuda")
    loss = compiled(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("compiled ok")
PY
  TORCH_LOGS=graph_breaks prof-run -o "$R/modules_compile.sqlite" --force -- python3 /tmp/modules_compile.py \
    > "$R/modules_compile_log.txt" 2>&1
  check "compiled workload exit 0" $?
  grep -qi 'graph break' "$R/modules_compile_log.txt"; check "no graph break" $((1 - $?))
  grep -q '^fuselens:' "$R/modules_compile_log.txt"; check "no hook failure (compile)" $((1 - $?))
  prof-analyze modules "$R/modules_compile.sqlite" --window all > "$R/modules_compile.txt" 2>&1
  cat "$R/modules_compile.txt"
  cd "$root"
fi
if has cost; then
  echo "== cost"
  cd /tmp
  : > "$R/modules_cost.txt"
  for round in $(seq "$ROUNDS"); do
    for mode in on off; do
      t=$(prof-run -o "/tmp/modules_cost_$mode.sqlite" --force --torch-modules "$mode" -- \
        python3 "$mlp" --model cnn --steps 50 --time 2>/dev/null | sed -n 's/^median step time: \([0-9.]*\) us.*/\1/p')
      echo "round $round modules $mode: ${t:-?} us" | tee -a "$R/modules_cost.txt"
    done
  done
  cd "$root"
fi
ls -la "$R" | grep modules_
