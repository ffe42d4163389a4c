// Element-wise FP32 kernels (kernels/elementwise): every launcher against its double-precision
// reference, at sizes with and without a tail (n mod 4 != 0 exercises the scalar path after float4).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "GpuSkip.h"
#include "KernelTestSupport.h"
#include "common/compare.h"
#include "elementwise/elementwise.cuh"
#include "elementwise/reference.h"

namespace fk = fuselens::kernels;
namespace ft = fuselens::test;

namespace {

class ElementwiseFp32 : public ::testing::TestWithParam<std::size_t> {
 protected:
  void SetUp() override { FUSELENS_SKIP_WITHOUT_GPU(); }
  // Inputs in [-8, 8) so sigmoid sees both saturated ends.
  std::vector<float> x = ft::random_floats(GetParam(), 21, -8.0f, 8.0f);
};

void expect_close(const fk::Comparison& c) {
  EXPECT_TRUE(c.passes(fk::kFp32RelativeTolerance)) << c.relative_l2 << " non-finite " << c.nonfinite_count;
}

TEST_P(ElementwiseFp32, Sigmoid) {
  fk::DeviceBuffer<float> dx(x.size()), dy(x.size());
  dx.copy_from_host(x);
  ft::poison(dy);
  fk::launch_sigmoid(dx.data(), dy.data(), x.size());
  expect_close(fk::compare_relative_l2(dy.copy_to_host(), fk::sigmoid_reference(x)));
}

TEST_P(ElementwiseFp32, Relu) {
  fk::DeviceBuffer<float> dx(x.size()), dy(x.size());
  dx.copy_from_host(x);
  ft::poison(dy);
  fk::launch_relu(dx.data(), dy.data(), x.size());
  expect_close(fk::compare_relative_l2(dy.copy_to_host(), fk::relu_reference(x)));
}

TEST_P(ElementwiseFp32, SwishFusedAndUnfused) {
  fk::DeviceBuffer<float> dx(x.size()), ds(x.size()), dy(x.size());
  dx.copy_from_host(x);
  const auto reference = fk::swish_reference(x);
  ft::poison(dy);
  fk::launch_swish_fused(dx.data(), dy.data(), x.size());
  expect_close(fk::compare_relative_l2(dy.copy_to_host(), reference));
  ft::poison(dy);
  ft::poison(ds);
  fk::launch_swish_unfused(dx.data(), ds.data(), dy.data(), x.size());
  expect_close(fk::compare_relative_l2(dy.copy_to_host(), reference));
}

TEST_P(ElementwiseFp32, Multiply) {
  const auto b = ft::random_floats(x.size(), 22);
  fk::DeviceBuffer<float> dx(x.size()), db(x.size()), dy(x.size());
  dx.copy_from_host(x);
  db.copy_from_host(b);
  ft::poison(dy);
  fk::launch_multiply(dx.data(), db.data(), dy.data(), x.size());
  std::vector<float> reference(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) reference[i] = static_cast<float>(double{x[i]} * b[i]);
  expect_close(fk::compare_relative_l2(dy.copy_to_host(), reference));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ElementwiseFp32, ::testing::Values(1, 1023, 1024 * 1024 + 3),
                         [](const auto& p) { return "n" + std::to_string(p.param); });

}  // namespace
