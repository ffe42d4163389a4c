// make_html_report: the built-in sections of the HTML report (run, devices, overview,
// comparison, summary tables) from one or two ExportRuns.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "export/ExportHtml.h"
#include "export/ExportHtmlWidgets.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string ns_text(double ns) { return format_duration(ns); }
/// "200.000 ms" -> "200 ms", "1.400 s" -> "1.4 s": axis ticks without trailing zeros.
std::string compact(std::string text) {
  const auto space = text.find(' ');
  const auto dot = text.find('.');
  if (space == std::string::npos || dot == std::string::npos || dot > space) return text;
  auto end = space;
  while (end > dot + 1 && text[end - 1] == '0') --end;
  if (end == dot + 1) --end;
  return text.erase(end, space - end);
}
std::string ns_tick(double ns) { return compact(format_duration(ns)); }
std::string bytes_tick(double bytes) { return compact(format_bytes(bytes)); }
std::string bytes_text(double bytes) { return format_bytes(bytes); }
std::string count_text(std::int64_t n) { return std::to_string(n); }
std::string percent_text(double p) { return fmt::format("{:.1f}", p); }
double as_double(std::int64_t v) { return static_cast<double>(v); }

std::string utc_text(std::uint64_t utc_ns) {
  const auto seconds = static_cast<std::time_t>(utc_ns / 1'000'000'000ULL);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return std::to_string(utc_ns) + " ns";
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03d} UTC", text, static_cast<int>(utc_ns / 1'000'000ULL % 1000));
}

/// argv as a shell would need it: arguments with blanks or quotes in single quotes.
std::string command_text(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t\n'\"\\$`*?;&|<>()") == std::string::npos;
    out += plain ? arg : "'" + arg + "'";
  }
  return out;
}

std::string ratio_text(const SideBySideRow& r) {
  if (r.a_count == 0) return "only in B";
  if (r.b_count == 0) return "only in A";
  return r.ratio ? fmt::format("{:.2f}×", *r.ratio) : "—";
}

std::string labelled(const std::string& text, const ExportRun& run, std::size_t runs) {
  return runs > 1 ? text + " — " + run.label : text;
}

HtmlTable make_table(std::string id, std::vector<HtmlColumn> columns,
                     std::string empty_message = "(none)") {
  HtmlTable t;
  t.id = std::move(id);
  t.columns = std::move(columns);
  t.empty_message = std::move(empty_message);
  return t;
}

/// Table of `rows` cut to `max_rows` with a note saying how many were left out.
HtmlTable cut(HtmlTable table, std::size_t max_rows) {
  if (table.rows.size() > max_rows) {
    table.note = fmt::format("{} more rows not shown; the CSV and JSON exports have all of them.",
                             table.rows.size() - max_rows);
    table.rows.resize(max_rows);
  }
  return table;
}

std::vector<HtmlColumn> stats_columns(const char* count_header) {
  return {{"Time (%)", true}, {"Total Time", true}, {count_header, true}, {"Avg", true},
          {"Med", true},      {"Min", true},        {"Max", true},        {"StdDev", true}};
}

std::vector<std::string> stats_cells(double percent, const DurationStats& s) {
  return {percent_text(percent),        ns_text(as_double(s.total_ns)),
          count_text(s.count),          ns_text(s.avg_ns),
          ns_text(s.median_ns),         ns_text(as_double(s.min_ns)),
          ns_text(as_double(s.max_ns)), ns_text(s.stddev_ns)};
}

