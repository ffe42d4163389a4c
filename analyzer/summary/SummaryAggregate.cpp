#include "summary/SummaryAggregate.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "summary/SummaryRows.h"

namespace fuselens::analyzer {
namespace {

using db::saturating_add;

// count, total, min, max of `add` merged into `into` (a first row sets min and max).
void merge_stats(DurationStats& into, std::int64_t count, std::int64_t total, std::int64_t min,
                 std::int64_t max) {
  if (count <= 0) return;
  if (into.count == 0) {
    into.min_ns = min;
    into.max_ns = max;
  } else {
    into.min_ns = std::min(into.min_ns, min);
    into.max_ns = std::max(into.max_ns, max);
  }
  into.count = saturating_add(into.count, count);
  into.total_ns = saturating_add(into.total_ns, total);
}

void finish_average(DurationStats& s) {
  s.avg_ns = s.count > 0 ? static_cast<double>(s.total_ns) / static_cast<double>(s.count) : 0;
  s.stddev_ns = 0;  // not kept in aggregate mode
}

}  // namespace

void apply_aggregates(Summary& summary, const db::AggregateSet& set, NameKind names) {
  summary.from_aggregate_mode = true;
  summary.sketch_alpha =
      set.processes.empty() ? db::DDSketch::kDefaultAlpha : set.processes.front().sketch_alpha;
  summary.traced_records = 0;
  for (const auto& p : set.processes)
    summary.traced_records = saturating_add(summary.traced_records, p.traced);

  struct KernelGroup {
    DurationStats stats;
    db::DDSketch sketch;
  };
  std::map<std::string, KernelGroup> kernels;
  for (const auto& k : set.kernels) {
    const std::string& name = names == NameKind::Short     ? k.short_name
                              : names == NameKind::Mangled ? k.mangled_name
                                                           : k.demangled_name;
    auto [it, fresh] =
        kernels.try_emplace(name, KernelGroup{{}, db::DDSketch(summary.sketch_alpha)});
    (void)fresh;
    merge_stats(it->second.stats, k.gpu.count, k.gpu.total, k.gpu.min, k.gpu.max);
    if (k.gpu.sketch.alpha() == it->second.sketch.alpha()) it->second.sketch.merge(k.gpu.sketch);
  }
  summary.kernels.clear();
  for (auto& [name, g] : kernels) {
    KernelRow row;
    row.name = name;
    row.stats = g.stats;
    finish_average(row.stats);
    row.stats.median_ns = g.sketch.quantile(0.5);
    summary.kernels.push_back(std::move(row));
  }
  finish_rows(summary.kernels);

  std::map<std::string, MemoryOperationRow> transfers;
  for (const auto& t : set.transfers) {
    const std::string name = t.operation == db::TransferOperation::Memset
                                 ? std::string("[CUDA memset]")
                                 : std::string("[CUDA memcpy ") + db::to_string(t.copy_kind) + "]";
    auto& row = transfers[name];
    row.name = name;
    merge_stats(row.stats, t.count, t.total_ns, t.min_ns, t.max_ns);
    row.total_bytes = saturating_add(row.total_bytes, t.bytes);
    row.size_stats.count = saturating_add(row.size_stats.count, t.count);
    row.size_stats.total_ns = row.total_bytes;
  }
  summary.memory_operations.clear();
  for (auto& [name, row] : transfers) {
    finish_average(row.stats);
    row.stats.median_ns = 0;  // no sketch of copies
    finish_average(row.size_stats);
    row.throughput_gb_per_s = row.stats.total_ns > 0 ? static_cast<double>(row.total_bytes) /
                                                           static_cast<double>(row.stats.total_ns)
                                                     : 0;
    summary.memory_operations.push_back(std::move(row));
  }
  finish_rows(summary.memory_operations);

  std::map<std::uint32_t, DeviceMemoryRow> devices;
  for (const auto& m : set.memory) {
    auto& row = devices[m.device_id];
    row.device_id = m.device_id;
    row.allocations = saturating_add(row.allocations, m.allocations);
    row.releases = saturating_add(row.releases, m.releases);
    row.peak_bytes = saturating_add(row.peak_bytes, m.peak_bytes);
    row.bytes_at_end = saturating_add(row.bytes_at_end, m.final_bytes);
  }
  summary.device_memory.clear();
  for (auto& [id, row] : devices) {
    for (const auto& d : summary.devices) {
      if (d.id == id) row.device_name = d.name;
    }
    summary.device_memory.push_back(std::move(row));
  }
}

}  // namespace fuselens::analyzer
