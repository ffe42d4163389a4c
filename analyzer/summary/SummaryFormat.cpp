#include "summary/SummaryFormat.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

namespace fuselens::analyzer {
namespace {

using nlohmann::json;

// One table, described once and written as text, CSV or JSON: the CSV header and the JSON keys
// are the columns' keys, so the three formats cannot drift apart.
struct Cell {
  std::string display;  // text table
  json raw;             // CSV and JSON: a number or a string
};

struct Column {
  const char* header;  // text table
  const char* key;     // CSV header and JSON key
  bool left_aligned = false;
  bool in_text = true;  // false: CSV and JSON only (a value the text table says in its title)
};

struct Table {
  std::string title;
  const char* section;
  const char* empty_message;
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  std::string footnote = {};  // text table: a line below the rows
};

Cell count_cell(std::int64_t v) { return {std::to_string(v), v}; }
Cell ns_cell(std::int64_t v) { return {format_duration(static_cast<double>(v)), v}; }
Cell ns_cell(double v) { return {format_duration(v), v}; }
Cell bytes_cell(std::int64_t v) { return {format_bytes(static_cast<double>(v)), v}; }
Cell percent_cell(double v) { return {fmt::format("{:.1f}", v), v}; }
Cell text_cell(const std::string& v) { return {v, v}; }

/// Columns Total, Instances (named `count_header`/`count_key`), Avg, Med, Min, Max, StdDev.
void add_stats_columns(std::vector<Column>& columns, const char* count_header,
                       const char* count_key) {
  columns.insert(columns.end(), {{"Total Time", "total_ns"},
                                 {count_header, count_key},
                                 {"Avg", "avg_ns"},
                                 {"Med", "med_ns"},
                                 {"Min", "min_ns"},
                                 {"Max", "max_ns"},
                                 {"StdDev", "stddev_ns"}});
}

void add_stats_cells(std::vector<Cell>& row, const DurationStats& s) {
  row.insert(row.end(),
             {ns_cell(s.total_ns), count_cell(s.count), ns_cell(s.avg_ns), ns_cell(s.median_ns),
              ns_cell(s.min_ns), ns_cell(s.max_ns), ns_cell(s.stddev_ns)});
}

/// Time (%), the stats columns, then Name: the layout shared by kernels and API calls.
template <typename Row>
Table timed_table(const char* title, const char* section, const char* empty_message,
                  const char* count_header, const char* count_key, const std::vector<Row>& rows) {
  Table t{title, section, empty_message, {{"Time (%)", "time_percent"}}, {}};
  add_stats_columns(t.columns, count_header, count_key);
  t.columns.push_back({"Name", "name", true});
  for (const auto& r : rows) {
    std::vector<Cell> row{percent_cell(r.time_percent)};
    add_stats_cells(row, r.stats);
    row.push_back(text_cell(r.name));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table memory_operation_table(const std::vector<MemoryOperationRow>& rows) {
  Table t{"CUDA GPU Memory Operation Summary",
          "memory_operations",
          "(no memory copies or memsets in this capture)",
          {{"Time (%)", "time_percent"}},
          {}};
  add_stats_columns(t.columns, "Count", "count");
  t.columns.insert(t.columns.end(), {{"Total Size", "total_bytes"},
                                     {"Throughput (GB/s)", "throughput_gb_per_s"},
                                     {"Operation", "name", true}});
  for (const auto& r : rows) {
    std::vector<Cell> row{percent_cell(r.time_percent)};
    add_stats_cells(row, r.stats);
    row.push_back(bytes_cell(r.total_bytes));
    row.push_back({fmt::format("{:.3f}", r.throughput_gb_per_s), r.throughput_gb_per_s});
    row.push_back(text_cell(r.name));
    t.rows.push_back(std::move(row));
  }
  return t;
}

/// The kernels the projection left out and those other threads launched, over every row.
std::pair<std::int64_t, std::int64_t> nvtx_left_out(const std::vector<NvtxRow>& rows) {
  std::int64_t left_out = 0, other = 0;
  for (const auto& r : rows) {
    left_out += r.left_out_kernels;
    other += r.other_thread_kernels;
  }
  return {left_out, other};
}

Table nvtx_table(const std::vector<NvtxRow>& rows, NvtxProjection projection) {
  Table t{fmt::format("NVTX Range Summary (with GPU projection: {})", to_string(projection)),
          "nvtx",
          "(no NVTX ranges in this capture)",
          {{"Time (%)", "time_percent"}},
          {}};
  add_stats_columns(t.columns, "Instances", "instances");
  t.columns.insert(t.columns.end(), {{"Unterminated", "unterminated"},
                                     {"Kernels", "kernel_count"},
                                     {"Left Out", "left_out_kernels"},
                                     {"GPU Time", "gpu_time_ns"},
                                     {"Projection", "projection", false, false},
                                     {"Range", "name", true}});
  for (const auto& r : rows) {
    std::vector<Cell> row{percent_cell(r.time_percent)};
    add_stats_cells(row, r.stats);
    row.insert(row.end(), {count_cell(r.unterminated), count_cell(r.kernel_count),
                           count_cell(r.left_out_kernels), ns_cell(r.gpu_time_ns),
                           text_cell(to_string(projection)), text_cell(r.name)});
    t.rows.push_back(std::move(row));
  }
  const auto [left_out, other] = nvtx_left_out(rows);
  t.footnote = " " + nvtx_projection_note(projection, left_out, other) +
               (projection == NvtxProjection::Process
                    ? ". --nvtx-projection thread counts the range's own thread only."
                    : ". --nvtx-projection process counts them.");
  return t;
}

// The CUPTI-clock time at which the run started, so the table can show times since the start.
std::int64_t run_origin_ns(const Summary& s) {
  const std::int64_t offset = s.processes.empty() ? 0 : s.processes.front().clock_offset_ns;
  return static_cast<std::int64_t>(s.run.info.start_utc_ns) - offset;
}

Table device_memory_table(const std::vector<DeviceMemoryRow>& rows, std::int64_t origin_ns) {
  Table t{"Device Memory Summary",
          "device_memory",
          "(no device-memory allocations in this capture)",
          {{"Device", "device_id"},
           {"Peak", "peak_bytes"},
           {"Peak At (since start)", "peak_time_ns"},
           {"Allocations", "allocations"},
           {"Releases", "releases"},
           {"In Use At End", "bytes_at_end"},
           {"Name", "device_name", true}},
          {}};
  for (const auto& r : rows) {
    t.rows.push_back(
        {{std::to_string(r.device_id), r.device_id},
         bytes_cell(r.peak_bytes),
         // No peak (the running sum never rose above 0): no time to show (it printed 0 minus
         // the run's start before, e.g. "-1795355418.936 s").
         {r.peak_bytes > 0 ? format_duration(static_cast<double>(r.peak_time_ns - origin_ns))
                           : std::string("-"),
          r.peak_time_ns},
         count_cell(r.allocations),
         count_cell(r.releases),
         bytes_cell(r.bytes_at_end),
         text_cell(r.device_name)});
  }
  return t;
}

std::vector<Table> selected_tables(const Summary& s, const SummarySections& which) {
  std::vector<Table> tables;
  if (which.kernels) {
    tables.push_back(timed_table("CUDA GPU Kernel Summary", "kernels",
                                 "(no CUDA kernels in this capture)", "Instances", "instances",
                                 s.kernels));
  }
  if (which.memory_operations) tables.push_back(memory_operation_table(s.memory_operations));
  if (which.api) {
    tables.push_back(timed_table("CUDA API Summary", "api", "(no CUDA API calls in this capture)",
                                 "Num Calls", "num_calls", s.api));
  }
  if (which.nvtx) tables.push_back(nvtx_table(s.nvtx, s.nvtx_projection));
  if (which.device_memory) tables.push_back(device_memory_table(s.device_memory, run_origin_ns(s)));
  return tables;
}

/// Display width of UTF-8 text: code points, not bytes ("µs" is 2 wide).
std::size_t display_width(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

void write_text_table(std::ostream& out, const Table& t) {
  out << t.title << ":\n\n";
  if (t.rows.empty()) {
    out << ' ' << t.empty_message << "\n\n";
    return;
  }
  std::vector<std::size_t> width;
  for (const auto& c : t.columns) width.push_back(display_width(c.header));
  for (const auto& row : t.rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], display_width(row[i].display));
    }
  }
  // Numbers right-aligned, text left-aligned, two spaces apart; no trailing blanks.
  const auto write_line = [&](const auto& text_of) {
    std::string line;
    bool first = true;
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      if (!t.columns[i].in_text) continue;
      const std::string text = text_of(i);
      const std::string fill(width[i] - display_width(text), ' ');
      line += first ? " " : "  ";
      first = false;
      line += t.columns[i].left_aligned ? text + fill : fill + text;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  };
  write_line([&](std::size_t i) { return std::string(t.columns[i].header); });
  write_line([&](std::size_t i) {
    return std::string(t.columns[i].left_aligned ? display_width(t.columns[i].header) : width[i],
                       '-');
  });
  for (const auto& row : t.rows) write_line([&](std::size_t i) { return row[i].display; });
  if (!t.footnote.empty()) out << '\n' << t.footnote << '\n';
  out << '\n';
}

std::string raw_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

void write_csv(std::ostream& out, const std::vector<Table>& tables) {
  for (std::size_t n = 0; n < tables.size(); ++n) {
    const Table& t = tables[n];
    if (n > 0) out << '\n';
    out << "# " << t.section << '\n';
    for (std::size_t i = 0; i < t.columns.size(); ++i) out << (i ? "," : "") << t.columns[i].key;
    out << '\n';
    for (const auto& row : t.rows) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        out << (i ? "," : "") << csv_field(raw_text(row[i].raw));
      }
      out << '\n';
    }
  }
}

