// fusion_bench op "mlp": FP32 3-layer MLP inference (Linear + bias + ReLU ×3, widths 256 → 256 →
// 256 → 256; the seed study gives no widths, issue #3 says 256), batch 1/16/64/256 (seed 000's
// batches). Variants: unfused (9 kernels: GEMM, bias, ReLU per layer), layer_fused (3: GEMM with
// the bias+ReLU epilogue per layer), fully_fused (1: all three layers, activations kept on chip),
// and the vendor peer cublaslt_epilogue (3: cuBLASLt with CUBLASLT_EPILOGUE_RELU_BIAS per layer).
// Quick: batch 1 and 16.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "mlp/mlp.cuh"
#include "mlp/mlp_cublaslt.h"
#include "mlp/reference.h"
#include "work_model_mlp.h"

namespace fk = fuselens::kernels;
namespace fw = fuselens::workloads;

namespace {

constexpr std::array<int, 4> kWidths{256, 256, 256, 256};
constexpr std::array<int, 2> kQuickBatches{1, 16};
constexpr std::array<int, 2> kFullOnlyBatches{64, 256};

void run_batch(int batch, const fw::CaseContext& context, fw::Report& report) {
  const auto rows = static_cast<std::size_t>(batch);
  std::mt19937 rng(context.seed);
  // Draw order: X, then W_l and b_l per layer; weights in ±1/sqrt(in) (PyTorch's Linear init
  // bound).
  const std::vector<float> x = fw::random_inputs(rows * static_cast<std::size_t>(kWidths[0]), rng);
  std::array<std::vector<float>, 3> w, b;
  for (std::size_t l = 0; l < 3; ++l) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(kWidths[l]));
    w[l] = fw::random_inputs(
        static_cast<std::size_t>(kWidths[l]) * static_cast<std::size_t>(kWidths[l + 1]), rng,
        -bound, bound);
    b[l] = fw::random_inputs(static_cast<std::size_t>(kWidths[l + 1]), rng, -bound, bound);
  }
  const std::vector<float> reference =
      fk::mlp_reference(x, {w[0], w[1], w[2]}, {b[0], b[1], b[2]}, kWidths, batch);

  fk::DeviceBuffer<float> d_x(x.size());
  std::array<fk::DeviceBuffer<float>, 3> d_w, d_b;
  fk::DeviceBuffer<float> d_h1(rows * static_cast<std::size_t>(kWidths[1]));
  fk::DeviceBuffer<float> d_h2(rows * static_cast<std::size_t>(kWidths[2]));
  fk::DeviceBuffer<float> d_y(rows * static_cast<std::size_t>(kWidths[3]));
  d_x.copy_from_host(
      x);  // with the weights and biases, the only Host-to-Device copies of this shape
  fk::MlpLayers layers;
  layers.widths = kWidths;
  for (std::size_t l = 0; l < 3; ++l) {
    d_w[l] = fk::DeviceBuffer<float>(w[l].size());
    d_b[l] = fk::DeviceBuffer<float>(b[l].size());
    d_w[l].copy_from_host(w[l]);
    d_b[l].copy_from_host(b[l]);
    layers.weights[l] = d_w[l].data();
    layers.biases[l] = d_b[l].data();
  }
  fk::MlpCublasLt peer(kWidths, batch);  // algorithm chosen here, outside any range

  fw::CheckedOutput output;
  output.data = d_y.data();
  output.bytes = d_y.bytes();
  output.check = [&] { return fk::compare_relative_l2(d_y.copy_to_host(), reference); };

  const std::string shape = "batch" + std::to_string(batch) + "_" + std::to_string(kWidths[0]) +
                            "x" + std::to_string(kWidths[1]) + "x" + std::to_string(kWidths[2]) +
                            "x" + std::to_string(kWidths[3]);
  std::vector<fw::Variant> variants{
      {"unfused", 9,
       [&] {
         fk::launch_mlp_unfused(layers, d_x.data(), d_h1.data(), d_h2.data(), d_y.data(), batch);
       },
       fw::mlp_work(fk::MlpVariant::Unfused, kWidths, batch)},
      {"layer_fused", 3,
       [&] {
         fk::launch_mlp_layer_fused(layers, d_x.data(), d_h1.data(), d_h2.data(), d_y.data(),
                                    batch);
       },
       fw::mlp_work(fk::MlpVariant::LayerFused, kWidths, batch)},
      {"fully_fused", 1, [&] { fk::launch_mlp_fully_fused(layers, d_x.data(), d_y.data(), batch); },
       fw::mlp_work(fk::MlpVariant::FullyFused, kWidths, batch)},
  };
  if (peer.single_kernel_algorithms()) {
    variants.push_back({"cublaslt_epilogue", 3,
                        [&] { peer.run(layers, d_x.data(), d_h1.data(), d_h2.data(), d_y.data()); },
                        fw::mlp_work(fk::MlpVariant::LayerFused, kWidths, batch)});
  } else {
    // kernels_per_iter must be exact; a split-K algorithm adds reduction kernels we cannot count.
    std::fprintf(
        stderr,
        "fusion_bench: mlp/cublaslt_epilogue/%s skipped: cuBLASLt chose a multi-kernel algorithm\n",
        shape.c_str());
  }
  fw::run_variants("mlp", shape, context, output, variants, report);
}

void run_mlp(const fw::CaseContext& context, fw::Report& report) {
  for (int batch : kQuickBatches) run_batch(batch, context, report);
  if (context.quick) return;
  for (int batch : kFullOnlyBatches) run_batch(batch, context, report);
}

}  // namespace

FUSION_BENCH_OP("mlp", 60, run_mlp);
