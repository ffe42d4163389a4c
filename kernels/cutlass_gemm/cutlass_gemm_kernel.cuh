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
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cuda_check.h"
#include "cutlass_gemm/cutlass_gemm_sm90.h"

namespace fuselens::kernels::cutlass_detail {

/// CUTLASS's element type of the same bits as the suite's T.
template <typename T>
using ElementOf =
    std::conditional_t<std::is_same_v<T, __half>, cutlass::half_t, cutlass::bfloat16_t>;

/// The two kernel configurations (cutlass_gemm_sm90.h, Config).
/// kLarge: block tile 256×128×64, cluster 1×2×1, cooperative kernel and epilogue (two consumer
///   warpgroups share one tile): the shape cuBLASLt picks at 4096³-8192³ on H100, 2-6 points
///   closer to it at 8192³ than 128×256 in 2×1 clusters (README.md).
/// kSmall: block tile 64×128×64, no cluster, ping-pong kernel (two consumer warpgroups alternate
///   between two tiles, one's epilogue overlapping the other's mainloop) and the plain TMA
///   warp-specialized epilogue: four times as many tiles, for problems that give the large
///   configuration fewer tiles than SMs.
template <Config kConfig>
struct Sm90Schedule;
///
/// The large configuration's tile scheduler is a build-time choice (CMake cache variable
/// FUSELENS_CUTLASS_SCHEDULER, kernels/cutlass_gemm/CMakeLists.txt, README.md "Stream-K"):
/// - persistent (default; no macro): GemmUniversal's default scheduler, whole output tiles.
/// - streamk (FUSELENS_CUTLASS_STREAMK): cutlass::gemm::StreamKScheduler, the same tiles and
///   cluster; CTAs may share an output tile's k-loop, so the last partial wave is spread over all
///   SMs (the peers reduce their FP32 partials through a workspace; run_sm90 keeps one).
/// - streamk_128x256 (FUSELENS_CUTLASS_STREAMK and FUSELENS_CUTLASS_TILE_128X256): stream-K with
///   128×256 tiles in 2×1 clusters (the large configuration before 2026-11-26; CUTLASS's
///   example 49 runs its stream-K kernel on 128×128 tiles in 2×1 clusters).
/// - pingpong_128x128 (FUSELENS_CUTLASS_PINGPONG): the ping-pong kernel on 128×128 tiles in 2×1
///   clusters, persistent scheduler (issue 24's 4096³ cold gap, 2026-11-27).
/// The small configuration keeps the persistent scheduler: CUTLASS's sm90 stream-K scheduler runs
/// only with the cooperative kernel, and the small one is ping-pong.
#if defined(FUSELENS_CUTLASS_STREAMK)
inline constexpr bool kLargeStreamK = true;
#else
inline constexpr bool kLargeStreamK = false;
#endif
template <>
struct Sm90Schedule<Config::kLarge> {
#if defined(FUSELENS_CUTLASS_PINGPONG)
  // pingpong_128x128 (FUSELENS_CUTLASS_PINGPONG): 128×128 tiles in 2×1 clusters, the ping-pong
  // kernel (one consumer warpgroup's epilogue overlaps the other's mainloop) and the plain TMA
  // epilogue, the persistent scheduler.
  using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
  using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
#else
#if defined(FUSELENS_CUTLASS_TILE_128X256)
  using TileShape = cute::Shape<cute::_128, cute::_256, cute::_64>;
  using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;
#else
  using TileShape = cute::Shape<cute::_256, cute::_128, cute::_64>;
  using ClusterShape = cute::Shape<cute::_1, cute::_2, cute::_1>;
#endif
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
  using Epilogue = cutlass::epilogue::TmaWarpSpecializedCooperative;
#endif
  // void: GemmUniversal's default, the persistent scheduler (the kernel type, and so its name in a
  // profile, stays what it was before the choice existed).
  using Scheduler = std::conditional_t<kLargeStreamK, cutlass::gemm::StreamKScheduler, void>;
};
template <>
struct Sm90Schedule<Config::kSmall> {
  using TileShape = cute::Shape<cute::_64, cute::_128, cute::_64>;
  using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
  using Mainloop = cutlass::gemm::KernelTmaWarpSpecializedPingpong;
  using Epilogue = cutlass::epilogue::TmaWarpSpecialized;
  using Scheduler = void;
};

/// One sm90 GEMM: T storage, FP32 accumulate and epilogue math; kBiasRelu selects the fused
/// bias + ReLU epilogue (else D = A·B); kConfig the tile configuration.
template <typename T, bool kBiasRelu, Config kConfig>
struct Sm90Gemm {
  using Element = ElementOf<T>;
  using Layout = cutlass::layout::RowMajor;          // A, B, D
  static constexpr int kAlignment = 16 / sizeof(T);  // elements per 16-byte TMA access
  using Schedule = Sm90Schedule<kConfig>;
  using TileShape = typename Schedule::TileShape;
  using ClusterShape = typename Schedule::ClusterShape;

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
      typename Schedule::Epilogue, FusionOp>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, Layout, kAlignment, Element,
      Layout, kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Schedule::Mainloop>::CollectiveOp;

