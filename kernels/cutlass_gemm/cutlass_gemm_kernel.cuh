#pragma once
// The CUTLASS kernel types and the launcher body behind cutlass_gemm.cuh (internal: included only
// by this folder's cutlass_gemm_<dtype>_<epilogue>.cu files, one instantiation each, so the heavy
// CUTLASS templates compile in parallel and once).
//
// Built with CUTLASS 3.x's CollectiveBuilder API (CUTLASS 4.2, nvidia-cutlass 4.2.0.0; see
// examples/49_hopper_gemm_with_collective_builder in CUTLASS). Row-major A (K-major), row-major B
// (N-major; wgmma reads 16-bit B transposed from shared memory) and row-major C, D: CUTLASS's
// problem is ours as written, (M, N, K, L = 1), no operand swap. The per-column bias of
// LinCombPerColBiasEltAct is a row vector broadcast over the rows of D (Sm90RowBroadcast), i.e.
// bias[N] over C's M rows.

#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/kernel_hardware_info.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/operations.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/cuda_check.h"
#include "cutlass_gemm/cutlass_gemm_sm90.h"

namespace fuselens::kernels::cutlass_detail {

/// CUTLASS's element type of the same bits as the suite's T.
template <typename T>
using ElementOf =
    std::conditional_t<std::is_same_v<T, __half>, cutlass::half_t, cutlass::bfloat16_t>;

/// One sm90 GEMM: T storage, FP32 accumulate and epilogue math; kBiasRelu selects the fused
/// bias + ReLU epilogue (else D = A·B).
template <typename T, bool kBiasRelu>
struct Sm90Gemm {
  using Element = ElementOf<T>;
  using Layout = cutlass::layout::RowMajor;          // A, B, D
  static constexpr int kAlignment = 16 / sizeof(T);  // elements per 16-byte TMA access
  using TileShape = cute::Shape<cute::_128, cute::_256, cute::_64>;
  using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;

  using FusionOp = std::conditional_t<
      kBiasRelu,
      cutlass::epilogue::fusion::LinCombPerColBiasEltAct<cutlass::epilogue::thread::ReLu, Element,
                                                         float, Element, Element, float>,
      cutlass::epilogue::fusion::LinearCombination<Element, float, Element, float>>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, Layout,
      kAlignment,                   // no source C (beta = 0): nothing read
      Element, Layout, kAlignment,  // D
      cutlass::epilogue::TmaWarpSpecializedCooperative, FusionOp>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, Layout, kAlignment, Element,
      Layout, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
                                                      CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

[[noreturn]] inline void throw_status(const char* what, cutlass::Status status) {
  throw std::runtime_error(std::string("cutlass_gemm: ") + what + ": " +
                           cutlassGetStatusString(status));
}

/// The launcher body (cutlass_gemm_sm90.h states its preconditions): builds the kernel parameters
/// (TMA descriptors) and launches one kernel on `stream`. Allocates nothing.
template <typename T, bool kBiasRelu>
void run_sm90(const T* A, const T* B, const T* bias, T* C, int M, int N, int K,
              cudaStream_t stream) {
  using G = Sm90Gemm<T, kBiasRelu>;
  using Gemm = typename G::Gemm;
  using Kernel = typename G::Kernel;
  int device = 0;
  FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
  cutlass::KernelHardwareInfo hw_info;
  hw_info.device_id = device;
  FUSELENS_CUDA_CHECK(
      cudaDeviceGetAttribute(&hw_info.sm_count, cudaDevAttrMultiProcessorCount, device));

  using Element = typename G::Element;
  const auto* a = reinterpret_cast<const Element*>(A);
  const auto* b = reinterpret_cast<const Element*>(B);
  auto* d = reinterpret_cast<Element*>(C);
  // Packed strides (L = 1), as cutlass::make_cute_packed_stride (tools/util) gives them:
  // A row-major (M, K): (K, 1); B row-major read as CUTLASS's (N, K): (1, N); D row-major: (N, 1).
  typename Kernel::StrideA stride_a{};
  typename Kernel::StrideB stride_b{};
  typename Kernel::StrideD stride_d{};
  static_assert(cute::is_static_v<std::remove_cvref_t<decltype(cute::get<1>(stride_a))>> &&
                    cute::is_static_v<std::remove_cvref_t<decltype(cute::get<0>(stride_b))>> &&
                    cute::is_static_v<std::remove_cvref_t<decltype(cute::get<1>(stride_d))>>,
                "unit strides expected: row-major A, B, D");
  cute::get<0>(stride_a) = K;
  cute::get<2>(stride_a) = static_cast<std::int64_t>(M) * K;
  cute::get<1>(stride_b) = N;
  cute::get<2>(stride_b) = static_cast<std::int64_t>(N) * K;
  cute::get<0>(stride_d) = N;
  cute::get<2>(stride_d) = static_cast<std::int64_t>(M) * N;

  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                {M, N, K, 1},
                                {a, stride_a, b, stride_b},
                                {{}, nullptr, typename Kernel::StrideC{}, d, stride_d},
                                hw_info};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  if constexpr (kBiasRelu) {
    args.epilogue.thread.bias_ptr = reinterpret_cast<const Element*>(bias);
  }

  cutlass::Status status = Gemm::can_implement(args);
  if (status != cutlass::Status::kSuccess) throw_status("can_implement", status);
  if (Gemm::get_workspace_size(args) != 0) {
    throw std::runtime_error("cutlass_gemm: the kernel asks for a workspace (not provided)");
  }
  // The dynamic shared memory opt-in, once per device (devices 0..63; others every call).
  static std::atomic<std::uint64_t> attribute_set{0};
  const std::uint64_t bit = device < 64 ? (std::uint64_t{1} << device) : 0;
  if (bit == 0 || (attribute_set.load(std::memory_order_acquire) & bit) == 0) {
    FUSELENS_CUDA_CHECK(cudaFuncSetAttribute(cutlass::device_kernel<Kernel>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(Kernel::SharedStorageSize)));
    attribute_set.fetch_or(bit, std::memory_order_acq_rel);
  }
  typename Kernel::Params params = Kernel::to_underlying_arguments(args, nullptr);
  status = Gemm::run(params, stream);
  if (status != cutlass::Status::kSuccess) {
    FUSELENS_CUDA_CHECK_LAST();  // a launch error, with its CUDA text
    throw_status("run", status);
  }
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace fuselens::kernels::cutlass_detail
