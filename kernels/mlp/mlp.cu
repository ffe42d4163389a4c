#include "mlp/mlp.cuh"

#include "common/cuda_check.h"
#include "gemm_bias_relu/gemm_bias_relu.cuh"

#include <cooperative_groups.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace cg = cooperative_groups;

namespace fuselens::kernels {
namespace detail {

/// Everything the fully fused kernel needs about the network, passed by value (kernel parameter
/// space). Named outside the anonymous namespace so that the kernel's demangled name stays
/// readable.
struct MlpFusedParams {
  int widths[kMlpLayers + 1];
  const float* weights[kMlpLayers];
  const float* biases[kMlpLayers];
};

}  // namespace detail

namespace {

using detail::MlpFusedParams;

constexpr int kThreads = 256;                  // threads per CTA of the fully fused kernel
constexpr int kWarps = kThreads / 32;          // = reduction slices per layer
constexpr int kSlice = 32;                     // max reduction slice per warp = max columns per CTA
constexpr int kRowStride = kMlpFusedMaxWidth;  // floats per activation row in shared memory

static_assert(kWarps * kSlice == kMlpFusedMaxWidth,
              "8 warps × 32 must cover the largest reduction");
static_assert(8 * kSlice == kMlpFusedMaxWidth,
              "the smallest cluster (8 CTAs × 32 columns) must cover the widest layer");
static_assert(kMlpFusedMaxBatch == 256, "documented in mlp.cuh and README.md");

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// Columns of layer output owned by one CTA of a C-CTA cluster: ceil(N / C) (<= 32).
template <int C>
__device__ __forceinline__ int columns_per_cta(int N) {
  return ceil_div(N, C);
}

/// Reduction slice of one warp: ceil(K / 8) rounded up to a multiple of 4 (float4 reads), <= 32.
__device__ __forceinline__ int reduction_slice(int K) { return (ceil_div(K, kWarps) + 3) / 4 * 4; }

// Split cluster barrier (PTX ISA 7.8, sm_90): arrive with release semantics, later wait with
// acquire.
__device__ __forceinline__ void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/// This thread's weights of one layer: column rank·S + lane, rows warp·ks .. warp·ks + ks - 1 of W
/// [K × N]; zero outside the matrix, so the padded products add nothing.
template <int C>
__device__ __forceinline__ void load_weights(const float* __restrict__ W, int K, int N, int rank,
                                             int warp, int lane, float (&w)[kSlice]) {
  const int s = columns_per_cta<C>(N);
  const int ks = reduction_slice(K);
  const int col = rank * s + lane;
  const bool col_ok = lane < s && col < N;
  const int k0 = warp * ks;
#pragma unroll
  for (int i = 0; i < kSlice; ++i) {
    const int k = k0 + i;
    w[i] = (col_ok && i < ks && k < K) ? __ldg(W + static_cast<std::size_t>(k) * N + col) : 0.0f;
  }
}

/// bias[col] of this thread's output column, 0 outside.
template <int C>
__device__ __forceinline__ float load_bias(const float* __restrict__ b, int N, int rank, int lane) {
  const int s = columns_per_cta<C>(N);
  const int col = rank * s + lane;
  return (lane < s && col < N) ? __ldg(b + col) : 0.0f;
}

/// Partial dot products of this warp's reduction slice for the R rows of `act` ([R][kRowStride] in
/// shared memory) with this thread's weight column, stored to partial[warp][r][lane].
template <int R>
__device__ __forceinline__ void layer_partials(const float* act, int K, int warp, int lane,
                                               const float (&w)[kSlice], float* partial) {
  const int ks = reduction_slice(K);
  const float* a_base = act + warp * ks;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#pragma unroll
  for (int i = 0; i < kSlice; i += 4) {
    if (i < ks) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        // Every lane reads the same 16 bytes: one broadcast shared-memory access.
        const float4 a = *reinterpret_cast<const float4*>(a_base + r * kRowStride + i);
        acc[r] = fmaf(a.x, w[i], acc[r]);
        acc[r] = fmaf(a.y, w[i + 1], acc[r]);
        acc[r] = fmaf(a.z, w[i + 2], acc[r]);
        acc[r] = fmaf(a.w, w[i + 3], acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) partial[(warp * R + r) * 32 + lane] = acc[r];
}

/// Sums the 8 warps' partials of each (row, column) this thread owns, adds the bias, applies ReLU
/// and writes the value: into the next activation buffer of all 8 CTAs of the cluster (distributed
/// shared memory), or for the last layer into Y in global memory. Thread tid owns column lane = tid
/// % 32 and rows tid / 32, tid / 32 + 8.
template <int C, int R, bool kLast>
__device__ __forceinline__ void finish_layer(const float* partial, float bias, int N, int rank,
                                             int tid, int rows, int row0, float* next_act,
                                             float* __restrict__ Y,
                                             const cg::cluster_group& cluster) {
  const int lane = tid % 32;
  const int s = columns_per_cta<C>(N);
  const int col = rank * s + lane;
  if (lane >= s || col >= N) return;
  for (int o = tid; o < R * 32; o += kThreads) {
    const int r = o / 32;
    if (r >= rows) break;
    float v = bias;
#pragma unroll
    for (int q = 0; q < kWarps; ++q) v += partial[(q * R + r) * 32 + lane];
    v = v < 0.0f ? 0.0f : v;  // NaN-propagating ReLU
    if constexpr (kLast) {
      Y[static_cast<std::size_t>(row0 + r) * N + col] = v;
    } else {
#pragma unroll
      for (unsigned q = 0; q < static_cast<unsigned>(C); ++q) {
        cluster.map_shared_rank(next_act, q)[r * kRowStride + col] = v;
      }
    }
  }
}

}  // namespace

/// The whole 3-layer MLP for R rows per C-CTA cluster (launched with the cluster dimension C as a
/// launch attribute); see mlp.cuh for the decomposition. Dynamic shared memory: R · (2 · kRowStride
/// + kWarps · 32) floats.
template <int C, int R>
__global__ void __launch_bounds__(kThreads, 1)
    mlp_fully_fused_kernel(detail::MlpFusedParams p, const float* __restrict__ X,
                           float* __restrict__ Y, int batch) {
  extern __shared__ __align__(16) float smem[];
  float* act_a = smem;                      // [R][kRowStride]: X, later h2
  float* act_b = act_a + R * kRowStride;    // [R][kRowStride]: h1
  float* partial = act_b + R * kRowStride;  // [kWarps][R][32]: per-warp partial sums

  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int row0 = static_cast<int>(blockIdx.x / C) * R;
  const int rows = min(R, batch - row0);

  // 1. Issue every weight and bias load of the three layers into registers first: they do not
  // depend
  //    on the activations, so their latency overlaps the staging of X and the first barrier.
  float w0[kSlice], w1[kSlice], w2[kSlice];
  load_weights<C>(p.weights[0], p.widths[0], p.widths[1], rank, warp, lane, w0);
  load_weights<C>(p.weights[1], p.widths[1], p.widths[2], rank, warp, lane, w1);
  load_weights<C>(p.weights[2], p.widths[2], p.widths[3], rank, warp, lane, w2);
  const float b0 = load_bias<C>(p.biases[0], p.widths[1], rank, lane);
  const float b1 = load_bias<C>(p.biases[1], p.widths[2], rank, lane);
  const float b2 = load_bias<C>(p.biases[2], p.widths[3], rank, lane);

  // 2. Stage this cluster's R rows of X (zero-padded to kRowStride) and zero the h1 buffer: padded
  //    columns and rows beyond the batch must be finite, since they meet zero weights.
  const int k_in = p.widths[0];
  for (int i = tid; i < R * kRowStride; i += kThreads) {
    const int r = i / kRowStride;
    const int k = i % kRowStride;
    act_a[i] = (r < rows && k < k_in) ? X[static_cast<std::size_t>(row0 + r) * k_in + k] : 0.0f;
    act_b[i] = 0.0f;
  }
  cluster_arrive_release();  // this CTA's buffers are initialised
  __syncthreads();

  // 3. Layer 1: X (local) -> h1 (pushed to every CTA of the cluster).
  layer_partials<R>(act_a, k_in, warp, lane, w0, partial);
  __syncthreads();
  cluster_wait_acquire();  // every CTA of the cluster runs and has zeroed its h1 before we write it
  finish_layer<C, R, false>(partial, b0, p.widths[1], rank, tid, rows, row0, act_b, Y, cluster);
  cluster.sync();  // h1 complete everywhere; every CTA finished reading X (act_a is free for h2)

  // 4. Layer 2: h1 -> h2 (into act_a of every CTA).
  layer_partials<R>(act_b, p.widths[1], warp, lane, w1, partial);
  __syncthreads();
  finish_layer<C, R, false>(partial, b1, p.widths[2], rank, tid, rows, row0, act_a, Y, cluster);
  cluster.sync();  // h2 complete everywhere

  // 5. Layer 3: h2 -> Y (global). No distributed-shared-memory access after the last cluster
  // barrier,
  //    so CTAs may exit in any order.
  layer_partials<R>(act_a, p.widths[2], warp, lane, w2, partial);
  __syncthreads();
  finish_layer<C, R, true>(partial, b2, p.widths[3], rank, tid, rows, row0, nullptr, Y, cluster);
}

namespace {

void validate_layers(const char* who, const MlpLayers& layers, int batch) {
  if (batch < 0) {
    throw std::invalid_argument(std::string(who) + ": negative batch " + std::to_string(batch));
  }
  for (int l = 0; l <= kMlpLayers; ++l) {
    if (layers.widths[l] < 1) {
      throw std::invalid_argument(std::string(who) + ": width " + std::to_string(l) + " is " +
                                  std::to_string(layers.widths[l]) + " (must be >= 1)");
    }
  }
  for (int l = 0; l < kMlpLayers; ++l) {
    if (layers.weights[l] == nullptr || layers.biases[l] == nullptr) {
      throw std::invalid_argument(std::string(who) + ": null weight or bias pointer of layer " +
                                  std::to_string(l));
    }
  }
}

template <int C, int R>
void launch_fused(const MlpFusedParams& params, const float* X, float* Y, int batch,
                  cudaStream_t stream) {
  constexpr std::size_t kSmemBytes =
      static_cast<std::size_t>(R) * (2 * kRowStride + kWarps * 32) * sizeof(float);
  static_assert(kSmemBytes <= 48 * 1024, "above 48 KiB the kernel would need cudaFuncSetAttribute");
  if constexpr (C > 8) {
    // Clusters above 8 CTAs are "non-portable" (sm_90 allows 16) and must be enabled per kernel,
    // once.
    static const bool enabled = [] {
      FUSELENS_CUDA_CHECK(cudaFuncSetAttribute(mlp_fully_fused_kernel<C, R>,
                                               cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
      return true;
    }();
    (void)enabled;
  }
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = C;
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(ceil_div(batch, R) * C));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  FUSELENS_CUDA_CHECK(
      cudaLaunchKernelEx(&config, mlp_fully_fused_kernel<C, R>, params, X, Y, batch));
}

template <int C>
void launch_fused_rows(int rows, const MlpFusedParams& params, const float* X, float* Y, int batch,
                       cudaStream_t stream) {
  switch (rows) {
    case 1:
      launch_fused<C, 1>(params, X, Y, batch, stream);
      break;
    case 2:
      launch_fused<C, 2>(params, X, Y, batch, stream);
      break;
    case 4:
      launch_fused<C, 4>(params, X, Y, batch, stream);
      break;
    case 8:
      launch_fused<C, 8>(params, X, Y, batch, stream);
      break;
    case 16:
      launch_fused<C, 16>(params, X, Y, batch, stream);
      break;
    default:
      throw std::logic_error("launch_fused_rows: unchecked rows per cluster");
  }
}

}  // namespace

void launch_mlp_unfused(const MlpLayers& layers, const float* X, float* h1, float* h2, float* Y,
                        int batch, cudaStream_t stream) {
  validate_layers("launch_mlp_unfused", layers, batch);
  if (batch == 0) return;
  const float* in[kMlpLayers] = {X, h1, h2};
  float* out[kMlpLayers] = {h1, h2, Y};
  for (int l = 0; l < kMlpLayers; ++l) {
    launch_gemm_bias_relu_unfused(in[l], layers.weights[l], layers.biases[l], out[l], batch,
                                  layers.widths[l + 1], layers.widths[l], stream);
  }
}

void launch_mlp_layer_fused(const MlpLayers& layers, const float* X, float* h1, float* h2, float* Y,
                            int batch, cudaStream_t stream) {
  validate_layers("launch_mlp_layer_fused", layers, batch);
  if (batch == 0) return;
  const float* in[kMlpLayers] = {X, h1, h2};
  float* out[kMlpLayers] = {h1, h2, Y};
  for (int l = 0; l < kMlpLayers; ++l) {
    launch_gemm_bias_relu_fused(in[l], layers.weights[l], layers.biases[l], out[l], batch,
                                layers.widths[l + 1], layers.widths[l], stream);
  }
}

bool mlp_fully_fused_supports(const std::array<int, kMlpLayers + 1>& widths, int batch) noexcept {
  if (batch < 0 || batch > kMlpFusedMaxBatch) return false;
  for (int w : widths) {
    if (w < 1 || w > kMlpFusedMaxWidth) return false;
  }
  return true;
}

MlpFusedConfig mlp_fully_fused_config(int batch) noexcept {
  MlpFusedConfig config{kMlpFusedDefaultClusterSize, 1};
  while (config.rows_per_cluster < kMlpFusedMaxRowsPerCluster &&
         ceil_div(batch, config.rows_per_cluster) > kMlpFusedTargetClusters) {
    config.rows_per_cluster *= 2;
  }
  return config;
}

void launch_mlp_fully_fused(const MlpLayers& layers, const float* X, float* Y, int batch,
                            cudaStream_t stream, MlpFusedConfig config) {
  static constexpr const char* kWho = "launch_mlp_fully_fused";
  validate_layers(kWho, layers, batch);
  if (!mlp_fully_fused_supports(layers.widths, batch)) {
    throw std::invalid_argument(
        std::string(kWho) + ": needs batch <= " + std::to_string(kMlpFusedMaxBatch) +
        " and widths <= " + std::to_string(kMlpFusedMaxWidth) + " (got batch " +
        std::to_string(batch) + ", widths " + std::to_string(layers.widths[0]) + "x" +
        std::to_string(layers.widths[1]) + "x" + std::to_string(layers.widths[2]) + "x" +
        std::to_string(layers.widths[3]) + "); use launch_mlp_layer_fused");
  }
  const MlpFusedConfig automatic = mlp_fully_fused_config(batch);
  const int rows =
      config.rows_per_cluster == 0 ? automatic.rows_per_cluster : config.rows_per_cluster;
  const int cluster = config.cluster_size == 0 ? automatic.cluster_size : config.cluster_size;
  if (rows != 1 && rows != 2 && rows != 4 && rows != 8 && rows != 16) {
    throw std::invalid_argument(std::string(kWho) + ": rows_per_cluster " + std::to_string(rows) +
                                " (must be 0, 1, 2, 4, 8 or 16)");
  }
  if (cluster != 8 && cluster != 16) {
    throw std::invalid_argument(std::string(kWho) + ": cluster_size " + std::to_string(cluster) +
                                " (must be 0, 8 or 16)");
  }
  if (batch == 0) return;
  MlpFusedParams params{};
  for (int l = 0; l <= kMlpLayers; ++l) params.widths[l] = layers.widths[l];
  for (int l = 0; l < kMlpLayers; ++l) {
    params.weights[l] = layers.weights[l];
    params.biases[l] = layers.biases[l];
  }
  if (cluster == 8) {
    launch_fused_rows<8>(rows, params, X, Y, batch, stream);
  } else {
    launch_fused_rows<16>(rows, params, X, Y, batch, stream);
  }
}

}  // namespace fuselens::kernels
