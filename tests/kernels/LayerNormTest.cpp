// Row-wise FP32 LayerNorm (kernels/layernorm): the unfused four-kernel chain, the fused one-kernel
// version (every configuration it dispatches to: warp per row, block per row, cluster per row, online)
// and the online (streaming Welford) kernel, against the double-precision CPU reference, eps = 1e-5.
//
// Inputs: x, gamma, beta uniform in [-1, 1) with zeros redrawn (so gamma and beta matter everywhere).
// Output poisoned (0xFF = NaN) before each run. Tolerance: kFp32RelativeTolerance (1e-5 relative L2,
// kernels/common/compare.h).
// Large-mean rows (x = 64 + U[-1, 1)): FP32 cannot even hold the exact mean: its rounding alone is up
// to ulp(64) / 2 = 3.8e-6, i.e. 6.6e-6 of the standard deviation 0.577, shifted into every normalized
// value; the float reductions add a few such roundings. Bound stated for that case: 1e-4 relative L2.
// A one-pass E[x^2] - E[x]^2 variance in FP32 would be off by about 1e-3 there and fail it.
// Shapes as SoftmaxTest: cols not a multiple of 4, 32 or 256, partial warp blocks, clusters of 3, 5, 8
// blocks and rows beyond the register-held limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "common/device_buffer.h"
#include "layernorm/layernorm.cuh"
#include "layernorm/reference.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

constexpr double kLargeMeanTolerance = 1e-4;

struct Case {
  int rows;
  int cols;
  bool large_mean;  // x = 64 + U[-1, 1)
};

enum class Variant { Unfused, Fused, Online };

std::string case_name(const Case& c) {
  return std::to_string(c.rows) + "x" + std::to_string(c.cols) + (c.large_mean ? "_mean64" : "_mean0");
}

/// Copies `values` into a fresh device buffer `misalign` floats past its start.
fk::DeviceBuffer<float> upload(const std::vector<float>& values, std::size_t misalign) {
  fk::DeviceBuffer<float> buffer(values.size() + misalign);
  std::vector<float> padded(values.size() + misalign, 1.0f);
  std::copy(values.begin(), values.end(), padded.begin() + static_cast<std::ptrdiff_t>(misalign));
  buffer.copy_from_host(padded);
  return buffer;
}

/// Runs one variant with the device pointers offset by `misalign` floats (1 forces the scalar code),
/// output poisoned, and compares with the reference.
fk::Comparison run_variant(Variant variant, const std::vector<float>& x, const std::vector<float>& gamma,
                           const std::vector<float>& beta, int rows, int cols, int misalign = 0) {
  const auto off = static_cast<std::size_t>(misalign);
  fk::DeviceBuffer<float> dx = upload(x, off), dgamma = upload(gamma, off), dbeta = upload(beta, off);
  fk::DeviceBuffer<float> dy(x.size() + off), xhat(x.size() + off), mean(static_cast<std::size_t>(rows)),
      var(static_cast<std::size_t>(rows));
  ft::poison(dy);
  ft::poison(xhat);
  ft::poison(mean);
  ft::poison(var);
  const float* px = dx.data() + off;
  const float* pg = dgamma.data() + off;
  const float* pb = dbeta.data() + off;
  float* py = dy.data() + off;
  switch (variant) {
    case Variant::Unfused:
      fk::launch_layernorm_unfused(px, pg, pb, py, rows, cols, {mean.data(), var.data(), xhat.data() + off});
      break;
    case Variant::Fused:
      fk::launch_layernorm_fused(px, pg, pb, py, rows, cols);
      break;
    case Variant::Online:
      fk::launch_layernorm_online(px, pg, pb, py, rows, cols);
      break;
  }
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out = dy.copy_to_host();
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(off));
  return fk::compare_relative_l2(out, fk::layernorm_reference(x, gamma, beta, rows, cols));
}

