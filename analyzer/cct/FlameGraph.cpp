// Flame graph (icicle) layout of a calling-context tree (cct/FlameGraph.h).
#include "cct/FlameGraph.h"

#include <algorithm>

namespace fuselens::analyzer {

std::vector<FlameBox> flame_layout(const CctReport& report, int root, double min_width) {
  std::vector<FlameBox> boxes;
  if (root < 0 || static_cast<std::size_t>(root) >= report.rows.size()) return boxes;
  const double total =
      static_cast<double>(report.rows[static_cast<std::size_t>(root)].inclusive.get(report.metric));
  if (total <= 0) return boxes;
  boxes.push_back({root, 0, 0.0, 1.0});
  for (std::size_t i = 0; i < boxes.size(); ++i) {  // breadth first: parents before children
    const FlameBox parent = boxes[i];
    double x = parent.x0;
    for (const int child : report.rows[static_cast<std::size_t>(parent.row)].children) {
      const auto value = report.rows[static_cast<std::size_t>(child)].inclusive.get(report.metric);
      if (value <= 0) continue;
      // Clamped to the parent (the flat view counts a recursive function once in its module but
      // its children may add up to more).
      const double x1 = std::min(x + static_cast<double>(value) / total, parent.x1);
      if (x1 - x >= min_width && x1 > x) boxes.push_back({child, parent.level + 1, x, x1});
      x = x1;
    }
  }
  return boxes;
}

}  // namespace fuselens::analyzer
