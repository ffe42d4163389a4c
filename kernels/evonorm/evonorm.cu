#include "evonorm/evonorm.cuh"

#include "common/cuda_check.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

constexpr int kThreads = 256;  // element-wise and statistics kernels of the unfused chain
constexpr unsigned kMaxBlocks = 1u << 20;  // grid-stride beyond this
constexpr unsigned kFusedMinThreads = 64;
constexpr unsigned kFusedMaxThreads = 1024;
constexpr unsigned kFusedItems = 4;  // items (float4 or float) per thread held in registers
// How evonorm_s0_fused_kernel holds the group between its passes.
constexpr unsigned kFusedRegisters = 0;
constexpr unsigned kFusedShared = 1;
constexpr unsigned kFusedGlobal = 2;

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// Sum of `v` over the block, returned to every thread. `red` is __shared__ float[32]; the leading
/// barrier lets consecutive calls reuse it. Every thread of the block must call it.
__device__ __forceinline__ float block_sum(float v, float* red) {
  const unsigned lane = threadIdx.x % 32u;
  const unsigned warp = threadIdx.x / 32u;
  const unsigned warps = (blockDim.x + 31u) / 32u;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  return warp_sum(lane < warps ? red[lane] : 0.0f);
}

__device__ __forceinline__ unsigned global_thread() {
  return blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned grid_threads() { return gridDim.x * blockDim.x; }

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// Threads per block of the fused kernel for a group of `items` work items (float4 or float): about
/// kFusedItems items per thread, whole warps, 64 to 1024 threads.
unsigned fused_threads(unsigned items) {
  const unsigned threads = ((items + kFusedItems - 1) / kFusedItems + 31) / 32 * 32;
  return threads < kFusedMinThreads ? kFusedMinThreads
                                    : (threads > kFusedMaxThreads ? kFusedMaxThreads : threads);
}

unsigned grid_for(std::size_t work) {
  const std::size_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks == 0 ? 1 : (blocks < kMaxBlocks ? blocks : kMaxBlocks));
}

void validate(const float* x, const EvoNormParams& params, const float* y, const EvoNormShape& s,
              float eps) {
  if (s.n < 0 || s.c < 0 || s.h < 0 || s.w < 0) {
    throw std::invalid_argument("evonorm: negative size in shape N=" + std::to_string(s.n) +
                                " C=" + std::to_string(s.c) + " H=" + std::to_string(s.h) +
                                " W=" + std::to_string(s.w));
  }
  if (s.groups < 1 || s.c % s.groups != 0) {
    throw std::invalid_argument("evonorm: groups=" + std::to_string(s.groups) +
                                " must be >= 1 and divide C=" + std::to_string(s.c));
  }
  if (!(eps >= 0.0f) || !std::isfinite(eps)) {
    throw std::invalid_argument("evonorm: eps must be finite and >= 0");
  }
  if (s.elements() >= (std::size_t{1} << 31)) {
    throw std::invalid_argument("evonorm: N*C*H*W = " + std::to_string(s.elements()) +
                                " must be below 2^31 (32-bit indexing)");
  }
  if (s.elements() > 0 && (x == nullptr || y == nullptr || params.gamma == nullptr ||
                           params.beta == nullptr || params.v1 == nullptr)) {
    throw std::invalid_argument("evonorm: null device pointer");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Unfused chain: five kernels, intermediates in global memory.
// ---------------------------------------------------------------------------------------------------

/// var[ng] = mean over the group of (x - mean)², one block per (n, g); group ng is x[ng·L,
/// (ng+1)·L).
__global__ void evonorm_s0_group_var_kernel(const float* x, float* var, unsigned group_len,
                                            bool vectorized) {
  __shared__ float red[32];
  const float* xg = x + static_cast<std::size_t>(blockIdx.x) * group_len;
  const float inv_len = 1.0f / static_cast<float>(group_len);
  float sum = 0.0f;
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(xg);
    for (unsigned i = threadIdx.x; i < group_len / 4; i += blockDim.x) {
      const float4 v = x4[i];
      sum += (v.x + v.y) + (v.z + v.w);
    }
  } else {
    for (unsigned i = threadIdx.x; i < group_len; i += blockDim.x) sum += xg[i];
  }
  const float mean = block_sum(sum, red) * inv_len;
  float m2 = 0.0f;
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(xg);
    for (unsigned i = threadIdx.x; i < group_len / 4; i += blockDim.x) {
      const float4 v = x4[i];
      const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
      m2 += fmaf(a, a, b * b) + fmaf(c, c, d * d);
    }
  } else {
    for (unsigned i = threadIdx.x; i < group_len; i += blockDim.x) {
      const float d = xg[i] - mean;
      m2 = fmaf(d, d, m2);
    }
  }
  const float total = block_sum(m2, red);
  if (threadIdx.x == 0) var[blockIdx.x] = total * inv_len;
}

