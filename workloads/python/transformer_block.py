#!/usr/bin/env python3
"""A small transformer block trained for a few steps, eager or under torch.compile (issue 20).

What a profiler sees: WARMUP (default 5) then STEPS (default 10) training steps of one pre-norm
transformer block (LayerNorm, multi-head self-attention through scaled_dot_product_attention,
LayerNorm, a GELU MLP; d_model 256, 4 heads, batch 8 x 128 tokens) with a squared-output loss,
backward and AdamW. Each step, warm-up included, is the NVTX range "ProfilerStep#N" (N from 0),
as torch.profiler's schedule names them, so `prof-analyze steps` finds them and the steady window
leaves the compilation (the first steps) out. --compile default|reduce-overhead compiles the
block (not the optimizer) with torch.compile's mode; reduce-overhead replays CUDA graphs
(torch.compiler.cudagraph_mark_step_begin before each step). Prints "final loss: <value>".
Exits 1 with one line on stderr when CUDA is not available.

Usage: transformer_block.py [--compile none|default|reduce-overhead] [--steps N] [--warmup N]
"""

import argparse
import sys

import torch
from torch import nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Mlp(nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, d: int = 256, heads: int = 4, hidden: int = 1024):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = Mlp(d, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", choices=("none", "default", "reduce-overhead"), default="none")
    parser.add_argument("--steps", type=int, default=10, help="steps after the warm-up (default 10)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up steps (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("transformer_block.py: CUDA is not available", file=sys.stderr)
        return 1
    torch.manual_seed(args.seed)
    device = torch.device("cuda")
    model = Block().to(device)
    step_model = model if args.compile == "none" else torch.compile(model, mode=args.compile)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(8, 128, 256, device=device)
    loss = None
    for i in range(args.warmup + args.steps):
        torch.cuda.nvtx.range_push(f"ProfilerStep#{i}")
        if args.compile == "reduce-overhead":
            torch.compiler.cudagraph_mark_step_begin()
        out = step_model(x)
        loss = out.float().pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(f"final loss: {loss.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
