// CUTLASS sm90 GEMM + bias + ReLU (kernels/cutlass_gemm): the fused kernel, the unfused chain and
// the plain GEMM against the double-precision reference computed from the rounded inputs, FP16 and
// BF16, with the tolerances of the other GEMM variants (kFp16RelativeTolerance 2e-3,
// kBf16RelativeTolerance 1.6e-2; kernels/common/compare.h). Shapes against the two configurations
// (cutlass_gemm_sm90.h, choose_config): the small 64×128×64 tiles for the seed shapes and the M, N
// and K tails (77×136×72, 33×8×8, one row); the large 256×128×64 tiles in 1×2 clusters for
// 1500×2744×136 (6 × 22 = 132 tiles with tails in M, N and K: exactly an H100's SMs) and
// 2048×4096×64 (256 tiles, so persistent CTAs take two); and K = 0. The reuse of the last call's
// parameters: alternating problems of one shape and one problem after another. Launch counts by
// graph capture. Built only with FUSELENS_HAVE_CUTLASS; the GPU cases skip without a GPU and on
// devices other than compute capability 9.0 (the kernels are sm_90a code); the argument checks run
// everywhere.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "cutlass_gemm/cutlass_gemm.cuh"
#include "cutlass_gemm/cutlass_gemm_sm90.h"
#include "gemm_tc/reference.h"
#include "peers/peers.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

#define FUSELENS_SKIP_WITHOUT_SM90()                                                    \
  do {                                                                                  \
    FUSELENS_SKIP_WITHOUT_GPU();                                                        \
    if (!fk::cutlass_gemm_available())                                                  \
      GTEST_SKIP() << "GPU test skipped: the CUTLASS kernels are sm_90a code and this " \
                      "device is not compute capability 9.0";                           \
  } while (false)

struct Case {
  bool bf16;
  int M, N, K;
};

std::vector<__half> to_device_type(const std::vector<float>& v, __half) { return ft::to_half(v); }
std::vector<__nv_bfloat16> to_device_type(const std::vector<float>& v, __nv_bfloat16) {
  return ft::to_bf16(v);
}

template <typename T>
double tolerance() {
  return std::is_same_v<T, __half> ? fk::kFp16RelativeTolerance : fk::kBf16RelativeTolerance;
}

/// Fresh inputs rounded to T, the references relu(A·B + bias) and A·B from the rounded values, and
/// the device buffers.
template <typename T>
struct Problem {
  int M, N, K;
  std::vector<float> reference, reference_plain;
  fk::DeviceBuffer<T> da, db, dbias, dc;

  Problem(int m, int n, int k, std::uint32_t seed) : M(m), N(n), K(k) {
    const auto a = to_device_type(ft::random_floats(static_cast<std::size_t>(M) * K, seed), T{});
    const auto b =
        to_device_type(ft::random_floats(static_cast<std::size_t>(K) * N, seed + 1), T{});
    const auto bias = to_device_type(ft::random_floats(static_cast<std::size_t>(N), seed + 2), T{});
    const auto af = ft::to_float(a);
    const auto bf = ft::to_float(b);
    reference = fk::gemm_tc_reference(af, bf, ft::to_float(bias), M, N, K);
    // A·B alone (no bias, no ReLU), double accumulation, rounded to float once.
    reference_plain.assign(static_cast<std::size_t>(M) * N, 0.0f);
    for (int r = 0; r < M; ++r) {
      for (int col = 0; col < N; ++col) {
        double acc = 0.0;
        for (int i = 0; i < K; ++i) {
          acc += static_cast<double>(af[static_cast<std::size_t>(r) * K + i]) *
                 bf[static_cast<std::size_t>(i) * N + col];
        }
        reference_plain[static_cast<std::size_t>(r) * N + col] = static_cast<float>(acc);
      }
    }
    da = fk::DeviceBuffer<T>(a.size());
    db = fk::DeviceBuffer<T>(b.size());
    dbias = fk::DeviceBuffer<T>(bias.size());
    dc = fk::DeviceBuffer<T>(static_cast<std::size_t>(M) * N);
    da.copy_from_host(a);
    db.copy_from_host(b);
    dbias.copy_from_host(bias);
  }

