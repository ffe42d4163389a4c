#!/usr/bin/env python3
"""Small PyTorch MLP training loop with NVTX ranges: a FuseLens workload.

Model 784 -> 512 -> 256 -> 10 with ReLU, batch 64, random inputs and labels generated once on the GPU
from a fixed torch.manual_seed, cross-entropy loss, plain SGD.

Timeline (what a profiler should see):
  * WARMUP_STEPS (3) training steps outside any NVTX range (cuBLAS handles, allocator, lazy modules);
  * STEPS (10) training steps, step i inside the NVTX range "mlp/step{i}" (i = 0..9), each with the
    nested ranges "forward" (model + loss), "backward" and "optimizer" (step + zero_grad);
  * torch.cuda.synchronize(), then "final loss: <value>" on stdout, exit 0.
No host-to-device copies happen inside the step ranges (the data is created on the device up front).
Does not use torch.profiler. Exits 1 with one line on stderr when CUDA is not available.

With --time, prints the median host wall time of one training step in µs (each step ends with
torch.cuda.synchronize(), so it is the step's latency), for overhead measurements.

Usage: mlp_train.py [--steps N] [--warmup-steps N] [--seed S] [--time]
"""

import argparse
import statistics
import sys
import time

import torch
from torch import nn

BATCH = 64
LAYERS = (784, 512, 256, 10)
NUM_BATCHES = 4  # distinct random batches cycled through


def build_model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(LAYERS[0], LAYERS[1]),
        nn.ReLU(),
        nn.Linear(LAYERS[1], LAYERS[2]),
        nn.ReLU(),
        nn.Linear(LAYERS[2], LAYERS[3]),
    )


def train_step(model, loss_fn, optimizer, inputs, labels, annotate: bool) -> torch.Tensor:
    """One forward / backward / optimizer step; with annotate, each phase in its own NVTX range."""
    nvtx = torch.cuda.nvtx

    if annotate:
        nvtx.range_push("forward")
    loss = loss_fn(model(inputs), labels)
    if annotate:
        nvtx.range_pop()

    if annotate:
        nvtx.range_push("backward")
    loss.backward()
    if annotate:
        nvtx.range_pop()

    if annotate:
        nvtx.range_push("optimizer")
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    if annotate:
        nvtx.range_pop()
    return loss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="measured steps (default 10)")
    parser.add_argument("--warmup-steps", type=int, default=3, help="unannotated warm-up steps (default 3)")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed (default 0)")
    parser.add_argument("--time", action="store_true", help="print the median step time (µs)")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup_steps < 0:
        parser.error("need --steps >= 1 and --warmup-steps >= 0")

    if not torch.cuda.is_available():
        print("mlp_train.py: CUDA is not available", file=sys.stderr)
        return 1

    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    model = build_model().to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    inputs = torch.randn(NUM_BATCHES, BATCH, LAYERS[0], device=device)
    labels = torch.randint(0, LAYERS[-1], (NUM_BATCHES, BATCH), device=device)

    for i in range(args.warmup_steps):
        b = i % NUM_BATCHES
        train_step(model, loss_fn, optimizer, inputs[b], labels[b], annotate=False)
    torch.cuda.synchronize()

    loss = None
    step_us = []
    for i in range(args.steps):
        b = i % NUM_BATCHES
        start = time.perf_counter()
        torch.cuda.nvtx.range_push(f"mlp/step{i}")
        loss = train_step(model, loss_fn, optimizer, inputs[b], labels[b], annotate=True)
        torch.cuda.nvtx.range_pop()
        if args.time:
            torch.cuda.synchronize()
            step_us.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()

    print(f"final loss: {loss.item():.6f}")
    if args.time:
        print(f"median step time: {statistics.median(step_us):.1f} us over {len(step_us)} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
