#include "export/Export.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

#include "fuselens/db/Records.h"
#include "fuselens/db/TraceCursors.h"
#include "window/Window.h"

namespace fuselens::analyzer {
namespace {

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();

/// The time extent of one table folded into `range`.
void widen(const db::Reader& reader, db::TimedTable table, TimeRange& range) {
  const db::TimeExtent extent = db::time_extent(reader, table);
  if (!extent.first_ns) return;
  const std::int64_t lo = *extent.first_ns;
  const std::int64_t hi = extent.last_ns.value_or(lo);
  if (range.empty) {
    range = {lo, hi, false};
    return;
  }
  range.begin_ns = std::min(range.begin_ns, lo);
  range.end_ns = std::max(range.end_ns, hi);
}

/// Running sum of one device, thinned into buckets (see DeviceMemorySeries).
class SeriesBuilder {
 public:
  SeriesBuilder(std::uint32_t device, std::int64_t events, std::int64_t first_ns,
                std::int64_t last_ns, std::size_t max_points)
      : first_ns_(first_ns) {
    series_.device_id = device;
    series_.events = events;
    thin_ = static_cast<std::size_t>(events) > max_points && max_points >= 2;
    if (thin_) {
      const auto buckets = static_cast<std::int64_t>(max_points / 2);
      width_ns_ = std::max<std::int64_t>(1, (last_ns - first_ns + buckets) / buckets);
    }
  }

  void add(std::int64_t time_ns, std::int64_t bytes) {
    series_.peak_bytes = std::max(series_.peak_bytes, bytes);
    if (!thin_) {
      series_.points.push_back({time_ns, bytes});
      return;
    }
    const std::int64_t bucket = (time_ns - first_ns_) / width_ns_;
    if (bucket != bucket_) {
      flush();
      bucket_ = bucket;
      high_ = {time_ns, bytes};
    } else if (bytes > high_.bytes) {
      high_.bytes = bytes;
    }
    last_ = {time_ns, bytes};
  }

  DeviceMemorySeries finish() {
    flush();
    return std::move(series_);
  }

 private:
  void flush() {
    if (bucket_ == kNone) return;
    series_.points.push_back(high_);
    if (last_.time_ns != high_.time_ns || last_.bytes != high_.bytes) {
      series_.points.push_back(last_);
    }
  }

  DeviceMemorySeries series_;
  std::int64_t first_ns_ = 0;
  bool thin_ = false;
  std::int64_t width_ns_ = 1;
  std::int64_t bucket_ = kNone;
  MemoryPoint high_, last_;
};

/// Rows of `a` and `b` (anything with .name and .stats) joined by name.
template <typename Row>
std::vector<SideBySideRow> join_by_name(const std::vector<Row>& a, const std::vector<Row>& b) {
  std::map<std::string, SideBySideRow> rows;
  for (const Row& r : a) {
    SideBySideRow& row = rows[r.name];
    row.a_total_ns += r.stats.total_ns;
    row.a_count += r.stats.count;
  }
  for (const Row& r : b) {
    SideBySideRow& row = rows[r.name];
    row.b_total_ns += r.stats.total_ns;
    row.b_count += r.stats.count;
  }
  std::vector<SideBySideRow> out;
  out.reserve(rows.size());
  for (auto& [name, row] : rows) {
    row.name = name;
    if (row.a_total_ns != 0) {
      row.ratio = static_cast<double>(row.b_total_ns) / static_cast<double>(row.a_total_ns);
    }
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const SideBySideRow& x, const SideBySideRow& y) {
    return std::max(x.a_total_ns, x.b_total_ns) > std::max(y.a_total_ns, y.b_total_ns);
  });
  return out;
}

}  // namespace

std::optional<ExportFormat> parse_export_format(std::string_view name) {
  for (const auto format :
       {ExportFormat::Html, ExportFormat::Json, ExportFormat::Csv, ExportFormat::ChromeTrace}) {
    if (name == to_string(format)) return format;
  }
  return std::nullopt;
}

const char* to_string(ExportFormat format) {
  // In ExportFormat's order; a value outside it reads as "html".
  constexpr const char* kNames[] = {"html", "json", "csv", "chrome-trace"};
  const auto i = static_cast<std::size_t>(format);
  return i < std::size(kNames) ? kNames[i] : "html";
}

TimeRange capture_time_range(const db::Reader& reader) {
  TimeRange range;
  // Kernels, copies, memsets and API calls: the extent stored when the capture was finalized
  // while it is fresh (one scan of each table otherwise: 1.4 s on ten million kernels).
  if (const auto [first, last] = capture_extent(reader); first != 0 || last != 0) {
    range = {first, last, false};
  }
  for (const db::TimedTable table :
       {db::TimedTable::MemoryEvent, db::TimedTable::NvtxRange, db::TimedTable::NvtxMark}) {
    widen(reader, table, range);
  }
  return range;
}

std::vector<DeviceMemorySeries> device_memory_series(const db::Reader& reader,
                                                     std::size_t max_points) {
  struct Extent {
    std::int64_t events, first_ns, last_ns;
  };
  std::map<std::uint32_t, Extent> extents;
  auto counts = db::device_memory_extents(reader);
  while (auto c = counts.next()) {
    extents[static_cast<std::uint32_t>(c->device_id)] = {c->events, c->first_ns, c->last_ns};
  }
  std::vector<DeviceMemorySeries> out;
  auto events = db::device_memory_events(reader, db::MemoryOrder::ByDevice);
  std::optional<SeriesBuilder> builder;
  std::uint32_t device = 0;
  std::int64_t in_use = 0;
  while (auto s = events.next()) {
    const auto row_device = static_cast<std::uint32_t>(s->device_id);
    if (!builder || row_device != device) {
      if (builder) out.push_back(builder->finish());
      device = row_device;
      in_use = 0;
      const Extent& e = extents[device];
      builder.emplace(device, e.events, e.first_ns, e.last_ns, max_points);
    }
    const bool release = s->operation == static_cast<int>(db::MemoryOperation::Release);
    // Sizes are below 2^50 (db::check_sizes), yet many of them can still overflow a sum.
    if (__builtin_add_overflow(in_use, release ? -s->bytes : s->bytes, &in_use)) {
      in_use = release ? std::numeric_limits<std::int64_t>::min()
                       : std::numeric_limits<std::int64_t>::max();
    }
    builder->add(s->timestamp_ns, in_use);
  }
  if (builder) out.push_back(builder->finish());
  return out;
}

bool may_be_distributed(const db::Reader& reader) {
  return reader.processes().size() > 1 || !reader.process_ranks().empty();
}

ExportRun load_export_run(const db::Reader& reader, std::string label, NameKind kernel_names,
                          bool with_analyses, const CompareReport* comparison, const Window* window,
                          FramesMode frames, const StoredAnalyses* stored) {
  ExportRun run;
  run.label = std::move(label);
  run.summary = summarize(reader, kernel_names);
  run.time_range = capture_time_range(reader);
  run.device_memory = device_memory_series(reader);
  if (with_analyses) {
    run.analyses = load_export_analyses(reader, comparison, window, frames, stored);
  }
  if (comparison) run.comparison = *comparison;
  return run;
}

SideBySide side_by_side(const Summary& a, const Summary& b) {
  SideBySide out;
  out.kernels = join_by_name(a.kernels, b.kernels);
  out.memory_operations = join_by_name(a.memory_operations, b.memory_operations);
  out.api = join_by_name(a.api, b.api);
  out.nvtx = join_by_name(a.nvtx, b.nvtx);
  return out;
}

}  // namespace fuselens::analyzer
