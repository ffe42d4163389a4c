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
torch.cuda.synchronize(), so it is the step's latency), for overhead measurements. With
--step-times FILE as well, writes every measured step's wall time, and the wall and main-thread CPU
time until its synchronize (the host's issue time), in µs and step order, to FILE as one JSON
object {"wall_us": [...], "issue_us": [...], "cpu_us": [...], "threads": [...]}, so that the
spread within a process can be told from the spread between processes; "threads" has, for every
thread of the process (Linux /proc/self/task), its name and what it spent during the measured
steps: CPU seconds, voluntary / involuntary context switches (where a profiler's own threads
and its waits show) and, where the host offers hardware counters, user-space CPU cycles and
instructions (thread_counters.py; less sensitive than times to a shared host's changing speed).

With --ab-block K (and --time), the measured steps alternate between blocks of K steps without and
with profiling, in one process: before each odd-numbered block torch.cuda.profiler.start()
(cudaProfilerStart), after it torch.cuda.profiler.stop(), so a profiler that records only between
them (`prof-run --capture-range cudaProfilerApi --capture-range-end repeat`, or the CUPTI floor
library with FUSELENS_FLOOR_PROFILER_API=1) is on in every other block. Prints "ab ratio: R (P
pairs)": the geometric mean, over the pairs of an on-block and the off-block before it, of
median(on steps) / median(off steps), the first AB_SKIP (2) steps of each block left out (the
switch itself and the records of the previous block reaching the profiler's threads). The
process's own speed changes cancel in each pair, so the ratio varies far less between processes
than a step time does (docs/pytorch-step-budget.md). --step-times adds "ab_on" (0/1 per step).

With --torch-profiler stack|nostack, the measured steps run inside torch.profiler.profile
(CPU and CUDA activities, with_stack=True or False): the cost of PyTorch's own profiler on the same
step, for comparison with FuseLens (its trace is discarded, not exported).

Usage: mlp_train.py [--model mlp|cnn] [--steps N] [--warmup-steps N] [--seed S] [--time]
                    [--step-times FILE] [--ab-block K]
                    [--torch-profiler none|stack|nostack]
"""

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
from torch import nn

BATCH = 64
AB_SKIP = 2  # steps left out at the start of each --ab-block block
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


def thread_stats() -> dict:
    """{tid: (name, CPU seconds, voluntary, involuntary context switches)} from /proc/self/task."""
    stats = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="utf-8") as f:
                text = f.read()
            with open(f"/proc/self/task/{tid}/status", encoding="utf-8") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # the thread ended meanwhile
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()  # fields[11], [12]: utime, stime (ticks)
        stats[tid] = (name, (int(fields[11]) + int(fields[12])) / tick,
                      int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"]))
    return stats


def thread_deltas(before: dict, after: dict, counts_before: dict, counts_after: dict) -> list:
    """What each thread spent between two thread_stats() snapshots (new threads from zero), with
    the hardware counts between two ThreadCounters.read() snapshots where there are any."""
    out = []
    for tid, (name, cpu, vol, invol) in after.items():
        _, cpu0, vol0, invol0 = before.get(tid, (name, 0.0, 0, 0))
        row = {"tid": int(tid), "name": "(main)" if int(tid) == os.getpid() else name,
               "cpu_s": round(cpu - cpu0, 3), "voluntary": vol - vol0, "involuntary": invol - invol0}
        for event in ("cycles", "instructions"):
            a = counts_after.get(int(tid), {}).get(event)
            b = counts_before.get(int(tid), {}).get(event)
            row[event] = a - b if a is not None and b is not None else None
        out.append(row)
    return sorted(out, key=lambda t: -t["cpu_s"])


def ab_ratio(step_us: list, block: int) -> tuple:
    """--ab-block: the geometric mean over (off-block, following on-block) pairs of the ratio of
    their median step times, each block without its first AB_SKIP steps; and the number of pairs."""
    logs = []
    for start in range(0, len(step_us) - 2 * block + 1, 2 * block):
        off = step_us[start + AB_SKIP:start + block]
        on = step_us[start + block + AB_SKIP:start + 2 * block]
        logs.append(math.log(statistics.median(on) / statistics.median(off)))
    return math.exp(sum(logs) / len(logs)), len(logs)


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
    parser.add_argument("--step-times", metavar="FILE",
                        help="with --time, write every step's wall and CPU time (µs) to FILE as JSON")
    parser.add_argument("--ab-block", type=int, default=0, metavar="K",
                        help="with --time, profile every other block of K steps (cudaProfilerStart/Stop)")
    parser.add_argument("--profiler-every", type=int, default=0, metavar="N",
                        help="call cudaProfilerStart at the start of every Nth measured step (N, 2N, ... from "
                             "1) and cudaProfilerStop at the start of the next, inside the timed steps: "
                             "CUPTI's floor library switched like prof-run --sample 1/N")
    args = parser.parse_args()
    if args.profiler_every < 0 or (args.profiler_every and args.ab_block):
        parser.error("--profiler-every needs N >= 0 and not --ab-block")
    if args.steps < 1 or args.warmup_steps < 0:
        parser.error("need --steps >= 1 and --warmup-steps >= 0")
    if args.ab_block < 0 or (args.ab_block and (not args.time or args.ab_block <= AB_SKIP + 2
                                                 or args.steps < 2 * args.ab_block)):
        parser.error(f"--ab-block needs --time, K > {AB_SKIP + 2} and --steps >= 2K")

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
    cpu_us = []
    issue_us = []
    threads_before = thread_stats() if args.step_times else {}
    counters = None
    if args.step_times:
        from thread_counters import ThreadCounters
        counters = ThreadCounters(threads_before.keys())
        if counters.error:
            print(f"mlp_train.py: no hardware counters: {counters.error}", file=sys.stderr)
    counts_before = counters.read() if counters else {}
    ab_on = []
    with torch_profiler(args.torch_profiler):
        for i in range(args.steps):
            b = i % NUM_BATCHES
            if args.ab_block and i % args.ab_block == 0:
                on = (i // args.ab_block) % 2 == 1
                if on:
                    torch.cuda.profiler.start()
                elif i > 0:
                    torch.cuda.profiler.stop()
            if args.ab_block:
                ab_on.append(1 if (i // args.ab_block) % 2 == 1 else 0)
            start = time.perf_counter()
            cpu_start = time.thread_time()
            every = args.profiler_every  # inside the timed step, as prof-run --sample switches
            if every and (i + 1) % every == 0:
                torch.cuda.profiler.start()
            elif every and i > 0 and i % every == 0:
                torch.cuda.profiler.stop()
            torch.cuda.nvtx.range_push(f"{args.model}/step{i}")
            loss = train_step(model, loss_fn, optimizer, inputs[b], labels[b], annotate=True)
            torch.cuda.nvtx.range_pop()
            if args.time:
                issue_us.append((time.perf_counter() - start) * 1e6)
                cpu_us.append((time.thread_time() - cpu_start) * 1e6)
                torch.cuda.synchronize()
                step_us.append((time.perf_counter() - start) * 1e6)
        torch.cuda.synchronize()
        if args.ab_block and ab_on and ab_on[-1]:
            torch.cuda.profiler.stop()
    threads = []
    if args.step_times:
        counts_after = counters.read()
        counters.close()
        threads = thread_deltas(threads_before, thread_stats(), counts_before, counts_after)

    print(f"final loss: {loss.item():.6f}")
    if args.time:
        print(f"median step time: {statistics.median(step_us):.1f} us over {len(step_us)} steps")
        if args.ab_block:
            ratio, pairs = ab_ratio(step_us, args.ab_block)
            print(f"ab ratio: {ratio:.5f} ({pairs} pairs)")
        if args.step_times:
            with open(args.step_times, "w", encoding="utf-8") as out:
                times = {name: [round(x, 1) for x in values] for name, values in
                         (("wall_us", step_us), ("issue_us", issue_us), ("cpu_us", cpu_us))}
                extra = {"ab_on": ab_on, "ab_block": args.ab_block} if args.ab_block else {}
                json.dump({**times, **extra, "threads": threads}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
