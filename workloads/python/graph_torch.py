#!/usr/bin/env python3
"""A tiny MLP forward captured into a CUDA graph by PyTorch and replayed, for the attribution of
replayed kernels to the code that captured them (docs/calling-context.md, "CUDA graphs").

    graph_torch.py [--mode graph|compile] [--replays N] [--json PATH]

--mode graph (default): torch.cuda.graph. warm_up() runs the forward on a side stream (as
PyTorch's documentation asks before a capture), capture_forward() captures one forward into a
torch.cuda.CUDAGraph, replay_steps() copies each new input into the static input and replays the
graph N times (default 50).
--mode compile: torch.compile(mode="reduce-overhead"), whose CUDA graph trees capture the
compiled forward on a warm-up call and replay it after; run_compiled() calls the compiled model
N times under torch.no_grad().

Under prof-run the replayed kernels are charged to capture_forward (graph mode) or to the
compiled call that recorded the graph (compile mode), each under a "<graph replay>" row naming
replay_steps / run_compiled. Output: one JSON object (stdout, or PATH) with the mode, the replays
and the capturing and replaying functions. Exit status: 0, 77 without CUDA, 2 on bad options.
"""
import argparse
import json
import sys

import torch


def build_model():
    return torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10)).cuda()


def warm_up(model, static_input):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_input)
    torch.cuda.current_stream().wait_stream(side)


def capture_forward(model, static_input):
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = model(static_input)
    return graph, static_output


def replay_steps(graph, static_input, inputs):
    for x in inputs:
        static_input.copy_(x)
        graph.replay()
    torch.cuda.synchronize()


def run_compiled(compiled, inputs):
    out = None
    for x in inputs:
        out = compiled(x)
    torch.cuda.synchronize()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["graph", "compile"], default="graph")
    parser.add_argument("--replays", type=int, default=50)
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.replays < 1:
        parser.error("--replays must be at least 1")
    if not torch.cuda.is_available():
        print("graph_torch.py: no CUDA device", file=sys.stderr)
        return 77
    torch.manual_seed(0)
    model = build_model().eval()
    inputs = [torch.randn(64, 256, device="cuda") for _ in range(args.replays)]
    with torch.no_grad():
        if args.mode == "graph":
            static_input = torch.zeros(64, 256, device="cuda")
            warm_up(model, static_input)
            graph, _ = capture_forward(model, static_input)
            replay_steps(graph, static_input, inputs)
            capture, replay = "capture_forward", "replay_steps"
        else:
            compiled = torch.compile(model, mode="reduce-overhead")
            run_compiled(compiled, inputs)
            capture, replay = "run_compiled", "run_compiled"
    report = {"mode": args.mode, "replays": args.replays, "capture_function": capture,
              "replay_function": replay}
    text = json.dumps(report)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