  using Kernel =
      cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, CollectiveMainloop,
                                           CollectiveEpilogue, typename Schedule::Scheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

[[noreturn]] inline void throw_status(const char* what, cutlass::Status status) {
  throw std::runtime_error(std::string("cutlass_gemm: ") + what + ": " +
                           cutlassGetStatusString(status));
}

/// The tile scheduler's swizzle (CUTLASS's max_swizzle_size: tiles are handed out in groups of
/// that many along the rasterized dimension, so CTAs running at the same time share A and B panels
/// in L2): FUSELENS_CUTLASS_SWIZZLE = 1, 2, 4 or 8, read once per process; any other value or none
/// gives kDefaultSwizzle. A tuning knob of the kernel study (README.md, "Tile scheduler swizzle").
inline constexpr int kDefaultSwizzle = 8;
inline int scheduler_swizzle() {
  static const int swizzle =
      parse_swizzle(std::getenv("FUSELENS_CUTLASS_SWIZZLE"), kDefaultSwizzle);
  return swizzle;
}

/// The tile scheduler's rasterization order: FUSELENS_CUTLASS_RASTER = heuristic, m or n, read once
/// per process; anything else gives CUTLASS's heuristic. A tuning knob like the swizzle.
inline cutlass::gemm::kernel::detail::RasterOrderOptions scheduler_raster() {
  using Options = cutlass::gemm::kernel::detail::RasterOrderOptions;
  static const Options order = [] {
    switch (parse_raster(std::getenv("FUSELENS_CUTLASS_RASTER"), Raster::kHeuristic)) {
      case Raster::kAlongM:
        return Options::AlongM;
      case Raster::kAlongN:
        return Options::AlongN;
      case Raster::kHeuristic:
        break;
    }
    return Options::Heuristic;
  }();
  return order;
}

/// The stream-K decomposition: FUSELENS_CUTLASS_DECOMPOSITION = heuristic, streamk or
/// dataparallel, read once per process; anything else gives CUTLASS's heuristic. Used only when
/// the large configuration runs the stream-K scheduler (a tuning knob like the swizzle).
inline cutlass::gemm::kernel::detail::DecompositionMode scheduler_decomposition() {
  using Mode = cutlass::gemm::kernel::detail::DecompositionMode;
  static const Mode mode = [] {
    switch (parse_decomposition(std::getenv("FUSELENS_CUTLASS_DECOMPOSITION"),
                                Decomposition::kHeuristic)) {
      case Decomposition::kStreamK:
        return Mode::StreamK;
      case Decomposition::kDataParallel:
        return Mode::DataParallel;
      case Decomposition::kHeuristic:
        break;
    }
    return Mode::Heuristic;
  }();
  return mode;
}

/// The arguments a kernel's parameters are built from: equal keys give equal parameters. `stream`
/// is set only for kernels with a workspace (kept per stream, workspace_for), else null.
struct ParamsKey {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;
  void* c = nullptr;
  cudaStream_t stream = nullptr;
  int m = 0, n = 0, k = 0, device = -1, sm_count = 0;
  bool operator==(const ParamsKey&) const = default;
};

/// Device memory for a kernel's workspace (stream-K: the FP32 partial tiles its peers reduce and
/// their barrier flags), at least `bytes` long, for launches of the instantiation `Kernel` on
/// `device` (the current one) and `stream`. Kept for the process: allocated (cudaMalloc) on the
/// first call of each (device, stream) and when a problem needs more than the block held (sizes
/// rounded up to a power of two, so a sweep of shapes allocates a few times). A block is never
/// freed, because the kernel parameters cached by any thread (run_sm90) may still point to it.
/// Launches on one stream run in order, so they can share a block; launches on different streams
/// get different blocks. Thread-safe. Throws CudaError when cudaMalloc fails (also while the stream
/// is being captured into a graph: make the first call of a shape outside the capture).
template <class Kernel>
void* workspace_for(std::size_t bytes, int device, cudaStream_t stream) {
  struct Block {
    int device;
    cudaStream_t stream;
    void* ptr;
    std::size_t bytes;
  };
  static std::mutex mutex;
  static std::vector<Block> blocks;  // the newest, largest block per (device, stream)
  const std::lock_guard<std::mutex> lock(mutex);
  Block* held = nullptr;
  for (Block& block : blocks) {
    if (block.device == device && block.stream == stream) held = &block;
  }
  if (held != nullptr && held->bytes >= bytes) return held->ptr;
  std::size_t rounded = 256;
  while (rounded < bytes && rounded <= (std::numeric_limits<std::size_t>::max() >> 1))
    rounded <<= 1;
  if (rounded < bytes) rounded = bytes;
  void* ptr = nullptr;
  FUSELENS_CUDA_CHECK(cudaMalloc(&ptr, rounded));
  if (held != nullptr) {
    *held = Block{device, stream, ptr, rounded};  // the old block stays allocated (above)
  } else {
    blocks.push_back(Block{device, stream, ptr, rounded});
  }
  return ptr;
}

/// The launcher body (cutlass_gemm_sm90.h states its preconditions): builds the kernel parameters
/// (TMA descriptors) and launches one kernel on `stream`. The persistent kernels need no workspace
/// and allocate nothing; a stream-K kernel's workspace comes from workspace_for (allocated on the
/// first call of a shape that needs more than held) and its barrier flags are zeroed before every
/// launch (a cudaMemsetAsync on `stream`, as CUTLASS's GemmUniversalAdapter::run does; none when
/// the decomposition chose whole tiles). The parameters of the
/// calling thread's last call are kept and reused when the pointers, sizes and device repeat (the
/// usual case in a training loop or a benchmark): encoding the TMA descriptors
/// (cuTensorMapEncodeTiled, through CUTLASS) costs the host several microseconds a call, which a
/// GPU waiting on a short kernel would see as launch latency.
template <typename T, bool kBiasRelu, Config kConfig>
void run_sm90(const T* A, const T* B, const T* bias, T* C, int M, int N, int K, int device,
              int sm_count, cudaStream_t stream) {
  using G = Sm90Gemm<T, kBiasRelu, kConfig>;
  using Gemm = typename G::Gemm;
  using Kernel = typename G::Kernel;
  // Only the stream-K scheduler asks for a workspace (checked below); its key includes the stream.
  constexpr bool kStreamK = kConfig == Config::kLarge && kLargeStreamK;
  const ParamsKey key{A, B, bias, C, kStreamK ? stream : nullptr, M, N, K, device, sm_count};
  thread_local ParamsKey last_key{};
  thread_local typename Kernel::Params last_params{};
  thread_local typename Gemm::Arguments last_args{};
  thread_local void* last_workspace = nullptr;
  thread_local std::size_t last_workspace_bytes = 0;
  if (key == last_key) {
    if (last_workspace_bytes != 0) {
      const cutlass::Status zeroed =
          Kernel::initialize_workspace(last_args, last_workspace, stream);
      if (zeroed != cutlass::Status::kSuccess) throw_status("initialize_workspace", zeroed);
    }
    const cutlass::Status status = Gemm::run(last_params, stream);
    if (status != cutlass::Status::kSuccess) {
      FUSELENS_CUDA_CHECK_LAST();
      throw_status("run", status);
    }
    FUSELENS_CUDA_CHECK_LAST();
    return;
  }
  cutlass::KernelHardwareInfo hw_info;
  hw_info.device_id = device;
  hw_info.sm_count = sm_count;

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
  args.scheduler.max_swizzle_size = scheduler_swizzle();
  args.scheduler.raster_order = scheduler_raster();
  if constexpr (kStreamK) {
    args.scheduler.decomposition_mode = scheduler_decomposition();
  }
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  if constexpr (kBiasRelu) {
    args.epilogue.thread.bias_ptr = reinterpret_cast<const Element*>(bias);
  }

  cutlass::Status status = Gemm::can_implement(args);
  if (status != cutlass::Status::kSuccess) throw_status("can_implement", status);
  const std::size_t workspace_bytes = Gemm::get_workspace_size(args);
  if (workspace_bytes != 0 && !kStreamK) {
    throw std::runtime_error("cutlass_gemm: the kernel asks for a workspace (not provided)");
  }
  void* workspace =
      workspace_bytes == 0 ? nullptr : workspace_for<Kernel>(workspace_bytes, device, stream);
  // The dynamic shared memory opt-in, once per device (devices 0..63; others every call).
  static std::atomic<std::uint64_t> attribute_set{0};
  const std::uint64_t bit = device < 64 ? (std::uint64_t{1} << device) : 0;
  if (bit == 0 || (attribute_set.load(std::memory_order_acquire) & bit) == 0) {
    FUSELENS_CUDA_CHECK(cudaFuncSetAttribute(cutlass::device_kernel<Kernel>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(Kernel::SharedStorageSize)));
    attribute_set.fetch_or(bit, std::memory_order_acq_rel);
  }
  if (workspace != nullptr) {
    status = Kernel::initialize_workspace(args, workspace, stream);
    if (status != cutlass::Status::kSuccess) throw_status("initialize_workspace", status);
  }
  typename Kernel::Params params = Kernel::to_underlying_arguments(args, workspace);
  last_key = ParamsKey{};  // invalid while the new parameters are stored
  last_params = params;
  last_args = args;
  last_workspace = workspace;
  last_workspace_bytes = workspace_bytes;
  last_key = key;
  status = Gemm::run(params, stream);
  if (status != cutlass::Status::kSuccess) {
    FUSELENS_CUDA_CHECK_LAST();  // a launch error, with its CUDA text
    throw_status("run", status);
  }
  FUSELENS_CUDA_CHECK_LAST();
}

}  // namespace fuselens::kernels::cutlass_detail
