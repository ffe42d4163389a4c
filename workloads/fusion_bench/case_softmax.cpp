// fusion_bench op "softmax": FP32 row-wise softmax of x [rows × cols], unfused (4 kernels: row max,
// exp(x - max) written out, row sum, divide) vs fused (1 kernel, the row held in registers: x read
// once) vs online (1 kernel, streaming online softmax: x read twice). Quick: 256×4096; full adds
// 4096×4096 and 1024×32768 (issue #3: rows × 4096 and rows × 32768). kernels/softmax/README.md has
// the bytes.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "softmax/reference.h"
#include "softmax/softmax.cuh"
#include "work_model_softmax.h"

namespace fk = fuselens::kernels;
namespace fw = fuselens::workloads;

namespace {

struct Shape {
  int rows, cols;
};
constexpr Shape kQuickShape{256, 4096};
constexpr std::array<Shape, 2> kFullOnlyShapes{{{4096, 4096}, {1024, 32768}}};

void run_shape(const Shape& s, const fw::CaseContext& context, fw::Report& report) {
  const std::size_t rows = static_cast<std::size_t>(s.rows);
  const std::size_t n = rows * static_cast<std::size_t>(s.cols);
  std::mt19937 rng(context.seed);
  const std::vector<float> x = fw::random_inputs(n, rng);
  const std::vector<float> reference = fk::softmax_reference(x, s.rows, s.cols);

  fk::DeviceBuffer<float> d_x(n);
  fk::DeviceBuffer<float> d_y(n);
  fk::DeviceBuffer<float> d_exps(n);  // unfused intermediates: exp(x - max), row max, row sum
  fk::DeviceBuffer<float> d_max(rows);
  fk::DeviceBuffer<float> d_sum(rows);
  d_x.copy_from_host(x);  // the only Host-to-Device copy of this shape
  const fk::SoftmaxScratch scratch{d_max.data(), d_sum.data(), d_exps.data()};

  fw::CheckedOutput output;
  output.data = d_y.data();
  output.bytes = d_y.bytes();
  output.check = [&] { return fk::compare_relative_l2(d_y.copy_to_host(), reference); };

  const double r = s.rows, c = s.cols;
  const std::string shape = std::to_string(s.rows) + "x" + std::to_string(s.cols);
  const std::vector<fw::Variant> variants{
      {"unfused", 4,
       [&] { fk::launch_softmax_unfused(d_x.data(), d_y.data(), s.rows, s.cols, scratch); },
       fw::softmax_unfused_work(r, c)},
      {"fused", 1, [&] { fk::launch_softmax_fused(d_x.data(), d_y.data(), s.rows, s.cols); },
       fw::softmax_fused_work(r, c)},
      {"online", 1, [&] { fk::launch_softmax_online(d_x.data(), d_y.data(), s.rows, s.cols); },
       fw::softmax_online_work(r, c)},
  };
  fw::run_variants("softmax", shape, context, output, variants, report);
}

void run_softmax(const fw::CaseContext& context, fw::Report& report) {
  run_shape(kQuickShape, context, report);
  if (context.quick) return;
  for (const Shape& s : kFullOnlyShapes) run_shape(s, context, report);
}

}  // namespace

FUSION_BENCH_OP("softmax", 40, run_softmax);
