#!/usr/bin/env python3
"""A Python worker that ends in os._exit right after its GPU work (issue 22's case): the parent
starts it with multiprocessing's fork start method, whose child runs the target and then calls
os._exit(code). The parent uses no CUDA; the worker calls exit_paths_lib through ctypes.

    exit_paths_worker.py LIB [KERNELS]

LIB: the path of libexit_paths_lib.so. KERNELS: default 1200. The worker prints
"launched PID K"; the parent prints "worker exited CODE" and exits 0 when the worker did."""
import ctypes
import multiprocessing
import os
import sys


def work(lib, kernels):
    launched = ctypes.CDLL(lib).fuselens_exit_paths_launch(kernels)
    if launched != kernels:
        sys.exit(1)
    print(f"launched {os.getpid()} {launched}", flush=True)


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: exit_paths_worker.py LIB [KERNELS]", file=sys.stderr)
        return 2
    kernels = int(sys.argv[2]) if len(sys.argv) == 3 else 1200
    worker = multiprocessing.get_context("fork").Process(target=work, args=(sys.argv[1], kernels))
    worker.start()
    worker.join()
    print(f"worker exited {worker.exitcode}", flush=True)
    return 0 if worker.exitcode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
