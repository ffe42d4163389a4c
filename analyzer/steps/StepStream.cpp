// stream_steps: the per-step statistics from the launches streamed in correlation order, holding
// only the launches of the steps still open (issue 21: ten million launches in bounded memory).

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Strings.h"
#include "steps/StepsData.h"

namespace fuselens::analyzer::steps_detail {

namespace {

/// The steps of one process: in start order with the running maximum of their ends (to find the
/// steps whose window holds a time), and in end order (to fill them as the call starts pass).
struct ProcessSteps {
  std::vector<std::size_t> by_start;
  std::vector<std::int64_t> max_end;  // max_end[j]: the latest end of by_start[0..j]
  std::vector<std::size_t> by_end;
  std::size_t filled = 0;  // by_end[0, filled) are filled
  std::int64_t watermark = std::numeric_limits<std::int64_t>::min();  // latest call start seen
};

}  // namespace

bool stream_steps(const db::Reader& reader, const StepContext& context, std::int64_t delay_ns,
                  std::vector<Step>& steps) {
  std::map<std::int64_t, ProcessSteps> processes;
  for (std::size_t i = 0; i < steps.size(); ++i) processes[steps[i].pid].by_start.push_back(i);
  for (auto& [pid, p] : processes) {
    std::stable_sort(p.by_start.begin(), p.by_start.end(), [&](std::size_t a, std::size_t b) {
      return steps[a].start_ns < steps[b].start_ns;
    });
    std::int64_t latest = std::numeric_limits<std::int64_t>::min();
    for (const std::size_t i : p.by_start)
      p.max_end.push_back(latest = std::max(latest, steps[i].end_ns));
    p.by_end = p.by_start;
    std::stable_sort(p.by_end.begin(), p.by_end.end(), [&](std::size_t a, std::size_t b) {
      return steps[a].end_ns < steps[b].end_ns;
    });
  }
  std::vector<std::vector<StepLaunch>> open(steps.size());
  std::vector<bool> filled(steps.size(), false);
  const auto fill_until = [&](ProcessSteps& p, std::int64_t t) {
    for (; p.filled < p.by_end.size() && steps[p.by_end[p.filled]].end_ns <= t; ++p.filled) {
      const std::size_t i = p.by_end[p.filled];
      context.fill(steps[i], open[i], delay_ns);
      std::vector<StepLaunch>().swap(open[i]);
      filled[i] = true;
    }
  };
  constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();

  db::StringCache names(reader);
  db::LaunchCalls calls(reader);  // the launch call of each id: the earliest (the outermost)
  auto rows = db::gpu_spans_by_correlation(reader, db::NameKind::Demangled);
  ProcessSteps* process = nullptr;
  std::optional<std::int64_t> process_pid;
  while (const auto row = rows.next()) {
    const auto call = calls.find(row->pid, row->correlation_id);
    if (!call) continue;            // no launch call
    if (process_pid != row->pid) {  // launches come process by process
      if (process != nullptr) fill_until(*process, kEnd);
      process_pid = row->pid;
      const auto it = processes.find(row->pid);
      process = it == processes.end() ? nullptr : &it->second;
    }
    if (process == nullptr) continue;
    ProcessSteps& p = *process;
    const std::int64_t t = call->start_ns;
    // The steps whose window [start, end) holds t: among those starting at or before t, back
    // while an earlier one may still reach past t.
    const auto after =
        std::upper_bound(p.by_start.begin(), p.by_start.end(), t,
                         [&](std::int64_t v, std::size_t i) { return v < steps[i].start_ns; });
    for (auto j = static_cast<std::size_t>(after - p.by_start.begin());
         j-- > 0 && p.max_end[j] > t;) {
      const std::size_t i = p.by_start[j];
      if (steps[i].end_ns <= t) continue;
      if (filled[i]) return false;  // out of call order: this step was filled without it
      open[i].push_back({row->start_ns, row->end_ns, t, row->device_id, row->stream_id,
                         row->table == db::GpuTable::Kernel ? &names.get(row->name_id) : nullptr,
                         row->table});
    }
    if (t > p.watermark) {
      p.watermark = t;
      fill_until(p, t);
    }
  }
  for (auto& [pid, p] : processes) fill_until(p, kEnd);
  return true;
}

}  // namespace fuselens::analyzer::steps_detail
