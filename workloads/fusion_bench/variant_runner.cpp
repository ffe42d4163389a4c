#include "variant_runner.h"

#include "nvtx_range.h"

#include "common/cuda_check.h"

#include <fuselens/annotate.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace fuselens::workloads {
namespace {

/// Owns `count` timing events.
class EventSet {
 public:
  explicit EventSet(std::size_t count) : events_(count, nullptr) {
    for (auto& event : events_) {
      FUSELENS_CUDA_CHECK(cudaEventCreate(&event));
    }
  }
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;
  ~EventSet() {
    for (auto event : events_) {
      if (event != nullptr) {
        cudaEventDestroy(event);
      }
    }
  }
  cudaEvent_t operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

}  // namespace

double VariantTiming::median_us() const {
  if (iteration_us.empty()) {
    return 0.0;
  }
  std::vector<double> sorted = iteration_us;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
}

VariantTiming run_variant(const std::string& range_name, const VariantSettings& settings,
                          void* output, std::size_t output_bytes,
                          const std::function<void()>& iteration, const DeclaredWork& work) {
  if (settings.iters < 1 || settings.warmup < 0) {
    throw std::invalid_argument("run_variant: need iters >= 1 and warmup >= 0");
  }
  const auto iters = static_cast<std::size_t>(settings.iters);
  const EventSet events(iters + 1);

  FUSELENS_CUDA_CHECK(cudaMemset(output, 0xFF, output_bytes));
  for (int i = 0; i < settings.warmup; ++i) {
    iteration();
  }
  FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());

  {
    const NvtxRange range(range_name, static_cast<std::uint64_t>(iters));
    const auto n = static_cast<double>(iters);
    fuselens::annotate::declare_work(work.flops * n, work.bytes * n);
    FUSELENS_CUDA_CHECK(cudaEventRecord(events[0]));
    for (std::size_t i = 0; i < iters; ++i) {
      iteration();
      FUSELENS_CUDA_CHECK(cudaEventRecord(events[i + 1]));
    }
    FUSELENS_CUDA_CHECK(cudaDeviceSynchronize());
  }

  VariantTiming timing;
  timing.iteration_us.reserve(iters);
  for (std::size_t i = 0; i < iters; ++i) {
    float ms = 0.0f;
    FUSELENS_CUDA_CHECK(cudaEventElapsedTime(&ms, events[i], events[i + 1]));
    timing.iteration_us.push_back(static_cast<double>(ms) * 1000.0);
  }
  return timing;
}

}  // namespace fuselens::workloads
