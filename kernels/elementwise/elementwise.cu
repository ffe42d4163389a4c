#include "elementwise/elementwise.cuh"

#include "common/cuda_check.h"

#include <cstddef>
#include <cstdint>

namespace fuselens::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = std::size_t{1} << 20;  // grid-stride beyond this

struct SigmoidOp {
  __device__ float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};

struct ReluOp {
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};

struct SwishOp {
  __device__ float operator()(float x) const { return x / (1.0f + expf(-x)); }
};

struct MultiplyOp {
  __device__ float operator()(float a, float b) const { return a * b; }
};

__device__ __forceinline__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::size_t grid_threads() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

/// y[i] = op(x[i]); float4 body when `vectorized`, scalar tail for the last n mod 4 elements.
template <class Op>
__device__ __forceinline__ void unary_apply(const float* x, float* y, std::size_t n,
                                            bool vectorized, Op op) {
  std::size_t done = 0;
  if (vectorized) {
    const std::size_t n4 = n / 4;
    const auto* x4 = reinterpret_cast<const float4*>(x);
    auto* y4 = reinterpret_cast<float4*>(y);
    for (std::size_t i = global_thread(); i < n4; i += grid_threads()) {
      const float4 v = x4[i];
      y4[i] = make_float4(op(v.x), op(v.y), op(v.z), op(v.w));
    }
    done = n4 * 4;
  }
  for (std::size_t i = done + global_thread(); i < n; i += grid_threads()) {
    y[i] = op(x[i]);
  }
}

/// y[i] = op(a[i], b[i]); same vectorisation scheme as unary_apply.
template <class Op>
__device__ __forceinline__ void binary_apply(const float* a, const float* b, float* y,
                                             std::size_t n, bool vectorized, Op op) {
  std::size_t done = 0;
  if (vectorized) {
    const std::size_t n4 = n / 4;
    const auto* a4 = reinterpret_cast<const float4*>(a);
    const auto* b4 = reinterpret_cast<const float4*>(b);
    auto* y4 = reinterpret_cast<float4*>(y);
    for (std::size_t i = global_thread(); i < n4; i += grid_threads()) {
      const float4 u = a4[i];
      const float4 v = b4[i];
      y4[i] = make_float4(op(u.x, v.x), op(u.y, v.y), op(u.z, v.z), op(u.w, v.w));
    }
    done = n4 * 4;
  }
  for (std::size_t i = done + global_thread(); i < n; i += grid_threads()) {
    y[i] = op(a[i], b[i]);
  }
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// Blocks for `n` elements: one thread per float4 (vectorised) or per element, capped
/// (grid-stride).
unsigned grid_for(std::size_t n, bool vectorized) {
  std::size_t work = vectorized ? n / 4 : n;
  if (work == 0) {
    work = 1;  // vectorised with n < 4: one block still covers the (at most 3-element) tail
  }
  std::size_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace

__global__ void sigmoid_kernel(const float* x, float* y, std::size_t n, bool vectorized) {
  unary_apply(x, y, n, vectorized, SigmoidOp{});
}

__global__ void relu_kernel(const float* x, float* y, std::size_t n, bool vectorized) {
  unary_apply(x, y, n, vectorized, ReluOp{});
}

__global__ void swish_kernel(const float* x, float* y, std::size_t n, bool vectorized) {
  unary_apply(x, y, n, vectorized, SwishOp{});
}

__global__ void multiply_kernel(const float* a, const float* b, float* y, std::size_t n,
                                bool vectorized) {
  binary_apply(a, b, y, n, vectorized, MultiplyOp{});
}

void launch_sigmoid(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  const bool vec = aligned16(x) && aligned16(y);
  sigmoid_kernel<<<grid_for(n, vec), kThreads, 0, stream>>>(x, y, n, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_relu(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  const bool vec = aligned16(x) && aligned16(y);
  relu_kernel<<<grid_for(n, vec), kThreads, 0, stream>>>(x, y, n, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_multiply(const float* a, const float* b, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  const bool vec = aligned16(a) && aligned16(b) && aligned16(y);
  multiply_kernel<<<grid_for(n, vec), kThreads, 0, stream>>>(a, b, y, n, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_swish_fused(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) {
    return;
  }
  const bool vec = aligned16(x) && aligned16(y);
  swish_kernel<<<grid_for(n, vec), kThreads, 0, stream>>>(x, y, n, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_swish_unfused(const float* x, float* s, float* y, std::size_t n, cudaStream_t stream) {
  launch_sigmoid(x, s, n, stream);
  launch_multiply(x, s, y, n, stream);
}

}  // namespace fuselens::kernels
