#include "layernorm/layernorm.cuh"

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

using rowwise::kBlock;
using rowwise::kFullMask;
using rowwise::kWarpRowsPerBlock;
constexpr int kMaxCols = 1 << 24;  // counts stay exact in float

/// (count, mean, sum of squared deviations) of a set of values.
struct Stats {
  float n = 0.0f;
  float mean = 0.0f;
  float m2 = 0.0f;
};

/// Chan, Golub & LeVeque's parallel merge, written so that merge(a, b) and merge(b, a) give the
/// same bits (an xor butterfly then leaves identical statistics in every lane).
__device__ __forceinline__ Stats merge(const Stats& a, const Stats& b) {
  const float n = a.n + b.n;
  if (n == 0.0f) return a;
  const float d = b.mean - a.mean;
  return Stats{n, (a.n * a.mean + b.n * b.mean) / n, (a.m2 + b.m2) + d * d * (a.n * b.n / n)};
}

__device__ __forceinline__ Stats warp_merge(Stats s) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const Stats o{__shfl_xor_sync(kFullMask, s.n, offset),
                  __shfl_xor_sync(kFullMask, s.mean, offset),
                  __shfl_xor_sync(kFullMask, s.m2, offset)};
    s = merge(s, o);
  }
  return s;
}

/// Statistics over the group (a warp when kGroup == 32, else the block); every thread gets the
/// result.
template <int kGroup>
__device__ __forceinline__ Stats group_merge(Stats s, float4* scratch) {
  s = warp_merge(s);
  if constexpr (kGroup > 32) {
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = make_float4(s.n, s.mean, s.m2, 0.0f);
    __syncthreads();
    s = Stats{scratch[0].x, scratch[0].y, scratch[0].z};
    for (int w = 1; w < kGroup / 32; ++w)
      s = merge(s, Stats{scratch[w].x, scratch[w].y, scratch[w].z});
  }
  return s;
}

/// Column of item j of thread t (layout of rowwise::load_slice, common/row_launch.cuh):
///   kVec: float4 number j / 4 at begin + 4 · ((j / 4) · kGroup + t), element j % 4 of it
///   else: begin + j · kGroup + t
template <int kGroup, bool kVec>
__device__ __forceinline__ int item_column(int begin, int t, int j) {
  if constexpr (kVec) return begin + 4 * ((j / 4) * kGroup + t) + j % 4;
  return begin + j * kGroup + t;
}

/// rowwise::load_slice with 0 in the columns past the slice's end.
template <int kGroup, int kItems, bool kVec>
__device__ __forceinline__ void load_slice(const float* __restrict__ src, int begin, int end, int t,
                                           float (&v)[kItems]) {
  rowwise::load_slice<kGroup, kItems, kVec>(src, begin, end, t, v, 0.0f);
}

/// dst[c] = (v - mean) · rstd · gamma[c] + beta[c] for the columns this thread holds.
template <int kGroup, int kItems, bool kVec>
__device__ __forceinline__ void store_normalized(float* __restrict__ dst,
                                                 const float* __restrict__ gamma,
                                                 const float* __restrict__ beta, int begin, int end,
                                                 int t, const float (&v)[kItems], float mean,
                                                 float rstd) {
  if constexpr (kVec) {
#pragma unroll
    for (int j = 0; j < kItems / 4; ++j) {
      const int c = begin + 4 * (j * kGroup + t);
      if (c < end) {
        const float4 g = *reinterpret_cast<const float4*>(gamma + c);
        const float4 b = *reinterpret_cast<const float4*>(beta + c);
        *reinterpret_cast<float4*>(dst + c) = make_float4(
            fmaf((v[4 * j] - mean) * rstd, g.x, b.x), fmaf((v[4 * j + 1] - mean) * rstd, g.y, b.y),
            fmaf((v[4 * j + 2] - mean) * rstd, g.z, b.z),
            fmaf((v[4 * j + 3] - mean) * rstd, g.w, b.w));
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int c = begin + j * kGroup + t;
      if (c < end) dst[c] = fmaf((v[j] - mean) * rstd, gamma[c], beta[c]);
    }
  }
}

/// One block per row: sum of `transform(x)` over the row (every thread gets it).
template <class Transform>
__device__ __forceinline__ float block_row_sum(const float* __restrict__ row, int cols, bool vec,
                                               Transform f) {
  __shared__ float scratch[kBlock / 32];
  float acc = 0.0f;
  int done = 0;
  if (vec) {
    const auto* row4 = reinterpret_cast<const float4*>(row);
    for (int i = threadIdx.x; i < cols / 4; i += kBlock) {
      const float4 q = row4[i];
      acc += f(q.x) + f(q.y) + f(q.z) + f(q.w);
    }
    done = cols / 4 * 4;
  }
  for (int c = done + threadIdx.x; c < cols; c += kBlock) acc += f(row[c]);
  return rowwise::group_sum<kBlock>(acc, scratch);
}

}  // namespace

