#include "compare/CompareGate.h"

#include <cmath>

namespace fuselens::analyzer {

const char* to_string(GateVerdict verdict) {
  switch (verdict) {
    case GateVerdict::NotSlower:
      return "not slower";
    case GateVerdict::Slower:
      return "slower";
    case GateVerdict::Inconclusive:
      return "inconclusive";
  }
  return "not slower";
}

double threshold_speedup(double percent) { return 1 / (1 + percent / 100); }

std::optional<EntryGate> judge_entry(const CompareEntry& entry, const GateOptions& options) {
  if (!entry.baseline || !entry.candidate) return std::nullopt;
  const auto& b = samples_ns_per_iter(*entry.baseline, options.basis);
  const auto& c = samples_ns_per_iter(*entry.candidate, options.basis);
  EntryGate gate;
  gate.baseline_noise = noise_of(b);
  gate.candidate_noise = noise_of(c);
  gate.rank_test = mann_whitney(b, c);
  RatioResult ratio = bootstrap_median_ratio(b, c, options.bootstrap);
  gate.problem = ratio.problem;
  gate.interval = ratio.interval;
  const double percent = std::isfinite(options.threshold_percent) && options.threshold_percent > 0
                             ? options.threshold_percent
                             : 0;
  if (gate.interval) {
    const double t = threshold_speedup(percent);
    gate.verdict = gate.interval->high < t  ? GateVerdict::Slower
                   : gate.interval->low > t ? GateVerdict::NotSlower
                                            : GateVerdict::Inconclusive;
  } else {
    gate.by_medians = true;
    const auto slowdown = entry.slowdown_percent(options.basis);
    gate.verdict = slowdown && *slowdown > percent ? GateVerdict::Slower : GateVerdict::NotSlower;
  }
  return gate;
}

void judge(CompareReport& report, const GateOptions& options) {
  report.gate = options;
  for (CompareEntry& e : report.entries) e.gate = judge_entry(e, options);
}

std::vector<const CompareEntry*> entries_with(const CompareReport& report, GateVerdict verdict) {
  std::vector<const CompareEntry*> out;
  for (const CompareEntry& e : report.entries) {
    if (e.gate && e.gate->verdict == verdict) out.push_back(&e);
  }
  return out;
}

}  // namespace fuselens::analyzer
