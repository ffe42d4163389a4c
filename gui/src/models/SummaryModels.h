#pragma once
// SummaryModels: the tables of analyzer::summarize (Summary.h) as item models, with the columns
// of `prof-analyze summary` (Nsight Systems' nsys stats): Time %, Total Time, Instances, Avg,
// Med, Min, Max, StdDev, then the table's own columns, then Name. Rows keep the analyzer's order
// (total time descending); sorting is the views' proxy's job.

#include "summary/Summary.h"
#include "models/TableModel.h"

namespace fuselens::gui {

/// Columns every duration table shares, in this order.
enum StatsColumn { TimePercent, Total, Instances, Avg, Med, Min, Max, StdDev, StatsColumns };

class KernelSummaryModel : public RowsModel<analyzer::KernelRow> {
  Q_OBJECT
 public:
  explicit KernelSummaryModel(QObject* parent = nullptr);

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

class MemoryOperationModel : public RowsModel<analyzer::MemoryOperationRow> {
  Q_OBJECT
 public:
  explicit MemoryOperationModel(QObject* parent = nullptr);

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

class ApiSummaryModel : public RowsModel<analyzer::ApiRow> {
  Q_OBJECT
 public:
  explicit ApiSummaryModel(QObject* parent = nullptr);

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

class NvtxSummaryModel : public RowsModel<analyzer::NvtxRow> {
  Q_OBJECT
 public:
  explicit NvtxSummaryModel(QObject* parent = nullptr);

 protected:
  QVariant cell(int row, int column, int role) const override;
  QString headerToolTip(int column) const override;
};

class DeviceMemoryModel : public RowsModel<analyzer::DeviceMemoryRow> {
  Q_OBJECT
 public:
  explicit DeviceMemoryModel(QObject* parent = nullptr);
  int nameColumn() const override { return 0; }

 protected:
  QVariant cell(int row, int column, int role) const override;
};

/// The cell of a StatsColumn for `stats` and `time_percent` (shared by the models above and by
/// other tables of durations).
QVariant statsCell(const analyzer::DurationStats& stats, double timePercent, int column, int role);
/// Header texts of the StatsColumns, with `instances` naming the count column.
QStringList statsHeaders(const QString& instances);
QString statsHeaderToolTip(int column);

}  // namespace fuselens::gui
