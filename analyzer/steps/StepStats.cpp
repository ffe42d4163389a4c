// Per-step statistics (HTA's temporal and idle breakdowns on the work launched in each step), the
// steady window, the distribution of step times and the outlier steps.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <memory>
#include <tuple>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Records.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "steps/Steps.h"
#include "steps/StepsData.h"
#include "window/Window.h"

namespace fuselens::analyzer {

namespace steps_detail {

std::vector<Launch> read_launches(const db::Reader& reader) {
  db::StringCache strings(reader);
  std::vector<Launch> launches;
  std::map<std::int64_t, std::shared_ptr<const std::string>> names;  // by name id; < 0: copies
  auto calls = db::api_calls_by_correlation(reader);
  std::optional<db::ApiCallRow> call = calls.next();
  db::gpu_records_by_correlation(reader, db::NameKind::Demangled)
      .for_each([&](const db::GpuRecordRow& row) {
        const auto key = std::pair(row.pid, row.correlation_id);
        while (call && std::pair(call->pid, call->correlation_id) < key) call = calls.next();
        if (!call || std::pair(call->pid, call->correlation_id) != key) return;  // no launch call
        Launch launch;
        launch.pid = row.pid;
        launch.tid = call->tid;
        launch.correlation_id = row.correlation_id;
        launch.call_start_ns = call->start_ns;  // the earliest call of the id: the outermost
        launch.call_end_ns = call->end_ns;
        launch.table = row.table;
        launch.start_ns = row.start_ns;
        launch.end_ns = row.end_ns;
        launch.device_id = row.device_id;
        launch.stream_id = row.stream_id;
        const std::int64_t key_id = row.table == db::GpuTable::Kernel   ? row.name_id
                                    : row.table == db::GpuTable::Memcpy ? -1
                                                                        : -2;
        auto& name = names[key_id];
        if (!name) {
          name = std::make_shared<const std::string>(key_id >= 0    ? strings.get(key_id)
                                                     : key_id == -1 ? "[CUDA memcpy]"
                                                                    : "[CUDA memset]");
        }
        launch.name = name;
        launches.push_back(std::move(launch));
      });
  std::stable_sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) {
    return std::tuple(a.call_start_ns, a.pid, a.correlation_id) <
           std::tuple(b.call_start_ns, b.pid, b.correlation_id);
  });
  return launches;
}

namespace {

/// Total length of the union of `intervals` (sorted here).
std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  // In launch order the intervals are mostly sorted already.
  if (!std::is_sorted(intervals.begin(), intervals.end()))
    std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0, open = 0, close = 0;
  bool any = false;
  for (const auto& [s, e] : intervals) {
    if (!any || s > close) {
      if (any) total += close - open;
      open = s;
      close = e;
      any = true;
    } else {
      close = std::max(close, e);
    }
  }
  if (any) total += close - open;
  return total;
}

}  // namespace

StepContext::StepContext(const db::Reader& reader) {
  db::syncs(reader).for_each(
      [&](const db::SyncRow& row) { syncs_by_pid_[row.pid].push_back(row.start_ns); });
  for (auto& [pid, starts] : syncs_by_pid_) std::sort(starts.begin(), starts.end());
  db::device_memory_events(reader, db::MemoryOrder::ByProcessDevice)
      .for_each([&](const db::MemoryEventRow& row) {
        const bool allocation =
            row.operation == static_cast<std::int64_t>(db::MemoryOperation::Allocation);
        memory_by_pid_[row.pid].push_back(
            {row.timestamp_ns, allocation ? row.bytes : -row.bytes, allocation});
      });
  for (auto& [pid, events] : memory_by_pid_) {
    std::stable_sort(events.begin(), events.end(),
                     [](const MemoryStep& a, const MemoryStep& b) { return a.t < b.t; });
    std::int64_t level = 0;
    for (auto& e : events) e.level = level += e.level;
  }
}

