// store_steps and stored_step_report: the steps of a run stored in its capture when it ends
// (Steps.h, db/StepStore.h).

#include <fmt/format.h>

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "fuselens/db/StepStore.h"
#include "steps/Steps.h"

namespace fuselens::analyzer {

namespace {

// What store_steps writes: the detection row, the steps, and why none were searched ("" when
// they were).
struct StepsToStore {
  db::StoredStepDetection detection;
  std::vector<db::StoredStep> rows;
  std::string skipped;
};

StepsToStore steps_to_store(const db::Reader& reader) {
  // The same bound as the default window's rule (window/Window.h: kMaxSteadyDefaultRecords).
  const std::int64_t records = reader.gpu_record_bound();
  StepOptions options;
  options.streamed_only = records > kMaxStoredStepRecords;
  const StepReport r = analyze_steps(reader, options);
  if (r.skipped) {
    db::StoredStepDetection none;
    none.method = "none";
    none.note = fmt::format(
        "steps not searched when the run ended: {} GPU records, more than {}: {}; prof-analyze "
        "steps finds them",
        records, kMaxStoredStepRecords, r.note);
    return {none, {}, none.note};
  }
  db::StoredStepDetection d;
  d.method = step_method_name(r.method);
  d.pattern = r.pattern;
  d.note = r.note;
  d.confidence = r.confidence;
  d.period = r.period;
  d.steady_first = r.steady_first;
  d.median_step = r.median_step;
  d.captured_ns = r.captured_ns;
  d.steady_ns = r.steady_ns;
  d.median_ns = r.distribution.median_ns;
  d.p10_ns = r.distribution.p10_ns;
  d.p25_ns = r.distribution.p25_ns;
  d.p75_ns = r.distribution.p75_ns;
  d.p90_ns = r.distribution.p90_ns;
  d.max_ns = r.distribution.max_ns;
  std::map<int, const StepOutlier*> outliers;
  for (const auto& o : r.outliers) outliers[o.index] = &o;
  std::vector<db::StoredStep> rows;
  rows.reserve(r.steps.size());
  for (const Step& s : r.steps) {
    db::StoredStep row{s.index,
                       s.pid,
                       s.tid,
                       s.start_ns,
                       s.end_ns,
                       s.label,
                       s.gpu_busy_ns,
                       s.compute_ns,
                       s.non_compute_ns,
                       s.span_ns,
                       s.idle_ns,
                       s.host_wait_ns,
                       s.kernel_wait_ns,
                       s.other_wait_ns,
                       s.launches,
                       s.kernels,
                       s.copies,
                       s.memsets,
                       s.syncs,
                       s.allocations,
                       s.peak_memory_bytes,
                       s.top_kernel,
                       s.top_kernel_ns,
                       {},
                       {}};
    if (const auto o = outliers.find(s.index); o != outliers.end()) {
      row.outlier_reason = o->second->reason;
      row.outlier_differs = o->second->differs;
    }
    rows.push_back(std::move(row));
  }
  return {d, std::move(rows), ""};
}

}  // namespace

std::string store_steps(db::Reader& reader) {
  const StepsToStore s = steps_to_store(reader);
  db::write_steps(reader.connection(), s.detection, s.rows);
  return s.skipped;
}

PreparedSteps prepare_steps(const db::Reader& reader) {
  auto s = std::make_shared<const StepsToStore>(steps_to_store(reader));
  return [s](db::Reader& target) {
    db::write_steps(target.connection(), s->detection, s->rows);
    return s->skipped;
  };
}

std::optional<StepReport> stored_step_report(const db::Reader& reader) {
  const auto stored = db::read_stored_steps(reader);
  if (!stored) return std::nullopt;
  const db::StoredStepDetection& d = stored->detection;
  StepReport r;
  r.method = d.method == "range"      ? StepMethod::Range
             : d.method == "function" ? StepMethod::Function
                                      : StepMethod::Auto;
  r.pattern = d.pattern;
  r.confidence = d.confidence;
  r.period = static_cast<int>(d.period);
  r.note = d.note;
  r.skipped = d.method == "none";
  r.steady_first = static_cast<int>(d.steady_first);
  r.median_step = static_cast<int>(d.median_step);
  r.distribution = {d.median_ns, d.p10_ns, d.p25_ns, d.p75_ns, d.p90_ns, d.max_ns};
  r.captured_ns = d.captured_ns;
  r.steady_ns = d.steady_ns;
  for (const db::StoredStep& s : stored->steps) {
    Step step;
    step.index = static_cast<int>(s.index);
    step.pid = s.pid;
    step.tid = s.tid;
    step.start_ns = s.start_ns;
    step.end_ns = s.end_ns;
    step.label = s.label;
    step.gpu_busy_ns = s.gpu_busy_ns;
    step.compute_ns = s.compute_ns;
    step.non_compute_ns = s.non_compute_ns;
    step.span_ns = s.span_ns;
    step.idle_ns = s.idle_ns;
    step.host_wait_ns = s.host_wait_ns;
    step.kernel_wait_ns = s.kernel_wait_ns;
    step.other_wait_ns = s.other_wait_ns;
    step.launches = s.launches;
    step.kernels = s.kernels;
    step.copies = s.copies;
    step.memsets = s.memsets;
    step.syncs = s.syncs;
    step.allocations = s.allocations;
    step.peak_memory_bytes = s.peak_memory_bytes;
    step.top_kernel = s.top_kernel;
    step.top_kernel_ns = s.top_kernel_ns;
    if (s.outlier_reason) {
      r.outliers.push_back({step.index, *s.outlier_reason, s.outlier_differs.value_or("")});
    }
    r.steps.push_back(std::move(step));
  }
  r.step_count = static_cast<int>(r.steps.size());
  return r;
}

}  // namespace fuselens::analyzer
