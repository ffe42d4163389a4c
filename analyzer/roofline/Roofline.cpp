#include "roofline/Roofline.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"

namespace fuselens::analyzer {
namespace {

std::uint64_t launch_key(std::int64_t pid, std::int64_t correlation_id) {
  return static_cast<std::uint64_t>(pid) << 32 |
         (static_cast<std::uint64_t>(correlation_id) & 0xFFFFFFFFU);
}

/// b - a, figure by figure (prefix-sum differences).
Work difference(const Work& b, const Work& a) {
  Work out;
  for (std::size_t i = 0; i < kPrecisions; ++i) out.flops[i] = b.flops[i] - a.flops[i];
  for (std::size_t i = 0; i < kMemoryLevels; ++i) {
    if (b.bytes[i]) out.bytes[i] = *b.bytes[i] - a.bytes[i].value_or(0);
  }
  return out;
}

struct Launch {
  std::int64_t name_id = 0;
  std::int64_t duration_ns = 0;
  std::optional<Work> counters;
  double counter_time_ns = 0;
};

/// Sums over launches sorted by (pid, tid, call start), so a range costs two binary searches.
struct LaunchSums {
  std::int64_t kernels = 0, with_counters = 0;
  double gpu_ns = 0, counter_ns = 0;
  Work counters;
};

LaunchSums operator-(const LaunchSums& b, const LaunchSums& a) {
  return {b.kernels - a.kernels, b.with_counters - a.with_counters, b.gpu_ns - a.gpu_ns,
          b.counter_ns - a.counter_ns, difference(b.counters, a.counters)};
}

using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // pid, tid, time

template <typename Sum>
class PrefixIndex {
 public:
  void add(Key key, const Sum& value) { items_.emplace_back(key, value); }
  void build(const std::function<void(Sum&, const Sum&)>& accumulate) {
    std::sort(items_.begin(), items_.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    keys_.reserve(items_.size());
    prefix_.assign(1, Sum{});
    for (const auto& [key, value] : items_) {
      keys_.push_back(key);
      Sum next = prefix_.back();
      accumulate(next, value);
      prefix_.push_back(std::move(next));
    }
    items_.clear();
  }
  /// Sums of the items keyed (pid, tid, t) with start <= t <= end; pair(first, last) prefix.
  std::pair<const Sum*, const Sum*> inside(std::int64_t pid, std::int64_t tid, std::int64_t start,
                                           std::int64_t end) const {
    const auto lo = std::lower_bound(keys_.begin(), keys_.end(), Key{pid, tid, start});
    const auto hi = std::upper_bound(lo, keys_.end(), Key{pid, tid, end});
    return {&prefix_[static_cast<std::size_t>(lo - keys_.begin())],
            &prefix_[static_cast<std::size_t>(hi - keys_.begin())]};
  }
  bool empty() const { return keys_.empty(); }

 private:
  std::vector<std::pair<Key, Sum>> items_;
  std::vector<Key> keys_;
  std::vector<Sum> prefix_;
};

std::unordered_map<std::uint64_t, std::map<std::string, double>> read_counters(
    const db::Reader& reader) {
  std::unordered_map<std::uint64_t, std::map<std::string, double>> out;
  if (!reader.has_table("kernel_metric")) return out;
  auto counters = db::kernel_counters(reader);
  while (auto c = counters.next()) out[launch_key(c->pid, c->correlation_id)][c->metric] = c->value;
  return out;
}

RooflineEntry make_entry(WorkSource source, const Work& work, double time_ns,
                         const Ceilings& chosen, const std::optional<Ceilings>& own) {
  RooflineEntry e;
  e.source = source;
  e.work = work;
  e.result = evaluate(work, time_ns, chosen);
  if (own && own->id != chosen.id) {
    const RooflineResult at_own = evaluate(work, time_ns, *own);
    if (at_own.efficiency > 0 && e.result.floor_ns > 0) {
      e.projected_ns = e.result.floor_ns / at_own.efficiency;
    }
  }
  return e;
}

void compare(RooflineRow& row) {
  if (!row.counters || !row.annotation) return;
  const double counted = row.counters->work.total_flops();
  const double declared = row.annotation->work.total_flops();
  if (counted > 0) row.flops_difference = (declared - counted) / counted;
  const auto cb = row.counters->work.bytes_at(MemoryLevel::Dram);
  const auto db = row.annotation->work.bytes_at(MemoryLevel::Dram);
  if (cb && db && *cb > 0) row.dram_bytes_difference = (*db - *cb) / *cb;
}

void sort_rows(std::vector<RooflineRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const RooflineRow& a, const RooflineRow& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.name < b.name;
  });
}

void add_points(RooflineChart& chart, const std::vector<RooflineRow>& rows, bool is_range) {
  for (const auto& row : rows) {
    for (const auto* entry :
         {row.counters ? &*row.counters : nullptr, row.annotation ? &*row.annotation : nullptr}) {
      if (!entry) continue;
      const auto intensity = entry->result.intensity[static_cast<std::size_t>(MemoryLevel::Dram)];
      if (!intensity || entry->result.achieved_flops_per_s <= 0) continue;
      chart.points.push_back({row.name, is_range, entry->source, *intensity,
                              entry->result.achieved_flops_per_s, entry->result.efficiency});
    }
  }
}

}  // namespace

