// fusion_bench ops "gemm_bias_relu_fp16" and "gemm_bias_relu_bf16": C = relu(A·B + bias) with
// FP16/BF16 storage and FP32 accumulation on tensor cores (kernels/gemm_tc), against the vendor
// peers (kernels/peers). Variants per shape:
//   unfused                  gemm_tc_kernel, add_bias_tc_kernel, relu_tc_kernel (3 launches)
//   fused                    gemm_tc_bias_relu_fused_kernel (1 launch)
//   cublas_unfused_epilogue  cuBLAS GEMM + add_bias_tc_kernel + relu_tc_kernel (cuBLAS's launches +
//   2) cublaslt_epilogue        cuBLASLt with CUBLASLT_EPILOGUE_RELU_BIAS (1 launch when the
//   algorithm has no
//                            split-K reduction; otherwise the variant is skipped, since
//                            kernels_per_iter must be exact)
//   cutlass_fused            CUTLASS sm90 GEMM, bias + ReLU epilogue visitor tree (1 launch)
//   cutlass_unfused          CUTLASS sm90 GEMM + add_bias_tc_kernel + relu_tc_kernel (3 launches)
//   (both: kernels/cutlass_gemm, built with FUSELENS_HAVE_CUTLASS; run only on a compute
//   capability 9.0 device, otherwise skipped with a line on stderr)
// The peers' launch counts are measured once per shape by graph capture
// (peers::count_kernel_launches). Quick: seed 002's three shapes; full: every GEMM shape of issue
// #3 up to 8192³. The CPU reference (double, from the rounded inputs) is computed for all rows, or
// for an evenly spaced sample of rows when the shape is large (about 5e8 multiply-adds at most, as
// case_gemm_bias_relu.cpp does).
#include <array>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "bench_case.h"
#include "common/device_buffer.h"
#include "gemm_shapes.h"
#include "gemm_tc/gemm_tc.cuh"
#include "gemm_tc/reference.h"
#include "peers/peers.h"
#include "work_model_gemm_tc.h"
#if FUSELENS_HAVE_CUTLASS
#include "cutlass_gemm/cutlass_gemm.cuh"
#endif

namespace fk = fuselens::kernels;
namespace fp = fuselens::kernels::peers;
namespace fw = fuselens::workloads;

namespace {

using fw::GemmShape;
constexpr double kReferenceMacLimit = 5.0e8;  // multiply-adds of the CPU reference, at most (about)

template <typename T>
T round_to(float v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

template <typename T>
float value_of(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(v);
  } else {
    return __bfloat162float(v);
  }
}

/// Rounds to T; `held` receives the float values the rounded elements hold (the reference's
/// inputs).
template <typename T>
std::vector<T> rounded(const std::vector<float>& v, std::vector<float>& held) {
  std::vector<T> out(v.size());
  held.resize(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[i] = round_to<T>(v[i]);
    held[i] = value_of(out[i]);
  }
  return out;
}

template <typename T>
void run_shape(const char* op, const GemmShape& s, const fw::CaseContext& context,
               fw::Report& report) {
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  constexpr fp::DType kDType = kBf16 ? fp::DType::BF16 : fp::DType::F16;
  const auto m = static_cast<std::size_t>(s.M);
  const auto n = static_cast<std::size_t>(s.N);
  const auto k = static_cast<std::size_t>(s.K);
  std::mt19937 rng(context.seed);
  std::vector<float> a_held, b_held, bias_held;
  const std::vector<T> a = rounded<T>(fw::random_inputs(m * k, rng), a_held);
  const std::vector<T> b = rounded<T>(fw::random_inputs(k * n, rng), b_held);
  const std::vector<T> bias = rounded<T>(fw::random_inputs(n, rng), bias_held);

  // Rows checked: all, or an evenly spaced sample for the largest shapes.
  const double row_macs = static_cast<double>(n) * static_cast<double>(k);
  std::size_t sample = m;
  if (static_cast<double>(m) * row_macs > kReferenceMacLimit) {
    sample = static_cast<std::size_t>(kReferenceMacLimit / row_macs);
    sample = sample < 8 ? 8 : (sample > m ? m : sample);
  }
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < sample; ++i) rows.push_back(i * m / sample);
  const std::vector<float> reference =
      fk::gemm_tc_reference_rows(a_held, b_held, bias_held, s.M, s.N, s.K, rows);

  fk::DeviceBuffer<T> d_a(m * k);
  fk::DeviceBuffer<T> d_b(k * n);
  fk::DeviceBuffer<T> d_bias(n);
  fk::DeviceBuffer<T> d_c(m * n);
  d_a.copy_from_host(a);  // the only Host-to-Device copies of this shape
  d_b.copy_from_host(b);
  d_bias.copy_from_host(bias);

