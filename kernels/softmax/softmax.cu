#include "softmax/softmax.cuh"

#include "common/cuda_check.h"

#include <cooperative_groups.h>

#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

constexpr int kBlock = 256;           // threads of every block-per-row kernel
constexpr int kWarpRowsPerBlock = 4;  // warp-per-row kernel: 4 rows per 128-thread block
constexpr int kSliceCols = 4096;      // columns one 256-thread block holds in registers (16 each)
constexpr int kMaxClusterBlocks = 8;  // portable cluster size limit
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// xor butterfly: a + b == b + a in IEEE arithmetic, so every lane ends with the same bits.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

/// Max over the group (a warp when kGroup == 32, else the whole block); every thread gets the
/// result. `scratch` holds kGroup / 32 floats and must not be reused by the caller without a
/// __syncthreads.
template <int kGroup>
__device__ __forceinline__ float group_max(float v, float* scratch) {
  v = warp_max(v);
  if constexpr (kGroup > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < kGroup / 32; ++w) v = fmaxf(v, scratch[w]);
  }
  return v;
}

template <int kGroup>
__device__ __forceinline__ float group_sum(float v, float* scratch) {
  v = warp_sum(v);
  if constexpr (kGroup > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < kGroup / 32; ++w) v += scratch[w];
  }
  return v;
}

/// Merge of two online-softmax states (max m, sum s of exp(x - m)). Symmetric in its arguments, so
/// an xor butterfly leaves the same bits in every lane. s == 0 marks an empty state (m may be
/// -inf).
__device__ __forceinline__ void merge_online(float& m, float& s, float m2, float s2) {
  const float mm = fmaxf(m, m2);
  const float a = s == 0.0f ? 0.0f : s * expf(m - mm);
  const float b = s2 == 0.0f ? 0.0f : s2 * expf(m2 - mm);
  m = mm;
  s = a + b;
}