RooflineReport analyze_roofline(const db::Reader& reader, const RooflineOptions& options) {
  const auto& profiles = options.profiles ? *options.profiles : builtin_peaks();
  RooflineReport report;
  report.path = reader.path();
  report.devices = reader.devices();
  report.peaks = choose_peaks(options.peaks, reader, profiles);
  report.measured = db::read_ceilings(reader);
  report.metric_sessions = db::read_metric_sessions(reader);
  if (!report.devices.empty()) {
    const auto& d = report.devices.front();
    const PeakProfile* sheet = match_device(profiles, d.name, d.sm_count);
    report.device_ceilings = measured_ceilings(reader, d.id, sheet);
    if (!report.device_ceilings && sheet) report.device_ceilings = sheet->ceilings();
  }
  const Ceilings& chosen = report.peaks.ceilings;

  // Annotation marks.
  PrefixIndex<Work> by_mark;
  {
    auto marks = db::nvtx_marks_in_domain(reader, kAnnotationDomain);
    std::int64_t malformed = 0;
    while (auto s = marks.next()) {
      const auto work = parse_work_annotation(s->text);
      if (!work) {
        ++malformed;
        continue;
      }
      report.has_annotations = true;
      by_mark.add({s->pid, s->tid, s->start_ns}, *work);
    }
    by_mark.build([](Work& sum, const Work& w) { sum += w; });
    if (malformed > 0) {
      report.notes.push_back(std::to_string(malformed) + " mark(s) in NVTX domain '" +
                             kAnnotationDomain + "' are not work annotations and were ignored");
    }
  }

  // Kernels, their counters and their launching call; none read when no kernel has counters
  // and no work is annotated: no row could have a roofline point (ten million kernels read
  // into memory for nothing otherwise).
  auto counters = read_counters(reader);
  const bool any_work = !counters.empty() || report.has_annotations;
  std::unordered_map<std::uint64_t, Launch> launches;
  if (any_work) {
    auto kernels = db::kernel_durations(reader, options.kernel_names);
    while (auto k = kernels.next()) {
      Launch l;
      l.duration_ns = k->duration_ns;
      l.name_id = k->name_id;
      const auto key = launch_key(k->pid, k->correlation_id);
      if (auto it = counters.find(key); it != counters.end()) {
        l.counters = work_from_counters(it->second);
        if (auto d = it->second.find(db::metric::kDuration); d != it->second.end()) {
          l.counter_time_ns = d->second;
          // Under kernel replay CUPTI leaves the kernel record's timestamps at 0: the profiled
          // pass's own duration is the kernel's time.
          if (l.duration_ns <= 0) l.duration_ns = static_cast<std::int64_t>(d->second);
        }
      }
      launches.emplace(key, std::move(l));  // one kernel per correlation id
    }
  }
  report.has_counters = !counters.empty();

  // Kernel rows: kernels with counters, grouped by name.
  db::StringCache strings(reader);
  std::map<std::string, RooflineRow> kernel_rows;
  std::map<std::string, Work> kernel_work;
  for (const auto& [key, l] : launches) {
    if (!l.counters) continue;
    const std::string name = strings.get(l.name_id);
    RooflineRow& row = kernel_rows[name];
    row.name = name;
    ++row.instances;
    ++row.kernels;
    ++row.kernels_with_counters;
    row.gpu_time_ns += static_cast<double>(l.duration_ns);
    row.counter_time_ns += l.counter_time_ns;
    kernel_work[name] += *l.counters;
  }
  for (auto& [name, row] : kernel_rows) {
    row.counters = make_entry(WorkSource::Counters, kernel_work[name], row.gpu_time_ns, chosen,
                              report.device_ceilings);
    report.kernels.push_back(std::move(row));
  }
  sort_rows(report.kernels);

  // Launch index: (pid, 0, start of the earliest API call of the correlation id): the process
  // projection of NVTX ranges (CompareProjection.h); by_thread keeps the call's tid to count what
  // the thread projection would leave out.
  PrefixIndex<LaunchSums> by_launch;
  PrefixIndex<std::int64_t> by_thread;
  if (any_work) {
    std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> calls;  // tid, start
    auto rows = db::api_call_starts(reader);
    while (auto s = rows.next()) {
      const auto key = launch_key(s->pid, s->correlation_id);
      if (!launches.count(key)) continue;
      auto [it, inserted] = calls.emplace(key, std::make_pair(s->tid, s->start_ns));
      if (!inserted && s->start_ns < it->second.second) it->second = {s->tid, s->start_ns};
    }
    for (const auto& [key, call] : calls) {
      const Launch& l = launches.at(key);
      LaunchSums t;
      t.kernels = 1;
      t.gpu_ns = static_cast<double>(l.duration_ns);
      if (l.counters) {
        t.with_counters = 1;
        t.counters = *l.counters;
        t.counter_ns = l.counter_time_ns;
      }
      by_launch.add({static_cast<std::int64_t>(key >> 32), 0, call.second}, t);
      by_thread.add({static_cast<std::int64_t>(key >> 32), call.first, call.second}, 1);
    }
    by_thread.build([](std::int64_t& sum, const std::int64_t& n) { sum += n; });
    by_launch.build([](LaunchSums& sum, const LaunchSums& t) {
      sum.kernels += t.kernels;
      sum.with_counters += t.with_counters;
      sum.gpu_ns += t.gpu_ns;
      sum.counter_ns += t.counter_ns;
      sum.counters += t.counters;
    });
  }

  // Range rows.
  struct RangeSums {
    RooflineRow row;
    LaunchSums totals;
    Work declared;
    bool any_declared = false;
  };
  std::map<std::string, RangeSums> ranges;
  std::int64_t other_thread_kernels = 0;
  {
    auto rows = db::ended_nvtx_ranges_named(reader);
    while (auto s = rows.next()) {
      const std::string domain = s->domain;
      if (domain == kAnnotationDomain || db::is_fuselens_instrumentation(s->text)) continue;
      const std::string name = domain.empty() ? s->text : domain + ":" + s->text;
      RangeSums& r = ranges[name];
      r.row.name = name;
      ++r.row.instances;
      const std::int64_t pid = s->pid, tid = s->tid, start = s->start_ns, end = *s->end_ns;
      if (!by_launch.empty()) {
        const auto [a, b] = by_launch.inside(pid, 0, start, end);
        const LaunchSums t = *b - *a;
        const auto [ta, tb] = by_thread.inside(pid, tid, start, end);
        other_thread_kernels += std::max<std::int64_t>(0, t.kernels - (*tb - *ta));
        r.totals.kernels += t.kernels;
        r.totals.with_counters += t.with_counters;
        r.totals.gpu_ns += t.gpu_ns;
        r.totals.counter_ns += t.counter_ns;
        r.totals.counters += t.counters;
      }
      if (!by_mark.empty()) {
        const auto [a, b] = by_mark.inside(pid, tid, start, end);
        const Work w = difference(*b, *a);
        if (w.total_flops() > 0 || w.bytes_at(MemoryLevel::Dram).value_or(0) > 0) {
          r.declared += w;
          r.any_declared = true;
        }
      }
    }
  }
  if (other_thread_kernels > 0) {
    report.notes.push_back(
        "NVTX ranges are projected by process: their " + std::to_string(other_thread_kernels) +
        " kernel launch(es) from threads other than the range's own count (Nsight Systems' "
        "per-thread projection leaves them out)");
  }
  for (auto& [name, r] : ranges) {
    RooflineRow& row = r.row;
    row.kernels = r.totals.kernels;
    row.kernels_with_counters = r.totals.with_counters;
    row.gpu_time_ns = r.totals.gpu_ns;
    row.counter_time_ns = r.totals.counter_ns;
    if (row.kernels == 0) continue;  // nothing ran on the GPU inside: no roofline
    if (row.kernels_with_counters > 0) {
      row.counters = make_entry(WorkSource::Counters, r.totals.counters, row.gpu_time_ns, chosen,
                                report.device_ceilings);
    }
    if (r.any_declared) {
      row.annotation = make_entry(WorkSource::Annotation, r.declared, row.gpu_time_ns, chosen,
                                  report.device_ceilings);
    }
    if (!row.counters && !row.annotation) continue;
    compare(row);
    report.ranges.push_back(std::move(row));
  }
  sort_rows(report.ranges);

  // Chart and notes.
  for (std::size_t p = 0; p < kPrecisions; ++p) {
    if (chosen.flops_per_s[p]) {
      report.chart.compute.push_back(
          {to_string(static_cast<Precision>(p)), *chosen.flops_per_s[p]});
    }
  }
  for (std::size_t l = 0; l < kMemoryLevels; ++l) {
    if (chosen.bytes_per_s[l]) {
      report.chart.memory.push_back(
          {to_string(static_cast<MemoryLevel>(l)), *chosen.bytes_per_s[l]});
    }
  }
  add_points(report.chart, report.kernels, false);
  add_points(report.chart, report.ranges, true);
  for (const auto& session : report.metric_sessions) {
    if (session.status != "ok") {
      report.notes.push_back("counters requested (--metrics " + session.metric_set +
                             ") in process " + std::to_string(session.pid) +
                             " but not collected: " + session.status);
    }
  }
  if (!report.has_counters && report.metric_sessions.empty()) {
    report.notes.push_back(
        "no hardware counters in this capture: record them with prof-run --metrics roofline");
  }
  if (!report.has_annotations) {
    report.notes.push_back(
        "no work annotations in this capture: declare FLOPs and bytes of NVTX ranges with "
        "fuselens/annotate.h");
  }
  return report;
}

}  // namespace fuselens::analyzer