  fw::CheckedOutput output;
  output.data = d_c.data();
  output.bytes = d_c.bytes();
  output.tolerance = kBf16 ? fk::kBf16RelativeTolerance : fk::kFp16RelativeTolerance;
  output.dtype = kBf16 ? "bf16" : "fp16";
  output.check = [&] {
    const std::vector<T> c = d_c.copy_to_host();  // one Device-to-Host copy
    std::vector<float> picked;
    picked.reserve(rows.size() * n);
    for (std::size_t r : rows) {
      for (std::size_t col = 0; col < n; ++col) picked.push_back(value_of(c[r * n + col]));
    }
    return fk::compare_relative_l2(picked, reference);
  };

  // Peers: set up and their launches counted before any range (capture on a side stream).
  fp::CublasGemm cublas(kDType);
  const int cublas_kernels = fp::count_kernel_launches([&](cudaStream_t stream) {
    cublas.set_stream(stream);
    fp::launch_cublas_gemm_bias_relu_unfused(cublas, d_a.data(), d_b.data(), d_bias.data(),
                                             d_c.data(), s.M, s.N, s.K);
  });
  cublas.set_stream(nullptr);
  fp::CublasLtGemm cublaslt(kDType, fp::Epilogue::ReluBias, s.M, s.N, s.K);
  const int cublaslt_kernels = fp::count_kernel_launches([&](cudaStream_t stream) {
    cublaslt.run(d_a.data(), d_b.data(), d_bias.data(), d_c.data(), stream);
  });

  const std::string shape = fw::gemm_shape_label(s);
  const double dm = s.M, dn = s.N, dk = s.K;
  std::vector<fw::Variant> variants{
      {"unfused", 3,
       [&] {
         fk::launch_gemm_tc_bias_relu_unfused<T>(d_a.data(), d_b.data(), d_bias.data(), d_c.data(),
                                                 s.M, s.N, s.K);
       },
       fw::gemm_epilogue_work(false, dm, dn, dk, 2)},
      {"fused", 1,
       [&] {
         fk::launch_gemm_tc_bias_relu_fused<T>(d_a.data(), d_b.data(), d_bias.data(), d_c.data(),
                                               s.M, s.N, s.K);
       },
       fw::gemm_epilogue_work(true, dm, dn, dk, 2)},
      {"cublas_unfused_epilogue", cublas_kernels,
       [&] {
         fp::launch_cublas_gemm_bias_relu_unfused(cublas, d_a.data(), d_b.data(), d_bias.data(),
                                                  d_c.data(), s.M, s.N, s.K);
       },
       fw::gemm_epilogue_work(false, dm, dn, dk, 2)},
  };
  if (cublaslt_kernels == 1) {
    variants.push_back({"cublaslt_epilogue", 1,
                        [&] { cublaslt.run(d_a.data(), d_b.data(), d_bias.data(), d_c.data()); },
                        fw::gemm_epilogue_work(true, dm, dn, dk, 2)});
  } else {
    std::fprintf(stderr,
                 "fusion_bench: %s/cublaslt_epilogue/%s skipped: cuBLASLt launches %d kernels\n",
                 op, shape.c_str(), cublaslt_kernels);
  }
#if FUSELENS_HAVE_CUTLASS
  if (fk::cutlass_gemm_available()) {
    variants.push_back({"cutlass_fused", 1,
                        [&] {
                          fk::launch_cutlass_gemm_bias_relu_fused<T>(
                              d_a.data(), d_b.data(), d_bias.data(), d_c.data(), s.M, s.N, s.K);
                        },
                        fw::gemm_epilogue_work(true, dm, dn, dk, 2)});
    variants.push_back({"cutlass_unfused", 3,
                        [&] {
                          fk::launch_cutlass_gemm_bias_relu_unfused<T>(
                              d_a.data(), d_b.data(), d_bias.data(), d_c.data(), s.M, s.N, s.K);
                        },
                        fw::gemm_epilogue_work(false, dm, dn, dk, 2)});
  } else {
    std::fprintf(stderr,
                 "fusion_bench: %s/cutlass_*/%s skipped: the CUTLASS kernels need compute "
                 "capability 9.0\n",
                 op, shape.c_str());
  }
#endif
  fw::run_variants(op, shape, context, output, variants, report);
}

template <typename T>
void run_dtype(const char* op, const fw::CaseContext& context, fw::Report& report) {
  for (const GemmShape& shape : fw::kGemmQuickShapes) run_shape<T>(op, shape, context, report);
  if (context.quick) return;
  for (const GemmShape& shape : fw::kGemmFullOnlyShapes) run_shape<T>(op, shape, context, report);
}

void run_gemm_bias_relu_fp16(const fw::CaseContext& context, fw::Report& report) {
  run_dtype<__half>("gemm_bias_relu_fp16", context, report);
}

void run_gemm_bias_relu_bf16(const fw::CaseContext& context, fw::Report& report) {
  run_dtype<__nv_bfloat16>("gemm_bias_relu_bf16", context, report);
}

}  // namespace

FUSION_BENCH_OP("gemm_bias_relu_fp16", 11, run_gemm_bias_relu_fp16);
FUSION_BENCH_OP("gemm_bias_relu_bf16", 12, run_gemm_bias_relu_bf16);