HtmlSection run_section(const std::vector<ExportRun>& runs) {
  using Field = std::pair<std::string, std::vector<std::string>>;
  std::vector<Field> fields{
      {"Capture", {}},   {"Window", {}},      {"Command", {}},         {"Working directory", {}},
      {"Host", {}},      {"Recorded by", {}}, {"Trace", {}},           {"Started", {}},
      {"Wall time", {}}, {"Run", {}},         {"Dropped records", {}}, {"CUDA processes", {}}};
  for (const ExportRun& run : runs) {
    const Summary& s = run.summary;
    const db::RunInfo& info = s.run.info;
    const bool ended = s.run.end.reason != db::EndReason::NotFinalized;
    const std::vector<std::string> values{
        s.path,
        run.window.empty() ? "whole capture" : run.window,
        command_text(info.command_line),
        info.working_directory,
        info.host_name,
        "FuseLens " + info.fuselens_version,
        info.trace,
        utc_text(info.start_utc_ns),
        ended && s.run.end.end_utc_ns >= info.start_utc_ns
            ? ns_text(static_cast<double>(s.run.end.end_utc_ns - info.start_utc_ns))
            : "unknown",
        describe_run_end(s.run.end),
        s.run.dropped_records == 0
            ? "0"
            : fmt::format("{} (the tables are incomplete)", s.run.dropped_records),
        std::to_string(s.processes.size())};
    for (std::size_t i = 0; i < fields.size(); ++i) fields[i].second.push_back(values[i]);
  }
  std::string body;
  if (runs.size() == 1) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (auto& [key, values] : fields) kv.emplace_back(key, values.front());
    body = html_key_value_table(kv, "run-table");
  } else {
    HtmlTable t = make_table("run-table", {{"", false}});
    for (const auto& run : runs) t.columns.push_back({run.label, false});
    for (auto& [key, values] : fields) {
      t.rows.push_back({key});
      t.rows.back().insert(t.rows.back().end(), values.begin(), values.end());
    }
    body = t.to_html();
  }
  HtmlTable processes =
      make_table("processes-table", {}, "(no CUDA process: CUDA was never initialized)");
  if (runs.size() > 1) processes.columns.push_back({"Run", false});
  processes.columns.insert(processes.columns.end(), {{"PID", true},
                                                     {"Parent", true},
                                                     {"Executable", false},
                                                     {"CUDA driver", true},
                                                     {"CUDA runtime", true},
                                                     {"CUPTI", true},
                                                     {"Records written", true},
                                                     {"Dropped", true}});
  const auto version = [](int v) {
    return v == 0 ? "—" : fmt::format("{}.{}", v / 1000, v % 1000 / 10);
  };
  for (const ExportRun& run : runs) {
    for (const auto& p : run.summary.processes) {
      std::vector<std::string> row;
      if (runs.size() > 1) row.push_back(run.label);
      row.insert(row.end(), {std::to_string(p.pid), std::to_string(p.parent_pid), p.executable,
                             version(p.cuda_driver_version), version(p.cuda_runtime_version),
                             std::to_string(p.cupti_version), std::to_string(p.records_written),
                             std::to_string(p.dropped_records)});
      processes.rows.push_back(std::move(row));
    }
  }
  body += "<h3>Processes</h3>\n" + processes.to_html();
  return {HtmlSlot::Run, "run", "Run", std::move(body)};
}

HtmlSection devices_section(const std::vector<ExportRun>& runs) {
  HtmlTable t = make_table("devices-table", {}, "(no device recorded)");
  if (runs.size() > 1) t.columns.push_back({"Run", false});
  t.columns.insert(t.columns.end(), {{"Device", true},
                                     {"Name", false, true},
                                     {"CC", true},
                                     {"SMs", true},
                                     {"SM clock", true},
                                     {"Memory clock", true},
                                     {"Bus", true},
                                     {"Memory", true},
                                     {"L2", true},
                                     {"Threads/SM", true},
                                     {"Shared mem/SM", true},
                                     {"Registers/SM", true}});
  std::vector<std::string> uuids;
  for (const ExportRun& run : runs) {
    for (const auto& d : run.summary.devices) {
      std::vector<std::string> row;
      if (runs.size() > 1) row.push_back(run.label);
      row.insert(row.end(),
                 {std::to_string(d.id), d.name, fmt::format("{}.{}", d.cc_major, d.cc_minor),
                  std::to_string(d.sm_count), fmt::format("{} MHz", d.core_clock_khz / 1000),
                  fmt::format("{} MHz", d.memory_clock_khz / 1000),
                  fmt::format("{} bit", d.memory_bus_width_bits),
                  bytes_text(static_cast<double>(d.global_memory_bytes)),
                  bytes_text(d.l2_cache_bytes), std::to_string(d.max_threads_per_sm),
                  bytes_text(d.shared_memory_per_sm_bytes), std::to_string(d.registers_per_sm)});
      t.rows.push_back(std::move(row));
      uuids.push_back(
          fmt::format("{}device {} {}", runs.size() > 1 ? run.label + " " : "", d.id, d.uuid));
    }
  }
  if (!uuids.empty()) t.note = "UUID: " + fmt::format("{}", fmt::join(uuids, "; "));
  return {HtmlSlot::Devices, "devices", "Devices", t.to_html()};
}