/// sd[i] = sqrt(var[i] + eps) over the N·G groups.
__global__ void evonorm_s0_group_std_kernel(const float* var, float* sd, unsigned count,
                                            float eps) {
  for (unsigned i = global_thread(); i < count; i += grid_threads()) sd[i] = sqrtf(var[i] + eps);
}

/// s = σ(v1[c] · x), c = (i / HW) mod C.
__global__ void evonorm_s0_gate_kernel(const float* x, const float* v1, float* s, unsigned count,
                                       unsigned hw, unsigned channels, bool vectorized) {
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(x);
    auto* s4 = reinterpret_cast<float4*>(s);
    for (unsigned i = global_thread(); i < count / 4; i += grid_threads()) {
      const float k = v1[(4 * i / hw) % channels];
      const float4 v = x4[i];
      s4[i] = make_float4(1.0f / (1.0f + expf(-k * v.x)), 1.0f / (1.0f + expf(-k * v.y)),
                          1.0f / (1.0f + expf(-k * v.z)), 1.0f / (1.0f + expf(-k * v.w)));
    }
  } else {
    for (unsigned i = global_thread(); i < count; i += grid_threads()) {
      s[i] = 1.0f / (1.0f + expf(-v1[(i / hw) % channels] * x[i]));
    }
  }
}

/// a = x · s.
__global__ void evonorm_s0_multiply_kernel(const float* x, const float* s, float* a, unsigned count,
                                           bool vectorized) {
  if (vectorized) {
    const auto* x4 = reinterpret_cast<const float4*>(x);
    const auto* s4 = reinterpret_cast<const float4*>(s);
    auto* a4 = reinterpret_cast<float4*>(a);
    for (unsigned i = global_thread(); i < count / 4; i += grid_threads()) {
      const float4 u = x4[i];
      const float4 v = s4[i];
      a4[i] = make_float4(u.x * v.x, u.y * v.y, u.z * v.z, u.w * v.w);
    }
  } else {
    for (unsigned i = global_thread(); i < count; i += grid_threads()) a[i] = x[i] * s[i];
  }
}

