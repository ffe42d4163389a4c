#include "KernelTestSupport.h"

namespace fuselens::test {

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) {
    do {
      v = dist(rng);
    } while (v == 0.0f);
  }
  return values;
}

std::vector<__half> to_half(const std::vector<float>& values) {
  std::vector<__half> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = __float2half_rn(values[i]);
  return out;
}

std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& values) {
  std::vector<__nv_bfloat16> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = __float2bfloat16_rn(values[i]);
  return out;
}

std::vector<float> to_float(const std::vector<__half>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = __half2float(values[i]);
  return out;
}

std::vector<float> to_float(const std::vector<__nv_bfloat16>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = __bfloat162float(values[i]);
  return out;
}

}  // namespace fuselens::test
