#!/usr/bin/env python3
"""DistributedDataParallel training over NCCL, one process per GPU: a FuseLens multi-GPU workload.

Started by a launcher that sets RANK, LOCAL_RANK and WORLD_SIZE (and MASTER_ADDR/MASTER_PORT):
    torchrun --standalone --nproc-per-node 2 ddp_train.py [options]
    python3 -m torch.distributed.run --nproc-per-node 1 ddp_train.py   (one process, one GPU)
Without those variables it runs as rank 0 of a world of 1 (MASTER_ADDR 127.0.0.1, port 29511).
Each process calls torch.cuda.set_device(LOCAL_RANK) and joins the NCCL process group.

Model: an MLP of DEPTH (8) linear layers HIDDEN x HIDDEN (1024) with ReLU, 256 -> 1024 in front and
1024 -> 10 behind (about 8.7 M parameters, 35 MB of fp32 gradients), batch 256 of random inputs
created once on each GPU (seed 0 + rank, so ranks see different data). DDP's gradient buckets are
BUCKET_MB (4) MB, so backward fills about 9 buckets and NCCL allreduces them while the earlier layers'
gradients are still being computed (communication overlaps backward). SGD, lr 0.01. A step takes a
few ms on an H100.

What a profiler sees, per rank:
  * start-up: process group (NCCL communicators are created lazily by the first collective), the
    model's broadcast from rank 0 when DDP is built;
  * WARMUP (default 5) then STEPS (default 30) training steps; step K (K = 0 .. WARMUP+STEPS-1,
    warm-up included) is the NVTX range "step#K" on the main thread: with --slow-rank R --slow-ms M,
    rank R sleeps M ms on the host at the start of each step, before the forward (the deliberately
    slowed rank: the others wait for it in the first allreduce of the step's backward);
  * forward, cross-entropy, backward (NCCL allreduce kernels, ncclDevKernel_AllReduce_*, on NCCL's
    own stream), optimizer.step, zero_grad;
  * torch.cuda.synchronize(), a barrier, destroy_process_group(); rank 0 prints "final loss: <value>".
Exits 1 with one line on stderr when CUDA is not available or LOCAL_RANK names no device.

--time: after every measured step each rank calls torch.cuda.synchronize(); rank 0 prints
"median step time: X us over N steps" (its host wall time per step, the slowed rank's wait
included) and, with --step-times FILE, writes {"wall_us": [...]} (every measured step, in order).
--json FILE: rank 0 writes what ran, facts that do not depend on kernels: world_size, backend,
steps, warmup, nvtx_steps (their count), step_prefix ("step#"), slow_rank (null without),
slow_ms, batch, param_count, param_bytes, bucket_mb, and ranks: [{rank, local_rank, pid, device}]
gathered from every process (the pids FuseLens's process_rank rows must match).

Usage: ddp_train.py [--steps S] [--warmup W] [--slow-rank R --slow-ms M] [--time]
                    [--step-times FILE] [--json FILE]
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

BATCH = 256
IN_FEATURES = 256
HIDDEN = 1024
DEPTH = 8
CLASSES = 10
BUCKET_MB = 4
STEP_PREFIX = "step#"


def build_model() -> nn.Module:
    layers = [nn.Linear(IN_FEATURES, HIDDEN), nn.ReLU()]
    for _ in range(DEPTH):
        layers += [nn.Linear(HIDDEN, HIDDEN), nn.ReLU()]
    layers.append(nn.Linear(HIDDEN, CLASSES))
    return nn.Sequential(*layers)


def env_int(name: str, default: int) -> int:
    """An integer environment variable set by the launcher; exits 1 on a malformed value."""
    text = os.environ.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        print(f"ddp_train.py: {name}={text!r} is not an integer", file=sys.stderr)
        sys.exit(1)
    if value < 0:
        print(f"ddp_train.py: {name}={value} is negative", file=sys.stderr)
        sys.exit(1)
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="measured steps (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up steps (default 5)")
    parser.add_argument("--slow-rank", type=int, default=None, help="rank that sleeps before each step")
    parser.add_argument("--slow-ms", type=float, default=0.0, help="its host sleep per step, ms")
    parser.add_argument("--time", action="store_true", help="rank 0 prints the median step time (µs)")
    parser.add_argument("--step-times", metavar="FILE", help="with --time, every step's wall time (µs)")
    parser.add_argument("--json", metavar="FILE", help="rank 0 writes what ran as JSON")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("need --steps >= 1 and --warmup >= 0")
    if args.slow_ms < 0 or args.slow_ms > 10_000:
        parser.error("--slow-ms must be in [0, 10000]")

    rank = env_int("RANK", 0)
    local_rank = env_int("LOCAL_RANK", 0)
    world_size = env_int("WORLD_SIZE", 1)
    if world_size < 1 or rank >= world_size:
        print(f"ddp_train.py: RANK={rank} outside WORLD_SIZE={world_size}", file=sys.stderr)
        return 1
    if args.slow_rank is not None and not 0 <= args.slow_rank < world_size:
        parser.error(f"--slow-rank {args.slow_rank} outside [0, {world_size})")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    if not torch.cuda.is_available():
        print("ddp_train.py: CUDA is not available", file=sys.stderr)
        return 1
    if local_rank >= torch.cuda.device_count():
        print(f"ddp_train.py: LOCAL_RANK={local_rank} but {torch.cuda.device_count()} devices",
              file=sys.stderr)
        return 1
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    try:  # device_id (PyTorch >= 2.3) binds the communicator to this GPU up front
        dist.init_process_group("nccl", rank=rank, world_size=world_size, device_id=device)
    except TypeError:
        dist.init_process_group("nccl", rank=rank, world_size=world_size)

    torch.manual_seed(0)  # the same initial weights everywhere (DDP broadcasts rank 0's anyway)
    model = DistributedDataParallel(build_model().to(device), device_ids=[local_rank],
                                    bucket_cap_mb=BUCKET_MB)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator(device=device).manual_seed(rank)
    inputs = torch.randn(BATCH, IN_FEATURES, device=device, generator=generator)
    labels = torch.randint(0, CLASSES, (BATCH,), device=device, generator=generator)

    slow = args.slow_rank is not None and rank == args.slow_rank and args.slow_ms > 0
    step_us = []
    loss = None
    for k in range(args.warmup + args.steps):
        measured = k >= args.warmup
        start = time.perf_counter()
        torch.cuda.nvtx.range_push(f"{STEP_PREFIX}{k}")
        if slow:
            time.sleep(args.slow_ms / 1000.0)
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.nvtx.range_pop()
        if args.time and measured:
            torch.cuda.synchronize()
            step_us.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()

    me = {"rank": rank, "local_rank": local_rank, "pid": os.getpid(), "device": local_rank}
    everyone = [None] * world_size
    dist.all_gather_object(everyone, me)
    final_loss = loss.item()
    dist.barrier()
    dist.destroy_process_group()

    if rank != 0:
        return 0
    print(f"final loss: {final_loss:.6f}")
    if args.time:
        print(f"median step time: {statistics.median(step_us):.1f} us over {len(step_us)} steps")
        if args.step_times:
            with open(args.step_times, "w", encoding="utf-8") as out:
                json.dump({"wall_us": [round(x, 1) for x in step_us]}, out)
    if args.json:
        params = sum(p.numel() for p in model.parameters())
        facts = {
            "world_size": world_size, "backend": "nccl", "steps": args.steps, "warmup": args.warmup,
            "nvtx_steps": args.warmup + args.steps, "step_prefix": STEP_PREFIX,
            "slow_rank": args.slow_rank, "slow_ms": args.slow_ms if args.slow_rank is not None else 0,
            "batch": BATCH, "param_count": params, "param_bytes": params * 4, "bucket_mb": BUCKET_MB,
            "ranks": sorted(everyone, key=lambda r: r["rank"]),
        }
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(facts, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
