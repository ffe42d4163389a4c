// GEMM + bias + ReLU, C = relu(A·B + bias), in FP32 (kernels/gemm_bias_relu, SIMT) and FP16/BF16
// with FP32 accumulation (kernels/gemm_tc, tensor cores), four variants each:
//   unfused                  the suite's GEMM kernel, then its bias kernel, then its ReLU kernel (3
//   launches) fused                    the suite's GEMM with bias + ReLU in the epilogue (1 launch)
//   cublas_unfused_epilogue  cuBLAS GEMM (cublasGemmEx), then the suite's bias and ReLU kernels (1
//   + 2) cublaslt_epilogue        cuBLASLt with CUBLASLT_EPILOGUE_RELU_BIAS (the vendor's fusion, 1
//   launch)
// FP16/BF16 also, when built with CUTLASS (FUSELENS_HAVE_CUTLASS, kernels/cutlass_gemm):
// - cutlass_fused: CUTLASS sm90 GEMM with the bias + ReLU epilogue visitor tree (1 launch);
// - cutlass_unfused: the same GEMM, plain epilogue, then the suite's bias and ReLU kernels (3)
// (skipped with an error row on devices other than compute capability 9.0).
// Shapes (M×N×K) of issue #3: seed 000's six, seed 002's three ((M, K, N) = (64, 256, 128), (128,
// 256, 256), (1024, 1024, 1024)), 4096³ and 8192³; FP32 8192³ only for the peers (the suite's SIMT
// SGEMM takes tens of ms there). Warm (L2 holds the previous iteration's data) and cold (L2 flushed
// before each iteration). Counters: bytes and flops per iteration
// (workloads/fusion_bench/work_model_gemm_tc.h: 2·M·N·K + M·N FLOPs; A, B, bias once + 1 or 5
// passes over C), GB/s, TFLOP/s, pct_copy_bw, pct_gemm (bench_support.h). Benchmark names:
// gemm_bias_relu_<dtype>/<variant>/M:../N:../K:../cold:../manual_time.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../fusion_bench/work_model_gemm_tc.h"
#include "bench_support.h"
#include "common/device_buffer.h"
#include "gemm_bias_relu/gemm_bias_relu.cuh"
#include "gemm_tc/gemm_tc.cuh"
#include "peers/peers.h"
#if FUSELENS_HAVE_CUTLASS
#include "cutlass_gemm/cutlass_gemm.cuh"
#endif

namespace fk = fuselens::kernels;
namespace fp = fuselens::kernels::peers;
namespace fb = fuselens::bench;
namespace fw = fuselens::workloads;