/// y = a / sd[i / L] · γ[c] + β[c], c = (i / HW) mod C.
__global__ void evonorm_s0_scale_kernel(const float* a, const float* sd, const float* gamma,
                                        const float* beta, float* y, unsigned count, unsigned hw,
                                        unsigned channels, unsigned group_len, bool vectorized) {
  if (vectorized) {
    const auto* a4 = reinterpret_cast<const float4*>(a);
    auto* y4 = reinterpret_cast<float4*>(y);
    for (unsigned i = global_thread(); i < count / 4; i += grid_threads()) {
      const unsigned c = (4 * i / hw) % channels;
      const float d = sd[4 * i / group_len];
      const float g = gamma[c];
      const float b = beta[c];
      const float4 v = a4[i];
      y4[i] = make_float4(v.x / d * g + b, v.y / d * g + b, v.z / d * g + b, v.w / d * g + b);
    }
  } else {
    for (unsigned i = global_thread(); i < count; i += grid_threads()) {
      const unsigned c = (i / hw) % channels;
      y[i] = a[i] / sd[i / group_len] * gamma[c] + beta[c];
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Fused: one block per (n, g); statistics on chip; y written once.
// ---------------------------------------------------------------------------------------------------

namespace {

// Per-item helpers: an item is one float (scalar path) or one float4 of a single channel (H·W % 4
// == 0).
__device__ __forceinline__ float item_sum(float v) { return v; }
__device__ __forceinline__ float item_sum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__device__ __forceinline__ float item_sqdev(float v, float mean) {
  const float d = v - mean;
  return d * d;
}
__device__ __forceinline__ float item_sqdev(float4 v, float mean) {
  const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
  return fmaf(a, a, b * b) + fmaf(c, c, d * d);
}

/// x / (1 + exp(-k·x)) · scale + shift, i.e. x·σ(k·x)·scale + shift.
__device__ __forceinline__ float item_apply(float v, float k, float scale, float shift) {
  return fmaf(v / (1.0f + expf(-k * v)), scale, shift);
}
__device__ __forceinline__ float4 item_apply(float4 v, float k, float scale, float shift) {
  return make_float4(item_apply(v.x, k, scale, shift), item_apply(v.y, k, scale, shift),
                     item_apply(v.z, k, scale, shift), item_apply(v.w, k, scale, shift));
}

/// Channel of item i of a group whose first channel is c0 (an item never straddles two channels).
template <typename T>
__device__ __forceinline__ unsigned item_channel(unsigned i, unsigned c0, unsigned hw) {
  return c0 + i * static_cast<unsigned>(sizeof(T) / sizeof(float)) / hw;
}

/// The body of evonorm_s0_fused_kernel for items of type T (float or float4) of one group of `len`
/// items. Mode kFusedRegisters: every item of the group is held in registers (len <= kFusedItems ·
/// blockDim.x), all loads issued before the first use; kFusedShared: staged in `cache` during pass
/// 1; kFusedGlobal: re-read from global memory in passes 2 and 3.
template <typename T>
__device__ __forceinline__ void fused_group(const T* __restrict__ xg, T* __restrict__ yg, T* cache,
                                            unsigned len, float inv_count, unsigned c0, unsigned hw,
                                            const float* v1, const float* gamma, const float* beta,
                                            float eps, unsigned mode, float* red) {
  if (mode == kFusedRegisters) {
    // Issue every load first: the items and, behind them, their channel's v1, γ, β (which are then
    // in registers when the reductions are done).
    T v[kFusedItems];
    float k[kFusedItems], g[kFusedItems], b[kFusedItems];
#pragma unroll
    for (unsigned u = 0; u < kFusedItems; ++u) {
      const unsigned i = threadIdx.x + u * blockDim.x;
      if (i < len) {
        v[u] = __ldg(xg + i);
        const unsigned c = item_channel<T>(i, c0, hw);
        k[u] = __ldg(v1 + c);
        g[u] = __ldg(gamma + c);
        b[u] = __ldg(beta + c);
      }
    }
    float sum = 0.0f;
#pragma unroll
    for (unsigned u = 0; u < kFusedItems; ++u) {
      if (threadIdx.x + u * blockDim.x < len) sum += item_sum(v[u]);
    }
    const float mean = block_sum(sum, red) * inv_count;
    float m2 = 0.0f;
#pragma unroll
    for (unsigned u = 0; u < kFusedItems; ++u) {
      if (threadIdx.x + u * blockDim.x < len) m2 += item_sqdev(v[u], mean);
    }
    const float rsd = rsqrtf(block_sum(m2, red) * inv_count + eps);
#pragma unroll
    for (unsigned u = 0; u < kFusedItems; ++u) {
      const unsigned i = threadIdx.x + u * blockDim.x;
      if (i < len) yg[i] = item_apply(v[u], k[u], g[u] * rsd, b[u]);
    }
    return;
  }
  const bool staged = mode == kFusedShared;
  float sum = 0.0f;
  for (unsigned i = threadIdx.x; i < len; i += blockDim.x) {
    const T v = __ldg(xg + i);
    if (staged) cache[i] = v;
    sum += item_sum(v);
  }
  const float mean = block_sum(sum, red) * inv_count;
  float m2 = 0.0f;  // exact two-pass: each thread re-reads the items it staged
  for (unsigned i = threadIdx.x; i < len; i += blockDim.x) {
    m2 += item_sqdev(staged ? cache[i] : __ldg(xg + i), mean);
  }
  const float rsd = rsqrtf(block_sum(m2, red) * inv_count + eps);
  for (unsigned i = threadIdx.x; i < len; i += blockDim.x) {
    const unsigned c = item_channel<T>(i, c0, hw);
    yg[i] = item_apply(staged ? cache[i] : __ldg(xg + i), __ldg(v1 + c), __ldg(gamma + c) * rsd,
                       __ldg(beta + c));
  }
}

}  // namespace

/// One block per group ng = n·G + g (x[ng·L, (ng+1)·L)); `mode` as fused_group; `vectorized`: items
/// are float4 (H·W % 4 == 0, 16-byte aligned x and y), else float. Dynamic shared memory: L floats
/// in mode kFusedShared, none otherwise.
__global__ void evonorm_s0_fused_kernel(
    const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
    const float* __restrict__ v1, float* __restrict__ y, unsigned group_len, unsigned hw,
    unsigned channels_per_group, unsigned groups, float eps, unsigned mode, bool vectorized) {
  extern __shared__ float4 cache4[];
  __shared__ float red[32];
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * group_len;
  const unsigned c0 = (blockIdx.x % groups) * channels_per_group;
  const float inv_count = 1.0f / static_cast<float>(group_len);
  if (vectorized) {
    fused_group(reinterpret_cast<const float4*>(x + base), reinterpret_cast<float4*>(y + base),
                cache4, group_len / 4, inv_count, c0, hw, v1, gamma, beta, eps, mode, red);
  } else {
    fused_group(x + base, y + base, reinterpret_cast<float*>(cache4), group_len, inv_count, c0, hw,
                v1, gamma, beta, eps, mode, red);
  }
}

// ---------------------------------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------------------------------

void launch_evonorm_unfused(const float* x, const EvoNormParams& params, float* y,
                            const EvoNormShape& shape, const EvoNormScratch& scratch, float eps,
                            cudaStream_t stream) {
  validate(x, params, y, shape, eps);
  const std::size_t count = shape.elements();
  if (count == 0) {
    return;
  }
  if (scratch.var == nullptr || scratch.sd == nullptr || scratch.gate == nullptr ||
      scratch.product == nullptr) {
    throw std::invalid_argument("evonorm: null scratch pointer");
  }
  const auto n = static_cast<unsigned>(count);
  const auto hw = static_cast<unsigned>(shape.h) * static_cast<unsigned>(shape.w);
  const auto channels = static_cast<unsigned>(shape.c);
  const auto group_len = static_cast<unsigned>(shape.group_elements());
  const auto groups = static_cast<unsigned>(shape.group_count());
  const bool vec = hw % 4 == 0 && aligned16(x) && aligned16(y) && aligned16(scratch.gate) &&
                   aligned16(scratch.product);
  const unsigned work = vec ? n / 4 : n;

  evonorm_s0_group_var_kernel<<<groups, kThreads, 0, stream>>>(x, scratch.var, group_len, vec);
  FUSELENS_CUDA_CHECK_LAST();
  evonorm_s0_group_std_kernel<<<grid_for(groups), kThreads, 0, stream>>>(scratch.var, scratch.sd,
                                                                         groups, eps);
  FUSELENS_CUDA_CHECK_LAST();
  evonorm_s0_gate_kernel<<<grid_for(work), kThreads, 0, stream>>>(x, params.v1, scratch.gate, n, hw,
                                                                  channels, vec);
  FUSELENS_CUDA_CHECK_LAST();
  evonorm_s0_multiply_kernel<<<grid_for(work), kThreads, 0, stream>>>(x, scratch.gate,
                                                                      scratch.product, n, vec);
  FUSELENS_CUDA_CHECK_LAST();
  evonorm_s0_scale_kernel<<<grid_for(work), kThreads, 0, stream>>>(
      scratch.product, scratch.sd, params.gamma, params.beta, y, n, hw, channels, group_len, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_evonorm_fused(const float* x, const EvoNormParams& params, float* y,
                          const EvoNormShape& shape, float eps, cudaStream_t stream) {
  validate(x, params, y, shape, eps);
  if (shape.elements() == 0) {
    return;
  }
  const auto hw = static_cast<unsigned>(shape.h) * static_cast<unsigned>(shape.w);
  const auto group_len = static_cast<unsigned>(shape.group_elements());
  const bool vec = hw % 4 == 0 && aligned16(x) && aligned16(y);
  const unsigned items = vec ? group_len / 4 : group_len;
  const unsigned threads = fused_threads(items);
  const unsigned mode = !evonorm_fused_is_cached(shape)  ? kFusedGlobal
                        : items <= kFusedItems * threads ? kFusedRegisters
                                                         : kFusedShared;
  const std::size_t smem = mode == kFusedShared ? std::size_t{group_len} * sizeof(float) : 0;
  evonorm_s0_fused_kernel<<<static_cast<unsigned>(shape.group_count()), threads, smem, stream>>>(
      x, params.gamma, params.beta, params.v1, y, group_len, hw,
      static_cast<unsigned>(shape.c / shape.groups), static_cast<unsigned>(shape.groups), eps, mode,
      vec);
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace fuselens::kernels
