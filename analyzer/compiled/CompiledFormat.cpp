#include "compiled/CompiledFormat.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "fuselens/db/Writer.h"

namespace fuselens::analyzer {
namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::vector<std::string> lines_of(const InductorKernel& k) { return k.lines(); }

std::vector<std::string> modules_of(const InductorKernel& k) {
  std::set<std::string> out;
  for (const auto& n : k.nodes) out.insert(n.module.empty() ? "<root>" : n.module);
  return {out.begin(), out.end()};
}

std::string join(const std::vector<std::string>& v, const char* sep, std::size_t limit = 0) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (limit && i == limit) return out + sep + fmt::format("+{}", v.size() - limit);
    out += (i ? sep : "") + v[i];
  }
  return out;
}

/// "file.py:39": the file's last path component and the line.
std::string short_line(const std::string& line) {
  const auto slash = line.rfind('/');
  return slash == std::string::npos ? line : line.substr(slash + 1);
}

/// The table's eager kernel names, short as Nsight Systems' "Name" column with --force-short
/// (db::short_kernel_name: no namespaces, template arguments or parameters); CSV and JSON keep
/// the full names.
std::vector<std::string> short_kernels(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto& n : names)
    out.push_back(n.empty() || n.front() == '<' ? n : db::short_kernel_name(n));
  return out;
}

const char* by_name(CompareBy by) { return by == CompareBy::Module ? "module" : "op"; }

json fusion_json(const FusionRow& f) {
  return {{"kernel", f.kernel.kernel},
          {"kind", f.kernel.kind},
          {"graph", f.kernel.graph},
          {"ops", f.kernel.ops},
          {"lines", lines_of(f.kernel)},
          {"modules", modules_of(f.kernel)},
          {"site", f.kernel.site},
          {"eager_ns", f.eager.gpu_ns},
          {"eager_launches", f.eager.launches},
          {"eager_bytes", f.eager.bytes},
          {"compiled_ns", f.compiled.gpu_ns},
          {"compiled_launches", f.compiled.launches},
          {"compiled_bytes", f.compiled.bytes},
          {"speedup", opt(f.speedup)},
          {"eager_kernels", f.eager_kernels}};
}

json group_json(const CompiledReport& r, const GroupRow& g) {
  return {{"by", by_name(r.by)},
          {"name", g.name},
          {"eager_ns", g.eager.gpu_ns},
          {"eager_launches", g.eager.launches},
          {"eager_bytes", g.eager.bytes},
          {"compiled_ns", g.compiled.gpu_ns},
          {"compiled_launches", g.compiled.launches},
          {"compiled_bytes", g.compiled.bytes},
          {"speedup", opt(g.speedup)}};
}

json totals_json(const CompiledReport& r) {
  return {{"eager_steps", r.eager_steps},
          {"compiled_steps", r.compiled_steps},
          {"marks", r.marks},
          {"eager_ns", r.eager_total.gpu_ns},
          {"eager_launches", r.eager_total.launches},
          {"eager_bytes", r.eager_total.bytes},
          {"compiled_ns", r.compiled_total.gpu_ns},
          {"compiled_launches", r.compiled_total.launches},
          {"compiled_bytes", r.compiled_total.bytes},
          {"speedup", opt(r.speedup)},
          {"eager_unmatched_ns", r.eager_unmatched.gpu_ns},
          {"compiled_unmatched_ns", r.compiled_unmatched.gpu_ns}};
}

std::string cell(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::vector<std::string> parts;
    for (const auto& e : v) parts.push_back(cell(e));
    return join(parts, ";");
  }
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  return v.dump();
}

void write_csv_section(std::ostream& out, const char* name, const std::vector<const char*>& cols,
                       const std::vector<json>& rows) {
  out << "# " << name << "\n";
  for (std::size_t i = 0; i < cols.size(); ++i) out << (i ? "," : "") << cols[i];
  out << "\n";
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      out << (i ? "," : "") << csv_field(cell(row.at(cols[i])));
    }
    out << "\n";
  }
  out << "\n";
}

void write_csv(std::ostream& out, const CompiledReport& r) {
  std::vector<json> fusions, groups;
  for (const auto& f : r.fusions) fusions.push_back(fusion_json(f));
  for (const auto& g : r.groups) groups.push_back(group_json(r, g));
  write_csv_section(out, "fusions",
                    {"kernel", "kind", "graph", "ops", "lines", "modules", "site", "eager_ns",
                     "eager_launches", "eager_bytes", "compiled_ns", "compiled_launches",
                     "compiled_bytes", "speedup", "eager_kernels"},
                    fusions);
  write_csv_section(out, "groups",
                    {"by", "name", "eager_ns", "eager_launches", "eager_bytes", "compiled_ns",
                     "compiled_launches", "compiled_bytes", "speedup"},
                    groups);
  write_csv_section(out, "totals",
                    {"eager_steps", "compiled_steps", "marks", "eager_ns", "eager_launches",
                     "eager_bytes", "compiled_ns", "compiled_launches", "compiled_bytes", "speedup",
                     "eager_unmatched_ns", "compiled_unmatched_ns"},
                    {totals_json(r)});
}

