#include "mlp/reference.h"

#include <cstddef>
#include <stdexcept>
#include <string>

namespace fuselens::kernels {
namespace {

void require_length(const std::string& name, std::size_t actual, std::size_t expected) {
  if (actual != expected) {
    throw std::invalid_argument("mlp_reference: " + name + " has " + std::to_string(actual) +
                                " elements, expected " + std::to_string(expected));
  }
}

}  // namespace

std::vector<float> mlp_reference(std::span<const float> X,
                                 const std::array<std::span<const float>, 3>& weights,
                                 const std::array<std::span<const float>, 3>& biases,
                                 const std::array<int, 4>& widths, int batch) {
  if (batch < 0) throw std::invalid_argument("mlp_reference: negative batch");
  for (int w : widths) {
    if (w < 1) throw std::invalid_argument("mlp_reference: width < 1");
  }
  const auto rows = static_cast<std::size_t>(batch);
  require_length("X", X.size(), rows * static_cast<std::size_t>(widths[0]));
  for (std::size_t l = 0; l < 3; ++l) {
    const auto k = static_cast<std::size_t>(widths[l]);
    const auto n = static_cast<std::size_t>(widths[l + 1]);
    require_length("W" + std::to_string(l), weights[l].size(), k * n);
    require_length("b" + std::to_string(l), biases[l].size(), n);
  }

  std::vector<float> out(rows * static_cast<std::size_t>(widths[3]));
  std::vector<double> act;
  std::vector<double> next;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto k0 = static_cast<std::size_t>(widths[0]);
    act.assign(X.begin() + static_cast<std::ptrdiff_t>(r * k0),
               X.begin() + static_cast<std::ptrdiff_t>((r + 1) * k0));
    for (std::size_t l = 0; l < 3; ++l) {
      const auto k = static_cast<std::size_t>(widths[l]);
      const auto n = static_cast<std::size_t>(widths[l + 1]);
      next.assign(biases[l].begin(), biases[l].end());
      // k-c order: streams through the rows of W_l.
      for (std::size_t kk = 0; kk < k; ++kk) {
        const double a = act[kk];
        const float* w_row = weights[l].data() + kk * n;
        for (std::size_t c = 0; c < n; ++c) next[c] += a * static_cast<double>(w_row[c]);
      }
      for (double& v : next) v = v < 0.0 ? 0.0 : v;
      act.swap(next);
    }
    for (std::size_t c = 0; c < act.size(); ++c)
      out[r * act.size() + c] = static_cast<float>(act[c]);
  }
  return out;
}

}  // namespace fuselens::kernels
