#include "summary/Summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "fuselens/db/ActivityCursors.h"
#include "fuselens/db/AggregateStore.h"
#include "fuselens/db/Instrumentation.h"
#include "fuselens/db/Saturating.h"
#include "fuselens/db/Strings.h"
#include "fuselens/db/TraceCursors.h"
#include "summary/SummaryAggregate.h"
#include "summary/SummaryRows.h"
#include "summary/SummaryStore.h"

namespace fuselens::analyzer {
namespace {

using StringTable = db::StringCache;

using db::saturating_add;

/// Named rows of per-id statistics (kernel names or API names), sorted by finish_rows.
template <typename Row>
std::vector<Row> named_rows(const StatsById& groups, StringTable& strings) {
  std::vector<Row> rows;
  rows.reserve(groups.size());
  for (const auto& [id, stats] : groups) {
    Row row;
    row.name = strings.get(id);
    row.stats = stats;
    rows.push_back(std::move(row));
  }
  finish_rows(rows);
  return rows;
}

/// Per-name statistics of kernels, from the stored aggregates when they hold them (demangled
/// and short names), else from the rows: (name id, duration) ordered by name id, one group of
/// durations in memory at a time. Finalized captures have a covering index for the order
/// (kernel_by_name, api_by_name: db::Writer::finalize), so SQLite streams the narrow index.
std::vector<KernelRow> kernel_rows(const db::Reader& reader, NameKind kind, StringTable& strings,
                                   const StoredAggregates* stored) {
  if (stored != nullptr && kind == NameKind::Demangled) {
    return named_rows<KernelRow>(stored->kernels_by_demangled_name, strings);
  }
  if (stored != nullptr && kind == NameKind::Short && stored->kernels_by_short_name) {
    return named_rows<KernelRow>(*stored->kernels_by_short_name, strings);
  }
  reader.check_table_timestamps("kernel");
  auto rows = db::kernel_durations_by_name(reader, kind, db::RowOrder::ById);
  return named_rows<KernelRow>(stats_by_id(rows), strings);
}

std::vector<ApiRow> api_rows(const db::Reader& reader, StringTable& strings,
                             const StoredAggregates* stored) {
  if (stored != nullptr) return named_rows<ApiRow>(stored->api_by_name, strings);
  reader.check_table_timestamps("api_call");
  auto rows = db::api_durations_by_name(reader);
  return named_rows<ApiRow>(stats_by_id(rows), strings);
}

std::vector<MemoryOperationRow> memory_operation_rows(const db::Reader& reader) {
  struct Group {
    std::vector<std::int64_t> durations;
    std::vector<std::int64_t> sizes;  // bytes of each operation
    std::int64_t bytes = 0;
  };
  std::map<std::string, Group> groups;
  auto copies = db::copy_durations(reader);
  // One name per kind; look names up once per distinct kind.
  std::unordered_map<std::int64_t, Group*> by_kind;
  while (auto copy = copies.next()) {
    const std::int64_t kind = copy->copy_kind;
    Group*& g = by_kind[kind];
    if (g == nullptr) {
      const auto name =
          std::string("[CUDA memcpy ") + db::to_string(static_cast<db::MemcpyKind>(kind)) + "]";
      g = &groups[name];
    }
    g->durations.push_back(copy->duration_ns);
    g->sizes.push_back(copy->bytes);
    g->bytes = saturating_add(g->bytes, copy->bytes);
  }
  auto sets = db::memset_durations(reader);
  while (auto set = sets.next()) {
    Group& g = groups["[CUDA memset]"];
    g.durations.push_back(set->duration_ns);
    g.sizes.push_back(set->bytes);
    g.bytes = saturating_add(g.bytes, set->bytes);
  }
  std::vector<MemoryOperationRow> rows;
  for (auto& [name, g] : groups) {
    MemoryOperationRow row;
    row.name = name;
    row.stats = compute_stats(std::move(g.durations));
    row.size_stats = compute_stats(std::move(g.sizes));
    row.total_bytes = g.bytes;
    row.throughput_gb_per_s = row.stats.total_ns > 0 ? static_cast<double>(g.bytes) /
                                                           static_cast<double>(row.stats.total_ns)
                                                     : 0.0;
    rows.push_back(std::move(row));
  }
  finish_rows(rows);
  return rows;
}

std::vector<NvtxRow> nvtx_rows(const db::Reader& reader, StringTable& strings,
                               const StoredAggregates* stored, NvtxProjection projection) {
  struct Group {
    std::vector<std::int64_t> durations;
    std::int64_t unterminated = 0, kernels = 0, gpu_ns = 0, thread_kernels = 0, process_kernels = 0;
  };
  std::map<std::string, Group> groups;
  std::map<std::pair<std::int64_t, std::int64_t>, Group*> by_ids;  // (domain_id, text_id)
  Group hidden;  // FuseLens's own ranges (Instrumentation.h): not shown
  // Projected GPU work of every ended range under both projections (what the thread one leaves
  // out is their difference): each stored, or computed in one pass over the launches.
  const bool stored_process = stored != nullptr && stored->nvtx_process.has_value();
  NvtxWorkBoth computed;
  if (stored == nullptr) {
    computed = project_nvtx_ranges_both(reader);  // one pass for both
  } else if (!stored_process) {
    computed.process = project_nvtx_ranges(reader, NvtxProjection::Process);
  }
  const auto& thread_work = stored != nullptr ? stored->nvtx_work : computed.thread;
  const auto& process_work = stored_process ? *stored->nvtx_process : computed.process;
  const auto& work = projection == NvtxProjection::Thread ? thread_work : process_work;
  auto ranges = db::nvtx_range_names(reader);
  while (auto r = ranges.next()) {
    Group*& g = by_ids[{r->domain_id, r->text_id}];
    if (g == nullptr) {
      const std::string domain = strings.get(r->domain_id);
      const std::string text = strings.get(r->text_id);
      g = db::is_fuselens_instrumentation(text)
              ? &hidden
              : &groups[domain.empty() ? text : domain + ":" + text];
    }
    if (!r->end_ns) {
      ++g->unterminated;
      continue;
    }
    g->durations.push_back(*r->end_ns - r->start_ns);
    if (const auto it = work.find(r->id); it != work.end()) {
      g->kernels += it->second.kernels;
      g->gpu_ns = saturating_add(g->gpu_ns, it->second.gpu_ns);
    }
    if (const auto it = thread_work.find(r->id); it != thread_work.end()) {
      g->thread_kernels += it->second.kernels;
    }
    if (const auto it = process_work.find(r->id); it != process_work.end()) {
      g->process_kernels += it->second.kernels;
    }
  }
  std::vector<NvtxRow> rows;
  for (auto& [name, g] : groups) {
    NvtxRow row;
    row.name = name;
    row.stats = compute_stats(std::move(g.durations));
    row.unterminated = g.unterminated;
    row.kernel_count = g.kernels;
    row.gpu_time_ns = g.gpu_ns;
    row.other_thread_kernels = std::max<std::int64_t>(0, g.process_kernels - g.thread_kernels);
    row.left_out_kernels = projection == NvtxProjection::Thread ? row.other_thread_kernels : 0;
    rows.push_back(std::move(row));
  }
  finish_rows(rows);
  return rows;
}

std::vector<DeviceMemoryRow> device_memory_rows(const db::Reader& reader,
                                                const std::vector<db::DeviceInfo>& devices) {
  auto events = db::device_memory_events(reader, db::MemoryOrder::ByDevice);
  std::vector<DeviceMemoryRow> rows;
  while (auto e = events.next()) {
    const auto device = static_cast<std::uint32_t>(e->device_id);
    if (rows.empty() || rows.back().device_id != device) {
      DeviceMemoryRow row;
      row.device_id = device;
      for (const auto& d : devices) {
        if (d.id == device) row.device_name = d.name;
      }
      rows.push_back(std::move(row));
    }
    DeviceMemoryRow& row = rows.back();
    const std::int64_t bytes = e->bytes;
    switch (static_cast<db::MemoryOperation>(e->operation)) {
      case db::MemoryOperation::Allocation:
        ++row.allocations;
        row.bytes_at_end = saturating_add(row.bytes_at_end, bytes);
        break;
      case db::MemoryOperation::Release:
        ++row.releases;
        row.bytes_at_end = saturating_add(row.bytes_at_end, -bytes);
        break;
    }
    if (row.bytes_at_end > row.peak_bytes) {
      row.peak_bytes = row.bytes_at_end;
      row.peak_time_ns = e->timestamp_ns;
    }
  }
  return rows;
}

template <typename Row>
std::int64_t sum_count(const std::vector<Row>& rows) {
  std::int64_t n = 0;
  for (const auto& r : rows) n += r.stats.count;
  return n;
}

template <typename Row>
std::int64_t sum_time(const std::vector<Row>& rows) {
  std::int64_t n = 0;
  for (const auto& r : rows) n += r.stats.total_ns;
  return n;
}

}  // namespace

DurationStats compute_stats(std::vector<std::int64_t> durations) {
  DurationStats s;
  if (durations.empty()) return s;
  const std::size_t n = durations.size();
  s.count = static_cast<std::int64_t>(n);
  const auto [min, max] = std::minmax_element(durations.begin(), durations.end());
  s.min_ns = *min;
  s.max_ns = *max;
  s.total_ns = std::accumulate(durations.begin(), durations.end(), std::int64_t{0}, saturating_add);
  const long double mean = static_cast<long double>(s.total_ns) / static_cast<long double>(n);
  s.avg_ns = static_cast<double>(mean);
  if (n > 1) {
    long double squares = 0;
    for (const std::int64_t d : durations) {
      const long double delta = static_cast<long double>(d) - mean;
      squares += delta * delta;
    }
    s.stddev_ns = static_cast<double>(std::sqrt(squares / static_cast<long double>(n - 1)));
  }
  // The median by selection, O(n): the upper middle value, and for an even count the largest
  // value below it (the lower middle value).
  const auto upper = durations.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(durations.begin(), upper, durations.end());
  s.median_ns = n % 2 == 1
                    ? static_cast<double>(*upper)
                    : static_cast<double>(
                          (static_cast<long double>(*std::max_element(durations.begin(), upper)) +
                           static_cast<long double>(*upper)) /
                          2);
  return s;
}

Summary summarize(const db::Reader& reader, NameKind kernel_names, NvtxProjection nvtx_projection) {
  Summary summary;
  summary.nvtx_projection = nvtx_projection;
  summary.path = reader.path();
  summary.run = reader.run();
  summary.devices = reader.devices();
  summary.processes = reader.processes();
  summary.cuda_used = !summary.processes.empty();
  summary.kernel_names = kernel_names;

  StringTable strings(reader);
  const std::optional<StoredAggregates> stored = load_summary_aggregates(reader);
  const StoredAggregates* aggregates = stored ? &*stored : nullptr;
  summary.from_stored_aggregates = aggregates != nullptr;
  summary.kernels = kernel_rows(reader, kernel_names, strings, aggregates);
  summary.memory_operations = memory_operation_rows(reader);
  summary.api = api_rows(reader, strings, aggregates);
  summary.nvtx = nvtx_rows(reader, strings, aggregates, nvtx_projection);
  summary.device_memory = device_memory_rows(reader, summary.devices);
  if (db::has_aggregates(reader)) {
    apply_aggregates(summary, db::read_aggregates(reader), kernel_names);
  }

  Totals& t = summary.totals;
  t.kernel_count = sum_count(summary.kernels);
  t.kernel_time_ns = sum_time(summary.kernels);
  t.api_call_count = sum_count(summary.api);
  for (const auto& r : summary.nvtx) t.nvtx_range_count += r.stats.count + r.unterminated;
  for (const auto& r : summary.memory_operations) {
    const bool is_memset = r.name == "[CUDA memset]";
    (is_memset ? t.memset_count : t.memcpy_count) += r.stats.count;
    (is_memset ? t.memset_bytes : t.memcpy_bytes) += r.total_bytes;
  }
  return summary;
}

}  // namespace fuselens::analyzer
