#pragma once
// Row-reduction plumbing shared by the row-wise ops (kernels/softmax, kernels/layernorm): one row
// of a row-major [rows × cols] FP32 matrix is reduced (max/sum, or mean/variance) and the row is
// written back transformed. Every op has the same four variants and the same launch shapes:
//   unfused   block-per-row reductions (kBlock threads) and element-wise passes with one row per
//             blockIdx.x and the columns over blockIdx.y (column_blocks);
//   fused     the row held in registers, kItems values per thread: a warp per row (cols <= 1024,
//             kWarpRowsPerBlock rows per block), a block per row (cols <= kSliceCols), or a thread
//             block cluster of up to kMaxClusterBlocks blocks per row (sm_90+, cols <= 32768);
//   online    one streaming block per row, any length.
// This header holds what those variants share: the launch constants, warp and block reductions,
// the register layout of a row slice (load_slice), the row/slice a fused thread owns (row_slice),
// and the host side: float4 alignment, grid sizes, the choice of fused path by row length, the
// compile-time dispatch on row length, and the cluster launch configuration. The ops keep their
// arithmetic (kernels/<op>/<op>.cu).

#include "common/cuda_check.h"

#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace fuselens::kernels::rowwise {

inline constexpr int kBlock = 256;           ///< threads of every block-per-row kernel
inline constexpr int kWarpRowsPerBlock = 4;  ///< warp-per-row kernel: 4 rows per 128-thread block
inline constexpr int kSliceCols = 4096;      ///< columns one 256-thread block holds (16 each)
inline constexpr int kMaxClusterBlocks = 8;  ///< portable cluster size limit
inline constexpr unsigned kFullMask = 0xffffffffu;

// ---- device side
// ---------------------------------------------------------------------------------

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

/// xor butterfly: a + b == b + a in IEEE arithmetic, so every lane ends with the same bits.
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

/// Sum over the group, as group_max: the warps' sums added in warp order, so every thread gets
/// the same bits.
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

/// Thread t of a group of kGroup threads holds columns [begin, end) of one row:
///   kVec: float4 number j at column begin + 4 * (j * kGroup + t), j < kItems / 4 (coalesced
///         float4s)
///   else: element j at column begin + j * kGroup + t, j < kItems
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

/// The part of the matrix one thread of a fused kernel owns: row `row`, lane `t` of its group,
/// columns [begin, end) of that row.
struct RowSlice {
  int row = 0;
  int t = 0;
  int begin = 0;
  int end = 0;
};

/// kGroup == 32: a warp per row, kWarpRowsPerBlock rows per block (cluster_blocks must be 1; the
/// row may be >= rows in the last block: the caller returns, whole warps only).
/// kGroup == 256: blocks [row * cluster_blocks, (row + 1) * cluster_blocks) share row `row`; the
/// block of cluster rank r holds columns [r * slice, min(cols, (r + 1) * slice)).
template <int kGroup>
__device__ __forceinline__ RowSlice row_slice(int cols, int slice, int cluster_blocks) {
  RowSlice s;
  s.end = cols;
  if constexpr (kGroup == 32) {
    s.row = static_cast<int>(blockIdx.x) * kWarpRowsPerBlock + static_cast<int>(threadIdx.x) / 32;
    s.t = static_cast<int>(threadIdx.x) % 32;
  } else {
    s.row = static_cast<int>(blockIdx.x) / cluster_blocks;
    s.t = static_cast<int>(threadIdx.x);
    s.begin = (static_cast<int>(blockIdx.x) % cluster_blocks) * slice;
    s.end = min(cols, s.begin + slice);
  }
  return s;
}