class LayerNormFp32 : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }

  void expect_matches(Variant variant) {
    const Case c = GetParam();
    const auto n = static_cast<std::size_t>(c.rows) * static_cast<std::size_t>(c.cols);
    const auto seed = static_cast<std::uint32_t>(51 + c.cols);
    std::vector<float> x = ft::random_floats(n, seed);
    if (c.large_mean) {
      for (float& v : x) v += 64.0f;
    }
    const auto gamma = ft::random_floats(static_cast<std::size_t>(c.cols), seed + 1);
    const auto beta = ft::random_floats(static_cast<std::size_t>(c.cols), seed + 2);
    const double tolerance = c.large_mean ? kLargeMeanTolerance : fk::kFp32RelativeTolerance;
    const fk::Comparison result = run_variant(variant, x, gamma, beta, c.rows, c.cols);
    EXPECT_TRUE(result.passes(tolerance))
        << "relative L2 " << result.relative_l2 << " (bound " << tolerance << "), non-finite "
        << result.nonfinite_count;
    char text[32];
    std::snprintf(text, sizeof text, "%.3e", result.relative_l2);
    RecordProperty("relative_l2", text);  // in --gtest_output=xml
  }
};

TEST_P(LayerNormFp32, UnfusedMatchesReference) { expect_matches(Variant::Unfused); }
TEST_P(LayerNormFp32, FusedMatchesReference) { expect_matches(Variant::Fused); }
TEST_P(LayerNormFp32, OnlineMatchesReference) { expect_matches(Variant::Online); }

std::vector<Case> cases() {
  const int shapes[][2] = {
      {5, 1},       // one column: variance 0, y = beta
      {33, 130},    // warp per row, 8 items per lane, float4
      {37, 1000},   // warp per row, 32 items per lane, partial last block of 4 rows
      {37, 1001},   // the same, cols not a multiple of 4: scalar code
      {256, 4096},  // the quick benchmark shape: block per row, float4
      {19, 3001},   // block per row, scalar
      {5, 9999},    // cluster of 3 blocks, scalar
      {3, 20000},   // cluster of 5 blocks, float4
      {7, 32768},   // cluster of 8 blocks (the largest register-held row)
      {4, 40000},   // beyond the register-held limit: online kernel, float4
      {3, 40001},   // online kernel, scalar
  };
  std::vector<Case> all;
  for (const auto& s : shapes) {
    all.push_back({s[0], s[1], false});
    all.push_back({s[0], s[1], true});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormFp32, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return case_name(p.param); });

class LayerNormFp32Api : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
};

// Device pointers one float past a 16-byte boundary: the float4 code must not be taken.
TEST_F(LayerNormFp32Api, MisalignedPointersUseScalarCode) {
  const int rows = 9, cols = 4096;
  const auto x = ft::random_floats(static_cast<std::size_t>(rows) * cols, 61);
  const auto gamma = ft::random_floats(cols, 62);
  const auto beta = ft::random_floats(cols, 63);
  for (Variant v : {Variant::Unfused, Variant::Fused, Variant::Online}) {
    const fk::Comparison result = run_variant(v, x, gamma, beta, rows, cols, 1);
    EXPECT_TRUE(result.passes(fk::kFp32RelativeTolerance))
        << static_cast<int>(v) << ": relative L2 " << result.relative_l2 << ", non-finite "
        << result.nonfinite_count;
  }
}

TEST_F(LayerNormFp32Api, FusedPathFollowsColumnCount) {
  EXPECT_EQ(fk::layernorm_fused_path(1000), fk::LayerNormFusedPath::WarpPerRow);
  EXPECT_EQ(fk::layernorm_fused_path(4096), fk::LayerNormFusedPath::BlockPerRow);
  EXPECT_EQ(fk::layernorm_fused_path(40000), fk::LayerNormFusedPath::Online);
  int device = 0, clusters = 0;
  FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
  FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
  EXPECT_EQ(fk::layernorm_fused_path(32768),
            clusters ? fk::LayerNormFusedPath::ClusterPerRow : fk::LayerNormFusedPath::Online);
}

TEST_F(LayerNormFp32Api, BadArgumentsThrowAndEmptyLaunchesNothing) {
  EXPECT_THROW(fk::launch_layernorm_fused(nullptr, nullptr, nullptr, nullptr, -1, 4), std::invalid_argument);
  EXPECT_THROW(fk::launch_layernorm_online(nullptr, nullptr, nullptr, nullptr, 4, (1 << 24) + 1),
               std::invalid_argument);
  EXPECT_THROW(fk::launch_layernorm_fused(nullptr, nullptr, nullptr, nullptr, 4, 4, -1.0f), std::invalid_argument);
  EXPECT_NO_THROW(fk::launch_layernorm_unfused(nullptr, nullptr, nullptr, nullptr, 0, 4096, {}));
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
