// 3-layer FP32 MLP inference (kernels/mlp), widths 256 → 256 → 256 → 256, batch 1/16/64/256:
// unfused (9 kernels), layer_fused (3), fully_fused (1) and the vendor peer cublaslt_epilogue (3
// cuBLASLt matmuls with the bias+ReLU epilogue). Bytes and FLOPs per call from kernels::mlp_work
// (kernels/mlp/README.md).
//
// Three timings per variant and batch (argument `mode`):
//   0 warm   run_timed: event, the call's launches, event, synchronize. The GPU is idle when the
//   first
//            event passes, so the time includes the host's launch latency of the first kernel (and
//            of every later one the GPU waits for): the latency a caller of one inference sees.
//   1 cold   run_timed with the L2 flushed: the flush (a memset) is queued before the first event,
//   so
//            the host gets ahead and the time is the GPU's alone, with every byte coming from DRAM.
//   2 graph  kGraphCalls calls captured in one CUDA graph between two captured event records; the
//   time
//            per call is the GPU's alone with a warm L2 (no host launch in between; the gaps
//            between the graph's kernels remain).
// mlp/fully_fused_config sweeps the fully fused kernel's cluster size and rows per cluster (graph
// timing): the measurement behind mlp_fully_fused_config's automatic choice.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>

#include "bench_support.h"
#include "common/device_buffer.h"
#include "mlp/mlp.cuh"
#include "mlp/mlp_cublaslt.h"

namespace fk = fuselens::kernels;
namespace fb = fuselens::bench;