std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

void write_aligned(std::ostream& out, const std::vector<std::string>& headers,
                   const std::vector<std::vector<std::string>>& rows, std::size_t left_count) {
  std::vector<std::size_t> w;
  for (const auto& h : headers) w.push_back(width(h));
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string fill(w[i] - width(cells[i]), ' ');
      text += i == 0 ? " " : "  ";
      text += i < left_count ? cells[i] + fill : fill + cells[i];
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << '\n';
  };
  line(headers);
  std::vector<std::string> rule;
  for (const auto n : w) rule.emplace_back(n, '-');
  line(rule);
  for (const auto& row : rows) line(row);
  out << '\n';
}

std::string speedup_text(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f}x", *s) : "-";
}

std::string launches(double n) { return fmt::format("{:.1f}", n); }

void write_table(std::ostream& out, const CompiledReport& r) {
  out << "Eager:    " << r.eager_path << "\n";
  out << "Compiled: " << r.compiled_path << "\n";
  out << fmt::format(
      "Per step (eager {:g} steps, compiled {:g}): GPU time {} -> {} ({}), launches {} -> {}, "
      "copied+set {} -> {}; {} torch.compile kernel marks\n\n",
      r.eager_steps, r.compiled_steps, format_duration(r.eager_total.gpu_ns),
      format_duration(r.compiled_total.gpu_ns), speedup_text(r.speedup),
      launches(r.eager_total.launches), launches(r.compiled_total.launches),
      format_bytes(r.eager_total.bytes), format_bytes(r.compiled_total.bytes), r.marks);
  out << "Fusions (per step; eager = the eager work of the same ATen ops, an op shared by k "
         "fusions giving each 1/k):\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& f : r.fusions) {
    std::vector<std::string> lines;
    for (const auto& l : lines_of(f.kernel)) lines.push_back(short_line(l));
    rows.push_back({f.kernel.kernel, f.kernel.kind, join(f.kernel.ops, ",", 4),
                    lines.empty() ? "-" : join(lines, ",", 3), format_duration(f.eager.gpu_ns),
                    launches(f.eager.launches), format_duration(f.compiled.gpu_ns),
                    launches(f.compiled.launches), speedup_text(f.speedup),
                    f.eager_kernels.empty() ? "-" : join(short_kernels(f.eager_kernels), ", ", 2)});
  }
  if (rows.empty()) {
    out << " (no compiled kernel of a mark ran in the window)\n\n";
  } else {
    write_aligned(out,
                  {"Kernel", "Kind", "Ops", "Lines", "Eager", "Launches", "Compiled", "Launches",
                   "Speedup", "Eager kernels"},
                  rows, 4);
  }
  out << (r.by == CompareBy::Module ? "By module" : "By op") << " (per step):\n\n";
  rows.clear();
  for (const auto& g : r.groups) {
    rows.push_back({g.name, format_duration(g.eager.gpu_ns), launches(g.eager.launches),
                    format_bytes(g.eager.bytes), format_duration(g.compiled.gpu_ns),
                    launches(g.compiled.launches), format_bytes(g.compiled.bytes),
                    speedup_text(g.speedup)});
  }
  write_aligned(out,
                {r.by == CompareBy::Module ? "Module" : "Op", "Eager", "Launches", "Bytes",
                 "Compiled", "Launches", "Bytes", "Speedup"},
                rows, 1);
}

}  // namespace

json compiled_to_json(const CompiledReport& report) {
  json doc;
  doc["eager"] = report.eager_path;
  doc["compiled"] = report.compiled_path;
  doc["by"] = by_name(report.by);
  doc["totals"] = totals_json(report);
  doc["fusions"] = json::array();
  for (const auto& f : report.fusions) doc["fusions"].push_back(fusion_json(f));
  doc["groups"] = json::array();
  for (const auto& g : report.groups) doc["groups"].push_back(group_json(report, g));
  return doc;
}

void write_compiled(std::ostream& out, const CompiledReport& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table:
      write_table(out, report);
      return;
    case OutputFormat::Csv:
      write_csv(out, report);
      return;
    case OutputFormat::Json:
      out << compiled_to_json(report).dump(2) << '\n';
      return;
  }
}

}  // namespace fuselens::analyzer
