// fusion_bench op "layernorm": FP32 LayerNorm over the last dimension of x [rows × cols] with gamma
// and beta [cols], eps 1e-5, unfused (4 kernels: mean, variance, normalize, scale+shift) vs fused
// (1 kernel, the row held in registers, Welford/Chan statistics: x read once) vs online (1 kernel,
// streaming Welford: x read twice). Quick: 256×4096; full adds 4096×4096 and 1024×32768.
// kernels/layernorm/README.md has the bytes.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "layernorm/layernorm.cuh"
#include "layernorm/reference.h"
#include "work_model_layernorm.h"

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
  const std::size_t cols = static_cast<std::size_t>(s.cols);
  const std::size_t n = rows * cols;
  std::mt19937 rng(context.seed);
  const std::vector<float> x = fw::random_inputs(n, rng);  // drawn first, then gamma, then beta
  const std::vector<float> gamma = fw::random_inputs(cols, rng);
  const std::vector<float> beta = fw::random_inputs(cols, rng);
  const std::vector<float> reference = fk::layernorm_reference(x, gamma, beta, s.rows, s.cols);

  fk::DeviceBuffer<float> d_x(n);
  fk::DeviceBuffer<float> d_gamma(cols);
  fk::DeviceBuffer<float> d_beta(cols);
  fk::DeviceBuffer<float> d_y(n);
  fk::DeviceBuffer<float> d_xhat(n);  // unfused intermediates: normalized x, row mean, row variance
  fk::DeviceBuffer<float> d_mean(rows);
  fk::DeviceBuffer<float> d_var(rows);
  d_x.copy_from_host(x);  // the only Host-to-Device copies of this shape
  d_gamma.copy_from_host(gamma);
  d_beta.copy_from_host(beta);
  const fk::LayerNormScratch scratch{d_mean.data(), d_var.data(), d_xhat.data()};

  fw::CheckedOutput output;
  output.data = d_y.data();
  output.bytes = d_y.bytes();
  output.check = [&] { return fk::compare_relative_l2(d_y.copy_to_host(), reference); };

  const double r = s.rows, c = s.cols;
  const std::string shape = std::to_string(s.rows) + "x" + std::to_string(s.cols);
  const std::vector<fw::Variant> variants{
      {"unfused", 4,
       [&] {
         fk::launch_layernorm_unfused(d_x.data(), d_gamma.data(), d_beta.data(), d_y.data(), s.rows,
                                      s.cols, scratch);
       },
       fw::layernorm_unfused_work(r, c)},
      {"fused", 1,
       [&] {
         fk::launch_layernorm_fused(d_x.data(), d_gamma.data(), d_beta.data(), d_y.data(), s.rows,
                                    s.cols);
       },
       fw::layernorm_fused_work(r, c)},
      {"online", 1,
       [&] {
         fk::launch_layernorm_online(d_x.data(), d_gamma.data(), d_beta.data(), d_y.data(), s.rows,
                                     s.cols);
       },
       fw::layernorm_online_work(r, c)},
  };
  fw::run_variants("layernorm", shape, context, output, variants, report);
}

void run_layernorm(const fw::CaseContext& context, fw::Report& report) {
  run_shape(kQuickShape, context, report);
  if (context.quick) return;
  for (const Shape& s : kFullOnlyShapes) run_shape(s, context, report);
}

}  // namespace

FUSION_BENCH_OP("layernorm", 50, run_layernorm);
