// Row-wise FP32 softmax (kernels/softmax): unfused (4 kernels), fused (1 kernel, the row held in
// registers) and online (1 kernel, streaming, x read twice) at 256×4096, 4096×4096 and 1024×32768,
// warm and cold L2. Names softmax/<variant>/rows:R/cols:C/cold:0|1. Bytes and FLOPs per iteration
// from workloads/fusion_bench/work_model_softmax.h (kernels/softmax/README.md).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "../fusion_bench/work_model_softmax.h"
#include "bench_support.h"
#include "common/device_buffer.h"
#include "softmax/softmax.cuh"

namespace fk = fuselens::kernels;
namespace fb = fuselens::bench;
namespace fw = fuselens::workloads;

namespace {

enum class Variant { Unfused, Fused, Online };

/// n floats in [-1, 1) from a fixed linear congruential sequence (fast; the values only need to
/// vary).
std::vector<float> pattern(std::size_t n) {
  std::vector<float> v(n);
  std::uint32_t state = 12345u;
  for (float& f : v) {
    state = state * 1664525u + 1013904223u;
    f = static_cast<float>(state >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  return v;
}

void softmax(benchmark::State& state, Variant variant) {
  const int rows = static_cast<int>(state.range(0));
  const int cols = static_cast<int>(state.range(1));
  const bool cold = state.range(2) != 0;
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  fk::DeviceBuffer<float> x(n), y(n), exps(variant == Variant::Unfused ? n : 0),
      row_max(static_cast<std::size_t>(rows)), row_sum(static_cast<std::size_t>(rows));
  x.copy_from_host(pattern(n));
  std::function<void()> iteration;
  fw::DeclaredWork work;
  switch (variant) {
    case Variant::Unfused:
      iteration = [&] {
        fk::launch_softmax_unfused(x.data(), y.data(), rows, cols,
                                   {row_max.data(), row_sum.data(), exps.data()});
      };
      work = fw::softmax_unfused_work(rows, cols);
      break;
    case Variant::Fused:
      iteration = [&] { fk::launch_softmax_fused(x.data(), y.data(), rows, cols); };
      work = fw::softmax_fused_work(rows, cols);
      break;
    case Variant::Online:
      iteration = [&] { fk::launch_softmax_online(x.data(), y.data(), rows, cols); };
      work = fw::softmax_online_work(rows, cols);
      break;
  }
  fb::run_rows(state, iteration, cold, work.bytes, work.flops, rows);
}

}  // namespace

FUSELENS_GPU_BENCHMARK(softmax, unfused, fb::row_shapes, Variant::Unfused);
FUSELENS_GPU_BENCHMARK(softmax, fused, fb::row_shapes, Variant::Fused);
FUSELENS_GPU_BENCHMARK(softmax, online, fb::row_shapes, Variant::Online);