namespace {

constexpr std::array<int, 4> kWidths{256, 256, 256, 256};

enum class Variant { Unfused, LayerFused, FullyFused, CublasLt };

/// Device buffers of one batch; values do not change the work, so they are zeros (finite).
struct MlpBuffers {
  explicit MlpBuffers(int batch) {
    const auto rows = static_cast<std::size_t>(batch);
    x = fk::DeviceBuffer<float>(rows * kWidths[0]);
    h1 = fk::DeviceBuffer<float>(rows * kWidths[1]);
    h2 = fk::DeviceBuffer<float>(rows * kWidths[2]);
    y = fk::DeviceBuffer<float>(rows * kWidths[3]);
    FUSELENS_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
    layers.widths = kWidths;
    for (std::size_t l = 0; l < 3; ++l) {
      w[l] = fk::DeviceBuffer<float>(static_cast<std::size_t>(kWidths[l]) * kWidths[l + 1]);
      b[l] = fk::DeviceBuffer<float>(static_cast<std::size_t>(kWidths[l + 1]));
      FUSELENS_CUDA_CHECK(cudaMemset(w[l].data(), 0, w[l].bytes()));
      FUSELENS_CUDA_CHECK(cudaMemset(b[l].data(), 0, b[l].bytes()));
      layers.weights[l] = w[l].data();
      layers.biases[l] = b[l].data();
    }
  }
  fk::DeviceBuffer<float> x, h1, h2, y;
  std::array<fk::DeviceBuffer<float>, 3> w, b;
  fk::MlpLayers layers;
};

constexpr int kGraphCalls = 20;

/// Mode 2 above: captures kGraphCalls calls of `call(stream)` between two event records into a
/// graph (cudaEventRecordExternal: without it a captured record only orders streams and is no graph
/// node), replays it once per benchmark iteration and reports the GPU time per call as the manual
/// time. Returns the mean seconds per call (0 when skipped with an error).
double run_graph_timed(benchmark::State& state, const std::function<void(cudaStream_t)>& call) {
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  double total = 0;
  std::int64_t replays = 0;
  try {
    FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    FUSELENS_CUDA_CHECK(cudaEventCreate(&begin));
    FUSELENS_CUDA_CHECK(cudaEventCreate(&end));
    call(stream);  // warm-up outside the capture (cuBLASLt loads its kernels here)
    FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
    FUSELENS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    call(stream);  // one call before the first event: the graph's own launch latency stays outside
    FUSELENS_CUDA_CHECK(cudaEventRecordWithFlags(begin, stream, cudaEventRecordExternal));
    for (int i = 0; i < kGraphCalls; ++i) call(stream);
    FUSELENS_CUDA_CHECK(cudaEventRecordWithFlags(end, stream, cudaEventRecordExternal));
    FUSELENS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    FUSELENS_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    FUSELENS_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up replay
    FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (auto _ : state) {
      FUSELENS_CUDA_CHECK(cudaGraphLaunch(exec, stream));
      FUSELENS_CUDA_CHECK(cudaStreamSynchronize(stream));
      float ms = 0;
      FUSELENS_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
      const double per_call = static_cast<double>(ms) * 1e-3 / kGraphCalls;
      state.SetIterationTime(per_call);
      total += per_call;
      ++replays;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (end != nullptr) cudaEventDestroy(end);
  if (begin != nullptr) cudaEventDestroy(begin);
  if (stream != nullptr) cudaStreamDestroy(stream);
  return replays > 0 ? total / static_cast<double>(replays) : 0;
}

/// Runs `call` in the given mode and returns the seconds per call (GPU time; see the top of this
/// file).
double time_call(benchmark::State& state, int mode, const std::function<void(cudaStream_t)>& call) {
  if (mode == 2) return run_graph_timed(state, call);
  return fb::run_timed(
      state, [&] { call(nullptr); }, mode == 1);
}

void mlp(benchmark::State& state, Variant variant) {
  const int batch = static_cast<int>(state.range(0));
  const int mode = static_cast<int>(state.range(1));
  MlpBuffers m(batch);
  std::unique_ptr<fk::MlpCublasLt> peer;
  std::function<void(cudaStream_t)> call;
  fk::MlpVariant work_variant = fk::MlpVariant::LayerFused;
  int launches = 3;
  switch (variant) {
    case Variant::Unfused:
      call = [&](cudaStream_t s) {
        fk::launch_mlp_unfused(m.layers, m.x.data(), m.h1.data(), m.h2.data(), m.y.data(), batch,
                               s);
      };
      work_variant = fk::MlpVariant::Unfused;
      launches = 9;
      break;
    case Variant::LayerFused:
      call = [&](cudaStream_t s) {
        fk::launch_mlp_layer_fused(m.layers, m.x.data(), m.h1.data(), m.h2.data(), m.y.data(),
                                   batch, s);
      };
      break;
    case Variant::FullyFused:
      call = [&](cudaStream_t s) {
        fk::launch_mlp_fully_fused(m.layers, m.x.data(), m.y.data(), batch, s);
      };
      work_variant = fk::MlpVariant::FullyFused;
      launches = 1;
      break;
    case Variant::CublasLt:
      peer = std::make_unique<fk::MlpCublasLt>(kWidths, batch);
      call = [&](cudaStream_t s) {
        peer->run(m.layers, m.x.data(), m.h1.data(), m.h2.data(), m.y.data(), s);
      };
      if (!peer->single_kernel_algorithms())
        launches = -1;  // split-K: more than one kernel per layer
      break;
  }
  const double seconds = time_call(state, mode, call);
  const fk::MlpWork work = fk::mlp_work(work_variant, kWidths, batch);
  fb::set_work(state, work.bytes, work.flops, seconds);
  state.counters["launches"] = launches;
}

void fully_fused_config(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const fk::MlpFusedConfig config{static_cast<int>(state.range(1)),
                                  static_cast<int>(state.range(2))};
  MlpBuffers m(batch);
  const double seconds = run_graph_timed(state, [&](cudaStream_t s) {
    fk::launch_mlp_fully_fused(m.layers, m.x.data(), m.y.data(), batch, s, config);
  });
  const fk::MlpWork work = fk::mlp_work(fk::MlpVariant::FullyFused, kWidths, batch);
  fb::set_work(state, work.bytes, work.flops, seconds);
  state.counters["clusters"] = (batch + config.rows_per_cluster - 1) / config.rows_per_cluster;
}

void batches(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "mode"});
  for (int mode : {0, 1, 2})
    for (long batch : {1, 16, 64, 256}) b->Args({batch, mode});
}

void config_sweep(benchmark::internal::Benchmark* b) {
  b->ArgNames({"batch", "cluster", "rows"});
  for (long batch : {1, 16, 64, 256})
    for (long cluster : {8, 16})
      for (long rows : {1, 2, 4, 8, 16})
        if (rows <= batch && (batch + rows - 1) / rows <= 64) b->Args({batch, cluster, rows});
}

}  // namespace

FUSELENS_GPU_BENCHMARK(mlp, unfused, batches, Variant::Unfused);
FUSELENS_GPU_BENCHMARK(mlp, layer_fused, batches, Variant::LayerFused);
FUSELENS_GPU_BENCHMARK(mlp, fully_fused, batches, Variant::FullyFused);
FUSELENS_GPU_BENCHMARK(mlp, cublaslt_epilogue, batches, Variant::CublasLt);
BENCHMARK(fully_fused_config)
    ->Name("mlp/fully_fused_config")
    ->Apply(config_sweep)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