const char* end_reason_name(db::EndReason reason) {
  switch (reason) {
    case db::EndReason::Exited:
      return "exited";
    case db::EndReason::Signaled:
      return "killed by signal";
    case db::EndReason::ProfilerInterrupted:
      return "profiler interrupted";
    case db::EndReason::NotFinalized:
      break;
  }
  return "not finalized";
}

const char* name_kind_name(NameKind kind) {
  // In NameKind's order; a value outside it reads as "demangled".
  constexpr const char* kNames[] = {"demangled", "short", "mangled"};
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "demangled";
}

/// argv joined for a shell: arguments with spaces or special characters in single quotes.
std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

void write_header(std::ostream& out, const Summary& s) {
  const auto line = [&](std::string_view label, const std::string& value) {
    out << fmt::format("  {:<17}{}\n", label, value);
  };
  out << "FuseLens summary of '" << s.path << "'\n";
  line("Command:", shell_join(s.run.info.command_line));
  line("Host:", s.run.info.host_name);
  line("Run:", describe_run_end(s.run.end));
  line("Dropped records:",
       s.run.dropped_records == 0
           ? std::string("0")
           : fmt::format("{} (the tables below are incomplete)", s.run.dropped_records));
  line("CUDA processes:", std::to_string(s.processes.size()));
  for (const auto& d : s.devices) {
    line(fmt::format("Device {}:", d.id),
         fmt::format("{} (compute capability {}.{}, {} SMs, {})", d.name, d.cc_major, d.cc_minor,
                     d.sm_count, format_bytes(static_cast<double>(d.global_memory_bytes))));
  }
  if (!s.cuda_used) {
    line("CUDA:", "the workload never initialized CUDA; nothing to summarize");
  }
  if (s.from_aggregate_mode) {
    line("Mode:", fmt::format("aggregate: kernel, memory and device-memory tables are the whole "
                              "run's; medians from a DDSketch (relative accuracy {:g} %), StdDev "
                              "not kept; API and NVTX tables from the windows' trace ({} rows)",
                              s.sketch_alpha * 100, s.traced_records));
  }
  const Totals& t = s.totals;
  line("Totals:",
       fmt::format("{} kernels ({} GPU time), {} memcpys ({}), {} memsets ({}), "
                   "{} API calls, {} NVTX ranges",
                   t.kernel_count, format_duration(static_cast<double>(t.kernel_time_ns)),
                   t.memcpy_count, format_bytes(static_cast<double>(t.memcpy_bytes)),
                   t.memset_count, format_bytes(static_cast<double>(t.memset_bytes)),
                   t.api_call_count, t.nvtx_range_count));
  out << '\n';
}