std::int64_t peak_device_memory(const Summary& s) {
  std::int64_t peak = 0;
  for (const auto& d : s.device_memory) peak = std::max(peak, d.peak_bytes);
  return peak;
}

HtmlSection overview_section(const std::vector<ExportRun>& runs, const HtmlReportOptions& o) {
  struct Metric {
    std::string name;
    std::vector<double> values;
    std::string (*format)(double);
  };
  const auto count = [](double v) { return fmt::format("{:.0f}", v); };
  std::vector<Metric> metrics{
      {"Kernels", {}, +count},        {"Kernel time (sum)", {}, &ns_text},
      {"Memory copies", {}, +count},  {"Bytes copied", {}, &bytes_text},
      {"Memsets", {}, +count},        {"CUDA API calls", {}, +count},
      {"NVTX ranges", {}, +count},    {"Peak device memory", {}, &bytes_text},
      {"Captured span", {}, &ns_text}};
  for (const ExportRun& run : runs) {
    const Totals& t = run.summary.totals;
    const std::vector<std::int64_t> v{t.kernel_count,
                                      t.kernel_time_ns,
                                      t.memcpy_count,
                                      t.memcpy_bytes,
                                      t.memset_count,
                                      t.api_call_count,
                                      t.nvtx_range_count,
                                      peak_device_memory(run.summary),
                                      run.time_range.end_ns - run.time_range.begin_ns};
    for (std::size_t i = 0; i < metrics.size(); ++i) metrics[i].values.push_back(as_double(v[i]));
  }
  std::string body;
  if (runs.size() == 1) {
    body = "<div class=\"cards\">";
    for (const auto& m : metrics) {
      body += "<div class=\"card\"><div class=\"v\">" + html_escape(m.format(m.values[0])) +
              "</div><div class=\"k\">" + html_escape(m.name) + "</div></div>";
    }
    body += "</div>\n";
  } else {
    HtmlTable t =
        make_table("totals-table", {{"", false}, {"A", true}, {"B", true}, {"B/A", true}});
    for (const auto& m : metrics) {
      t.rows.push_back({m.name, m.format(m.values[0]), m.format(m.values[1]),
                        m.values[0] > 0 ? fmt::format("{:.2f}×", m.values[1] / m.values[0]) : "—"});
    }
    body = t.to_html();
  }

  BarChart bars{"Top kernels by total GPU time", {}, {}, &ns_text};
  if (runs.size() == 1) {
    bars.series.push_back({runs[0].label, {}});
    for (const auto& k : runs[0].summary.kernels) {
      if (bars.categories.size() == o.chart_bars) break;
      bars.categories.push_back(k.name);
      bars.series[0].values.push_back(as_double(k.stats.total_ns));
    }
  } else {
    bars.series = {{runs[0].label, {}}, {runs[1].label, {}}};
    for (const auto& r : side_by_side(runs[0].summary, runs[1].summary).kernels) {
      if (bars.categories.size() == o.chart_bars) break;
      bars.categories.push_back(r.name);
      bars.series[0].values.push_back(as_double(r.a_total_ns));
      bars.series[1].values.push_back(as_double(r.b_total_ns));
    }
  }
  body += bars.categories.empty() ? "<p class=\"empty\">(no kernels in this capture)</p>\n"
                                  : svg_bar_chart(bars);

  StepChart memory{"Device memory in use",        0, 1, {}, &ns_tick, &bytes_tick,
                   "time since the first record", ""};
  for (const ExportRun& run : runs) {
    memory.x_max =
        std::max(memory.x_max, as_double(run.time_range.end_ns - run.time_range.begin_ns));
    for (const auto& series : run.device_memory) {
      StepChart::Series s{
          fmt::format("{}GPU {}", runs.size() > 1 ? run.label + " · " : "", series.device_id), {}};
      for (const auto& p : series.points) {
        s.points.emplace_back(as_double(p.time_ns - run.time_range.begin_ns), as_double(p.bytes));
      }
      memory.series.push_back(std::move(s));
    }
  }
  body += memory.series.empty()
              ? "<p class=\"empty\">(no device-memory allocations in this capture)</p>\n"
              : svg_step_chart(memory);
  return {HtmlSlot::Overview, "overview", "Overview", std::move(body)};
}

