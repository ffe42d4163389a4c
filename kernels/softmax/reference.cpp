#include "softmax/reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {

std::vector<float> softmax_reference(std::span<const float> x, int rows, int cols) {
  if (rows < 0 || cols < 0 ||
      x.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols)) {
    throw std::invalid_argument("softmax_reference: x has " + std::to_string(x.size()) +
                                " elements, expected rows x cols = " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  }
  const auto n = static_cast<std::size_t>(cols);
  std::vector<float> y(x.size());
  std::vector<double> e(n);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const float* row = x.data() + r * n;
    double m = -INFINITY;
    for (std::size_t c = 0; c < n; ++c) m = std::max(m, static_cast<double>(row[c]));
    double sum = 0.0;
    for (std::size_t c = 0; c < n; ++c) {
      e[c] = std::exp(static_cast<double>(row[c]) - m);
      sum += e[c];
    }
    for (std::size_t c = 0; c < n; ++c) y[r * n + c] = static_cast<float>(e[c] / sum);
  }
  return y;
}

}  // namespace fuselens::kernels
