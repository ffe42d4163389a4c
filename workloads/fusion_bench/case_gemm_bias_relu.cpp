// fusion_bench op "gemm_bias_relu": FP32 C = relu(A·B + bias), unfused chain (3 kernels) vs fused
// epilogue (1 kernel), and the vendor peers (kernels/peers): cublas_unfused_epilogue (cuBLAS SGEMM
// without TF32 + the suite's add_bias_kernel and relu_kernel; launches measured by graph capture)
// and cublaslt_epilogue (cuBLASLt with CUBLASLT_EPILOGUE_RELU_BIAS; skipped if its algorithm is not
// one kernel). Quick: seed 002's three shapes; full: every FP32 study shape of issue #3 up to 1024³
// plus 4096³ and 8192³ (the CPU reference of those is checked on a sample of rows, see check_rows).
#include <array>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "gemm_bias_relu/gemm_bias_relu.cuh"
#include "gemm_bias_relu/reference.h"
#include "gemm_shapes.h"
#include "peers/peers.h"

namespace fk = fuselens::kernels;
namespace fp = fuselens::kernels::peers;
namespace fw = fuselens::workloads;

namespace {

using fw::GemmShape;
// Above this many multiply-adds the reference is computed for kSampleRows rows only.
constexpr double kFullReferenceLimit = 2.0e9;
constexpr int kSampleRows = 64;

void run_shape(const GemmShape& s, const fw::CaseContext& context, fw::Report& report) {
  const auto m = static_cast<std::size_t>(s.M);
  const auto n = static_cast<std::size_t>(s.N);
  const auto k = static_cast<std::size_t>(s.K);
  std::mt19937 rng(context.seed);
  const std::vector<float> a = fw::random_inputs(m * k, rng);
  const std::vector<float> b = fw::random_inputs(k * n, rng);
  const std::vector<float> bias = fw::random_inputs(n, rng);

  // Rows checked: all, or an evenly spaced sample for the largest shapes.
  const bool sample = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >
                      kFullReferenceLimit;
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < m; r += sample ? m / kSampleRows : 1) rows.push_back(r);
  std::vector<float> a_rows;
  for (std::size_t r : rows)
    a_rows.insert(a_rows.end(), a.begin() + static_cast<long>(r * k),
                  a.begin() + static_cast<long>((r + 1) * k));
  const std::vector<float> reference =
      fk::gemm_bias_relu_reference(a_rows, b, bias, static_cast<int>(rows.size()), s.N, s.K);

  fk::DeviceBuffer<float> d_a(m * k);
  fk::DeviceBuffer<float> d_b(k * n);
  fk::DeviceBuffer<float> d_bias(n);
  fk::DeviceBuffer<float> d_c(m * n);
  d_a.copy_from_host(a);  // the only Host-to-Device copies of this shape
  d_b.copy_from_host(b);
  d_bias.copy_from_host(bias);

  fw::CheckedOutput output;
  output.data = d_c.data();
  output.bytes = d_c.bytes();
  output.check = [&] {
    const std::vector<float> c = d_c.copy_to_host();  // one Device-to-Host copy
    std::vector<float> picked;
    picked.reserve(rows.size() * n);
    for (std::size_t r : rows)
      picked.insert(picked.end(), c.begin() + static_cast<long>(r * n),
                    c.begin() + static_cast<long>((r + 1) * n));
    return fk::compare_relative_l2(picked, reference);
  };

  // Peers: set up and their launches counted before any range (capture on a side stream).
  fp::CublasGemm cublas(fp::DType::F32);
  const int cublas_kernels = fp::count_kernel_launches([&](cudaStream_t stream) {
    cublas.set_stream(stream);
    fp::launch_cublas_gemm_bias_relu_unfused(cublas, d_a.data(), d_b.data(), d_bias.data(),
                                             d_c.data(), s.M, s.N, s.K);
  });
  cublas.set_stream(nullptr);
  fp::CublasLtGemm cublaslt(fp::DType::F32, fp::Epilogue::ReluBias, s.M, s.N, s.K);
  const int cublaslt_kernels = fp::count_kernel_launches([&](cudaStream_t stream) {
    cublaslt.run(d_a.data(), d_b.data(), d_bias.data(), d_c.data(), stream);
  });

  const std::string shape = fw::gemm_shape_label(s);
  std::vector<fw::Variant> variants{
      {"unfused", 3,
       [&] {
         fk::launch_gemm_bias_relu_unfused(d_a.data(), d_b.data(), d_bias.data(), d_c.data(), s.M,
                                           s.N, s.K);
       },
       fw::gemm_bias_relu_work(false, s.M, s.N, s.K)},
      {"fused", 1,
       [&] {
         fk::launch_gemm_bias_relu_fused(d_a.data(), d_b.data(), d_bias.data(), d_c.data(), s.M,
                                         s.N, s.K);
       },
       fw::gemm_bias_relu_work(true, s.M, s.N, s.K)},
      {"cublas_unfused_epilogue", cublas_kernels,
       [&] {
         fp::launch_cublas_gemm_bias_relu_unfused(cublas, d_a.data(), d_b.data(), d_bias.data(),
                                                  d_c.data(), s.M, s.N, s.K);
       },
       fw::gemm_bias_relu_work(false, s.M, s.N, s.K)},
  };
  if (cublaslt_kernels == 1) {
    variants.push_back({"cublaslt_epilogue", 1,
                        [&] { cublaslt.run(d_a.data(), d_b.data(), d_bias.data(), d_c.data()); },
                        fw::gemm_bias_relu_work(true, s.M, s.N, s.K)});
  } else {
    std::fprintf(
        stderr,
        "fusion_bench: gemm_bias_relu/cublaslt_epilogue/%s skipped: cuBLASLt launches %d kernels\n",
        shape.c_str(), cublaslt_kernels);
  }
  fw::run_variants("gemm_bias_relu", shape, context, output, variants, report);
}

void run_gemm_bias_relu(const fw::CaseContext& context, fw::Report& report) {
  for (const GemmShape& shape : fw::kGemmQuickShapes) run_shape(shape, context, report);
  if (context.quick) return;
  for (const GemmShape& shape : fw::kGemmFullOnlyShapes) run_shape(shape, context, report);
}

}  // namespace

FUSION_BENCH_OP("gemm_bias_relu", 10, run_gemm_bias_relu);
