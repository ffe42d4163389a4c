#!/usr/bin/env bash
# A plan for scripts/device/run.sh (GPU machine, repository root): the bundle for GPU hosts
# (docs/install.md) on a real GPU host, unpacked into an empty folder and run with no
# LD_LIBRARY_PATH of ours. Builds nothing. Needs the archive in a carried folder: here
#   cmake --build --preset device --target bundle      (or the ci preset)
#   mkdir -p stage-bundle && cp build/device/packages/fuselens-*.tar.gz stage-bundle/
# and carry stage-bundle (BUNDLE=path overrides); the "metrics" section profiles stage/'s
# fusion_bench when stage/ is there, else a PyTorch matmul (the bundle alone fits the carry limit). SECTIONS (default "basics torch metrics ceilings"):
#   basics    --version, prof-analyze summary of the bundled capture, ldd of every ELF file of the
#             bundle on this host ("not found" lines) -> $R/bundle_basics.txt
#   torch     prof-run -- python3 mlp_train.py (PyTorch brings its own CUDA libraries): the capture,
#             its summary, and which CUPTI, collector and elfutils the torch process mapped
#             -> $R/bundle_torch.txt, $R/bundle_torch.sqlite
#   metrics   prof-run --metrics roofline -- fusion_bench --quick (CUPTI's dlopen of the bundled
#             libnvperf_*), prof-analyze roofline -> $R/bundle_metrics.txt
#   ceilings  the bundle's prof-ceilings --quick (its libcudart) -> $R/bundle_ceilings.txt
# About 3 minutes on the H100.
set -u
SECTIONS=${SECTIONS:-basics torch metrics ceilings}
root=$PWD R=${R:-/tmp/bg/results}
mkdir -p "$R"
has() { case " $SECTIONS " in *" $1 "*) return 0;; esac; return 1; }
BUNDLE=${BUNDLE:-$(find "$root/stage-bundle" -maxdepth 1 -name 'fuselens-*.tar.gz' 2>/dev/null | head -n 1)}
[ -f "$BUNDLE" ] || { echo "bundle.sh: no archive (stage-bundle/fuselens-*.tar.gz or BUNDLE)"; exit 2; }
P=/tmp/fuselens-bundle
rm -rf "$P" && mkdir -p "$P" && tar -xzf "$BUNDLE" -C "$P" --strip-components=1
unset LD_LIBRARY_PATH
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "bundle: $BUNDLE -> $P"

if has basics; then
  {
    echo "== versions"; "$P/bin/prof-run" --version; "$P/bin/prof-analyze" --version
    echo "== summary of the bundled capture"
    (cd "$P/share/fuselens/examples" && "$P/bin/prof-analyze" summary fusion_bench.sqlite | head -n 20)
    echo "== ldd: libraries not found on this host (libcuda is the driver's)"
    for f in "$P"/bin/* "$P"/lib/*.so*; do
      ldd "$f" 2>&1 | grep -E "not found" | sed "s|^|$(basename "$f"): |"
    done
    echo "== ldd of the collector"
    ldd "$P/lib/libfuselens_collector.so"
  } > "$R/bundle_basics.txt" 2>&1
  cat "$R/bundle_basics.txt"
fi

if has torch; then
  {
    echo "== prof-run -- python3 mlp_train.py --steps 20"
    (cd /tmp && "$P/bin/prof-run" -o "$R/bundle_torch.sqlite" --force -- \
      python3 "$root/workloads/python/mlp_train.py" --steps 20); echo "exit $?"
    "$P/bin/prof-analyze" summary "$R/bundle_torch.sqlite" | head -n 25
    echo "== libraries the torch process mapped (CUPTI, nvperf, collector, elfutils, unwind, sqlite)"
    (cd /tmp && "$P/bin/prof-run" -o /tmp/bundle_maps.sqlite --force -- python3 -c "
import torch
torch.ones(1, device='cuda').sum().item()
keys = ('cupti', 'nvperf', 'fuselens', 'libdw', 'libelf', 'libunwind', 'sqlite3')
print('\n'.join(sorted({l.split()[-1] for l in open('/proc/self/maps') if any(k in l for k in keys)})))
")
  } > "$R/bundle_torch.txt" 2>&1
  cat "$R/bundle_torch.txt"
fi

if has metrics; then
  {
    if [ -x "$root/stage/bin/fusion_bench" ]; then
      echo "== prof-run --metrics roofline -- fusion_bench --quick (the workload's libcudart from stage/lib)"
      (cd /tmp && LD_LIBRARY_PATH="$root/stage/lib" "$P/bin/prof-run" -o "$R/bundle_metrics.sqlite" --force \
        --metrics roofline -- "$root/stage/bin/fusion_bench" --quick); echo "exit $?"
    else  # no stage/ carried (the bundle alone): a PyTorch matmul, its CUDA libraries PyTorch's own
      echo "== prof-run --metrics roofline -- python3 (torch.mm 1024^3 FP32, 3 launches; no stage/)"
      (cd /tmp && "$P/bin/prof-run" -o "$R/bundle_metrics.sqlite" --force --metrics roofline -- python3 -c "
import torch
a = torch.randn(1024, 1024, device='cuda'); b = torch.randn(1024, 1024, device='cuda')
for _ in range(3): c = a @ b
torch.cuda.synchronize()"); echo "exit $?"
    fi
    "$P/bin/prof-analyze" roofline "$R/bundle_metrics.sqlite" | head -n 30
  } > "$R/bundle_metrics.txt" 2>&1
  cat "$R/bundle_metrics.txt"
fi

if has ceilings; then
  (cd /tmp && "$P/bin/prof-ceilings" --quick) > "$R/bundle_ceilings.txt" 2>&1
  echo "exit $?" >> "$R/bundle_ceilings.txt"
  cat "$R/bundle_ceilings.txt"
fi
