// Element-wise kernels: sigmoid, ReLU, unfused Swish (sigmoid then multiply) and fused Swish, FP32,
// at 1024², 4096² and 16384² elements, warm and cold L2. Bytes and FLOPs per
// kernels/elementwise/README.md.
#include <cstddef>

#include "bench_support.h"
#include "common/device_buffer.h"
#include "elementwise/elementwise.cuh"

namespace fk = fuselens::kernels;
namespace fb = fuselens::bench;

namespace {

enum class Op { Sigmoid, Relu, SwishUnfused, SwishFused };

void elementwise(benchmark::State& state, Op op) {
  const auto side = static_cast<std::size_t>(state.range(0));
  const bool cold = state.range(1) != 0;
  const std::size_t n = side * side;
  const double dn = static_cast<double>(n);
  fk::DeviceBuffer<float> x(n), s(n), y(n);
  FUSELENS_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
  double bytes = 0, flops = 0;
  std::function<void()> iteration;
  switch (op) {
    case Op::Sigmoid:
      iteration = [&] { fk::launch_sigmoid(x.data(), y.data(), n); };
      bytes = 8 * dn, flops = 3 * dn;
      break;
    case Op::Relu:
      iteration = [&] { fk::launch_relu(x.data(), y.data(), n); };
      bytes = 8 * dn, flops = 0;
      break;
    case Op::SwishUnfused:
      iteration = [&] { fk::launch_swish_unfused(x.data(), s.data(), y.data(), n); };
      bytes = 20 * dn, flops = 4 * dn;
      break;
    case Op::SwishFused:
      iteration = [&] { fk::launch_swish_fused(x.data(), y.data(), n); };
      bytes = 8 * dn, flops = 3 * dn;
      break;
  }
  const double seconds = fb::run_timed(state, iteration, cold);
  fb::set_work(state, bytes, flops, seconds);
  state.counters["items/s"] = seconds > 0 ? dn / seconds : 0;
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"side", "cold"});
  for (int cold : {0, 1})
    for (long side : {1024, 4096, 16384}) b->Args({side, cold});
}

}  // namespace

FUSELENS_GPU_BENCHMARK(elementwise, sigmoid, sizes, Op::Sigmoid);
FUSELENS_GPU_BENCHMARK(elementwise, relu, sizes, Op::Relu);
FUSELENS_GPU_BENCHMARK(elementwise, swish_unfused, sizes, Op::SwishUnfused);
FUSELENS_GPU_BENCHMARK(elementwise, swish_fused, sizes, Op::SwishFused);