// ---- unfused: four kernels ---------------------------------------------------------------------

__global__ void __launch_bounds__(kBlock)
    layernorm_mean_kernel(const float* __restrict__ x, float* __restrict__ mean, int cols,
                          bool vec) {
  const float* row = x + static_cast<std::size_t>(blockIdx.x) * cols;
  const float sum = block_row_sum(row, cols, vec, [](float v) { return v; });
  if (threadIdx.x == 0) mean[blockIdx.x] = sum / static_cast<float>(cols);
}

__global__ void __launch_bounds__(kBlock)
    layernorm_variance_kernel(const float* __restrict__ x, const float* __restrict__ mean,
                              float* __restrict__ var, int cols, bool vec) {
  const float* row = x + static_cast<std::size_t>(blockIdx.x) * cols;
  const float m = mean[blockIdx.x];
  const float sum = block_row_sum(row, cols, vec, [m](float v) { return (v - m) * (v - m); });
  if (threadIdx.x == 0) var[blockIdx.x] = sum / static_cast<float>(cols);
}

/// Element-wise kernels: one row per blockIdx.x, columns over blockIdx.y (grid-stride in y).
__global__ void __launch_bounds__(kBlock)
    layernorm_normalize_kernel(const float* __restrict__ x, const float* __restrict__ mean,
                               const float* __restrict__ var, float* __restrict__ xhat, int cols,
                               float eps, bool vec) {
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const float m = mean[blockIdx.x];
  const float rstd = rsqrtf(var[blockIdx.x] + eps);
  const int first = blockIdx.y * kBlock + threadIdx.x;
  const int stride = gridDim.y * kBlock;
  int done = 0;
  if (vec) {
    const auto* in4 = reinterpret_cast<const float4*>(x + offset);
    auto* out4 = reinterpret_cast<float4*>(xhat + offset);
    for (int i = first; i < cols / 4; i += stride) {
      const float4 q = in4[i];
      out4[i] = make_float4((q.x - m) * rstd, (q.y - m) * rstd, (q.z - m) * rstd, (q.w - m) * rstd);
    }
    done = cols / 4 * 4;
  }
  for (int c = done + first; c < cols; c += stride) xhat[offset + c] = (x[offset + c] - m) * rstd;
}

__global__ void __launch_bounds__(kBlock)
    layernorm_scale_shift_kernel(const float* __restrict__ xhat, const float* __restrict__ gamma,
                                 const float* __restrict__ beta, float* __restrict__ y, int cols,
                                 bool vec) {
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const int first = blockIdx.y * kBlock + threadIdx.x;
  const int stride = gridDim.y * kBlock;
  int done = 0;
  if (vec) {
    const auto* in4 = reinterpret_cast<const float4*>(xhat + offset);
    const auto* g4 = reinterpret_cast<const float4*>(gamma);
    const auto* b4 = reinterpret_cast<const float4*>(beta);
    auto* out4 = reinterpret_cast<float4*>(y + offset);
    for (int i = first; i < cols / 4; i += stride) {
      const float4 q = in4[i], g = g4[i], b = b4[i];
      out4[i] = make_float4(fmaf(q.x, g.x, b.x), fmaf(q.y, g.y, b.y), fmaf(q.z, g.z, b.z),
                            fmaf(q.w, g.w, b.w));
    }
    done = cols / 4 * 4;
  }
  for (int c = done + first; c < cols; c += stride)
    y[offset + c] = fmaf(xhat[offset + c], gamma[c], beta[c]);
}

// ---- fused: the row held in registers -----------------------------------------------------------

