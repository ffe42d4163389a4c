// FP16/BF16 tensor-core GEMM + bias + ReLU (kernels/gemm_tc): unfused chain and fused kernel against the
// double-precision reference computed from the rounded inputs, in both dtypes, at seed shapes, at odd
// shapes that are not multiples of any block tile (M = 77, N = 136, K = 72 = 9 · 8), and at shapes that
// select each of the three tile configs (small 64×64, medium 128×128, large 128×256; gemm_tc.cuh).
// Tolerances: kFp16RelativeTolerance (2e-3) and kBf16RelativeTolerance (1.6e-2), kernels/common/compare.h.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "gemm_tc/gemm_tc.cuh"
#include "gemm_tc/reference.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

struct Case {
  bool bf16;
  int M, N, K;
};

std::vector<__half> to_device_type(const std::vector<float>& v, __half) { return ft::to_half(v); }
std::vector<__nv_bfloat16> to_device_type(const std::vector<float>& v, __nv_bfloat16) { return ft::to_bf16(v); }

template <typename T>
double tolerance() {
  return std::is_same_v<T, __half> ? fk::kFp16RelativeTolerance : fk::kBf16RelativeTolerance;
}

/// Fresh inputs rounded to T, the reference from the rounded values, and the device buffers.
template <typename T>
struct Problem {
  int M, N, K;
  std::vector<T> a, b, bias;
  std::vector<float> reference;
  fk::DeviceBuffer<T> da, db, dbias, dc;

  Problem(int m, int n, int k, std::uint32_t seed) : M(m), N(n), K(k) {
    a = to_device_type(ft::random_floats(static_cast<std::size_t>(M) * K, seed), T{});
    b = to_device_type(ft::random_floats(static_cast<std::size_t>(K) * N, seed + 1), T{});
    bias = to_device_type(ft::random_floats(static_cast<std::size_t>(N), seed + 2), T{});
    reference = fk::gemm_tc_reference(ft::to_float(a), ft::to_float(b), ft::to_float(bias), M, N, K);
    da = fk::DeviceBuffer<T>(a.size());
    db = fk::DeviceBuffer<T>(b.size());
    dbias = fk::DeviceBuffer<T>(bias.size());
    dc = fk::DeviceBuffer<T>(static_cast<std::size_t>(M) * N);
    da.copy_from_host(a);
    db.copy_from_host(b);
    dbias.copy_from_host(bias);
  }

  template <typename Launch>
  fk::Comparison run(Launch launch) {
    ft::poison(dc);
    launch(da.data(), db.data(), dbias.data(), dc.data(), M, N, K);
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    return fk::compare_relative_l2(ft::to_float(dc.copy_to_host()), reference);
  }
};

class GemmTensorCore : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }

  template <typename T>
  void check_both() {
    const Case c = GetParam();
    Problem<T> p(c.M, c.N, c.K, 31);
    const auto unfused = p.run([](auto... args) { fk::launch_gemm_tc_bias_relu_unfused<T>(args...); });
    EXPECT_TRUE(unfused.passes(tolerance<T>()))
        << "unfused " << unfused.relative_l2 << " non-finite " << unfused.nonfinite_count;
    const auto fused = p.run([](auto... args) { fk::launch_gemm_tc_bias_relu_fused<T>(args...); });
    EXPECT_TRUE(fused.passes(tolerance<T>()))
        << "fused " << fused.relative_l2 << " non-finite " << fused.nonfinite_count;
  }
};

TEST_P(GemmTensorCore, UnfusedAndFusedMatchReference) {
  if (GetParam().bf16) {
    check_both<__nv_bfloat16>();
  } else {
    check_both<__half>();
  }
}

std::vector<Case> cases() {
  // (M, N, K): seed 000/002 shapes, odd shapes, and shapes that pick the medium and large configs on an
  // H100 (132 SMs): 1200×1784 → 10·14 = 140 medium tiles; 1500×2744 → 12·11 = 132 large tiles (K = 136:
  // two 64-deep k-tiles and a zero-filled tail of 8).
  const std::vector<std::vector<int>> shapes{{128, 128, 128}, {64, 128, 256},  {128, 256, 256},
                                             {77, 136, 72},   {1, 256, 256},   {33, 8, 8},
                                             {1200, 1784, 56}, {1500, 2744, 136}};
  std::vector<Case> out;
  for (bool bf16 : {false, true}) {
    for (const auto& s : shapes) out.push_back({bf16, s[0], s[1], s[2]});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmTensorCore, ::testing::ValuesIn(cases()), [](const auto& p) {
  return std::string(p.param.bf16 ? "bf16" : "fp16") + "_M" + std::to_string(p.param.M) + "_N" +
         std::to_string(p.param.N) + "_K" + std::to_string(p.param.K);
});

class GemmTensorCoreArgs : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
};

TEST_F(GemmTensorCoreArgs, RejectsKOrNNotMultipleOf8AndMisalignedPointers) {
  fk::DeviceBuffer<__half> a(64 * 64 + 8), b(64 * 64 + 8), bias(72), c(64 * 72);
  EXPECT_THROW(fk::launch_gemm_tc_bias_relu_fused<__half>(a.data(), b.data(), bias.data(), c.data(), 8, 64, 12),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_gemm_tc_bias_relu_unfused<__half>(a.data(), b.data(), bias.data(), c.data(), 8, 60, 16),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_gemm_tc<__half>(a.data() + 1, b.data(), c.data(), 8, 64, 16), std::invalid_argument);
  EXPECT_THROW(fk::launch_gemm_tc<__half>(a.data(), b.data(), c.data(), -1, 64, 16), std::invalid_argument);
  // Empty outputs launch nothing and do not throw.
  EXPECT_NO_THROW(fk::launch_gemm_tc_bias_relu_fused<__half>(a.data(), b.data(), bias.data(), c.data(), 0, 64, 16));
}

// The unfused steps on their own, with sizes that exercise the scalar paths (N % 8 != 0, odd n).
TEST_F(GemmTensorCoreArgs, BiasAndReluKernelsMatchHostScalarAndVectorPaths) {
  for (const int N : {136, 13}) {
    const int M = 7;
    const auto c = ft::to_half(ft::random_floats(static_cast<std::size_t>(M) * N, 41));
    const auto bias = ft::to_half(ft::random_floats(static_cast<std::size_t>(N), 42));
    fk::DeviceBuffer<__half> dc(c.size()), dbias(bias.size()), dy(c.size());
    dc.copy_from_host(c);
    dbias.copy_from_host(bias);
    fk::launch_add_bias_tc<__half>(dc.data(), dbias.data(), M, N);
    ft::poison(dy);
    fk::launch_relu_tc<__half>(dc.data(), dy.data(), c.size());
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    const auto cf = ft::to_float(c);
    const auto bf = ft::to_float(bias);
    std::vector<float> expected(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
      const float v = __half2float(__float2half_rn(cf[i] + bf[i % static_cast<std::size_t>(N)]));
      expected[i] = v < 0.0f ? 0.0f : v;
    }
    const auto got = fk::compare_relative_l2(ft::to_float(dy.copy_to_host()), expected);
    EXPECT_TRUE(got.passes(0.0)) << "N=" << N << " " << got.relative_l2 << " non-finite " << got.nonfinite_count;
  }
}

}  // namespace
