#include "compare/CompareSteps.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "compare/CompareGate.h"
#include "fuselens/db/Saturating.h"

namespace fuselens::analyzer {

using db::saturating_add;

std::optional<RangeStats> step_range_stats(const StepReport& steps, int first, int last,
                                           const std::string& name) {
  RangeStats r;
  r.name = name;
  double kernels = 0, launches = 0;
  for (const Step& s : steps.steps) {
    if (s.index < first || s.index > last) continue;
    r.gpu_ns_per_iter_samples.push_back(static_cast<double>(s.compute_ns));
    r.span_ns_per_iter_samples.push_back(static_cast<double>(s.span_ns));
    r.gpu_ns = saturating_add(r.gpu_ns, s.compute_ns);
    r.span_ns = saturating_add(r.span_ns, s.span_ns);
    kernels += static_cast<double>(s.kernels);
    launches += static_cast<double>(s.launches);
  }
  if (r.gpu_ns_per_iter_samples.empty()) return std::nullopt;
  r.instances = r.iterations = static_cast<std::int64_t>(r.gpu_ns_per_iter_samples.size());
  const auto n = static_cast<double>(r.instances);
  r.kernels_per_iter = kernels / n;
  r.launches_per_iter = launches / n;
  r.median_gpu_ns_per_iter = median_of(r.gpu_ns_per_iter_samples);
  r.median_span_ns_per_iter = median_of(r.span_ns_per_iter_samples);
  if (r.median_gpu_ns_per_iter > 0) r.iterations_per_s = 1e9 / r.median_gpu_ns_per_iter;
  return r;
}

void add_steps_entry(CompareReport& report, RangeStats baseline, RangeStats candidate) {
  CompareEntry e;
  e.key = e.op = "(steps)";
  e.baseline_variant = "baseline";
  e.candidate_variant = "candidate";
  if (candidate.median_gpu_ns_per_iter > 0) {
    e.speedup = baseline.median_gpu_ns_per_iter / candidate.median_gpu_ns_per_iter;
  }
  if (candidate.median_span_ns_per_iter > 0) {
    e.span_speedup = baseline.median_span_ns_per_iter / candidate.median_span_ns_per_iter;
  }
  e.baseline = std::move(baseline);
  e.candidate = std::move(candidate);
  if (report.gate) e.gate = judge_entry(e, *report.gate);
  report.entries.insert(report.entries.begin(), std::move(e));
}

}  // namespace fuselens::analyzer
