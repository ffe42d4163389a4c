// exit_paths_lib: the GPU work of the exit-path workloads (exit_paths, exit_paths_worker.py), in a
// shared library so that a Python worker can call it through ctypes without a CUDA package.
//
//   int fuselens_exit_paths_launch(int kernels)
// launches `kernels` (>= 0) empty kernels <<<1, 32>>> on the default stream, synchronizes, and
// returns how many it launched; -1 (and one line on stderr) on a CUDA error or a negative count.

#include <cuda_runtime.h>

#include <cstdio>

__global__ void exit_paths_kernel() {}

extern "C" __attribute__((visibility("default"))) int fuselens_exit_paths_launch(int kernels) {
  if (kernels < 0) return -1;
  for (int i = 0; i < kernels; ++i) exit_paths_kernel<<<1, 32>>>();
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess) error = cudaDeviceSynchronize();
  if (error != cudaSuccess) {
    std::fprintf(stderr, "exit_paths: CUDA error: %s\n", cudaGetErrorString(error));
    return -1;
  }
  return kernels;
}
