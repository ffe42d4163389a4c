// EvoNorm over NCHW, FP32 (kernels/evonorm; seed 000's "EvoNorm-B0" = the EvoNorm-S0 formula):
// unfused chain (5 kernels) and fused kernel at (N, 64, 28, 28), G = 32, for seed 000's batches 16,
// 32, 64 and batch 256 (51 MiB per tensor, larger than the H100's 50 MB L2), warm and cold L2.
// Bytes and FLOPs per call from evonorm_unfused_work / evonorm_fused_work
// (kernels/evonorm/README.md).
//
// evonorm/unfused and evonorm/fused: one call per timed iteration (run_timed synchronizes after
// each, so the time includes the launch latency of an idle GPU). evonorm/unfused_graph and
// evonorm/fused_graph: kGraphCalls calls captured into one CUDA graph, one graph launch per timed
// iteration, warm only; the time column is per graph launch and the counter us_per_call = time /
// kGraphCalls is the GPU time of one call without host launch cost between the kernels.
#include <cstddef>
#include <functional>

#include "bench_support.h"
#include "common/device_buffer.h"
#include "evonorm/evonorm.cuh"

namespace fk = fuselens::kernels;
namespace fb = fuselens::bench;

namespace {

constexpr int kGraphCalls = 100;

/// Owns a CUDA graph of `calls` repetitions of `launch(stream)`, captured on a private stream.
class CallGraph {
 public:
  CallGraph(const std::function<void(cudaStream_t)>& launch, int calls) {
    FUSELENS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    FUSELENS_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < calls; ++i) launch(stream_);
    FUSELENS_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
    FUSELENS_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  CallGraph(const CallGraph&) = delete;
  CallGraph& operator=(const CallGraph&) = delete;
  ~CallGraph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  /// One launch of the whole graph on the legacy default stream.
  void launch() const { FUSELENS_CUDA_CHECK(cudaGraphLaunch(exec_, nullptr)); }

 private:
  cudaStream_t stream_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

void evonorm(benchmark::State& state, bool fused, bool graph) {
  const fk::EvoNormShape s{static_cast<int>(state.range(0)), 64, 28, 28, fk::kEvoNormGroups};
  const bool cold = state.range(1) != 0;
  const std::size_t count = s.elements();
  const auto channels = static_cast<std::size_t>(s.c);
  fk::DeviceBuffer<float> x(count), y(count), gamma(channels), beta(channels), v1(channels);
  fk::DeviceBuffer<float> var(s.group_count()), sd(s.group_count()), gate(count), product(count);
  // Values do not change the work; x = 0 gives var = 0 and y = β (eps keeps it finite).
  FUSELENS_CUDA_CHECK(cudaMemset(x.data(), 0, x.bytes()));
  FUSELENS_CUDA_CHECK(cudaMemset(gamma.data(), 0, gamma.bytes()));
  FUSELENS_CUDA_CHECK(cudaMemset(beta.data(), 0, beta.bytes()));
  FUSELENS_CUDA_CHECK(cudaMemset(v1.data(), 0, v1.bytes()));
  const fk::EvoNormParams params{gamma.data(), beta.data(), v1.data()};
  const fk::EvoNormScratch scratch{var.data(), sd.data(), gate.data(), product.data()};
  const std::function<void(cudaStream_t)> call = [&](cudaStream_t stream) {
    if (fused) {
      fk::launch_evonorm_fused(x.data(), params, y.data(), s, fk::kEvoNormEps, stream);
    } else {
      fk::launch_evonorm_unfused(x.data(), params, y.data(), s, scratch, fk::kEvoNormEps, stream);
    }
  };
  const fk::EvoNormWork work = fused ? fk::evonorm_fused_work(s) : fk::evonorm_unfused_work(s);
  const int calls = graph ? kGraphCalls : 1;
  double seconds = 0;
  if (graph) {
    const CallGraph call_graph(call, kGraphCalls);
    seconds = fb::run_timed(
        state, [&] { call_graph.launch(); }, cold);
  } else {
    seconds = fb::run_timed(
        state, [&] { call(nullptr); }, cold);
  }
  fb::set_work(state, calls * work.bytes, calls * work.flops, seconds);
  state.counters["launches"] = calls * (fused ? 1 : 5);
  state.counters["us_per_call"] = seconds * 1e6 / calls;
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"N", "cold"});
  for (int cold : {0, 1})
    for (long batch : {16, 32, 64, 256}) b->Args({batch, cold});
}

void warm_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"N", "cold"});
  for (long batch : {16, 32, 64, 256}) b->Args({batch, 0});
}

}  // namespace

FUSELENS_GPU_BENCHMARK(evonorm, unfused, shapes, false, false);
FUSELENS_GPU_BENCHMARK(evonorm, fused, shapes, true, false);
FUSELENS_GPU_BENCHMARK(evonorm, unfused_graph, warm_shapes, false, true);
FUSELENS_GPU_BENCHMARK(evonorm, fused_graph, warm_shapes, true, true);
