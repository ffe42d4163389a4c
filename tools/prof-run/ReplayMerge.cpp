#include "ReplayMerge.h"

#include <algorithm>
#include <map>
#include <vector>

#include "fuselens/db/Reader.h"
#include "fuselens/db/RooflineStore.h"

namespace fuselens::collector {
namespace {

struct Launch {
  std::uint32_t correlation_id = 0;
  std::string name;
};

struct Process {
  std::uint32_t pid = 0;
  std::vector<Launch> launches;  // correlation id order
};

/// The profiled launches of `reader`'s capture, per process in the order of its first launch.
std::vector<Process> profiled_launches(const db::Reader& reader) {
  std::vector<Process> out;
  std::map<std::uint32_t, std::size_t> index;
  auto order = reader.prepare("SELECT pid FROM kernel GROUP BY pid ORDER BY min(start_ns), pid");
  while (order.step()) {
    const auto pid = static_cast<std::uint32_t>(order.int64(0));
    index[pid] = out.size();
    out.push_back({pid, {}});
  }
  auto rows = reader.prepare(
      "SELECT k.pid, k.correlation_id, s.value FROM kernel k JOIN strings s ON s.id = k.mangled_name_id"
      " WHERE EXISTS (SELECT 1 FROM kernel_metric m WHERE m.pid = k.pid AND m.correlation_id = k.correlation_id)"
      " ORDER BY k.pid, k.correlation_id");
  while (rows.step()) {
    const auto pid = static_cast<std::uint32_t>(rows.int64(0));
    out[index.at(pid)].launches.push_back({static_cast<std::uint32_t>(rows.int64(1)), rows.text(2)});
  }
  return out;
}

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
      if (a[i].name != b[i].name) {
        return prefix + "launch " + std::to_string(i + 1) + " of process " + std::to_string(p + 1) +
               " is " + b[i].name + ", run 1 launched " + a[i].name + "; its counters were not merged";
      }
    }
  }
  return {};
}

/// The run's counters of one launch; `s` is the prepared kernel_metric query (counter_query()),
/// reset here for each launch.
std::vector<std::pair<std::string, double>> counters_of(db::Statement& s, std::uint32_t pid,
                                                        std::uint32_t correlation_id) {
  s.reset();
  s.bind(1, static_cast<std::int64_t>(pid));
  s.bind(2, static_cast<std::int64_t>(correlation_id));
  std::vector<std::pair<std::string, double>> out;
  while (s.step()) out.emplace_back(s.text(0), s.real(1));
  return out;
}

db::Statement counter_query(const db::Reader& reader) {
  return reader.prepare(
      "SELECT s.value, m.value FROM kernel_metric m JOIN strings s ON s.id = m.metric_id"
      " WHERE m.pid = ? AND m.correlation_id = ?");
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
    base = profiled_launches(base_reader);
    other = profiled_launches(run_reader);
    sessions = db::read_metric_sessions(base_reader);
    run_sessions = db::read_metric_sessions(run_reader);
    result.error = mismatch(base, other, run);
    if (result.error.empty()) {
      auto query = counter_query(run_reader);  // prepared once for every launch
      for (std::size_t p = 0; p < base.size(); ++p) {
        for (std::size_t i = 0; i < base[p].launches.size(); ++i) {
          merged.push_back({base[p].pid, base[p].launches[i].correlation_id,
                            counters_of(query, other[p].pid, other[p].launches[i].correlation_id)});
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