/// Thread t of a group of kGroup threads holds columns [begin, end) of one row:
///   kVec:  float4 number j at column begin + 4 * (j * kGroup + t), j < kItems / 4 (coalesced
///   float4s) else:  element j at column begin + j * kGroup + t, j < kItems
/// Columns at or past `end` get `fill`. kVec requires begin % 4 == 0 and end % 4 == 0.
template <int kGroup, int kItems, bool kVec>
__device__ __forceinline__ void load_slice(const float* __restrict__ src, int begin, int end, int t,
                                           float (&v)[kItems], float fill) {
  if constexpr (kVec) {
#pragma unroll
    for (int j = 0; j < kItems / 4; ++j) {
      const int c = begin + 4 * (j * kGroup + t);
      float4 q = make_float4(fill, fill, fill, fill);
      if (c < end) q = *reinterpret_cast<const float4*>(src + c);
      v[4 * j] = q.x, v[4 * j + 1] = q.y, v[4 * j + 2] = q.z, v[4 * j + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = begin + j * kGroup + t;
      v[j] = c < end ? src[c] : fill;
    }
  }
}

/// dst[c] = v[j] * scale for the columns this thread holds (layout as load_slice).
template <int kGroup, int kItems, bool kVec>
__device__ __forceinline__ void store_slice(float* __restrict__ dst, int begin, int end, int t,
                                            const float (&v)[kItems], float scale) {
  if constexpr (kVec) {
#pragma unroll
    for (int j = 0; j < kItems / 4; ++j) {
      const int c = begin + 4 * (j * kGroup + t);
      if (c < end) {
        *reinterpret_cast<float4*>(dst + c) = make_float4(
            v[4 * j] * scale, v[4 * j + 1] * scale, v[4 * j + 2] * scale, v[4 * j + 3] * scale);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = begin + j * kGroup + t;
      if (c < end) dst[c] = v[j] * scale;
    }
  }
}

enum class RowOp { Max, Sum };

/// One block per row: thread 0 writes max or sum over the row's `cols` elements to out[row].
template <RowOp kOp>
__device__ __forceinline__ void row_reduce(const float* __restrict__ in, float* __restrict__ out,
                                           int cols, bool vec) {
  __shared__ float scratch[kBlock / 32];
  const float* row = in + static_cast<std::size_t>(blockIdx.x) * cols;
  float acc = kOp == RowOp::Max ? -INFINITY : 0.0f;
  auto take = [&](float v) { acc = kOp == RowOp::Max ? fmaxf(acc, v) : acc + v; };
  int done = 0;
  if (vec) {
    const auto* row4 = reinterpret_cast<const float4*>(row);
    for (int i = threadIdx.x; i < cols / 4; i += kBlock) {
      const float4 q = row4[i];
      take(q.x), take(q.y), take(q.z), take(q.w);
    }
    done = cols / 4 * 4;
  }
  for (int c = done + threadIdx.x; c < cols; c += kBlock) take(row[c]);
  acc = kOp == RowOp::Max ? group_max<kBlock>(acc, scratch) : group_sum<kBlock>(acc, scratch);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

/// Element-wise over one row per blockIdx.x, columns spread over blockIdx.y (grid-stride in y):
/// out[c] = op(in[c], per_row[row]).
template <class Op>
__device__ __forceinline__ void row_map(const float* __restrict__ in,
                                        const float* __restrict__ per_row, float* __restrict__ out,
                                        int cols, bool vec, Op op) {
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const float r = per_row[blockIdx.x];
  const int first = blockIdx.y * kBlock + threadIdx.x;
  const int stride = gridDim.y * kBlock;
  int done = 0;
  if (vec) {
    const auto* in4 = reinterpret_cast<const float4*>(in + offset);
    auto* out4 = reinterpret_cast<float4*>(out + offset);
    for (int i = first; i < cols / 4; i += stride) {
      const float4 q = in4[i];
      out4[i] = make_float4(op(q.x, r), op(q.y, r), op(q.z, r), op(q.w, r));
    }
    done = cols / 4 * 4;
  }
  for (int c = done + first; c < cols; c += stride) out[offset + c] = op(in[offset + c], r);
}

struct ExpShifted {
  __device__ float operator()(float v, float m) const { return expf(v - m); }
};
struct Divide {
  __device__ float operator()(float v, float s) const { return v / s; }
};

}  // namespace

// ---- unfused: four kernels ---------------------------------------------------------------------

__global__ void __launch_bounds__(kBlock)
    softmax_row_max_kernel(const float* __restrict__ x, float* __restrict__ row_max, int cols,
                           bool vec) {
  row_reduce<RowOp::Max>(x, row_max, cols, vec);
}

__global__ void __launch_bounds__(kBlock)
    softmax_exp_kernel(const float* __restrict__ x, const float* __restrict__ row_max,
                       float* __restrict__ exps, int cols, bool vec) {
  row_map(x, row_max, exps, cols, vec, ExpShifted{});
}

__global__ void __launch_bounds__(kBlock)
    softmax_row_sum_kernel(const float* __restrict__ exps, float* __restrict__ row_sum, int cols,
                           bool vec) {
  row_reduce<RowOp::Sum>(exps, row_sum, cols, vec);
}

__global__ void __launch_bounds__(kBlock)
    softmax_divide_kernel(const float* __restrict__ exps, const float* __restrict__ row_sum,
                          float* __restrict__ y, int cols, bool vec) {
  row_map(exps, row_sum, y, cols, vec, Divide{});
}

// ---- fused: the row held in registers -----------------------------------------------------------

/// kGroup == 32: a warp per row, kWarpRowsPerBlock rows per block, cluster_blocks must be 1.
/// kGroup == 256: blocks [row * cluster_blocks, (row + 1) * cluster_blocks) share row `row`; block
/// of cluster rank r holds columns [r * slice, min(cols, (r + 1) * slice)). cluster_blocks > 1 only
/// when launched as a cluster of that many blocks (sm_90+).
template <int kGroup, int kItems, bool kVec>
__global__ void __launch_bounds__(kGroup == 32 ? 32 * kWarpRowsPerBlock : kGroup)
    softmax_fused_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols,
                         int slice, int cluster_blocks) {
  __shared__ float max_scratch[kGroup / 32];
  __shared__ float sum_scratch[kGroup / 32];
  int row = 0, t = 0, begin = 0, end = cols;
  if constexpr (kGroup == 32) {
    row = static_cast<int>(blockIdx.x) * kWarpRowsPerBlock + static_cast<int>(threadIdx.x) / 32;
    t = static_cast<int>(threadIdx.x) % 32;
    if (row >= rows) return;  // whole warps only; no block-wide barrier follows
  } else {
    row = static_cast<int>(blockIdx.x) / cluster_blocks;
    t = static_cast<int>(threadIdx.x);
    begin = (static_cast<int>(blockIdx.x) % cluster_blocks) * slice;
    end = min(cols, begin + slice);
  }
  const std::size_t offset = static_cast<std::size_t>(row) * cols;

  float v[kItems];
  load_slice<kGroup, kItems, kVec>(x + offset, begin, end, t, v, -INFINITY);
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kItems; ++j) m = fmaxf(m, v[j]);
  m = group_max<kGroup>(m, max_scratch);
  const float shift = m == -INFINITY ? 0.0f : m;  // an empty slice: every v is -inf, exp gives 0
  float s = 0.0f;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    v[j] = expf(v[j] - shift);
    s += v[j];
  }
  s = group_sum<kGroup>(s, sum_scratch);

  float scale = 1.0f / s;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ float2 partial;  // this block's (max, sum), read by the other blocks of the cluster
  if (kGroup > 32 && cluster_blocks > 1) {
    const cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) partial = make_float2(m, s);
    cluster.sync();
    float row_m = -INFINITY, row_s = 0.0f;
    for (int b = 0; b < cluster_blocks; ++b) {  // same order in every block: same bits
      const float2 p = *cluster.map_shared_rank(&partial, b);
      merge_online(row_m, row_s, p.x, p.y);
    }
    cluster.barrier_arrive();  // done reading the others' shared memory
    scale = (s == 0.0f ? 0.0f : expf(m - row_m)) / row_s;
    store_slice<kGroup, kItems, kVec>(y + offset, begin, end, t, v, scale);
    cluster.barrier_wait();  // keep this block's `partial` alive until every block has read it
    return;
  }
