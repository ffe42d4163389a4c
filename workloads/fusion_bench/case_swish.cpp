// fusion_bench op "swish": FP32 y = x·sigmoid(x), unfused (sigmoid kernel, multiply kernel) vs
// fused (one pass). Quick: 1024² and 4096²; full adds 16384².
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "elementwise/elementwise.cuh"
#include "elementwise/reference.h"

namespace fk = fuselens::kernels;
namespace fw = fuselens::workloads;

namespace {

void run_shape(int side, const fw::CaseContext& context, fw::Report& report) {
  const std::size_t n = static_cast<std::size_t>(side) * static_cast<std::size_t>(side);
  std::mt19937 rng(context.seed);
  const std::vector<float> x = fw::random_inputs(n, rng);
  const std::vector<float> reference = fk::swish_reference(x);

  fk::DeviceBuffer<float> d_x(n);
  fk::DeviceBuffer<float> d_s(n);  // unfused intermediate sigmoid(x)
  fk::DeviceBuffer<float> d_y(n);
  d_x.copy_from_host(x);  // the only Host-to-Device copy of this shape

  fw::CheckedOutput output;
  output.data = d_y.data();
  output.bytes = d_y.bytes();
  output.check = [&] { return fk::compare_relative_l2(d_y.copy_to_host(), reference); };

  const std::string shape = std::to_string(side) + "x" + std::to_string(side);
  const std::vector<fw::Variant> variants{
      {"unfused", 2, [&] { fk::launch_swish_unfused(d_x.data(), d_s.data(), d_y.data(), n); },
       fw::swish_work(false, static_cast<double>(n))},
      {"fused", 1, [&] { fk::launch_swish_fused(d_x.data(), d_y.data(), n); },
       fw::swish_work(true, static_cast<double>(n))},
  };
  fw::run_variants("swish", shape, context, output, variants, report);
}

void run_swish(const fw::CaseContext& context, fw::Report& report) {
  for (int side : {1024, 4096}) run_shape(side, context, report);
  if (!context.quick) run_shape(16384, context, report);
}

}  // namespace

FUSION_BENCH_OP("swish", 20, run_swish);
