#include "evonorm/reference.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {

std::vector<float> evonorm_reference(std::span<const float> x, std::span<const float> gamma,
                                     std::span<const float> beta, std::span<const float> v1, int n,
                                     int c, int h, int w, int groups, double eps) {
  if (n < 0 || c < 0 || h < 0 || w < 0 || groups < 1 || c % groups != 0) {
    throw std::invalid_argument("evonorm_reference: invalid shape or groups=" +
                                std::to_string(groups));
  }
  const std::size_t hw = static_cast<std::size_t>(h) * static_cast<std::size_t>(w);
  const std::size_t cg = static_cast<std::size_t>(c / groups);
  const std::size_t group_len = cg * hw;
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(c) * hw;
  const auto channels = static_cast<std::size_t>(c);
  if (x.size() != count || gamma.size() != channels || beta.size() != channels ||
      v1.size() != channels) {
    throw std::invalid_argument("evonorm_reference: span length does not match the shape");
  }
  std::vector<float> y(count);
  const std::size_t group_count = static_cast<std::size_t>(n) * static_cast<std::size_t>(groups);
  for (std::size_t ng = 0; ng < group_count; ++ng) {
    const std::size_t base = ng * group_len;  // groups are contiguous in NCHW
    double sum = 0.0;
    for (std::size_t i = 0; i < group_len; ++i) sum += x[base + i];
    const double mean = sum / static_cast<double>(group_len);
    double m2 = 0.0;
    for (std::size_t i = 0; i < group_len; ++i) {
      const double d = x[base + i] - mean;
      m2 += d * d;
    }
    const double sd = std::sqrt(m2 / static_cast<double>(group_len) + eps);
    const std::size_t c0 = (ng % static_cast<std::size_t>(groups)) * cg;
    for (std::size_t i = 0; i < group_len; ++i) {
      const std::size_t ch = c0 + i / hw;
      const double v = x[base + i];
      const double gated = v / (1.0 + std::exp(-static_cast<double>(v1[ch]) * v));  // v · σ(v1·v)
      y[base + i] = static_cast<float>(gated / sd * gamma[ch] + beta[ch]);
    }
  }
  return y;
}

}  // namespace fuselens::kernels
