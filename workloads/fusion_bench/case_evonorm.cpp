// fusion_bench op "evonorm": FP32 EvoNorm over NCHW (seed 000's "EvoNorm-B0": group statistics,
// learnable sigmoid, scaling = the EvoNorm-S0 formula, kernels/evonorm/evonorm.cuh), unfused chain
// (5 kernels) vs fused (1 kernel), G = 32 groups, eps = 1e-5. Quick: (16, 64, 28, 28); full: seed
// 000's three batch sizes (16|32|64, 64, 28, 28).
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "evonorm/evonorm.cuh"
#include "evonorm/reference.h"
#include "work_model_evonorm.h"

namespace fk = fuselens::kernels;
namespace fw = fuselens::workloads;

namespace {

void run_shape(const fk::EvoNormShape& s, const fw::CaseContext& context, fw::Report& report) {
  const std::size_t count = s.elements();
  const auto channels = static_cast<std::size_t>(s.c);
  std::mt19937 rng(context.seed);
  const std::vector<float> x = fw::random_inputs(count, rng, -3.0f, 3.0f);
  const std::vector<float> gamma = fw::random_inputs(channels, rng);
  const std::vector<float> beta = fw::random_inputs(channels, rng);
  const std::vector<float> v1 = fw::random_inputs(channels, rng);
  const std::vector<float> reference = fk::evonorm_reference(
      x, gamma, beta, v1, s.n, s.c, s.h, s.w, s.groups, static_cast<double>(fk::kEvoNormEps));

  fk::DeviceBuffer<float> d_x(count), d_gamma(channels), d_beta(channels), d_v1(channels),
      d_y(count);
  // Unfused intermediates: the round trips the fused kernel removes.
  fk::DeviceBuffer<float> d_var(s.group_count()), d_sd(s.group_count()), d_gate(count),
      d_product(count);
  d_x.copy_from_host(x);  // the only Host-to-Device copies of this shape
  d_gamma.copy_from_host(gamma);
  d_beta.copy_from_host(beta);
  d_v1.copy_from_host(v1);
  const fk::EvoNormParams params{d_gamma.data(), d_beta.data(), d_v1.data()};
  const fk::EvoNormScratch scratch{d_var.data(), d_sd.data(), d_gate.data(), d_product.data()};

  fw::CheckedOutput output;
  output.data = d_y.data();
  output.bytes = d_y.bytes();
  output.check = [&] { return fk::compare_relative_l2(d_y.copy_to_host(), reference); };

  const std::string shape = "N" + std::to_string(s.n) + "_C" + std::to_string(s.c) + "_H" +
                            std::to_string(s.h) + "_W" + std::to_string(s.w) + "_G" +
                            std::to_string(s.groups);
  const std::vector<fw::Variant> variants{
      {"unfused", 5,
       [&] { fk::launch_evonorm_unfused(d_x.data(), params, d_y.data(), s, scratch); },
       fw::evonorm_work(false, s)},
      {"fused", 1, [&] { fk::launch_evonorm_fused(d_x.data(), params, d_y.data(), s); },
       fw::evonorm_work(true, s)},
  };
  fw::run_variants("evonorm", shape, context, output, variants, report);
}

void run_evonorm(const fw::CaseContext& context, fw::Report& report) {
  constexpr std::array<int, 3> kBatches{16, 32, 64};  // seed 000's batch sizes; quick: the smallest
  for (int batch : kBatches) {
    run_shape(fk::EvoNormShape{batch, 64, 28, 28, fk::kEvoNormGroups}, context, report);
    if (context.quick) break;
  }
}

}  // namespace

FUSION_BENCH_OP("evonorm", 30, run_evonorm);
