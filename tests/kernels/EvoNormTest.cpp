// EvoNorm over NCHW, FP32 (kernels/evonorm: seed 000's "EvoNorm-B0", the EvoNorm-S0 formula): the
// unfused five-kernel chain and the fused kernel against the double-precision reference, on fresh random
// non-zero x, γ, β, v1 with the output (and the unfused scratch) poisoned first. Tolerance: FP32,
// relative L2 <= kFp32RelativeTolerance (1e-5, kernels/common/compare.h).
// Shapes cover every path of the fused kernel (evonorm.cuh): the seed's (16|32|64, 64, 28, 28) with
// G = 32 (float4 items, group in registers); odd shapes whose H·W is not a multiple of 4 (scalar path)
// and whose group length is no multiple of the block size (registers); a scalar group too large for
// registers (shared memory); groups larger than kEvoNormFusedCacheFloats, float4 and scalar (re-read
// from global memory). (float4 groups that fit registers at up to 1024 threads always fit the limit, so
// there is no float4 shared-memory case.)
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "evonorm/evonorm.cuh"
#include "evonorm/reference.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

struct Case {
  fk::EvoNormShape shape;
  const char* label;
};

class EvoNormFp32 : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    FUSELENS_SKIP_WITHOUT_GPU();
    const auto& s = GetParam().shape;
    const auto channels = static_cast<std::size_t>(s.c);
    // x in [-3, 3) so the sigmoid sees both ends; γ, β, v1 in [-1, 1), never zero.
    x = ft::random_floats(s.elements(), 41, -3.0f, 3.0f);
    gamma = ft::random_floats(channels, 42);
    beta = ft::random_floats(channels, 43);
    v1 = ft::random_floats(channels, 44);
    reference = fk::evonorm_reference(x, gamma, beta, v1, s.n, s.c, s.h, s.w, s.groups,
                                      static_cast<double>(fk::kEvoNormEps));
    dx = fk::DeviceBuffer<float>(x.size());
    dgamma = fk::DeviceBuffer<float>(channels);
    dbeta = fk::DeviceBuffer<float>(channels);
    dv1 = fk::DeviceBuffer<float>(channels);
    dy = fk::DeviceBuffer<float>(x.size());
    dx.copy_from_host(x);
    dgamma.copy_from_host(gamma);
    dbeta.copy_from_host(beta);
    dv1.copy_from_host(v1);
    ft::poison(dy);
  }

  [[nodiscard]] fk::EvoNormParams params() const { return {dgamma.data(), dbeta.data(), dv1.data()}; }

  void expect_close() {
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    const fk::Comparison c = fk::compare_relative_l2(dy.copy_to_host(), reference);
    EXPECT_TRUE(c.passes(fk::kFp32RelativeTolerance))
        << GetParam().label << ": relative L2 " << c.relative_l2 << ", non-finite " << c.nonfinite_count;
  }

  std::vector<float> x, gamma, beta, v1, reference;
  fk::DeviceBuffer<float> dx, dgamma, dbeta, dv1, dy;
};

TEST_P(EvoNormFp32, FusedMatchesReference) {
  fk::launch_evonorm_fused(dx.data(), params(), dy.data(), GetParam().shape);
  expect_close();
}

TEST_P(EvoNormFp32, UnfusedMatchesReference) {
  const auto& s = GetParam().shape;
  fk::DeviceBuffer<float> var(s.group_count()), sd(s.group_count()), gate(s.elements()), product(s.elements());
  ft::poison(var);
  ft::poison(sd);
  ft::poison(gate);
  ft::poison(product);
  fk::launch_evonorm_unfused(dx.data(), params(), dy.data(), s, {var.data(), sd.data(), gate.data(), product.data()});
  expect_close();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, EvoNormFp32,
    ::testing::Values(Case{{16, 64, 28, 28, 32}, "N16_C64_H28_W28_G32"},  // seed 000's three shapes
                      Case{{32, 64, 28, 28, 32}, "N32_C64_H28_W28_G32"},
                      Case{{64, 64, 28, 28, 32}, "N64_C64_H28_W28_G32"},
                      Case{{3, 24, 7, 9, 8}, "N3_C24_H7_W9_G8"},    // H·W = 63: scalar, L = 189
                      Case{{5, 6, 5, 5, 3}, "N5_C6_H5_W5_G3"},      // L = 50, fewer elements than threads
                      Case{{2, 12, 6, 6, 12}, "N2_C12_H6_W6_G12"},  // instance-like groups, float4, L = 36
                      Case{{2, 2, 63, 63, 1}, "N2_C2_H63_W63_G1"},  // L = 7938: scalar, shared memory
                      Case{{2, 8, 64, 64, 1}, "N2_C8_H64_W64_G1"},  // L = 32768: float4, global memory
                      Case{{1, 4, 99, 101, 2}, "N1_C4_H99_W101_G2"}),  // L = 19998: scalar, global memory
    [](const auto& p) { return std::string(p.param.label); });

TEST(EvoNormArguments, RejectsGroupsThatDoNotDivideChannels) {
  float dummy = 0.0f;
  const fk::EvoNormParams params{&dummy, &dummy, &dummy};
  EXPECT_THROW(fk::launch_evonorm_fused(&dummy, params, &dummy, {1, 24, 7, 9, 32}), std::invalid_argument);
  EXPECT_THROW(fk::launch_evonorm_fused(&dummy, params, &dummy, {1, 24, 7, 9, 0}), std::invalid_argument);
  EXPECT_THROW(fk::launch_evonorm_unfused(&dummy, params, &dummy, {-1, 24, 7, 9, 8}, {}), std::invalid_argument);
  EXPECT_THROW(fk::evonorm_reference(std::vector<float>(1), std::vector<float>(3), std::vector<float>(3),
                                     std::vector<float>(3), 1, 3, 1, 1, 2),
               std::invalid_argument);
}

TEST(EvoNormWork, FusedMovesAQuarterOfTheUnfusedBytesAtTheSeedShape) {
  const fk::EvoNormShape s{16, 64, 28, 28, 32};
  EXPECT_TRUE(fk::evonorm_fused_is_cached(s));
  const double e = static_cast<double>(s.elements());
  EXPECT_DOUBLE_EQ(fk::evonorm_fused_work(s).bytes, 8 * e + 12 * 64);
  EXPECT_DOUBLE_EQ(fk::evonorm_unfused_work(s).bytes, 32 * e + 16 * 16 * 32 + 12 * 64);
  EXPECT_FALSE(fk::evonorm_fused_is_cached({2, 8, 64, 64, 1}));
}

}  // namespace
