#!/usr/bin/env bash
# Installs FuseLens's build and test dependencies from Debian's packages. Idempotent: packages
# already present are left alone. The CUDA toolkit (nvcc, CUPTI, NVTX3, cuBLAS) is expected at
# /usr/local/cuda (or CUDAToolkit_ROOT); it is not a Debian package here.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsqlite3-dev sqlite3
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpng-dev chromium  # export tests: decode the report screenshot; render HTML headless
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libgl-dev fonts-dejavu-core  # prof-gui (Qt 6 Widgets, Charts, Svg)
  xvfb xauth  # GUI tests and screenshots under a virtual X server
  libunwind-dev libdw-dev  # collector: native call stacks (libunwind) and their symbols (elfutils)
  clang libclang-rt-14-dev  # fuzz/: libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer
  dataset-fashion-mnist zlib1g-dev  # workloads/fashion_mnist: the IDX files (gzip) and zlib to read them
  ccache  # compiler cache: rebuilds and parallel worktrees reuse objects (used when found)
  python3
  libre2-dev  # prof-analyze cct --filter: linear-time regular expressions (RE2)
  help2man groff-base  # man pages of the tools from their --help (cmake/FuseLensManPages.cmake), rendered by their test
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[setup] all Debian packages present"
fi

cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ ! -x "$cuda_root/bin/nvcc" ]; then
  echo "[setup] error: no CUDA toolkit at $cuda_root (set CUDAToolkit_ROOT)" >&2
  exit 1
fi
if [ ! -e "$cuda_root/lib64/libcupti.so" ] && [ ! -e "$cuda_root/extras/CUPTI/lib64/libcupti.so" ]; then
  echo "[setup] error: CUPTI not found under $cuda_root" >&2
  exit 1
fi
echo "[setup] CUDA toolkit: $("$cuda_root/bin/nvcc" --version | tail -n 2 | head -n 1)"

# CUTLASS (C++ headers, with CuTe) for the sm90 TMA + warpgroup-MMA variants of the GEMM-epilogue ops
# (kernels/cutlass_gemm). NVIDIA ships them in the `nvidia-cutlass` wheel on PyPI, under
# cutlass_library/source/include; 4.2.0.0 is CUTLASS 4.2, the first release for CUDA 13.0. Only the
# headers are used, so --no-deps skips the wheel's Python dependencies; --break-system-packages lets pip
# write into a Debian-managed Python (PEP 668), a no-op elsewhere. CMake asks `python3` where the package
# lives (cmake/FuseLensCutlass.cmake) or takes -DFUSELENS_CUTLASS_DIR=<.../include>.
cutlass_version=4.2.0.0
if python3 -m pip show nvidia-cutlass 2>/dev/null | grep -x "Version: $cutlass_version" >/dev/null; then
  echo "[setup] nvidia-cutlass $cutlass_version present"
else
  echo "[setup] installing nvidia-cutlass $cutlass_version (pip, headers only)"
  python3 -m pip install -q --no-deps --break-system-packages "nvidia-cutlass==$cutlass_version"
fi

# pins_installed FILE: true when every "name==version" line of the requirements FILE is installed
# in python3 at exactly that version.
pins_installed() {
  python3 - "$1" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
pins = [l.split("#")[0].strip() for l in open(sys.argv[1])]
try:
    sys.exit(0 if all(version(n) == v for n, v in (p.split("==") for p in pins if p)) else 1)
except PackageNotFoundError:
    sys.exit(1)
PY
}

# The Python package (python/fuselens) and its tests: pandas, pyarrow, duckdb, pytest, pinned in
# python/requirements-test.txt, from PyPI into the same python3 (Debian 12 packages neither
# pyarrow nor duckdb). Skipped when every pin is already installed.
py_requirements="$(dirname "$0")/../python/requirements-test.txt"
if pins_installed "$py_requirements"; then
  echo "[setup] Python test packages present ($py_requirements)"
else
  echo "[setup] installing the Python test packages ($py_requirements, pip)"
  python3 -m pip install -q --break-system-packages -r "$py_requirements"
fi

# Holistic Trace Analysis for the Chrome-trace test (tests/python/test_hta_chrome_trace.py): the
# pins of tests/python/requirements-hta.txt, with --no-deps (HTA's metadata pulls jupyterlab, which
# it never imports). Skipped when every pin is already installed.
hta_requirements="$(dirname "$0")/../tests/python/requirements-hta.txt"
if pins_installed "$hta_requirements"; then
  echo "[setup] HTA test packages present ($hta_requirements)"
else
  echo "[setup] installing the HTA test packages ($hta_requirements, pip --no-deps)"
  python3 -m pip install -q --no-deps --break-system-packages -r "$hta_requirements"
fi
