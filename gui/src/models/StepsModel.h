#pragma once
// StepsModel: the steps of analyzer::analyze_steps, one row per step (Steps.h): wall time, GPU
// busy time and its share of the step's span, Holistic Trace Analysis's temporal breakdown
// (compute, non-compute, idle) and idle breakdown (host wait, kernel wait, other), launches,
// copies, peak device memory, the step's state (warm-up, steady, outlier) and its top kernel.

#include "models/TableModel.h"
#include "steps/Steps.h"

namespace fuselens::gui {

class StepsModel : public RowsModel<analyzer::Step> {
  Q_OBJECT
 public:
  enum Column {
    Index,
    Wall,
    GpuBusy,
    BusyShare,
    Compute,
    NonCompute,
    Idle,
    HostWait,
    KernelWait,
    OtherWait,
    Launches,
    Copies,
    PeakMemory,
    State,
    TopKernel,
    ColumnCount
  };
  explicit StepsModel(QObject* parent = nullptr);

  /// Shows the steps of `report` (none when null).
  void setReport(const analyzer::StepReport* report);
  /// "warm-up", "steady" or "outlier: <reason>" for step `index` (1-based) of the report shown.
  QString state(int index) const;
  int nameColumn() const override { return TopKernel; }

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;

 private:
  int steadyFirst_ = 0;
  std::vector<analyzer::StepOutlier> outliers_;
};

}  // namespace fuselens::gui
