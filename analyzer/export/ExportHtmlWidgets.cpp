#include "export/ExportHtmlWidgets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "export/ExportJsonWriter.h"

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

/// Colour of `t` in [0, 1] on a light-yellow -> orange -> dark-red scale.
std::string heat_color(double t) {
  static constexpr double kStops[3][3] = {{255, 243, 196}, {245, 158, 66}, {163, 32, 42}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  const std::size_t i = t < 0.5 ? 0 : 1;
  const double f = (t - 0.5 * static_cast<double>(i)) * 2;
  const auto mix = [&](std::size_t c) {
    return static_cast<int>(std::lround(kStops[i][c] + (kStops[i + 1][c] - kStops[i][c]) * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2));
}

/// 10^exponent with an SI prefix: "1", "10", "100", "1 k", ... "100 P"; plain decimals below 1.
std::string decade_text(int exponent, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  if (exponent < 0) return fmt::format("{:g}{}", std::pow(10.0, exponent), unit);
  const int group = std::min(exponent / 3, 6);
  return fmt::format("{:g} {}{}", std::pow(10.0, exponent - 3 * group), kPrefixes[group], unit);
}

/// `value` with an SI prefix and three significant digits ("67 T", "3.35 T").
std::string si_text(double value, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int group = 0;
  while (group < 6 && std::abs(value) >= 1000) {
    value /= 1000;
    ++group;
  }
  return fmt::format("{:.3g} {}{}", value, kPrefixes[group], unit);
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

namespace {
/// Code points in UTF-8 `text` (continuation bytes not counted).
std::size_t utf8_length(std::string_view text) {
  std::size_t chars = 0;
  for (const char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return chars;
}
}  // namespace

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

std::string svg_heatmap(const Heatmap& chart) {
  constexpr double kLabelRight = 330, kCellLeft = 340, kCellH = 26;
  const double n_cols = static_cast<double>(std::max<std::size_t>(1, chart.columns.size()));
  const double cell_w = std::min(180.0, (kChartWidth - kCellLeft) / n_cols);
  // Column labels that are wider than their cell (about 6.6 px a character at the chart's font)
  // are drawn rotated by 35 degrees, and the grid moves down to make room for them.
  constexpr double kCharWidth = 6.6, kRotation = 35;
  double widest = 0;
  for (const auto& column : chart.columns) {
    widest =
        std::max(widest, kCharWidth * static_cast<double>(utf8_length(truncate_text(column, 24))));
  }
  const bool rotated = widest > cell_w - 6;
  const double kTop = rotated ? 30 + widest * std::sin(kRotation * 3.14159265358979 / 180) : 50;
  double lo = 0, hi = 0;
  for (const auto& row : chart.values) {
    for (const auto& v : row) {
      if (!v || !(*v > 0) || !std::isfinite(*v)) continue;
      lo = lo > 0 ? std::min(lo, *v) : *v;
      hi = std::max(hi, *v);
    }
  }
  const auto scale = [&](double v) {
    return hi > lo ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : 0.5;
  };
  const double grid_bottom = kTop + kCellH * static_cast<double>(chart.rows.size());
  std::string out = svg_open(grid_bottom + 56, chart.title);
  for (std::size_t c = 0; c < chart.columns.size(); ++c) {
    const double x = kCellLeft + cell_w * (static_cast<double>(c) + 0.5);
    if (rotated) {
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"start\" "
          "transform=\"rotate(-{:.0f} {:.1f} {:.0f})\">{}</text>",
          x - 4, kTop - 6, kRotation, x - 4, kTop - 6,
          html_escape(truncate_text(chart.columns[c], 24)));
    } else {
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>", x,
                         kTop - 8, html_escape(truncate_text(chart.columns[c], 24)));
    }
  }
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const double y = kTop + kCellH * static_cast<double>(r);
    out += fmt::format(
        "<text class=\"bar-label\" x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">"
        "<title>{}</title>{}</text>",
        kLabelRight, y + kCellH / 2 + 4, html_escape(chart.rows[r]),
        html_escape(truncate_text(chart.rows[r], 40)));
    for (std::size_t c = 0; c < chart.columns.size(); ++c) {
      const double x = kCellLeft + cell_w * static_cast<double>(c);
      const std::optional<double> v =
          r < chart.values.size() && c < chart.values[r].size() ? chart.values[r][c] : std::nullopt;
      if (!v || !(*v > 0) || !std::isfinite(*v)) {
        out += fmt::format(
            "<rect class=\"heat-empty\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
            "height=\"{:.0f}\" fill=\"#eef0f3\" stroke=\"#fff\"><title>no data</title></rect>",
            x, y, cell_w, kCellH);
        continue;
      }
      const double t = scale(*v);
      const std::string text =
          chart.format_value ? chart.format_value(*v) : fmt::format("{:g}", *v);
      out += fmt::format(
          "<rect class=\"heat-cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\" stroke=\"#fff\"><title>{} · {}: {}</title></rect>"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" style=\"fill:{}\">{}</text>",
          x, y, cell_w, kCellH, heat_color(t), html_escape(chart.rows[r]),
          html_escape(chart.columns[c]), html_escape(text), x + cell_w / 2, y + kCellH / 2 + 4,
          t > 0.62 ? "#fff" : "#1d2430", html_escape(text));
    }
  }
  if (hi > 0) {  // colour scale: six swatches from the smallest to the largest value
    const double y = grid_bottom + 18;
    out +=
        fmt::format("<text class=\"tick\" x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>",
                    kLabelRight, y + 13, html_escape(chart.scale_label + " (log scale)"));
    constexpr int kSwatches = 6;
    for (int i = 0; i < kSwatches; ++i) {
      const double t = static_cast<double>(i) / (kSwatches - 1);
      const double v = hi > lo ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo;
      const std::string text = chart.format_value ? chart.format_value(v) : fmt::format("{:g}", v);
      out += fmt::format(
          "<rect class=\"heat-legend\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"90\" height=\"18\" "
          "fill=\"{}\"/><text class=\"tick\" x=\"{:.0f}\" y=\"{:.0f}\" "
          "text-anchor=\"middle\">{}</text>",
          kCellLeft + 92.0 * i, y, heat_color(t), kCellLeft + 92.0 * i + 45, y + 32,
          html_escape(text));
    }
  }
  return out + "</svg>\n";
}

std::string svg_roofline_chart(const RooflinePlot& chart) {
  constexpr double kLeft = 96, kRight = kChartWidth - 170, kTop = 44, kBottom = 400;
  constexpr double kHeight = 444;
  double max_compute = 0, max_memory = 0, min_ridge = 0, max_ridge = 0;
  for (const auto& c : chart.compute) max_compute = std::max(max_compute, c.value);
  for (const auto& m : chart.memory) max_memory = std::max(max_memory, m.value);
  const auto note_ridge = [&](double ridge) {
    if (!(ridge > 0) || !std::isfinite(ridge)) return;
    min_ridge = min_ridge > 0 ? std::min(min_ridge, ridge) : ridge;
    max_ridge = std::max(max_ridge, ridge);
  };
  for (const auto& m : chart.memory) {
    if (m.value > 0) note_ridge(max_compute / m.value);
  }
  for (const auto& c : chart.compute) {
    if (c.value > 0 && max_memory > 0) note_ridge(c.value / max_memory);
  }
  double x_min = min_ridge > 0 ? min_ridge / 10 : 0, x_max = max_ridge * 10;
  double y_min = 0, y_max = max_compute;
  for (const auto& p : chart.points) {
    if (!(p.intensity > 0) || !(p.flops_per_s > 0)) continue;
    x_min = x_min > 0 ? std::min(x_min, p.intensity) : p.intensity;
    x_max = std::max(x_max, p.intensity);
    y_min = y_min > 0 ? std::min(y_min, p.flops_per_s) : p.flops_per_s;
    y_max = std::max(y_max, p.flops_per_s);
  }
  const int x_lo = x_min > 0 ? static_cast<int>(std::floor(std::log10(x_min))) : -1;
  const int x_hi =
      std::max(x_lo + 1, x_max > 0 ? static_cast<int>(std::ceil(std::log10(x_max * 1.01))) : 3);
  const int y_hi = y_max > 0 ? static_cast<int>(std::ceil(std::log10(y_max * 1.05))) : 15;
  const int y_lo =
      std::min(y_hi - 3, y_min > 0 ? static_cast<int>(std::floor(std::log10(y_min))) : y_hi - 4);
  const auto px = [&](double x) {
    return kLeft + (kRight - kLeft) * (std::log10(x) - x_lo) / (x_hi - x_lo);
  };
  const auto py = [&](double y) {
    return kBottom - (kBottom - kTop) * (std::log10(y) - y_lo) / (y_hi - y_lo);
  };
  std::string out = svg_open(kHeight, chart.title);
  for (std::size_t i = 0; i < chart.series.size(); ++i) {  // legend, right-aligned
    const double x = kChartWidth - 210.0 * static_cast<double>(chart.series.size() - i);
    out += fmt::format(
        "<circle cx=\"{:.0f}\" cy=\"12\" r=\"5\" fill=\"{}\"/><text x=\"{:.0f}\" "
        "y=\"16\">{}</text>",
        x + 6, chart_colors()[i % chart_colors().size()], x + 16,
        html_escape(truncate_text(chart.series[i], 28)));
  }
  for (int e = x_lo; e <= x_hi; ++e) {
    const double x = px(std::pow(10.0, e));
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>",
        x, x, kTop, kBottom, x, kBottom + 18, html_escape(decade_text(e, "")));
  }
  for (int e = y_lo; e <= y_hi; ++e) {
    const double y = py(std::pow(10.0, e));
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>",
        kLeft, kRight, y, y, kLeft - 6, y + 4, html_escape(decade_text(e, "FLOP/s")));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0:.0f}\" x2=\"{1:.0f}\" y1=\"{2:.0f}\" y2=\"{2:.0f}\"/>"
      "<line class=\"axis\" x1=\"{0:.0f}\" x2=\"{0:.0f}\" y1=\"{3:.0f}\" y2=\"{2:.0f}\"/>"
      "<text class=\"axis-label\" x=\"{4:.0f}\" y=\"{5:.0f}\" text-anchor=\"middle\">"
      "arithmetic intensity (FLOP per DRAM byte)</text>"
      "<text class=\"axis-label\" x=\"{0:.0f}\" y=\"{6:.0f}\">achieved FLOP/s</text>",
      kLeft, kRight, kBottom, kTop, (kLeft + kRight) / 2, kHeight - 4, kTop - 10);
  const double x_left = std::pow(10.0, x_lo), x_right = std::pow(10.0, x_hi);
  const double y_bottom = std::pow(10.0, y_lo);
  for (const auto& m : chart.memory) {  // diagonal up to the highest compute roof
    if (!(m.value > 0)) continue;
    const double x0 = std::max(x_left, y_bottom / m.value);
    const double x1 = max_compute > 0 ? std::min(x_right, max_compute / m.value) : x_right;
    if (!(x0 < x1)) continue;
    // The label runs along the diagonal, above it, a third of the way up.
    const double lx = std::sqrt(x0 * std::sqrt(x0 * x1));
    const double angle =
        std::atan2(py(m.value * x1) - py(m.value * x0), px(x1) - px(x0)) * 180 / 3.14159265358979;
    out += fmt::format(
        "<line class=\"roof roof-memory\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#5b6577\" stroke-width=\"2\" stroke-dasharray=\"6 3\"><title>{}</title></line>"
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{:.1f}\" transform=\"rotate({:.1f} {:.1f} {:.1f})\">"
        "{}</text>",
        px(x0), py(m.value * x0), px(x1), py(m.value * x1),
        html_escape(m.label + " " + si_text(m.value, "B/s")), px(lx), py(m.value * lx) - 6, angle,
        px(lx), py(m.value * lx), html_escape(m.label + " " + si_text(m.value, "B/s")));
  }
  for (const auto& c : chart.compute) {  // horizontal from the ridge with the fastest memory
    if (!(c.value > 0)) continue;
    const double x0 = max_memory > 0 ? std::max(x_left, c.value / max_memory) : x_left;
    if (!(x0 < x_right)) continue;
    out += fmt::format(
        "<line class=\"roof roof-compute\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#1d2430\" stroke-width=\"2\"><title>{}</title></line>"
        "<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\">{}</text>",
        px(x0), py(c.value), kRight, py(c.value), html_escape(c.label), kRight + 6, py(c.value) + 4,
        html_escape(c.label + " " + si_text(c.value, "FLOP/s")));
  }
  for (const auto& p : chart.points) {
    if (!(p.intensity > 0) || !(p.flops_per_s > 0)) continue;
    out += fmt::format(
        "<circle class=\"roof-point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\" "
        "fill-opacity=\"0.85\" stroke=\"#fff\"><title>{}: {:.3g} FLOP/byte, {}</title></circle>",
        px(p.intensity), py(p.flops_per_s), chart_colors()[p.series % chart_colors().size()],
        html_escape(p.label), p.intensity, html_escape(si_text(p.flops_per_s, "FLOP/s")));
  }
  return out + "</svg>\n";
}

}  // namespace fuselens::analyzer
