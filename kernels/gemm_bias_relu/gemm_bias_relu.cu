#include "gemm_bias_relu/gemm_bias_relu.cuh"

#include "common/cuda_check.h"
#include "elementwise/elementwise.cuh"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

// Tile geometry. kThreads threads form a (kBM / kTM) × (kBN / kTN) grid of 4×4 micro-tiles.
constexpr int kBM = 64;  // block tile rows (of A and C)
constexpr int kBN = 64;  // block tile columns (of B and C)
constexpr int kBK = 8;   // depth of one shared-memory stage
constexpr int kTM = 4;   // micro-tile rows per thread
constexpr int kTN = 4;   // micro-tile columns per thread
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);
// Padding of the transposed A tile: the (row, k) -> As[k][row] store becomes bank-conflict free,
// and a row stays a multiple of 16 bytes so the float4 reads stay aligned.
constexpr int kAPad = 4;
constexpr int kMaxGridY = 65535;

static_assert(kThreads == 256, "the launch bounds and load loops assume 256 threads");
static_assert((kBM * kBK) % kThreads == 0 && (kBK * kBN) % kThreads == 0, "tile loads must divide");
static_assert(kTM == 4 && kTN == 4,
              "the inner loop reads the micro-tile as one float4 per operand");
static_assert(((kBM + kAPad) * sizeof(float)) % 16 == 0,
              "padded A rows must keep float4 alignment");

constexpr int kElementwiseThreads = 256;

/// Epilogue of the plain GEMM: store the accumulator.
struct IdentityEpilogue {
  __device__ float operator()(float acc, int /*col*/) const { return acc; }
};

/// Epilogue of the fused kernel: bias add and ReLU on the register-resident accumulator.
struct BiasReluEpilogue {
  const float* __restrict__ bias;
  __device__ float operator()(float acc, int col) const {
    const float v = acc + bias[col];
    return v < 0.0f ? 0.0f : v;  // NaN-propagating ReLU
  }
};

/// Epilogue of the bias-only fused kernel (a Linear layer without activation).
struct BiasEpilogue {
  const float* __restrict__ bias;
  __device__ float operator()(float acc, int col) const { return acc + bias[col]; }
};

/// One 64×64 tile of C = epilogue(A·B) per thread block. Shared by both GEMM kernels.
template <class Epilogue>
__device__ __forceinline__ void sgemm_block_tile(const float* __restrict__ A,
                                                 const float* __restrict__ B, float* __restrict__ C,
                                                 int M, int N, int K, Epilogue epilogue) {
  __shared__ __align__(16) float As[kBK][kBM + kAPad];  // A tile, transposed: As[k][row]
  __shared__ __align__(16) float Bs[kBK][kBN];          // B tile: Bs[k][col]

  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % (kBN / kTN);  // micro-tile column group
  const int ty = tid / (kBN / kTN);  // micro-tile row group
  const int block_row = static_cast<int>(blockIdx.y) * kBM;
  const int block_col = static_cast<int>(blockIdx.x) * kBN;

  float acc[kTM][kTN] = {};

  for (int k0 = 0; k0 < K; k0 += kBK) {
    // Stage A[block_row .. +64][k0 .. +8]: consecutive threads read consecutive k of one row.
#pragma unroll
    for (int i = 0; i < (kBM * kBK) / kThreads; ++i) {
      const int idx = tid + i * kThreads;
      const int r = idx / kBK;
      const int k = idx % kBK;
      const int gr = block_row + r;
      const int gk = k0 + k;
      As[k][r] = (gr < M && gk < K) ? A[static_cast<std::size_t>(gr) * K + gk] : 0.0f;
    }
    // Stage B[k0 .. +8][block_col .. +64]: consecutive threads read consecutive columns.
#pragma unroll
    for (int i = 0; i < (kBK * kBN) / kThreads; ++i) {
      const int idx = tid + i * kThreads;
      const int k = idx / kBN;
      const int c = idx % kBN;
      const int gk = k0 + k;
      const int gc = block_col + c;
      Bs[k][c] = (gk < K && gc < N) ? B[static_cast<std::size_t>(gk) * N + gc] : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      const float4 a4 = *reinterpret_cast<const float4*>(&As[k][ty * kTM]);
      const float4 b4 = *reinterpret_cast<const float4*>(&Bs[k][tx * kTN]);
      const float a[kTM] = {a4.x, a4.y, a4.z, a4.w};
      const float b[kTN] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
      for (int i = 0; i < kTM; ++i) {
#pragma unroll
        for (int j = 0; j < kTN; ++j) {
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
      }
    }
    __syncthreads();
  }

  // Epilogue straight from registers; one float4 store per row when N and C allow it.
  const bool vector_store = (N % 4 == 0) && (reinterpret_cast<std::uintptr_t>(C) % 16 == 0);
  const int col0 = block_col + tx * kTN;
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    const int row = block_row + ty * kTM + i;
    if (row >= M) {
      break;
    }
    float* c_row = C + static_cast<std::size_t>(row) * N;
    if (vector_store && col0 + kTN <= N) {
      const float4 v = make_float4(epilogue(acc[i][0], col0), epilogue(acc[i][1], col0 + 1),
                                   epilogue(acc[i][2], col0 + 2), epilogue(acc[i][3], col0 + 3));
      *reinterpret_cast<float4*>(c_row + col0) = v;
    } else {
#pragma unroll
      for (int j = 0; j < kTN; ++j) {
        if (col0 + j < N) {
          c_row[col0 + j] = epilogue(acc[i][j], col0 + j);
        }
      }
    }
  }
}

}  // namespace