#endif
  store_slice<kGroup, kItems, kVec>(y + offset, begin, end, t, v, scale);
}

// ---- online: streaming, any row length ----------------------------------------------------------

__global__ void __launch_bounds__(kBlock)
    softmax_online_kernel(const float* __restrict__ x, float* __restrict__ y, int cols, bool vec) {
  __shared__ float m_scratch[kBlock / 32];
  __shared__ float s_scratch[kBlock / 32];
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const float* row = x + offset;
  const int t = static_cast<int>(threadIdx.x);
  float m = -INFINITY, s = 0.0f;
  // Pass 1: running max and rescaled running sum, one rescale per float4 (or element) that raises
  // m.
  int done = 0;
  if (vec) {
    constexpr int kBatch = 4;  // float4 loads issued before they are consumed
    const auto* row4 = reinterpret_cast<const float4*>(row);
    const int n4 = cols / 4;
    for (int base = t; base < n4; base += kBatch * kBlock) {
      float4 q[kBatch];
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        const int i = base + k * kBlock;
        q[k] = i < n4 ? row4[i] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
      }
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        const float mq = fmaxf(fmaxf(q[k].x, q[k].y), fmaxf(q[k].z, q[k].w));
        if (mq == -INFINITY) continue;
        if (mq > m) {
          s *= expf(m - mq);  // m == -inf: s is 0 and stays 0
          m = mq;
        }
        s += expf(q[k].x - m) + expf(q[k].y - m) + expf(q[k].z - m) + expf(q[k].w - m);
      }
    }
    done = n4 * 4;
  }
  for (int c = done + t; c < cols; c += kBlock) {
    const float v = row[c];
    if (v > m) {
      s *= expf(m - v);
      m = v;
    }
    s += expf(v - m);
  }
  // Merge the threads' states: warp butterfly, then the warps' states in a fixed order.
  for (int o = 16; o > 0; o >>= 1) {
    merge_online(m, s, __shfl_xor_sync(kFullMask, m, o), __shfl_xor_sync(kFullMask, s, o));
  }
  if (t % 32 == 0) m_scratch[t / 32] = m, s_scratch[t / 32] = s;
  __syncthreads();
  m = m_scratch[0], s = s_scratch[0];
  for (int w = 1; w < kBlock / 32; ++w) merge_online(m, s, m_scratch[w], s_scratch[w]);
  const float inv = 1.0f / s;
  // Pass 2: read the row again (usually from L2) and write y.
  float* out = y + offset;
  done = 0;
  if (vec) {
    const auto* row4 = reinterpret_cast<const float4*>(row);
    auto* out4 = reinterpret_cast<float4*>(out);
    for (int i = t; i < cols / 4; i += kBlock) {
      const float4 q = row4[i];
      out4[i] = make_float4(expf(q.x - m) * inv, expf(q.y - m) * inv, expf(q.z - m) * inv,
                            expf(q.w - m) * inv);
    }
    done = cols / 4 * 4;
  }
  for (int c = done + t; c < cols; c += kBlock) out[c] = expf(row[c] - m) * inv;
}

