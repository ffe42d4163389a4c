// FP32 GEMM + bias + ReLU (kernels/gemm_bias_relu): unfused chain and fused kernel against the
// double-precision reference, at a seed shape and at shapes that are not multiples of the 64×64×8 tile.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "gemm_bias_relu/gemm_bias_relu.cuh"
#include "gemm_bias_relu/reference.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

using Shape = std::tuple<int, int, int>;  // M, N, K

class GemmBiasReluFp32 : public ::testing::TestWithParam<Shape> {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }

  // Runs `launch` on fresh inputs and returns its comparison with the reference.
  template <typename Launch>
  fk::Comparison check(Launch launch) {
    const auto [M, N, K] = GetParam();
    const auto a = ft::random_floats(static_cast<std::size_t>(M) * K, 11);
    const auto b = ft::random_floats(static_cast<std::size_t>(K) * N, 12);
    const auto bias = ft::random_floats(static_cast<std::size_t>(N), 13);
    fk::DeviceBuffer<float> da(a.size()), db(b.size()), dbias(bias.size()),
        dc(static_cast<std::size_t>(M) * N);
    da.copy_from_host(a);
    db.copy_from_host(b);
    dbias.copy_from_host(bias);
    ft::poison(dc);
    launch(da.data(), db.data(), dbias.data(), dc.data(), M, N, K);
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    return fk::compare_relative_l2(dc.copy_to_host(), fk::gemm_bias_relu_reference(a, b, bias, M, N, K));
  }
};

TEST_P(GemmBiasReluFp32, UnfusedMatchesReference) {
  const auto c = check([](auto... args) { fk::launch_gemm_bias_relu_unfused(args...); });
  EXPECT_TRUE(c.passes(fk::kFp32RelativeTolerance)) << c.relative_l2 << " non-finite " << c.nonfinite_count;
}

TEST_P(GemmBiasReluFp32, FusedMatchesReference) {
  const auto c = check([](auto... args) { fk::launch_gemm_bias_relu_fused(args...); });
  EXPECT_TRUE(c.passes(fk::kFp32RelativeTolerance)) << c.relative_l2 << " non-finite " << c.nonfinite_count;
}

TEST_P(GemmBiasReluFp32, BiasOnlyFusedMatchesReference) {
  const auto [M, N, K] = GetParam();
  const auto a = ft::random_floats(static_cast<std::size_t>(M) * K, 14);
  const auto b = ft::random_floats(static_cast<std::size_t>(K) * N, 15);
  const auto bias = ft::random_floats(static_cast<std::size_t>(N), 16);
  std::vector<float> reference(static_cast<std::size_t>(M) * N);
  for (int r = 0; r < M; ++r) {
    for (int c = 0; c < N; ++c) {
      double acc = bias[static_cast<std::size_t>(c)];
      for (int k = 0; k < K; ++k) {
        acc += double{a[static_cast<std::size_t>(r) * K + k]} * b[static_cast<std::size_t>(k) * N + c];
      }
      reference[static_cast<std::size_t>(r) * N + c] = static_cast<float>(acc);
    }
  }
  fk::DeviceBuffer<float> da(a.size()), db(b.size()), dbias(bias.size()), dc(reference.size());
  da.copy_from_host(a);
  db.copy_from_host(b);
  dbias.copy_from_host(bias);
  ft::poison(dc);
  fk::launch_gemm_bias_fused(da.data(), db.data(), dbias.data(), dc.data(), M, N, K);
  const auto c = fk::compare_relative_l2(dc.copy_to_host(), reference);
  EXPECT_TRUE(c.passes(fk::kFp32RelativeTolerance)) << c.relative_l2 << " non-finite " << c.nonfinite_count;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmBiasReluFp32,
                         ::testing::Values(Shape{128, 128, 128}, Shape{64, 128, 256}, Shape{77, 131, 59},
                                           Shape{1, 256, 256}),
                         [](const auto& p) {
                           return "M" + std::to_string(std::get<0>(p.param)) + "_N" +
                                  std::to_string(std::get<1>(p.param)) + "_K" +
                                  std::to_string(std::get<2>(p.param));
                         });

}  // namespace