// ---- host side
// -----------------------------------------------------------------------------------

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// Blocks in grid.y for an element-wise pass over `cols` columns (one float4 or element per
/// thread), between 1 and 65535.
inline unsigned column_blocks(int cols, bool vec) {
  const int work = vec ? cols / 4 + cols % 4 : cols;
  const int blocks = (work + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

/// True when the current device launches clusters and `fused_kernel` (the op's block-per-row fused
/// kernel) was built for sm_90+ (PTX JIT-compiled from an older virtual architecture would lack
/// the cluster code). Cached per device in `cache` (0 unknown, 1 no, 2 yes), one per op.
/// Throws CudaError when the runtime fails.
inline bool clusters_usable(const void* fused_kernel, std::array<std::atomic<int>, 64>& cache) {
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
  FUSELENS_CUDA_CHECK(cudaFuncGetAttributes(&attributes, fused_kernel));
  const bool usable = cluster_launch != 0 && attributes.ptxVersion >= 90;
  if (device >= 0 && device < static_cast<int>(cache.size())) {
    cache[static_cast<std::size_t>(device)].store(usable ? 2 : 1, std::memory_order_relaxed);
  }
  return usable;
}

/// The fused path for rows of `cols` columns; Path is the op's enum (WarpPerRow, BlockPerRow,
/// ClusterPerRow, Online). `usable()` (clusters_usable) is asked only for 4096 < cols <= 32768.
template <class Path, class ClustersUsable>
Path fused_path(int cols, ClustersUsable&& usable) {
  if (cols <= 32 * 32) return Path::WarpPerRow;
  if (cols <= kSliceCols) return Path::BlockPerRow;
  if (cols <= kSliceCols * kMaxClusterBlocks && usable()) return Path::ClusterPerRow;
  return Path::Online;
}

/// Calls launch(std::integral_constant<int, kGroup>, std::integral_constant<int, kItems>) with
/// the smallest register tile that holds `cols` columns: a warp (kGroup 32) with 4, 8, 16 or 32
/// items per lane when warp_per_row, else a block (kGroup kBlock) with 8 or 16.
template <class Launch>
void by_row_length(bool warp_per_row, int cols, Launch&& launch) {
  using std::integral_constant;
  if (warp_per_row) {
    if (cols <= 32 * 4) return launch(integral_constant<int, 32>{}, integral_constant<int, 4>{});
    if (cols <= 32 * 8) return launch(integral_constant<int, 32>{}, integral_constant<int, 8>{});
    if (cols <= 32 * 16) return launch(integral_constant<int, 32>{}, integral_constant<int, 16>{});
    return launch(integral_constant<int, 32>{}, integral_constant<int, 32>{});
  }
  if (cols <= kBlock * 8)
    return launch(integral_constant<int, kBlock>{}, integral_constant<int, 8>{});
  return launch(integral_constant<int, kBlock>{}, integral_constant<int, 16>{});
}

/// Grid and block of a fused kernel launched without clusters (kGroup 32 or kBlock).
template <int kGroup>
unsigned plain_blocks(int rows) {
  return kGroup == 32 ? static_cast<unsigned>((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock)
                      : static_cast<unsigned>(rows);
}
template <int kGroup>
constexpr unsigned plain_threads() {
  return kGroup == 32 ? 32 * kWarpRowsPerBlock : kGroup;
}

/// A cluster-per-row launch of a kBlock-thread fused kernel: `cluster_blocks` blocks per row,
/// `slice` columns each (a multiple of 4, at most kSliceCols). Holds the launch configuration;
/// not copyable (config.attrs points into it).
struct ClusterLaunch {
  int cluster_blocks = 0;
  int slice = 0;
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attribute{};

  /// Throws std::invalid_argument("<op>: rows x cluster blocks exceeds the grid limit") when the
  /// grid would pass INT_MAX blocks.
  ClusterLaunch(const char* op, int rows, int cols, cudaStream_t stream) {
    cluster_blocks = (cols + kSliceCols - 1) / kSliceCols;
    slice = (cols + cluster_blocks - 1) / cluster_blocks;
    slice = (slice + 3) / 4 * 4;  // float4 alignment of every slice; still <= kSliceCols
    const long long blocks = static_cast<long long>(rows) * cluster_blocks;
    if (blocks > INT_MAX) {
      throw std::invalid_argument(std::string(op) +
                                  ": rows x cluster blocks exceeds the grid limit");
    }
    config.gridDim = dim3(static_cast<unsigned>(blocks));
    config.blockDim = dim3(kBlock);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = static_cast<unsigned>(cluster_blocks);
    attribute.val.clusterDim.y = 1;
    attribute.val.clusterDim.z = 1;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace fuselens::kernels::rowwise
