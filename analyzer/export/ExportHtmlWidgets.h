#pragma once
// ExportHtmlWidgets: the building blocks of the HTML report (ExportHtml.h), public so that the
// analyses which add report sections (flags, calling contexts, roofline, heatmaps, compare)
// build their section bodies the same way: escaped text, tables, and charts as inline SVG.
//
// Every function here escapes all text it is given (kernel names are full of <, > and &; NVTX
// text and paths are the user's bytes), so its output is safe to put in a section body. Invalid
// UTF-8 is replaced by U+FFFD, so the document is always valid UTF-8. Charts are plain SVG
// (no scripts, no external resources) that scale to the page width.
//
// Errors: none.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fuselens::analyzer {

/// `text` with & < > " ' as character references (safe in element content and in quoted
/// attribute values).
std::string html_escape(std::string_view text);

/// At most `max_chars` code points of `text`, ending in "…" when cut.
std::string truncate_text(std::string_view text, std::size_t max_chars);

struct HtmlColumn {
  std::string header;
  bool numeric = false;  ///< right-aligned, tabular figures
  bool nowrap = false;   ///< text kept on one line (short names such as device names)
};

/// A table of plain-text cells (escaped when rendered). Cells in a "name" column (any column
/// that is not numeric) wrap anywhere, so long kernel names do not widen the page.
struct HtmlTable {
  std::string id;  ///< the table element's id; empty for none
  std::vector<HtmlColumn> columns;
  std::vector<std::vector<std::string>> rows;  ///< each row as many cells as columns
  std::string empty_message = "(none)";        ///< shown instead of an empty table
  std::string note;  ///< a line under the table (e.g. "12 more rows in the CSV export")

  std::string to_html() const;
};

/// A two-column key/value table (row headers on the left).
std::string html_key_value_table(const std::vector<std::pair<std::string, std::string>>& rows,
                                 std::string_view id = {});

/// Fill colours of chart series, in series order (A, B, ...), as CSS colours.
const std::vector<std::string>& chart_colors();

/// A horizontal bar chart: one group of bars per category, one bar per series in each group.
struct BarChart {
  std::string title;
  std::vector<std::string> categories;  ///< labels, cut to 62 code points (full text on hover)
  struct Series {
    std::string label;
    std::vector<double> values;  ///< one per category, >= 0 (0 draws no bar with 2+ series)
  };
  std::vector<Series> series;                       ///< a legend is drawn for two or more
  std::function<std::string(double)> format_value;  ///< the number printed after each bar
};
std::string svg_bar_chart(const BarChart& chart);

/// A step chart (a value that holds until the next point), e.g. memory in use over time.
struct StepChart {
  std::string title;
  double x_min = 0, x_max = 1;  ///< the x axis extent; each series is drawn from x_min at 0
  struct Series {
    std::string label;
    std::vector<std::pair<double, double>> points;  ///< (x, y) in x order; held until x_max
  };
  std::vector<Series> series;
  std::function<std::string(double)> format_x, format_y;  ///< tick labels
  std::string x_label, y_label;
};
std::string svg_step_chart(const StepChart& chart);

/// A heatmap: one cell per row and column, coloured on a logarithmic scale between the smallest
/// and the largest value, with the value printed in the cell and a colour-scale legend. Absent
/// values draw an empty (hatched-grey) cell with class "heat-empty"; present ones have class
/// "heat-cell".
struct Heatmap {
  std::string title;
  std::vector<std::string> rows;     ///< labels, cut to 40 code points (full text on hover)
  std::vector<std::string> columns;  ///< labels
  std::vector<std::vector<std::optional<double>>> values;  ///< [row][column], > 0 to colour
  std::function<std::string(double)> format_value;         ///< the printed value
  std::string scale_label;                                 ///< e.g. "median GPU time / iteration"
};
std::string svg_heatmap(const Heatmap& chart);

/// A log-log roofline chart: x = arithmetic intensity (FLOP/byte), y = FLOP/s; memory roofs are
/// diagonals (y = bandwidth x intensity) up to the highest compute roof, compute roofs are
/// horizontal from their ridge point with the fastest memory roof. Points (class "roof-point")
/// are coloured by series; a legend names the series.
struct RooflinePlot {
  std::string title;
  struct Roof {
    std::string label;
    double value = 0;  ///< FLOP/s (compute) or bytes/s (memory); <= 0 is skipped
  };
  std::vector<Roof> compute, memory;
  struct Point {
    std::string label;                      ///< shown on hover
    double intensity = 0, flops_per_s = 0;  ///< both > 0, else skipped
    std::size_t series = 0;                 ///< index into series
  };
  std::vector<std::string> series;  ///< series labels (legend)
  std::vector<Point> points;
};
std::string svg_roofline_chart(const RooflinePlot& chart);

}  // namespace fuselens::analyzer