  /// Output of `launch` (poisoned before), as floats.
  template <typename Launch>
  std::vector<float> run(Launch launch) {
    ft::poison(dc);
    launch(da.data(), db.data(), dbias.data(), dc.data(), M, N, K);
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    return ft::to_float(dc.copy_to_host());
  }
};

class CutlassGemm : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_SM90(); }

  template <typename T>
  void check_all() {
    const Case c = GetParam();
    Problem<T> p(c.M, c.N, c.K, 53);
    const auto fused = fk::compare_relative_l2(
        p.run([](auto... args) { fk::launch_cutlass_gemm_bias_relu_fused<T>(args...); }),
        p.reference);
    EXPECT_TRUE(fused.passes(tolerance<T>()))
        << "cutlass_fused " << fused.relative_l2 << " non-finite " << fused.nonfinite_count;
    const auto unfused = fk::compare_relative_l2(
        p.run([](auto... args) { fk::launch_cutlass_gemm_bias_relu_unfused<T>(args...); }),
        p.reference);
    EXPECT_TRUE(unfused.passes(tolerance<T>()))
        << "cutlass_unfused " << unfused.relative_l2 << " non-finite " << unfused.nonfinite_count;
    const auto plain = fk::compare_relative_l2(
        p.run([](const T* a, const T* b, const T*, T* out, int m, int n, int k) {
          fk::launch_cutlass_gemm<T>(a, b, out, m, n, k);
        }),
        p.reference_plain);
    EXPECT_TRUE(plain.passes(tolerance<T>()))
        << "cutlass plain GEMM " << plain.relative_l2 << " non-finite " << plain.nonfinite_count;
  }
};

TEST_P(CutlassGemm, FusedUnfusedAndPlainMatchReference) {
  if (GetParam().bf16) {
    check_all<__nv_bfloat16>();
  } else {
    check_all<__half>();
  }
}