json optional_json(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

json run_fields(const Summary& s);

json run_json(const Summary& s) {
  json out = run_fields(s);
  if (s.from_aggregate_mode) {  // only then, so that trace captures' JSON is unchanged
    out["aggregate_mode"] = true;
    out["sketch_alpha"] = s.sketch_alpha;
    out["traced_records"] = s.traced_records;
  }
  return out;
}

json run_fields(const Summary& s) {
  const auto& r = s.run;
  return {{"path", s.path},
          {"command_line", r.info.command_line},
          {"working_directory", r.info.working_directory},
          {"host_name", r.info.host_name},
          {"fuselens_version", r.info.fuselens_version},
          {"trace", r.info.trace},
          {"start_utc_ns", r.info.start_utc_ns},
          {"end_utc_ns",
           r.end.reason == db::EndReason::NotFinalized ? json(nullptr) : json(r.end.end_utc_ns)},
          {"end_reason", end_reason_name(r.end.reason)},
          {"exit_status", optional_json(r.end.exit_status)},
          {"exit_signal", optional_json(r.end.exit_signal)},
          {"dropped_records", r.dropped_records},
          {"cuda_processes", r.cuda_processes},
          {"cuda_used", s.cuda_used},
          {"kernel_names", name_kind_name(s.kernel_names)}};
}

json device_json(const db::DeviceInfo& d) {
  return {{"id", d.id},
          {"uuid", d.uuid},
          {"name", d.name},
          {"compute_capability_major", d.cc_major},
          {"compute_capability_minor", d.cc_minor},
          {"sm_count", d.sm_count},
          {"core_clock_khz", d.core_clock_khz},
          {"memory_clock_khz", d.memory_clock_khz},
          {"memory_bus_width_bits", d.memory_bus_width_bits},
          {"global_memory_bytes", d.global_memory_bytes},
          {"l2_cache_bytes", d.l2_cache_bytes},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"shared_memory_per_sm_bytes", d.shared_memory_per_sm_bytes},
          {"registers_per_sm", d.registers_per_sm}};
}

