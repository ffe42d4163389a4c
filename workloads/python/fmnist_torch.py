#!/usr/bin/env python3
"""The Fashion-MNIST network of workloads/fashion_mnist/model.h in PyTorch: the outside reference of
issue #10's validation (same layers, initialisation rule, normalisation, optimizer, batch size and
epochs; PyTorch's own kernels).

    python3 fmnist_torch.py [--data DIR] [--epochs N] [--batch N] [--lr X] [--momentum X]
                            [--seeds 1,2,3] [--json FILE]

Each seed trains a fresh model (torch.manual_seed(seed); batch order from a torch.Generator seeded
with seed + epoch), so the spread over seeds is the run-to-run variation a change of kernels must stay
within. Per epoch: train loss and accuracy (running mean over the epoch's batches), test loss and
accuracy, training-loop seconds (CUDA synchronized). Exit 0 done, 1 data error, 2 usage, 77 no CUDA.
"""
import argparse
import gzip
import json
import os
import struct
import sys
import time


def read_idx(path, magic_expected, ndim):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 + 4 * ndim:
        raise ValueError(f"{path}: truncated header")
    magic = struct.unpack(">I", data[:4])[0]
    if magic != magic_expected:
        raise ValueError(f"{path}: not an IDX file of the expected kind (magic 0x{magic:08x})")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = data[4 + 4 * ndim:]
    count = 1
    for d in dims:
        count *= d
    if len(body) != count:
        raise ValueError(f"{path}: expected {count} bytes of data, found {len(body)}")
    return dims, body


def load(data_dir, prefix):
    def pick(stem):
        gz = os.path.join(data_dir, stem + ".gz")
        return gz if os.path.exists(gz) else os.path.join(data_dir, stem)
    dims, images = read_idx(pick(f"{prefix}-images-idx3-ubyte"), 0x803, 3)
    (n,), labels = read_idx(pick(f"{prefix}-labels-idx1-ubyte"), 0x801, 1)
    if n != dims[0]:
        raise ValueError(f"{prefix}: {n} labels for {dims[0]} images")
    return dims, images, labels


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--seeds", default="1")
    p.add_argument("--json")
    try:
        args = p.parse_args()
        seeds = [int(s) for s in args.seeds.split(",") if s]
    except (SystemExit, ValueError) as e:
        if isinstance(e, SystemExit) and e.code == 0:
            raise
        print("fmnist_torch: error: bad command line", file=sys.stderr)
        return 2

    import torch
    if not torch.cuda.is_available():
        print("fmnist_torch: no CUDA device available", file=sys.stderr)
        return 77
    try:
        (ntr, rows, cols), tr_img, tr_lab = load(args.data, "train")
        (nte, _, _), te_img, te_lab = load(args.data, "t10k")
    except (OSError, ValueError) as e:
        print(f"fmnist_torch: error: {e}", file=sys.stderr)
        return 1

    dev = torch.device("cuda")
    mean, std = 0.2860, 0.3530

    def tensors(img, lab, n):
        x = torch.frombuffer(bytearray(img), dtype=torch.uint8).reshape(n, rows * cols).to(dev)
        x = (x.float() / 255.0 - mean) / std
        y = torch.frombuffer(bytearray(lab), dtype=torch.uint8).long().to(dev)
        return x, y

    xtr, ytr = tensors(tr_img, tr_lab, ntr)
    xte, yte = tensors(te_img, te_lab, nte)
    records = []
    print(f"fmnist_torch: torch {torch.__version__}, {torch.cuda.get_device_name()}; {ntr} train, {nte} test; "
          f"batch {args.batch}, lr {args.lr}, momentum {args.momentum}")
    print(f"{'seed':>4} {'epoch':>5} {'train_loss':>10} {'train_acc':>9} {'test_loss':>10} {'test_acc':>9} {'epoch_s':>9}")
    for seed in seeds:
        torch.manual_seed(seed)
        model = torch.nn.Sequential(
            torch.nn.Linear(rows * cols, 256), torch.nn.ReLU(),
            torch.nn.Linear(256, 256), torch.nn.LayerNorm(256, eps=1e-5), torch.nn.SiLU(),
            torch.nn.Linear(256, 10)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
        loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
        for epoch in range(1, args.epochs + 1):
            order = torch.randperm(ntr, generator=torch.Generator().manual_seed(seed + epoch)).to(dev)
            loss_sum = torch.zeros((), device=dev)
            hits = torch.zeros((), device=dev, dtype=torch.long)
            model.train()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for first in range(0, ntr, args.batch):
                idx = order[first:first + args.batch]
                x, y = xtr[idx], ytr[idx]
                out = model(x)
                loss = loss_fn(out, y)
                opt.zero_grad(set_to_none=True)
                (loss / x.shape[0]).backward()
                opt.step()
                loss_sum += loss.detach()
                hits += (out.argmax(1) == y).sum()
            torch.cuda.synchronize()
            seconds = time.perf_counter() - t0
            model.eval()
            with torch.no_grad():
                out = model(xte)
                test_loss = loss_fn(out, yte).item() / nte
                test_acc = (out.argmax(1) == yte).float().mean().item()
            r = dict(build="torch", seed=seed, epoch=epoch, train_loss=loss_sum.item() / ntr,
                     train_accuracy=hits.item() / ntr, test_loss=test_loss, test_accuracy=test_acc,
                     train_seconds=seconds)
            records.append(r)
            print(f"{seed:>4} {epoch:>5} {r['train_loss']:>10.4f} {100 * r['train_accuracy']:>8.2f}% "
                  f"{test_loss:>10.4f} {100 * test_acc:>8.2f}% {seconds:>9.3f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
