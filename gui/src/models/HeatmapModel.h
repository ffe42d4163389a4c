#pragma once
// HeatmapModel: a matrix of NVTX range figures, rows = op and shape, columns = variant, from
// range names "op/variant/shape" (names with fewer segments are left out; "op/variant" names
// are used, with shape "–", when no name has three).
//
// Figures come from analyzer::range_stats (Compare.h), the same numbers `prof-analyze compare`
// prints:
//   Latency      median over instances of the GPU time of the kernels launched inside the range
//                divided by its iterations (NVTX payload), ns per iteration; lower is better;
//   Speedup      latency of the chosen baseline variant in the same row / the cell's latency,
//                as Compare's speedup (> 1: faster than the baseline);
//   PeakMemory   peak device memory in use while the range ran (bytes; lower is better);
//   Throughput   items per second for names ending in "batch<N>", else iterations per second;
//   Kernels      kernels launched per iteration (fewer: more fusion);
//   Launches     launching API calls per iteration;
//   SpanLatency  median over instances of the GPU span (earliest start to latest end of the
//                GPU work launched inside, launch gaps included) per iteration, ns;
//   SpanSpeedup  span of the baseline variant in the same row / the cell's span, as Compare's
//                span speedup.
// Cells without a figure (no such variant in the row) are empty.

#include <QColor>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "models/TableModel.h"
#include "compare/Compare.h"

namespace fuselens::gui {

enum class HeatmapMetric {
  Latency, Speedup, PeakMemory, Throughput, Kernels, Launches, SpanLatency, SpanSpeedup
};

/// Speedups are ratios centred on 1, relative to a baseline variant.
inline bool isSpeedup(HeatmapMetric m) { return m == HeatmapMetric::Speedup || m == HeatmapMetric::SpanSpeedup; }

struct HeatmapMetricInfo {
  HeatmapMetric metric;
  QString name;        ///< "Latency (median GPU time per iteration)"
  bool higherIsBetter;
};
const std::vector<HeatmapMetricInfo>& heatmapMetrics();

/// The matrix, row-major, as plain data.
struct Heatmap {
  QStringList rows;     ///< "op · shape"
  QStringList columns;  ///< variants, sorted
  std::vector<std::optional<double>> values;  ///< rows.size() x columns.size()
  std::vector<QString> rangeNames;            ///< the range behind each cell ("" when none)
  HeatmapMetric metric = HeatmapMetric::Latency;
  double min = 0, max = 0;  ///< over present values
  bool higherIsBetter = false;

  std::optional<double> at(int row, int column) const {
    return values[static_cast<std::size_t>(row * columns.size() + column)];
  }
};

/// Builds the heatmap of `metric`; `baselineVariant` is the column speedups are relative to
/// (the first column when empty or absent).
Heatmap buildHeatmap(const std::vector<analyzer::RangeStats>& ranges, HeatmapMetric metric,
                     const QString& baselineVariant = {});

/// The text of a value of `metric` with its unit.
QString formatHeatmapValue(HeatmapMetric metric, double value);
/// The cell colour of `value` in [min, max]: a sequential scale from good (green) to bad (red)
/// for most metrics, centred on 1 (white) for speedups.
QColor heatmapColor(const Heatmap& heatmap, double value);

class HeatmapModel : public TableModel {
  Q_OBJECT
 public:
  explicit HeatmapModel(QObject* parent = nullptr);

  void setHeatmap(Heatmap heatmap);
  const Heatmap& heatmap() const { return heatmap_; }
  int nameColumn() const override { return 0; }
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 protected:
  int rows() const override { return static_cast<int>(heatmap_.rows.size()); }
  QVariant cell(int row, int column, int role) const override;

 private:
  Heatmap heatmap_;
};

}  // namespace fuselens::gui