// ---- host side ----------------------------------------------------------------------------------

namespace {

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void check_sizes(int rows, int cols) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("softmax: rows and cols must be >= 0, got " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  }
}

/// Blocks in grid.y for an element-wise pass over `cols` columns (one float4 or element per
/// thread).
unsigned column_blocks(int cols, bool vec) {
  const int work = vec ? cols / 4 + cols % 4 : cols;
  const int blocks = (work + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

/// True when the current device launches clusters and this binary's fused kernel was built for
/// sm_90+ (PTX JIT-compiled from an older virtual architecture would lack the cluster code). Cached
/// per device.
bool clusters_usable() {
  static std::array<std::atomic<int>, 64> cache{};  // 0 unknown, 1 no, 2 yes
  int device = 0;
  FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
  if (device >= 0 && device < static_cast<int>(cache.size())) {
    if (const int known = cache[static_cast<std::size_t>(device)].load(std::memory_order_relaxed)) {
      return known == 2;
    }
  }
  int cluster_launch = 0;
  FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, device));
  cudaFuncAttributes attributes{};
  FUSELENS_CUDA_CHECK(cudaFuncGetAttributes(&attributes, softmax_fused_kernel<kBlock, 16, true>));
  const bool usable = cluster_launch != 0 && attributes.ptxVersion >= 90;
  if (device >= 0 && device < static_cast<int>(cache.size())) {
    cache[static_cast<std::size_t>(device)].store(usable ? 2 : 1, std::memory_order_relaxed);
  }
  return usable;
}

