#pragma once
// StepStore: the steps stored in a capture when its run ended (schema version 6, db/schema.sql:
// step_detection, step). The analyzer finds the steps (analyzer/steps/Steps.h, store_steps);
// this stores and reads them.
//
// Units: ns for times, bytes for memory. Errors: db::Error (SQLite failures; a capture older than
// version 6 has no step tables to store into).

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
  std::int64_t period = 0, steady_first = 0;
};

/// One step row (the columns of db/schema.sql's `step`).
struct StoredStep {
  std::int64_t index = 0, pid = 0, tid = 0, start_ns = 0, end_ns = 0;
  std::string label;
  std::int64_t gpu_busy_ns = 0, compute_ns = 0, idle_ns = 0;
  std::int64_t launches = 0, kernels = 0, copies = 0, syncs = 0, peak_memory_bytes = 0;
  bool steady = false, outlier = false;
};

/// Replaces the stored steps of the capture open read-write in `connection` in one transaction.
/// Throws db::Error when the capture has no step tables (schema version < 6).
void write_steps(Connection& connection, const StoredStepDetection& detection,
                 const std::vector<StoredStep>& steps);

/// The stored steps, in index order; nullopt when the capture has no step tables or none were
/// stored (no step_detection row).
struct StoredSteps {
  StoredStepDetection detection;
  std::vector<StoredStep> steps;
};
std::optional<StoredSteps> read_stored_steps(const Reader& reader);

}  // namespace fuselens::db
