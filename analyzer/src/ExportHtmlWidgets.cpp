#include "fuselens/analyzer/ExportHtmlWidgets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "fuselens/analyzer/ExportJsonWriter.h"

namespace fuselens::analyzer {
namespace {

constexpr double kChartWidth = 1160;

/// `text` as valid UTF-8 (invalid bytes replaced by U+FFFD). Runs of bytes >= 0x80 go through
/// the JSON escaper, which validates them and escapes nothing else in such runs.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    // Copy ASCII runs directly; hand everything else to the validating escaper.
    const std::size_t start = i;
    while (i < text.size() && static_cast<unsigned char>(text[i]) < 0x80) ++i;
    out.append(text.substr(start, i - start));
    const std::size_t high = i;
    while (i < text.size() && static_cast<unsigned char>(text[i]) >= 0x80) ++i;
    if (i > high) append_json_escaped(out, text.substr(high, i - high));
  }
  return out;
}

/// A round step (1, 2 or 5 times a power of ten) giving about `count` ticks over `range`.
double nice_step(double range, int count) {
  if (!(range > 0)) return 1;
  const double raw = range / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double n = raw / magnitude;
  return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * magnitude;
}

std::string svg_open(double height, const std::string& title) {
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" "
      "xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>"
      "<text class=\"chart-title\" x=\"0\" y=\"16\">{}</text>",
      kChartWidth, height, html_escape(title), html_escape(title));
}

std::string legend(const std::vector<std::string>& labels, double y) {
  std::string out;
  double x = kChartWidth - 140.0 * static_cast<double>(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i, x += 140) {
    out += fmt::format(
        "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
        "<text x=\"{:.0f}\" y=\"{:.0f}\">{}</text>",
        x, y - 10, chart_colors()[i % chart_colors().size()], x + 18, y,
        html_escape(truncate_text(labels[i], 16)));
  }
  return out;
}

}  // namespace

std::string html_escape(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  for (const char c : valid) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string truncate_text(std::string_view text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (++chars > max_chars) return std::string(text.substr(0, i)) + "…";
  }
  return std::string(text);
}

