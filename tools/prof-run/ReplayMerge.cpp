#include "ReplayMerge.h"

#include <algorithm>
#include <map>
#include <vector>

#include "fuselens/db/Reader.h"
#include "fuselens/db/ReplayStore.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::collector {
namespace {

using Process = db::ProfiledProcess;

/// Why the two captures' launches do not pair up, or empty.
std::string mismatch(const std::vector<Process>& base, const std::vector<Process>& run, int run_number) {
  const std::string prefix = "application replay run " + std::to_string(run_number) + ": ";
  if (base.size() != run.size()) {
    return prefix + std::to_string(run.size()) + " processes launched kernels, run 1 had " +
           std::to_string(base.size()) + "; its counters were not merged";
  }
  for (std::size_t p = 0; p < base.size(); ++p) {
    const auto& a = base[p].launches;
    const auto& b = run[p].launches;
    if (a.size() != b.size()) {
      return prefix + "process " + std::to_string(p + 1) + " made " + std::to_string(b.size()) +
             " profiled launches, run 1 made " + std::to_string(a.size()) +
             " (the program must launch the same kernels in every run); its counters were not merged";
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].mangled_name != b[i].mangled_name) {
        return prefix + "launch " + std::to_string(i + 1) + " of process " + std::to_string(p + 1) +
               " is " + b[i].mangled_name + ", run 1 launched " + a[i].mangled_name +
               "; its counters were not merged";
      }
    }
  }
  return {};
}

}  // namespace

ReplayMergeResult merge_replay_run(const std::string& capture, const std::string& run_capture, int run) {
  ReplayMergeResult result;
  std::vector<Process> base, other;
  std::vector<db::MetricSessionRecord> sessions, run_sessions;
  std::vector<db::KernelMetricRecord> merged;
  {
    const db::Reader base_reader(capture);
    const db::Reader run_reader(run_capture);
    base = db::read_profiled_launches(base_reader);
    other = db::read_profiled_launches(run_reader);
    sessions = db::read_metric_sessions(base_reader);
    run_sessions = db::read_metric_sessions(run_reader);
    result.error = mismatch(base, other, run);
    if (result.error.empty()) {
      db::LaunchCounters counters(run_reader);  // prepared once for every launch
      for (std::size_t p = 0; p < base.size(); ++p) {
        for (std::size_t i = 0; i < base[p].launches.size(); ++i) {
          merged.push_back({base[p].pid, base[p].launches[i].correlation_id,
                            counters.of(other[p].pid, other[p].launches[i].correlation_id)});
        }
      }
    }
  }
  db::RooflineWriter writer(capture);
  writer.write_kernel_metrics(merged);
  result.launches = static_cast<std::int64_t>(merged.size());
  // Sessions pair up like processes: by the order of the processes' first launches.
  std::map<std::uint32_t, std::uint32_t> run_pid_of;
  if (result.error.empty()) {
    for (std::size_t p = 0; p < base.size(); ++p) run_pid_of[base[p].pid] = other[p].pid;
  }
  for (auto& s : sessions) {
    if (s.status != "ok") continue;
    if (!result.error.empty()) {
      s.status = result.error;
    } else {
      const auto it = run_pid_of.find(s.pid);
      const db::MetricSessionRecord* r = nullptr;
      for (const auto& candidate : run_sessions) {
        if (it != run_pid_of.end() && candidate.pid == it->second && candidate.device_id == s.device_id) {
          r = &candidate;
        }
      }
      if (!r) {
        s.status = "application replay run " + std::to_string(run) + ": no counters on this device";
      } else if (r->status != "ok") {
        s.status = "application replay run " + std::to_string(run) + ": " + r->status;
      } else {
        for (const auto& m : r->metrics) {
          if (std::find(s.metrics.begin(), s.metrics.end(), m) == s.metrics.end()) s.metrics.push_back(m);
        }
        s.ranges = std::min(s.ranges, r->ranges);
        s.unattributed_ranges += r->unattributed_ranges;
      }
    }
    writer.write_metric_session(s);
  }
  return result;
}

}  // namespace fuselens::collector