HtmlTable side_by_side_table(std::string id, const char* count_name,
                             const std::vector<SideBySideRow>& rows) {
  HtmlTable t = make_table(std::move(id), {{"Total A", true},
                                           {"Total B", true},
                                           {"B/A", true},
                                           {std::string(count_name) + " A", true},
                                           {std::string(count_name) + " B", true},
                                           {"Name", false}});
  for (const auto& r : rows) {
    t.rows.push_back({ns_text(as_double(r.a_total_ns)), ns_text(as_double(r.b_total_ns)),
                      ratio_text(r), count_text(r.a_count), count_text(r.b_count), r.name});
  }
  return t;
}

HtmlSection comparison_section(const std::vector<ExportRun>& runs, const HtmlReportOptions& o) {
  const SideBySide joined = side_by_side(runs[0].summary, runs[1].summary);
  std::string body =
      "<p class=\"note\">Rows are matched by name; B/A above 1 means B took longer.</p>\n";
  body += "<h3>Kernels</h3>\n" +
          cut(side_by_side_table("compare-kernels", "Instances", joined.kernels), o.max_table_rows)
              .to_html();
  body += "<h3>Memory operations</h3>\n" +
          cut(side_by_side_table("compare-memory-operations", "Count", joined.memory_operations),
              o.max_table_rows)
              .to_html();
  body += "<h3>CUDA API</h3>\n" +
          cut(side_by_side_table("compare-api", "Calls", joined.api), o.max_table_rows).to_html();
  body +=
      "<h3>NVTX ranges</h3>\n" +
      cut(side_by_side_table("compare-nvtx", "Instances", joined.nvtx), o.max_table_rows).to_html();
  return {HtmlSlot::Comparison, "comparison", "Side by side", std::move(body)};
}

