#!/usr/bin/env python3
"""Two functions of one script launch the same GPU kernels: a FuseLens calling-context workload.

encoder(x) and decoder(x) each apply a Linear layer of the same shape (256 -> 256) and a ReLU, so
their kernels have the same names: only the calling context (the Python function and line that
launched each kernel) tells them apart. A training step runs both, a mean-squared loss, backward
and an SGD step.

Timeline:
  * WARMUP_STEPS (2) steps with plain autograd: backward kernels carry no link to their forward op;
  * STEPS (3) steps inside torch.autograd.profiler.emit_nvtx(): PyTorch names every op in an NVTX
    range with its sequence number ("aten::addmm, seq = N", "AddmmBackward0, seq = N"), which
    links each backward kernel to the forward op that created its autograd node;
  * each step inside the NVTX range "cct_torch/stepI"; torch.cuda.synchronize(), then
    "final loss: <value>" on stdout, exit 0.
Exits 1 with one line on stderr when CUDA is not available.

Capture: prof-run -o cct_torch.sqlite -- python3 cct_torch.py   (tests/data/README.md)
The CPU tests (tests/analyzer/CctTorchCaptureTest.cpp) check the capture against the line numbers
of encoder's and decoder's layer calls below: keep them where they are, or re-capture.
"""

import sys

import torch
from torch import nn

WIDTH = 256
BATCH = 64
WARMUP_STEPS = 2
STEPS = 3

torch.manual_seed(0)
ENC = nn.Linear(WIDTH, WIDTH)
DEC = nn.Linear(WIDTH, WIDTH)


def encoder(x):
    return torch.relu(ENC(x))  # line 39: encoder's Linear and ReLU


def decoder(x):
    return torch.relu(DEC(x))  # line 43: decoder's Linear and ReLU


def train_step(x, target, optimizer):
    y = decoder(encoder(x))
    loss = ((y - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss


def main() -> int:
    if not torch.cuda.is_available():
        print("cct_torch.py: CUDA is not available", file=sys.stderr)
        return 1
    ENC.cuda()
    DEC.cuda()
    optimizer = torch.optim.SGD(list(ENC.parameters()) + list(DEC.parameters()), lr=0.01)
    x = torch.randn(BATCH, WIDTH, device="cuda")
    target = torch.randn(BATCH, WIDTH, device="cuda")
    loss = None
    for i in range(WARMUP_STEPS + STEPS):
        torch.cuda.nvtx.range_push(f"cct_torch/step{i}")
        if i < WARMUP_STEPS:
            loss = train_step(x, target, optimizer)
        else:
            with torch.autograd.profiler.emit_nvtx():
                loss = train_step(x, target, optimizer)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"final loss: {loss.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