void StepContext::fill(Step& step, std::vector<StepLaunch>& work, std::int64_t delay_ns) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> all, kernels;
  all.reserve(work.size());
  // By name pointer while counting (one pointer per name id), by name text after.
  std::map<const std::string*, std::pair<std::int64_t, std::int64_t>> by_name;  // time, count
  for (const StepLaunch& launch : work) {
    ++step.launches;
    all.emplace_back(launch.start_ns, launch.end_ns);
    if (launch.table == db::GpuTable::Kernel) {
      ++step.kernels;
      kernels.emplace_back(launch.start_ns, launch.end_ns);
      auto& [ns, count] = by_name[launch.name];
      ns += launch.end_ns - launch.start_ns;
      ++count;
    } else if (launch.table == db::GpuTable::Memcpy) {
      ++step.copies;
    } else {
      ++step.memsets;
    }
  }
  step.gpu_busy_ns = union_length(std::move(all));
  step.compute_ns = union_length(std::move(kernels));
  step.non_compute_ns = step.gpu_busy_ns - step.compute_ns;
  std::map<std::string, std::int64_t> kernel_time;
  for (const auto& [name, totals] : by_name) {
    const std::string& text = name != nullptr ? *name : std::string();
    kernel_time[text] += totals.first;
    step.kernel_counts[text] += totals.second;
  }
  std::int64_t first = step.start_ns, last = step.end_ns;
  for (const StepLaunch& launch : work) {
    first = std::min(first, launch.start_ns);
    last = std::max(last, launch.end_ns);
  }
  step.span_ns = last - first;
  step.idle_ns = step.span_ns - step.gpu_busy_ns;
  for (const auto& [name, ns] : kernel_time) {
    if (ns > step.top_kernel_ns) {
      step.top_kernel_ns = ns;
      step.top_kernel = name;
    }
  }
  // HTA's idle breakdown of the gaps between consecutive operations of each stream.
  std::sort(work.begin(), work.end(), [](const StepLaunch& a, const StepLaunch& b) {
    return std::tuple(a.device_id, a.stream_id, a.start_ns, a.end_ns, a.call_start_ns) <
           std::tuple(b.device_id, b.stream_id, b.start_ns, b.end_ns, b.call_start_ns);
  });
  for (std::size_t i = 0; i < work.size();) {
    std::int64_t last_end = work[i].end_ns;
    std::size_t j = i + 1;
    for (; j < work.size() && work[j].device_id == work[i].device_id &&
           work[j].stream_id == work[i].stream_id;
         ++j) {
      const std::int64_t gap = work[j].start_ns - last_end;
      if (gap > 0) {
        if (gap <= delay_ns) {
          step.kernel_wait_ns += gap;
        } else if (work[j].call_start_ns >= last_end) {
          step.host_wait_ns += gap;
        } else {
          step.other_wait_ns += gap;
        }
      }
      last_end = std::max(last_end, work[j].end_ns);
    }
    i = j;
  }
  if (auto syncs = syncs_by_pid_.find(step.pid); syncs != syncs_by_pid_.end()) {
    const auto& starts = syncs->second;
    step.syncs = std::lower_bound(starts.begin(), starts.end(), step.end_ns) -
                 std::lower_bound(starts.begin(), starts.end(), step.start_ns);
  }
  if (auto memory = memory_by_pid_.find(step.pid); memory != memory_by_pid_.end()) {
    const auto& events = memory->second;
    auto it = std::lower_bound(events.begin(), events.end(), step.start_ns,
                               [](const MemoryStep& e, std::int64_t t) { return e.t < t; });
    step.peak_memory_bytes = it == events.begin() ? 0 : std::prev(it)->level;
    for (; it != events.end() && it->t < step.end_ns; ++it) {
      step.peak_memory_bytes = std::max(step.peak_memory_bytes, it->level);
      step.allocations += it->allocation ? 1 : 0;
    }
  }
}

