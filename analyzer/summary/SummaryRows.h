#pragma once
// The summary's tables are finished alike, whether computed from the rows (Summary.cpp) or from an
// aggregate capture (SummaryAggregate.cpp): each row's share of the table's total time, then the
// rows by total time descending, ties by name (as nsys stats orders its tables).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "fuselens/db/Saturating.h"

namespace fuselens::analyzer {

/// Fills `time_percent` of every row (percent of the sum of `stats.total_ns`, 0 when it is 0) and
/// sorts the rows. Row: a summary row with `name`, `stats.total_ns` and `time_percent`.
template <typename Row>
void finish_rows(std::vector<Row>& rows) {
  std::int64_t total = 0;
  for (const auto& r : rows) total = db::saturating_add(total, r.stats.total_ns);
  for (auto& r : rows) {
    r.time_percent =
        total > 0 ? 100.0 * static_cast<double>(r.stats.total_ns) / static_cast<double>(total)
                  : 0.0;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.stats.total_ns != b.stats.total_ns) return a.stats.total_ns > b.stats.total_ns;
    return a.name < b.name;
  });
}

}  // namespace fuselens::analyzer
