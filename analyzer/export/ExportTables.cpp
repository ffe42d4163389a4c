#include "export/ExportTables.h"

#include <array>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#include "compare/CompareFormat.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

using nlohmann::json;

/// Columns of the CSV "runs" section: keys of summary_to_json(...)["run"], in a fixed order.
constexpr std::array<const char*, 14> kRunColumns{
    "path",           "host_name",    "fuselens_version",  "trace",       "start_utc_ns",
    "end_utc_ns",     "end_reason",   "exit_status",       "exit_signal", "dropped_records",
    "cuda_processes", "kernel_names", "working_directory", "command_line"};

/// Summary tables in CSV order, with the SummarySections flag that selects each alone.
struct SummaryTable {
  const char* section;
  bool SummarySections::*flag;
};
constexpr std::array<SummaryTable, 5> kSummaryTables{{
    {"kernels", &SummarySections::kernels},
    {"memory_operations", &SummarySections::memory_operations},
    {"api", &SummarySections::api},
    {"nvtx", &SummarySections::nvtx},
    {"device_memory", &SummarySections::device_memory},
}};

json side_by_side_json(const std::vector<SideBySideRow>& rows) {
  json out = json::array();
  for (const auto& r : rows) {
    out.push_back({{"name", r.name},
                   {"a_total_ns", r.a_total_ns},
                   {"b_total_ns", r.b_total_ns},
                   {"ratio", r.ratio ? json(*r.ratio) : json(nullptr)},
                   {"a_count", r.a_count},
                   {"b_count", r.b_count}});
  }
  return out;
}

/// A JSON scalar as CSV text: strings as they are, null as an empty field, arrays and objects
/// as compact JSON.
std::string field_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << csv_field(fields[i]);
  out << '\n';
}

/// One summary table as write_summary's CSV, under the section name `section`. The first line
/// write_summary writes is always its own "# <table>" marker (never data), so it is replaced.
void write_summary_section(std::ostream& out, const Summary& summary, const SummaryTable& table,
                           const std::string& section) {
  auto which = SummarySections::none();
  which.*table.flag = true;
  std::ostringstream csv;
  write_summary(csv, summary, OutputFormat::Csv, which);
  const std::string text = std::move(csv).str();
  const auto first_line_end = text.find('\n');
  out << "# " << section << '\n'
      << (first_line_end == std::string::npos ? std::string() : text.substr(first_line_end + 1));
}

void write_side_by_side_section(std::ostream& out, const std::string& section,
                                const std::vector<SideBySideRow>& rows) {
  out << "\n# " << section << '\n';
  write_csv_row(out, {"name", "a_total_ns", "b_total_ns", "ratio", "a_count", "b_count"});
  for (const auto& r : rows) {
    write_csv_row(out, {r.name, std::to_string(r.a_total_ns), std::to_string(r.b_total_ns),
                        r.ratio ? json(*r.ratio).dump() : std::string(), std::to_string(r.a_count),
                        std::to_string(r.b_count)});
  }
}

}  // namespace

json export_to_json(const std::vector<ExportRun>& runs) {
  json doc = {{"format", "fuselens-export"}, {"format_version", kExportFormatVersion}};
  json run_list = json::array();
  for (const ExportRun& run : runs) {
    run_list.push_back({{"label", run.label},
                        {"window", run.window.empty() ? "whole capture" : run.window},
                        {"summary", summary_to_json(run.summary)}});
  }
  doc["runs"] = std::move(run_list);
  if (runs.size() == 2) {
    const SideBySide joined = side_by_side(runs[0].summary, runs[1].summary);
    doc["side_by_side"] = {{"kernels", side_by_side_json(joined.kernels)},
                           {"memory_operations", side_by_side_json(joined.memory_operations)},
                           {"api", side_by_side_json(joined.api)},
                           {"nvtx", side_by_side_json(joined.nvtx)}};
  }
  if (!runs.empty() && runs.front().comparison) {
    doc["comparison"] = compare_to_json(*runs.front().comparison);
  }
  return doc;
}

void write_export_json(std::ostream& out, const std::vector<ExportRun>& runs) {
  out << export_to_json(runs).dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

void write_export_csv(std::ostream& out, const std::vector<ExportRun>& runs) {
  out << "# runs\n";
  std::vector<std::string> header{"label", "window"};
  header.insert(header.end(), kRunColumns.begin(), kRunColumns.end());
  write_csv_row(out, header);
  for (const ExportRun& run : runs) {
    const json info = summary_to_json(run.summary, SummarySections::none())["run"];
    std::vector<std::string> row{run.label, run.window.empty() ? "whole capture" : run.window};
    for (const char* key : kRunColumns) {
      row.push_back(info.contains(key) ? field_text(info[key]) : std::string());
    }
    write_csv_row(out, row);
  }
  for (const ExportRun& run : runs) {
    for (const SummaryTable& table : kSummaryTables) {
      out << '\n';
      write_summary_section(out, run.summary, table, run.label + ".summary." + table.section);
    }
  }
  if (runs.size() == 2) {
    const SideBySide joined = side_by_side(runs[0].summary, runs[1].summary);
    write_side_by_side_section(out, "side_by_side.kernels", joined.kernels);
    write_side_by_side_section(out, "side_by_side.memory_operations", joined.memory_operations);
    write_side_by_side_section(out, "side_by_side.api", joined.api);
    write_side_by_side_section(out, "side_by_side.nvtx", joined.nvtx);
  }
}

}  // namespace fuselens::analyzer
