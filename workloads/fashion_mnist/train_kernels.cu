#include "train_kernels.cuh"

#include <cfloat>
#include <stdexcept>

#include "common/cuda_check.h"

namespace fuselens::workloads::fmnist {
namespace {

constexpr int kThreads = 256;
constexpr int kTile = 16;

unsigned blocks_for(long long n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace

__global__ void gather_normalize_kernel(const std::uint8_t* __restrict__ pixels,
                                        const std::int32_t* __restrict__ index,
                                        float* __restrict__ x, int rows, int cols, float mean,
                                        float inv_std) {
  const long long total = static_cast<long long>(rows) * cols;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / cols, c = i % cols;
    const float v =
        static_cast<float>(pixels[static_cast<long long>(index[r]) * cols + c]) * (1.0f / 255.0f);
    x[i] = (v - mean) * inv_std;
  }
}

__global__ void gather_labels_kernel(const std::uint8_t* __restrict__ labels,
                                     const std::int32_t* __restrict__ index,
                                     std::int32_t* __restrict__ out, int rows) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r < rows) out[r] = labels[index[r]];
}

/// C = op(A)·op(B) (· [mask > 0]); 16×16 output tile per block, one output per thread.
template <bool TransA, bool TransB, bool Mask>
__global__ void gemm_t_kernel(const float* __restrict__ A, const float* __restrict__ B,
                              const float* __restrict__ mask, float* __restrict__ C, int M, int N,
                              int K) {
  __shared__ float As[kTile][kTile + 1];
  __shared__ float Bs[kTile][kTile + 1];
  const int row = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
  const int col = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    // As[ty][tx] = op(A)[row][k0 + tx];  Bs[ty][tx] = op(B)[k0 + ty][col]
    const int ka = k0 + static_cast<int>(threadIdx.x);
    const int kb = k0 + static_cast<int>(threadIdx.y);
    float a = 0.0f, b = 0.0f;
    if (row < M && ka < K)
      a = TransA ? A[static_cast<long long>(ka) * M + row]
                 : A[static_cast<long long>(row) * K + ka];
    if (col < N && kb < K)
      b = TransB ? B[static_cast<long long>(col) * K + kb]
                 : B[static_cast<long long>(kb) * N + col];
    As[threadIdx.y][threadIdx.x] = a;
    Bs[threadIdx.y][threadIdx.x] = b;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
    __syncthreads();
  }
  if (row < M && col < N) {
    const long long i = static_cast<long long>(row) * N + col;
    if constexpr (Mask) acc = mask[i] > 0.0f ? acc : 0.0f;
    C[i] = acc;
  }
}

__global__ void column_sum_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ out, int rows, int cols) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c >= cols) return;
  float s = 0.0f;
  for (int r = 0; r < rows; ++r) {
    const long long i = static_cast<long long>(r) * cols + c;
    s += b ? a[i] * b[i] : a[i];
  }
  out[c] = s;
}

__global__ void relu_backward_kernel(const float* __restrict__ dy, const float* __restrict__ y,
                                     float* __restrict__ dx, int n) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x * blockDim.x))
    dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

__device__ __forceinline__ float swish_grad(float x) {
  const float s = 1.0f / (1.0f + expf(-x));
  return s + x * s * (1.0f - s);
}

__global__ void swish_backward_kernel(const float* __restrict__ dy, const float* __restrict__ x,
                                      float* __restrict__ dx, int n) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x * blockDim.x))
    dx[i] = dy[i] * swish_grad(x[i]);
}