HtmlSection summary_section(const ExportRun& run, std::size_t runs, const HtmlReportOptions& o) {
  const Summary& s = run.summary;
  const std::string suffix = runs > 1 ? "-" + run.label : "";
  HtmlTable kernels = make_table("kernels" + suffix, stats_columns("Instances"),
                                 "(no CUDA kernels in this capture)");
  kernels.columns.push_back({"Name", false});
  for (const auto& r : s.kernels) {
    kernels.rows.push_back(stats_cells(r.time_percent, r.stats));
    kernels.rows.back().push_back(r.name);
  }
  HtmlTable memops = make_table("memory-operations" + suffix, stats_columns("Count"),
                                "(no memory copies or memsets in this capture)");
  memops.columns.insert(memops.columns.end(),
                        {{"Total Size", true}, {"Throughput (GB/s)", true}, {"Operation", false}});
  for (const auto& r : s.memory_operations) {
    memops.rows.push_back(stats_cells(r.time_percent, r.stats));
    memops.rows.back().insert(memops.rows.back().end(),
                              {bytes_text(as_double(r.total_bytes)),
                               fmt::format("{:.3f}", r.throughput_gb_per_s), r.name});
  }
  HtmlTable api =
      make_table("api" + suffix, stats_columns("Num Calls"), "(no CUDA API calls in this capture)");
  api.columns.push_back({"Name", false});
  for (const auto& r : s.api) {
    api.rows.push_back(stats_cells(r.time_percent, r.stats));
    api.rows.back().push_back(r.name);
  }
  HtmlTable nvtx =
      make_table("nvtx" + suffix, stats_columns("Instances"), "(no NVTX ranges in this capture)");
  nvtx.columns.insert(nvtx.columns.end(), {{"Unterminated", true},
                                           {"Kernels", true},
                                           {"Left out", true},
                                           {"GPU Time", true},
                                           {"Range", false}});
  std::int64_t left_out = 0, other_threads = 0;
  for (const auto& r : s.nvtx) {
    nvtx.rows.push_back(stats_cells(r.time_percent, r.stats));
    nvtx.rows.back().insert(
        nvtx.rows.back().end(),
        {count_text(r.unterminated), count_text(r.kernel_count), count_text(r.left_out_kernels),
         ns_text(as_double(r.gpu_time_ns)), r.name});
    left_out += r.left_out_kernels;
    other_threads += r.other_thread_kernels;
  }
  HtmlTable memory = make_table("device-memory" + suffix,
                                {{"Device", true},
                                 {"Peak", true},
                                 {"Peak at", true},
                                 {"Allocations", true},
                                 {"Releases", true},
                                 {"In use at end", true},
                                 {"Name", false}},
                                "(no device-memory allocations in this capture)");
  for (const auto& r : s.device_memory) {
    memory.rows.push_back({std::to_string(r.device_id), bytes_text(as_double(r.peak_bytes)),
                           "+" + ns_text(as_double(r.peak_time_ns - run.time_range.begin_ns)),
                           count_text(r.allocations), count_text(r.releases),
                           bytes_text(as_double(r.bytes_at_end)), r.device_name});
  }
  std::string body;
  body += "<h3>CUDA GPU Kernel Summary</h3>\n" + cut(kernels, o.max_table_rows).to_html();
  body += "<h3>CUDA GPU Memory Operation Summary</h3>\n" + cut(memops, o.max_table_rows).to_html();
  body += "<h3>CUDA API Summary</h3>\n" + cut(api, o.max_table_rows).to_html();
  body +=
      "<h3>NVTX Range Summary (with GPU projection: " + std::string(to_string(s.nvtx_projection)) +
      ")</h3>\n<p class=\"note\">" +
      html_escape(nvtx_projection_note(s.nvtx_projection, left_out, other_threads)) + ".</p>\n" +
      cut(nvtx, o.max_table_rows).to_html();
  body += "<h3>Device Memory Summary</h3>\n" + memory.to_html();
  return {HtmlSlot::Summary, "summary" + suffix, labelled("Summary", run, runs), std::move(body)};
}

std::string file_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

}  // namespace

HtmlReport make_html_report(const std::vector<ExportRun>& runs, const HtmlReportOptions& options) {
  std::string title = "FuseLens report";
  std::string subtitle;
  if (runs.size() == 1) {
    title += " — " + file_name(runs[0].summary.path);
    subtitle = runs[0].summary.path;
    if (!runs[0].window.empty()) subtitle += "   · window: " + runs[0].window;
  } else if (runs.size() == 2) {
    title += " — " + file_name(runs[0].summary.path) + " vs " + file_name(runs[1].summary.path);
    subtitle = "A: " + runs[0].summary.path + "   B: " + runs[1].summary.path;
  }
  HtmlReport report(title, subtitle + "   · generated by " + options.generator);
  if (runs.empty()) return report;
  report.add(run_section(runs));
  report.add(devices_section(runs));
  report.add(overview_section(runs, options));
  if (runs.size() == 2) report.add(comparison_section(runs, options));
  for (const ExportRun& run : runs) report.add(summary_section(run, runs.size(), options));
  add_analysis_sections(report, runs);
  return report;
}

}  // namespace fuselens::analyzer
