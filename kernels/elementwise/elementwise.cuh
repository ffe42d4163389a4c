#pragma once
// Element-wise FP32 kernels: sigmoid, relu, multiply and the fused swish, over flat arrays of n
// floats.
//
//   sigmoid(x)     = 1 / (1 + exp(-x))
//   relu(x)        = x < 0 ? 0 : x           (NaN propagates, like torch.relu)
//   multiply(a, b) = a * b
//   swish(x)       = x * sigmoid(x) = x / (1 + exp(-x))   (a.k.a. SiLU)
//
// Unfused swish is two launches (sigmoid_kernel writes s, multiply_kernel reads x and s and writes
// y); fused swish is one launch of swish_kernel (reads x, writes y). README.md beside this file
// counts the bytes.
//
// Layout: contiguous arrays of n floats, device pointers. Unary ops may run in place (x == y);
// multiply may have y equal to a or b. Vectorisation: when every pointer of the call is 16-byte
// aligned (always true for cudaMalloc'd buffers) the kernels use float4 loads/stores for the first
// 4·floor(n/4) elements and scalar code for the tail of n mod 4; otherwise all-scalar. Grid-stride
// loops, 256 threads.
//
// Every launcher issues exactly ONE kernel launch (none when n == 0), is asynchronous on `stream`
// (default: the legacy default stream) and checks the launch with FUSELENS_CUDA_CHECK_LAST, which
// throws fuselens::kernels::CudaError. launch_swish_unfused issues exactly two.
// Kernel names as a profiler shows them (namespace fuselens::kernels): sigmoid_kernel, relu_kernel,
// multiply_kernel, swish_kernel.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace fuselens::kernels {

/// y = sigmoid(x). One launch of sigmoid_kernel.
void launch_sigmoid(const float* x, float* y, std::size_t n, cudaStream_t stream = nullptr);

/// y = relu(x). One launch of relu_kernel. In place allowed.
void launch_relu(const float* x, float* y, std::size_t n, cudaStream_t stream = nullptr);

/// y = a * b element-wise. One launch of multiply_kernel.
void launch_multiply(const float* a, const float* b, float* y, std::size_t n,
                     cudaStream_t stream = nullptr);

/// y = x * sigmoid(x) in one pass. One launch of swish_kernel.
void launch_swish_fused(const float* x, float* y, std::size_t n, cudaStream_t stream = nullptr);

/// y = x * sigmoid(x) unfused: launch_sigmoid(x -> s) then launch_multiply(x, s -> y). Two
/// launches. `s` is caller-provided scratch of n floats (the intermediate that fusion removes); it
/// must not alias x or y.
void launch_swish_unfused(const float* x, float* s, float* y, std::size_t n,
                          cudaStream_t stream = nullptr);

}  // namespace fuselens::kernels
