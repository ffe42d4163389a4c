#pragma once
// Sampling: the rows of sampled tracing (prof-run --sample 1/N; schema 10: sampling,
// sample_step, sample_step_api; db/schema.sql), read for the analyses' "sampled:" line
// (analyzer/sampling/Sampling.h). Units: CUPTI ns for times.
//
// Hostile rows are skipped, never fatal: a NULL, non-integer or negative count, an `every` of 0 or
// above 10^6, a step index or time outside [0, kMaxTimestampNs), an end before its start. A capture
// older than version 10 (or without the tables) reads as not sampled.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::db {

/// A sampling row: one process that sampled.
struct SamplingRow {
  std::int64_t pid = 0;
  std::int64_t every = 1;                  ///< N of --sample 1/N, in [1, 10^6]
  std::int64_t steps = 0, steps_lost = 0;  ///< seen by the collector; of them not stored
};
/// The sampling rows in pid order; empty when nothing was sampled.
std::vector<SamplingRow> sampling_rows(const Reader& reader);

/// One stored step of a sampled process with its launch calls summed over API functions.
struct SampleStepRow {
  std::int64_t pid = 0, step = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = -1;  ///< -1: the process ended inside the step (NULL)
  bool traced = false;
  std::int64_t calls = 0;  ///< launch calls counted in the step (sum of sample_step_api)
};
/// Calls `visit` for each stored step in (pid, step) order (nothing when nothing was sampled),
/// streaming: memory does not grow with the number of steps. Sums saturate at INT64_MAX.
void for_each_sample_step(const Reader& reader,
                          const std::function<void(const SampleStepRow&)>& visit);
/// The same steps as a vector (tests, small captures).
std::vector<SampleStepRow> sample_step_rows(const Reader& reader);

/// One (step, API function) count.
struct SampleStepApiRow {
  std::int64_t pid = 0, step = 0;
  std::string api;  ///< the driver API function; "" when its string id is missing
  std::int64_t calls = 0;
};
/// Every sample_step_api row in (pid, step, api) order; empty when nothing was sampled.
std::vector<SampleStepApiRow> sample_step_api_rows(const Reader& reader);

}  // namespace fuselens::db
