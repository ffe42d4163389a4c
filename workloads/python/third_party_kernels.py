#!/usr/bin/env python3
"""Third-party GPU kernels for comparing FuseLens's counters with Nsight Compute's (issue 22).

Launches, each --iters times inside an NVTX range of its name (every computation on the GPU, default
stream, inputs from a CUDA torch.Generator seeded with 20261127):
  sgemm_fp32     cuBLAS SGEMM, A @ B, 2048^3 FP32, TF32 off (torch.backends.cuda.matmul.allow_tf32 =
                 False, float32 matmul precision "highest")
  hgemm_fp16     cuBLAS FP16 GEMM, A @ B, 2048^3 FP16 (tensor cores, FP32 accumulation: reduced-precision
                 reduction off)
  conv2d_cudnn   cuDNN convolution, F.conv2d, N=32, C=64, 56x56, 64 filters 3x3, padding 1, FP32, TF32 off,
                 cudnn.benchmark off and deterministic on (the same algorithm in every process)
  add            PyTorch elementwise a + b, 16M FP32 (64 MB per tensor)
  gelu           PyTorch elementwise F.gelu(x), 16M FP32
  sum            PyTorch reduction x.sum(), 16M FP32
  softmax        PyTorch softmax over the last dim, 4096x4096 FP32
  inplace_add    acc.add_(b), 16M FP32: an in-place update, so a replay that did not put memory back
                 would change the checksum
  triton_scale_add  a Triton kernel, out = 2 * a + b, 16M FP32, BLOCK 1024, 4 warps (left out with a
                 line on stderr when Triton cannot be imported or compiled)

Before the ranges every op runs once (cuBLAS/cuDNN handles, Triton's compilation), so the profiled
process launches the same kernels in the same order in every run. At the end it prints one line per
op, `checksum OP VALUE` (the sum of the op's last output as float64, printed with 9 significant
digits), for comparing a profiled run's results with an unprofiled one.

Usage: third_party_kernels.py [--iters N] [--only OP[,OP...]]
Exit status 0, 2 on a bad argument or without CUDA.
"""
import argparse
import sys

OPS = ["sgemm_fp32", "hgemm_fp16", "conv2d_cudnn", "add", "gelu", "sum", "softmax", "inplace_add",
       "triton_scale_add"]


def triton_kernel():
    """The Triton kernel, or None (with the reason on stderr) when Triton cannot be used."""
    try:
        import triton
        import triton.language as tl
    except Exception as e:  # noqa: BLE001 - any import failure leaves the op out
        print(f"triton unavailable: {e}", file=sys.stderr)
        return None

    @triton.jit
    def scale_add(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, 2.0 * a + b, mask=mask)

    def run(a, b, out):
        n = a.numel()
        scale_add[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK=1024, num_warps=4)
        return out

    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=3, help="launches of each op inside its range (1..100)")
    p.add_argument("--only", default="", help="comma-separated ops (default: all)")
    a = p.parse_args()
    if not 1 <= a.iters <= 100:
        p.error("--iters must be in 1..100")
    only = [o for o in a.only.split(",") if o] or OPS
    unknown = [o for o in only if o not in OPS]
    if unknown:
        p.error(f"unknown op(s) {unknown} (known: {', '.join(OPS)})")

    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        print("third_party_kernels: no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.set_float32_matmul_precision("highest")
    dev = torch.device("cuda")
    g = torch.Generator(device=dev)
    g.manual_seed(20261127)

    def rand(*shape, dtype=torch.float32):
        return (torch.rand(*shape, generator=g, device=dev, dtype=torch.float32) * 2 - 1).to(dtype)

    n = 16 * 1024 * 1024
    x, y = rand(n), rand(n)
    acc = torch.zeros(n, device=dev)
    A32, B32 = rand(2048, 2048), rand(2048, 2048)
    A16, B16 = rand(2048, 2048, dtype=torch.float16), rand(2048, 2048, dtype=torch.float16)
    img, w = rand(32, 64, 56, 56), rand(64, 64, 3, 3) / 24
    rows = rand(4096, 4096)
    out = torch.empty_like(x)
    scale_add = triton_kernel() if "triton_scale_add" in only else None
    ops = {
        "sgemm_fp32": lambda: A32 @ B32,
        "hgemm_fp16": lambda: A16 @ B16,
        "conv2d_cudnn": lambda: F.conv2d(img, w, padding=1),
        "add": lambda: x + y,
        "gelu": lambda: F.gelu(x),
        "sum": lambda: x.sum(),
        "softmax": lambda: torch.softmax(rows, dim=-1),
        "inplace_add": lambda: acc.add_(y),
        "triton_scale_add": (lambda: scale_add(x, y, out)) if scale_add else None,
    }
    chosen = []
    for name in only:
        fn = ops[name]
        if fn is None:
            continue
        try:
            fn()  # handles, heuristics, compilation: outside the ranges
        except Exception as e:  # noqa: BLE001 - Triton's compiler may be missing on the machine
            if name != "triton_scale_add":
                raise
            print(f"triton unavailable: {e}", file=sys.stderr)
            continue
        chosen.append(name)
    acc.zero_()
    torch.cuda.synchronize()
    last = {}
    for name in chosen:
        torch.cuda.nvtx.range_push(name)
        for _ in range(a.iters):
            last[name] = ops[name]()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    for name in chosen:
        print(f"checksum {name} {last[name].double().sum().item():.9g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
