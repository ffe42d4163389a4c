#!/usr/bin/env python3
"""Small PyTorch MLP training loop with NVTX ranges: a FuseLens workload.

Model 784 -> 512 -> 256 -> 10 with ReLU, batch 64, random inputs and labels generated once on the GPU
from a fixed torch.manual_seed, cross-entropy loss, plain SGD. With --model cnn, a small CNN instead
(the kind of step the calling-context issue's torch.profiler comparison names): three 3x3
convolutions 3 -> 32 -> 64 -> 128 channels, each with batch norm and ReLU, max pooling after the
second and third, global average pooling and a 128 -> 10 linear layer, on batch 64 of random
3x32x32 images.

Timeline (what a profiler should see):
  * WARMUP_STEPS (3) training steps outside any NVTX range (cuBLAS handles, allocator, lazy modules);
  * STEPS (10) training steps, step i inside the NVTX range "mlp/step{i}" (i = 0..9; "cnn/step{i}"
    with --model cnn), each with the
    nested ranges "forward" (model + loss), "backward" and "optimizer" (step + zero_grad);
  * torch.cuda.synchronize(), then "final loss: <value>" on stdout, exit 0.
No host-to-device copies happen inside the step ranges (the data is created on the device up front).
Does not use torch.profiler. Exits 1 with one line on stderr when CUDA is not available.

With --time, prints the median host wall time of one training step in µs (each step ends with
torch.cuda.synchronize(), so it is the step's latency), for overhead measurements.

With --torch-profiler stack|nostack, the measured steps run inside torch.profiler.profile
(CPU and CUDA activities, with_stack=True or False): the cost of PyTorch's own profiler on the same
step, for comparison with FuseLens (its trace is discarded, not exported).

Usage: mlp_train.py [--model mlp|cnn] [--steps N] [--warmup-steps N] [--seed S] [--time]
                    [--torch-profiler none|stack|nostack]
"""

import argparse
import contextlib
import statistics
import sys
import time

import torch
from torch import nn

BATCH = 64
LAYERS = (784, 512, 256, 10)
NUM_BATCHES = 4  # distinct random batches cycled through


CNN_IMAGE = (3, 32, 32)


def build_model(kind: str = "mlp") -> nn.Module:
    if kind == "cnn":
        def block(c_in: int, c_out: int, pool: bool) -> list:
            layers = [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()]
            return layers + [nn.MaxPool2d(2)] if pool else layers

        return nn.Sequential(
            *block(3, 32, False), *block(32, 64, True), *block(64, 128, True),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, LAYERS[-1]),
        )
    return nn.Sequential(
        nn.Linear(LAYERS[0], LAYERS[1]),
        nn.ReLU(),
        nn.Linear(LAYERS[1], LAYERS[2]),
        nn.ReLU(),
        nn.Linear(LAYERS[2], LAYERS[3]),
    )


def torch_profiler(mode: str):
    """torch.profiler over the measured steps, or nothing for mode "none"."""
    if mode == "none":
        return contextlib.nullcontext()
    from torch.profiler import ProfilerActivity, profile

    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   with_stack=(mode == "stack"))


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
    parser.add_argument("--model", choices=("mlp", "cnn"), default="mlp", help="model (default mlp)")
    parser.add_argument("--torch-profiler", choices=("none", "stack", "nostack"), default="none",
                        help="run the measured steps under torch.profiler (default none)")
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
    model = build_model(args.model).to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    shape = CNN_IMAGE if args.model == "cnn" else (LAYERS[0],)
    inputs = torch.randn(NUM_BATCHES, BATCH, *shape, device=device)
    labels = torch.randint(0, LAYERS[-1], (NUM_BATCHES, BATCH), device=device)

    for i in range(args.warmup_steps):
        b = i % NUM_BATCHES
        train_step(model, loss_fn, optimizer, inputs[b], labels[b], annotate=False)
    torch.cuda.synchronize()

    loss = None
    step_us = []
    with torch_profiler(args.torch_profiler):
        for i in range(args.steps):
            b = i % NUM_BATCHES
            start = time.perf_counter()
            torch.cuda.nvtx.range_push(f"{args.model}/step{i}")
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
