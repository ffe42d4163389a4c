#include "common/compare.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {

Comparison compare_relative_l2(std::span<const float> out, std::span<const float> ref) {
  if (out.size() != ref.size()) {
    throw std::invalid_argument("compare_relative_l2: output has " + std::to_string(out.size()) +
                                " elements, reference has " + std::to_string(ref.size()));
  }
  Comparison result;
  double diff_sq = 0.0;
  double ref_sq = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double r = ref[i];
    ref_sq += r * r;
    if (!std::isfinite(out[i])) {
      ++result.nonfinite_count;
      continue;
    }
    const double d = static_cast<double>(out[i]) - r;
    diff_sq += d * d;
  }
  const double diff_norm = std::sqrt(diff_sq);
  const double ref_norm = std::sqrt(ref_sq);
  result.relative_l2 = ref_norm > 0.0 ? diff_norm / ref_norm : diff_norm;
  return result;
}

}  // namespace fuselens::kernels