json process_json(const db::ProcessInfo& p) {
  return {{"pid", p.pid},
          {"parent_pid", p.parent_pid},
          {"executable", p.executable},
          {"start_utc_ns", p.start_utc_ns},
          {"end_utc_ns", p.end_utc_ns ? json(*p.end_utc_ns) : json(nullptr)},
          {"clock_offset_ns", p.clock_offset_ns},
          {"cuda_driver_version", p.cuda_driver_version},
          {"cuda_runtime_version", p.cuda_runtime_version},
          {"cupti_version", p.cupti_version},
          {"dropped_records", p.dropped_records},
          {"buffers_used", p.buffers_used},
          {"records_written", p.records_written}};
}

json totals_json(const Totals& t) {
  return {{"kernel_count", t.kernel_count},         {"memcpy_count", t.memcpy_count},
          {"memset_count", t.memset_count},         {"api_call_count", t.api_call_count},
          {"nvtx_range_count", t.nvtx_range_count}, {"kernel_time_ns", t.kernel_time_ns},
          {"memcpy_bytes", t.memcpy_bytes},         {"memset_bytes", t.memset_bytes}};
}

/// "{:.3f} <unit>" in the largest unit of `units` (scale, name; ascending) that keeps the
/// value >= 1 once rounded; below the first scale: the base unit, whole or with one decimal.
template <std::size_t N>
std::string format_scaled(double value, const char* base_unit,
                          const std::array<std::pair<double, const char*>, N>& units) {
  const double magnitude = std::fabs(value);
  for (std::size_t i = N; i-- > 0;) {
    if (magnitude / units[i].first >= 0.9995) {
      return fmt::format("{:.3f} {}", value / units[i].first, units[i].second);
    }
  }
  if (value == std::trunc(value)) return fmt::format("{:.0f} {}", value, base_unit);
  return fmt::format("{:.1f} {}", value, base_unit);
}

}  // namespace

std::string nvtx_projection_note(NvtxProjection projection, std::int64_t left_out_kernels,
                                 std::int64_t other_thread_kernels) {
  if (projection == NvtxProjection::Thread) {
    return fmt::format(
        "GPU projection: thread (kernels launched by the range's own thread, as Nsight Systems' "
        "nvtx_gpu_proj_sum; {} kernels other threads launched inside the ranges left out)",
        left_out_kernels);
  }
  return fmt::format(
      "GPU projection: process (kernels launched inside a range by any of its process's threads; "
      "{} of them by threads other than the range's; none left out)",
      other_thread_kernels);
}

std::string format_duration(double ns) {
  static constexpr std::array<std::pair<double, const char*>, 3> units{
      {{1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}}};
  return format_scaled(ns, "ns", units);
}

