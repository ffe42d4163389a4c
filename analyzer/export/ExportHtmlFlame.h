#pragma once
// The flame graph (icicle) of a top-down calling-context view in the HTML report: plain inline
// SVG (no script, no external resource), one box per row of the tree (cct/FlameGraph.h), as wide
// as its share of the GPU time, labelled with its text where the box is wide enough and with
// "label: time (share)" on hover (SVG <title>). Every text is escaped (ExportHtmlWidgets.h).

#include <string>

#include "cct/CallingContext.h"

namespace fuselens::analyzer {

/// The SVG element ("" when the report has no GPU time). Boxes narrower than 1/1000 of the width
/// and rows deeper than `max_levels` below the root are left out (the note under the graph says
/// how many rows are drawn).
std::string svg_flame_graph(const CctReport& report, const std::string& title, int max_levels = 40);

}  // namespace fuselens::analyzer
