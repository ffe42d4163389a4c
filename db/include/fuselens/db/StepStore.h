#pragma once
// StepStore: the steps stored in a capture when its run ended (schema version 6, db/schema.sql:
// step_detection, step). The analyzer finds the steps (analyzer/steps/Steps.h: store_steps,
// stored_step_report); this stores and reads the rows.
//
// Units: ns for times, bytes for memory. Errors: db::Error (SQLite failures; a capture older than
// version 6 has no step tables to store into; a stored row with implausible values).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// The step_detection row.
struct StoredStepDetection {
  std::string method, pattern, note;
  double confidence = 0;
  std::int64_t period = 0, steady_first = 0, median_step = 0, captured_ns = 0, steady_ns = 0;
  double median_ns = 0, p10_ns = 0, p25_ns = 0, p75_ns = 0, p90_ns = 0, max_ns = 0;
};

/// One step row (the columns of db/schema.sql's `step`).
struct StoredStep {
  std::int64_t index = 0, pid = 0, tid = 0, start_ns = 0, end_ns = 0;
  std::string label;
  std::int64_t gpu_busy_ns = 0, compute_ns = 0, non_compute_ns = 0, span_ns = 0, idle_ns = 0;
  std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_wait_ns = 0;
  std::int64_t launches = 0, kernels = 0, copies = 0, memsets = 0, syncs = 0, allocations = 0;
  std::int64_t peak_memory_bytes = 0;
  std::string top_kernel;
  std::int64_t top_kernel_ns = 0;
  std::optional<std::string> outlier_reason, outlier_differs;
};

/// Replaces the stored steps of the capture open read-write in `connection` in one transaction.
/// Throws db::Error when the capture has no step tables (schema version < 6).
void write_steps(Connection& connection, const StoredStepDetection& detection,
                 const std::vector<StoredStep>& steps);

/// The stored steps, in index order; nullopt when the capture has no step tables or nothing was
/// stored (no step_detection row). Throws db::Error for rows a run cannot have written (indexes
/// not 1..n, times outside [0, kMaxTimestampNs) or ending before they start, steady_first or
/// median_step beyond the steps).
struct StoredSteps {
  StoredStepDetection detection;
  std::vector<StoredStep> steps;
};
std::optional<StoredSteps> read_stored_steps(const Reader& reader);

}  // namespace fuselens::db
