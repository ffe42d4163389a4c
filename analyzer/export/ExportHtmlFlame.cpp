// The HTML report's flame graph of the calling-context tree (export/ExportHtmlFlame.h).
#include "export/ExportHtmlFlame.h"

#include <fmt/format.h>

#include "cct/FlameGraph.h"
#include "export/ExportHtmlWidgets.h"
#include "summary/SummaryFormat.h"

namespace fuselens::analyzer {
namespace {

constexpr double kWidth = 1160, kTop = 28, kBoxH = 18, kCharW = 6.6;  // DejaVu Sans Mono 11 px

// Colours by kind of row: the user's frames warm, folded framework frames grey-blue, GPU
// operations green, the rows the analysis adds (backward, phases) violet.
const char* fill_of(const CctRow& row) {
  switch (row.kind) {
    case CctRow::Kind::GpuOperation:
      return "#7fbf7b";
    case CctRow::Kind::BackwardOp:
    case CctRow::Kind::BackwardThread:
    case CctRow::Kind::Phase:
      return "#b2abd2";
    case CctRow::Kind::Root:
      return "#d9d9d9";
    default:
      break;
  }
  return !row.label.empty() && row.label.front() == '[' ? "#9ecae1" : "#fdb863";
}

}  // namespace

std::string svg_flame_graph(const CctReport& report, const std::string& title, int max_levels) {
  const auto boxes = flame_layout(report, 0, 1.0 / 1000.0);
  if (boxes.empty()) return {};
  int levels = 0;
  for (const auto& b : boxes)
    levels = b.level <= max_levels ? std::max(levels, b.level + 1) : levels;
  const double height = kTop + kBoxH * levels + 4;
  std::string out = fmt::format(
      "<svg class=\"chart flame\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
      "xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>"
      "<text class=\"chart-title\" x=\"0\" y=\"16\">{}</text>",
      kWidth, height, html_escape(title), html_escape(title));
  const double total = static_cast<double>(report.rows.front().inclusive.get(report.metric));
  std::size_t drawn = 0;
  for (const auto& b : boxes) {
    if (b.level > max_levels) continue;
    const CctRow& row = report.rows[static_cast<std::size_t>(b.row)];
    const double x = b.x0 * kWidth, w = (b.x1 - b.x0) * kWidth, y = kTop + kBoxH * b.level;
    const double value = static_cast<double>(row.inclusive.get(report.metric));
    const std::string amount = report.metric == CctMetric::GpuTime ? format_duration(value)
                               : report.metric == CctMetric::Bytes
                                   ? format_bytes(value)
                                   : fmt::format("{:.0f} launches", value);
    const std::string tip = fmt::format("{}: {} ({:.1f} %)", row.label, amount,
                                        total > 0 ? 100.0 * value / total : 0.0);
    out += fmt::format(
        "<g><title>{}</title><rect x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
        "fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"/>",
        html_escape(tip), x, y, w, kBoxH - 1, fill_of(row));
    const auto chars = static_cast<std::size_t>((w - 6) / kCharW);
    if (chars >= 4) {
      out += fmt::format("<text class=\"bar-label\" x=\"{:.2f}\" y=\"{:.0f}\">{}</text>", x + 3,
                         y + 13, html_escape(truncate_text(row.label, chars)));
    }
    out += "</g>";
    ++drawn;
  }
  out += "</svg>\n";
  out += fmt::format(
      "<p class=\"note\">{} of {} rows drawn (narrower than 0.1 % of the width or more than {} "
      "levels deep: left out); hover a box for its name and GPU time.</p>\n",
      drawn, report.rows.size(), max_levels);
  return out;
}

}  // namespace fuselens::analyzer