__global__ void __launch_bounds__(kThreads)
    gemm_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                int M, int N, int K) {
  sgemm_block_tile(A, B, C, M, N, K, IdentityEpilogue{});
}

__global__ void __launch_bounds__(kThreads)
    gemm_bias_relu_fused_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                const float* __restrict__ bias, float* __restrict__ C, int M, int N,
                                int K) {
  sgemm_block_tile(A, B, C, M, N, K, BiasReluEpilogue{bias});
}

__global__ void __launch_bounds__(kThreads)
    gemm_bias_fused_kernel(const float* __restrict__ A, const float* __restrict__ B,
                           const float* __restrict__ bias, float* __restrict__ C, int M, int N,
                           int K) {
  sgemm_block_tile(A, B, C, M, N, K, BiasEpilogue{bias});
}

__global__ void add_bias_kernel(float* __restrict__ C, const float* __restrict__ bias, int M,
                                int N) {
  const std::size_t total = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    C[i] += bias[i % static_cast<std::size_t>(N)];
  }
}

namespace {

void validate_gemm_shape(const char* who, int M, int N, int K) {
  if (M < 0 || N < 0 || K < 0) {
    throw std::invalid_argument(std::string(who) + ": negative size M=" + std::to_string(M) +
                                " N=" + std::to_string(N) + " K=" + std::to_string(K));
  }
  if ((M + kBM - 1) / kBM > kMaxGridY) {
    throw std::invalid_argument(std::string(who) + ": M=" + std::to_string(M) +
                                " exceeds the grid.y limit (M <= 65535 * 64)");
  }
}

dim3 gemm_grid(int M, int N) {
  return dim3(static_cast<unsigned>((N + kBN - 1) / kBN),
              static_cast<unsigned>((M + kBM - 1) / kBM));
}

}  // namespace

void launch_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                 cudaStream_t stream) {
  validate_gemm_shape("launch_gemm", M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  gemm_kernel<<<gemm_grid(M, N), kThreads, 0, stream>>>(A, B, C, M, N, K);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_add_bias(float* C, const float* bias, int M, int N, cudaStream_t stream) {
  validate_gemm_shape("launch_add_bias", M, N, 0);
  const std::size_t total = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
  if (total == 0) {
    return;
  }
  constexpr std::size_t kMaxBlocks = std::size_t{1} << 20;  // grid-stride beyond this
  std::size_t blocks = (total + kElementwiseThreads - 1) / kElementwiseThreads;
  blocks = blocks < kMaxBlocks ? blocks : kMaxBlocks;
  add_bias_kernel<<<static_cast<unsigned>(blocks), kElementwiseThreads, 0, stream>>>(C, bias, M, N);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_gemm_bias_relu_unfused(const float* A, const float* B, const float* bias, float* C,
                                   int M, int N, int K, cudaStream_t stream) {
  validate_gemm_shape("launch_gemm_bias_relu_unfused", M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  launch_gemm(A, B, C, M, N, K, stream);
  launch_add_bias(C, bias, M, N, stream);
  launch_relu(C, C, static_cast<std::size_t>(M) * static_cast<std::size_t>(N), stream);
}

void launch_gemm_bias_relu_fused(const float* A, const float* B, const float* bias, float* C, int M,
                                 int N, int K, cudaStream_t stream) {
  validate_gemm_shape("launch_gemm_bias_relu_fused", M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  gemm_bias_relu_fused_kernel<<<gemm_grid(M, N), kThreads, 0, stream>>>(A, B, bias, C, M, N, K);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_gemm_bias_fused(const float* A, const float* B, const float* bias, float* C, int M,
                            int N, int K, cudaStream_t stream) {
  validate_gemm_shape("launch_gemm_bias_fused", M, N, K);
  if (M == 0 || N == 0) {
    return;
  }
  gemm_bias_fused_kernel<<<gemm_grid(M, N), kThreads, 0, stream>>>(A, B, bias, C, M, N, K);
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace fuselens::kernels