std::vector<Case> cases() {
  const std::vector<std::vector<int>> shapes{
      {128, 128, 128}, {64, 128, 256}, {128, 256, 256},   {1024, 1024, 1024}, {77, 136, 72},
      {1, 256, 256},   {33, 8, 8},     {1500, 2744, 136}, {2048, 4096, 64},   {96, 64, 0}};
  std::vector<Case> out;
  for (bool bf16 : {false, true}) {
    for (const auto& s : shapes) out.push_back({bf16, s[0], s[1], s[2]});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, CutlassGemm, ::testing::ValuesIn(cases()), [](const auto& p) {
  return std::string(p.param.bf16 ? "bf16" : "fp16") + "_M" + std::to_string(p.param.M) + "_N" +
         std::to_string(p.param.N) + "_K" + std::to_string(p.param.K);
});

// The launcher keeps the parameters (TMA descriptors) of a thread's last call and reuses them when
// the pointers and sizes repeat: alternating two problems of one shape (same sizes, other
// pointers), then a new shape, each result must be its own problem's.
TEST(CutlassGemmReuse, RepeatedAndAlternatingCallsGiveEachProblemItsOwnResult) {
  FUSELENS_SKIP_WITHOUT_SM90();
  Problem<__half> first(128, 256, 256, 11);
  Problem<__half> second(128, 256, 256, 12);
  Problem<__half> other(1024, 512, 256, 13);
  auto fused = [](auto... args) { fk::launch_cutlass_gemm_bias_relu_fused<__half>(args...); };
  for (int round = 0; round < 2; ++round) {
    for (auto* p : {&first, &first, &second, &first, &other, &second}) {
      const auto r = fk::compare_relative_l2(p->run(fused), p->reference);
      EXPECT_LE(r.relative_l2, fk::kFp16RelativeTolerance)
          << "round " << round << " problem " << p->M << "x" << p->N;
      EXPECT_EQ(r.nonfinite_count, 0u);
    }
  }
}

// The large configuration called again and again with the same pointers (the cached-parameters
// path) and then on a second stream: 1024×4608 gives 4 × 36 = 144 tiles of 256×128, one wave and
// 12 tiles on an H100's 132 SMs, and K = 576 gives 9 k-tiles a tile. A stream-K build
// (FUSELENS_CUTLASS_SCHEDULER=streamk) splits the k-loops here even with CUTLASS's heuristic
// (a tail wave under half full, more than 8 k-tiles: tile_scheduler_params.h, get_num_sk_tiles);
// its peers share a workspace whose barrier flags must be cleared before every launch, or a later
// call would wait on an earlier call's flags or add its partials to them. Every call must give the
// reference; the persistent build runs the same calls. (The other large cases have at most 8
// k-tiles: never stream-K.)
TEST(CutlassGemmReuse, LargeConfigurationRepeatedCallsAndSecondStreamMatchReference) {
  FUSELENS_SKIP_WITHOUT_SM90();
  namespace cd = fuselens::kernels::cutlass_detail;
  ASSERT_EQ(cd::choose_config(1024, 4608, 132), cd::Config::kLarge);
  Problem<__half> p(1024, 4608, 576, 21);
  auto fused = [](auto... args) { fk::launch_cutlass_gemm_bias_relu_fused<__half>(args...); };
  for (int call = 0; call < 3; ++call) {
    const auto r = fk::compare_relative_l2(p.run(fused), p.reference);
    EXPECT_LE(r.relative_l2, fk::kFp16RelativeTolerance) << "call " << call;
    EXPECT_EQ(r.nonfinite_count, 0u) << "call " << call;
  }
  cudaStream_t side = nullptr;
  FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  for (int call = 0; call < 2; ++call) {
    const auto r =
        fk::compare_relative_l2(p.run([side](const __half* a, const __half* b, const __half* bias,
                                             __half* c, int m, int n, int k) {
          FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());  // the poisoning, on the default stream
          fk::launch_cutlass_gemm_bias_relu_fused<__half>(a, b, bias, c, m, n, k, side);
          FUSELENS_CUDA_CHECK(cudaStreamSynchronize(side));
        }),
                                p.reference);
    EXPECT_LE(r.relative_l2, fk::kFp16RelativeTolerance) << "side stream, call " << call;
    EXPECT_EQ(r.nonfinite_count, 0u) << "side stream, call " << call;
  }
  FUSELENS_CUDA_CHECK(cudaStreamDestroy(side));
  const auto plain = fk::compare_relative_l2(
      p.run([](const __half* a, const __half* b, const __half*, __half* out, int m, int n, int k) {
        fk::launch_cutlass_gemm<__half>(a, b, out, m, n, k);
      }),
      p.reference_plain);
  EXPECT_LE(plain.relative_l2, fk::kFp16RelativeTolerance);
}

// One kernel fused, three unfused (CUTLASS GEMM, bias, ReLU), one plain: counted as the kernel
// nodes of a CUDA graph captured on a side stream (peers::count_kernel_launches), which also shows
// that the launches are capturable (nothing allocated or synchronized inside).
TEST(CutlassGemmLaunches, FusedIsOneKernelUnfusedThreeAndBothCapture) {
  FUSELENS_SKIP_WITHOUT_SM90();
  Problem<__half> p(256, 512, 128, 7);
  namespace fp = fuselens::kernels::peers;
  const int fused = fp::count_kernel_launches([&](cudaStream_t stream) {
    fk::launch_cutlass_gemm_bias_relu_fused<__half>(p.da.data(), p.db.data(), p.dbias.data(),
                                                    p.dc.data(), p.M, p.N, p.K, stream);
  });
  const int unfused = fp::count_kernel_launches([&](cudaStream_t stream) {
    fk::launch_cutlass_gemm_bias_relu_unfused<__half>(p.da.data(), p.db.data(), p.dbias.data(),
                                                      p.dc.data(), p.M, p.N, p.K, stream);
  });
  const int plain = fp::count_kernel_launches([&](cudaStream_t stream) {
    fk::launch_cutlass_gemm<__half>(p.da.data(), p.db.data(), p.dc.data(), p.M, p.N, p.K, stream);
  });
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(unfused, 3);
  EXPECT_EQ(plain, 1);
}

