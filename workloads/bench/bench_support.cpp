#include "bench_support.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

#include "TensorGemm.h"
#include "common/cuda_check.h"
#include "common/device_buffer.h"

namespace fuselens::bench {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n == 0 ? 0.0 : (n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]));
}

double measure_copy_bandwidth() {
  const std::size_t bytes = std::size_t{1} << 30;
  kernels::DeviceBuffer<char> src(bytes), dst(bytes);
  FUSELENS_CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
  cudaEvent_t start, stop;
  FUSELENS_CUDA_CHECK(cudaEventCreate(&start));
  FUSELENS_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> seconds;
  for (int i = 0; i < 13; ++i) {
    FUSELENS_CUDA_CHECK(cudaEventRecord(start));
    FUSELENS_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice));
    FUSELENS_CUDA_CHECK(cudaEventRecord(stop));
    FUSELENS_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    FUSELENS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i >= 3) seconds.push_back(ms * 1e-3);  // 3 warm-ups
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return 2.0 * static_cast<double>(bytes) / median(seconds);
}

/// A buffer twice the L2 size, memset before each cold iteration.
struct L2Flush {
  kernels::DeviceBuffer<char> buffer;
  L2Flush() {
    int device = 0, l2 = 0;
    FUSELENS_CUDA_CHECK(cudaGetDevice(&device));
    FUSELENS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    buffer = kernels::DeviceBuffer<char>(2 * static_cast<std::size_t>(l2));
  }
  void flush() { FUSELENS_CUDA_CHECK(cudaMemsetAsync(buffer.data(), 0, buffer.bytes())); }
};

}  // namespace

const Ceilings& ceilings() {
  static const Ceilings measured = [] {
    Ceilings c;
    c.copy_bytes_per_s = measure_copy_bandwidth();
    try {
      c.gemm_flops_per_s = ceilings::tensor_gemm_rate(ceilings::TensorType::Fp16, 8192, 10).value;
    } catch (const ceilings::TensorGemmUnavailable& e) {
      std::fprintf(stderr, "fusion_microbench: no cuBLASLt GEMM ceiling: %s\n", e.what());
    }
    std::fprintf(
        stderr,
        "fusion_microbench: ceilings: D2D copy %.1f GB/s, cuBLASLt FP16 8192^3 %.1f TFLOP/s\n",
        c.copy_bytes_per_s * 1e-9, c.gemm_flops_per_s * 1e-12);
    return c;
  }();
  return measured;
}

double run_timed(benchmark::State& state, const std::function<void()>& iteration, bool cold) {
  static L2Flush* l2 = nullptr;  // created on first cold use, kept for the process
  double total_s = 0;
  try {
    if (cold && l2 == nullptr) l2 = new L2Flush();
    cudaEvent_t start, stop;
    FUSELENS_CUDA_CHECK(cudaEventCreate(&start));
    FUSELENS_CUDA_CHECK(cudaEventCreate(&stop));
    iteration();  // one warm-up outside the loop (module load, first-touch)
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
    for (auto _ : state) {
      if (cold) l2->flush();
      FUSELENS_CUDA_CHECK(cudaEventRecord(start));
      iteration();
      FUSELENS_CUDA_CHECK(cudaEventRecord(stop));
      FUSELENS_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      FUSELENS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      state.SetIterationTime(static_cast<double>(ms) * 1e-3);
      total_s += static_cast<double>(ms) * 1e-3;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return 0;
  }
  return state.iterations() > 0 ? total_s / static_cast<double>(state.iterations()) : 0;
}

void set_work(benchmark::State& state, double bytes, double flops, double seconds_per_iteration) {
  const Ceilings& c = ceilings();
  state.counters["bytes"] = bytes;
  state.counters["flops"] = flops;
  if (seconds_per_iteration <= 0) return;
  const double bytes_per_s = bytes / seconds_per_iteration;
  const double flops_per_s = flops / seconds_per_iteration;
  state.counters["GB/s"] = bytes_per_s * 1e-9;
  state.counters["TFLOP/s"] = flops_per_s * 1e-12;
  if (c.copy_bytes_per_s > 0)
    state.counters["pct_copy_bw"] = 100.0 * bytes_per_s / c.copy_bytes_per_s;
  if (c.gemm_flops_per_s > 0) state.counters["pct_gemm"] = 100.0 * flops_per_s / c.gemm_flops_per_s;
}

void run_rows(benchmark::State& state, const std::function<void()>& iteration, bool cold,
              double bytes, double flops, int rows) {
  const double seconds = run_timed(state, iteration, cold);
  set_work(state, bytes, flops, seconds);
  state.counters["rows/s"] = seconds > 0 ? rows / seconds : 0;
}

void row_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "cols", "cold"});
  for (int cold : {0, 1}) {
    b->Args({256, 4096, cold});
    b->Args({4096, 4096, cold});
    b->Args({1024, 32768, cold});
  }
}

}  // namespace fuselens::bench
