#pragma once
// The flame graph (icicle) layout of a top-down calling-context view (CallingContext.h), shared
// by the HTML report and prof-gui: the root on top, each row's children below it, left to right
// in the report's order (largest first), each as wide as its share of its parent's inclusive
// metric. A parent is as wide as the sum of its children plus its exclusive cost (the gap at its
// right end), so the widths are exact for the top-down view (inclusive = exclusive + children).

#include <cstdint>
#include <vector>

#include "cct/CallingContext.h"

namespace fuselens::analyzer {

struct FlameBox {
  int row = 0;      ///< index into CctReport::rows
  int level = 0;    ///< 0 for the zoom root, 1 for its children, ...
  double x0 = 0.0;  ///< left edge, fraction of the zoom root's width [0, 1]
  double x1 = 0.0;  ///< right edge, fraction [0, 1]
};

/// The boxes of the subtree under `root` (its index in report.rows; 0: the whole tree), by the
/// report's metric, parents before children. Boxes narrower than `min_width` (a fraction of the
/// root's width) are left out with their subtrees; rows whose metric is 0 or negative likewise.
/// An out-of-range root gives no box.
std::vector<FlameBox> flame_layout(const CctReport& report, int root = 0, double min_width = 0.0);

}  // namespace fuselens::analyzer
