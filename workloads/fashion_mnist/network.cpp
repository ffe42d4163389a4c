#include "network.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace fuselens::workloads::fmnist {

const char* to_string(Build build) { return build == Build::Fused ? "fused" : "unfused"; }

Parameters Parameters::initial(std::uint32_t seed) {
  std::mt19937 rng(seed);
  Parameters p;
  auto linear = [&](std::vector<float>& w, std::vector<float>& b, int in, int out) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(in));
    std::uniform_real_distribution<float> dist(-bound, bound);
    w.resize(static_cast<std::size_t>(in) * out);
    for (float& v : w) v = dist(rng);
    b.resize(static_cast<std::size_t>(out));
    for (float& v : b) v = dist(rng);
  };
  linear(p.w1, p.b1, kInputs, kHidden);
  linear(p.w2, p.b2, kHidden, kHidden);
  p.gamma.assign(kHidden, 1.0f);
  p.beta.assign(kHidden, 0.0f);
  linear(p.w3, p.b3, kHidden, kClasses);
  return p;
}

std::vector<std::vector<float>*> Parameters::tensors() {
  return {&w1, &b1, &w2, &b2, &gamma, &beta, &w3, &b3};
}

std::vector<float> normalized_images(const Split& split, std::size_t count) {
  count = std::min<std::size_t>(count, split.images.count);
  std::vector<float> x(count * kInputs);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = (static_cast<float>(split.images.pixels[i]) * (1.0f / 255.0f) - kPixelMean) *
           (1.0f / kPixelStd);  // as the GPU
  }
  return x;
}

}  // namespace fuselens::workloads::fmnist
