#pragma once
// RooflineModel: the rows of the analyzer's roofline report (analyzer/Roofline.h) for the
// Roofline page's table: one row per kernel name (or NVTX range name) and source of work
// (hardware counters, declared work), in the report's order (GPU time descending).
//
// Columns: Name, Source ("counters" or "declared"; RawRole "counters" or "annotation", as the
// analyzer's CSV), GPU Time, Efficiency, Bound, FLOP/B (DRAM intensity), Achieved (FLOP/s),
// Projected (the time at the chosen peaks when they are not the capture GPU's own, Roofline.h),
// Instances, FLOPs, DRAM Bytes, Attainable (FLOP/s). RawRole holds SI units (ns, FLOP, bytes,
// FLOP/s, FLOP/byte, efficiency as a fraction), as `prof-analyze roofline --format csv`;
// a figure the analyzer does not have (no DRAM bytes) is an empty cell. The name column shows
// shortName (the full name in its tooltip and RawRole); its DecorationRole is the colour of the
// row's point on the chart.

#include <optional>
#include <string>
#include <vector>

#include "models/TableModel.h"
#include "roofline/Roofline.h"

namespace fuselens::gui {

/// One row and source of work of the report, as the chart and the table show it.
struct RooflinePoint {
  std::string name;
  bool isRange = false;
  analyzer::WorkSource source = analyzer::WorkSource::Counters;
  double gpuTimeNs = 0;
  std::int64_t instances = 0;
  analyzer::Work work;
  analyzer::RooflineResult result;
  std::optional<double> projectedNs;

  /// FLOP per DRAM byte; nullopt without DRAM bytes.
  std::optional<double> intensity() const;
  /// On the chart: it has a DRAM intensity and FLOPs (the analyzer's RooflineChart points).
  bool plotted() const { return intensity() && result.achieved_flops_per_s > 0; }
};

/// A kernel's name without namespaces and parameters ("gemm_bias_relu_fused_kernel" for
/// "fuselens::kernels::gemm_bias_relu_fused_kernel(float const*, ...)"); range names unchanged.
QString shortName(const RooflinePoint& point);

/// The kernel rows (ranges = false) or the NVTX range rows of `report`, counters before
/// annotation within a row.
std::vector<RooflinePoint> rooflinePoints(const analyzer::RooflineReport& report, bool ranges);

/// "15.50 TFLOP/s", "243.1 GFLOP/s", "0 FLOP/s".
QString formatFlopRate(double flopsPerSecond);
/// "15.19 GFLOP", "84.0 MFLOP".
QString formatFlops(double flops);
/// "816", "2.38", "0.0866" (three significant digits).
QString formatIntensity(double flopPerByte);
/// "compute: fp32", "memory: DRAM", "none".
QString formatBound(const std::string& bound);
/// "hardware counters", "declared work".
QString formatSource(analyzer::WorkSource source);
/// "66.9", "989", "0.254": a figure in tera-units with three significant digits.
QString formatTera(double value);

class RooflineModel : public RowsModel<RooflinePoint> {
  Q_OBJECT
 public:
  enum Column {
    Name,
    Source,
    GpuTime,
    Efficiency,
    Bound,
    Intensity,
    Achieved,
    Projected,
    Instances,
    Flops,
    DramBytes,
    Attainable,
    Columns
  };
  explicit RooflineModel(QObject* parent = nullptr);
  int nameColumn() const override { return Name; }

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

}  // namespace fuselens::gui
