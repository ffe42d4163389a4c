#!/usr/bin/env python3
"""A small CNN training step, eager or under torch.compile (issue 20).

What a profiler sees: WARMUP (default 5) then STEPS (default 10) training steps on one synthetic
GPU batch of 64 3x32x32 images: three conv + batch-norm + ReLU blocks (max-pooling after the
second and third), global average pooling, a linear layer, cross-entropy, backward and SGD with
momentum. Each step is the NVTX range "ProfilerStep#N" (N from 0). --compile
default|reduce-overhead compiles the model (not the optimizer) with torch.compile's mode;
reduce-overhead replays CUDA graphs (torch.compiler.cudagraph_mark_step_begin before each step).
Prints "final loss: <value>". Exits 1 with one line on stderr when CUDA is not available.

Usage: cnn_step.py [--compile none|default|reduce-overhead] [--steps N] [--warmup N]
"""

import argparse
import sys

import torch
from torch import nn


class ConvBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int, pool: bool):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)
        self.pool = nn.MaxPool2d(2) if pool else nn.Identity()

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = ConvBlock(3, 32, False)
        self.block2 = ConvBlock(32, 64, True)
        self.block3 = ConvBlock(64, 128, True)
        self.head = nn.Linear(128, 10)

    def forward(self, x):
        x = self.block3(self.block2(self.block1(x)))
        return self.head(x.mean(dim=(2, 3)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", choices=("none", "default", "reduce-overhead"), default="none")
    parser.add_argument("--steps", type=int, default=10, help="steps after the warm-up (default 10)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up steps (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("cnn_step.py: CUDA is not available", file=sys.stderr)
        return 1
    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    model = Net().to(device)
    step_model = model if args.compile == "none" else torch.compile(model, mode=args.compile)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(64, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (64,), device=device)
    loss = None
    for i in range(args.warmup + args.steps):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        if args.compile == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        loss = loss_fn(step_model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"final loss: {loss.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