/// Row/slice assignment of rowwise::row_slice (common/row_launch.cuh): kGroup 32 = a warp per row;
/// kGroup 256 = `cluster_blocks` consecutive blocks (a cluster when > 1, sm_90+) per row, rank r
/// holding columns [r · slice, min(cols, (r + 1) · slice)).
template <int kGroup, int kItems, bool kVec>
__global__ void __launch_bounds__(kGroup == 32 ? 32 * kWarpRowsPerBlock : kGroup)
    layernorm_fused_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                           const float* __restrict__ beta, float* __restrict__ y, int rows,
                           int cols, int slice, int cluster_blocks, float eps) {
  __shared__ float4 scratch[kGroup / 32];
  const auto [row, t, begin, end] = rowwise::row_slice<kGroup>(cols, slice, cluster_blocks);
  if (kGroup == 32 && row >= rows) return;  // whole warps only; no block-wide barrier follows
  const std::size_t offset = static_cast<std::size_t>(row) * cols;

  float v[kItems];
  load_slice<kGroup, kItems, kVec>(x + offset, begin, end, t, v);
  // This thread's statistics, exactly from registers: count, mean, then squared deviations.
  Stats s;
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    if (item_column<kGroup, kVec>(begin, t, j) < end) s.n += 1.0f;
    sum += v[j];  // padding holds 0
  }
  s.mean = s.n > 0.0f ? sum / s.n : 0.0f;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const float d = item_column<kGroup, kVec>(begin, t, j) < end ? v[j] - s.mean : 0.0f;
    s.m2 = fmaf(d, d, s.m2);
  }
  s = group_merge<kGroup>(s, scratch);

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ float4 partial;  // this block's (n, mean, M2), read by the other blocks of the cluster
  if (kGroup > 32 && cluster_blocks > 1) {
    const cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) partial = make_float4(s.n, s.mean, s.m2, 0.0f);
    cluster.sync();
    Stats r;
    for (int b = 0; b < cluster_blocks; ++b) {  // same order in every block: same bits
      const float4 p = *cluster.map_shared_rank(&partial, b);
      r = merge(r, Stats{p.x, p.y, p.z});
    }
    cluster.barrier_arrive();  // done reading the others' shared memory
    const float rstd = rsqrtf(r.m2 / r.n + eps);
    store_normalized<kGroup, kItems, kVec>(y + offset, gamma, beta, begin, end, t, v, r.mean, rstd);
    cluster.barrier_wait();  // keep this block's `partial` alive until every block has read it
    return;
  }
#endif
  const float rstd = rsqrtf(s.m2 / s.n + eps);
  store_normalized<kGroup, kItems, kVec>(y + offset, gamma, beta, begin, end, t, v, s.mean, rstd);
}

// ---- online: streaming Welford, any row length --------------------------------------------------

__device__ __forceinline__ void welford_add(Stats& s, float v) {
  s.n += 1.0f;
  const float d = v - s.mean;
  s.mean += d / s.n;
  s.m2 = fmaf(d, v - s.mean, s.m2);
}

__global__ void __launch_bounds__(kBlock)
    layernorm_online_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                            const float* __restrict__ beta, float* __restrict__ y, int cols,
                            float eps, bool vec) {
  __shared__ float4 scratch[kBlock / 32];
  const std::size_t offset = static_cast<std::size_t>(blockIdx.x) * cols;
  const float* row = x + offset;
  const int t = static_cast<int>(threadIdx.x);
  Stats s;
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
        q[k] = i < n4 ? row4[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        if (base + k * kBlock < n4) {
          welford_add(s, q[k].x), welford_add(s, q[k].y), welford_add(s, q[k].z),
              welford_add(s, q[k].w);
        }
      }
    }
    done = n4 * 4;
  }
  for (int c = done + t; c < cols; c += kBlock) welford_add(s, row[c]);
  s = group_merge<kBlock>(s, scratch);
  const float mean = s.mean;
  const float rstd = rsqrtf(s.m2 / s.n + eps);
  // Pass 2: read the row again (usually from L2) and write y.
  float* out = y + offset;
  done = 0;
  if (vec) {
    const auto* row4 = reinterpret_cast<const float4*>(row);
    const auto* g4 = reinterpret_cast<const float4*>(gamma);
    const auto* b4 = reinterpret_cast<const float4*>(beta);
    auto* out4 = reinterpret_cast<float4*>(out);
    for (int i = t; i < cols / 4; i += kBlock) {
      const float4 q = row4[i], g = g4[i], b = b4[i];
      out4[i] =
          make_float4(fmaf((q.x - mean) * rstd, g.x, b.x), fmaf((q.y - mean) * rstd, g.y, b.y),
                      fmaf((q.z - mean) * rstd, g.z, b.z), fmaf((q.w - mean) * rstd, g.w, b.w));
    }
    done = cols / 4 * 4;
  }
  for (int c = done + t; c < cols; c += kBlock)
    out[c] = fmaf((row[c] - mean) * rstd, gamma[c], beta[c]);
}

// ---- host side ----------------------------------------------------------------------------------

