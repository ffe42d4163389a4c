// HtmlReport: the document around the sections (head, style, table of contents, slots).
// The built-in sections are made in ExportHtmlSections.cpp.
#include "export/ExportHtml.h"

#include <algorithm>
#include <iterator>
#include <ostream>
#include <utility>

#include "export/ExportHtmlWidgets.h"

namespace fuselens::analyzer {
namespace {

constexpr HtmlSlot kSlots[] = {HtmlSlot::Run,      HtmlSlot::Devices,         HtmlSlot::Peaks,
                               HtmlSlot::Overview, HtmlSlot::Flags,           HtmlSlot::Comparison,
                               HtmlSlot::Summary,  HtmlSlot::CallingContexts, HtmlSlot::Roofline,
                               HtmlSlot::Heatmaps, HtmlSlot::Appendix};

constexpr const char* kStyle = R"css(
:root{--fg:#1d2430;--muted:#5b6577;--line:#dde2ea;--bg:#f3f5f8}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 "DejaVu Sans",system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--fg);background:var(--bg)}
header{background:#1f2a3c;color:#fff;padding:18px 32px 14px}
header h1{margin:0;font-size:22px;font-weight:600}
header .sub{margin:4px 0 0;color:#c5cfdf;font-size:13px;overflow-wrap:anywhere}
nav{margin-top:10px;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px}
nav a{color:#a9c8ff;text-decoration:none}
main{max-width:1240px;margin:0 auto;padding:4px 24px 32px}
section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:14px 20px 8px;
  margin:16px 0}
h2{margin:0 0 10px;font-size:18px}
h3{margin:16px 0 6px;font-size:14.5px}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:12.5px;margin-bottom:8px}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:#eef1f6;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{font-family:"DejaVu Sans Mono",ui-monospace,monospace;font-size:12px;
  overflow-wrap:anywhere}
td.nowrap{white-space:nowrap;overflow-wrap:normal}
tbody tr:nth-child(even){background:#f8f9fb}
table.kv{width:auto;min-width:50%}
table.kv th{font-weight:600;color:var(--muted);white-space:nowrap;padding-right:24px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:4px 0 10px}
.card{border:1px solid var(--line);border-radius:6px;padding:6px 14px;min-width:150px}
.card .v{font-size:17px;font-weight:600}
.card .k{color:var(--muted);font-size:12px}
svg.chart{display:block;margin:6px 0 14px}
svg.chart text{font-family:"DejaVu Sans",sans-serif;font-size:12px;fill:var(--fg)}
svg.chart .chart-title{font-weight:600;font-size:14px}
svg.chart .bar-label{font-family:"DejaVu Sans Mono",monospace;font-size:11px}
svg.chart .bar-value,svg.chart .tick,svg.chart .axis-label{fill:var(--muted);font-size:11px}
.grid{stroke:#e8ebf0}
.axis{stroke:#9aa3b2}
.note,.empty{color:var(--muted);font-size:12.5px}
footer{color:var(--muted);font-size:12px;text-align:center;padding:0 0 24px}
)css";

bool valid_id(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  });
}

}  // namespace

const char* to_string(HtmlSlot slot) {
  // In HtmlSlot's order; a value outside it reads as "appendix".
  constexpr const char* kNames[] = {"run",      "devices",    "peaks",   "overview",
                                    "flags",    "comparison", "summary", "calling-contexts",
                                    "roofline", "heatmaps",   "appendix"};
  const auto i = static_cast<std::size_t>(slot);
  return i < std::size(kNames) ? kNames[i] : "appendix";
}

HtmlReport::HtmlReport(std::string title, std::string subtitle)
    : title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void HtmlReport::add(HtmlSection section) {
  // An id that is not a plain anchor is derived from the slot and position instead.
  if (!valid_id(section.id)) {
    section.id = std::string(to_string(section.slot)) + "-" + std::to_string(sections_.size());
  }
  sections_.push_back(std::move(section));
}

std::vector<HtmlSection> HtmlReport::sections() const {
  std::vector<HtmlSection> ordered = sections_;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const HtmlSection& a, const HtmlSection& b) { return a.slot < b.slot; });
  return ordered;
}

void HtmlReport::write(std::ostream& out) const {
  const std::vector<HtmlSection> ordered = sections();
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'; img-src data:\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << html_escape(title_) << "</title>\n<style>" << kStyle << "</style>\n"
      << "</head>\n<body>\n<header>\n<h1>" << html_escape(title_) << "</h1>\n"
      << "<p class=\"sub\">" << html_escape(subtitle_) << "</p>\n<nav>";
  for (const auto& s : ordered) {
    out << "<a href=\"#" << html_escape(s.id) << "\">" << html_escape(s.title) << "</a>";
  }
  out << "</nav>\n</header>\n<main>\n";
  auto next = ordered.begin();
  for (const HtmlSlot slot : kSlots) {
    out << "<!-- fuselens:slot " << to_string(slot) << " -->\n";
    for (; next != ordered.end() && next->slot == slot; ++next) {
      out << "<section id=\"" << html_escape(next->id) << "\" class=\"slot-" << to_string(slot)
          << "\">\n<h2>" << html_escape(next->title) << "</h2>\n"
          << next->body_html << "</section>\n";
    }
  }
  out << "</main>\n<footer>" << html_escape(title_) << "</footer>\n</body>\n</html>\n";
}

}  // namespace fuselens::analyzer