namespace {

/// Quantile `q` of sorted `v` with linear interpolation.
double quantile(const std::vector<std::int64_t>& v, double q) {
  if (v.empty()) return 0;
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return static_cast<double>(v[lo]) +
         (at - static_cast<double>(lo)) * static_cast<double>(v[hi] - v[lo]);
}

std::string signed_count(std::int64_t delta, const std::string& what) {
  return (delta > 0 ? "+" : "") + std::to_string(delta) + " " + what;
}

/// What differs in `step` from `median`: launches, copies, memsets, syncs and kernels by name.
std::string differences(const Step& step, const Step& median) {
  std::vector<std::string> parts;
  if (step.copies != median.copies)
    parts.push_back(signed_count(step.copies - median.copies, "copies"));
  if (step.memsets != median.memsets)
    parts.push_back(signed_count(step.memsets - median.memsets, "memsets"));
  if (step.syncs != median.syncs) parts.push_back(signed_count(step.syncs - median.syncs, "syncs"));
  if (step.allocations != median.allocations) {
    parts.push_back(signed_count(step.allocations - median.allocations, "allocations"));
  }
  std::vector<std::string> kernels;
  std::map<std::string, std::int64_t> delta;
  for (const auto& [name, count] : step.kernel_counts) delta[name] += count;
  for (const auto& [name, count] : median.kernel_counts) delta[name] -= count;
  for (const auto& [name, d] : delta) {
    if (d != 0) kernels.push_back((d > 0 ? "+" : "") + std::to_string(d) + " " + name);
  }
  if (!kernels.empty()) {
    std::string list = "kernels (";
    for (std::size_t i = 0; i < kernels.size() && i < 5; ++i) list += (i ? ", " : "") + kernels[i];
    if (kernels.size() > 5) list += ", ...";
    parts.push_back(list + ")");
  }
  if (parts.empty()) return "same work as the median step (time differs only)";
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

}  // namespace

void fill_steps(const StepContext& context, const std::vector<Launch>& launches,
                std::int64_t delay_ns, std::vector<Step>& steps) {
  // The work of a step: what any thread of its process launched inside its window (PyTorch's
  // autograd engine launches the backward pass from its own thread).
  std::map<std::int64_t, std::vector<const Launch*>> by_process;
  for (const auto& launch : launches) by_process[launch.pid].push_back(&launch);
  std::vector<StepLaunch> work;
  for (Step& step : steps) {
    work.clear();
    if (auto it = by_process.find(step.pid); it != by_process.end()) {
      auto from =
          std::lower_bound(it->second.begin(), it->second.end(), step.start_ns,
                           [](const Launch* l, std::int64_t t) { return l->call_start_ns < t; });
      for (; from != it->second.end() && (*from)->call_start_ns < step.end_ns; ++from) {
        const Launch& l = **from;
        work.push_back({l.start_ns, l.end_ns, l.call_start_ns, l.device_id, l.stream_id,
                        l.name.get(), l.table});
      }
    }
    context.fill(step, work, delay_ns);
  }
}

void summarize_steps(const db::Reader& reader, StepReport& report) {
  const auto [first, last] = capture_extent(reader);  // first to last recorded activity
  report.captured_ns = last - first;
  if (report.steps.empty()) return;

  std::vector<std::int64_t> walls;
  for (const Step& step : report.steps) walls.push_back(step.wall_ns());
  const std::size_t steady = steady_start(walls);
  report.steady_first = static_cast<int>(steady) + 1;
  std::vector<std::int64_t> sorted(walls.begin() + static_cast<std::ptrdiff_t>(steady),
                                   walls.end());
  for (auto w : sorted) report.steady_ns += w;
  std::sort(sorted.begin(), sorted.end());
  StepDistribution& d = report.distribution;
  d.median_ns = quantile(sorted, 0.5);
  d.p10_ns = quantile(sorted, 0.1);
  d.p25_ns = quantile(sorted, 0.25);
  d.p75_ns = quantile(sorted, 0.75);
  d.p90_ns = quantile(sorted, 0.9);
  d.max_ns = static_cast<double>(sorted.back());
  const Step* median = nullptr;
  for (std::size_t i = steady; i < report.steps.size(); ++i) {
    const Step& step = report.steps[i];
    if (median == nullptr || std::abs(static_cast<double>(step.wall_ns()) - d.median_ns) <
                                 std::abs(static_cast<double>(median->wall_ns()) - d.median_ns)) {
      median = &step;
    }
  }
  report.median_step = median->index;
  // Outliers among the steady steps: above the upper Tukey fence (Q3 + 1.5 IQR) and 1.2x the
  // median.
  const double fence = std::max(d.p75_ns + 1.5 * (d.p75_ns - d.p25_ns), 1.2 * d.median_ns);
  for (std::size_t i = steady; i < report.steps.size(); ++i) {
    const Step& step = report.steps[i];
    if (static_cast<double>(step.wall_ns()) <= fence) continue;
    char reason[96];
    std::snprintf(reason, sizeof reason, "wall %.3f ms = %.2fx the median",
                  static_cast<double>(step.wall_ns()) / 1e6,
                  static_cast<double>(step.wall_ns()) / d.median_ns);
    report.outliers.push_back({step.index, reason, differences(step, *median)});
  }
}

}  // namespace steps_detail

std::size_t steady_start(const std::vector<std::int64_t>& walls) {
  constexpr double kSteadyTolerance = 0.20;
  const std::size_t n = walls.size();
  if (n < 3) return 0;
  auto median_of = [&](std::size_t from, std::size_t to) {  // [from, to)
    std::vector<std::int64_t> v(walls.begin() + static_cast<std::ptrdiff_t>(from),
                                walls.begin() + static_cast<std::ptrdiff_t>(to));
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 == 1 ? static_cast<double>(v[m])
                             : (static_cast<double>(v[m - 1]) + static_cast<double>(v[m])) / 2;
  };
  const double reference = median_of(1, n);  // every step but the first
  const std::size_t window = std::min<std::size_t>(5, n - 1);
  auto settled = [&](std::size_t j) {
    const double m = median_of(j, std::min(n, j + window));
    return std::abs(m - reference) <= kSteadyTolerance * reference;
  };
  // The first step from which every later window (as long as a full one fits) is settled.
  std::size_t start = n;
  const std::size_t last_window = n >= window ? n - window : 0;
  for (std::size_t j = last_window + 1; j-- > 0;) {
    if (!settled(j)) break;
    start = j;
  }
  if (start == n) return 1;  // never settled: skip the first step only
  start = std::max<std::size_t>(start, 1);
  // The window's median hides up to two slow steps: the steady window also starts at a step
  // whose own time is within the tolerance.
  while (start + 1 < n &&
         std::abs(static_cast<double>(walls[start]) - reference) > kSteadyTolerance * reference) {
    ++start;
  }
  return start;
}

}  // namespace fuselens::analyzer