// Argument checks come before the device check and touch no memory, so they are tested with
// made-up (never dereferenced) 256-byte aligned addresses and need no GPU: these tests run
// everywhere. On a machine without a compute capability 9.0 device, valid arguments then throw
// CutlassUnavailable (before any launch); on one, an empty output launches nothing.
template <typename T>
T* fake_device_pointer(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

TEST(CutlassGemmArgs, RejectsKOrNNotMultipleOf8MisalignedAndNullPointers) {
  auto* a = fake_device_pointer<__half>(0x10000);
  auto* b = fake_device_pointer<__half>(0x20000);
  auto* bias = fake_device_pointer<__half>(0x30000);
  auto* c = fake_device_pointer<__half>(0x40000);
  EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_fused<__half>(a, b, bias, c, 8, 64, 12),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_unfused<__half>(a, b, bias, c, 8, 60, 16),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm<__half>(a + 1, b, c, 8, 64, 16), std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_fused<__half>(a, b, bias + 4, c, 8, 64, 16),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_fused<__half>(a, b, nullptr, c, 8, 64, 16),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_unfused<__half>(a, b, nullptr, c, 8, 64, 16),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm<__nv_bfloat16>(nullptr, nullptr, nullptr, 8, 64, 16),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_cutlass_gemm<__nv_bfloat16>(nullptr, nullptr, nullptr, -1, 64, 16),
               std::invalid_argument);
}

TEST(CutlassGemmArgs, ValidArgumentsLaunchNothingWhenEmptyOrThrowUnavailableOffSm90) {
  auto* a = fake_device_pointer<__half>(0x10000);
  auto* b = fake_device_pointer<__half>(0x20000);
  auto* bias = fake_device_pointer<__half>(0x30000);
  auto* c = fake_device_pointer<__half>(0x40000);
  if (fk::cutlass_gemm_available()) {
    // M == 0 or N == 0: nothing is launched, so the made-up addresses are never used.
    EXPECT_NO_THROW(fk::launch_cutlass_gemm_bias_relu_fused<__half>(a, b, bias, c, 0, 64, 16));
    EXPECT_NO_THROW(fk::launch_cutlass_gemm_bias_relu_unfused<__half>(a, b, bias, c, 8, 0, 16));
  } else {
    EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_fused<__half>(a, b, bias, c, 8, 64, 16),
                 fk::CutlassUnavailable);
    EXPECT_THROW(fk::launch_cutlass_gemm_bias_relu_unfused<__half>(a, b, bias, c, 8, 64, 16),
                 fk::CutlassUnavailable);
    EXPECT_THROW(fk::launch_cutlass_gemm<__nv_bfloat16>(
                     nullptr, nullptr, fake_device_pointer<__nv_bfloat16>(0x40000), 0, 64, 16),
                 fk::CutlassUnavailable);
  }
}

