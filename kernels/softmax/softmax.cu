#include "softmax/softmax.cuh"

#include "common/cuda_check.h"
#include "common/row_launch.cuh"

#include <cooperative_groups.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

using rowwise::group_max;
using rowwise::group_sum;
using rowwise::kBlock;
using rowwise::kFullMask;
using rowwise::kWarpRowsPerBlock;
using rowwise::load_slice;

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
  const auto [row, t, begin, end] = rowwise::row_slice<kGroup>(cols, slice, cluster_blocks);
  if (kGroup == 32 && row >= rows) return;  // whole warps only; no block-wide barrier follows
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

using rowwise::aligned16;
using rowwise::column_blocks;

void check_sizes(int rows, int cols) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("softmax: rows and cols must be >= 0, got " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  }
}

/// rowwise::clusters_usable for softmax_fused_kernel, cached per device.
bool clusters_usable() {
  static std::array<std::atomic<int>, 64> cache{};  // 0 unknown, 1 no, 2 yes
  return rowwise::clusters_usable(
      reinterpret_cast<const void*>(softmax_fused_kernel<kBlock, 16, true>), cache);
}

template <int kGroup, int kItems>
void launch_fused_plain(bool vec, const float* x, float* y, int rows, int cols,
                        cudaStream_t stream) {
  const unsigned blocks = rowwise::plain_blocks<kGroup>(rows);
  const unsigned threads = rowwise::plain_threads<kGroup>();
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
  const rowwise::ClusterLaunch launch("softmax", rows, cols, stream);
  if (vec) {
    FUSELENS_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, softmax_fused_kernel<kBlock, 16, true>,
                                           x, y, rows, cols, launch.slice, launch.cluster_blocks));
  } else {
    FUSELENS_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, softmax_fused_kernel<kBlock, 16, false>,
                                           x, y, rows, cols, launch.slice, launch.cluster_blocks));
  }
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace

SoftmaxFusedPath softmax_fused_path(int cols) {
  return rowwise::fused_path<SoftmaxFusedPath>(cols, [] { return clusters_usable(); });
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
  const SoftmaxFusedPath path = softmax_fused_path(cols);
  switch (path) {
    case SoftmaxFusedPath::WarpPerRow:
    case SoftmaxFusedPath::BlockPerRow:
      return rowwise::by_row_length(
          path == SoftmaxFusedPath::WarpPerRow, cols, [&](auto group, auto items) {
            launch_fused_plain<decltype(group)::value, decltype(items)::value>(vec, x, y, rows,
                                                                               cols, stream);
          });
    case SoftmaxFusedPath::ClusterPerRow:
      return launch_fused_cluster(vec, x, y, rows, cols, stream);
    case SoftmaxFusedPath::Online:
      return launch_softmax_online(x, y, rows, cols, stream);
  }
}

}  // namespace fuselens::kernels
