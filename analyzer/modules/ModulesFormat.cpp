#include "modules/ModulesFormat.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fuselens::analyzer {
namespace {

std::string peak_text(std::int64_t bytes) {
  return bytes < 0 ? "-" : format_bytes(static_cast<double>(bytes));
}

nlohmann::json cost_json(const ModuleCost& c) {
  return {{"gpu_time_ns", c.gpu_ns}, {"launches", c.launches}, {"bytes", c.bytes}};
}

struct Column {
  const char* key;
  std::int64_t (*get)(const ModuleRow&);
};

// The integer columns of CSV and JSON, in order.
const std::vector<Column>& columns() {
  static const std::vector<Column> c = {
      {"calls", [](const ModuleRow& r) { return r.calls; }},
      {"fwd_incl_gpu_time_ns", [](const ModuleRow& r) { return r.forward_inclusive.gpu_ns; }},
      {"fwd_excl_gpu_time_ns", [](const ModuleRow& r) { return r.forward_exclusive.gpu_ns; }},
      {"bwd_incl_gpu_time_ns", [](const ModuleRow& r) { return r.backward_inclusive.gpu_ns; }},
      {"bwd_excl_gpu_time_ns", [](const ModuleRow& r) { return r.backward_exclusive.gpu_ns; }},
      {"fwd_incl_launches", [](const ModuleRow& r) { return r.forward_inclusive.launches; }},
      {"fwd_excl_launches", [](const ModuleRow& r) { return r.forward_exclusive.launches; }},
      {"bwd_incl_launches", [](const ModuleRow& r) { return r.backward_inclusive.launches; }},
      {"bwd_excl_launches", [](const ModuleRow& r) { return r.backward_exclusive.launches; }},
      {"fwd_incl_bytes", [](const ModuleRow& r) { return r.forward_inclusive.bytes; }},
      {"fwd_excl_bytes", [](const ModuleRow& r) { return r.forward_exclusive.bytes; }},
      {"bwd_incl_bytes", [](const ModuleRow& r) { return r.backward_inclusive.bytes; }},
      {"bwd_excl_bytes", [](const ModuleRow& r) { return r.backward_exclusive.bytes; }},
      {"peak_fwd_bytes", [](const ModuleRow& r) { return r.peak_forward_bytes; }},
      {"peak_bwd_bytes", [](const ModuleRow& r) { return r.peak_backward_bytes; }},
  };
  return c;
}

std::string parent_path(const ModulesReport& report, const ModuleRow& row) {
  return row.parent < 0 ? "" : report.rows[static_cast<std::size_t>(row.parent)].path;
}

void write_table(std::ostream& out, const ModulesReport& report, std::optional<int> max_depth) {
  const auto& b = report.backward_total;
  out << fmt::format(
      "Backward GPU time in modules: {:.1f} % ({} of {})\n",
      100.0 * report.backward_attributed_share(),
      format_duration(static_cast<double>(b.gpu_ns - report.backward_outside.gpu_ns)),
      format_duration(static_cast<double>(b.gpu_ns)));
  out << fmt::format(
      "Outside every module: forward {} ({} launches), backward {} ({} launches)\n\n",
      format_duration(static_cast<double>(report.forward_outside.gpu_ns)),
      report.forward_outside.launches,
      format_duration(static_cast<double>(report.backward_outside.gpu_ns)),
      report.backward_outside.launches);
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"Module", "Calls", "Fwd GPU (incl)", "Fwd GPU (excl)", "Bwd GPU (incl)",
                   "Bwd GPU (excl)", "Launches", "Bytes", "Peak fwd", "Peak bwd"});
  for (const auto& r : report.rows) {
    if (max_depth && r.depth > *max_depth) continue;
    const auto d = [](std::int64_t ns) { return format_duration(static_cast<double>(ns)); };
    cells.push_back(
        {std::string(static_cast<std::size_t>(2 * r.depth), ' ') + r.name, std::to_string(r.calls),
         d(r.forward_inclusive.gpu_ns), d(r.forward_exclusive.gpu_ns),
         d(r.backward_inclusive.gpu_ns), d(r.backward_exclusive.gpu_ns),
         std::to_string(r.forward_inclusive.launches + r.backward_inclusive.launches),
         format_bytes(static_cast<double>(r.forward_inclusive.bytes + r.backward_inclusive.bytes)),
         peak_text(r.peak_forward_bytes), peak_text(r.peak_backward_bytes)});
  }
  std::vector<std::size_t> width(cells.front().size(), 0);
  const auto length = [](const std::string& s) {  // code points ("µs" is two bytes, one column)
    std::size_t n = 0;
    for (const unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const auto& row : cells)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], length(row[i]));
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - length(row[i]), ' ');
      line += i == 0 ? row[i] + pad : "  " + pad + row[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

}  // namespace

void write_modules(std::ostream& out, const ModulesReport& report, OutputFormat format,
                   std::optional<int> max_depth) {
  switch (format) {
    case OutputFormat::Table:
      write_table(out, report, max_depth);
      return;
    case OutputFormat::Csv: {
      out << "path,name,depth,parent_path";
      for (const auto& c : columns()) out << ',' << c.key;
      out << '\n';
      for (const auto& r : report.rows) {
        if (max_depth && r.depth > *max_depth) continue;
        out << csv_field(r.path) << ',' << csv_field(r.name) << ',' << r.depth << ','
            << csv_field(parent_path(report, r));
        for (const auto& c : columns()) out << ',' << c.get(r);
        out << '\n';
      }
      return;
    }
    case OutputFormat::Json: {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : report.rows) {
        if (max_depth && r.depth > *max_depth) continue;
        nlohmann::json row = {{"path", r.path},
                              {"name", r.name},
                              {"depth", r.depth},
                              {"parent_path", parent_path(report, r)}};
        for (const auto& c : columns()) row[c.key] = c.get(r);
        rows.push_back(std::move(row));
      }
      const nlohmann::json doc = {{"backward_attributed_share", report.backward_attributed_share()},
                                  {"backward_gpu_time_ns", report.backward_total.gpu_ns},
                                  {"forward_outside", cost_json(report.forward_outside)},
                                  {"backward_outside", cost_json(report.backward_outside)},
                                  {"rows", std::move(rows)}};
      out << doc.dump(2) << '\n';
      return;
    }
  }
}

}  // namespace fuselens::analyzer
