// Row-wise FP32 softmax (kernels/softmax): the unfused four-kernel chain, the fused one-kernel version
// (every configuration it dispatches to: warp per row, block per row, cluster per row, online) and the
// online kernel, against the double-precision CPU reference.
//
// Inputs: uniform in [-100, 100) ("wide": exp(100) = 2.7e43 overflows FP32, whose largest value is
// 3.4e38 = exp(88.7), so a kernel that skipped the max subtraction would produce Inf/Inf = NaN and
// fail) and in [-1, 1) ("narrow": a flat distribution where every term of the sum matters).
// Output poisoned (0xFF = NaN) before each run. Tolerance: kFp32RelativeTolerance (1e-5 relative L2,
// kernels/common/compare.h); expf is ~2 ulp and the float sums of <= 40001 terms stay near 1e-7.
// Shapes cover cols not a multiple of 4 (scalar paths), not a multiple of 32 or 256, partial
// 4-row warp blocks (37 rows), cluster sizes 3, 5 and 8, and rows longer than the register-held limit.
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
#include "softmax/reference.h"
#include "softmax/softmax.cuh"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

struct Case {
  int rows;
  int cols;
  bool wide;  // inputs in [-100, 100) instead of [-1, 1)
};

enum class Variant { Unfused, Fused, Online };

std::string case_name(const Case& c) {
  return std::to_string(c.rows) + "x" + std::to_string(c.cols) + (c.wide ? "_wide" : "_narrow");
}

/// Runs one variant on x (host) with the device pointers offset by `misalign` floats (1 forces the
/// scalar code), output poisoned, and compares with the reference.
fk::Comparison run_variant(Variant variant, const std::vector<float>& x, int rows, int cols, int misalign = 0) {
  const std::size_t n = x.size();
  const auto off = static_cast<std::size_t>(misalign);
  fk::DeviceBuffer<float> dx(n + off), dy(n + off), exps(n + off), row_max(static_cast<std::size_t>(rows)),
      row_sum(static_cast<std::size_t>(rows));
  std::vector<float> padded(n + off, 1.0f);
  std::copy(x.begin(), x.end(), padded.begin() + static_cast<std::ptrdiff_t>(off));
  dx.copy_from_host(padded);
  ft::poison(dy);
  ft::poison(exps);
  ft::poison(row_max);
  ft::poison(row_sum);
  const float* px = dx.data() + off;
  float* py = dy.data() + off;
  switch (variant) {
    case Variant::Unfused:
      fk::launch_softmax_unfused(px, py, rows, cols, {row_max.data(), row_sum.data(), exps.data() + off});
      break;
    case Variant::Fused:
      fk::launch_softmax_fused(px, py, rows, cols);
      break;
    case Variant::Online:
      fk::launch_softmax_online(px, py, rows, cols);
      break;
  }
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out = dy.copy_to_host();
  out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(off));
  return fk::compare_relative_l2(out, fk::softmax_reference(x, rows, cols));
}

class SoftmaxFp32 : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }

  void expect_matches(Variant variant) {
    const Case c = GetParam();
    const float bound = c.wide ? 100.0f : 1.0f;
    const auto x = ft::random_floats(static_cast<std::size_t>(c.rows) * static_cast<std::size_t>(c.cols),
                                     static_cast<std::uint32_t>(31 + c.cols), -bound, bound);
    const fk::Comparison result = run_variant(variant, x, c.rows, c.cols);
    EXPECT_TRUE(result.passes(fk::kFp32RelativeTolerance))
        << "relative L2 " << result.relative_l2 << ", non-finite " << result.nonfinite_count;
    char text[32];
    std::snprintf(text, sizeof text, "%.3e", result.relative_l2);
    RecordProperty("relative_l2", text);  // in --gtest_output=xml
  }
};

TEST_P(SoftmaxFp32, UnfusedMatchesReference) { expect_matches(Variant::Unfused); }
TEST_P(SoftmaxFp32, FusedMatchesReference) { expect_matches(Variant::Fused); }
TEST_P(SoftmaxFp32, OnlineMatchesReference) { expect_matches(Variant::Online); }

std::vector<Case> cases() {
  const int shapes[][2] = {
      {5, 1},       // one column: every output is exactly 1
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
    all.push_back({s[0], s[1], true});
    all.push_back({s[0], s[1], false});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Shapes, SoftmaxFp32, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return case_name(p.param); });

class SoftmaxFp32Api : public ::testing::Test {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
};

// Device pointers one float past a 16-byte boundary: the float4 code must not be taken.
TEST_F(SoftmaxFp32Api, MisalignedPointersUseScalarCode) {
  const int rows = 9, cols = 4096;
  const auto x = ft::random_floats(static_cast<std::size_t>(rows) * cols, 41, -100.0f, 100.0f);
  for (Variant v : {Variant::Unfused, Variant::Fused, Variant::Online}) {
    const fk::Comparison result = run_variant(v, x, rows, cols, 1);
    EXPECT_TRUE(result.passes(fk::kFp32RelativeTolerance))
        << static_cast<int>(v) << ": relative L2 " << result.relative_l2 << ", non-finite "
        << result.nonfinite_count;
  }
}

TEST_F(SoftmaxFp32Api, FusedPathFollowsColumnCount) {
  EXPECT_EQ(fk::softmax_fused_path(1), fk::SoftmaxFusedPath::WarpPerRow);
  EXPECT_EQ(fk::softmax_fused_path(1024), fk::SoftmaxFusedPath::WarpPerRow);
  EXPECT_EQ(fk::softmax_fused_path(1025), fk::SoftmaxFusedPath::BlockPerRow);
  EXPECT_EQ(fk::softmax_fused_path(4096), fk::SoftmaxFusedPath::BlockPerRow);
  EXPECT_EQ(fk::softmax_fused_path(32769), fk::SoftmaxFusedPath::Online);
  int device = 0, clusters = 0;
  FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
  FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
  EXPECT_EQ(fk::softmax_fused_path(32768),
            clusters ? fk::SoftmaxFusedPath::ClusterPerRow : fk::SoftmaxFusedPath::Online);
}

TEST_F(SoftmaxFp32Api, NegativeSizesThrowAndEmptyLaunchesNothing) {
  EXPECT_THROW(fk::launch_softmax_fused(nullptr, nullptr, -1, 4), std::invalid_argument);
  EXPECT_THROW(fk::launch_softmax_online(nullptr, nullptr, 4, -1), std::invalid_argument);
  EXPECT_THROW(fk::launch_softmax_unfused(nullptr, nullptr, -1, 4, {}), std::invalid_argument);
  EXPECT_NO_THROW(fk::launch_softmax_fused(nullptr, nullptr, 0, 4096));
  EXPECT_NO_THROW(fk::launch_softmax_unfused(nullptr, nullptr, 7, 0, {}));
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace
