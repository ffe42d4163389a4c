#include "elementwise/reference.h"

#include <cmath>
#include <cstddef>

namespace fuselens::kernels {
namespace {

template <class Op>
std::vector<float> map(std::span<const float> x, Op op) {
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    y[i] = static_cast<float>(op(static_cast<double>(x[i])));
  }
  return y;
}

}  // namespace

std::vector<float> sigmoid_reference(std::span<const float> x) {
  return map(x, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

std::vector<float> relu_reference(std::span<const float> x) {
  return map(x, [](double v) { return v < 0.0 ? 0.0 : v; });
}

std::vector<float> swish_reference(std::span<const float> x) {
  return map(x, [](double v) { return v / (1.0 + std::exp(-v)); });
}

}  // namespace fuselens::kernels