namespace {

using rowwise::aligned16;
using rowwise::column_blocks;

void check_arguments(int rows, int cols, float eps) {
  if (rows < 0 || cols < 0 || cols > kMaxCols) {
    throw std::invalid_argument("layernorm: need rows >= 0 and 0 <= cols <= 2^24, got " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  }
  if (!(eps >= 0.0f)) throw std::invalid_argument("layernorm: eps must be >= 0");
}

/// rowwise::clusters_usable for layernorm_fused_kernel, cached per device.
bool clusters_usable() {
  static std::array<std::atomic<int>, 64> cache{};  // 0 unknown, 1 no, 2 yes
  return rowwise::clusters_usable(
      reinterpret_cast<const void*>(layernorm_fused_kernel<kBlock, 16, true>), cache);
}

struct Args {
  const float* x;
  const float* gamma;
  const float* beta;
  float* y;
  int rows;
  int cols;
  float eps;
};

template <int kGroup, int kItems>
void launch_fused_plain(bool vec, const Args& a, cudaStream_t stream) {
  const unsigned blocks = rowwise::plain_blocks<kGroup>(a.rows);
  const unsigned threads = rowwise::plain_threads<kGroup>();
  if (vec) {
    layernorm_fused_kernel<kGroup, kItems, true><<<blocks, threads, 0, stream>>>(
        a.x, a.gamma, a.beta, a.y, a.rows, a.cols, a.cols, 1, a.eps);
  } else {
    layernorm_fused_kernel<kGroup, kItems, false><<<blocks, threads, 0, stream>>>(
        a.x, a.gamma, a.beta, a.y, a.rows, a.cols, a.cols, 1, a.eps);
  }
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_fused_cluster(bool vec, const Args& a, cudaStream_t stream) {
  const rowwise::ClusterLaunch launch("layernorm", a.rows, a.cols, stream);
  if (vec) {
    FUSELENS_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, layernorm_fused_kernel<kBlock, 16, true>,
                                           a.x, a.gamma, a.beta, a.y, a.rows, a.cols, launch.slice,
                                           launch.cluster_blocks, a.eps));
  } else {
    FUSELENS_CUDA_CHECK(cudaLaunchKernelEx(
        &launch.config, layernorm_fused_kernel<kBlock, 16, false>, a.x, a.gamma, a.beta, a.y,
        a.rows, a.cols, launch.slice, launch.cluster_blocks, a.eps));
  }
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace

LayerNormFusedPath layernorm_fused_path(int cols) {
  return rowwise::fused_path<LayerNormFusedPath>(cols, [] { return clusters_usable(); });
}

void launch_layernorm_unfused(const float* x, const float* gamma, const float* beta, float* y,
                              int rows, int cols, const LayerNormScratch& scratch, float eps,
                              cudaStream_t stream) {
  check_arguments(rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  const bool vec = cols % 4 == 0 && aligned16(x) && aligned16(gamma) && aligned16(beta) &&
                   aligned16(y) && aligned16(scratch.xhat);
  const auto row_blocks = static_cast<unsigned>(rows);
  const dim3 map_grid(row_blocks, column_blocks(cols, vec));
  layernorm_mean_kernel<<<row_blocks, kBlock, 0, stream>>>(x, scratch.mean, cols, vec);
  FUSELENS_CUDA_CHECK_LAST();
  layernorm_variance_kernel<<<row_blocks, kBlock, 0, stream>>>(x, scratch.mean, scratch.var, cols,
                                                               vec);
  FUSELENS_CUDA_CHECK_LAST();
  layernorm_normalize_kernel<<<map_grid, kBlock, 0, stream>>>(x, scratch.mean, scratch.var,
                                                              scratch.xhat, cols, eps, vec);
  FUSELENS_CUDA_CHECK_LAST();
  layernorm_scale_shift_kernel<<<map_grid, kBlock, 0, stream>>>(scratch.xhat, gamma, beta, y, cols,
                                                                vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_layernorm_online(const float* x, const float* gamma, const float* beta, float* y,
                             int rows, int cols, float eps, cudaStream_t stream) {
  check_arguments(rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  const bool vec =
      cols % 4 == 0 && aligned16(x) && aligned16(gamma) && aligned16(beta) && aligned16(y);
  layernorm_online_kernel<<<static_cast<unsigned>(rows), kBlock, 0, stream>>>(x, gamma, beta, y,
                                                                              cols, eps, vec);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_layernorm_fused(const float* x, const float* gamma, const float* beta, float* y,
                            int rows, int cols, float eps, cudaStream_t stream) {
  check_arguments(rows, cols, eps);
  if (rows == 0 || cols == 0) return;
  const bool vec =
      cols % 4 == 0 && aligned16(x) && aligned16(gamma) && aligned16(beta) && aligned16(y);
  const Args a{x, gamma, beta, y, rows, cols, eps};
  const LayerNormFusedPath path = layernorm_fused_path(cols);
  switch (path) {
    case LayerNormFusedPath::WarpPerRow:
    case LayerNormFusedPath::BlockPerRow:
      return rowwise::by_row_length(
          path == LayerNormFusedPath::WarpPerRow, cols, [&](auto group, auto items) {
            launch_fused_plain<decltype(group)::value, decltype(items)::value>(vec, a, stream);
          });
    case LayerNormFusedPath::ClusterPerRow:
      return launch_fused_cluster(vec, a, stream);
    case LayerNormFusedPath::Online:
      return launch_layernorm_online(x, gamma, beta, y, rows, cols, eps, stream);
  }
}

}  // namespace fuselens::kernels
