#pragma once
// Shared machinery of the Google Benchmark suite `fusion_microbench` (workloads/bench).
//
// Timing: every benchmark uses manual time. Each iteration records a CUDA event, runs the variant's
// launches, records a second event, synchronizes, and reports cudaEventElapsedTime as the
// iteration's time (GPU time, not host time). With `cold = true` a cudaMemsetAsync over a buffer
// twice the L2 size runs before the first event of every iteration, so the variant starts with an
// L2 that holds none of its data (the "cold" numbers); outside the events, so the flush is not
// timed.
//
// Counters every benchmark sets with set_work():
//   bytes        compulsory device-memory bytes of ONE iteration (model, kernels/<op>/README.md)
//   flops        FLOPs of ONE iteration (an FMA counts 2)
//   GB/s, TFLOP/s  bytes and flops per second of GPU time
//   pct_copy_bw  GB/s as a percent of the device-to-device cudaMemcpy bandwidth measured in this
//   run pct_gemm     TFLOP/s as a percent of cuBLASLt's FP16 8192³ GEMM rate measured in this run
// The two ceilings are measured once per process, lazily, on first use (ceilings()).
//
// Errors: CUDA failures throw fuselens::kernels::CudaError; benchmarks turn them into
// state.SkipWithError so one failing variant does not stop the suite.

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <functional>

namespace fuselens::bench {

/// Ceilings measured on the running GPU, once per process.
struct Ceilings {
  double copy_bytes_per_s =
      0;  ///< cudaMemcpyAsync D2D, 1 GiB, (read + write bytes) / time, median of 10
  double gemm_flops_per_s =
      0;  ///< cuBLASLt FP16 8192³, FP32 accumulate, median of 10; 0 if unavailable
};

/// The ceilings of the current device (measured on first call; later calls return the cached
/// values).
const Ceilings& ceilings();

/// Runs the benchmark loop: `iteration` launches one iteration's kernels on the legacy default
/// stream. cold = true flushes L2 before every iteration (see above). Sets manual time per
/// iteration and returns the mean GPU seconds per iteration (0 when the benchmark was skipped with
/// an error).
double run_timed(benchmark::State& state, const std::function<void()>& iteration,
                 bool cold = false);

/// Sets the counters above for one iteration's `bytes` and `flops` done in `seconds_per_iteration`
/// (run_timed's result). Rates are plain counters computed here, not Google Benchmark kIsRate
/// counters, so they are always per second of GPU time.
void set_work(benchmark::State& state, double bytes, double flops, double seconds_per_iteration);

/// The row-wise suites (softmax, LayerNorm): times `iteration` with run_timed, sets set_work's
/// counters for `bytes` and `flops` per iteration, and "rows/s" (`rows` per second of GPU time).
void run_rows(benchmark::State& state, const std::function<void()>& iteration, bool cold,
              double bytes, double flops, int rows);
/// The shapes of the row-wise suites, rows × cols: 256×4096, 4096×4096 and 1024×32768, each warm
/// (cold:0) and with L2 flushed before every iteration (cold:1).
void row_shapes(benchmark::internal::Benchmark* b);

}  // namespace fuselens::bench

/// Registers `fn(state)` with manual time and microsecond units; use for every suite benchmark.
#define FUSELENS_BENCHMARK(fn) BENCHMARK(fn)->UseManualTime()->Unit(benchmark::kMicrosecond)
/// Registers `fn(state, ARGS...)` as `fn/name` over the arguments `apply` sets, with manual time
/// and microsecond units, like FUSELENS_BENCHMARK.
#define FUSELENS_GPU_BENCHMARK(fn, name, apply, ...) \
  BENCHMARK_CAPTURE(fn, name, __VA_ARGS__)           \
      ->Apply(apply)                                 \
      ->UseManualTime()                              \
      ->Unit(benchmark::kMicrosecond)
