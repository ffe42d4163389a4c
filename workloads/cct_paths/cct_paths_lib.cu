// A shared library that launches its own kernel: calling contexts must cross module boundaries.
#include "cct_paths.h"

__global__ void library_kernel(float* out) { out[threadIdx.x] += 2.0f; }

extern "C" __attribute__((noinline)) cudaError_t lib_launch(float* out) {
  library_kernel<<<1, 32>>>(out);
  const cudaError_t status = cudaGetLastError();
  asm volatile("" ::: "memory");  // keep this frame: no tail call
  return status;
}
