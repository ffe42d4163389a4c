#pragma once
// The launches of a capture as the step analysis reads them (internal to analyzer/steps).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/ActivityCursors.h"
#include "steps/Steps.h"

namespace fuselens::analyzer::steps_detail {

/// One GPU operation joined to its launch call.
struct Launch {
  std::int64_t pid = 0, tid = 0, correlation_id = 0;
  std::int64_t call_start_ns = 0, call_end_ns = 0;
  db::GpuTable table = db::GpuTable::Kernel;
  std::int64_t start_ns = 0, end_ns = 0, device_id = 0, stream_id = 0;
  /// kernel: its demangled name; copies "[CUDA memcpy]", memsets "[CUDA memset]" (shared by the
  /// launches of one name)
  std::shared_ptr<const std::string> name;
};

/// Every GPU operation with a launch call, ordered by (call start, correlation id).
std::vector<Launch> read_launches(const db::Reader& reader);

/// One GPU operation of a step as its statistics read it (56 bytes; the streamed statistics hold
/// only those of the steps still open).
struct StepLaunch {
  std::int64_t start_ns = 0, end_ns = 0;
  std::int64_t call_start_ns = 0;  ///< the start of its launch call (the earliest of its id)
  std::int64_t device_id = 0, stream_id = 0;
  const std::string* name = nullptr;  ///< kernels: the demangled name (owned by the caller)
  db::GpuTable table = db::GpuTable::Kernel;
};

/// What the per-step statistics read besides the launches: each process's synchronizations and
/// its device memory over time (both few next to the launches).
class StepContext {
 public:
  /// Reads the synchronizations and device-memory events of `reader`. Throws db::Error.
  explicit StepContext(const db::Reader& reader);
  /// Fills the statistics of `step` (its window set, the rest zero) from `work`, the GPU
  /// operations launched inside its window by any thread of its process (reordered here).
  void fill(Step& step, std::vector<StepLaunch>& work,
            std::int64_t consecutive_kernel_delay_ns) const;

 private:
  struct MemoryStep {  // device memory of a process after an event (all its devices)
    std::int64_t t = 0, level = 0;
    bool allocation = false;
  };
  std::map<std::int64_t, std::vector<std::int64_t>> syncs_by_pid_;  // start times, sorted
  std::map<std::int64_t, std::vector<MemoryStep>> memory_by_pid_;   // in time order
};

/// Fills the statistics of `steps` (their windows set) from `launches` (read_launches), all held
/// in memory.
void fill_steps(const StepContext& context, const std::vector<Launch>& launches,
                std::int64_t consecutive_kernel_delay_ns, std::vector<Step>& steps);

/// Fills the statistics of `steps` (their windows set; sorted by start) streaming the launches
/// in (pid, correlation id) order and holding only those of the steps still open: a step is
/// filled once a launch of its process starts its call at or after the step's end (call starts
/// follow correlation ids, which CUPTI hands out at the calls' entry). Returns false, with
/// `steps` partly filled, when a launch arrives for a step already filled (a capture whose
/// launches are out of call order): the caller then uses fill_steps. Throws db::Error.
bool stream_steps(const db::Reader& reader, const StepContext& context,
                  std::int64_t consecutive_kernel_delay_ns, std::vector<Step>& steps);

/// The capture's extent, then the steady window, distribution and outliers of `report` (its
/// steps filled).
void summarize_steps(const db::Reader& reader, StepReport& report);

}  // namespace fuselens::analyzer::steps_detail