namespace {

enum class Variant { Unfused, Fused, CublasUnfused, CublasLt, CutlassFused, CutlassUnfused };

/// Uniform in [-1, 1) from an integer hash of the index (fast enough for 8192² elements).
float hashed_value(std::size_t i, std::uint32_t seed) {
  auto x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  return static_cast<float>(x & 0xFFFFFFu) / 8388608.0f - 1.0f;
}

/// Device buffers of one (dtype, M, N, K), reused by consecutive benchmarks of the same problem.
struct Problem {
  fp::DType dtype;
  long M, N, K;
  fk::DeviceBuffer<unsigned char> a, b, bias, c;
};

fk::DeviceBuffer<unsigned char> random_device(std::size_t n, fp::DType dtype, std::uint32_t seed) {
  fk::DeviceBuffer<unsigned char> d(n * fp::dtype_size(dtype));
  std::vector<unsigned char> host(d.size());
  for (std::size_t i = 0; i < n; ++i) {
    const float v = hashed_value(i, seed);
    if (dtype == fp::DType::F32) {
      reinterpret_cast<float*>(host.data())[i] = v;
    } else if (dtype == fp::DType::F16) {
      reinterpret_cast<__half*>(host.data())[i] = __float2half_rn(v);
    } else {
      reinterpret_cast<__nv_bfloat16*>(host.data())[i] = __float2bfloat16_rn(v);
    }
  }
  d.copy_from_host(host);
  return d;
}

Problem& problem(fp::DType dtype, long M, long N, long K) {
  static std::unique_ptr<Problem> current;
  if (!current || current->dtype != dtype || current->M != M || current->N != N ||
      current->K != K) {
    current.reset();  // free the previous shape's buffers first
    const auto m = static_cast<std::size_t>(M), n = static_cast<std::size_t>(N),
               k = static_cast<std::size_t>(K);
    current = std::make_unique<Problem>(
        Problem{dtype, M, N, K, random_device(m * k, dtype, 1u), random_device(k * n, dtype, 2u),
                random_device(n, dtype, 3u),
                fk::DeviceBuffer<unsigned char>(m * n * fp::dtype_size(dtype))});
  }
  return *current;
}

template <typename T>
void launch_own(bool fused, Problem& p, int M, int N, int K) {
  const auto* a = reinterpret_cast<const T*>(p.a.data());
  const auto* b = reinterpret_cast<const T*>(p.b.data());
  const auto* bias = reinterpret_cast<const T*>(p.bias.data());
  auto* c = reinterpret_cast<T*>(p.c.data());
  if constexpr (std::is_same_v<T, float>) {
    fused ? fk::launch_gemm_bias_relu_fused(a, b, bias, c, M, N, K)
          : fk::launch_gemm_bias_relu_unfused(a, b, bias, c, M, N, K);
  } else {
    fused ? fk::launch_gemm_tc_bias_relu_fused<T>(a, b, bias, c, M, N, K)
          : fk::launch_gemm_tc_bias_relu_unfused<T>(a, b, bias, c, M, N, K);
  }
}

#if FUSELENS_HAVE_CUTLASS
template <typename T>
void launch_cutlass(bool fused, Problem& p, int M, int N, int K) {
  const auto* a = reinterpret_cast<const T*>(p.a.data());
  const auto* b = reinterpret_cast<const T*>(p.b.data());
  const auto* bias = reinterpret_cast<const T*>(p.bias.data());
  auto* c = reinterpret_cast<T*>(p.c.data());
  fused ? fk::launch_cutlass_gemm_bias_relu_fused<T>(a, b, bias, c, M, N, K)
        : fk::launch_cutlass_gemm_bias_relu_unfused<T>(a, b, bias, c, M, N, K);
}
#endif

void gemm_bias_relu(benchmark::State& state, fp::DType dtype, Variant variant) {
  const int M = static_cast<int>(state.range(0));
  const int N = static_cast<int>(state.range(1));
  const int K = static_cast<int>(state.range(2));
  const bool cold = state.range(3) != 0;
  std::unique_ptr<fp::CublasGemm> cublas;
  std::unique_ptr<fp::CublasLtGemm> cublaslt;
  std::function<void()> iteration;
  try {
    Problem& p = problem(dtype, M, N, K);
    switch (variant) {
      case Variant::Unfused:
      case Variant::Fused: {
        const bool fused = variant == Variant::Fused;
        if (dtype == fp::DType::F32) {
          iteration = [&p, fused, M, N, K] { launch_own<float>(fused, p, M, N, K); };
        } else if (dtype == fp::DType::F16) {
          iteration = [&p, fused, M, N, K] { launch_own<__half>(fused, p, M, N, K); };
        } else {
          iteration = [&p, fused, M, N, K] { launch_own<__nv_bfloat16>(fused, p, M, N, K); };
        }
        break;
      }
      case Variant::CublasUnfused:
        cublas = std::make_unique<fp::CublasGemm>(dtype);
        iteration = [&p, &cublas, M, N, K] {
          fp::launch_cublas_gemm_bias_relu_unfused(*cublas, p.a.data(), p.b.data(), p.bias.data(),
                                                   p.c.data(), M, N, K);
        };
        break;
      case Variant::CublasLt:
        cublaslt = std::make_unique<fp::CublasLtGemm>(dtype, fp::Epilogue::ReluBias, M, N, K);
        iteration = [&p, &cublaslt] {
          cublaslt->run(p.a.data(), p.b.data(), p.bias.data(), p.c.data());
        };
        break;
      case Variant::CutlassFused:
      case Variant::CutlassUnfused: {
#if FUSELENS_HAVE_CUTLASS
        if (!fk::cutlass_gemm_available()) {
          throw fk::CutlassUnavailable("CUTLASS sm_90a kernels need compute capability 9.0");
        }
        const bool fused = variant == Variant::CutlassFused;
        if (dtype == fp::DType::F16) {
          iteration = [&p, fused, M, N, K] { launch_cutlass<__half>(fused, p, M, N, K); };
        } else {
          iteration = [&p, fused, M, N, K] { launch_cutlass<__nv_bfloat16>(fused, p, M, N, K); };
        }
#endif
        break;
      }
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double seconds = fb::run_timed(state, iteration, cold);
  const bool one_pass =
      variant == Variant::Fused || variant == Variant::CublasLt || variant == Variant::CutlassFused;
  const fw::DeclaredWork work =
      fw::gemm_epilogue_work(one_pass, M, N, K, static_cast<double>(fp::dtype_size(dtype)));
  fb::set_work(state, work.bytes, work.flops, seconds);
}

/// (M, N, K) of issue #3.
const std::vector<std::vector<long>>& shapes() {
  static const std::vector<std::vector<long>> s{
      {128, 128, 128},    {256, 128, 128},    {256, 256, 256},   {512, 256, 256},
      {512, 256, 512},    {1024, 512, 256},   {64, 128, 256},    {128, 256, 256},
      {1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}};
  return s;
}

/// Registers every (dtype, shape, cold, variant) with the variant innermost, so consecutive
/// benchmarks share one Problem (inputs are made once per dtype and shape).
[[maybe_unused]] const bool registered = [] {
  const struct {
    const char* name;
    fp::DType dtype;
  } dtypes[] = {{"fp32", fp::DType::F32}, {"fp16", fp::DType::F16}, {"bf16", fp::DType::BF16}};
  const struct {
    const char* name;
    Variant variant;
  } variants[] = {{"unfused", Variant::Unfused},
                  {"fused", Variant::Fused},
                  {"cublas_unfused_epilogue", Variant::CublasUnfused},
                  {"cublaslt_epilogue", Variant::CublasLt}};
  std::vector<std::pair<const char*, Variant>> tc_variants;  // FP16/BF16 only: CUTLASS's
#if FUSELENS_HAVE_CUTLASS
  tc_variants = {{"cutlass_fused", Variant::CutlassFused},
                 {"cutlass_unfused", Variant::CutlassUnfused}};
#endif
  for (const auto& d : dtypes) {
    for (const auto& s : shapes()) {
      for (long cold : {0L, 1L}) {
        for (const auto& v : variants) {
          const bool own = v.variant == Variant::Unfused || v.variant == Variant::Fused;
          // The suite's SIMT SGEMM at 8192³ takes tens of ms per iteration: peers only there.
          if (own && d.dtype == fp::DType::F32 && s[0] == 8192) continue;
          const std::string name = std::string("gemm_bias_relu_") + d.name + "/" + v.name;
          benchmark::RegisterBenchmark(name.c_str(), gemm_bias_relu, d.dtype, v.variant)
              ->ArgNames({"M", "N", "K", "cold"})
              ->Args({s[0], s[1], s[2], cold})
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
        }
        if (d.dtype == fp::DType::F32) continue;
        for (const auto& [variant_name, variant] : tc_variants) {
          const std::string name = std::string("gemm_bias_relu_") + d.name + "/" + variant_name;
          benchmark::RegisterBenchmark(name.c_str(), gemm_bias_relu, d.dtype, variant)
              ->ArgNames({"M", "N", "K", "cold"})
              ->Args({s[0], s[1], s[2], cold})
              ->UseManualTime()
              ->Unit(benchmark::kMicrosecond);
        }
      }
    }
  }
  return true;
}();

}  // namespace