std::string HtmlTable::to_html() const {
  if (rows.empty()) return "<p class=\"empty\">" + html_escape(empty_message) + "</p>\n";
  std::string out = "<div class=\"table-wrap\"><table";
  if (!id.empty()) out += " id=\"" + html_escape(id) + "\"";
  out += "><thead><tr>";
  for (const auto& c : columns) {
    out += c.numeric ? "<th class=\"num\">" : "<th>";
    out += html_escape(c.header) + "</th>";
  }
  out += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const HtmlColumn* column = i < columns.size() ? &columns[i] : nullptr;
      out += column && column->numeric  ? "<td class=\"num\">"
             : column && column->nowrap ? "<td class=\"name nowrap\">"
                                        : "<td class=\"name\">";
      out += html_escape(row[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (!note.empty()) out += "<p class=\"note\">" + html_escape(note) + "</p>\n";
  return out;
}

std::string html_key_value_table(const std::vector<std::pair<std::string, std::string>>& rows,
                                 std::string_view id) {
  std::string out = "<table";
  if (!id.empty()) out += " id=\"" + html_escape(id) + "\"";
  out += " class=\"kv\"><tbody>\n";
  for (const auto& [key, value] : rows) {
    out += "<tr><th>" + html_escape(key) + "</th><td class=\"name\">" + html_escape(value) +
           "</td></tr>\n";
  }
  return out + "</tbody></table>\n";
}

const std::vector<std::string>& chart_colors() {
  static const std::vector<std::string> colors{"#3b6fb6", "#e8843a", "#4a9e5c", "#b0479a"};
  return colors;
}

std::string svg_bar_chart(const BarChart& chart) {
  constexpr double kLabelRight = 440, kBarLeft = 450, kBarMax = 580, kBar = 14, kGap = 10;
  const std::size_t n_series = std::max<std::size_t>(1, chart.series.size());
  const double group = static_cast<double>(n_series) * (kBar + 2) + kGap;
  const double top = 34;
  const double height = top + group * static_cast<double>(chart.categories.size()) + 8;
  double max_value = 0;
  for (const auto& s : chart.series) {
    for (const double v : s.values) max_value = std::max(max_value, v);
  }
  std::string out = svg_open(height, chart.title);
  if (chart.series.size() > 1) {
    std::vector<std::string> labels;
    for (const auto& s : chart.series) labels.push_back(s.label);
    out += legend(labels, 16);
  }
  for (std::size_t c = 0; c < chart.categories.size(); ++c) {
    const double y0 = top + group * static_cast<double>(c);
    const std::string& name = chart.categories[c];
    out += fmt::format(
        "<text class=\"bar-label\" x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">"
        "<title>{}</title>{}</text>",
        kLabelRight, y0 + static_cast<double>(n_series) * (kBar + 2) / 2 + 4, html_escape(name),
        html_escape(truncate_text(name, 62)));
    for (std::size_t s = 0; s < chart.series.size(); ++s) {
      const auto& series = chart.series[s];
      const double v = c < series.values.size() ? std::max(0.0, series.values[c]) : 0.0;
      if (v == 0 && chart.series.size() > 1) continue;  // absent from this series
      const double w = max_value > 0 ? std::max(1.0, kBarMax * v / max_value) : 1.0;
      const double y = y0 + static_cast<double>(s) * (kBar + 2);
      out += fmt::format(
          "<rect x=\"{:.0f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\">"
          "<title>{}: {}</title></rect>"
          "<text class=\"bar-value\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>",
          kBarLeft, y, w, kBar, chart_colors()[s % chart_colors().size()],
          html_escape(series.label), html_escape(chart.format_value(v)), kBarLeft + w + 6,
          y + kBar - 3, html_escape(chart.format_value(v)));
    }
  }
  return out + "</svg>\n";
}

std::string svg_step_chart(const StepChart& chart) {
  constexpr double kLeft = 96, kRight = kChartWidth - 20, kTop = 36, kBottom = 270;
  constexpr double kHeight = 312;
  double y_max = 0;
  for (const auto& s : chart.series) {
    for (const auto& p : s.points) y_max = std::max(y_max, p.second);
  }
  const double y_step = nice_step(y_max > 0 ? y_max : 1, 5);
  const double y_top = std::max(y_step, std::ceil(y_max / y_step) * y_step);
  const double x_span = chart.x_max > chart.x_min ? chart.x_max - chart.x_min : 1;
  const auto px = [&](double x) { return kLeft + (kRight - kLeft) * (x - chart.x_min) / x_span; };
  const auto py = [&](double y) { return kBottom - (kBottom - kTop) * y / y_top; };

  std::string out = svg_open(kHeight, chart.title);
  if (chart.series.size() > 1) {
    std::vector<std::string> labels;
    for (const auto& s : chart.series) labels.push_back(s.label);
    out += legend(labels, 16);
  }
  for (double y = 0; y <= y_top * (1 + 1e-9); y += y_step) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
        kLeft, kRight, py(y), py(y), kLeft - 6, py(y) + 4, html_escape(chart.format_y(y)));
  }
  const double x_step = nice_step(x_span, 8);
  for (double x = std::ceil(chart.x_min / x_step) * x_step; x <= chart.x_max + x_step * 1e-9;
       x += x_step) {
    out += fmt::format(
        "<line class=\"axis\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>",
        px(x), px(x), kBottom, kBottom + 5, px(x), kBottom + 19, html_escape(chart.format_x(x)));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>"
      "<line class=\"axis\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>",
      kLeft, kRight, kBottom, kBottom, kLeft, kLeft, kTop, kBottom);
  if (!chart.x_label.empty()) {
    out += fmt::format(
        "<text class=\"axis-label\" x=\"{:.0f}\" y=\"{:.0f}\" "
        "text-anchor=\"middle\">{}</text>",
        (kLeft + kRight) / 2, kHeight - 6, html_escape(chart.x_label));
  }
  if (!chart.y_label.empty()) {
    out += fmt::format("<text class=\"axis-label\" x=\"{:.0f}\" y=\"{:.0f}\">{}</text>", kLeft,
                       kTop - 8, html_escape(chart.y_label));
  }
  for (std::size_t s = 0; s < chart.series.size(); ++s) {
    std::string path = fmt::format("M{:.1f},{:.1f}", px(chart.x_min), py(0));
    for (const auto& [x, y] : chart.series[s].points) {
      path += fmt::format("H{:.1f}V{:.1f}", px(std::clamp(x, chart.x_min, chart.x_max)), py(y));
    }
    path += fmt::format("H{:.1f}", px(chart.x_max));
    out += fmt::format(
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"><title>{}</title></path>",
        path, chart_colors()[s % chart_colors().size()], html_escape(chart.series[s].label));
  }
  return out + "</svg>\n";
}

}  // namespace fuselens::analyzer
