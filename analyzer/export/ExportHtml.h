#pragma once
// ExportHtml: the HTML report of `prof-analyze export --format html`.
//
// One self-contained file: inline CSS, charts as inline SVG, no scripts, no fonts, images or
// style sheets fetched from anywhere (a Content-Security-Policy of default-src 'none' makes the
// browser refuse any that slipped in). Every name in it is escaped (ExportHtmlWidgets.h).
//
// The report is a list of sections, each in a named slot; slots are written in the order of
// HtmlSlot, sections within a slot in the order they were added, and a table of contents links
// them. make_html_report fills the built-in slots from one or two ExportRuns and the analysis
// slots (peaks, flags, calling contexts, roofline, heatmaps) from their ExportAnalyses
// (ExportHtmlAnalyses.cpp); any slot takes further sections:
//   report.add({HtmlSlot::Flags, "flags", "Flags", body_html});
// Every slot leaves a marker comment "<!-- fuselens:slot NAME -->" in the document, so the place
// of an empty slot can be found in the output too.
//
// Errors: none of its own; stream errors are left in the stream's state.

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "export/Export.h"

namespace fuselens::analyzer {

/// Where a section goes, in document order.
enum class HtmlSlot {
  Run,              ///< built in: capture, command line, host, how the run ended, processes
  Devices,          ///< built in: device properties
  Peaks,            ///< analyses: datasheet peaks (FLOP/s, bandwidth) matched to the device
  Overview,         ///< built in: totals, top-kernel chart, device memory over time
  Flags,            ///< analyses: findings of the flags analysis
  Comparison,       ///< built in for two runs: summaries side by side; one run: unfused vs fused
  Summary,          ///< built in: kernel, memory-operation, API, NVTX, device-memory tables
  CallingContexts,  ///< analyses: top-down calling contexts by GPU time
  Roofline,         ///< analyses: roofline chart
  Heatmaps,         ///< analyses: op · shape × variant heatmap of the comparison
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

/// The built-in sections for `runs`: one run, or two (labelled A and B) side by side, followed
/// by add_analysis_sections.
HtmlReport make_html_report(const std::vector<ExportRun>& runs,
                            const HtmlReportOptions& options = {});

/// The sections of the runs' ExportAnalyses (runs without them add none), in their slots:
/// peaks (Peaks), flags (Flags, top 30 hits by time at stake), the unfused/fused comparison
/// (Comparison, one run only, when the capture has such ranges), the top 15 top-down calling
/// contexts (CallingContexts), the roofline chart (Roofline) and the op · shape × variant
/// heatmap of the comparison (Heatmaps, one run only). An analysis that failed or has no data
/// gives a section of one sentence saying why. Ids: "peaks", "flags", "variant-comparison",
/// "calling-contexts", "roofline", "heatmap", with "-A" / "-B" appended for two runs.
void add_analysis_sections(HtmlReport& report, const std::vector<ExportRun>& runs);

}  // namespace fuselens::analyzer