/// One warp per row; the row is read from global memory (L1/L2) in three passes.
__global__ void layernorm_backward_kernel(const float* __restrict__ dy, const float* __restrict__ x,
                                          const float* __restrict__ gamma, float* __restrict__ dx,
                                          float* __restrict__ xhat, int rows, int cols, float eps,
                                          const float* __restrict__ swish_input,
                                          float* __restrict__ dy_out) {
  const int warps = static_cast<int>(blockDim.x) / 32;
  const int row = static_cast<int>(blockIdx.x) * warps + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  float sum = 0.0f;
  for (int c = lane; c < cols; c += 32) sum += x[base + c];
  const float mean = warp_sum(sum) / static_cast<float>(cols);
  float sq = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    const float d = x[base + c] - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(warp_sum(sq) / static_cast<float>(cols) + eps);
  float sum_g = 0.0f, sum_gx = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    const float xh = (x[base + c] - mean) * rstd;
    float d = dy[base + c];
    if (swish_input) d *= swish_grad(swish_input[base + c]);
    const float g = d * gamma[c];
    sum_g += g;
    sum_gx += g * xh;
  }
  const float mean_g = warp_sum(sum_g) / static_cast<float>(cols);
  const float mean_gx = warp_sum(sum_gx) / static_cast<float>(cols);
  for (int c = lane; c < cols; c += 32) {
    const float xh = (x[base + c] - mean) * rstd;
    float d = dy[base + c];
    if (swish_input) d *= swish_grad(swish_input[base + c]);
    const float g = d * gamma[c];
    dx[base + c] = rstd * (g - mean_g - xh * mean_gx);
    xhat[base + c] = xh;
    if (dy_out) dy_out[base + c] = d;
  }
}

__global__ void nll_loss_kernel(const float* __restrict__ p,
                                const std::int32_t* __restrict__ labels, int rows, int classes,
                                double* loss_sum, unsigned long long* correct) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= rows) return;
  const float* row = p + static_cast<long long>(r) * classes;
  int best = 0;
  for (int c = 1; c < classes; ++c) best = row[c] > row[best] ? c : best;
  atomicAdd(loss_sum, -log(static_cast<double>(fmaxf(row[labels[r]], FLT_MIN))));
  if (best == labels[r]) atomicAdd(correct, 1ull);
}

__global__ void xent_grad_kernel(const float* __restrict__ p,
                                 const std::int32_t* __restrict__ labels, float* __restrict__ dz,
                                 int rows, int classes) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= rows * classes) return;
  const int r = i / classes, c = i % classes;
  dz[i] = (p[i] - (c == labels[r] ? 1.0f : 0.0f)) / static_cast<float>(rows);
}

__global__ void softmax_xent_fused_kernel(const float* __restrict__ z,
                                          const std::int32_t* __restrict__ labels,
                                          float* __restrict__ dz, int rows, int classes,
                                          double* loss_sum, unsigned long long* correct) {
  const int warps = static_cast<int>(blockDim.x) / 32;
  const int row = static_cast<int>(blockIdx.x) * warps + static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * classes;
  const float v = lane < classes ? z[base + lane] : -FLT_MAX;
  const float m = warp_max(v);
  const float e = lane < classes ? expf(v - m) : 0.0f;
  const float p = e / warp_sum(e);
  const int t = labels[row];
  // Arg-max: the lowest class index holding the maximum (as the unfused loss kernel's scan).
  const unsigned at_max = __ballot_sync(0xffffffffu, lane < classes && v == m);
  const int best = __ffs(static_cast<int>(at_max)) - 1;
  const float pt = __shfl_sync(0xffffffffu, p, t);
  if (lane == 0) {
    atomicAdd(loss_sum, -log(static_cast<double>(fmaxf(pt, FLT_MIN))));
    if (best == t) atomicAdd(correct, 1ull);
  }
  if (dz && lane < classes)
    dz[base + lane] = (p - (lane == t ? 1.0f : 0.0f)) / static_cast<float>(rows);
}

__global__ void sgd_kernel(float* __restrict__ w, float* __restrict__ v,
                           const float* __restrict__ g, int n, float lr, float momentum) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const float vi = momentum * v[i] + g[i];
    v[i] = vi;
    w[i] -= lr * vi;
  }
}

struct SgdBatch {
  SgdTensor t[kMaxSgdTensors];
};

__global__ void sgd_multi_kernel(SgdBatch batch, float lr, float momentum) {
  const SgdTensor& t = batch.t[blockIdx.y];
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < t.n;
       i += static_cast<int>(gridDim.x * blockDim.x)) {
    const float vi = momentum * t.v[i] + t.g[i];
    t.v[i] = vi;
    t.w[i] -= lr * vi;
  }
}

// ---- launchers ----