template <int kGroup, int kItems>
void launch_fused_plain(bool vec, const float* x, float* y, int rows, int cols,
                        cudaStream_t stream) {
  const unsigned blocks =
      kGroup == 32 ? static_cast<unsigned>((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock)
                   : static_cast<unsigned>(rows);
  const unsigned threads = kGroup == 32 ? 32 * kWarpRowsPerBlock : kGroup;
  if (vec) {
    softmax_fused_kernel<kGroup, kItems, true>
        <<<blocks, threads, 0, stream>>>(x, y, rows, cols, cols, 1);
  } else {
    softmax_fused_kernel<kGroup, kItems, false>
        <<<blocks, threads, 0, stream>>>(x, y, rows, cols, cols, 1);
  }
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_fused_cluster(bool vec, const float* x, float* y, int rows, int cols,
                          cudaStream_t stream) {
  const int cluster_blocks = (cols + kSliceCols - 1) / kSliceCols;
  int slice = (cols + cluster_blocks - 1) / cluster_blocks;
  slice = (slice + 3) / 4 * 4;  // float4 alignment of every slice; still <= kSliceCols
  const long long blocks = static_cast<long long>(rows) * cluster_blocks;
  if (blocks > INT_MAX) {
    throw std::invalid_argument("softmax: rows x cluster blocks exceeds the grid limit");
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kBlock);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(cluster_blocks);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  if (vec) {
    FUSELENS_CUDA_CHECK(cudaLaunchKernelEx(&config, softmax_fused_kernel<kBlock, 16, true>, x, y,
                                           rows, cols, slice, cluster_blocks));
  } else {
    FUSELENS_CUDA_CHECK(cudaLaunchKernelEx(&config, softmax_fused_kernel<kBlock, 16, false>, x, y,
                                           rows, cols, slice, cluster_blocks));
  }
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace

SoftmaxFusedPath softmax_fused_path(int cols) {
  if (cols <= 32 * 32) return SoftmaxFusedPath::WarpPerRow;
  if (cols <= kSliceCols) return SoftmaxFusedPath::BlockPerRow;
  if (cols <= kSliceCols * kMaxClusterBlocks && clusters_usable())
    return SoftmaxFusedPath::ClusterPerRow;
  return SoftmaxFusedPath::Online;
}

void launch_softmax_unfused(const float* x, float* y, int rows, int cols,
                            const SoftmaxScratch& scratch, cudaStream_t stream) {
  check_sizes(rows, cols);
  if (rows == 0 || cols == 0) return;
  const bool vec = cols % 4 == 0 && aligned16(x) && aligned16(y) && aligned16(scratch.exps);
  const auto row_blocks = static_cast<unsigned>(rows);
  const dim3 map_grid(row_blocks, column_blocks(cols, vec));
  softmax_row_max_kernel<<<row_blocks, kBlock, 0, stream>>>(x, scratch.row_max, cols, vec);
  FUSELENS_CUDA_CHECK_LAST();
  softmax_exp_kernel<<<map_grid, kBlock, 0, stream>>>(x, scratch.row_max, scratch.exps, cols, vec);
  FUSELENS_CUDA_CHECK_LAST();
  softmax_row_sum_kernel<<<row_blocks, kBlock, 0, stream>>>(scratch.exps, scratch.row_sum, cols,
                                                            vec);
  FUSELENS_CUDA_CHECK_LAST();
  softmax_divide_kernel<<<map_grid, kBlock, 0, stream>>>(scratch.exps, scratch.row_sum, y, cols,
                                                         vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_softmax_online(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
  check_sizes(rows, cols);
  if (rows == 0 || cols == 0) return;
  const bool vec = cols % 4 == 0 && aligned16(x) && aligned16(y);
  softmax_online_kernel<<<static_cast<unsigned>(rows), kBlock, 0, stream>>>(x, y, cols, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_softmax_fused(const float* x, float* y, int rows, int cols, cudaStream_t stream) {
  check_sizes(rows, cols);
  if (rows == 0 || cols == 0) return;
  const bool vec = cols % 4 == 0 && aligned16(x) && aligned16(y);
  switch (softmax_fused_path(cols)) {
    case SoftmaxFusedPath::WarpPerRow:
      if (cols <= 32 * 4) return launch_fused_plain<32, 4>(vec, x, y, rows, cols, stream);
      if (cols <= 32 * 8) return launch_fused_plain<32, 8>(vec, x, y, rows, cols, stream);
      if (cols <= 32 * 16) return launch_fused_plain<32, 16>(vec, x, y, rows, cols, stream);
      return launch_fused_plain<32, 32>(vec, x, y, rows, cols, stream);
    case SoftmaxFusedPath::BlockPerRow:
      if (cols <= kBlock * 8) return launch_fused_plain<kBlock, 8>(vec, x, y, rows, cols, stream);
      return launch_fused_plain<kBlock, 16>(vec, x, y, rows, cols, stream);
    case SoftmaxFusedPath::ClusterPerRow:
      return launch_fused_cluster(vec, x, y, rows, cols, stream);
    case SoftmaxFusedPath::Online:
      return launch_softmax_online(x, y, rows, cols, stream);
  }
}

}  // namespace fuselens::kernels