// choose_config needs no GPU: the large tiles (256×128, whole 1×2 clusters) when they fill every
// SM once, else the small ones.
TEST(CutlassGemmConfig, LargeTilesOnlyWhenTheyFillEverySm) {
  namespace cd = fuselens::kernels::cutlass_detail;
  EXPECT_EQ(cd::choose_config(4096, 4096, 132), cd::Config::kLarge);        // 16 × 32 = 512 tiles
  EXPECT_EQ(cd::choose_config(1500, 2744, 132), cd::Config::kLarge);        // 6 × 22 = 132
  EXPECT_EQ(cd::choose_config(1500, 2560, 132), cd::Config::kSmall);        // 6 × 20 = 120
  EXPECT_EQ(cd::choose_config(1024, 1024, 132), cd::Config::kSmall);        // 4 × 8 = 32
  EXPECT_EQ(cd::choose_config(64, 128, 132), cd::Config::kSmall);           // one cluster
  EXPECT_EQ(cd::choose_config(129, 128, 2), cd::Config::kLarge);            // 1 × one cluster of 2
  EXPECT_EQ(cd::choose_config(1 << 30, 1 << 30, 132), cd::Config::kLarge);  // no overflow
}

// FUSELENS_CUTLASS_SWIZZLE takes exactly 1, 2, 4 or 8; every other value keeps the default.
TEST(CutlassGemmConfig, SwizzleEnvironmentValueIsOneOfFourOrTheDefault) {
  namespace cd = fuselens::kernels::cutlass_detail;
  EXPECT_EQ(cd::parse_swizzle("1", 8), 1);
  EXPECT_EQ(cd::parse_swizzle("2", 8), 2);
  EXPECT_EQ(cd::parse_swizzle("4", 8), 4);
  EXPECT_EQ(cd::parse_swizzle("8", 1), 8);
  for (const char* bad : {"", "0", "3", "16", "-8", " 8", "8 ", "8x", "x"}) {
    EXPECT_EQ(cd::parse_swizzle(bad, 8), 8) << '"' << bad << '"';
  }
  EXPECT_EQ(cd::parse_swizzle(nullptr, 2), 2);
}

// FUSELENS_CUTLASS_RASTER takes exactly heuristic, m or n; every other value keeps the default.
TEST(CutlassGemmConfig, RasterEnvironmentValueIsOneOfThreeOrTheDefault) {
  namespace cd = fuselens::kernels::cutlass_detail;
  EXPECT_EQ(cd::parse_raster("m", cd::Raster::kHeuristic), cd::Raster::kAlongM);
  EXPECT_EQ(cd::parse_raster("n", cd::Raster::kHeuristic), cd::Raster::kAlongN);
  EXPECT_EQ(cd::parse_raster("heuristic", cd::Raster::kAlongM), cd::Raster::kHeuristic);
  for (const char* bad : {"", "M", "N", "mn", "m ", " n", "heur", "heuristics", "Heuristic"}) {
    EXPECT_EQ(cd::parse_raster(bad, cd::Raster::kAlongN), cd::Raster::kAlongN) << '"' << bad << '"';
  }
  EXPECT_EQ(cd::parse_raster(nullptr, cd::Raster::kAlongM), cd::Raster::kAlongM);
}

// FUSELENS_CUTLASS_DECOMPOSITION takes exactly heuristic, streamk or dataparallel; every other
// value keeps the default.
TEST(CutlassGemmConfig, DecompositionEnvironmentValueIsOneOfThreeOrTheDefault) {
  namespace cd = fuselens::kernels::cutlass_detail;
  using D = cd::Decomposition;
  EXPECT_EQ(cd::parse_decomposition("streamk", D::kHeuristic), D::kStreamK);
  EXPECT_EQ(cd::parse_decomposition("dataparallel", D::kHeuristic), D::kDataParallel);
  EXPECT_EQ(cd::parse_decomposition("heuristic", D::kStreamK), D::kHeuristic);
  for (const char* bad : {"", "StreamK", "stream-k", "streamk ", " dataparallel", "data", "splitk",
                          "heuristics", "dp"}) {
    EXPECT_EQ(cd::parse_decomposition(bad, D::kDataParallel), D::kDataParallel)
        << '"' << bad << '"';
  }
  EXPECT_EQ(cd::parse_decomposition(nullptr, D::kStreamK), D::kStreamK);
}

}  // namespace