void launch_gather_normalize(const std::uint8_t* pixels, const std::int32_t* index, float* x,
                             int rows, int cols, float mean, float std, cudaStream_t stream) {
  gather_normalize_kernel<<<blocks_for(static_cast<long long>(rows) * cols), kThreads, 0, stream>>>(
      pixels, index, x, rows, cols, mean, 1.0f / std);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_gather_labels(const std::uint8_t* labels, const std::int32_t* index, std::int32_t* out,
                          int rows, cudaStream_t stream) {
  gather_labels_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(labels, index, out, rows);
  FUSELENS_CUDA_CHECK_LAST();
}

namespace {
template <bool TA, bool TB, bool Mask>
void gemm_t(const float* A, const float* B, const float* mask, float* C, int M, int N, int K,
            cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K < 0) throw std::invalid_argument("gemm: non-positive size");
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((M + kTile - 1) / kTile));
  gemm_t_kernel<TA, TB, Mask><<<grid, dim3(kTile, kTile), 0, stream>>>(A, B, mask, C, M, N, K);
  FUSELENS_CUDA_CHECK_LAST();
}
}  // namespace

void launch_gemm_tn(const float* A, const float* B, float* C, int M, int N, int K,
                    cudaStream_t stream) {
  gemm_t<true, false, false>(A, B, nullptr, C, M, N, K, stream);
}
void launch_gemm_nt(const float* A, const float* B, float* C, int M, int N, int K,
                    cudaStream_t stream) {
  gemm_t<false, true, false>(A, B, nullptr, C, M, N, K, stream);
}
void launch_gemm_nt_relu_backward(const float* A, const float* B, const float* mask, float* C,
                                  int M, int N, int K, cudaStream_t stream) {
  gemm_t<false, true, true>(A, B, mask, C, M, N, K, stream);
}

void launch_column_sum(const float* a, const float* b, float* out, int rows, int cols,
                       cudaStream_t stream) {
  column_sum_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(a, b, out, rows, cols);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_relu_backward(const float* dy, const float* y, float* dx, int n, cudaStream_t stream) {
  relu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, y, dx, n);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_swish_backward(const float* dy, const float* x, float* dx, int n, cudaStream_t stream) {
  swish_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, x, dx, n);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_layernorm_backward(const float* dy, const float* x, const float* gamma, float* dx,
                               float* xhat, int rows, int cols, float eps, const float* swish_input,
                               float* dy_out, cudaStream_t stream) {
  constexpr int kRowsPerBlock = kThreads / 32;
  layernorm_backward_kernel<<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock),
                              kThreads, 0, stream>>>(dy, x, gamma, dx, xhat, rows, cols, eps,
                                                     swish_input, dy_out);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_nll_loss(const float* p, const std::int32_t* labels, int rows, int classes,
                     LossAccumulator acc, cudaStream_t stream) {
  nll_loss_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(p, labels, rows, classes, acc.loss_sum,
                                                             acc.correct);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_xent_grad(const float* p, const std::int32_t* labels, float* dz, int rows, int classes,
                      cudaStream_t stream) {
  xent_grad_kernel<<<blocks_for(static_cast<long long>(rows) * classes), kThreads, 0, stream>>>(
      p, labels, dz, rows, classes);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_softmax_xent_fused(const float* z, const std::int32_t* labels, float* dz, int rows,
                               int classes, LossAccumulator acc, cudaStream_t stream) {
  if (classes > 32) throw std::invalid_argument("launch_softmax_xent_fused: more than 32 classes");
  constexpr int kRowsPerBlock = kThreads / 32;
  softmax_xent_fused_kernel<<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock),
                              kThreads, 0, stream>>>(z, labels, dz, rows, classes, acc.loss_sum,
                                                     acc.correct);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_sgd(float* w, float* v, const float* g, int n, float lr, float momentum,
                cudaStream_t stream) {
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, v, g, n, lr, momentum);
  FUSELENS_CUDA_CHECK_LAST();
}

void launch_sgd_multi(const SgdTensor* tensors, int count, float lr, float momentum,
                      cudaStream_t stream) {
  if (count < 1 || count > kMaxSgdTensors)
    throw std::invalid_argument("launch_sgd_multi: 1..16 tensors");
  SgdBatch batch{};
  int largest = 0;
  for (int i = 0; i < count; ++i) {
    batch.t[i] = tensors[i];
    largest = largest > tensors[i].n ? largest : tensors[i].n;
  }
  sgd_multi_kernel<<<dim3(blocks_for(largest), static_cast<unsigned>(count)), kThreads, 0,
                     stream>>>(batch, lr, momentum);
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace fuselens::workloads::fmnist
