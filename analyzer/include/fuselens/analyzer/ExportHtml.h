#pragma once
// ExportHtml: the HTML report of `prof-analyze export --format html`.
//
// One self-contained file: inline CSS, charts as inline SVG, no scripts, no fonts, images or
// style sheets fetched from anywhere (a Content-Security-Policy of default-src 'none' makes the
// browser refuse any that slipped in). Every name in it is escaped (ExportHtmlWidgets.h).
//
// The report is a list of sections, each in a named slot; slots are written in the order of
// HtmlSlot, sections within a slot in the order they were added, and a table of contents links
// them. make_html_report fills the built-in slots from one or two ExportRuns; the other slots
// are extension points for the analyses that come later, which add their own sections:
//   report.add({HtmlSlot::Flags, "flags", "Flags", body_html});
// Every slot leaves a marker comment "<!-- fuselens:slot NAME -->" in the document, so the place
// of an empty slot can be found in the output too.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "fuselens/analyzer/Export.h"

namespace fuselens::analyzer {

/// Where a section goes, in document order.
enum class HtmlSlot {
  Run,              ///< built in: capture, command line, host, how the run ended, processes
  Devices,          ///< built in: device properties
  Peaks,            ///< extension: datasheet peaks (FLOP/s, bandwidth) of each device
  Overview,         ///< built in: totals, top-kernel chart, device memory over time
  Flags,            ///< extension: findings of the flags analysis
  Comparison,       ///< built in for two runs: summaries side by side; compare adds more
  Summary,          ///< built in: kernel, memory-operation, API, NVTX, device-memory tables
  CallingContexts,  ///< extension: kernels by NVTX range / call stack
  Roofline,         ///< extension: roofline chart
  Heatmaps,         ///< extension: heatmaps (e.g. kernel time over the run)
  Appendix,         ///< extension: anything else
};

/// The slot's name in marker comments and anchors ("calling-contexts").
const char* to_string(HtmlSlot slot);

struct HtmlSection {
  HtmlSlot slot = HtmlSlot::Appendix;
  std::string id;         ///< unique anchor, letters, digits and '-' only
  std::string title;      ///< plain text; escaped when written
  std::string body_html;  ///< trusted HTML: build it with ExportHtmlWidgets.h, which escapes
};

class HtmlReport {
 public:
  /// `title` (plain text) heads the page; `subtitle` (plain text) goes under it.
  HtmlReport(std::string title, std::string subtitle);

  /// Adds `section` at the end of its slot.
  void add(HtmlSection section);
  /// Sections in document order.
  std::vector<HtmlSection> sections() const;
  /// The whole document.
  void write(std::ostream& out) const;

 private:
  std::string title_, subtitle_;
  std::vector<HtmlSection> sections_;
};

struct HtmlReportOptions {
  std::string generator = "FuseLens";  ///< named in the footer
  std::size_t max_table_rows = 500;    ///< longer tables are cut (the CSV/JSON exports are not)
  std::size_t chart_bars = 15;         ///< kernels in the top-kernels chart
};

/// The built-in sections for `runs`: one run, or two (labelled A and B) side by side.
HtmlReport make_html_report(const std::vector<ExportRun>& runs,
                            const HtmlReportOptions& options = {});

}  // namespace fuselens::analyzer