std::string format_bytes(double bytes) {
  static constexpr std::array<std::pair<double, const char*>, 4> units{
      {{1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}}};
  return format_scaled(bytes, "B", units);
}

namespace {

/// True when `value` is a plain number ("-5", "+1.5e3", "12.0"): a cell a spreadsheet reads
/// as a number, not as a formula.
bool plain_number(const std::string& value) {
  if (value.empty()) return false;
  char* end = nullptr;
  errno = 0;
  (void)std::strtod(value.c_str(), &end);
  return end == value.c_str() + value.size() && value.find_first_of("xXnN") == std::string::npos;
}

}  // namespace

std::string csv_field(const std::string& value) {
  // OWASP's CSV injection advice: a cell that a spreadsheet would evaluate (starting with =, +,
  // -, @, TAB or CR) gets a leading single quote and is quoted; plain numbers stay numbers.
  const bool formula = !value.empty() &&
                       std::string_view("=+-@\t\r").find(value[0]) != std::string_view::npos &&
                       !plain_number(value);
  if (!formula && value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string out = formula ? "\"'" : "\"";
  for (const char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

json summary_to_json(const Summary& summary, const SummarySections& which) {
  json doc = json::object();
  doc["run"] = run_json(summary);
  doc["devices"] = json::array();
  for (const auto& d : summary.devices) doc["devices"].push_back(device_json(d));
  doc["processes"] = json::array();
  for (const auto& p : summary.processes) doc["processes"].push_back(process_json(p));
  for (const Table& t : selected_tables(summary, which)) {
    json rows = json::array();
    for (const auto& row : t.rows) {
      json object = json::object();
      for (std::size_t i = 0; i < row.size(); ++i) object[t.columns[i].key] = row[i].raw;
      rows.push_back(std::move(object));
    }
    doc[t.section] = std::move(rows);
  }
  if (which.nvtx) {
    const auto [left_out, other] = nvtx_left_out(summary.nvtx);
    doc["nvtx_projection"] = {{"projection", to_string(summary.nvtx_projection)},
                              {"left_out_kernels", left_out},
                              {"other_thread_kernels", other}};
  }
  doc["totals"] = totals_json(summary.totals);
  return doc;
}

void write_summary(std::ostream& out, const Summary& summary, OutputFormat format,
                   const SummarySections& which) {
  switch (format) {
    case OutputFormat::Table:
      write_header(out, summary);
      for (const Table& t : selected_tables(summary, which)) write_text_table(out, t);
      break;
    case OutputFormat::Csv:
      write_csv(out, selected_tables(summary, which));
      break;
    case OutputFormat::Json:
      // Invalid UTF-8 (NVTX text is the user's bytes) is replaced, never thrown.
      out << summary_to_json(summary, which).dump(2, ' ', false, json::error_handler_t::replace)
          << '\n';
      break;
  }
}

namespace {

// The usual name of a Linux signal number, or null for one without a common name.
const char* signal_name(int signal) {
  switch (signal) {
    case 1:
      return "SIGHUP";
    case 2:
      return "SIGINT";
    case 3:
      return "SIGQUIT";
    case 4:
      return "SIGILL";
    case 6:
      return "SIGABRT";
    case 7:
      return "SIGBUS";
    case 8:
      return "SIGFPE";
    case 9:
      return "SIGKILL";
    case 11:
      return "SIGSEGV";
    case 13:
      return "SIGPIPE";
    case 14:
      return "SIGALRM";
    case 15:
      return "SIGTERM";
    default:
      return nullptr;
  }
}

}  // namespace

std::string describe_run_end(const db::RunEnd& end) {
  switch (end.reason) {
    case db::EndReason::Exited:
      return end.exit_status ? fmt::format("exited with status {}", *end.exit_status) : "exited";
    case db::EndReason::Signaled:
      if (!end.exit_signal) return "killed by a signal";
      if (const char* name = signal_name(*end.exit_signal)) {
        return fmt::format("killed by signal {} ({})", *end.exit_signal, name);
      }
      return fmt::format("killed by signal {}", *end.exit_signal);
    case db::EndReason::ProfilerInterrupted:
      return "interrupted by the profiler";
    case db::EndReason::NotFinalized:
      break;
  }
  return "ended without prof-run finalizing it (prof-run was killed or lost; how the workload "
         "ended is unknown, and the tables hold what its processes had written)";
}

}  // namespace fuselens::analyzer
