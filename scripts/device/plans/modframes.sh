#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root, stage/ carried): the module view
# read from the Python frames and autograd's sequence numbers (issue 20's overhead; frames mode,
# docs/calling-context.md, "Modules"). SECTIONS (default "probe captures budget"):
#   probe     checks, in a live PyTorch, the two memory layouts the collector relies on: the first
#             local of a Module._call_impl frame (_PyInterpreterFrame.localsplus, offset 72) is
#             the module (id(self)), and an autograd Node's sequence_nr_ sits at offset 24 (read
#             through grad_fn's shared_ptr) -> $R/modframes_probe.txt
#   captures  cnn_step.py and transformer_block.py eager under prof-run's default (frames mode)
#             -> $R/{cnn,transformer}_eager_frames.sqlite, with prof-analyze modules (table and
#             JSON), cct and compare --by module against the committed compiled captures
#   budget    plans/budget.sh with SETTINGS (default "none floor default default-nomodules
#             default-hooks"), UNTIL_S (default 420)
set -u
SECTIONS=${SECTIONS:-probe captures budget}
. "$PWD/scripts/device/prelude.sh"
mkdir -p "$R"
wl="$S/share/fuselens/workloads/python"
[ -f "$wl/cnn_step.py" ] || wl="$root/workloads/python"
if has probe; then
  echo "== probe"
  python3 - <<'PY' 2>&1 | tee "$R/modframes_probe.txt"
import ctypes, sys, torch
def u64(address):
    return ctypes.c_uint64.from_address(address).value
seen = {}
class M(torch.nn.Module):
    def forward(self, x):
        f = sys._getframe(1)  # forward's caller: _call_impl (or _wrapped_call_impl's callee)
        while f is not None and f.f_code.co_name != "_call_impl":
            f = f.f_back
        interp = u64(id(f) + 24)  # PyFrameObject: ob_refcnt, ob_type, f_back, f_frame
        first = u64(interp + 72)
        cell_type = id(type((lambda: self).__closure__[0]))
        seen["cell"] = u64(first + 8) == cell_type
        seen["localsplus0"] = u64(first + 16) if seen["cell"] else first
        seen["self"] = id(self)
        return x * 2
m = M()
x = torch.ones(3, requires_grad=True)
y = m(x)
print("python", sys.version.split()[0], "torch", torch.__version__)
print("localsplus[0] holds a cell:", seen["cell"])
print("PASS localsplus[0] is self" if seen["localsplus0"] == seen["self"] else
      "FAIL localsplus[0] %x != self %x" % (seen["localsplus0"], seen["self"]))
fn = y.grad_fn
node = u64(id(fn) + 16)  # THPCppFunction: PyObject_HEAD, std::shared_ptr<Node> cdata
print("PASS Node.sequence_nr_ at 24" if u64(node + 24) == fn._sequence_nr() else
      "FAIL Node+24 = %d, _sequence_nr() = %d" % (u64(node + 24), fn._sequence_nr()))
PY
fi
if has captures; then
  echo "== captures (frames mode, the default)"
  cd /tmp
  for w in cnn transformer; do
    script="$wl/transformer_block.py"
    [ $w = cnn ] && script="$wl/cnn_step.py"
    out="$R/${w}_eager_frames.sqlite"
    prof-run -o "$out" --force -- python3 "$script" --compile none --steps "${STEPS:-20}" \
      2> "$R/${w}_frames_stderr.txt"
    echo "$w exit $? size $(stat -c %s "$out" 2>/dev/null)"
    grep '^fuselens' "$R/${w}_frames_stderr.txt"
    prof-analyze modules "$out" > "$R/${w}_frames_modules.txt" 2>&1
    prof-analyze modules "$out" --format json > "$R/${w}_frames_modules.json" 2>&1
    head -n 30 "$R/${w}_frames_modules.txt"
    prof-analyze cct "$out" --depth 14 > "$R/${w}_frames_cct.txt" 2>&1
    grep -m2 -E '^Phases|backward' "$R/${w}_frames_cct.txt"
    if [ -f "$root/tests/data/${w}_compiled.sqlite" ]; then
      prof-analyze compare "$out" "$root/tests/data/${w}_compiled.sqlite" --by module \
        > "$R/${w}_frames_compare.txt" 2>&1
      head -n 20 "$R/${w}_frames_compare.txt"
    fi
  done
  cd "$root"
fi
if has budget; then
  SECTIONS=budget SETTINGS="${SETTINGS:-none floor default default-nomodules default-hooks}" \
    UNTIL_S="${UNTIL_S:-420}" bash "$root/scripts/device/plans/budget.sh"
fi
ls -la "$R"
