// Row-wise FP32 LayerNorm (kernels/layernorm), eps 1e-5: unfused (4 kernels), fused (1 kernel, the
// row held in registers, Welford/Chan statistics) and online (1 kernel, streaming Welford, x read
// twice) at 256×4096, 4096×4096 and 1024×32768, warm and cold L2. Names
// layernorm/<variant>/rows:R/cols:C/cold:0|1. Bytes and FLOPs per iteration from
// workloads/fusion_bench/work_model_layernorm.h (kernels/layernorm/README.md).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "../fusion_bench/work_model_layernorm.h"
#include "bench_support.h"
#include "common/device_buffer.h"
#include "layernorm/layernorm.cuh"

namespace fk = fuselens::kernels;
namespace fb = fuselens::bench;
namespace fw = fuselens::workloads;

namespace {

enum class Variant { Unfused, Fused, Online };

/// n floats in [-1, 1) from a fixed linear congruential sequence (fast; the values only need to
/// vary).
std::vector<float> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t state = seed;
  for (float& f : v) {
    state = state * 1664525u + 1013904223u;
    f = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return v;
}

void layernorm(benchmark::State& state, Variant variant) {
  const int rows = static_cast<int>(state.range(0));
  const int cols = static_cast<int>(state.range(1));
  const bool cold = state.range(2) != 0;
  const std::size_t c = static_cast<std::size_t>(cols);
  const std::size_t n = static_cast<std::size_t>(rows) * c;
  fk::DeviceBuffer<float> x(n), y(n), gamma(c), beta(c), xhat(variant == Variant::Unfused ? n : 0),
      mean(static_cast<std::size_t>(rows)), var(static_cast<std::size_t>(rows));
  x.copy_from_host(pattern(n, 1u));
  gamma.copy_from_host(pattern(c, 2u));
  beta.copy_from_host(pattern(c, 3u));
  std::function<void()> iteration;
  fw::DeclaredWork work;
  switch (variant) {
    case Variant::Unfused:
      iteration = [&] {
        fk::launch_layernorm_unfused(x.data(), gamma.data(), beta.data(), y.data(), rows, cols,
                                     {mean.data(), var.data(), xhat.data()});
      };
      work = fw::layernorm_unfused_work(rows, cols);
      break;
    case Variant::Fused:
      iteration = [&] {
        fk::launch_layernorm_fused(x.data(), gamma.data(), beta.data(), y.data(), rows, cols);
      };
      work = fw::layernorm_fused_work(rows, cols);
      break;
    case Variant::Online:
      iteration = [&] {
        fk::launch_layernorm_online(x.data(), gamma.data(), beta.data(), y.data(), rows, cols);
      };
      work = fw::layernorm_online_work(rows, cols);
      break;
  }
  fb::run_rows(state, iteration, cold, work.bytes, work.flops, rows);
}

}  // namespace

FUSELENS_GPU_BENCHMARK(layernorm, unfused, fb::row_shapes, Variant::Unfused);
FUSELENS_GPU_BENCHMARK(layernorm, fused, fb::row_shapes, Variant::Fused);
FUSELENS_GPU_BENCHMARK(layernorm, online, fb::row_shapes, Variant::Online);
