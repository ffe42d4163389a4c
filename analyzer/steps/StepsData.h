#pragma once
// The launches of a capture as the step analysis reads them (internal to analyzer/steps).

#include <cstdint>
#include <memory>
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

/// Fills the statistics of `steps` (their windows set) from `launches`, then the steady window,
/// distribution and outliers of `report`.
void compute_step_statistics(const db::Reader& reader, const std::vector<Launch>& launches,
                             std::int64_t consecutive_kernel_delay_ns, StepReport& report);

}  // namespace fuselens::analyzer::steps_detail
