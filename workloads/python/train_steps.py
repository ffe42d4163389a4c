#!/usr/bin/env python3
"""PyTorch CNN training with a real start-up, for step detection and windows (issue 19).

What a profiler sees, in order:
  * start-up: imports, the model built on the GPU, cuDNN's autotuner on (torch.backends.cudnn.benchmark),
    a DataLoader over a synthetic CPU dataset with 2 worker processes and pinned memory;
  * WARMUP (default 5) training steps, then STEPS (default 60) more: every step copies a batch of 64
    3x32x32 images and labels to the GPU, runs forward (three conv + batch-norm + ReLU blocks, pooling,
    a linear layer), cross-entropy, backward and SGD with momentum (Optimizer.step);
  * with --markers nvtx (the default) each step, warm-up included, is the NVTX range "ProfilerStep#N"
    (N from 0), as torch.profiler's schedule names them; --markers none leaves them out;
  * torch.cuda.synchronize() and "final loss: <value>" on stdout, exit 0.
Exits 1 with one line on stderr when CUDA is not available.

Usage: train_steps.py [--steps N] [--warmup N] [--markers nvtx|none] [--seed S]
"""

import argparse
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def build_model() -> nn.Module:
    def block(c_in: int, c_out: int, pool: bool) -> list:
        layers = [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()]
        return layers + ([nn.MaxPool2d(2)] if pool else [])

    return nn.Sequential(*block(3, 32, False), *block(32, 64, True), *block(64, 128, True),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60, help="steps after the warm-up (default 60)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up steps (default 5)")
    parser.add_argument("--markers", choices=("nvtx", "none"), default="nvtx")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("train_steps.py: CUDA is not available", file=sys.stderr)
        return 1
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    total = args.warmup + args.steps
    images = torch.randn(total * 64, 3, 32, 32)
    labels = torch.randint(0, 10, (total * 64,))
    loader = DataLoader(TensorDataset(images, labels), batch_size=64, shuffle=True, num_workers=2,
                        pin_memory=True, drop_last=True)
    device = torch.device("cuda")
    model = build_model().to(device)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss = None
    for i, (x, y) in enumerate(loader):
        if i >= total:
            break
        if args.markers == "nvtx":
            torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if args.markers == "nvtx":
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"final loss: {loss.item():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
