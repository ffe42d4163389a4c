// The public launchers of cutlass_gemm.cuh: argument and device checks, the cases the CUTLASS
// kernel is not launched for (empty output, K == 0), then the instantiation (cutlass_gemm_sm90.h);
// and the unfused chain (CUTLASS GEMM, then kernels/gemm_tc's bias and ReLU kernels). No CUTLASS
// include.
#include "cutlass_gemm/cutlass_gemm.cuh"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "common/cuda_check.h"
#include "cutlass_gemm/cutlass_gemm_sm90.h"
#include "gemm_tc/gemm_tc.cuh"

namespace fuselens::kernels {
namespace {

bool misaligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; }

/// Throws std::invalid_argument for what cutlass_gemm.cuh's constraints exclude. Pointers are
/// checked only when the output is not empty, A and B only when K > 0 (they hold no element
/// otherwise).
void check_arguments(const void* A, const void* B, const void* bias, const void* C, int M, int N,
                     int K, bool needs_bias) {
  if (M < 0 || N < 0 || K < 0) throw std::invalid_argument("cutlass_gemm: negative size");
  if (K % 8 != 0 || N % 8 != 0) {
    throw std::invalid_argument("cutlass_gemm: K and N must be multiples of 8 (16-byte TMA rows)");
  }
  if (M == 0 || N == 0) return;
  const bool reads_ab = K > 0;
  if (C == nullptr || (needs_bias && bias == nullptr) ||
      (reads_ab && (A == nullptr || B == nullptr))) {
    throw std::invalid_argument("cutlass_gemm: null pointer");
  }
  if (misaligned(C) || (needs_bias && misaligned(bias)) ||
      (reads_ab && (misaligned(A) || misaligned(B)))) {
    throw std::invalid_argument("cutlass_gemm: A, B, C and bias must be 16-byte aligned");
  }
}

/// The SM count of `device`, asked once per device (devices 0..63; others every call).
int sm_count_of(int device) {
  static std::atomic<int> cached[64] = {};
  if (device >= 0 && device < 64) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int count = 0;
  FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  if (device >= 0 && device < 64) cached[device].store(count, std::memory_order_relaxed);
  return count;
}

void require_device() {
  if (!cutlass_gemm_available()) {
    throw CutlassUnavailable(
        "cutlass_gemm: the sm_90a kernels need a device of compute capability 9.0");
  }
}

template <typename T, bool kBiasRelu>
void launch(const T* A, const T* B, const T* bias, T* C, int M, int N, int K, cudaStream_t stream) {
  check_arguments(A, B, bias, C, M, N, K, kBiasRelu);
  require_device();
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // A·B = 0. TMA descriptors cannot describe an empty K extent, so no CUTLASS kernel: zeros,
    // then (fused) the suite's bias and ReLU kernels give relu(0 + bias).
    const std::size_t elements = static_cast<std::size_t>(M) * static_cast<std::size_t>(N);
    FUSELENS_CUDA_CHECK(cudaMemsetAsync(C, 0, elements * sizeof(T), stream));
    if constexpr (kBiasRelu) {
      launch_add_bias_tc<T>(C, bias, M, N, stream);
      launch_relu_tc<T>(C, C, elements, stream);
    }
    return;
  }
  int device = 0;
  FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
  const int sm_count = sm_count_of(device);
  if (cutlass_detail::choose_config(M, N, sm_count) == cutlass_detail::Config::kLarge) {
    cutlass_detail::run_sm90<T, kBiasRelu, cutlass_detail::Config::kLarge>(
        A, B, bias, C, M, N, K, device, sm_count, stream);
  } else {
    cutlass_detail::run_sm90<T, kBiasRelu, cutlass_detail::Config::kSmall>(
        A, B, bias, C, M, N, K, device, sm_count, stream);
  }
}

}  // namespace

bool cutlass_gemm_available() noexcept {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  int major = 0;
  int minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return major == 9 && minor == 0;
}

template <typename T>
void launch_cutlass_gemm(const T* A, const T* B, T* C, int M, int N, int K, cudaStream_t stream) {
  launch<T, false>(A, B, nullptr, C, M, N, K, stream);
}

template <typename T>
void launch_cutlass_gemm_bias_relu_fused(const T* A, const T* B, const T* bias, T* C, int M, int N,
                                         int K, cudaStream_t stream) {
  launch<T, true>(A, B, bias, C, M, N, K, stream);
}

template <typename T>
void launch_cutlass_gemm_bias_relu_unfused(const T* A, const T* B, const T* bias, T* C, int M,
                                           int N, int K, cudaStream_t stream) {
  check_arguments(A, B, bias, C, M, N, K, true);
  launch<T, false>(A, B, nullptr, C, M, N, K, stream);
  if (M == 0 || N == 0) return;
  launch_add_bias_tc<T>(C, bias, M, N, stream);
  launch_relu_tc<T>(C, C, static_cast<std::size_t>(M) * static_cast<std::size_t>(N), stream);
}

#define FUSELENS_CUTLASS_GEMM_INSTANTIATE(T)                                                       \
  template void launch_cutlass_gemm<T>(const T*, const T*, T*, int, int, int, cudaStream_t);       \
  template void launch_cutlass_gemm_bias_relu_fused<T>(const T*, const T*, const T*, T*, int, int, \
                                                       int, cudaStream_t);                         \
  template void launch_cutlass_gemm_bias_relu_unfused<T>(const T*, const T*, const T*, T*, int,    \
                                                         int, int, cudaStream_t);
FUSELENS_CUTLASS_GEMM_INSTANTIATE(__half)
FUSELENS_CUTLASS_GEMM_INSTANTIATE(__nv_bfloat16)
#undef FUSELENS_CUTLASS_GEMM_INSTANTIATE

}  // namespace fuselens::kernels
