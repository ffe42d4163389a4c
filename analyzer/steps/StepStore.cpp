// store_steps: the steps of a run stored in its capture when it ends (Steps.h, db/StepStore.h).

#include <fmt/format.h>

#include <set>

#include "fuselens/db/StepStore.h"
#include "steps/Steps.h"

namespace fuselens::analyzer {

std::string store_steps(db::Reader& reader) {
  const std::int64_t records = reader.gpu_record_count();
  if (records > kMaxStoredStepRecords) {
    return fmt::format(
        "{} GPU records, more than the {} the step search at the end of a run "
        "reads (prof-analyze steps finds them)",
        records, kMaxStoredStepRecords);
  }
  const StepReport report = analyze_steps(reader);
  db::StoredStepDetection detection{step_method_name(report.method),
                                    report.pattern,
                                    report.note,
                                    report.confidence,
                                    report.period,
                                    report.steady_first};
  std::set<int> outliers;
  for (const auto& o : report.outliers) outliers.insert(o.index);
  std::vector<db::StoredStep> rows;
  rows.reserve(report.steps.size());
  for (const Step& s : report.steps) {
    db::StoredStep r;
    r.index = s.index;
    r.pid = s.pid;
    r.tid = s.tid;
    r.start_ns = s.start_ns;
    r.end_ns = s.end_ns;
    r.label = s.label;
    r.gpu_busy_ns = s.gpu_busy_ns;
    r.compute_ns = s.compute_ns;
    r.idle_ns = s.idle_ns;
    r.launches = s.launches;
    r.kernels = s.kernels;
    r.copies = s.copies;
    r.syncs = s.syncs;
    r.peak_memory_bytes = s.peak_memory_bytes;
    r.steady = report.steady_first > 0 && s.index >= report.steady_first;
    r.outlier = outliers.count(s.index) > 0;
    rows.push_back(std::move(r));
  }
  db::write_steps(reader.connection(), detection, rows);
  return "";
}

}  // namespace fuselens::analyzer
