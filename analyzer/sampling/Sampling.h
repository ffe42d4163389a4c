#pragma once
// Sampling: what a sampled capture traced (prof-run --sample 1/N; docs/capture-control.md,
// "Sampled tracing"), for the line every analysis prints above its output, e.g.
//   sampled: 1 step in 10 traced (steps 10, 20, 30 …: 10 of 100); launch counts of all 100
//   steps from callbacks (5,400 launch calls, 540 in the traced steps: counts × 10.00)
// Steps are numbered from 1, as `prof-analyze steps` numbers them; the collector traced step k
// (1-based) when k % N == 0.
//
// Reads the capture's sampling, sample_step and sample_step_api tables through db/Sampling.h;
// hostile rows are skipped there. No SQL here.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuselens/db/Reader.h"

namespace fuselens::analyzer {

struct SamplingSummary {
  std::int64_t every = 1;  ///< N of --sample 1/N (the first process's; see `mixed`)
  bool mixed = false;      ///< processes sampled with different N
  std::int64_t processes = 0;
  std::int64_t steps = 0;                  ///< steps stored, all processes
  std::int64_t steps_lost = 0;             ///< steps the collector saw but could not store
  std::int64_t traced_steps = 0;           ///< of the stored steps, those traced
  std::vector<std::int64_t> first_traced;  ///< up to 3 traced steps (1-based) of the first process
  std::int64_t calls = 0;         ///< launch calls counted in the stored steps (saturating)
  std::int64_t traced_calls = 0;  ///< of them, in the traced steps
  /// calls / traced_calls: the factor from a count in the traced steps to the whole run's
  /// steps (per-kernel counts scaled by it estimate the run's); 0 when no traced step counted a
  /// launch call.
  double scale = 0;
};

/// The capture's sampling; nullopt when it was not sampled (no sampling rows, or a capture
/// older than schema 10). Throws db::Error on a capture SQLite cannot read.
std::optional<SamplingSummary> summarize_sampling(const db::Reader& reader);

/// The one line above, starting "sampled: ", without a line break.
std::string sampling_line(const SamplingSummary& s);

}  // namespace fuselens::analyzer
